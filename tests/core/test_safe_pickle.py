"""The restricted unpickler: numpy scalars, dtypes and plain builtins load; everything else is refused unrun."""

from __future__ import annotations

import io
import os
import pickle
import subprocess

import numpy as np
import pytest

from metaeval_core.data.dataset import DatasetError
from metaeval_core.data.safe_pickle import UnsafePickleError, safe_load


PLAIN = {
    "int": 3,
    "float": 2.5,
    "str": "x",
    "bytes": b"\x00\x01",
    "none": None,
    "bool": True,
    "list": [1, 2.0, "three"],
    "tuple": (1, (2, 3)),
    "set": {1, 2},
    "frozenset": frozenset({"a"}),
    "complex": 1 + 2j,
    "bytearray": bytearray(b"ab"),
    7: {"nested": [{"deep": 1.0}]},
}


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_plain_builtins_round_trip(protocol):
    value = PLAIN if protocol >= 3 else {k: v for k, v in PLAIN.items() if k not in ("bytes", "bytearray")}
    assert safe_load(pickle.dumps(value, protocol=protocol)) == value


@pytest.mark.parametrize("protocol", [0, 1, 2])
def test_old_protocol_bytes_need_codecs_and_are_refused(protocol):
    # Protocols 0-2 rebuild bytes and bytearrays through _codecs.encode, which is not allowed.
    with pytest.raises(UnsafePickleError, match="_codecs.encode"):
        safe_load(pickle.dumps(b"\x00", protocol=protocol))


@pytest.mark.parametrize("protocol", [3, 4, 5])
def test_numpy_scalars_and_dtypes_round_trip(protocol):
    value = {
        "f32": np.float32(0.25),
        "f64": np.float64(-1.5),
        "i64": np.int64(7),
        "dtype": np.dtype("float32"),
        "big": np.dtype(">f8"),
    }
    loaded = safe_load(pickle.dumps(value, protocol=protocol))
    assert loaded == value
    assert type(loaded["f32"]) is np.float32 and type(loaded["i64"]) is np.int64
    assert loaded["big"] == np.dtype(">f8")


def test_legacy_numpy_core_name_resolves_without_importing_the_shim():
    # A pickle written by numpy 1.x names numpy.core.multiarray.scalar (as REALSumm's do).
    data = pickle.dumps(np.float64(0.5), protocol=3)  # GLOBAL opcode: names are plain text lines
    legacy = data.replace(b"numpy._core.multiarray", b"numpy.core.multiarray")
    assert legacy != data
    assert safe_load(legacy) == 0.5


class _System:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


class _Popen:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (subprocess.Popen, (["touch", str(self.marker)],))


class _Eval:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (eval, (f"open({str(self.marker)!r}, 'w')",))


@pytest.mark.parametrize("payload", [_System, _Popen, _Eval])
def test_malicious_pickle_is_refused_and_never_executed(tmp_path, payload):
    marker = tmp_path / "pwned"
    data = pickle.dumps({"scores": [1.0, payload(marker)]})
    with pytest.raises(UnsafePickleError, match="refused to unpickle the global") as info:
        safe_load(data)
    assert "restricted unpickler" in str(info.value)
    assert not marker.exists()


def test_handwritten_global_opcode_is_refused(tmp_path):
    marker = tmp_path / "pwned"
    data = b"cos\nsystem\n(S'touch " + str(marker).encode() + b"'\ntR."
    with pytest.raises(UnsafePickleError, match=r"os\.system"):
        safe_load(data)
    assert not marker.exists()


@pytest.mark.parametrize(
    "module, name",
    [
        ("builtins", "getattr"),
        ("builtins", "__import__"),
        ("builtins", "exec"),
        ("numpy", "load"),
        ("numpy._core.multiarray", "_reconstruct"),
        ("numpy.core.multiarray", "_reconstruct"),
        ("copyreg", "_reconstructor"),
    ],
)
def test_other_globals_are_refused(module, name):
    data = b"c" + module.encode() + b"\n" + name.encode() + b"\n."
    with pytest.raises(UnsafePickleError, match=f"{module}.{name}"):
        safe_load(data)


def test_numpy_arrays_are_refused():
    # Arrays need numpy's _reconstruct, which is not on the allow list.
    with pytest.raises(UnsafePickleError):
        safe_load(pickle.dumps(np.arange(3)))


def test_persistent_ids_are_refused():
    buffer = io.BytesIO()

    class Pickler(pickle.Pickler):
        def persistent_id(self, obj):
            return "ref" if obj == "secret" else None

    Pickler(buffer, protocol=4).dump(["secret"])
    with pytest.raises(UnsafePickleError, match="persistent id"):
        safe_load(buffer.getvalue())


def test_invalid_and_missing_files_give_dataset_errors(tmp_path):
    bad = tmp_path / "bad.pkl"
    bad.write_bytes(b"not a pickle at all")
    with pytest.raises(DatasetError, match="bad.pkl: not a valid pickle"):
        safe_load(bad)
    truncated = tmp_path / "truncated.pkl"
    truncated.write_bytes(pickle.dumps(PLAIN)[:20])
    with pytest.raises(DatasetError, match="truncated.pkl"):
        safe_load(truncated)
    with pytest.raises(DatasetError, match="cannot open"):
        safe_load(tmp_path / "absent.pkl")
    with pytest.raises(TypeError, match="source must be"):
        safe_load(42)


def test_reads_paths_and_open_files(tmp_path):
    path = tmp_path / "ok.pkl"
    path.write_bytes(pickle.dumps(PLAIN))
    assert safe_load(path) == PLAIN
    assert safe_load(str(path)) == PLAIN
    with open(path, "rb") as handle:
        assert safe_load(handle) == PLAIN


@pytest.mark.realdata
def test_realsumm_pickles_load_with_the_restricted_unpickler(data_dir):
    for name, n_systems in (("abs", 14), ("ext", 11)):
        data = safe_load(data_dir / "realsumm" / "scores_dicts" / f"{name}.pkl")
        assert sorted(data) == list(range(100))
        summaries = data[0]["system_summaries"]
        assert len(summaries) == n_systems
        scores = next(iter(summaries.values()))["scores"]
        assert {"bert_f_score", "bert_precision_score", "litepyramid_recall"} <= set(scores)
