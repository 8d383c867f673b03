"""rSYS-Delta, the decile grid and the rSYS-Delta bootstrap (docs/methods.md sec. 4; NAACL 2022 sec. 4)."""

from __future__ import annotations

import gzip
import json
import math

import numpy as np
import pytest
from scipy import stats

from metaeval_core.stats.pairs import (
    DELTA_METHODS,
    decile_grid,
    decile_thresholds,
    dataset_delta_confidence_interval,
    dataset_means,
    dataset_rsys_delta,
    delta_confidence_interval,
    delta_curve,
    draw_delta_resamples,
    rsys_delta,
    system_pairs,
)

from . import reference_pairs as ref


def tied_means(rng: np.random.Generator, n: int, *, step: float = 0.5) -> tuple[np.ndarray, np.ndarray]:
    """Means on a coarse grid, so both values and |dx| are often tied."""
    x = np.round(rng.normal(0, 2, n) / step) * step
    z = np.round((x + rng.normal(0, 2, n)) / step) * step
    return x, z


# -------------------------------------------------------------------------------- rSYS-Delta
@pytest.mark.parametrize("seed", range(12))
def test_rsys_delta_matches_slow_loop_and_scipy(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 25))
    x, z = tied_means(rng, n)
    adx = np.abs(system_pairs(x, z).dx)
    cuts = np.unique(np.concatenate([[0.0], adx, [np.inf]]))
    for lower, upper in [(0.0, np.inf), (0.0, 0.5), (0.5, 1.5), (1.0, 1.0), (2.0, np.inf)] + [
        (float(a), float(b)) for a, b in zip(cuts[:-1:3], cuts[1::3])
    ]:
        result = rsys_delta(x, z, lower=lower, upper=upper)
        expected, n_sel = ref.rsys_delta(x, z, lower, upper)
        assert result.n_pairs == n_sel
        np.testing.assert_equal(np.isnan(result.estimate), math.isnan(expected))
        if not math.isnan(expected):
            assert result.estimate == pytest.approx(expected, abs=1e-12)
        # The counts partition the selected pairs; P is the number of positive sign products.
        pairs = system_pairs(x, z)
        sel = (np.abs(pairs.dx) >= lower) & (np.abs(pairs.dx) <= upper)
        assert result.concordant == int(np.sum(np.sign(pairs.dx[sel]) * np.sign(pairs.dz[sel]) > 0))
        assert result.n_pairs == (
            result.concordant + result.discordant + result.ties_metric + result.ties_human + result.ties_both
        )
        assert result.total_pairs == n * (n - 1) // 2
        assert result.share_of_pairs == pytest.approx(n_sel / result.total_pairs)


@pytest.mark.parametrize("seed", range(8))
def test_full_range_equals_scipy_kendalltau(seed):
    rng = np.random.default_rng(100 + seed)
    x, z = tied_means(rng, int(rng.integers(3, 30)))
    expected = stats.kendalltau(x, z).statistic
    result = rsys_delta(x, z)
    if np.isnan(expected):
        assert np.isnan(result.estimate)
    else:
        assert result.estimate == pytest.approx(expected, abs=1e-12)


def test_scipy_on_selected_pairs_equals_rsys_delta():
    """Kendall tau-b over selected pairs equals scipy.kendalltau on the sub-population when the
    selection is all pairs of a subset of systems (a consistency check of the pair formula)."""
    rng = np.random.default_rng(7)
    x, z = tied_means(rng, 12)
    keep = np.array([0, 2, 3, 5, 8, 11])
    sub_x, sub_z = x[keep], z[keep]
    assert rsys_delta(sub_x, sub_z).estimate == pytest.approx(stats.kendalltau(sub_x, sub_z).statistic, abs=1e-12)


def test_nan_systems_are_dropped_and_counted():
    x = np.array([1.0, 2.0, np.nan, 4.0, 3.0])
    z = np.array([1.0, 3.0, 2.0, np.nan, 2.0])
    result = rsys_delta(x, z)
    assert result.n_systems == 3 and result.dropped_systems == 2 and result.total_pairs == 3
    assert result.estimate == pytest.approx(stats.kendalltau([1, 2, 3], [1, 3, 2]).statistic)


