"""Exact ties in averaged judgments (docs/methods.md sec. 15): integer grids and rational-arithmetic oracles."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from metaeval_core.data.dataset import Dataset, Measure
from metaeval_core.stats.correlation import correlate, correlate_matrices
from metaeval_core.stats.exact import exact_matrix, exact_system_means, integer_grid
from metaeval_core.stats.resampling import _draw_bootstrap_indices, dataset_confidence_interval


def rated_dataset(seed: int, *, n_systems=8, n_inputs=12, n_raters=3, missing=0.0) -> Dataset:
    """Systems x inputs rated 1-5 by a few raters (some ratings missing), and a continuous metric."""
    rng = np.random.default_rng(seed)
    quality = rng.normal(size=(n_systems, 1)) + 0.5 * rng.normal(size=(n_systems, n_inputs))
    ratings = np.clip(np.rint(3 + quality + rng.normal(0, 0.8, (n_raters, n_systems, n_inputs))), 1, 5)
    if missing:
        ratings[rng.random(ratings.shape) < missing] = np.nan
        ratings[0][np.isnan(ratings).all(axis=0)] = 3.0  # every cell keeps one rating
    metric = quality + rng.normal(0, 1, (n_systems, n_inputs))
    measures = {
        "human": Measure.from_annotators("human", "human", ratings),
        "metric": Measure("metric", "metric", metric),
    }
    systems = tuple(f"s{i}" for i in range(n_systems))
    inputs = tuple(f"d{j}" for j in range(n_inputs))
    return Dataset(id=f"rated-{seed}", systems=systems, inputs=inputs, measures=measures)


def fraction_means(ratings: np.ndarray, systems=None, inputs=None) -> list[Fraction]:
    """Each system's mean over inputs of its cell means (each cell: mean of its ratings), exactly."""
    n_systems = ratings.shape[1]
    systems = range(n_systems) if systems is None else systems
    out = []
    for i in systems:
        cells = []
        for j in (range(ratings.shape[2]) if inputs is None else inputs):
            given = [int(r) for r in ratings[:, i, j] if np.isfinite(r)]
            cells.append(Fraction(sum(given), len(given)))
        out.append(sum(cells, Fraction(0)) / len(cells))
    return out


def test_the_float_problem_is_real():
    """(5, 13/3) and (14/3, 14/3) have the same exact total; their float sums differ."""
    a = np.array([5.0, 13 / 3])
    b = np.array([14 / 3, 14 / 3])
    assert a.sum() != b.sum()
    grid = integer_grid(Measure("h", "human", np.array([[5.0, 13 / 3], [14 / 3, 14 / 3]])))
    assert grid is not None and grid.denominator == 3
    assert grid.integers.sum(axis=1)[0] == grid.integers.sum(axis=1)[1]


@pytest.mark.parametrize(
    "scores, denominator",
    [
        ([[1.0, 2.0], [3.0, 4.0]], 1),
        ([[1.5, 2.0], [3.5, np.nan]], 2),
        ([[11 / 3, 2.0], [13 / 3, 4.0]], 3),
        ([[0.1, 0.2], [0.7, 1.3]], 10),
        ([[1.25, 2.0], [1 / 3, 4.0]], 12),
    ],
)
def test_integer_grid_finds_the_smallest_denominator(scores, denominator):
    grid = integer_grid(Measure("h", "human", np.array(scores)))
    assert grid is not None and grid.denominator == denominator
    scores = np.array(scores)
    finite = np.isfinite(scores)
    np.testing.assert_array_equal(grid.integers[finite], np.rint(scores[finite] * denominator))
    assert np.isnan(grid.integers[~finite]).all()


@pytest.mark.parametrize(
    "scores",
    [
        [[0.123456789, 2.0], [3.0, 4.0]],  # continuous
        [[float(np.float32(1 / 3)), 2.0], [3.0, 4.0]],  # a float32 round trip is off the grid
        [[1 / 61, 2.0], [3.0, 4.0]],  # denominators beyond 60 are not searched
        [[1e16, 2.0], [3.0, 4.0]],  # sums could leave the exact float range
        [[np.nan, np.nan], [np.nan, np.nan]],
    ],
)
def test_scores_off_any_grid_are_left_as_floats(scores):
    assert integer_grid(Measure("h", "human", np.array(scores))) is None


def test_annotator_counts_set_the_denominator():
    ratings = np.array([[[1.0, 2.0]], [[2.0, np.nan]], [[4.0, np.nan]]])  # cells rated 3 and 1 times
    grid = integer_grid(Measure.from_annotators("h", "human", ratings))
    assert grid.denominator == 3  # lcm(3, 1)
    np.testing.assert_array_equal(grid.integers, [[7.0, 6.0]])
    with pytest.raises(TypeError, match="measure must be a Measure"):
        integer_grid(np.zeros((2, 2)))


