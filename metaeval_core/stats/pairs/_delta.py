"""Realistic system pairs: rSYS-Delta(l, u), its decile grid and curve (the interval: pairs.intervals).

The standard system-level Kendall tau counts every one of the ``N (N - 1) / 2``
system pairs. rSYS-Delta(l, u) keeps only the pairs whose metric difference
``|dx|`` lies in ``[l, u]`` (metric units), so it measures how well the metric
orders systems that are as close as those researchers actually compare.

References: docs/methods.md sec. 1 and 4; Deutsch, Dror & Roth (NAACL 2022) sec. 4, Fig. 6 and 10.
"""

from __future__ import annotations

import math
import os

from dataclasses import dataclass
from typing import Literal, get_args

import numpy as np

from metaeval_core._checks import check_choice, check_int
from metaeval_core.wording import finite_or_none
from metaeval_core.data.checks import check_human
from metaeval_core.stats.coefficients import kendall_counts_from_signs, tau_b_from_counts
from metaeval_core.stats.correlation import correlation_inputs
from metaeval_core.stats.exact import exact_system_means
from metaeval_core._frames import ToFrame
from metaeval_core.data.dataset import Dataset, Pool, POOLS

DeltaMethod = Literal["boot-inputs", "boot-systems", "boot-both"]
DELTA_METHODS: tuple[str, ...] = get_args(DeltaMethod)
N_DECILES = 10

# Elements (resamples x systems x inputs) gathered at once by the resampling kernels.
_GATHER_BUDGET = 4_000_000
# System pairs (resamples x pairs) held at once by the bootstrap of rSYS-Delta: about 4 million pairs keep
# its per-batch arrays (dx, dz, signs, selection) near 100 MB whatever the number of systems.
_PAIR_BUDGET = 4_000_000

# The number of pairs is quadratic in systems (10,000 systems make 50 million pairs, several GB of arrays), so
# every function that forms the pairs refuses more systems than this (a deployment may set another bound).
# 1,000 systems (499,500 pairs) is far beyond any built-in dataset (at most a few dozen systems) and keeps the
# decile grid under a second and ~250 MB, and a 200-resample bootstrap of rSYS-Delta near 10 s
# (benchmarks/bench_hostile.py).
MAX_PAIR_SYSTEMS = 1_000
PAIR_SYSTEMS_VARIABLE = "METAEVAL_MAX_PAIR_SYSTEMS"


def max_pair_systems(environ=None) -> int:
    """The largest number of systems a pair analysis accepts: ``METAEVAL_MAX_PAIR_SYSTEMS`` or 1,000.

    A value that is not a finite positive integer is a configuration error (ValueError naming the variable).
    """
    environ = os.environ if environ is None else environ
    raw = str(environ.get(PAIR_SYSTEMS_VARIABLE, "")).strip()
    if not raw:
        return MAX_PAIR_SYSTEMS
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not math.isfinite(value) or value < 2 or value != int(value):
        raise ValueError(f"{PAIR_SYSTEMS_VARIABLE} must be a whole number of systems >= 2; got {raw!r}")
    return int(value)


def check_pair_systems(n_systems: int) -> None:
    """ValueError when ``n_systems`` systems exceed the pair-analysis limit (the message names it)."""
    limit = max_pair_systems()
    if n_systems > limit:
        raise ValueError(
            f"{n_systems:,} systems make {n_systems * (n_systems - 1) // 2:,} system pairs; pair analyses "
            f"(rSYS-Delta, the decile grid, the pair table) accept at most {limit:,} systems "
            f"({PAIR_SYSTEMS_VARIABLE}); select fewer systems"
        )

# --------------------------------------------------------------------------------------------
# Pairs and rSYS-Delta
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SystemPairs:
    """Every pair ``i < i'`` of systems that have both a metric and a human mean.

    ``first`` and ``second`` index the original system order; ``dx = x[first] - x[second]``
    and ``dz = z[first] - z[second]``. ``n_systems`` counts the systems used and
    ``dropped_systems`` those left out because a mean was NaN.
    """

    first: np.ndarray
    second: np.ndarray
    dx: np.ndarray
    dz: np.ndarray
    n_systems: int
    dropped_systems: int

    @property
    def n_pairs(self) -> int:
        return int(self.dx.size)

    @property
    def abs_dx(self) -> np.ndarray:
        return np.abs(self.dx)


