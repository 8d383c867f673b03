"""Global-level permutation tables decided from bounds (``_PermutationEngine.delta_bounds`` / ``screened_deltas``).

The bounds must contain every resample's exact ``delta_s`` (the oracle: scipy on the swapped matrices), and the
table's p-values must equal those of the exact nulls, whatever the ties, the alternative, the stopping rule and the
batch size.
"""

from __future__ import annotations

import itertools
import numpy as np
import pytest

from metaeval_core.stats.montecarlo import count_pvalue
from metaeval_core.stats.significance import _draw_swap_masks, compare_all_pairs
from metaeval_core.stats.significance.permutation import (
    _PermutationEngine, _block_pvalues, _permutation_chunks, _sequential_pvalues,
)
from metaeval_core.stats.significance.tables import permutation_pair_nulls

from . import oracles

COEFFICIENTS = ["kendall", "pairwise-accuracy"]


def _tied_scores(seed: int, shape=(7, 24)):
    """A human with few values (NaN in a few cells), a metric following it, an integer-valued metric tying many
    cells, and a rounded one: ties within each score, between the two metrics and in the human."""
    rng = np.random.default_rng(seed)
    z = rng.integers(0, 6, shape).astype(float)
    x = z + rng.normal(0, 1.0, shape)
    y = np.round(z + rng.normal(0, 1.5, shape))
    w = np.round(z + rng.normal(0, 2.0, shape), 1)
    z[1, :3] = np.nan
    return z, {"x": x, "y": y, "w": w}


@pytest.mark.parametrize("method", ["perm-both", "perm-systems", "perm-inputs"])
@pytest.mark.parametrize("coefficient", COEFFICIENTS)
@pytest.mark.parametrize("seed", range(6))
def test_bounds_contain_the_oracles_delta(seed, coefficient, method):
    z, scores = _tied_scores(seed)
    # The pairwise-accuracy oracle is a Python loop over pairs: fewer resamples.
    masks = _draw_swap_masks(np.random.default_rng(seed), method, 40 if coefficient == "kendall" else 8, *z.shape)
    for a, b in itertools.combinations(scores, 2):
        engine = _PermutationEngine(scores[a], scores[b], z, "global", coefficient, method)
        assert engine.screens
        low, high = engine.delta_bounds(masks)
        exact = oracles.permutation_null(scores[a], scores[b], z, "global", coefficient, masks)
        np.testing.assert_array_equal(np.isnan(low), np.isnan(exact))
        assert np.all(low <= exact + 1e-12) and np.all(exact <= high + 1e-12)
        if coefficient == "pairwise-accuracy":
            np.testing.assert_allclose(low, exact, rtol=0, atol=1e-12)  # no bound needed: exact up to rounding


@pytest.mark.parametrize("alternative", ["greater", "two-sided"])
@pytest.mark.parametrize("coefficient", COEFFICIENTS)
def test_screened_values_count_the_same_exceedances_as_the_exact_null(coefficient, alternative):
    # Thresholds on the null's own values (exact ties with resamples), between them and beyond them.
    z, scores = _tied_scores(3)
    masks = _draw_swap_masks(np.random.default_rng(1), "perm-both", 60, *z.shape)
    engine = _PermutationEngine(scores["x"], scores["y"], z, "global", coefficient, "perm-both")
    exact = engine.deltas(masks)
    for threshold in [*np.quantile(exact, [0.0, 0.1, 0.5, 0.9, 1.0]), *exact[:5], 0.0, 0.3, -0.3, np.nan]:
        screened = engine.screened_deltas(masks, float(threshold), alternative)
        for sign in (1, -1):  # the cell (a, b) and its reverse (b, a)
            assert count_pvalue(sign * screened, sign * threshold, alternative=alternative) == \
                count_pvalue(sign * exact, sign * threshold, alternative=alternative)


def test_metrics_valid_on_different_cells_use_the_exact_count():
    z, scores = _tied_scores(2)
    y = scores["y"].copy()
    y[0, :2] = np.nan
    assert not _PermutationEngine(scores["x"], y, z, "global", "kendall", "perm-both").screens


