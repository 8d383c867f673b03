"""Systems from verdicts: win rates, Bradley-Terry with ties (Davidson), judge vs human rankings, close pairs.

When the items name the systems that wrote outputs A and B, a rater's verdicts rank the systems. metaeval
ranks them by **win rate** (wins plus half the ties, over the comparisons a system took part in) or by a
**Bradley-Terry model with ties** in Davidson's (1970) form: ``P(i beats j) = p_i / (p_i + p_j + nu sqrt(p_i
p_j))``, ``P(tie) = nu sqrt(p_i p_j) / (same)``, fitted by maximum likelihood with Davidson's fixed-point
iteration (strengths as log ``p_i``, mean zero). The question the metric seeds ask of metrics, asked of
judges: does the judge rank the systems as the people do? Kendall's tau-b or Pearson's r between the judge's
and the reference's system scores, with a percentile bootstrap over items (the same items for both rankings).
And the analogue of rSYS-Delta: on the system pairs the people find close (head-to-head win rate within
``delta`` of 50%), how often does the judge pick the same winner?

References: docs/methods.md sec. 18.8; Davidson (1970), On extending the Bradley-Terry model to accommodate
ties in paired comparison experiments, JASA 65(329); Bradley & Terry (1952); Deutsch, Dror & Roth (NAACL
2022) (rSYS-Delta on close system pairs).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Sequence, get_args

import numpy as np
from scipy import sparse

from metaeval_core._checks import check_choice
from metaeval_core._frames import ToFrame
from metaeval_core.data.dataset import DatasetError
from metaeval_core.judges import _kernel as kern
from metaeval_core.judges.agreement import _judges, resolve_reference
from metaeval_core.judges.model import A, B, INVALID, NO_MAJORITY, TIE, NoMajority, PairwiseData
from metaeval_core.stats.montecarlo import multiplicities as _counts

RankingMethod = Literal["win-rate", "davidson"]
RANKING_METHODS: tuple[str, ...] = get_args(RankingMethod)
RankCoefficient = Literal["kendall", "pearson"]
RANK_COEFFICIENTS: tuple[str, ...] = get_args(RankCoefficient)
SystemOrder = Literal["original", "swapped", "average"]
SYSTEM_ORDERS: tuple[str, ...] = get_args(SystemOrder)

_MAX_ITER = 2000
# A bootstrap resample's fit starts from the full data's strengths (a few iterations from the answer); one that
# has no finite maximum (a system that always wins) never meets the tolerance and stops here.
_RESAMPLE_MAX_ITER = 200
_TOL = 1e-10
_CORRELATION_ELEMENTS = 4_000_000


class _Pairs:
    """The system pairs the items compare (only those observed, ``u < v``, in (u, v) order) and each item's pair.

    Everything per pair is (..., Q, 3) with Q the pairs observed (at most the items), never (..., S^2, 3): a
    file naming 2,000 systems holds at most as many pairs as items. Per-system sums go through the sparse
    incidence of pairs on systems.
    """

    def __init__(self, sa: np.ndarray, sb: np.ndarray, n_systems: int) -> None:
        known = (sa >= 0) & (sb >= 0) & (sa != sb)
        lo, hi = np.minimum(sa, sb).astype(np.int64), np.maximum(sa, sb).astype(np.int64)
        keys, inverse = np.unique((lo * n_systems + hi)[known], return_inverse=True)
        self.n_systems = n_systems
        self.u, self.v = keys // n_systems, keys % n_systems
        self.of_item = np.full(sa.shape[0], -1, dtype=np.int64)
        self.of_item[known] = inverse
        self.a_is_u = sa < sb
        q = np.arange(keys.size)
        shape = (keys.size, n_systems)
        self._u = sparse.csr_matrix((np.ones(keys.size), (q, self.u)), shape=shape).T.tocsr()
        self._v = sparse.csr_matrix((np.ones(keys.size), (q, self.v)), shape=shape).T.tocsr()

    @property
    def n_pairs(self) -> int:
        return int(self.u.size)

    def per_system(self, at_u: np.ndarray, at_v: np.ndarray) -> np.ndarray:
        """(..., Q) values of each pair's u and v -> (..., S) sums over the pairs each system is in."""
        lead = at_u.shape[:-1]
        rows = int(np.prod(lead, dtype=np.int64))
        flat_u = np.ascontiguousarray(at_u.reshape(rows, -1).T)
        flat_v = np.ascontiguousarray(at_v.reshape(rows, -1).T)
        return np.asarray(self._u @ flat_u + self._v @ flat_v).T.reshape(lead + (self.n_systems,))

    def outcomes(self, verdicts: np.ndarray) -> np.ndarray:
        """(n, O) verdict codes -> (n, 3) per item (u wins, v wins, ties) of its pair, summed over the orders;
        invalid and missing verdicts, and items without a pair, count nowhere."""
        a, b, t = ((verdicts == code).sum(axis=1) for code in (A, B, TIE))
        out = np.stack([np.where(self.a_is_u, a, b), np.where(self.a_is_u, b, a), t], axis=1).astype(np.float64)
        out[self.of_item < 0] = 0.0
        return out

    def columns(self, per_rater: Sequence[np.ndarray]) -> sparse.csr_matrix:
        """(n, 3) outcomes of R raters -> the sparse per-item columns (n, R * Q * 3): item i's counts sit in its
        pair's three columns of each rater's block (3 R numbers per item, whatever the number of systems)."""
        n, q = self.of_item.shape[0], self.n_pairs
        has = np.flatnonzero(self.of_item >= 0)
        rows, cols, values = [], [], []
        for r, outcome in enumerate(per_rater):
            for c in range(3):
                rows.append(has)
                cols.append(r * 3 * q + 3 * self.of_item[has] + c)
                values.append(outcome[has, c])
        return sparse.csr_matrix((np.concatenate(values), (np.concatenate(rows), np.concatenate(cols))),
                                 shape=(n, len(per_rater) * 3 * q))