@dataclass(frozen=True)
class DeltaResult(ToFrame):
    """rSYS-Delta(l, u): Kendall tau-b over the system pairs with ``lower <= |dx| <= upper``.

    ``estimate`` is NaN when undefined (no selected pair, or ``P + Q + T = 0`` or
    ``P + Q + U = 0``). ``n_pairs`` pairs were selected out of ``total_pairs``
    (``share_of_pairs = n_pairs / total_pairs``); ``concordant`` (P), ``discordant`` (Q),
    ``ties_metric`` (T, tied in the metric only), ``ties_human`` (U, tied in the human only)
    and ``ties_both`` (tied in both; counted in none) partition the selected pairs.

    References: docs/methods.md sec. 4; NAACL 2022 sec. 4.2.
    """

    estimate: float
    lower: float
    upper: float
    n_pairs: int
    share_of_pairs: float
    total_pairs: int
    concordant: int
    discordant: int
    ties_metric: int
    ties_human: int
    ties_both: int = 0
    n_systems: int = 0
    dropped_systems: int = 0

    @property
    def defined(self) -> bool:
        return bool(np.isfinite(self.estimate))

    def to_dict(self) -> dict:
        out = {name: getattr(self, name) for name in self.__dataclass_fields__}
        for key in ("estimate", "lower", "upper", "share_of_pairs"):
            out[key] = finite_or_none(out[key])
        return out


def system_pairs(metric_means, human_means) -> SystemPairs:
    """All system pairs ``i < i'`` with their metric and human differences.

    Systems whose metric or human mean is NaN are dropped (and counted).

    Parameters
    ----------
    metric_means, human_means : array_like, shape (N,)
        Per-system means of the metric (``x_i``) and the human measure (``z_i``).

    Returns
    -------
    SystemPairs

    References
    ----------
    docs/methods.md sec. 4; NAACL 2022 sec. 4.2.
    """
    x, z = _validate_means(metric_means, human_means)
    valid = ~(np.isnan(x) | np.isnan(z))
    kept = np.flatnonzero(valid)
    check_pair_systems(int(kept.size))
    a, b = np.triu_indices(kept.size, 1)
    first, second = kept[a], kept[b]
    return SystemPairs(
        first=first,
        second=second,
        dx=x[first] - x[second],
        dz=z[first] - z[second],
        n_systems=int(kept.size),
        dropped_systems=int(x.size - kept.size),
    )


def _delta_from_pairs(pairs: SystemPairs, lower: float, upper: float) -> DeltaResult:
    adx = pairs.abs_dx
    selected = (adx >= lower) & (adx <= upper)
    sx = np.sign(pairs.dx[selected]).astype(np.int8)
    sz = np.sign(pairs.dz[selected]).astype(np.int8)
    counts = kendall_counts_from_signs(sx, sz)
    n = int(selected.sum())
    p, q, t, u = (int(c) for c in (counts.concordant, counts.discordant, counts.ties_x, counts.ties_z))
    total = pairs.n_pairs
    return DeltaResult(
        estimate=float(tau_b_from_counts(p, q, t, u)),
        lower=float(lower),
        upper=float(upper),
        n_pairs=n,
        share_of_pairs=n / total if total else float("nan"),
        total_pairs=total,
        concordant=p,
        discordant=q,
        ties_metric=t,
        ties_human=u,
        ties_both=n - p - q - t - u,
        n_systems=pairs.n_systems,
        dropped_systems=pairs.dropped_systems,
    )


