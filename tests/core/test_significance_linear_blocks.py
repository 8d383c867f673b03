"""The input-level engine on WMT-shaped ties: the linear products split by the pairs each block takes, the tie
path's weights from ranks, the uneven resamples' Kendall; all bit-identical to the unsplit computations."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from metaeval_core.stats.coefficients import kendall_from_signs
from metaeval_core.stats.montecarlo import count_pvalue
from metaeval_core.stats.significance import _draw_swap_masks, _zscore_params, compare_all_pairs
from metaeval_core.stats.significance.linear import (
    InputLinearPermutation, TiedInputs, _per_input_coefficient, _signs, _SwappedKendall, input_permutation_nulls,
)

from . import oracles


def _zscored(x):
    mu, sd = _zscore_params(x)
    return (x - mu) / sd


def _wmt_like(seed, n=8, m=48):
    """WMT's ties: a human with many ties and a few constant inputs, a system it does not rate (which one metric
    leaves unscored), identical outputs that most metrics tie but two continuous ones do not, an integer-valued
    metric (MATESE), a rounded one (sentence BLEU) and continuous ones."""
    rng = np.random.default_rng(seed)
    z = -rng.poisson(1.2, (n, m)).astype(float)
    z[:, :3] = 0.0  # constant human: undefined for every swap
    z[n - 1, ::2] = np.nan  # a system without the gold in half the inputs
    base = np.nan_to_num(z, nan=-1.0)
    mats = [np.round(base + rng.normal(0, 1, z.shape)),  # integer-valued
            np.round(base + rng.normal(0, 1.5, z.shape), 1),  # rounded
            base + rng.normal(0, 1, z.shape),
            base + rng.normal(0, 1.3, z.shape),
            base + rng.normal(0, 2, z.shape)]
    mats[2][n - 1, ::2] = np.nan  # unscored where the human has no score: still complete on the rated systems
    for j in rng.choice(m, m // 2, replace=False):
        a, b = rng.choice(n - 1, 2, replace=False)
        for matrix in (z, *mats[:3]):  # identical outputs: the continuous metrics 3 and 4 still separate them
            matrix[b, j] = matrix[a, j]
    return mats, z


def _engine(seed):
    mats, z = _wmt_like(seed)
    pairs = list(itertools.combinations(range(len(mats)), 2))
    return mats, z, InputLinearPermutation([_zscored(x) for x in mats], z, "kendall", pairs)


def _unsplit_linear_sums(engine, mask):
    """Every group's full product (every pair, every virtual input), as before the blocks."""
    n, m = engine.shape
    bits = np.broadcast_to(mask, (mask.shape[0], n, m))
    b = bits.shape[0]
    v = np.zeros((b, m), dtype=np.int64)
    for j, a, c in zip(engine.twin_j, engine.twin_a, engine.twin_b):
        v[:, j] += bits[:, a, j] == bits[:, c, j]
    indicator = v[:, engine.virtual_j] == engine.virtual_v
    features = np.empty((b, engine.virtual_j.size, n + 1), dtype=engine.dtype)
    features[:, :, :n] = bits[:, :, engine.virtual_j].transpose(0, 2, 1) * indicator[:, :, None]
    features[:, :, n] = indicator
    flat = features.reshape(b, -1)
    total = np.zeros((b, len(engine.pairs)))
    for g, (start, stop) in enumerate(engine.group_rows):
        total += engine.group_scale[g] * (flat[:, start:stop] @ engine.weights[start:stop]).astype(np.float64)
    return total


@pytest.mark.parametrize("seed", range(4))
def test_blocks_skip_pairs_and_give_the_unsplit_sums_bit_for_bit(seed):
    mats, z, engine = _engine(seed)
    n_pairs = len(engine.pairs)
    # Some group multiplies fewer pairs than the table has (the point of the blocks).
    assert any(active is not None and active.size < n_pairs
               for blocks, _ in engine.group_blocks for _, active, _ in blocks)
    masks = _draw_swap_masks(np.random.default_rng(seed), "perm-both", 50, *z.shape)
    np.testing.assert_array_equal(engine.linear_sums(masks), _unsplit_linear_sums(engine, masks))
    system_masks = _draw_swap_masks(np.random.default_rng(seed), "perm-systems", 20, *z.shape)
    np.testing.assert_array_equal(engine.linear_sums(system_masks), _unsplit_linear_sums(engine, system_masks))


