"""Every reader refuses what is over its limits before it costs memory, and reads what is within them well under
1 GB (issue 23). Inputs are generated; each case runs in a child whose address space is capped at 1 GB."""

from __future__ import annotations

import pytest

from tests.core.capped import run_capped

READ = """
from metaeval_core.data.upload import UploadError, UploadLimits, read_user_file
raw = {build}
try:
    ds = read_user_file(raw, name={name!r})
    result = {{"kind": "accepted", "systems": ds.n_systems}}
except UploadError as error:
    result = {{"kind": error.kind, "message": str(error)}}
"""


def read_capped(build: str, name: str) -> dict:
    return run_capped(READ.format(build=build, name=name))


def _line(metrics: str, system: str = "A", item: str = "d") -> str:
    return f"b'{{\"instance_id\": \"{item}\", \"summarizer_id\": \"{system}\", \"metrics\": {{' + {metrics} + b'}}}}\\n'"


def test_jsonl_a_line_with_24m_list_elements_is_refused_before_parsing():
    out = read_capped(_line("b'\"human\": [' + b'1,' * 24_000_000 + b'1]'"), "list.jsonl")
    assert out["kind"] == "too-many-rows" and "line 1" in out["message"] and "24,000,0" in out["message"]
    assert out["peak_mb"] < 600


def test_jsonl_two_lines_of_2m_keys_are_refused_before_parsing():
    line = _line("b'\"m\": 1, ' * 2_200_000 + b'\"z\": 1'")
    other = _line("b'\"m\": 1, ' * 2_200_000 + b'\"z\": 1'", item="e")
    out = read_capped(f"{line} + {other}", "keys.jsonl")
    assert out["kind"] in ("too-many-rows", "too-many-measures") and "line 1" in out["message"]
    assert out["peak_mb"] < 600


def test_jsonl_distinct_keys_over_the_measure_limit_are_refused_by_keys():
    out = read_capped(_line("b', '.join(b'\"m%d\": 1' % j for j in range(100_000))"), "keys.jsonl")
    assert out["kind"] == "too-many-measures" and "line 1" in out["message"]


def test_jsonl_commas_and_colons_inside_strings_do_not_count():
    from metaeval_core.data.upload import read_user_file

    noise = ",:" * 50_000
    lines = [f'{{"instance_id": "{d}", "summarizer_id": "{s}", "note": "{noise}", "metrics": {{"human": '
             f'[{h}, 2], "rouge": {h / 10}}}}}' for s, d, h in (("A", "d1", 1), ("A", "d2", 2), ("B", "d1", 3),
                                                                   ("B", "d2", 4))]
    from metaeval_core.data.upload import UploadLimits

    ds = read_user_file(("\n".join(lines) + "\n").encode(), name="x.jsonl",
                        limits=UploadLimits(max_rows=20, max_measures=2))
    assert ds.n_systems == 2 and set(ds.measures) == {"human", "rouge"}


def test_jsonl_2m_scores_at_the_limit_are_read_under_1gb():
    out = read_capped(_line("b'\"human\": [' + b'1,' * 1_999_990 + b'1], \"r\": 1'") + " + " +
                      _line("b'\"human\": [1], \"r\": 2'", system="B"), "at-limit.jsonl")
    assert out["kind"] == "too-few-inputs"  # read in full and checked: one input only
    assert out["peak_mb"] < 900


# -- Parquet ------------------------------------------------------------------------------------------------------
BUILD_PARQUET = """
import numpy as np, pyarrow as pa, pyarrow.compute as pc, pyarrow.parquet as pq
def names(prefix, codes, pad=0):
    text = pc.cast(pa.array(codes), pa.string())
    return pc.binary_join_element_wise(pa.scalar(prefix), text, pa.scalar("x" * pad), "")
def write(path, systems, inputs, n):
    pq.write_table(pa.table({"system": systems, "input": inputs, "human.q": pa.array(np.arange(n) % 5 * 1.0),
                             "rouge": pa.array(np.arange(n) % 7 / 7)}), path)
FOLDER = "@FOLDER@"
n = 2_000_000
k = np.arange(n)
write(FOLDER + "/long-names.parquet", names("s", k // (n // 2)), names("d", k % (n // 2), 190), n)
write(FOLDER + "/repeated-long-names.parquet", names("s", k // 1000), names("d", k % 1000, 190), n)
write(FOLDER + "/one-system.parquet", names("s", k * 0), names("d", k), n)
result = {}
"""


@pytest.fixture(scope="module")
def parquet_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("parquet")
    run_capped(BUILD_PARQUET.replace("@FOLDER@", str(folder)), cap=4 * 2**30, timeout=300)
    return folder


# pyarrow reserves address space beyond what it uses: the Parquet cases run under 2 GiB of address space and
# assert the peak resident memory (the old reader took 2.3 GB resident on the first, 1.8 GB on the second)
PARQUET_CAP = 2 * 2**30

READ_PATH = """
from metaeval_core.data.upload import UploadError, read_user_file
try:
    ds = read_user_file({path!r})
    result = {{"kind": "accepted", "systems": ds.n_systems, "inputs": ds.n_inputs}}
except UploadError as error:
    result = {{"kind": error.kind, "message": str(error)}}
"""


def test_parquet_with_2m_distinct_200_character_names_is_refused_from_its_footer(parquet_files):
    out = run_capped(READ_PATH.format(path=str(parquet_files / "long-names.parquet")), cap=PARQUET_CAP)
    assert out["kind"] == "too-large" and "decodes to" in out["message"]
    assert out["peak_mb"] < 400


def test_parquet_with_repeated_200_character_names_at_the_row_limit_is_read_under_1gb(parquet_files):
    out = run_capped(READ_PATH.format(path=str(parquet_files / "repeated-long-names.parquet")), cap=PARQUET_CAP)
    assert out == {**out, "kind": "accepted", "systems": 2000, "inputs": 1000}
    assert out["peak_mb"] < 800


def test_parquet_with_one_system_is_refused_from_the_system_column(parquet_files):
    out = run_capped(READ_PATH.format(path=str(parquet_files / "one-system.parquet")), cap=PARQUET_CAP)
    assert out["kind"] == "too-few-systems"
    assert out["peak_mb"] < 500


def test_the_distinct_names_of_a_column_have_a_byte_limit():
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    from metaeval_core.data.upload import UploadError, UploadLimits, read_user_file

    inputs = [f"d{k:04d}" + "y" * 95 for k in range(200)]
    table = pa.table({"system": ["A"] * 200 + ["B"] * 200, "input": inputs * 2, "human.q": [1.0] * 400,
                      "rouge": [0.5] * 400})
    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    limits = UploadLimits(max_name_bytes=10_000)
    for raw, name in ((buffer.getvalue(), "x.parquet"),
                      (table.to_pandas().to_csv(index=False).encode(), "x.csv")):
        with pytest.raises(UploadError, match="bytes of names per column") as info:
            read_user_file(raw, name=name, limits=limits)
        assert info.value.kind == "too-large" and info.value.column == "input"
    assert read_user_file(buffer.getvalue(), name="x.parquet").n_inputs == 200