def _table_equals_exact_nulls(matrices, human, names, *, coefficient, alternative, n_resamples, batch=None):
    table = compare_all_pairs(matrices, names, human, level="global", coefficient=coefficient, method="perm-both",
                              alternative=alternative, n_resamples=n_resamples, rng=5, batch=batch)
    stack = [matrices[m] for m in names]
    nulls = permutation_pair_nulls(stack, matrices[human], level="global", coefficient=coefficient,
                                   method="perm-both", n_resamples=n_resamples, seed=5)
    for u, (a, b) in enumerate(itertools.combinations(range(len(names)), 2)):
        for (i, j), sign in (((a, b), 1), ((b, a), -1)):
            expected = count_pvalue(sign * nulls[u], table.delta[i, j], alternative=alternative)
            got = (table.pvalue[i, j], table.n_defined[i, j])
            assert got == expected or (np.isnan(got[0]) and np.isnan(expected[0]) and got[1] == expected[1])
    return table


@pytest.mark.parametrize("batch", [None, 7])
@pytest.mark.parametrize("alternative", ["greater", "two-sided"])
@pytest.mark.parametrize("coefficient", COEFFICIENTS)
def test_table_pvalues_equal_the_exact_nulls(coefficient, alternative, batch):
    z, scores = _tied_scores(4)
    constant = np.full(z.shape, 2.0)  # tau-b undefined in every swap that keeps it whole
    partial = scores["x"].copy()
    partial[3, 5:9] = np.nan  # valid on other cells than the rest: the exact count
    matrices = {"human": z, **scores, "constant": constant, "partial": partial}
    _table_equals_exact_nulls(matrices, "human", ["x", "y", "w", "constant", "partial"], coefficient=coefficient,
                              alternative=alternative, n_resamples=50, batch=batch)


def _sequential_by_hand(matrices, human, names, rule, alternative, n_resamples, early_min):
    table = compare_all_pairs(matrices, names, human, level="global", coefficient="kendall", method="perm-both",
                              alternative=alternative, n_resamples=n_resamples, rng=5, stopping=rule,
                              correction="none")
    z = matrices[human]
    for a, b in itertools.combinations(range(len(names)), 2):
        engine = _PermutationEngine(matrices[names[a]], matrices[names[b]], z, "global", "kendall", "perm-both")
        chunks = _permutation_chunks(engine, np.random.default_rng(5), "perm-both", n_resamples, z.shape, 13)
        if rule == "blocks":
            cells = _block_pvalues(chunks, table.delta[a, b], alternative, n_resamples, early_min=early_min)
        else:
            h = int(np.ceil(0.05 * (n_resamples + 1)))
            cells = _sequential_pvalues(chunks, table.delta[a, b], alternative, n_resamples, h)
        assert (table.pvalue[a, b], table.n_defined[a, b]) == cells[0]
        assert (table.pvalue[b, a], table.n_defined[b, a]) == cells[1]


@pytest.mark.parametrize("rule", ["blocks", "besag-clifford"])
@pytest.mark.parametrize("alternative", ["greater", "two-sided"])
def test_stopping_rules_on_screened_draws_equal_the_exact_streams(rule, alternative):
    rng = np.random.default_rng(9)
    z = rng.integers(0, 8, (6, 60)).astype(float)
    matrices = {"human": z, "good": z + rng.normal(0, 1, z.shape), "bad": np.round(z + rng.normal(0, 4, z.shape)),
                "close": z + rng.normal(0, 1.1, z.shape)}
    _sequential_by_hand(matrices, "human", ["good", "bad", "close"], rule, alternative, 300, early_min=0.02)


def test_wmt22_table_equals_the_exact_nulls(data_dir):
    from metaeval_core.data.registry import load_dataset
    from metaeval_core.stats.correlation import correlation_inputs

    ds = load_dataset("wmt22-zhen", data_dir=data_dir).with_default_systems()
    human = ds.conventions.gold
    # Continuous, sentence-level (ties of identical outputs) and integer-valued (MATESE) metrics.
    names = ["COMET-22-refA", "BLEU-refA", "MATESE-refA", "chrF-refA"]
    subset = ds.scored_by([human, *names])
    matrices = {human: correlation_inputs(subset, human, human, level="input", pool="judged")[1]}
    for name in names:
        matrices[name] = correlation_inputs(subset, name, human, level="input", pool="judged")[0]
    table = _table_equals_exact_nulls(matrices, human, names, coefficient="kendall", alternative="two-sided",
                                      n_resamples=100)
    assert table.n_defined[0, 1] == 100