def _reference_weights(tied: TiedInputs, columns):
    """The tie path's weights from the float scores of every metric pair (the formula, before ranks)."""
    f, s = tied.first, tied.second
    dtype = tied.dtype
    values = tied.values[columns]
    z = tied.engine.z[:, columns].T
    compared = ~(np.isnan(z[:, f]) | np.isnan(z[:, s]))
    sz = _signs(z[:, f], z[:, s])
    n0, nz = compared.sum(axis=1), np.count_nonzero(sz, axis=1)
    width = (n0 + 1)[:, None]
    scaled = sz * width.astype(dtype)
    within = _signs(values[:, :, f], values[:, :, s])
    ties = (within == 0) & compared[:, None, :]
    per_metric = ties - scaled[:, None, :] * within
    projected = per_metric @ tied.incidence_sum
    constant = (width * (2 * np.einsum("ckp,cp->ck", within, sz, dtype=np.int64) + 2 * nz[:, None])
                + 2 * n0[:, None] - 2 * ties.sum(axis=2))
    cross = _signs(values[:, :, None, f], values[:, None, :, s])
    px, py = tied.pair_x, tied.pair_y
    t1, t2 = cross[:, px, py], cross[:, py, px]
    flip = np.concatenate([(t1 + t2) * scaled[:, None, :] + per_metric[:, px] + per_metric[:, py],
                           ((constant[:, px] + constant[:, py]) / 2)[..., None]], axis=2) * 0.5
    bits = np.concatenate([((t2 - t1) * scaled[:, None, :]) @ tied.incidence_difference
                           + projected[:, px] - projected[:, py],
                           ((constant[:, px] - constant[:, py]) / 2)[..., None]], axis=2) * 0.5
    return flip.astype(dtype), bits.astype(dtype), n0, nz


@pytest.mark.parametrize("seed", range(4))
def test_tie_path_weights_from_ranks_equal_the_float_comparisons(seed):
    mats, z, engine = _engine(seed)
    tied = TiedInputs(engine)
    assert tied.columns.size and np.isnan(tied.values[tied.columns]).any()  # NaN scores rank last
    flip, bits, n0, nz, may_be_undefined = tied._weights(tied.columns)
    for got, expected in zip((flip, bits, n0, nz), _reference_weights(tied, tied.columns)):
        np.testing.assert_array_equal(got, expected)
    # Where a pair's flag says its tau cannot be undefined, Xs keeps at least n0 - (X's + Y's tied pairs) > 0 pairs.
    values = tied.values[tied.columns]
    z_cols = z[:, tied.columns].T
    compared = ~(np.isnan(z_cols[:, tied.first]) | np.isnan(z_cols[:, tied.second]))
    ties = ((_signs(values[:, :, tied.first], values[:, :, tied.second]) == 0) & compared[:, None, :]).sum(axis=2)
    kept = n0[:, None] - ties[:, tied.pair_x] - ties[:, tied.pair_y]
    assert may_be_undefined.dtype == bool and may_be_undefined.shape == (tied.columns.size, len(engine.pairs))
    assert np.all(may_be_undefined | (kept > 0))


@pytest.mark.parametrize("seed", range(3))
def test_wmt_like_nulls_match_the_loop_for_any_chunking(seed):
    mats, z, engine = _engine(seed)
    assert engine.tied.any()
    masks = _draw_swap_masks(np.random.default_rng(seed), "perm-both", 30, *z.shape)
    nulls = []
    for size in (1, 7, 30):
        chunks = [(slice(s, min(s + size, 30)), masks[s:s + size]) for s in range(0, 30, size)]
        nulls.append(input_permutation_nulls(engine, lambda: iter(chunks), 30))
    for other in nulls[1:]:
        np.testing.assert_array_equal(nulls[0], other)
    for p in (0, 3, 9):  # integer vs rounded, integer vs continuous, continuous pairs
        i, k = engine.pairs[p]
        slow = oracles.permutation_null(mats[i], mats[k], z, "input", "kendall", masks)
        np.testing.assert_allclose(nulls[0][p], slow, rtol=0, atol=1e-12, equal_nan=True)