def test_undefined_is_nan_never_an_exception():
    x = np.array([1.0, 2.0, 3.0, 4.0])
    z = np.array([4.0, 3.0, 2.0, 1.0])
    empty = rsys_delta(x, z, lower=10.0, upper=20.0)
    assert empty.n_pairs == 0 and np.isnan(empty.estimate) and not empty.defined
    constant_human = rsys_delta(x, np.ones(4))
    assert constant_human.n_pairs == 6 and np.isnan(constant_human.estimate)
    assert rsys_delta(x, z).estimate == pytest.approx(-1.0)
    single = rsys_delta([1.0], [2.0])
    assert single.total_pairs == 0 and np.isnan(single.estimate) and np.isnan(single.share_of_pairs)


def test_bounds_are_inclusive():
    x = np.array([0.0, 1.0, 3.0])  # |dx| = 1, 3, 2
    z = np.array([0.0, 1.0, 2.0])
    assert rsys_delta(x, z, lower=1.0, upper=2.0).n_pairs == 2
    assert rsys_delta(x, z, lower=2.0, upper=2.0).n_pairs == 1


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(lower=1.0, upper=0.5), "lower must be <= upper"),
        (dict(lower=-1.0), "lower must be >= 0"),
        (dict(lower=float("nan")), "must not be NaN"),
    ],
)
def test_rsys_delta_validation(kwargs, message):
    with pytest.raises(ValueError, match=message):
        rsys_delta([1.0, 2.0], [1.0, 2.0], **kwargs)


def test_means_validation():
    with pytest.raises(ValueError, match="one value per system"):
        rsys_delta([1.0, 2.0], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="metric_means must be 1-D"):
        rsys_delta([[1.0, 2.0]], [1.0, 2.0])


# ----------------------------------------------------------------------------- decile grid
GRID_CASES = [(seed, n, mp) for seed, n in enumerate(range(2, 31)) for mp in (1, 3, 5, 10)]


@pytest.mark.parametrize("seed, n_systems, min_pairs", GRID_CASES)
def test_decile_grid_matches_reference(seed, n_systems, min_pairs):
    rng = np.random.default_rng(1000 + seed)
    x, z = tied_means(rng, n_systems, step=[0.25, 0.5, 1.0][seed % 3])
    grid = decile_grid(x, z, min_pairs=min_pairs)
    lowers, uppers, tau, counts = ref.decile_grid(list(x), list(z), min_pairs)
    np.testing.assert_array_equal(grid.lower, lowers)
    np.testing.assert_array_equal(grid.upper, uppers)
    np.testing.assert_array_equal(grid.n_pairs, counts)
    np.testing.assert_allclose(grid.tau, tau, atol=1e-12, equal_nan=True)
    assert grid.exists.sum() == sum(c > 0 for row in counts for c in row)
    assert grid.total_pairs == n_systems * (n_systems - 1) // 2


def test_decile_grid_with_nan_systems_matches_reference():
    rng = np.random.default_rng(5)
    x, z = tied_means(rng, 14)
    x[[2, 9]] = np.nan
    z[4] = np.nan
    grid = decile_grid(x, z, min_pairs=2)
    _, uppers, tau, counts = ref.decile_grid(list(x), list(z), 2)
    np.testing.assert_array_equal(grid.upper, uppers)
    np.testing.assert_array_equal(grid.n_pairs, counts)
    np.testing.assert_allclose(grid.tau, tau, atol=1e-12, equal_nan=True)
    assert grid.total_pairs == 11 * 10 // 2


def test_bucket_size_follows_the_papers_script():
    # plot_heatmaps.py: int(math.ceil(len(pairs) * 0.1)); 120 * 0.1 == 12.0 exactly.
    assert decile_thresholds(np.arange(120.0))[1] == 12
    assert decile_thresholds(np.arange(300.0))[1] == 30
    assert decile_thresholds(np.arange(276.0))[1] == 28
    values, b = decile_thresholds(np.arange(12.0))  # b = 2: positions 1, 3, ..., 11, then 11
    assert b == 2
    np.testing.assert_array_equal(values, [1, 3, 5, 7, 9, 11, 11, 11, 11, 11])


