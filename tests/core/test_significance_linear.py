"""Input-level permutation as a linear form in the swap bits (significance.linear) against Algorithm 2's loop."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from metaeval_core.stats.significance import _draw_swap_masks, _zscore_params, compare_all_pairs, compare_metrics
from metaeval_core.stats.significance.linear import InputLinearPermutation, TiedInputs, input_permutation_nulls

from . import oracles


def _zscored(x):
    mu, sd = _zscore_params(x)
    return (x - mu) / sd


def _nulls(engine, masks):
    """Every pair's null for pre-drawn masks, in chunks of 7 (the replayed draws of a table)."""
    k = masks.shape[0]
    chunks = [(slice(s, min(s + 7, k)), masks[s:s + 7]) for s in range(0, k, 7)]
    return input_permutation_nulls(engine, lambda: iter(chunks), k).T


def _case(seed):
    """Small matrices; odd seeds add ties, rounding and NaN so inputs take the per-pair path."""
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(2, 7)), int(rng.integers(2, 8))
    z = rng.integers(1, 4, (n, m)).astype(float)
    mats = [z + rng.normal(size=z.shape) for _ in range(3)]
    if seed % 2:
        mats[1] = np.round(mats[1])
        mats[0][0, 0] = np.nan
    if seed % 3 == 0:
        mats[2][:, 0] = mats[2][0, 0]  # a constant column: ties under every swap
        z[min(1, n - 1), 0] = np.nan
    return mats, z


@pytest.mark.parametrize("coefficient", ["kendall", "pairwise-accuracy"])
@pytest.mark.parametrize("seed", range(24))
def test_every_pair_matches_the_swapped_loop(seed, coefficient):
    mats, z = _case(seed)
    pairs = [(0, 1), (1, 0), (0, 2), (2, 1)]
    engine = InputLinearPermutation([_zscored(x) for x in mats], z, coefficient, pairs)
    for method in ("perm-both", "perm-systems"):
        masks = _draw_swap_masks(np.random.default_rng(seed), method, 25, *z.shape)
        fast = _nulls(engine, masks)
        for p, (i, k) in enumerate(pairs):
            slow = oracles.permutation_null(mats[i], mats[k], z, "input", coefficient, masks)
            np.testing.assert_allclose(fast[:, p], slow, rtol=0, atol=1e-12, equal_nan=True)


def test_inputs_whose_means_differ_use_every_column():
    # Y constant in input 0 makes tau(Ys) undefined for some swaps but tau(Xs) not: no shared divisor.
    z = np.array([[1.0, 2.0, 3.0], [2.0, 1.0, 1.0], [3.0, 3.0, 2.0]])
    x = np.array([[0.1, 0.5, 0.2], [0.4, 0.2, 0.9], [0.7, 0.8, 0.3]])
    y = np.array([[0.3, 0.1, 0.6], [0.3, 0.7, 0.2], [0.3, 0.4, 0.5]])
    masks = _draw_swap_masks(np.random.default_rng(0), "perm-both", 64, 3, 3)
    engine = InputLinearPermutation([_zscored(x), _zscored(y)], z, "kendall", [(0, 1)])
    assert engine.tied[0].any() or engine.fallback[0].size
    fast = _nulls(engine, masks)[:, 0]
    np.testing.assert_allclose(fast, oracles.permutation_null(x, y, z, "input", "kendall", masks), rtol=0, atol=1e-12,
                               equal_nan=True)


@pytest.mark.parametrize("coefficient", ["kendall", "pairwise-accuracy"])
def test_table_cells_equal_single_comparisons_for_any_batch(coefficient):
    rng = np.random.default_rng(5)
    z = rng.normal(size=(8, 30))
    data = {"h": z, **{f"m{i}": z + rng.normal(0, 1 + i, z.shape) for i in range(4)}}
    data["m3"] = np.round(data["m3"])  # ties: some inputs on the per-pair path
    names = [f"m{i}" for i in range(4)]
    tables = [compare_all_pairs(data, names, "h", level="input", coefficient=coefficient, method="perm-both",
                                n_resamples=120, rng=3, batch=batch, correction="none") for batch in (1, 17, None)]
    for other in tables[1:]:
        np.testing.assert_array_equal(tables[0].pvalue, other.pvalue)
    for i, a in enumerate(names):
        for j, b in enumerate(names):
            if i != j:
                single = compare_metrics(data[a], data[b], z, level="input", coefficient=coefficient,
                                         method="perm-both", n_resamples=120, rng=3)
                assert tables[0].pvalue[i, j] == single.pvalue