def rsys_delta(metric_means, human_means, *, lower: float = 0.0, upper: float = np.inf) -> DeltaResult:
    """rSYS-Delta(l, u): Kendall tau-b over the system pairs with ``lower <= |dx| <= upper``.

    With ``lower = 0`` and ``upper = inf`` it is the standard system-level Kendall
    tau-b (equal to ``scipy.stats.kendalltau`` on the means).

    Parameters
    ----------
    metric_means, human_means : array_like, shape (N,)
        Per-system means; systems with a NaN mean are dropped.
    lower, upper : float
        Bounds on ``|dx|`` in the metric's own units, both inclusive; ``0 <= lower <= upper``.

    Returns
    -------
    DeltaResult
        The estimate (NaN if undefined) with the pair counts behind it.

    References
    ----------
    docs/methods.md sec. 1 and 4; Deutsch, Dror & Roth (NAACL 2022) sec. 4.2.
    """
    lower, upper = _validate_bounds(lower, upper)
    return _delta_from_pairs(system_pairs(metric_means, human_means), lower, upper)


def dataset_means(
    dataset: Dataset, metric: str, human: str, *, pool: Pool = "judged", systems: str | None = None
) -> tuple[np.ndarray, np.ndarray, Dataset]:
    """Per-system metric means (over ``pool``) and human means (over the judged inputs).

    Means of integer ratings (human or metric, such as an LLM judge) are equal as floats whenever they are equal
    as rationals (docs/methods.md sec. 15), so exact ties stay ties in the pairs.
    """
    subset, _, _ = _dataset_matrices(dataset, metric, human, pool=pool, systems=systems)
    return exact_system_means(subset, metric, pool=pool, judged_by=human), exact_system_means(subset, human), subset


def _dataset_matrices(dataset: Dataset, metric: str, human: str, *, pool, systems):
    check_choice(pool, "pool", POOLS)
    subset = dataset.select_systems(systems).rated_by(human)
    check_human(subset, human)
    return (subset, *correlation_inputs(subset, metric, human, level="system", pool=pool))


def dataset_rsys_delta(
    dataset: Dataset,
    metric: str,
    human: str,
    *,
    lower: float = 0.0,
    upper: float = np.inf,
    pool: Pool = "judged",
    systems: str | None = None,
) -> DeltaResult:
    """:func:`rsys_delta` of a metric against a human measure on a dataset.

    Parameters
    ----------
    dataset : Dataset
    metric, human : str
        Measure ids; ``human`` must be a human measure.
    lower, upper : float
        Bounds on ``|dx|`` in the metric's units (inclusive).
    pool : {'judged', 'all'}
        The metric's input pool (docs/methods.md sec. 0); the human always uses the judged inputs.
    systems : str, optional
        A system subset such as ``"type=abs"``.

    References
    ----------
    docs/methods.md sec. 4; NAACL 2022 sec. 4.2.
    """
    lower, upper = _validate_bounds(lower, upper)
    x, z, _ = dataset_means(dataset, metric, human, pool=pool, systems=systems)
    return rsys_delta(x, z, lower=lower, upper=upper)


# --------------------------------------------------------------------------------------------
# Decile grid and curve
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class DecileGrid:
    """rSYS-Delta(l, u) on the decile grid of NAACL 2022 Fig. 6 and 10.

    ``thresholds[k-1] = t_k`` (k = 1..10); columns ``upper = t_1..t_10``; rows
    ``lower = 0, t_1..t_9``. ``exists[r, c]`` when ``lower[r] < upper[c]`` and the
    cell holds at least ``min_pairs`` pairs. ``tau`` is NaN and ``n_pairs`` 0 where a
    cell does not exist (``tau`` may also be NaN in an existing cell whose Kendall tau
    is undefined, e.g. all its pairs are tied in the metric). ``pairs_in_range``
    counts the pairs with ``lower <= |dx| <= upper`` for every cell with
    ``lower < upper`` (including those below ``min_pairs``), and ``column_share`` the
    share of all pairs with ``|dx| <= upper``. ``skipped[r]`` counts the pairs a row leaves
    out, ``|dx| < lower[r]``: bounds being inclusive, row ``k`` keeps the pair at ``t_k``, so
    it skips ``k b - 1`` pairs (fewer with ties at ``t_k``), not ``k b``.

    References: docs/methods.md sec. 4; NAACL 2022 Fig. 6 and 10.
    """

    lower: np.ndarray
    upper: np.ndarray
    tau: np.ndarray
    n_pairs: np.ndarray
    min_pairs: int
    thresholds: np.ndarray
    exists: np.ndarray
    pairs_in_range: np.ndarray
    column_share: np.ndarray
    total_pairs: int
    bucket_size: int
    skipped: np.ndarray | None = None

    def rows(self) -> list[dict]:
        """One record per existing cell: lower, upper, tau (None if undefined), n_pairs."""
        out = []
        for r in range(N_DECILES):
            for c in range(N_DECILES):
                if self.exists[r, c]:
                    tau = float(self.tau[r, c])
                    out.append(
                        {
                            "row": r,
                            "column": c,
                            "lower": float(self.lower[r]),
                            "upper": float(self.upper[c]),
                            "tau": finite_or_none(tau),
                            "n_pairs": int(self.n_pairs[r, c]),
                        }
                    )
        return out