def test_metrics_on_a_grid_get_exact_ties_too():
    """An LLM judge's scores are means of integer ratings as much as a human's (docs/methods.md sec. 15.2)."""
    data = rated_dataset(0)
    np.testing.assert_array_equal(exact_matrix(data, "metric"), data.matrix("metric"))  # continuous: floats
    grid = integer_grid(data.measure("human"))
    np.testing.assert_array_equal(exact_matrix(data, "human") / grid.denominator, data.matrix("human"))
    judge = Measure("judge", "metric", data.measure("human").scores)
    assert integer_grid(judge).denominator == grid.denominator


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("missing", [0.0, 0.3])
def test_system_level_equals_scipy_on_rational_means(seed, missing):
    data = rated_dataset(seed, n_systems=10, n_inputs=6, missing=missing)
    ratings = data.measure("human").annotators
    exact = [float(m) for m in fraction_means(ratings)]  # float() of a Fraction is correctly rounded
    np.testing.assert_array_equal(exact_system_means(data, "human"), exact)
    x = data.matrix("metric").mean(axis=1)
    for coefficient, scipy_fn in (("kendall", stats.kendalltau), ("spearman", stats.spearmanr)):
        ours = correlate(data, "metric", "human", level="system", coefficient=coefficient).estimate
        assert ours == pytest.approx(scipy_fn(x, exact)[0], abs=1e-12)


def test_bootstrap_resamples_keep_exact_ties():
    """Every BOOT-BOTH resample's Kendall tau equals scipy's on the resample's rational human means."""
    data = rated_dataset(3, n_systems=8, n_inputs=9)
    ratings = data.measure("human").annotators
    n_resamples = 150
    ci = dataset_confidence_interval(data, "metric", "human", level="system", coefficient="kendall",
                                     method="boot-both", n_resamples=n_resamples, rng=7, return_distribution=True)
    indices = _draw_bootstrap_indices(np.random.default_rng(7), "boot-both", n_resamples, 8, 9)
    metric = data.matrix("metric")
    naive_differs = 0
    for s in range(n_resamples):
        systems, inputs = indices.systems[s], indices.metric_inputs[s]
        x = metric[np.ix_(systems, inputs)].mean(axis=1)
        z = [float(m) for m in fraction_means(ratings, systems, inputs)]
        expected = stats.kendalltau(x, z)[0]
        assert ci.distribution[s] == pytest.approx(expected, abs=1e-12, nan_ok=True), s
        naive = correlate_matrices(metric[np.ix_(systems, inputs)], data.matrix("human")[np.ix_(systems, inputs)],
                                   level="system", coefficient="kendall").estimate
        naive_differs += not np.isclose(naive, expected, atol=1e-12, equal_nan=True)
    # The float means of the averaged scores do break ties on some resamples: the grid matters here.
    assert naive_differs > 0


# -- continuous scores stay floats (issue 23): a grid only where the scores provably are means of integers --
def continuous_dataset(human: np.ndarray, metric: np.ndarray) -> Dataset:
    n_systems, n_inputs = human.shape
    return Dataset(id="continuous", systems=tuple(f"s{i}" for i in range(n_systems)),
                   inputs=tuple(f"d{j}" for j in range(n_inputs)),
                   measures={"human": Measure("human", "human", human), "metric": Measure("metric", "metric", metric)})


def loop_accuracy(x, z, *, calibrate: bool) -> float:
    """Pairwise accuracy with ties (acc_eq), optionally at the best metric tie threshold, by a loop."""
    pairs = [(x[i] - x[j], z[i] - z[j]) for i in range(len(x)) for j in range(i)]
    thresholds = sorted({0.0} | {abs(dx) for dx, _ in pairs}) if calibrate else [0.0]
    best = -1.0
    for eps in thresholds:
        agree = sum((abs(dx) <= eps and dz == 0) or (abs(dx) > eps and dz != 0 and (dx > 0) == (dz > 0))
                    for dx, dz in pairs)
        best = max(best, agree / len(pairs))
    return best


