"""Weighted Kendall pair counts (metaeval_core.stats.paircounts) against a pair loop over repeated points."""

from __future__ import annotations

import numpy as np
import pytest

from metaeval_core.stats.paircounts import PairCounter
from metaeval_core.stats.resampling import _bootstrap_correlations, _draw_bootstrap_indices
from metaeval_core.stats.significance import _draw_swap_masks, _permutation_null

from . import oracles


def _loop_counts(x, z, w):
    """Pairs of the points repeated w times: concordant, discordant, tied in x, in z, in both."""
    xs, zs = np.repeat(x, w), np.repeat(z, w)
    c = d = tx = tz = tb = total = 0
    for i in range(xs.size):
        for j in range(i + 1, xs.size):
            total += 1
            sx, sz = np.sign(xs[i] - xs[j]), np.sign(zs[i] - zs[j])
            tx += sx == 0
            tz += sz == 0
            tb += sx == 0 and sz == 0
            c += sx * sz > 0
            d += sx * sz < 0
    return total, c, d, tx, tz, tb


@pytest.mark.parametrize("seed", range(40))
def test_weighted_counts_equal_the_pair_loop(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 30))
    x = rng.normal(size=n) if seed % 3 == 0 else rng.integers(0, 4, n).astype(float)
    z = rng.integers(0, 3, n).astype(float)
    weights = rng.integers(0, 3, (4, n))
    counts = PairCounter(x, z).counts(weights)
    for r in range(4):
        expected = _loop_counts(x, z, weights[r])
        got = tuple(int(v[r]) for v in (counts.total, counts.concordant, counts.discordant, counts.tied_x,
                                         counts.tied_z, counts.tied_both))
        assert got == expected
        xs, zs = np.repeat(x, weights[r]), np.repeat(z, weights[r])
        np.testing.assert_allclose(counts.kendall()[r], oracles.scipy_corr(xs, zs, "kendall"), atol=1e-12)
        np.testing.assert_allclose(counts.pairwise_accuracy()[r], oracles.scipy_corr(xs, zs, "pairwise-accuracy"),
                                   atol=1e-12, equal_nan=True)


def test_weighted_counts_reject_a_wrong_shape():
    with pytest.raises(ValueError, match="weights must have shape"):
        PairCounter(np.arange(3.0), np.arange(3.0)).counts(np.ones((2, 4)))


@pytest.mark.parametrize("coefficient", ["kendall", "pairwise-accuracy"])
def test_global_level_on_hundreds_of_cells_matches_the_oracles(coefficient):
    # 12 x 40 = 480 cells with ties and NaN: a deep divide-and-conquer, checked resample by resample.
    rng = np.random.default_rng(3)
    z = rng.integers(1, 6, (12, 40)).astype(float)
    x = z + rng.integers(-2, 3, z.shape)
    y = np.round(z + rng.normal(0, 1.5, z.shape), 1)
    x[0, :5] = np.nan
    z[3, 7] = np.nan
    indices = _draw_bootstrap_indices(np.random.default_rng(1), "boot-both", 15, 12, 40)
    fast = _bootstrap_correlations([x, y], z, level="global", coefficient=coefficient, indices=indices, batch=4)
    slow = oracles.bootstrap_distribution([x, y], z, "global", coefficient, indices)
    np.testing.assert_allclose(fast, slow, rtol=0, atol=1e-12)
    masks = _draw_swap_masks(np.random.default_rng(2), "perm-both", 15, 12, 40)
    fast = _permutation_null(x, y, z, level="global", coefficient=coefficient, method="perm-both",
                             rng=np.random.default_rng(2), n_resamples=15, batch=4)
    np.testing.assert_allclose(fast, oracles.permutation_null(x, y, z, "global", coefficient, masks), rtol=0, atol=1e-12)