@pytest.mark.parametrize("seed", range(3))
def test_tie_path_row_blocks_and_features_give_the_same_nulls_bit_for_bit(seed, monkeypatch):
    """Rows in tie order, cut to each input's last tie-path pair, split or not, features left out or not: the
    products are exact integer sums, so every choice gives the same nulls (and the loop's, to rounding)."""
    mats, z, engine = _engine(seed)
    tied = TiedInputs(engine)
    # Tie order: the integer metric (ties on most inputs) first, and the pairs of each first metric together.
    assert sorted(tied.order) == list(range(len(engine.pairs)))
    assert tied.pair_x.tolist() == [engine.pairs[p][0] for p in tied.order]
    assert np.all(np.diff(tied._first_metric) >= 0) and tied.group_starts[0] == 0
    masks = _draw_swap_masks(np.random.default_rng(seed), "perm-both", 40, *z.shape)
    run = lambda: input_permutation_nulls(engine, lambda: iter([(slice(0, 40), masks)]), 40)  # noqa: E731
    default = run()
    seen: dict[int, list] = {}
    original = TiedInputs._plan

    def spy(self, on, rows, flip_w, *args):
        plans = original(self, on, rows, flip_w, *args)
        # Weights are built only for the rows the inputs multiply.
        assert on.shape[1] == max(k for k, _, _ in plans) and flip_w.shape[1] == on.shape[1]
        seen.setdefault(self.SPLIT_COST, []).extend(
            (k, [(w.shape, first.size) for _, w, first, _ in blocks]) for k, blocks, _ in plans)
        return plans

    monkeypatch.setattr(TiedInputs, "_plan", spy)
    for cost in (-10**9, 10**9):  # always split where a metric's pairs start / never split
        monkeypatch.setattr(TiedInputs, "SPLIT_COST", cost)
        np.testing.assert_array_equal(run(), default)
    always, never = seen[-10**9], seen[10**9]
    assert any(len(blocks) == 2 for _, blocks in always) and all(len(blocks) == 1 for _, blocks in never)
    # Rows stop at the last tie-path pair; features no row uses are left out.
    assert all(k <= len(engine.pairs) for k, _ in never)
    assert any(shape[1] < tied.first.size + 1 for _, blocks in always for shape, _ in blocks)
    for p in (0, 3, 9):  # integer vs rounded, integer vs continuous, continuous pairs
        i, k = engine.pairs[p]
        slow = oracles.permutation_null(mats[i], mats[k], z, "input", "kendall", masks)
        np.testing.assert_allclose(default[p], slow, rtol=0, atol=1e-12, equal_nan=True)


def test_uneven_resamples_of_pairs_on_the_tie_path_alone_take_the_two_sides_sums(monkeypatch):
    """A metric tying on every input (few integer values, MATESE): its pairs are on the tie path alone, and a
    resample whose Xs ties every pair of an input (tau undefined on one side only) takes its two means from Xs's and
    Ys's own sums instead of the swapped matrices: the same values to rounding, and the loop's."""
    rng = np.random.default_rng(3)
    n, m = 6, 40
    z = -rng.poisson(1.0, (n, m)).astype(float)
    z[0] = 1.0  # every input has an untied human pair
    base = z + rng.normal(0, 0.3, z.shape)
    few = np.clip(np.round(base), -2, 1)  # four values over six systems: ties on every input
    few[:, ::5] = 0.0  # no error found in any output (MATESE's 0): Xs unswapped there ties every pair
    mats = [few, base + rng.normal(0, 1, z.shape), np.round(base + rng.normal(0, 1, z.shape), 1)]
    pairs = list(itertools.combinations(range(3), 2))
    engine = InputLinearPermutation([_zscored(x) for x in mats], z, "kendall", pairs)
    masks = _draw_swap_masks(np.random.default_rng(4), "perm-both", 200, *z.shape)
    run = lambda: input_permutation_nulls(engine, lambda: iter([(slice(0, 200), masks)]), 200)  # noqa: E731
    tied = TiedInputs(engine)
    own = {int(p) for p in tied.order[:tied.own_rows]}
    assert own == {0, 1}  # the pairs of the metric tying everywhere
    calls = []
    monkeypatch.setattr(_SwappedKendall, "__call__", lambda self, swapped, original=_SwappedKendall.__call__:
                        calls.append(swapped.shape[0]) or original(self, swapped))
    fast = run()
    assert not calls  # no recomputation
    original_init = TiedInputs.__init__

    def without_sides(self, engine):
        original_init(self, engine)
        self.own_rows = 0

    monkeypatch.setattr(TiedInputs, "__init__", without_sides)
    recomputed = run()
    assert calls  # the uneven resamples were there, and recomputed from the swapped matrices
    np.testing.assert_allclose(fast, recomputed, rtol=0, atol=1e-14, equal_nan=True)
    for p, (i, k) in enumerate(pairs):
        slow = oracles.permutation_null(mats[i], mats[k], z, "input", "kendall", masks)
        np.testing.assert_allclose(fast[p], slow, rtol=0, atol=1e-12, equal_nan=True)