def assert_floats_as_they_are(human: np.ndarray, metric: np.ndarray) -> None:
    """Every coefficient on the dataset equals the reference computed on the raw floats."""
    data = continuous_dataset(human, metric)
    # The floats as the dataset holds them (its column selection changes the memory layout, and so the
    # summation order of ill-conditioned sums): the grid must change nothing here.
    floats = data.matrix("metric"), data.matrix("human")
    x, z = metric.mean(axis=1), human.mean(axis=1)
    scipy_fns = {"pearson": stats.pearsonr, "spearman": stats.spearmanr, "kendall": stats.kendalltau}
    # Pearson on scores with 4 significant digits left after a large shift is ill-conditioned: two correct
    # implementations differ there, so scipy is the reference only where the data keep their digits.
    conditioned = all(np.ptp(a) > 1e-4 * np.abs(a).max() for a in (x, z))
    for coefficient, fn in scipy_fns.items():
        ours = correlate(data, "metric", "human", level="system", coefficient=coefficient).estimate
        raw = correlate_matrices(*floats, level="system", coefficient=coefficient).estimate
        assert ours == pytest.approx(raw, rel=1e-12, abs=1e-12, nan_ok=True), coefficient
        if coefficient != "pearson" or conditioned:
            theirs = np.nan if np.ptp(z) == 0 or np.ptp(x) == 0 else fn(x, z)[0]
            tolerance = 1e-8 if coefficient == "pearson" else 1e-12  # float rounding of the centred sums
            assert ours == pytest.approx(theirs, abs=tolerance, nan_ok=True), coefficient
    for coefficient, calibrate in (("pairwise-accuracy", False), ("tie-calibrated-accuracy", True)):
        ours = correlate(data, "metric", "human", level="system", coefficient=coefficient).estimate
        assert ours == pytest.approx(loop_accuracy(x, z, calibrate=calibrate), abs=1e-12), coefficient
    for level in ("input", "global"):
        for coefficient in ("pearson", "spearman", "kendall", "pairwise-accuracy", "tie-calibrated-accuracy"):
            ours = correlate(data, "metric", "human", level=level, coefficient=coefficient).estimate
            raw = correlate_matrices(*floats, level=level, coefficient=coefficient).estimate
            assert ours == pytest.approx(raw, rel=1e-12, abs=1e-12, nan_ok=True), (level, coefficient)


@pytest.mark.parametrize("human", [
    1e9 + np.arange(12).reshape(4, 3) / 100,  # a grid with an absolute tolerance snapped these to 1e9
    (1 + np.arange(12).reshape(4, 3)) * 1e-10,  # ... and these to 0
    (1 + np.arange(12).reshape(4, 3)) * 1e-300,
    -1e5 + np.arange(12).reshape(4, 3) * 1e-7,
])
def test_continuous_scores_near_a_grid_are_not_snapped(human):
    metric = np.arange(12.0).reshape(4, 3)
    assert integer_grid(Measure("h", "human", human)) is None
    assert_floats_as_they_are(human, metric)
    data = continuous_dataset(human, metric)
    assert correlate(data, "metric", "human", level="system", coefficient="kendall").estimate == 1.0
    assert correlate(data, "metric", "human", level="system", coefficient="pearson").estimate == pytest.approx(1.0)
    assert correlate(data, "metric", "human", level="system", coefficient="pairwise-accuracy").estimate == 1.0


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1),
       scale=st.sampled_from([1e-300, 1e-12, 1e-3, 1.0, 7.0, 1e6, 1e12]),
       shift=st.sampled_from([0.0, 1.0, -3.5, 1e5, 1e9]),
       n_systems=st.integers(3, 9), n_inputs=st.integers(2, 6),
       coarse=st.booleans())
def test_scaled_and_shifted_continuous_scores_keep_every_coefficient(seed, scale, shift, n_systems, n_inputs, coarse):
    rng = np.random.default_rng(seed)
    base = rng.random((n_systems, n_inputs))
    if coarse:  # continuous but with repeated values: ties that are real float ties must stay
        base = np.round(base, 1) + rng.random() * 1e-3
    human = base * scale + shift
    metric = rng.normal(size=(n_systems, n_inputs)) * scale + shift
    assert_floats_as_they_are(human, metric)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_raters=st.integers(2, 7), digits=st.sampled_from([None, 15]))
def test_genuine_rational_means_keep_exact_ties_on_both_sides(seed, n_raters, digits):
    """Means of integer ratings (human and an LLM-judge metric), also when written as text with 15 significant
    digits, are put on their grid: system-level coefficients equal scipy's on the exact rational means."""
    rng = np.random.default_rng(seed)
    shape = (n_raters, 7, 5)
    human_ratings = rng.integers(1, 4, shape).astype(float)
    judge_ratings = rng.integers(1, 4, shape).astype(float)
    spell = (lambda a: a) if digits is None else np.vectorize(lambda v: float(f"{v:.{digits}g}"))
    human, judge = spell(human_ratings.mean(axis=0)), spell(judge_ratings.mean(axis=0))
    data = continuous_dataset(human, judge)
    assert integer_grid(data.measure("human")) is not None and integer_grid(data.measure("metric")) is not None
    x = [float(m) for m in fraction_means(judge_ratings)]
    z = [float(m) for m in fraction_means(human_ratings)]
    for coefficient, fn in (("kendall", stats.kendalltau), ("spearman", stats.spearmanr)):
        ours = correlate(data, "metric", "human", level="system", coefficient=coefficient).estimate
        assert ours == pytest.approx(fn(x, z)[0], abs=1e-12, nan_ok=True), coefficient
    ours = correlate(data, "metric", "human", level="system", coefficient="pairwise-accuracy").estimate
    assert ours == pytest.approx(loop_accuracy(np.array(x), np.array(z), calibrate=False), abs=1e-12)