def _cumulative_counts(pairs: SystemPairs) -> tuple[np.ndarray, np.ndarray]:
    """Pairs sorted by |dx| and cumulative (P, Q, T, U) counts, with a leading zero row."""
    adx = pairs.abs_dx
    order = np.argsort(adx, kind="stable")
    sx = np.sign(pairs.dx[order])
    sz = np.sign(pairs.dz[order])
    product = sx * sz
    indicators = np.stack([product > 0, product < 0, (sx == 0) & (sz != 0), (sx != 0) & (sz == 0)], axis=1)
    cumulative = np.vstack([np.zeros((1, 4), dtype=np.int64), np.cumsum(indicators, axis=0, dtype=np.int64)])
    return adx[order], cumulative


def _counts_between(sorted_adx: np.ndarray, cumulative: np.ndarray, lower, upper):
    """Pair count and (P, Q, T, U) of the pairs with lower <= |dx| <= upper (broadcasting)."""
    hi = np.searchsorted(sorted_adx, upper, side="right")
    lo = np.searchsorted(sorted_adx, lower, side="left")
    hi, lo = np.broadcast_arrays(hi, lo)
    n = np.maximum(hi - lo, 0)
    counts = np.where((hi >= lo)[..., None], cumulative[hi] - cumulative[lo], 0)
    return n, counts


def closest_count(n_pairs: int, share: float) -> int:
    """How many pairs "the closest ``share`` of the pairs" is: ``min(k b, n_pairs)`` for ``share = k / 10``, with
    the decile grid's bucket ``b = ceil(0.1 * n_pairs)`` (docs/methods.md sec. 4.2).

    The one definition behind every "closest 20%" (the Overview's headline, the Realistic pairs page's quick bands
    and decile columns, the reproduced NAACL number), so they all select the same pairs: on 45 pairs, ``b = 5``
    and the closest 20% are 10 pairs (22%), as in the paper's grid.

    References
    ----------
    docs/methods.md sec. 4.2; Deutsch, Dror & Roth (NAACL 2022) Fig. 6 and 10.
    """
    n_pairs = check_int(n_pairs, "n_pairs", minimum=0)
    k = round(float(share) * N_DECILES)
    if not (1 <= k <= N_DECILES and abs(float(share) * N_DECILES - k) < 1e-9):
        raise ValueError(f"share must be a multiple of 0.1 in [0.1, 1] (a decile column); got {share!r}")
    return min(k * math.ceil(n_pairs * 0.1), n_pairs)  # the paper's script's own expression for b


def closest_upper(abs_dx, share: float) -> float:
    """``u`` of the closest ``share`` of the pairs: the ``|dx|`` of the :func:`closest_count`-th closest pair (NaN
    without pairs). rSYS-Delta(0, u) then holds those pairs, and any tied at ``u``."""
    values = np.sort(np.asarray(abs_dx, dtype=np.float64).ravel())
    if values.size == 0:
        return math.nan
    return float(values[closest_count(values.size, share) - 1])