@pytest.mark.parametrize("coefficient", ["kendall", "pairwise-accuracy"])
def test_twin_systems_stay_on_the_linear_path(coefficient):
    # Two systems with identical outputs in some inputs (every metric and the human tie them), up to
    # three twins in one input: the denominators move with the swaps but stay equal for Xs and Ys.
    rng = np.random.default_rng(8)
    z = rng.integers(0, 4, (6, 12)).astype(float)
    mats = [z + rng.normal(size=z.shape) for _ in range(3)]
    for j, (a, b) in enumerate([(0, 1), (2, 5), (3, 4)]):
        for matrix in (z, *mats):
            matrix[b, j] = matrix[a, j]
    for matrix in (z, *mats):
        matrix[[1, 2], 4] = matrix[0, 4]
    pairs = [(0, 1), (2, 0), (1, 2)]
    engine = InputLinearPermutation([_zscored(x) for x in mats], z, coefficient, pairs)
    assert engine.twin_j.size >= 6 and all(cols.size == 0 for cols in engine.fallback)
    masks = _draw_swap_masks(np.random.default_rng(1), "perm-both", 60, *z.shape)
    fast = _nulls(engine, masks)
    for p, (i, k) in enumerate(pairs):
        slow = oracles.permutation_null(mats[i], mats[k], z, "input", coefficient, masks)
        np.testing.assert_allclose(fast[:, p], slow, rtol=0, atol=1e-12, equal_nan=True)


def _tie_heavy(seed):
    """Real MQM-like data: the human has many ties and missing systems, one metric is integer-valued with many
    levels tied (MATESE), one is rounded (sentence BLEU), one is tied across whole inputs, one has missing cells."""
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(4, 10)), int(rng.integers(5, 25))
    z = -rng.poisson(1.5, (n, m)).astype(float)
    z[rng.random(n) < 0.25] = np.nan  # systems without the gold
    base = np.nan_to_num(z, nan=-1.0)
    mats = [np.round(base + rng.normal(0, 1, z.shape)),  # integer scores
            np.round(base + rng.normal(0, 2, z.shape), 1),  # coarse decimals
            base + rng.normal(0, 1, z.shape)]  # continuous
    mats[0][:, rng.integers(0, m)] = 0.0  # every system tied in one input
    mats[1][:, 0] = mats[1][0, 0]
    mats[2][rng.integers(0, n), rng.integers(0, m)] = np.nan  # a missing cell
    twin = rng.integers(1, m)
    for matrix in (*mats, z):
        matrix[1, twin] = matrix[0, twin]  # identical outputs
    return mats, z


@pytest.mark.parametrize("seed", range(12))
def test_tie_heavy_inputs_share_the_per_input_product_and_match_the_loop(seed):
    mats, z = _tie_heavy(seed)
    pairs = [(0, 1), (1, 0), (0, 2), (2, 1)]
    engine = InputLinearPermutation([_zscored(x) for x in mats], z, "kendall", pairs)
    assert engine.tied.any()
    masks = _draw_swap_masks(np.random.default_rng(seed), "perm-both", 40, *z.shape)
    fast = _nulls(engine, masks)
    for p, (i, k) in enumerate(pairs):
        slow = oracles.permutation_null(mats[i], mats[k], z, "input", "kendall", masks)
        np.testing.assert_allclose(fast[:, p], slow, rtol=0, atol=1e-12, equal_nan=True)


def test_tied_inputs_give_the_same_table_for_any_batch():
    mats, z = _tie_heavy(3)
    data = {"h": z, **{f"m{i}": x for i, x in enumerate(mats)}}
    tables = [compare_all_pairs(data, ["m0", "m1", "m2"], "h", level="input", coefficient="kendall",
                                method="perm-both", n_resamples=90, rng=4, batch=batch, correction="none")
              for batch in (1, 13, None)]
    for other in tables[1:]:
        np.testing.assert_array_equal(tables[0].pvalue, other.pvalue)


def _chunked_nulls(engine, masks, size):
    k = masks.shape[0]
    chunks = [(slice(s, min(s + size, k)), masks[s:s + size]) for s in range(0, k, size)]
    return input_permutation_nulls(engine, lambda: iter(chunks), k)