def test_rounding_to_the_grid_merges_only_float_spellings():
    """Two floats one ulp apart that spell the same rational share an integer; two that differ by more do not."""
    third = 1 / 3
    grid = integer_grid(Measure("h", "human", np.array([[third, np.nextafter(third, 1)], [2.0, 1.0]])))
    assert grid is not None and grid.denominator == 3 and grid.integers[0, 0] == grid.integers[0, 1] == 1
    assert integer_grid(Measure("h", "human", np.array([[1.0, 1.0 + 1e-12], [2.0, 3.0]]))) is None
    assert integer_grid(Measure("h", "human", np.array([[0.0, 1e-300], [2.0, 3.0]]))) is None
    assert integer_grid(Measure("h", "human", np.array([[2.0**41, 1.0], [2.0, 3.0]]))) is None  # not small


# -- metrics on a grid in analyses that work in the metric's units (rSYS-Delta intervals, improvement) ---------
def judged_metric_dataset() -> Dataset:
    """A human measure and an LLM-judge-like metric (means of 3 integer ratings), with two systems whose metric
    means are equal rationals (5, 13/3) and (14/3, 14/3) but differ as float sums."""
    data = rated_dataset(5, n_systems=8, n_inputs=2)
    judge = np.random.default_rng(9).integers(1, 6, (3, 8, 2)).mean(axis=0)
    judge[0], judge[1] = [5.0, 13 / 3], [14 / 3, 14 / 3]
    measures = {**data.measures, "judge": Measure("judge", "metric", judge)}
    return Dataset(id="judged", systems=data.systems, inputs=data.inputs, measures=measures)


def test_delta_interval_and_improvement_take_a_grid_metric_in_its_units():
    from metaeval_core.analyses.practice import improvement_probability
    from metaeval_core.stats.pairs import dataset_delta_confidence_interval, dataset_means, dataset_rsys_delta

    data = judged_metric_dataset()
    assert integer_grid(data.measure("judge")).denominator == 3
    x, _, _ = dataset_means(data, "judge", "human")
    assert x[0] == x[1]  # 28/6 both: the exact tie, in the metric's units
    gaps = np.abs(x[:, None] - x[None, :])
    upper = float(gaps.max())
    ci = dataset_delta_confidence_interval(data, "judge", "human", upper=upper, method="boot-systems",
                                           n_resamples=50, rng=0)
    # Thresholds are in the metric's units: the largest gap selects every pair (on L x scores it would not).
    assert ci.point.n_pairs == ci.point.total_pairs == 28
    assert ci.estimate == dataset_rsys_delta(data, "judge", "human", upper=upper).estimate
    closest = float(np.sort(gaps[np.triu_indices(8, 1)])[5])
    assert dataset_delta_confidence_interval(data, "judge", "human", upper=closest, n_resamples=50, rng=0
                                             ).point.n_pairs == dataset_rsys_delta(data, "judge", "human",
                                                                                   upper=closest).n_pairs
    improvement = improvement_probability(data, "judge", "human", delta=upper / 2, n_resamples=50, rng=0)
    # The exact metric tie says nothing about which system is better: 27 usable pairs (float means split it: 28).
    assert improvement.total_pairs == 27 and 0 <= improvement.probability <= 1


GRID_AT_SCALE = """
import resource
import numpy as np
from metaeval_core.data.dataset import Measure
from metaeval_core.stats.exact import integer_grid
rng = np.random.default_rng(0)
scores = rng.integers(3, 16, (2000, 10000)) / 3.0  # means of 3 ratings over 20M cells (160 MB)
scores[rng.random(scores.shape) < 0.01] = np.nan
before = _peak_mb()  # this process's own high-water mark (tests/core/capped.py)
grid = integer_grid(Measure("h", "human", scores))
result = {"denominator": grid.denominator, "before_mb": before}
"""


@pytest.mark.slow
def test_finding_a_grid_on_millions_of_cells_adds_only_the_integers():
    """The check runs in 1M-cell chunks and rounds in place: 20M cells add the 160 MB integer matrix, not the
    ~900 MB (and 25 s) of whole-array temporaries and a sort of every value."""
    from tests.core.capped import run_capped

    result = run_capped(GRID_AT_SCALE, cap=int(1.5 * 2**30), timeout=300)
    assert result["denominator"] == 3
    assert result["peak_mb"] - result["before_mb"] < 300