@pytest.mark.parametrize("seed", range(20))
def test_complement_counts_follow_from_the_first(seed):
    # Ys of a cell swap takes exactly the points Xs leaves: P(W - w) = P(W) + P(w) - w . (A W).
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 40))
    x, z = rng.integers(0, 4, n).astype(float), rng.integers(0, 3, n).astype(float)
    counter = PairCounter(x, z)
    everything = (rng.random(n) < 0.8).astype(int)
    concordant = np.array([[(x[u] - x[v]) * (z[u] - z[v]) > 0 for v in range(n)] for u in range(n)], dtype=int)
    np.testing.assert_array_equal(counter.concordance_vector(everything), concordant @ everything)
    w = (rng.random((5, n)) < 0.5) * everything
    first = counter.counts(w).concordant
    complement = counter.complement_concordant(w, first, int(counter.counts(everything[None]).concordant[0]),
                                               counter.concordance_vector(everything))
    np.testing.assert_array_equal(complement, counter.counts(everything - w).concordant)


def _pair_matrix_counts(x, z, w):
    """O(n^2) oracle on the weighted points themselves: every ordered pair of points, plus copies of one point."""
    w = np.asarray(w, dtype=np.int64)
    dx, dz = np.sign(x[:, None] - x[None, :]), np.sign(z[:, None] - z[None, :])
    ww = np.triu(np.outer(w, w), 1)
    own = int((w * (w - 1) // 2).sum())
    total_w = int(w.sum())
    return (total_w * (total_w - 1) // 2, int(ww[dx * dz > 0].sum()), int(ww[dx * dz < 0].sum()),
            int(ww[dx == 0].sum()) + own, int(ww[dz == 0].sum()) + own, int(ww[(dx == 0) & (dz == 0)].sum()) + own)


@pytest.mark.parametrize("share", [0.0, 1.0])  # per-point block starts, per-block offsets
@pytest.mark.parametrize("seed", range(12))
def test_heavy_ties_and_nan_points_match_the_pair_matrix_at_any_batch(seed, share, monkeypatch):
    # Hundreds of points, few distinct values in one coordinate (either), NaN points with weight 0, bootstrap-like
    # and 0/1 weightings: every count equals the O(n^2) oracle's, and a row's counts do not depend on its batch.
    from metaeval_core.stats import paircounts

    monkeypatch.setattr(paircounts, "_BLOCK_OFFSETS_SHARE", share)
    rng = np.random.default_rng(seed)
    n = int(rng.integers(50, 400))
    coarse = rng.integers(0, int(rng.integers(1, 40)), n).astype(float)
    fine = np.round(rng.normal(size=n), int(rng.integers(0, 3)))
    x, z = (coarse, fine) if seed % 2 else (fine, coarse)
    nan = rng.random(n) < 0.05
    x[nan & (rng.random(n) < 0.5)] = np.nan
    z[nan & ~np.isnan(x)] = np.nan
    valid = ~(np.isnan(x) | np.isnan(z))
    weights = (rng.poisson(1.0, (6, n)) if seed % 3 else (rng.random((6, n)) < 0.5)) * valid
    counter = PairCounter(x, z)
    whole = counter.counts(weights)
    for r in range(weights.shape[0]):
        got = tuple(int(v[r]) for v in (whole.total, whole.concordant, whole.discordant, whole.tied_x,
                                        whole.tied_z, whole.tied_both))
        assert got == _pair_matrix_counts(np.where(valid, x, 0), np.where(valid, z, 0), weights[r])
        alone = counter.counts(weights[r:r + 1])
        assert int(alone.concordant[0]) == got[1] and int(alone.tied_x[0]) == got[3]
        xs, zs = np.repeat(x[valid], weights[r][valid]), np.repeat(z[valid], weights[r][valid])
        np.testing.assert_allclose(whole.kendall()[r], oracles.scipy_corr(xs, zs, "kendall"), atol=1e-12)
    everything = valid.astype(int)
    concordant = (np.sign(x[:, None] - x[None, :]) * np.sign(z[:, None] - z[None, :]) > 0).astype(int)
    np.testing.assert_array_equal(counter.concordance_vector(everything)[valid], (concordant @ everything)[valid])


@pytest.mark.parametrize("top", [1, 127, 128, 300, 2000])  # int8 weights up to 127, wider beyond
def test_counts_with_large_weights_and_given_totals_equal_the_pair_matrix(top, monkeypatch):
    # Totals below 2 ** 16 pack four weightings to a word, beyond (top 2000) two; 20 human values on 400 points:
    # the packed recursion.
    from metaeval_core.stats import paircounts

    rng = np.random.default_rng(top)
    n = 400
    x = np.round(rng.normal(size=n), 1)
    z = rng.integers(0, 20, n).astype(float)
    weights = rng.integers(0, top + 1, (5, n))
    weights[0, 0] = top
    counter = PairCounter(x, z)
    assert paircounts._lane_bits(weights.sum(axis=1)) == (32 if top == 2000 else 16)
    assert counter._offsets is not None
    got = counter.counts(weights)
    for r in range(5):
        assert tuple(int(v[r]) for v in (got.total, got.concordant, got.discordant, got.tied_x, got.tied_z,
                                          got.tied_both)) == _pair_matrix_counts(x, z, weights[r])
    given = counter.counts(weights, rank_totals=counter.rank_totals(weights))
    np.testing.assert_array_equal(given.concordant, got.concordant)
    np.testing.assert_array_equal(given.tied_z, got.tied_z)
    _assert_same_counts(got, _unpacked(counter, weights, monkeypatch))


def test_given_run_sums_of_a_complement_equal_the_direct_counts():
    # 0/1 weightings of tied points: the runs of W - w are W's minus w's, as the permutation uses them.
    rng = np.random.default_rng(5)
    n = 300
    x, z = rng.integers(0, 12, n).astype(float), rng.integers(0, 5, n).astype(float)
    counter = PairCounter(x, z)
    everything = np.ones((1, n), dtype=np.int8)
    w = (rng.random((4, n)) < 0.5).astype(np.int8)
    runs = [a - r for a, r in zip(counter.run_sums(everything), counter.run_sums(w))]
    direct, given = counter.counts(everything - w), counter.counts(everything - w, run_sums=tuple(runs))
    np.testing.assert_array_equal(given.tied_x, direct.tied_x)
    np.testing.assert_array_equal(given.tied_both, direct.tied_both)
    with pytest.raises(ValueError, match="0/1 weights"):
        counter.counts(2 * w, run_sums=tuple(runs))


@pytest.mark.parametrize("coefficient", ["kendall", "pairwise-accuracy"])
def test_permutation_with_fixed_human_totals_matches_the_oracle_at_any_batch(coefficient):
    # X and Y valid on the same cells (NaN only in the human): every swap keeps the human ranks' totals, which the
    # engine then computes once; ties in all three scores.
    rng = np.random.default_rng(8)
    z = rng.integers(0, 7, (9, 30)).astype(float)
    x = z + rng.integers(-2, 3, z.shape)
    y = np.round(z + rng.normal(0, 1.5, z.shape))
    z[2, :4] = np.nan
    masks = _draw_swap_masks(np.random.default_rng(4), "perm-both", 13, 9, 30)
    slow = oracles.permutation_null(x, y, z, "global", coefficient, masks)
    for batch in (1, 5, 13):
        fast = _permutation_null(x, y, z, level="global", coefficient=coefficient, method="perm-both",
                                 rng=np.random.default_rng(4), n_resamples=13, batch=batch)
        np.testing.assert_allclose(fast, slow, rtol=0, atol=1e-12)


# -- packed weightings (several per uint64 word) and weightings shared by several counters -------------------------
_FIELDS = ("total", "concordant", "discordant", "tied_x", "tied_z", "tied_both")


def _unpacked(counter, weights, monkeypatch):
    """The counts of the one-weighting-per-row path (no packing), the oracle of the packed one."""
    from metaeval_core.stats import paircounts

    with monkeypatch.context() as patch:
        patch.setattr(paircounts, "_lane_bits", lambda total_w: None)
        return counter.counts(weights)


def _assert_same_counts(a, b):
    for field in _FIELDS:
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field), err_msg=field)