@pytest.mark.parametrize("seed", [0, 3, 7])
def test_tied_inputs_keys_give_the_formula_bits_on_every_path(seed, monkeypatch):
    # The key -> tau table, the formula on the keys (tables beyond their budget) and float64 products (keys beyond
    # float32) are the same floating-point operations: bit-identical nulls, for any chunking of the resamples.
    mats, z = _tie_heavy(seed)
    pairs = [(0, 1), (1, 0), (0, 2), (2, 1), (1, 2)]
    engine = InputLinearPermutation([_zscored(x) for x in mats], z, "kendall", pairs)
    assert engine.tied.any()
    masks = _draw_swap_masks(np.random.default_rng(seed), "perm-both", 50, *z.shape)
    reference = _chunked_nulls(engine, masks, 50)
    np.testing.assert_array_equal(_chunked_nulls(engine, masks, 1), reference)
    np.testing.assert_array_equal(_chunked_nulls(engine, masks, 17), reference)
    monkeypatch.setattr(TiedInputs, "FEATURE_BUDGET", 3 * 36)  # several steps per chunk
    monkeypatch.setattr(TiedInputs, "WEIGHTS_BUDGET", 1)  # one input's weights at a time
    np.testing.assert_array_equal(_chunked_nulls(engine, masks, 50), reference)
    monkeypatch.setattr(TiedInputs, "TABLE_BUDGET", 0)
    np.testing.assert_array_equal(_chunked_nulls(engine, masks, 50), reference)
    monkeypatch.setattr(TiedInputs, "FLOAT32_EXACT", 0)
    np.testing.assert_array_equal(_chunked_nulls(engine, masks, 50), reference)


def _oracle_sequential(null, threshold, h):
    """Besag-Clifford by hand: stop at the h-th exceedance (draw order) with h / l, else the full-run p."""
    defined = [v for v in null if not np.isnan(v)]
    hits = 0
    for used, value in enumerate(defined, start=1):
        hits += value >= threshold - 1e-12
        if hits == h:
            return h / used, used
    return (1 + hits) / (1 + len(defined)), len(defined)


@pytest.mark.parametrize("alternative", ["greater", "two-sided"])
def test_besag_clifford_stops_settled_pairs_and_keeps_every_decision(alternative):
    rng = np.random.default_rng(12)
    z = rng.normal(size=(6, 10))
    data = {"h": z, **{f"m{i}": z + rng.normal(0, 0.3 + i, z.shape) for i in range(4)}}
    names = [f"m{i}" for i in range(4)]
    kwargs = dict(level="global", coefficient="kendall", method="perm-both", alternative=alternative,
                  n_resamples=199, rng=5, correction="none")
    full = compare_all_pairs(data, names, "h", **kwargs)
    runs = [compare_all_pairs(data, names, "h", stopping="besag-clifford", batch=batch, **kwargs)
            for batch in (1, 13, None)]
    for other in runs[1:]:
        np.testing.assert_array_equal(runs[0].pvalue, other.pvalue)
        np.testing.assert_array_equal(runs[0].n_defined, other.n_defined)
    seq = runs[0]
    assert seq.stopping == "besag-clifford" and full.stopping == "none"
    np.testing.assert_array_equal(seq.significant, full.significant)
    h = int(np.ceil(0.05 * 200))
    stopped = 0
    for i, j, values, threshold in oracles.table_cell_nulls(data, names, full, alternative=alternative,
                                                           n_resamples=199, rng=5):
        p, used = _oracle_sequential(values, threshold, h)
        assert seq.pvalue[i, j] == pytest.approx(p, abs=1e-15) and seq.n_defined[i, j] == used
        stopped += used < 199
    assert stopped > 0


@st.composite
def _tied_matrices(draw):
    """Three metrics and a human on one shape: few levels (ties everywhere), NaN cells, whole tied inputs."""
    n, m = draw(st.integers(2, 7)), draw(st.integers(1, 8))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    z = rng.integers(0, draw(st.integers(1, 4)), (n, m)).astype(float)
    z[rng.random((n, m)) < draw(st.sampled_from([0.0, 0.2]))] = np.nan
    mats = []
    for _ in range(3):
        x = rng.integers(0, draw(st.integers(1, 5)), (n, m)) + draw(st.sampled_from([0.0, 0.5])) * rng.random(
            (n, m))
        x[rng.random((n, m)) < draw(st.sampled_from([0.0, 0.1]))] = np.nan
        # A constant metric is only centred by the engine; the oracle's z-score of it is NaN.
        assume(np.nanstd(x) > 0)
        mats.append(x)
    return mats, z

