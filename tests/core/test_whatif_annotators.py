"""Merging mean-only scores into a measure with per-annotator scores keeps them, and says so first (issue 28)."""

from __future__ import annotations

import numpy as np
import pytest

from metaeval_core.data.dataset import Dataset, Measure
from metaeval_core.data.whatif import describe_merge, merge_datasets


def annotated(seed: int, n_systems: int = 4, n_inputs: int = 6, n_annotators: int = 3) -> Dataset:
    rng = np.random.default_rng(seed)
    ann = rng.integers(1, 6, size=(n_annotators, n_systems, n_inputs)).astype(float)
    metric = rng.normal(size=(n_systems, n_inputs))
    return Dataset("b", [f"s{k}" for k in range(n_systems)], [f"d{k}" for k in range(n_inputs)],
                   {"human": Measure.from_annotators("human", "human", ann), "metric": Measure("metric", "metric", metric)})


def one_cell_file(base: Dataset, value: float) -> Dataset:
    return Dataset("e", [base.systems[1]], [base.inputs[2]],
                   {"human": Measure("human", "human", np.array([[value]]))})


@pytest.mark.parametrize("seed", range(3))
def test_replacing_one_conflicting_cell_keeps_the_annotators(seed):
    base = annotated(seed)
    extra = one_cell_file(base, 9.5)
    report = describe_merge(base, extra)
    assert report.n_conflicts == 1
    assert report.annotator_notes("keep") == ()
    assert any("human-ceiling and annotator rows will change" in n for n in report.annotator_notes("replace"))
    merged = merge_datasets(base, extra, on_conflict="replace").measures["human"]
    assert merged.annotators is not None and merged.annotators.shape == base.measures["human"].annotators.shape
    np.testing.assert_array_equal(merged.annotators[:, 1, 2], [9.5] * 3)
    untouched = np.ones(merged.scores.shape, bool)
    untouched[1, 2] = False
    np.testing.assert_array_equal(merged.annotators[:, untouched], base.measures["human"].annotators[:, untouched])
    np.testing.assert_allclose(np.nanmean(merged.annotators, axis=0), merged.scores)
    kept = merge_datasets(base, extra, on_conflict="keep").measures["human"]
    np.testing.assert_array_equal(kept.annotators, base.measures["human"].annotators)


def test_a_file_with_other_annotators_is_announced_before_it_drops_them():
    base = annotated(5)
    other = Dataset("e", [base.systems[0]], [base.inputs[0]],
                    {"human": Measure.from_annotators("human", "human", np.full((2, 1, 1), 4.0))})
    report = describe_merge(base, other)
    assert any("will be dropped" in n for n in report.annotator_notes("replace"))
    assert merge_datasets(base, other, on_conflict="replace").measures["human"].annotators is None