@pytest.mark.parametrize("seed", range(10))
def test_packed_counts_equal_the_unpacked_path_with_ties_nan_and_any_batch(seed, monkeypatch):
    # Few human values (the coarse coordinate, tens of recursion levels' blocks), a metric with ties or none, NaN
    # points with weight 0, bootstrap cell multiplicities: 16-bit lanes, 4 weightings per word, rows that do not
    # fill the last word.
    from metaeval_core.stats import paircounts

    rng = np.random.default_rng(seed)
    n_sys, n_in = int(rng.integers(3, 9)), int(rng.integers(20, 80))
    # Up to n / 20 distinct human values: the recursion subtracts the earlier blocks per coarse rank (packed path).
    z = rng.integers(0, int(rng.integers(2, n_sys * n_in // 20)), (n_sys, n_in)).astype(float)
    x = np.round(z + rng.normal(0, 2, z.shape), int(rng.integers(0, 3)))
    if seed % 3 == 0:
        x[rng.random(x.shape) < 0.1] = np.nan
        z[rng.random(z.shape) < 0.05] = np.nan
    valid = ~(np.isnan(x) | np.isnan(z)).ravel()
    b = 11
    systems = rng.integers(0, n_sys, (b, n_sys))
    inputs = rng.integers(0, n_in, (b, n_in))
    cs = np.stack([np.bincount(r, minlength=n_sys) for r in systems])
    cd = np.stack([np.bincount(r, minlength=n_in) for r in inputs])
    weights = (cs[:, :, None] * cd[:, None, :]).reshape(b, -1) * valid
    counter = PairCounter(x, z)
    assert paircounts._lane_bits(weights.sum(axis=1)) == 16 and counter._offsets is not None
    packed = counter.counts(weights)
    _assert_same_counts(packed, _unpacked(counter, weights, monkeypatch))
    for rows in (slice(0, 1), slice(1, 5), slice(5, 11)):  # any batch: the same rows' counts
        part = counter.counts(weights[rows])
        for field in _FIELDS:
            np.testing.assert_array_equal(getattr(part, field), getattr(packed, field)[rows])
    for r in range(b):
        keep = weights[r] > 0
        xs = np.repeat(x.ravel()[keep], weights[r][keep])
        zs = np.repeat(z.ravel()[keep], weights[r][keep])
        np.testing.assert_allclose(packed.kendall()[r], oracles.scipy_corr(xs, zs, "kendall"), atol=1e-12,
                                   equal_nan=True)


@pytest.mark.parametrize("seed", range(4))
def test_packed_counts_on_nearly_continuous_coordinates_equal_the_unpacked_path_and_the_pair_matrix(seed,
                                                                                                   monkeypatch):
    # Hundreds of distinct values in both coordinates (more than 512 coarse ranks, more than n / 16: no per-block
    # offsets, the unpacked recursion gathers each point's block start): the packed recursion, whose corrections
    # are per coarse rank, counts the same pairs, at any batch.
    rng = np.random.default_rng(seed)
    n = int(rng.integers(600, 900))
    z = np.round(rng.normal(size=n), 3)
    x = z + rng.normal(0, 1, n) if seed % 2 else rng.permutation(n).astype(float)
    z[rng.random(n) < 0.03] = np.nan
    valid = ~np.isnan(z)
    weights = rng.poisson(1.0, (7, n)) * valid
    counter = PairCounter(x, z)
    assert counter.coarse_starts.size > 512 and not counter.block_offsets and counter._offsets is None
    packed = counter.counts(weights)
    _assert_same_counts(packed, _unpacked(counter, weights, monkeypatch))
    for rows in (slice(0, 1), slice(1, 7)):
        _assert_same_counts(counter.counts(weights[rows]), _unpacked(counter, weights[rows], monkeypatch))
    for r in (0, 6):
        got = tuple(int(getattr(packed, f)[r]) for f in _FIELDS)
        assert got == _pair_matrix_counts(x, np.where(valid, z, 0), weights[r])


@pytest.mark.parametrize("k", [1, 2, 3, 5, 8, 13, 64, 100, 513])
def test_packed_corrections_equal_their_quadratic_definition(k):
    # Per coarse rank r, the weight of rank q its slots counted and must not: at every level where r is in an upper
    # half, every rank lower at an earlier level, and the lower halves of the earlier blocks of this level.
    from metaeval_core.stats.paircounts import _PackedPlan

    plan = _PackedPlan.__new__(_PackedPlan)
    plan.n_coarse, plan.halves = k, [1 << e for e in range(max(k - 1, 0).bit_length())]
    ranks = np.arange(k)
    matrix = np.zeros((k, k), dtype=np.int64)
    earlier_lower = np.zeros(k, dtype=np.int64)
    for half in plan.halves:
        block, upper = ranks // (2 * half), (ranks % (2 * half)) >= half
        matrix += upper[:, None] * (earlier_lower[None, :] + (~upper[None, :] & (block[None, :] < block[:, None])))
        earlier_lower += ~upper
    totals = np.random.default_rng(k).integers(0, 50, (3, k))
    np.testing.assert_array_equal(plan.surplus(totals), totals @ matrix.T)

def test_prepared_weights_shared_by_several_counters_equal_each_counters_own_counts(monkeypatch):
    # Metrics against one human on the same cells share the prepared batch (its packed words and the human ranks'
    # totals and corrections); a constant metric and a metric coarser than the human (its own coarse ranks) too.
    from metaeval_core.stats.paircounts import PreparedWeights

    rng = np.random.default_rng(2)
    z = rng.integers(0, 12, (6, 50)).astype(float)
    metrics = [z + rng.normal(0, 1, z.shape), np.round(z + rng.normal(0, 3, z.shape), 1),
               np.full(z.shape, 0.5), rng.integers(0, 3, z.shape).astype(float)]
    weights = rng.poisson(1.0, (9, z.size))
    prepared = PreparedWeights(weights)
    counters = [PairCounter(x, z) for x in metrics]
    assert [c.coarse_is_x for c in counters] == [False, False, True, True]
    assert counters[0]._coarse_rank is counters[1]._coarse_rank  # one array: recognised by identity
    assert counters[0]._offsets is not None  # the packed recursion
    for counter in counters:
        shared = counter.counts(prepared)
        _assert_same_counts(shared, counter.counts(weights))
        _assert_same_counts(shared, _unpacked(counter, weights, monkeypatch))
    assert np.isnan(counters[2].counts(prepared).kendall()).all()  # a constant metric: undefined, not 0


def test_global_bootstrap_of_several_metrics_matches_scipy_on_the_materialised_resamples():
    # The global-level BOOT-BOTH distribution of several metrics computed together (shared prepared weights) is
    # scipy's tau-b on each materialised resample: ties in both scores, NaN cells of one metric, a constant metric.
    from metaeval_core.stats.resampling import _bootstrap_correlations, _draw_bootstrap_indices

    rng = np.random.default_rng(9)
    z = rng.integers(0, 12, (7, 25)).astype(float)
    holes = np.round(z + rng.normal(0, 2, z.shape))
    holes[rng.random(z.shape) < 0.1] = np.nan
    metrics = [z + rng.normal(0, 1, z.shape), holes, np.full(z.shape, 3.0), np.round(z / 4)]
    indices = _draw_bootstrap_indices(np.random.default_rng(1), "boot-both", 30, 7, 25)
    slow = oracles.bootstrap_distribution(metrics, z, "global", "kendall", indices)
    for batch in (1, 8, 30):
        fast = _bootstrap_correlations(metrics, z, level="global", coefficient="kendall", indices=indices,
                                       batch=batch)
        np.testing.assert_allclose(fast, slow, rtol=0, atol=1e-12, equal_nan=True)
    assert np.isnan(slow[:, 2]).all()


def test_packed_counts_without_tied_points_and_run_sums_of_none():
    # No two points share a metric value: no runs of tied points, in the counts or the run sums.
    rng = np.random.default_rng(4)
    x, z = rng.permutation(40).astype(float), rng.integers(0, 3, 40).astype(float)
    counter = PairCounter(x, z)
    weights = (rng.random((5, 40)) < 0.5).astype(np.int8)
    fine, both = counter.run_sums(weights)
    assert fine.shape == both.shape == (5, 0)
    got = counter.counts(weights, run_sums=(fine, both))
    for r in range(5):
        assert tuple(int(getattr(got, f)[r]) for f in _FIELDS) == _pair_matrix_counts(x, z, weights[r])