@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=_tied_matrices())
def test_property_every_tie_pattern_matches_the_swapped_loop(case):
    mats, z = case
    pairs = [(0, 1), (2, 0), (1, 2)]
    engine = InputLinearPermutation([_zscored(x) for x in mats], z, "kendall", pairs)
    masks = _draw_swap_masks(np.random.default_rng(0), "perm-both", 12, *z.shape)
    fast = _nulls(engine, masks)
    for p, (i, k) in enumerate(pairs):
        slow = oracles.permutation_null(mats[i], mats[k], z, "input", "kendall", masks)
        np.testing.assert_allclose(fast[:, p], slow, rtol=0, atol=1e-12, equal_nan=True)


@pytest.mark.parametrize("seed", range(6))
def test_swapped_kendall_selects_the_swapped_matrices_signs_exactly(seed):
    # The recomputed (uneven) resamples: the four sign tables selected by the swap bits give the per-input taus of
    # the swapped matrices bit for bit, with ties, NaN cells in X only (so the compared pairs move with the swaps),
    # a constant human input (undefined tau) and a human NaN; any split of the resamples gives the same values.
    from metaeval_core.stats.significance.linear import _per_input_coefficient, _SwappedKendall

    mats, z = _tie_heavy(seed)
    z[:, 0] = 1.0
    mats[0][np.flatnonzero(~np.isnan(z[:, 1]))[0], 1] = np.nan
    pairs = [(0, 1), (2, 0)]
    engine = InputLinearPermutation([_zscored(x) for x in mats], z, "kendall", pairs)
    per_input = _per_input_coefficient(engine)
    masks = _draw_swap_masks(np.random.default_rng(seed), "perm-both", 30, *z.shape)
    for p, (i, k) in enumerate(pairs):
        x, y = engine.metrics[i], engine.metrics[k]
        swaps = _SwappedKendall(engine, p)
        per_x, per_y = swaps(masks)
        np.testing.assert_array_equal(per_x, per_input(np.swapaxes(np.where(masks, y, x), 1, 2)))
        np.testing.assert_array_equal(per_y, per_input(np.swapaxes(np.where(masks, x, y), 1, 2)))
        assert np.isnan(per_x[:, 0]).all()
        halves = [swaps(masks[:11]), swaps(masks[11:])]
        np.testing.assert_array_equal(np.concatenate([h[0] for h in halves]), per_x)
        np.testing.assert_array_equal(np.concatenate([h[1] for h in halves]), per_y)
    assert any(len(_SwappedKendall(engine, p).z) == 4 for p in range(len(pairs)))


def test_engine_paths_do_not_depend_on_memory_order():
    # Data frames often hand over Fortran-ordered matrices; the engine works in C order whatever it gets.
    mats, z = _tie_heavy(5)
    pairs = [(0, 1), (1, 0), (0, 2), (2, 1), (1, 2)]
    c_order = InputLinearPermutation([_zscored(x) for x in mats], z, "kendall", pairs)
    f_order = InputLinearPermutation([np.asfortranarray(_zscored(x)) for x in mats], np.asfortranarray(z), "kendall",
                                     pairs)
    np.testing.assert_array_equal(c_order.weights, f_order.weights)
    np.testing.assert_array_equal(c_order.tied, f_order.tied)
    np.testing.assert_array_equal(c_order.n_stable, f_order.n_stable)
    for a, b in zip(c_order.fallback, f_order.fallback):
        np.testing.assert_array_equal(a, b)


def test_a_score_shared_by_x_and_y_sends_a_tied_input_to_the_per_pair_path():
    # Input 0: X ties two systems; X and Y share no score -> the shared tie path. Input 1: X ties two systems and
    # X_0 equals Y_2 -> the per-pair path. Input 2: no tie, no shared score -> linear. Input 3: no tie within X or Y
    # but X_1 equals Y_0 -> the per-pair path.
    z = np.array([[1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0]])
    x = np.array([[0.1, 0.1, 0.1, 0.1], [0.1, 0.5, 0.5, 0.5], [0.9, 0.5, 0.9, 0.9]])
    y = np.array([[0.2, 0.3, 0.2, 0.5], [0.6, 0.6, 0.6, 0.6], [0.7, 0.1, 0.7, 0.7]])
    engine = InputLinearPermutation([x, y], z, "kendall", [(0, 1)])
    np.testing.assert_array_equal(engine.tied[0], [True, False, False, False])
    np.testing.assert_array_equal(engine.fallback[0], [1, 3])
    assert engine.n_stable[0] == 1