def test_decile_grid_properties():
    rng = np.random.default_rng(3)
    x = rng.normal(40, 3, 20)
    z = x + rng.normal(0, 2, 20)
    grid = decile_grid(x, z)
    assert grid.total_pairs == 190 and grid.bucket_size == 19
    np.testing.assert_array_equal(grid.n_pairs[0], 19 * np.arange(1, 11))  # distinct |dx|
    np.testing.assert_allclose(grid.column_share, np.arange(1, 11) / 10)
    assert grid.tau[0, -1] == pytest.approx(stats.kendalltau(x, z).statistic)
    assert not grid.exists[np.tril_indices(10, -1)].any()
    assert grid.rows()[0]["lower"] == 0.0 and len(grid.rows()) == int(grid.exists.sum())


def test_decile_grid_without_pairs():
    grid = decile_grid([1.0], [1.0])
    assert grid.total_pairs == 0 and not grid.exists.any() and np.isnan(grid.tau).all()
    assert (grid.n_pairs == 0).all()


def test_decile_grid_validation():
    with pytest.raises(ValueError, match="min_pairs must be >= 1"):
        decile_grid([1.0, 2.0], [1.0, 2.0], min_pairs=0)
    with pytest.raises(TypeError, match="min_pairs must be an int"):
        decile_grid([1.0, 2.0], [1.0, 2.0], min_pairs=2.5)


@pytest.mark.parametrize("seed", range(6))
def test_delta_curve_matches_grid_first_row_and_loops(seed):
    rng = np.random.default_rng(50 + seed)
    x, z = tied_means(rng, int(rng.integers(4, 25)))
    curve = delta_curve(x, z, n_points=10)
    grid = decile_grid(x, z, min_pairs=1)
    np.testing.assert_array_equal(curve.upper, np.unique(grid.upper))
    full = delta_curve(x, z)
    for u, tau, n in zip(full.upper, full.tau, full.n_pairs):
        expected, n_sel = ref.rsys_delta(x, z, 0.0, u)
        assert n == n_sel
        np.testing.assert_allclose(tau, expected, atol=1e-12, equal_nan=True)
    assert full.share_of_pairs[-1] == 1.0
    np.testing.assert_allclose(full.tau[-1], rsys_delta(x, z).estimate, equal_nan=True)
    with pytest.raises(ValueError, match="n_points must be >= 1"):
        delta_curve(x, z, n_points=0)


# ----------------------------------------------------------------------- real data (NAACL)
def _read_naacl_file(data_dir, folder):
    """Read <data_dir>/<folder>/deutsch2022_reexamining/judged/metrics.jsonl.gz directly."""
    path = data_dir / folder / "deutsch2022_reexamining" / "judged" / "metrics.jsonl.gz"
    if not path.is_file():
        pytest.skip(f"{path} not in the data mirror")
    rows = [json.loads(line) for line in gzip.open(path, "rt")]
    systems = sorted({r["summarizer_id"] for r in rows})
    inputs = sorted({r["instance_id"] for r in rows})
    si = {s: k for k, s in enumerate(systems)}
    ii = {s: k for k, s in enumerate(inputs)}
    out = {name: np.full((len(systems), len(inputs)), np.nan) for name in ("ground-truth", "ROUGE-1")}
    for r in rows:
        gt = r["metrics"]["ground-truth"]
        out["ground-truth"][si[r["summarizer_id"]], ii[r["instance_id"]]] = np.mean(gt)
        out["ROUGE-1"][si[r["summarizer_id"]], ii[r["instance_id"]]] = r["metrics"]["ROUGE-1"]
    return systems, out


def format_grid(grid) -> str:
    header = "l \\ u   " + " ".join(f"{u:>11.2f}" for u in grid.upper)
    lines = [header]
    for r, low in enumerate(grid.lower):
        cells = []
        for c in range(10):
            if grid.exists[r, c]:
                tau = grid.tau[r, c]
                cells.append(f"{'nan' if np.isnan(tau) else f'{tau:+.2f}':>6}({grid.n_pairs[r, c]:>3})")
            else:
                cells.append(f"{'.':>11}")
        lines.append(f"{low:>7.2f} " + " ".join(cells))
    return "\n".join(lines)


@pytest.mark.realdata
@pytest.mark.parametrize("folder, registry_id, n_systems", [("summeval", "summeval-naacl2022", 16),
                                                             ("realsumm", "realsumm-naacl2022", 24)])