def test_swapped_kendall_shares_the_human_and_counts_like_kendall_from_signs():
    mats, z, engine = _engine(1)
    masks = _draw_swap_masks(np.random.default_rng(2), "perm-both", 25, *z.shape)
    per_input = _per_input_coefficient(engine)
    first = _SwappedKendall(engine, 0)
    for p, (i, k) in enumerate(engine.pairs):
        swaps = _SwappedKendall(engine, p, first)
        assert swaps.z_signs is first.z_signs
        per_x, per_y = swaps(masks)
        x, y = engine.metrics[i], engine.metrics[k]
        np.testing.assert_array_equal(per_x, per_input(np.swapaxes(np.where(masks, y, x), 1, 2)))
        np.testing.assert_array_equal(per_y, per_input(np.swapaxes(np.where(masks, x, y), 1, 2)))
        if len(swaps.z) == 1:
            signs = swaps._select(swaps.signs, masks.swapaxes(1, 2)[..., swaps.first],
                                  masks.swapaxes(1, 2)[..., swaps.second])
            np.testing.assert_array_equal(swaps._kendall(signs), kendall_from_signs(signs, swaps.z[0]))


def test_wmt_like_table_pvalues_equal_the_reference_nulls_counts():
    mats, z = _wmt_like(5)
    names = [f"m{i}" for i in range(len(mats))]
    data = {"h": z, **dict(zip(names, mats))}
    k = 30
    masks = _draw_swap_masks(np.random.default_rng(7), "perm-both", k, *z.shape)
    nulls = {(a, b): oracles.permutation_null(mats[a], mats[b], z, "input", "kendall", masks)
             for a, b in itertools.combinations(range(len(names)), 2)}
    for alternative in ("greater", "two-sided"):
        table = compare_all_pairs(data, names, "h", level="input", coefficient="kendall", method="perm-both",
                                  n_resamples=k, rng=7, alternative=alternative, correction="none")
        for (a, b), null in nulls.items():
            assert table.pvalue[a, b] == count_pvalue(null, table.delta[a, b], alternative=alternative)[0]
            assert table.pvalue[b, a] == count_pvalue(-null, -table.delta[a, b], alternative=alternative)[0]


def test_wmt22_input_table_pvalues_equal_the_swapped_matrices(data_dir):
    from metaeval_core.data.registry import load_dataset
    from metaeval_core.stats.correlation import correlation_inputs
    from metaeval_core.stats.significance.linear import _nanmean

    ds = load_dataset("wmt22-zhen", data_dir=data_dir).with_default_systems()
    human = ds.conventions.gold
    # Continuous, sentence-level (ties of identical outputs) and integer-valued (MATESE: uneven resamples).
    names = ["COMET-22-refA", "BLEU-refA", "MATESE-refA", "chrF-refA"]
    subset = ds.scored_by([human, *names])
    z = correlation_inputs(subset, human, human, level="input", pool="judged")[1]
    matrices = {name: correlation_inputs(subset, name, human, level="input", pool="judged")[0] for name in names}
    k = 100
    tables = [compare_all_pairs({human: z, **matrices}, names, human, level="input", coefficient="kendall",
                                method="perm-both", n_resamples=k, rng=11, batch=batch, alternative="two-sided",
                                correction="none") for batch in (13, None)]
    np.testing.assert_array_equal(tables[0].pvalue, tables[1].pvalue)
    # The reference: every input's tau of the swapped matrices (coefficients' formula), averaged per side.
    stack = [matrices[name] for name in names]
    engine = InputLinearPermutation([_zscored(x) for x in stack], z, "kendall", [(0, 1)])
    per_input = _per_input_coefficient(engine)
    masks = _draw_swap_masks(np.random.default_rng(11), "perm-both", k, *z.shape)
    for a, b in itertools.combinations(range(len(names)), 2):
        x, y = _zscored(stack[a]), _zscored(stack[b])
        null = (_nanmean(per_input(np.swapaxes(np.where(masks, y, x), 1, 2)))
                - _nanmean(per_input(np.swapaxes(np.where(masks, x, y), 1, 2))))
        assert tables[0].pvalue[a, b] == count_pvalue(null, tables[0].delta[a, b], alternative="two-sided")[0]