def _systems(data: PairwiseData) -> tuple[tuple[str, ...], _Pairs]:
    systems = data.systems
    if len(systems) < 2:
        raise DatasetError(f"dataset {data.id!r} does not name the systems of its outputs (at least two): "
                           "system rankings need system_a and system_b")
    index = {s: k for k, s in enumerate(systems)}
    sa = np.array([index.get(s, -1) for s in data.system_a])
    sb = np.array([index.get(s, -1) for s in data.system_b])
    same = int(((sa == sb) & (sa >= 0)).sum())
    if same:
        raise DatasetError(f"dataset {data.id!r}: {same} item(s) compare a system with itself, which says nothing "
                           "about systems; leave their system ids empty")
    return systems, _Pairs(sa, sb, len(systems))


def _bootstrap_sparse(columns: sparse.csr_matrix, shape: tuple[int, ...], statistic, estimate: np.ndarray, *,
                      n_resamples: int, rng, batch: int | None, confidence_level: float) -> kern.Bootstrapped:
    """:func:`metaeval_core.judges._kernel.bootstrap` for sparse per-item columns: the same resampled items
    (``draw_chunks``), sums as one sparse product per block, ``statistic`` on the (b,) + ``shape`` sums."""
    n, width = columns.shape
    by_column = columns.T.tocsr()
    resampled = None
    for sl, idx in kern.draw_chunks("items", rng, n_resamples, n, n + width, batch):
        sums = np.asarray(by_column @ _counts(idx, n).T).T
        values = statistic(sums.reshape((sums.shape[0],) + shape))
        if resampled is None:
            resampled = np.empty((n_resamples,) + values.shape[1:])
        resampled[sl] = values
    low, high, defined = kern.percentile_bounds(resampled, confidence_level)
    return kern.Bootstrapped(estimate, resampled, low, high, defined)


def _full_sums(columns: sparse.csr_matrix, shape: tuple[int, ...]) -> np.ndarray:
    return np.asarray(columns.sum(axis=0)).reshape(shape)


def _win_rates(outcomes: np.ndarray, pairs: _Pairs) -> np.ndarray:
    """(..., Q, 3) pair outcome sums -> (..., S) win rates (wins + ties / 2) / comparisons; NaN when none."""
    total = outcomes.sum(axis=-1)
    wins = pairs.per_system(outcomes[..., 0] + 0.5 * outcomes[..., 2], outcomes[..., 1] + 0.5 * outcomes[..., 2])
    games = pairs.per_system(total, total)
    out = np.full(wins.shape, np.nan)
    np.divide(wins, games, out=out, where=games > 0)
    return out