def test_decile_grid_on_naacl_data(data_dir, folder, registry_id, n_systems, record_property):
    systems, matrices = _read_naacl_file(data_dir, folder)
    x = np.nanmean(matrices["ROUGE-1"], axis=1)
    z = np.nanmean(matrices["ground-truth"], axis=1)
    assert len(systems) == n_systems
    grid = decile_grid(x, z)
    n_pairs = n_systems * (n_systems - 1) // 2
    b = math.ceil(n_pairs * 0.1)  # as the paper's plot_heatmaps.py computes it
    assert grid.total_pairs == n_pairs and grid.bucket_size == b
    # Sanity: the first row holds the k*b closest pairs (no |dx| ties in these data),
    # the last column with l = 0 is the standard system-level Kendall tau.
    np.testing.assert_array_equal(grid.n_pairs[0], np.minimum(b * np.arange(1, 11), n_pairs))
    assert grid.tau[0, -1] == pytest.approx(stats.kendalltau(x, z).statistic, abs=1e-12)
    assert grid.tau[0, -1] == pytest.approx(rsys_delta(x, z).estimate)
    # Every existing cell agrees with the slow reference.
    _, _, tau, counts = ref.decile_grid(list(x), list(z), 5)
    np.testing.assert_allclose(grid.tau, tau, atol=1e-12, equal_nan=True)
    np.testing.assert_array_equal(grid.n_pairs, counts)
    # The closest pairs are far harder than all pairs (NAACL 2022 sec. 4.2).
    assert grid.tau[0, 0] < grid.tau[0, -1]
    # The colleague's loader, when present, yields the same means.
    try:
        from metaeval_core.data.registry import load_dataset

        dataset = load_dataset(registry_id, data_dir=data_dir)
    except (ImportError, AttributeError, KeyError):
        dataset = None
    if dataset is not None:
        xd, zd, subset = dataset_means(dataset, "ROUGE-1", "ground-truth")
        order = [subset.systems.index(s) for s in systems]
        np.testing.assert_allclose(xd[order], x, rtol=1e-12)
        np.testing.assert_allclose(zd[order], z, rtol=1e-12)
        grid_d = decile_grid(xd, zd)
        np.testing.assert_array_equal(grid_d.n_pairs, grid.n_pairs)
        np.testing.assert_allclose(grid_d.tau, grid.tau, atol=1e-12, equal_nan=True)
        result = dataset_rsys_delta(dataset, "ROUGE-1", "ground-truth", lower=0.0, upper=float(grid_d.upper[1]))
        assert result.n_pairs == grid_d.n_pairs[0, 1]
        assert result.estimate == pytest.approx(grid_d.tau[0, 1], abs=1e-12)
    # Recorded for the report (shown with ``pytest -s`` or in the junit XML).
    table = f"{folder} (NAACL 2022 judged file) ROUGE-1 vs ground-truth, tau(n_pairs):\n{format_grid(grid)}"
    record_property(f"decile_grid_{folder}_rouge1", table)
    print("\n" + table)


# --------------------------------------------------------------------- bootstrap interval
def _bootstrap_data(seed: int, n_sys: int = 7, n_x: int = 9, n_z: int = 9):
    """Integer-valued scores (exact sums in any order, many tied means)."""
    rng = np.random.default_rng(seed)
    quality = rng.normal(0, 1, n_sys)
    metric = np.round(quality[:, None] * 2 + rng.normal(0, 2, (n_sys, n_x)))
    human = np.clip(np.round(3 + quality[:, None] + rng.normal(0, 1, (n_sys, n_z))), 1, 5)
    return metric, human


