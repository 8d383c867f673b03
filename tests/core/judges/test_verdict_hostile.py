"""Hostile verdict files (generated): right numbers or a one-line error, within the readers' bounds (issue 28)."""

from __future__ import annotations

import json
import tracemalloc

import numpy as np
import pytest

from metaeval_core.data.upload import UploadError, UploadLimits
from metaeval_core.judges import MISSING, judge_agreement, judge_leaderboard, read_verdict_file

HEADER = "item,system_a,system_b,rater,verdict,order"


def verdict_csv(rows: list[tuple], header: str = HEADER) -> bytes:
    return ("\n".join([header] + [",".join(str(c) for c in row) for row in rows]) + "\n").encode()


def generate(n_items: int = 12, *, humans: int = 3, swapped_humans: tuple[int, ...] = (), seed: int = 0,
             judge_name: str = "judge-1", human_name: str = "human-{}") -> list[tuple]:
    """Items on which every person agrees with a hidden truth and the judge too (a perfect judge); the humans
    listed in ``swapped_humans`` give their verdicts in the swapped order."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n_items):
        truth = "AB"[int(rng.integers(0, 2))]
        for h in range(humans):
            rows.append((f"i{i}", "m1", "m2", human_name.format(h + 1), truth,
                         "swapped" if h in swapped_humans else "original"))
        rows.append((f"i{i}", "m1", "m2", judge_name, truth, "original"))
    return rows


def test_people_in_the_swapped_order_count_in_majority_and_ceiling():
    plain = read_verdict_file(verdict_csv(generate()), name="v.csv")
    swapped = read_verdict_file(verdict_csv(generate(swapped_humans=(0, 1, 2))), name="v.csv")
    for data in (plain, swapped):
        board = judge_leaderboard(data, n_resamples=40, rng=0)
        judge = [r for r in board.rows if r.kind == "judge"][0]
        assert judge.estimate == 1.0
        assert board.ceiling is not None and board.ceiling_mean.estimate == 1.0
    humans = [swapped.rater_index(h) for h in swapped.humans]
    assert (swapped.verdicts[:, humans, 1] == MISSING).all()


def test_a_gold_label_in_the_swapped_order_is_the_reference():
    rows = [(i, a, b, "gold" if r == "human-1" else r, v, "swapped" if r == "human-1" else o)
            for i, a, b, r, v, o in generate(humans=1)]
    data = read_verdict_file(verdict_csv(rows), name="v.csv")
    assert judge_agreement(data, n_resamples=40, rng=0).rows[0].estimate == 1.0


def test_several_gold_raters_are_refused_whatever_the_row_order():
    for first, second in (("gold", "label"), ("label", "gold")):
        rows = [(f"i{i}", "m1", "m2", name, v, "") for i in range(4)
                for name, v in ((first, "A"), (second, "B"), ("human-1", "A"), ("j", "A"))]
        with pytest.raises(UploadError, match="2 raters are gold labels") as info:
            read_verdict_file(verdict_csv(rows), name="v.csv")
        assert info.value.kind == "inconsistent-kind" and "\n" not in str(info.value)


@pytest.mark.parametrize("keyword", ["auto", "majority", "Majority"])
def test_raters_named_like_a_reference_keyword_are_refused(keyword):
    with pytest.raises(UploadError, match="reference keyword") as info:
        read_verdict_file(verdict_csv(generate(judge_name=keyword)), name="v.csv")
    assert info.value.kind == "bad-name"


@pytest.mark.parametrize("twin", ["ｊｕｄｇｅ-1", "judge\u20101", "judge\u22121"])
def test_lookalike_rater_names_are_refused(twin):
    rows = generate()
    rows += [(i, a, b, twin, v, o) for i, a, b, r, v, o in rows if r == "judge-1"][:1]
    rows = [r for r in rows if not (r[3] == "judge-1" and r[0] == "i0")]
    with pytest.raises(UploadError, match="look the same") as info:
        read_verdict_file(verdict_csv(rows), name="v.csv")
    assert info.value.kind == "bad-name"


def test_lookalike_system_names_are_refused_and_distinct_accents_kept():
    rows = generate()
    rows[0] = (rows[0][0], "ｍ1", *rows[0][2:])
    rows = [(i, "ｍ1" if i == "i0" else a, b, r, v, o) for i, a, b, r, v, o in rows]
    with pytest.raises(UploadError, match="look the same"):
        read_verdict_file(verdict_csv(rows), name="v.csv")
    # NFD and NFC spellings of one name are one name (normalised, not refused)
    rows = [(i, "me\u0301" if k % 2 else "m\u00e9", b, r, v, o) for k, (i, a, b, r, v, o) in enumerate(generate())]
    rows = [(i, "m\u00e9", b, r, v, o) for i, a, b, r, v, o in rows]
    data = read_verdict_file(verdict_csv(rows), name="v.csv")
    assert data.systems == ("m2", "m\u00e9")


def test_pairs_of_a_system_with_itself_are_refused_with_a_message():
    rows = [(i, "m1" if i == "i3" else a, "m1" if i == "i3" else b, r, v, o) for i, a, b, r, v, o in generate()]
    with pytest.raises(UploadError, match="compares system 'm1' with itself"):
        read_verdict_file(verdict_csv(rows), name="v.csv")


def test_a_note_quotes_a_bounded_excerpt_of_invalid_verdicts():
    rows = [(i, a, b, r, ("x" * 100_000 + str(k)) if r == "judge-1" else v, o)
            for k, (i, a, b, r, v, o) in enumerate(generate(n_items=40))]
    data = read_verdict_file(verdict_csv(rows), name="v.csv")
    assert sum(len(n) for n in data.notes) < 3_000


def _jsonl(records) -> bytes:
    return ("\n".join(json.dumps(r) for r in records) + "\n").encode()


def test_jsonl_with_many_distinct_keys_is_refused_before_it_is_built():
    """Lines of thousands of distinct keys each (a 1.2 MB file once took 2.6 GB): refused, bounded memory."""
    limits = UploadLimits(max_measures=50)
    records = [{"item": f"i{k}", "system_a": "a", "system_b": "b", "rater": "human-1", "verdict": "A",
                **{f"k{k}_{c}": 1 for c in range(40)}} for k in range(200)]
    tracemalloc.start()
    with pytest.raises(UploadError) as info:
        read_verdict_file(_jsonl(records), name="v.jsonl", limits=limits)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert info.value.kind == "too-many-measures" and peak < 50 * 2**20


def test_jsonl_lines_are_counted_before_parsing():
    records = [{"item": f"i{k}", "system_a": "a", "system_b": "b", "rater": "h", "verdict": "A"} for k in range(30)]
    with pytest.raises(UploadError, match="30 lines; the limit is 20") as info:
        read_verdict_file(_jsonl(records), name="v.jsonl", limits=UploadLimits(max_rows=20))
    assert info.value.kind == "too-many-rows"


def test_jsonl_and_csv_read_the_same_verdicts():
    rows = generate(swapped_humans=(1,))
    keys = HEADER.split(",")
    records = [dict(zip(keys, row)) for row in rows]
    for r in records[::5]:
        r["attr.task"] = "t"
    a = read_verdict_file(verdict_csv(rows), name="v.csv")
    b = read_verdict_file(_jsonl(records), name="v.jsonl")
    np.testing.assert_array_equal(a.verdicts, b.verdicts)
    assert a.rater_ids == b.rater_ids


def test_judges_run_only_in_the_swapped_order_offer_that_order():
    rows = [(i, a, b, r, v, "swapped" if r == "judge-1" else o) for i, a, b, r, v, o in generate()]
    data = read_verdict_file(verdict_csv(rows), name="v.csv")
    assert data.order_modes() == ("swapped",)
    row = judge_agreement(data, order="swapped", n_resamples=40, rng=0).rows[0]
    assert row.estimate == 1.0 and row.n_items == 12
    plain = read_verdict_file(verdict_csv(generate()), name="v.csv")
    assert plain.order_modes() == ("original",)
    both = rows + [(i, a, b, r, v, "original") for i, a, b, r, v, o in rows if r == "judge-1"]
    assert read_verdict_file(verdict_csv(both), name="v.csv").order_modes() == (
        "original", "swapped", "average", "both")


def test_several_gold_labels_in_a_dataset_are_chosen_by_name():
    from dataclasses import replace

    from metaeval_core.data.dataset import DatasetError
    from metaeval_core.judges import Rater

    data = read_verdict_file(verdict_csv(generate()), name="v.csv")
    two = replace(data, raters=tuple(Rater(r.id, "gold" if r.id in ("human-1", "human-2") else r.kind)
                                     for r in data.raters))
    with pytest.raises(DatasetError, match="2 gold labels .*choose one by name"):
        judge_agreement(two, reference="gold", n_resamples=40, rng=0)
    assert judge_agreement(two, reference="human-2", n_resamples=40, rng=0).rows[0].estimate == 1.0