@dataclass(frozen=True)
class DavidsonFit:
    """Bradley-Terry strengths with ties (Davidson 1970) per leading batch index.

    ``strength`` (..., S) are ``log p_i`` with mean zero over the systems that played (``-inf`` for a system
    that never won nor tied, NaN for one that never played); ``nu`` (...,) the tie parameter (0 when there
    are no ties); ``converged`` whether the iteration met its tolerance within ``max_iter``; ``log_likelihood``
    at the fit.
    """

    strength: np.ndarray
    nu: np.ndarray
    converged: np.ndarray
    log_likelihood: np.ndarray
    iterations: int


def davidson_fit(outcomes: np.ndarray, n_systems: int, *, max_iter: int = _MAX_ITER, tol: float = _TOL) -> DavidsonFit:
    """Maximum-likelihood Davidson strengths from (..., P, 3) pair outcome counts (u wins, v wins, ties), the
    pairs ``u < v`` in ``numpy.triu_indices(n_systems, 1)`` order.

    The fixed point of Davidson (1970) eq. (3.3)-(3.4): ``p_i = (W_i + T_i / 2) / sum_j n_ij (1 + nu/2
    sqrt(p_j / p_i)) / (p_i + p_j + nu sqrt(p_i p_j))`` and ``nu = T / sum_{i<j} n_ij sqrt(p_i p_j) /
    (p_i + p_j + nu sqrt(p_i p_j))``, iterated from equal strengths (vectorised over the leading axes) until
    the largest change of a log-strength and of ``nu`` is below ``tol``, at most ``max_iter`` times (one
    iteration costs the leading size x (pairs + systems); a fit without a finite maximum stops there with
    ``converged`` False).

    References
    ----------
    docs/methods.md sec. 18.8; Davidson (1970) sec. 3.
    """
    outcomes = np.asarray(outcomes, dtype=np.float64)
    first, second = np.triu_indices(n_systems, 1)
    if outcomes.ndim < 2 or outcomes.shape[-2:] != (first.size, 3):
        raise ValueError(f"outcomes must have shape (..., {first.size}, 3) for {n_systems} systems; got "
                         f"{outcomes.shape}")
    return _davidson(outcomes, _Pairs(first, second, n_systems), max_iter=max_iter, tol=tol)


def _davidson(outcomes: np.ndarray, pairs: _Pairs, *, max_iter: int = _MAX_ITER, tol: float = _TOL,
              start: tuple[np.ndarray, np.ndarray] | None = None) -> DavidsonFit:
    """:func:`davidson_fit` on the observed pairs (..., Q, 3), from ``start`` (strengths p and nu) when given.

    Infinite and undefined strengths are part of the answer (a system that never won, one that never played), so
    the arithmetic runs under ``errstate(all='ignore')`` and every such value is handled where it arises."""
    lead = outcomes.shape[:-2]
    u, v = pairs.u, pairs.v
    w_u, w_v, t = outcomes[..., 0], outcomes[..., 1], outcomes[..., 2]
    n_pair = w_u + w_v + t
    with np.errstate(all="ignore"):
        score = pairs.per_system(w_u + 0.5 * t, w_v + 0.5 * t)  # W_i + T_i / 2
        played = pairs.per_system(n_pair, n_pair)
        ties = t.sum(axis=-1)
        p = np.where(played > 0, 1.0, np.nan)
        nu = np.where(ties > 0, 1.0, 0.0)
        if start is not None:
            p0, nu0 = start
            p = np.where((played > 0) & np.isfinite(p0) & (p0 > 0), p0, p)
            nu = np.where((ties > 0) & np.isfinite(nu0) & (nu0 > 0), nu0, nu)
        # rows (leading indices) iterate until each meets the tolerance: a converged row costs nothing more
        rows = int(np.prod(lead, dtype=np.int64))
        p, nu = p.reshape(rows, -1).copy(), nu.reshape(rows).copy()
        flat = [x.reshape(rows, -1) for x in (n_pair, score, played)]
        n_pair_f, score_f, played_f = flat
        ties_f = ties.reshape(rows)
        converged = np.zeros(rows, dtype=bool)
        active = np.arange(rows)
        iterations = 0
        for iterations in range(1, max_iter + 1):
            pa, nua, npa = p[active], nu[active], n_pair_f[active]
            pu, pv = pa[:, u], pa[:, v]
            root = np.sqrt(pu * pv)
            denom = pu + pv + nua[:, None] * root
            term_u = npa * (1.0 + 0.5 * nua[:, None] * np.sqrt(pv / pu)) / denom
            term_v = npa * (1.0 + 0.5 * nua[:, None] * np.sqrt(pu / pv)) / denom
            sums = pairs.per_system(np.nan_to_num(term_u), np.nan_to_num(term_v))
            new_p = np.where(played_f[active] > 0, score_f[active] / sums, np.nan)
            log_p = np.log(new_p)
            finite = np.isfinite(log_p)
            centre = np.where(finite, log_p, 0.0).sum(axis=-1) / np.maximum(finite.sum(axis=-1), 1)
            new_p = np.exp(log_p - centre[:, None])
            pu, pv = new_p[:, u], new_p[:, v]
            root = np.sqrt(pu * pv)
            tie_den = np.nan_to_num(npa * root / (pu + pv + nua[:, None] * root)).sum(axis=-1)
            ties_a = ties_f[active]
            new_nu = np.where(ties_a > 0, ties_a / np.where(tie_den > 0, tie_den, 1.0), 0.0)
            step = np.where(finite, np.log(new_p) - np.log(pa), 0.0)
            change = np.max(np.abs(np.nan_to_num(step, nan=0.0, posinf=np.inf, neginf=np.inf)), axis=-1, initial=0.0)
            change = np.maximum(change, np.abs(new_nu - nua))
            p[active], nu[active] = new_p, new_nu
            done = change < tol
            converged[active[done]] = True
            active = active[~done]
            if not active.size:
                break
        p, nu, converged = p.reshape(lead + (-1,)), nu.reshape(lead), converged.reshape(lead)
        strength = np.log(p)
        pu, pv = p[..., u], p[..., v]
        root = np.sqrt(pu * pv)
        denom = pu + pv + nu[..., None] * root
        terms = (np.where(w_u > 0, w_u * np.log(pu / denom), 0.0) + np.where(w_v > 0, w_v * np.log(pv / denom), 0.0)
                 + np.where(t > 0, t * np.log(nu[..., None] * root / denom), 0.0))
        log_likelihood = np.nansum(terms, axis=-1)
    return DavidsonFit(strength=strength, nu=nu, converged=converged, log_likelihood=log_likelihood,
                       iterations=iterations)


