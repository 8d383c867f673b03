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