def decile_thresholds(abs_dx) -> tuple[np.ndarray, int]:
    """``t_1..t_10`` of docs/methods.md sec. 4 and the bucket size ``b = ceil(0.1 * #pairs)``.

    ``t_k`` is the ``|dx|`` at 0-based sorted position ``min(k b, #pairs) - 1``. With
    no pair the thresholds are NaN and ``b = 0``. ``b`` is evaluated exactly as the
    NAACL 2022 authors' script (``plot_heatmaps.py``) does, ``math.ceil(#pairs * 0.1)``
    in floating point, so the grid follows the paper's procedure to the letter (for
    120 pairs ``b = 12``, for 276 pairs ``b = 28``).
    """
    values = np.sort(np.asarray(abs_dx, dtype=np.float64).ravel())
    n = values.size
    if n == 0:
        return np.full(N_DECILES, np.nan), 0
    positions = np.array([closest_count(n, k / N_DECILES) for k in range(1, N_DECILES + 1)]) - 1
    return values[positions], math.ceil(n * 0.1)


def decile_grid(metric_means, human_means, *, min_pairs: int = 5) -> DecileGrid:
    """rSYS-Delta(l, u) on the 10 x 10 decile grid of NAACL 2022 Fig. 6 and 10.

    Sort the pairs by ``|dx|``; ``b = ceil(0.1 * #pairs)``; ``t_k = |dx|`` at 0-based
    sorted position ``min(k b, #pairs) - 1`` for ``k = 1..10``. Columns ``u = t_1..t_10``
    (the 10%..100% of pairs closest in metric score), rows ``l = 0, t_1..t_9``; the cell
    ``(l, u)`` uses the pairs with ``l <= |dx| <= u`` and exists when ``l < u`` and it
    holds at least ``min_pairs`` pairs. When some ``|dx|`` are tied, thresholds may
    repeat and a column may then hold more than its nominal share (``column_share``).

    Parameters
    ----------
    metric_means, human_means : array_like, shape (N,)
        Per-system means; systems with a NaN mean are dropped.
    min_pairs : int, default 5
        Smallest number of pairs for a cell to exist (>= 1).

    Returns
    -------
    DecileGrid

    References
    ----------
    docs/methods.md sec. 4; Deutsch, Dror & Roth (NAACL 2022) sec. 4.2, Fig. 6 and 10.
    """
    min_pairs = check_int(min_pairs, "min_pairs")
    pairs = system_pairs(metric_means, human_means)
    thresholds, b = decile_thresholds(pairs.abs_dx)
    lower = np.concatenate([[0.0], thresholds[:-1]])
    upper = thresholds.copy()
    sorted_adx, cumulative = _cumulative_counts(pairs)
    ordered = lower[:, None] < upper[None, :]
    n, counts = _counts_between(sorted_adx, cumulative, lower[:, None], upper[None, :])
    in_range = np.where(ordered, n, 0).astype(np.int64)
    exists = ordered & (in_range >= min_pairs)
    tau = tau_b_from_counts(counts[..., 0], counts[..., 1], counts[..., 2], counts[..., 3])
    tau = np.where(exists, tau, np.nan)
    total = pairs.n_pairs
    if total:
        share = np.searchsorted(sorted_adx, upper, side="right") / total
    else:
        share = np.full(N_DECILES, np.nan)
    return DecileGrid(
        lower=lower,
        upper=upper,
        tau=tau,
        n_pairs=np.where(exists, in_range, 0).astype(np.int64),
        min_pairs=min_pairs,
        thresholds=thresholds,
        exists=exists,
        pairs_in_range=in_range,
        column_share=np.asarray(share, dtype=np.float64),
        total_pairs=total,
        bucket_size=b,
        skipped=np.searchsorted(sorted_adx, lower, side="left").astype(np.int64) if total
        else np.zeros(N_DECILES, dtype=np.int64),
    )


@dataclass(frozen=True)
class DeltaCurve:
    """rSYS-Delta(0, u) against the share of pairs with ``|dx| <= u`` (for a line plot).

    References: docs/methods.md sec. 4; NAACL 2022 Fig. 6.
    """

    upper: np.ndarray
    share_of_pairs: np.ndarray
    n_pairs: np.ndarray
    tau: np.ndarray
    total_pairs: int