def _scorer(pairs: _Pairs, method: str, full_sums: np.ndarray) -> tuple[np.ndarray, object]:
    """The scores of the full data, and the statistic (..., Q, 3) resampled sums -> (..., S) system scores: a
    Davidson resample starts from the full data's fit and stops after _RESAMPLE_MAX_ITER iterations."""
    if method == "win-rate":
        return _win_rates(full_sums, pairs), lambda sums: _win_rates(sums, pairs)
    full = _davidson(full_sums, pairs)
    start = (np.exp(full.strength), full.nu)
    return full.strength, lambda sums: _davidson(sums, pairs, max_iter=_RESAMPLE_MAX_ITER, start=start).strength


def _price(what: str, method: str, pairs: _Pairs, n_items: int, n_raters: int, n_resamples: int, *,
           coefficient: str | None = None) -> None:
    """The cost of a system analysis of ``n_raters`` rankings over ``n_resamples`` resamples, refused when over
    budget. Per resample: the item weights and sparse sums (items x raters), the scores (win rates: raters x
    (pairs + systems); Davidson: times up to _RESAMPLE_MAX_ITER iterations of ~20 operations), and Kendall's
    tau over all system pairs (raters x systems^2 / 2 signs)."""
    s, q = pairs.n_systems, max(pairs.n_pairs, 1)
    per_score = n_raters * (q + s) * (20 * _RESAMPLE_MAX_ITER if method == "davidson" else 4)
    per_resample = 2 * n_items + 3 * n_raters * n_items / max(n_items, 1) * n_items + per_score
    if coefficient == "kendall":
        per_resample += 6 * n_raters * s * (s - 1) / 2
    fits = int(kern.MAX_OPERATIONS // per_resample) - 1
    options = [f"n_resamples={fits:,}"] if fits >= 40 else []
    if method == "davidson":
        options.append("the win rate instead of Davidson")
    if coefficient == "kendall":
        options.append("Pearson instead of Kendall")
    options.append("fewer judges or one pair set" if n_raters > 2 else "one pair set or a subset of the items")
    kern.check_cost(f"{what} on {s:,} systems ({pairs.n_pairs:,} system pairs, {n_items:,} items, {n_raters:,} "
                f"ranking(s), {n_resamples:,} resamples)", (n_resamples + 1) * per_resample,
                "lighter: " + ", ".join(options))


@dataclass(frozen=True)
class SystemRanking(ToFrame):
    """Systems scored from one rater's verdicts (or the reference), best first, with bootstrap intervals.

    ``score`` is the win rate or the Davidson log-strength (``method``); ``wins``, ``losses``, ``ties`` and
    ``n_invalid`` count the verdicts on items naming the system; ``converged`` is False when Davidson's
    iteration did not settle (no finite maximum: e.g. a system that only ever wins, or one that never
    wins nor ties, has an infinite strength; its rank is still right); ``nu`` is Davidson's tie parameter (NaN for
    win rates).
    """

    rater: str
    method: str
    order: str
    systems: tuple[str, ...]
    score: np.ndarray
    low: np.ndarray
    high: np.ndarray
    wins: np.ndarray
    losses: np.ndarray
    ties: np.ndarray
    n_invalid: int
    nu: float
    confidence_level: float
    n_resamples: int
    converged: bool = True

    def to_records(self) -> list[dict]:
        return [{"rater": self.rater, "method": self.method, "order": self.order, "rank": k + 1, "system": s,
                 "score": kern.num(self.score[k]), "low": kern.num(self.low[k]), "high": kern.num(self.high[k]),
                 "wins": int(self.wins[k]), "losses": int(self.losses[k]), "ties": int(self.ties[k])}
                for k, s in enumerate(self.systems)]


def _rater_verdicts(data: PairwiseData, rater: str, order: str, no_majority: str) -> tuple[np.ndarray, str]:
    """(n, O) verdict codes of a rater (or the reference: 'auto', 'majority', 'gold') in the orders read."""
    if rater in ("auto", "majority", "gold"):
        ref, what = resolve_reference(data, rater, no_majority=no_majority)
        return ref[:, None], what
    v = data.verdicts[:, data.rater_index(rater), :]
    return v[:, list(kern.order_slots(order))], rater


def _check_system_args(data, method, order, no_majority):
    if not isinstance(data, PairwiseData):
        raise TypeError(f"data must be a PairwiseData (from load_pairwise); got {type(data).__name__}")
    check_choice(method, "method", RANKING_METHODS)
    check_choice(order, "order", SYSTEM_ORDERS)
    check_choice(no_majority, "no_majority", NO_MAJORITY)


def system_ranking(
    data: PairwiseData,
    rater: str = "auto",
    *,
    method: RankingMethod = "win-rate",
    order: SystemOrder = "original",
    no_majority: NoMajority = "tie",
    confidence_level: float = 0.95,
    n_resamples: int = 1000,
    rng: np.random.Generator | int | None = None,
    batch: int | None = None,
) -> SystemRanking:
    """Rank the systems by one rater's verdicts (``'auto'``/``'majority'``/``'gold'``: the reference).

    Win rate: ``(wins + ties / 2) / comparisons``; Davidson: maximum-likelihood log-strengths of the
    Bradley-Terry model with ties (:func:`davidson_fit`). Invalid verdicts count nowhere (``n_invalid``
    says how many); with ``order='average'`` a judge's verdicts in both orders all count. Intervals: percentile
    bootstrap over items.

    References
    ----------
    docs/methods.md sec. 18.8; Davidson (1970); Bradley & Terry (1952).
    """
    _check_system_args(data, method, order, no_majority)
    level, k, batch = kern.check_resampling(confidence_level, n_resamples, batch)
    systems, pairs = _systems(data)
    verdicts, what = _rater_verdicts(data, rater, order, no_majority)
    _price("the system ranking", method, pairs, data.n_items, 1, k)
    per_item = pairs.outcomes(verdicts)
    columns = pairs.columns([per_item])
    shape = (pairs.n_pairs, 3)
    total = _full_sums(columns, shape)
    estimate, statistic = _scorer(pairs, method, total)
    boot = _bootstrap_sparse(columns, shape, statistic, estimate, n_resamples=k, rng=kern.seed_of(rng), batch=batch,
                             confidence_level=level)
    wins = pairs.per_system(total[:, 0], total[:, 1])
    losses = pairs.per_system(total[:, 1], total[:, 0])
    ties = pairs.per_system(total[:, 2], total[:, 2])
    rank = sorted(range(len(systems)), key=lambda s: (not np.isfinite(boot.estimate[s]), -np.nan_to_num(
        boot.estimate[s], nan=-np.inf, neginf=-1e300), s))
    fit = _davidson(total, pairs) if method == "davidson" else None
    nu = float(fit.nu) if fit is not None else float("nan")
    converged = bool(fit.converged) if fit is not None else True
    return SystemRanking(rater=what, method=method, order=order, systems=tuple(systems[s] for s in rank),
                         score=boot.estimate[rank], low=boot.low[rank], high=boot.high[rank], wins=wins[rank],
                         losses=losses[rank], ties=ties[rank], n_invalid=int((verdicts == INVALID).sum()), nu=nu,
                         converged=converged,
                         confidence_level=level, n_resamples=k)


def _correlation(x: np.ndarray, y: np.ndarray, coefficient: str) -> np.ndarray:
    """Kendall tau-b or Pearson r over the last axis of (..., S) arrays, vectorised; NaN when undefined.

    Systems undefined on either side (NaN; for Pearson also infinite) are left out of that row. Kendall
    compares signs of all system pairs, ``tau_b = sum s_x s_y / sqrt(sum s_x^2 sum s_y^2)`` (ties count 0).
    """
    if coefficient == "pearson":
        ok = np.isfinite(x) & np.isfinite(y)
        n = ok.sum(axis=-1)
        xs, ys = np.where(ok, x, 0.0), np.where(ok, y, 0.0)
        with np.errstate(invalid="ignore", divide="ignore"):
            mx = xs.sum(axis=-1, keepdims=True) / n[..., None]
            my = ys.sum(axis=-1, keepdims=True) / n[..., None]
            dx, dy = np.where(ok, x - mx, 0.0), np.where(ok, y - my, 0.0)
            sxy, sxx, syy = (dx * dy).sum(-1), (dx * dx).sum(-1), (dy * dy).sum(-1)
        out = np.full(sxy.shape, np.nan)
        np.divide(sxy, np.sqrt(sxx * syy), out=out, where=(sxx > 0) & (syy > 0) & (n >= 2))
        return np.clip(out, -1.0, 1.0)
    ok = ~(np.isnan(x) | np.isnan(y))
    first, second = np.triu_indices(x.shape[-1], 1)
    both = ok[..., first] & ok[..., second]
    with np.errstate(invalid="ignore"):
        sx = np.where(both, np.sign(x[..., first] - x[..., second]), 0.0)
        sy = np.where(both, np.sign(y[..., first] - y[..., second]), 0.0)
    sx, sy = np.nan_to_num(sx), np.nan_to_num(sy)  # -inf - -inf: both never won, a tie
    num, nx, ny = (sx * sy).sum(-1), (sx * sx).sum(-1), (sy * sy).sum(-1)
    out = np.full(num.shape, np.nan)
    np.divide(num, np.sqrt(nx * ny), out=out, where=(nx > 0) & (ny > 0))
    return out


@dataclass(frozen=True)
class RankingAgreement(ToFrame):
    """How closely a judge's system scores follow the reference's: Kendall's tau-b or Pearson's r."""

    judge: str
    reference: str
    method: str
    coefficient: str
    order: str
    estimate: float
    low: float
    high: float
    n_systems: int
    n_defined: int
    confidence_level: float
    n_resamples: int

    def to_dict(self) -> dict:
        return {"judge": self.judge, "reference": self.reference, "method": self.method,
                "coefficient": self.coefficient, "order": self.order, "estimate": kern.num(self.estimate),
                "low": kern.num(self.low), "high": kern.num(self.high), "n_systems": self.n_systems,
                "n_defined": self.n_defined, "confidence_level": self.confidence_level,
                "n_resamples": self.n_resamples}


def ranking_agreement(
    data: PairwiseData,
    *,
    judges: Sequence[str] | None = None,
    reference: str = "auto",
    method: RankingMethod = "win-rate",
    coefficient: RankCoefficient = "kendall",
    order: SystemOrder = "original",
    no_majority: NoMajority = "tie",
    confidence_level: float = 0.95,
    n_resamples: int = 1000,
    rng: np.random.Generator | int | None = None,
    batch: int | None = None,
) -> tuple[RankingAgreement, ...]:
    """Correlation between each judge's system scores and the reference's, with an item bootstrap.

    Both rankings come from the same items: each resample draws items once and rescores the systems from the
    judge's and from the reference's verdicts on them (so the interval includes the people's own sampling
    noise). Kendall's tau-b (ties in scores allowed) or Pearson's r over the systems.

    References
    ----------
    docs/methods.md sec. 18.8; Deutsch, Dror & Roth (NAACL 2022) (system-level correlation with intervals).
    """
    _check_system_args(data, method, order, no_majority)
    check_choice(coefficient, "coefficient", RANK_COEFFICIENTS)
    level, k, batch = kern.check_resampling(confidence_level, n_resamples, batch)
    systems, pairs = _systems(data)
    names = _judges(data, judges)
    kern.judges_in_order(data, names, order, every_slot=False)  # a judge without verdicts in it: undefined
    ref, what = _rater_verdicts(data, reference, order, no_majority)
    s = len(systems)
    _price("the ranking agreement", method, pairs, data.n_items, 1 + len(names), k, coefficient=coefficient)
    per_rater = [pairs.outcomes(ref)] + [pairs.outcomes(_rater_verdicts(data, j, order, no_majority)[0])
                                         for j in names]
    columns = pairs.columns(per_rater)
    shape = (len(per_rater), pairs.n_pairs, 3)
    full_scores, scores_of = _scorer(pairs, method, _full_sums(columns, shape))

    def correlate(scores: np.ndarray) -> np.ndarray:  # (..., 1 + J, S)
        judge = scores[..., 1:, :]
        flat_j = judge.reshape(-1, s)
        flat_r = np.broadcast_to(scores[..., :1, :], judge.shape).reshape(-1, s)
        # Kendall holds the signs of every system pair per row: a few rows at a time (2,000 systems: 2M pairs)
        step = max(1, _CORRELATION_ELEMENTS // max(s * s, 1)) if coefficient == "kendall" else flat_j.shape[0]
        out = np.concatenate([_correlation(flat_j[r:r + step], flat_r[r:r + step], coefficient)
                              for r in range(0, flat_j.shape[0], step)]) if flat_j.shape[0] else np.zeros(0)
        return out.reshape(judge.shape[:-1])

    boot = _bootstrap_sparse(columns, shape, lambda sums: correlate(scores_of(sums)), correlate(full_scores),
                             n_resamples=k, rng=kern.seed_of(rng), batch=batch, confidence_level=level)
    return tuple(RankingAgreement(judge=name, reference=what, method=method, coefficient=coefficient, order=order,
                                  estimate=float(boot.estimate[j]), low=float(boot.low[j]), high=float(boot.high[j]),
                                  n_systems=s, n_defined=int(boot.defined[j]), confidence_level=level,
                                  n_resamples=k)
                 for j, name in enumerate(names))


@dataclass(frozen=True)
class ClosePairs(ToFrame):
    """Agreement on the system pairs people find close (the analogue of rSYS-Delta for judges).

    ``pairs`` lists every head-to-head pair (systems u, v; the reference's and the judge's win rate of u
    over v, ties counting half; items); ``close`` marks the pairs with ``|reference rate - 0.5| <= delta``
    (and not exactly 0.5: no winner to agree on). ``estimate`` is the share of close pairs where the judge's
    rate is on the same side of 0.5 as the reference's (a judge rate of exactly 0.5 counts as wrong), with a
    percentile-bootstrap interval over items (the close pairs fixed, both rates re-estimated);
    ``all_pairs`` the same share over every pair with a reference winner.
    """

    judge: str
    reference: str
    delta: float
    order: str
    estimate: float
    low: float
    high: float
    n_close: int
    all_pairs: float
    n_pairs: int
    pairs: tuple[dict, ...]
    confidence_level: float
    n_resamples: int

    def to_dict(self) -> dict:
        return {"judge": self.judge, "reference": self.reference, "delta": self.delta, "order": self.order,
                "estimate": kern.num(self.estimate), "low": kern.num(self.low), "high": kern.num(self.high),
                "n_close": self.n_close, "all_pairs": kern.num(self.all_pairs), "n_pairs": self.n_pairs,
                "confidence_level": self.confidence_level, "n_resamples": self.n_resamples}


def _pair_rates(outcomes: np.ndarray) -> np.ndarray:
    """(..., P, 3) -> (..., P) head-to-head rate of u over v, ties half; NaN without comparisons."""
    total = outcomes.sum(axis=-1)
    out = np.full(total.shape, np.nan)
    np.divide(outcomes[..., 0] + 0.5 * outcomes[..., 2], total, out=out, where=total > 0)
    return out


def close_pair_agreement(
    data: PairwiseData,
    *,
    judges: Sequence[str] | None = None,
    reference: str = "auto",
    delta: float = 0.1,
    order: SystemOrder = "original",
    no_majority: NoMajority = "tie",
    confidence_level: float = 0.95,
    n_resamples: int = 1000,
    rng: np.random.Generator | int | None = None,
    batch: int | None = None,
) -> tuple[ClosePairs, ...]:
    """Does the judge pick the same winner as people on the system pairs people find close?

    See :class:`ClosePairs`. Head-to-head rates come from the items comparing the two systems directly.

    References
    ----------
    docs/methods.md sec. 18.8; Deutsch, Dror & Roth (NAACL 2022) sec. 5 (rSYS-Delta: agreement on close
    system pairs).
    """
    _check_system_args(data, "win-rate", order, no_majority)
    if isinstance(delta, bool) or not isinstance(delta, (int, float)) or not 0 <= delta <= 0.5:
        raise ValueError(f"delta must be a number in [0, 0.5] (a distance of the people's win rate from 50%); "
                         f"got {delta!r}")
    level, k, batch = kern.check_resampling(confidence_level, n_resamples, batch)
    systems, pairs = _systems(data)
    names = _judges(data, judges)
    # A judge without verdicts in the order has no head-to-head rate: undefined, not "agrees on no pair".
    in_order = kern.judges_in_order(data, names, order, every_slot=False)
    _price("the close-pair agreement", "win-rate", pairs, data.n_items, 1 + len(names), k)
    ref, what = _rater_verdicts(data, reference, order, no_majority)
    per_rater = [pairs.outcomes(ref)] + [pairs.outcomes(_rater_verdicts(data, j, order, no_majority)[0])
                                         for j in names]
    columns = pairs.columns(per_rater)
    shape = (len(per_rater), pairs.n_pairs, 3)
    full = _full_sums(columns, shape)  # (1 + J, Q, 3)
    ref_rate = _pair_rates(full[0])
    decided = np.isfinite(ref_rate) & (ref_rate != 0.5)
    close = decided & (np.abs(ref_rate - 0.5) <= delta + 1e-12)

    def statistic(sums: np.ndarray) -> np.ndarray:
        rates = _pair_rates(sums)  # (..., 1 + J, Q)
        same = np.sign(rates[..., 1:, :] - 0.5) == np.sign(rates[..., :1, :] - 0.5)
        same = same & np.isfinite(rates[..., 1:, :]) & np.isfinite(rates[..., :1, :]) & (rates[..., :1, :] != 0.5)
        out = np.full(same.shape[:-1], np.nan)
        if close.any():
            out = same[..., close].mean(axis=-1)
        return out

    boot = _bootstrap_sparse(columns, shape, statistic, statistic(full), n_resamples=k, rng=kern.seed_of(rng),
                             batch=batch, confidence_level=level)
    ref_items = full[0].sum(axis=-1)
    results = []
    for j, name in enumerate(names):
        rates = _pair_rates(full[1 + j])
        same = (np.sign(rates - 0.5) == np.sign(ref_rate - 0.5)) & decided & np.isfinite(rates)
        rows = tuple({"system_u": systems[u], "system_v": systems[v], "reference_rate": kern.num(ref_rate[p]),
                       "judge_rate": kern.num(rates[p]), "items": int(ref_items[p]),
                       "close": bool(close[p]), "agree": bool(same[p])}
                      for p, (u, v) in enumerate(zip(pairs.u.tolist(), pairs.v.tolist())) if np.isfinite(ref_rate[p]))
        defined = name in in_order
        nan = float("nan")
        results.append(ClosePairs(judge=name, reference=what, delta=float(delta), order=order,
                                  estimate=float(boot.estimate[j]) if defined else nan,
                                  low=float(boot.low[j]) if defined else nan,
                                  high=float(boot.high[j]) if defined else nan, n_close=int(close.sum()),
                                  all_pairs=float(same[decided].mean()) if decided.any() and defined else nan,
                                  n_pairs=int(decided.sum()), pairs=rows, confidence_level=level, n_resamples=k))
    return tuple(results)


__all__ = ["ClosePairs", "DavidsonFit", "RankingAgreement", "SystemRanking", "RANKING_METHODS",
           "RANK_COEFFICIENTS", "close_pair_agreement", "davidson_fit", "ranking_agreement", "system_ranking"]
