"""The pairwise data model: validation, selections, the majority verdict."""

from __future__ import annotations

import numpy as np
import pytest

from metaeval_core.data.dataset import DatasetError
from metaeval_core.judges import A, B, INVALID, MISSING, TIE, PairwiseData, Rater, majority_verdict
from tests.core.judges.helpers import majority_oracle, random_data


def test_majority_matches_a_slow_loop_under_both_conventions():
    rng = np.random.default_rng(1)
    votes = rng.choice([A, B, TIE, INVALID, MISSING], size=(500, 4), p=[0.3, 0.3, 0.2, 0.1, 0.1])
    for rule in ("tie", "drop"):
        expected = [majority_oracle(row, rule) for row in votes]
        assert majority_verdict(votes, no_majority=rule).tolist() == expected


def test_majority_refuses_bad_input():
    with pytest.raises(ValueError, match="no_majority"):
        majority_verdict(np.zeros((2, 2)), no_majority="coin")
    with pytest.raises(ValueError, match="2-D"):
        majority_verdict(np.zeros(3))


def test_construction_checks_shapes_codes_and_ids():
    rater = Rater("r", "judge")
    ok = dict(id="x", items=("a", "b"), pair_sets=("s",), pair_set=np.zeros(2, int), raters=(rater,))
    PairwiseData(verdicts=np.zeros((2, 1, 2)), **ok)
    with pytest.raises(DatasetError, match="shape"):
        PairwiseData(verdicts=np.zeros((2, 1)), **ok)
    with pytest.raises(DatasetError, match="codes"):
        PairwiseData(verdicts=np.full((2, 1, 2), 7), **ok)
    with pytest.raises(DatasetError, match="unique"):
        PairwiseData(verdicts=np.zeros((2, 2, 2)), **{**ok, "raters": (rater, rater)})
    with pytest.raises(DatasetError, match="kind"):
        Rater("r", "robot")
    with pytest.raises(DatasetError, match="pair_set"):
        PairwiseData(verdicts=np.zeros((2, 1, 2)), **{**ok, "pair_set": np.array([0, 3])})


def test_verdicts_are_read_only_int8_and_invalid_verdicts_are_counted():
    data = random_data(2)
    assert data.verdicts.dtype == np.int8 and not data.verdicts.flags.writeable
    counts = data.verdict_counts("j1", "original")
    assert sum(counts.values()) == data.n_items and counts["invalid"] == int((data.verdicts[:, 3, 0] == INVALID).sum())


def test_selections_keep_items_aligned():
    data = random_data(3, n=30, pair_sets=3)
    part = data.select_pair_set("set1")
    keep = np.flatnonzero(data.pair_set == 1)
    assert part.items == tuple(data.items[k] for k in keep) and part.pair_sets == ("set1",)
    assert np.array_equal(part.verdicts, data.verdicts[keep]) and part.version != data.version
    assert part.output_a == tuple(data.output_a[k] for k in keep)
    with pytest.raises(ValueError, match="selected once"):
        data.select_items([0, 0, 1])
    with pytest.raises(DatasetError, match="no pair set"):
        data.select_pair_set("nope")
    two = data.select_pair_sets(["set2", "set0"])  # the items in their own order, whatever the names' order
    keep = np.flatnonzero(data.pair_set != 1)
    assert two.items == tuple(data.items[k] for k in keep) and two.pair_sets == ("set0", "set2")
    assert two.version != data.version and data.select_pair_sets(data.pair_sets) is data
    with pytest.raises(DatasetError, match="no pair set 'nope'"):
        data.select_pair_sets(["set0", "nope"])
    with pytest.raises(DatasetError, match="no rater"):
        data.rater_index("nobody")
    assert data.humans == ("h1", "h2", "h3") and data.judges == ("j1", "j2", "j3")
    assert data.orders_of("h1") == ("original",) and data.orders_of("j1") == ("original", "swapped")