def delta_curve(metric_means, human_means, *, n_points: int | None = None) -> DeltaCurve:
    """rSYS-Delta(0, u) as ``u`` grows, against the share of pairs it covers.

    Parameters
    ----------
    metric_means, human_means : array_like, shape (N,)
    n_points : int, optional
        ``None`` (default): one point per distinct ``|dx|`` value (every possible
        cut). Otherwise cuts at the ``|dx|`` of 0-based sorted position
        ``min(k b, #pairs) - 1`` with ``b = ceil(#pairs / n_points)``, ``k = 1..n_points``
        (duplicate cuts removed); ``n_points = 10`` gives the decile grid's columns, so
        the curve is the grid's first row without ``min_pairs``.

    Returns
    -------
    DeltaCurve
        Undefined points have ``tau`` NaN.

    References
    ----------
    docs/methods.md sec. 4; NAACL 2022 Fig. 6.
    """
    if n_points is not None:
        n_points = check_int(n_points, "n_points")
    pairs = system_pairs(metric_means, human_means)
    sorted_adx, cumulative = _cumulative_counts(pairs)
    total = pairs.n_pairs
    if total == 0:
        empty = np.array([], dtype=np.float64)
        return DeltaCurve(empty, empty, np.array([], dtype=np.int64), empty, 0)
    if n_points is None:
        upper = np.unique(sorted_adx)
    else:
        b = -(-total // n_points)
        positions = np.minimum(np.arange(1, n_points + 1) * b, total) - 1
        upper = np.unique(sorted_adx[positions])
    n, counts = _counts_between(sorted_adx, cumulative, 0.0, upper)
    tau = tau_b_from_counts(counts[:, 0], counts[:, 1], counts[:, 2], counts[:, 3])
    return DeltaCurve(upper, n / total, n.astype(np.int64), tau, total)


# --------------------------------------------------------------------------------------------
# Validation (one helper per rule; messages name the parameter and the rule)
# --------------------------------------------------------------------------------------------
def _validate_means(metric_means, human_means) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(metric_means, dtype=np.float64)
    z = np.asarray(human_means, dtype=np.float64)
    if x.ndim != 1:
        raise ValueError(f"metric_means must be 1-D (one mean per system); got shape {x.shape}")
    if z.ndim != 1:
        raise ValueError(f"human_means must be 1-D (one mean per system); got shape {z.shape}")
    if x.size != z.size:
        raise ValueError(
            f"metric_means and human_means must have one value per system each; got {x.size} and {z.size}"
        )
    if np.isinf(x).any() or np.isinf(z).any():
        raise ValueError("metric_means and human_means must be finite or NaN (missing)")
    return x, z


def _validate_bounds(lower, upper) -> tuple[float, float]:
    try:
        lower = float(lower)
        upper = float(upper)
    except (TypeError, ValueError):
        raise TypeError("lower and upper must be numbers") from None
    if np.isnan(lower) or np.isnan(upper):
        raise ValueError("lower and upper must not be NaN")
    if lower < 0:
        raise ValueError(f"lower must be >= 0 (it bounds |dx|); got {lower}")
    if lower > upper:
        raise ValueError(f"lower must be <= upper; got lower={lower}, upper={upper}")
    return lower, upper


def _validate_matrices(metric, human, pool) -> tuple[np.ndarray, np.ndarray]:
    check_choice(pool, "pool", POOLS)
    x = np.asarray(metric, dtype=np.float64)
    z = np.asarray(human, dtype=np.float64)
    if x.ndim != 2 or z.ndim != 2:
        raise ValueError("metric and human must be 2-D score matrices (systems x inputs)")
    if x.shape[0] != z.shape[0]:
        raise ValueError(f"metric and human must have the same number of systems; got {x.shape[0]} and {z.shape[0]}")
    if x.shape[0] < 2:
        raise ValueError(f"metric and human must have at least 2 systems; got {x.shape[0]}")
    if x.shape[1] < 1 or z.shape[1] < 1:
        raise ValueError("metric and human must have at least 1 input each")
    if pool == "judged" and x.shape[1] != z.shape[1]:
        raise ValueError(
            "with pool='judged' metric and human must share their inputs (same number of columns); "
            f"got {x.shape[1]} and {z.shape[1]} (use pool='all' for a larger metric pool)"
        )
    return x, z