@pytest.mark.parametrize("method", DELTA_METHODS)
@pytest.mark.parametrize("pool", ["judged", "all"])
def test_delta_bootstrap_matches_slow_oracle(method, pool):
    metric, human = _bootstrap_data(11, n_x=9 if pool == "judged" else 15)
    metric[1, 3] = np.nan  # a missing cell
    lower, upper = 0.2, 1.5
    result = delta_confidence_interval(
        metric, human, lower=lower, upper=upper, method=method, pool=pool, n_resamples=60, rng=42, batch=7
    )
    draws = draw_delta_resamples(
        42, method=method, n_systems=7, n_metric_inputs=metric.shape[1], n_human_inputs=human.shape[1],
        paired_inputs=(pool == "judged"), n_resamples=60,
    )
    if pool == "judged" and draws.metric_inputs is not None:
        assert draws.human_inputs is draws.metric_inputs
    expected = ref.delta_bootstrap(metric, human, draws, lower, upper)
    np.testing.assert_allclose(result.distribution, expected, atol=1e-12, equal_nan=True)
    defined = np.array([v for v in expected if not math.isnan(v)])
    assert result.n_defined == defined.size and result.n_resamples == 60
    low, high = np.quantile(defined, [0.025, 0.975])
    assert result.low == pytest.approx(low) and result.high == pytest.approx(high)
    x = [ref.nan_mean(row) for row in metric]
    z = [ref.nan_mean(row) for row in human]
    np.testing.assert_allclose(result.estimate, ref.rsys_delta(x, z, lower, upper)[0], equal_nan=True)


@pytest.mark.parametrize("method", DELTA_METHODS)
def test_delta_bootstrap_batch_invariance_and_seed(method):
    metric, human = _bootstrap_data(3, n_sys=10, n_x=30, n_z=12)
    kwargs = dict(lower=0.0, upper=0.8, method=method, pool="all", n_resamples=150)
    reference = delta_confidence_interval(metric, human, rng=5, **kwargs)
    for batch in (1, 4, 149, 1000):
        other = delta_confidence_interval(metric, human, rng=5, batch=batch, **kwargs)
        np.testing.assert_array_equal(other.distribution, reference.distribution)
        np.testing.assert_array_equal(other.pairs_per_resample, reference.pairs_per_resample)
    same = delta_confidence_interval(metric, human, rng=np.random.default_rng(5), **kwargs)
    np.testing.assert_array_equal(same.distribution, reference.distribution)
    different = delta_confidence_interval(metric, human, rng=6, **kwargs)
    assert not np.array_equal(different.distribution, reference.distribution, equal_nan=True)


def test_delta_bootstrap_recomputes_the_pair_set():
    # Two systems 0.5 apart on average: which pairs are "close" changes from resample to resample.
    rng = np.random.default_rng(0)
    metric = rng.normal(0, 5, (8, 40)) + np.arange(8)[:, None] * 0.5
    human = metric[:, :40] + rng.normal(0, 5, (8, 40))
    result = delta_confidence_interval(metric, human, upper=1.0, n_resamples=200, rng=1)
    assert len(np.unique(result.pairs_per_resample)) > 3
    assert result.point.n_pairs == rsys_delta(metric.mean(1), human.mean(1), upper=1.0).n_pairs


def test_delta_bootstrap_full_range_equals_kendall_of_resampled_means():
    metric, human = _bootstrap_data(9, n_sys=9, n_x=20, n_z=20)
    result = delta_confidence_interval(metric, human, n_resamples=40, rng=3)
    draws = draw_delta_resamples(3, method="boot-inputs", n_systems=9, n_metric_inputs=20, n_human_inputs=20,
                                 paired_inputs=True, n_resamples=40)
    for k in range(40):
        cols = draws.metric_inputs[k]
        expected = stats.kendalltau(metric[:, cols].mean(1), human[:, cols].mean(1)).statistic
        np.testing.assert_allclose(result.distribution[k], expected, atol=1e-12, equal_nan=True)


def test_delta_bootstrap_on_demo(demo):
    result = dataset_delta_confidence_interval(demo, "metric.good", "human.quality", upper=2.0, pool="all",
                                               n_resamples=200, rng=0)
    assert result.low <= result.high and result.n_defined > 150 and result.pool == "all"
    assert result.point.total_pairs == 120


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        (dict(method="boot-pairs"), ValueError, "method must be one of"),
        (dict(confidence_level=1.0), ValueError, "confidence_level must lie strictly between 0 and 1"),
        (dict(n_resamples=0), ValueError, "n_resamples must be >= 1"),
        (dict(batch=0), ValueError, "batch must be >= 1"),
        (dict(pool="some"), ValueError, "pool must be one of"),
        (dict(lower=2.0, upper=1.0), ValueError, "lower must be <= upper"),
        (dict(rng="seed"), TypeError, "rng must be"),
    ],
)
def test_delta_bootstrap_validation(kwargs, error, message):
    metric, human = _bootstrap_data(1)
    with pytest.raises(error, match=message):
        delta_confidence_interval(metric, human, **kwargs)


