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
    "big": 2**70,
    "float": 2.5,
    "str": "x",
    "bytes": b"\x00\x01",
    "none": None,
    "bool": True,
    "list": [1, 2.0, "three"],
    "tuple": (1, (2, 3)),
    7: {"nested": [{"deep": 1.0}]},
}
NEEDS_A_GLOBAL = {"set": {1, 2}, "frozenset": frozenset({"a"}), "complex": 1 + 2j, "bytearray": bytearray(b"ab")}


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_plain_values_round_trip(protocol):
    value = PLAIN if protocol >= 3 else {k: v for k, v in PLAIN.items() if k != "bytes"}
    assert safe_load(pickle.dumps(value, protocol=protocol)) == value


@pytest.mark.parametrize("name", sorted(NEEDS_A_GLOBAL))
def test_values_that_need_a_builtin_global_are_refused(name):
    # No built-in dataset's pickle names a builtin; bytearray(n) and bytes(n) would allocate n bytes.
    with pytest.raises(UnsafePickleError, match="refused to unpickle the global builtins"):
        safe_load(pickle.dumps(NEEDS_A_GLOBAL[name], protocol=3))


@pytest.mark.parametrize("protocol", [0, 1, 2])
def test_old_protocol_bytes_need_codecs_and_are_refused(protocol):
    # Protocols 0-2 rebuild bytes through _codecs.encode, which is not allowed.
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


# -- hostile pickles: each loaded in a child process (a segfault or an out-of-memory kill fails the test, not pytest)
def _reduce_pickle(func, args, state=None, protocol=3) -> bytes:
    class Payload:
        def __reduce__(self):
            return (func, args) if state is None else (func, args, state)

    return pickle.dumps(Payload(), protocol=protocol)


def hostile_pickles() -> dict[str, bytes]:
    """Name -> bytes. Each crashes Python, allocates gigabytes or runs code under a naive unpickler."""
    import struct

    f8 = np.dtype("f8")
    forged_state = (3, "<", None, ("a", "b"), {"a": (f8, 0), "b": (f8, 2**40)}, 16, 8, 0x1F)
    return {
        # BUILD gives a plain float64 dtype fields at a 1 TB offset; reading through it segfaults.
        "dtype-forged-fields": _reduce_pickle(np.dtype, ("f8", False, True), forged_state),
        "dtype-forged-itemsize": _reduce_pickle(np.dtype, ("f8", False, True), (3, "<", None, None, None, 2**40, 8, 0)),
        "dtype-void-huge": _reduce_pickle(np.dtype, ("V2000000000", False, True)),
        "dtype-str-huge": _reduce_pickle(np.dtype, ("S2147483647", False, True)),
        "dtype-subarray": _reduce_pickle(np.dtype, ("(100000,100000)f8", False, True)),
        "scalar-short-data": pickle.dumps(np.float64(1.0), protocol=3).replace(
            b"C\x08" + np.float64(1.0).tobytes(), b"C\x02ab"),
        "build-on-a-dict": b"\x80\x03}q\x00}q\x01X\x01\x00\x00\x00aK\x01sb.",
        "bytearray-5GB": _reduce_pickle(bytearray, (5 * 2**30,)),
        "bytes-5GB": _reduce_pickle(bytes, (5 * 2**30,)),
        # A memo index near 2**32 makes the C unpickler grow its memo table to 32 GB.
        "memo-index-huge": b"\x80\x03K\x01r" + struct.pack("<I", 0xFFFFFFF0) + b".",
        # A BINBYTES8 length of 2**40 with 3 bytes behind it.
        "binbytes8-huge": b"\x80\x04\x8e" + struct.pack("<Q", 2**40) + b"abc.",
        "os-system": b"cos\nsystem\n(S'echo pwned'\ntR.",
    }


CHILD = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (2 * 2**30, 2 * 2**30))  # a 2 GB address space: never swap the machine
from metaeval_core.data.dataset import DatasetError
from metaeval_core.data.safe_pickle import safe_load
try:
    value = safe_load(sys.stdin.buffer.read())
except DatasetError as error:
    print("refused:", str(error).splitlines()[0])
    sys.exit(0)
import numpy as np
if isinstance(value, np.dtype):
    np.zeros(4, dtype=value).sum()  # use it, as a loader would
print("loaded:", type(value).__name__)
"""


def load_in_child(data: bytes) -> subprocess.CompletedProcess:
    import sys

    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return subprocess.run([sys.executable, "-c", CHILD], input=data, capture_output=True, cwd=repo, timeout=120)


# The pure-Python unpickler's memo is a dict: a huge memo index costs one entry, so that pickle may load.
HARMLESS_WHEN_LOADED = {"memo-index-huge"}


@pytest.fixture(scope="module")
def hostile_results() -> dict[str, subprocess.CompletedProcess]:
    from concurrent.futures import ThreadPoolExecutor

    cases = hostile_pickles()
    with ThreadPoolExecutor(max_workers=3) as pool:  # one child each, a few at a time (2 shared cores)
        return dict(zip(cases, pool.map(load_in_child, cases.values())))


@pytest.mark.parametrize("name", sorted(hostile_pickles()))
def test_hostile_pickles_are_refused_in_a_child_process(name, hostile_results):
    done = hostile_results[name]
    out = done.stdout.decode()
    assert done.returncode == 0, f"{name}: child died with {done.returncode}: {done.stderr.decode()[-500:]}"
    expected = ("refused:", "loaded:") if name in HARMLESS_WHEN_LOADED else ("refused:",)
    assert out.startswith(expected), f"{name}: {out!r} {done.stderr.decode()[-300:]}"
    assert "Traceback" not in out and len(out.strip().splitlines()) == 1


def test_the_real_shape_still_loads_in_a_child_process():
    done = load_in_child(pickle.dumps({"a": {"s": np.float64(0.5), "t": np.float32(2.0)}, "b": [1.0, "x"]}, protocol=3))
    assert done.returncode == 0 and done.stdout.decode().startswith("loaded: dict"), done.stderr.decode()


def test_a_pickle_larger_than_the_limit_is_refused_unread(tmp_path, monkeypatch):
    import metaeval_core.data.safe_pickle as module

    monkeypatch.setattr(module, "MAX_PICKLE_BYTES", 100)
    path = tmp_path / "big.pkl"
    path.write_bytes(pickle.dumps(list(range(1000)), protocol=3))
    with pytest.raises(DatasetError, match="larger than"):
        safe_load(path)