def test_delta_bootstrap_pool_shapes():
    metric, human = _bootstrap_data(1, n_x=12, n_z=9)
    with pytest.raises(ValueError, match="with pool='judged' metric and human must share their inputs"):
        delta_confidence_interval(metric, human)
    with pytest.raises(ValueError, match="same number of systems"):
        delta_confidence_interval(metric[:5], human, pool="all")


# -------------------------------------------------------------------------------- bounded cost in systems
def test_bootstrap_validation_needs_a_resample_per_tail():
    metric, human = _bootstrap_data(1)
    with pytest.raises(ValueError, match=r"n_resamples must be >= 40 for a 0.95 percentile interval"):
        delta_confidence_interval(metric, human, n_resamples=1, rng=0)
    with pytest.raises(ValueError, match=r"n_resamples must be >= 200 for a 0.99"):
        delta_confidence_interval(metric, human, n_resamples=199, confidence_level=0.99, rng=0)
    assert delta_confidence_interval(metric, human, n_resamples=40, rng=0).n_resamples == 40


@pytest.mark.parametrize("call", ["system_pairs", "rsys_delta", "decile_grid", "delta_curve", "bootstrap"])
def test_pair_analyses_refuse_more_systems_than_the_limit(monkeypatch, call):
    monkeypatch.setenv("METAEVAL_MAX_PAIR_SYSTEMS", "30")
    rng = np.random.default_rng(0)
    x, z = rng.normal(size=31), rng.normal(size=31)
    run = {
        "system_pairs": lambda: system_pairs(x, z),
        "rsys_delta": lambda: rsys_delta(x, z),
        "decile_grid": lambda: decile_grid(x, z),
        "delta_curve": lambda: delta_curve(x, z),
        "bootstrap": lambda: delta_confidence_interval(rng.normal(size=(31, 3)), rng.normal(size=(31, 3)),
                                                      n_resamples=40, rng=0),
    }[call]
    with pytest.raises(ValueError, match=r"31 systems make 465 system pairs.*at most 30 systems "
                                         r"\(METAEVAL_MAX_PAIR_SYSTEMS\)"):
        run()
    # NaN systems are dropped before the count: 30 usable systems pass.
    x[0] = np.nan
    if call != "bootstrap":
        run()


@pytest.mark.parametrize("raw", ["inf", "nan", "0", "1", "-5", "2.5", "many"])
def test_pair_system_limit_must_be_a_finite_count(monkeypatch, raw):
    monkeypatch.setenv("METAEVAL_MAX_PAIR_SYSTEMS", raw)
    with pytest.raises(ValueError, match="METAEVAL_MAX_PAIR_SYSTEMS must be a whole number of systems >= 2"):
        rsys_delta([1.0, 2.0], [1.0, 2.0])


def test_pair_system_limit_default_and_override(monkeypatch):
    from metaeval_core.stats.pairs import MAX_PAIR_SYSTEMS, max_pair_systems

    monkeypatch.delenv("METAEVAL_MAX_PAIR_SYSTEMS", raising=False)
    assert max_pair_systems() == MAX_PAIR_SYSTEMS == 1_000
    monkeypatch.setenv("METAEVAL_MAX_PAIR_SYSTEMS", "5000")
    assert max_pair_systems() == 5_000


def test_delta_bootstrap_pair_budget_keeps_results(monkeypatch):
    """The per-batch pair budget only changes how resamples are grouped, never a value."""
    import metaeval_core.stats.pairs as module

    metric, human = _bootstrap_data(4)
    expected = delta_confidence_interval(metric, human, method="boot-both", n_resamples=60, rng=5, upper=0.5)
    monkeypatch.setattr(module, "_PAIR_BUDGET", 1)  # one resample at a time
    got = delta_confidence_interval(metric, human, method="boot-both", n_resamples=60, rng=5, upper=0.5)
    np.testing.assert_array_equal(got.distribution, expected.distribution)
    np.testing.assert_array_equal(got.pairs_per_resample, expected.pairs_per_resample)
