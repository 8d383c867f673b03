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

from metaeval_core._checks import check_choice
from metaeval_core._frames import ToFrame
from metaeval_core.data.dataset import DatasetError
from metaeval_core.judges import _kernel as kern
from metaeval_core.judges.agreement import _judges, resolve_reference
from metaeval_core.judges.model import A, B, INVALID, MISSING, NO_MAJORITY, TIE, NoMajority, PairwiseData

RankingMethod = Literal["win-rate", "davidson"]
RANKING_METHODS: tuple[str, ...] = get_args(RankingMethod)
RankCoefficient = Literal["kendall", "pearson"]
RANK_COEFFICIENTS: tuple[str, ...] = get_args(RankCoefficient)
SystemOrder = Literal["original", "swapped", "average"]
SYSTEM_ORDERS: tuple[str, ...] = get_args(SystemOrder)

_MAX_ITER = 2000
_TOL = 1e-10


def _systems(data: PairwiseData) -> tuple[tuple[str, ...], np.ndarray, np.ndarray]:
    systems = data.systems
    if len(systems) < 2:
        raise DatasetError(f"dataset {data.id!r} does not name the systems of its outputs (at least two): "
                           "system rankings need system_a and system_b")
    index = {s: k for k, s in enumerate(systems)}
    sa = np.array([index.get(s, -1) for s in data.system_a])
    sb = np.array([index.get(s, -1) for s in data.system_b])
    return systems, sa, sb


def _outcome_columns(verdicts: np.ndarray, sa: np.ndarray, sb: np.ndarray, n_systems: int) -> np.ndarray:
    """Per item, per system pair (u < v): (u wins, v wins, ties) counts from (n, O) verdict codes.

    Invalid and missing verdicts count nowhere. Returns (n, P, 3) with P = S (S - 1) / 2.
    """
    n = verdicts.shape[0]
    first, second = np.triu_indices(n_systems, 1)
    pair_index = np.full((n_systems, n_systems), -1)
    pair_index[first, second] = np.arange(first.size)
    pair_index[second, first] = np.arange(first.size)
    out = np.zeros((n, first.size, 3))
    known = (sa >= 0) & (sb >= 0) & (sa != sb)
    rows = np.flatnonzero(known)
    p = pair_index[sa[rows], sb[rows]]
    a_is_u = sa[rows] < sb[rows]
    for o in range(verdicts.shape[1]):
        v = verdicts[rows, o]
        a_wins, b_wins, tie = (v == A), (v == B), (v == TIE)
        np.add.at(out, (rows, p, 0), np.where(a_is_u, a_wins, b_wins))
        np.add.at(out, (rows, p, 1), np.where(a_is_u, b_wins, a_wins))
        np.add.at(out, (rows, p, 2), tie)
    return out


def _win_rates(outcomes: np.ndarray, n_systems: int) -> np.ndarray:
    """(..., P, 3) pair outcome sums -> (..., S) win rates (wins + ties / 2) / comparisons; NaN when none."""
    first, second = np.triu_indices(n_systems, 1)
    wins = np.zeros(outcomes.shape[:-2] + (n_systems,))
    games = np.zeros_like(wins)
    total = outcomes.sum(axis=-1)
    for p, (u, v) in enumerate(zip(first, second)):
        wins[..., u] += outcomes[..., p, 0] + 0.5 * outcomes[..., p, 2]
        wins[..., v] += outcomes[..., p, 1] + 0.5 * outcomes[..., p, 2]
        games[..., u] += total[..., p]
        games[..., v] += total[..., p]
    out = np.full(wins.shape, np.nan)
    np.divide(wins, games, out=out, where=games > 0)
    return out


@dataclass(frozen=True)
class DavidsonFit:
    """Bradley-Terry strengths with ties (Davidson 1970) per leading batch index.

    ``strength`` (..., S) are ``log p_i`` with mean zero over the systems that played (``-inf`` for a system
    that never won nor tied, NaN for one that never played); ``nu`` (...,) the tie parameter (0 when there
    are no ties); ``converged`` whether the iteration met its tolerance; ``log_likelihood`` at the fit.
    """

    strength: np.ndarray
    nu: np.ndarray
    converged: np.ndarray
    log_likelihood: np.ndarray
    iterations: int


def davidson_fit(outcomes: np.ndarray, n_systems: int, *, max_iter: int = _MAX_ITER, tol: float = _TOL) -> DavidsonFit:
    """Maximum-likelihood Davidson strengths from (..., P, 3) pair outcome counts (u wins, v wins, ties).

    The fixed point of Davidson (1970) eq. (3.3)-(3.4): ``p_i = (W_i + T_i / 2) / sum_j n_ij (1 + nu/2
    sqrt(p_j / p_i)) / (p_i + p_j + nu sqrt(p_i p_j))`` and ``nu = T / sum_{i<j} n_ij sqrt(p_i p_j) /
    (p_i + p_j + nu sqrt(p_i p_j))``, iterated from equal strengths (vectorised over the leading axes) until
    the largest change of a log-strength and of ``nu`` is below ``tol``.

    References
    ----------
    docs/methods.md sec. 18.8; Davidson (1970) sec. 3.
    """
    outcomes = np.asarray(outcomes, dtype=np.float64)
    lead = outcomes.shape[:-2]
    first, second = np.triu_indices(n_systems, 1)
    w_u, w_v, t = outcomes[..., 0], outcomes[..., 1], outcomes[..., 2]
    n_pair = w_u + w_v + t
    score = np.zeros(lead + (n_systems,))  # W_i + T_i / 2
    played = np.zeros(lead + (n_systems,))
    for p, (u, v) in enumerate(zip(first, second)):
        score[..., u] += w_u[..., p] + 0.5 * t[..., p]
        score[..., v] += w_v[..., p] + 0.5 * t[..., p]
        played[..., u] += n_pair[..., p]
        played[..., v] += n_pair[..., p]
    ties = t.sum(axis=-1)
    p = np.where(played > 0, 1.0, np.nan)
    nu = np.where(ties > 0, 1.0, 0.0)
    converged = np.zeros(lead, dtype=bool)
    iterations = 0
    for iterations in range(1, max_iter + 1):
        pu, pv = p[..., first], p[..., second]
        root = np.sqrt(pu * pv)
        denom = pu + pv + nu[..., None] * root
        with np.errstate(invalid="ignore", divide="ignore"):
            term_u = n_pair * (1.0 + 0.5 * nu[..., None] * np.sqrt(pv / pu)) / denom
            term_v = n_pair * (1.0 + 0.5 * nu[..., None] * np.sqrt(pu / pv)) / denom
        sums = np.zeros_like(p)
        for k, (u, v) in enumerate(zip(first, second)):
            sums[..., u] += np.nan_to_num(term_u[..., k])
            sums[..., v] += np.nan_to_num(term_v[..., k])
        with np.errstate(invalid="ignore", divide="ignore"):
            new_p = np.where(played > 0, score / sums, np.nan)
            log_p = np.log(new_p)
            finite = np.isfinite(log_p)
            centre = np.where(finite, log_p, 0.0).sum(axis=-1) / np.maximum(finite.sum(axis=-1), 1)
            new_p = np.exp(log_p - centre[..., None])
            pu, pv = new_p[..., first], new_p[..., second]
            root = np.sqrt(pu * pv)
            tie_den = np.nan_to_num(n_pair * root / (pu + pv + nu[..., None] * root)).sum(axis=-1)
            new_nu = np.where(ties > 0, ties / np.where(tie_den > 0, tie_den, 1.0), 0.0)
            change = np.nanmax(np.abs(np.where(finite, np.log(new_p) - np.log(p), 0.0)), axis=-1, initial=0.0)
        change = np.maximum(change, np.abs(new_nu - nu))
        p, nu = new_p, new_nu
        converged = change < tol
        if converged.all():
            break
    with np.errstate(divide="ignore", invalid="ignore"):
        strength = np.log(p)
        pu, pv = p[..., first], p[..., second]
        root = np.sqrt(pu * pv)
        denom = pu + pv + nu[..., None] * root
        terms = (np.where(w_u > 0, w_u * np.log(pu / denom), 0.0) + np.where(w_v > 0, w_v * np.log(pv / denom), 0.0)
                 + np.where(t > 0, t * np.log(nu[..., None] * root / denom), 0.0))
    return DavidsonFit(strength=strength, nu=nu, converged=converged, log_likelihood=np.nansum(terms, axis=-1),
                       iterations=iterations)


def _scores(outcomes: np.ndarray, n_systems: int, method: str) -> np.ndarray:
    if method == "win-rate":
        return _win_rates(outcomes, n_systems)
    return davidson_fit(outcomes, n_systems).strength


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
    systems, sa, sb = _systems(data)
    verdicts, what = _rater_verdicts(data, rater, order, no_majority)
    outcomes = _outcome_columns(verdicts, sa, sb, len(systems))
    boot = kern.bootstrap(outcomes, lambda sums: _scores(sums, len(systems), method), n_resamples=k,
                          rng=kern.seed_of(rng), batch=batch, confidence_level=level)
    total = outcomes.sum(axis=0)
    first, second = np.triu_indices(len(systems), 1)
    wins, losses, ties = (np.zeros(len(systems)) for _ in range(3))
    for p, (u, v) in enumerate(zip(first, second)):
        wins[u] += total[p, 0]
        wins[v] += total[p, 1]
        losses[u] += total[p, 1]
        losses[v] += total[p, 0]
        ties[u] += total[p, 2]
        ties[v] += total[p, 2]
    rank = sorted(range(len(systems)), key=lambda s: (not np.isfinite(boot.estimate[s]), -np.nan_to_num(
        boot.estimate[s], nan=-np.inf, neginf=-1e300), s))
    fit = davidson_fit(total, len(systems)) if method == "davidson" else None
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
    systems, sa, sb = _systems(data)
    names = _judges(data, judges)
    ref, what = _rater_verdicts(data, reference, order, no_majority)
    s = len(systems)
    columns = [_outcome_columns(ref, sa, sb, s)]
    columns += [_outcome_columns(_rater_verdicts(data, j, order, no_majority)[0], sa, sb, s) for j in names]
    stacked = np.stack(columns, axis=1)  # (n, 1 + J, P, 3)

    def statistic(sums: np.ndarray) -> np.ndarray:
        scores = _scores(sums, s, method)  # (..., 1 + J, S)
        return _correlation(scores[..., 1:, :], np.broadcast_to(scores[..., :1, :], scores[..., 1:, :].shape),
                            coefficient)

    boot = kern.bootstrap(stacked, statistic, n_resamples=k, rng=kern.seed_of(rng), batch=batch,
                          confidence_level=level)
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
    systems, sa, sb = _systems(data)
    names = _judges(data, judges)
    s = len(systems)
    ref, what = _rater_verdicts(data, reference, order, no_majority)
    ref_out = _outcome_columns(ref, sa, sb, s)
    ref_rate = _pair_rates(ref_out.sum(axis=0))
    decided = np.isfinite(ref_rate) & (ref_rate != 0.5)
    close = decided & (np.abs(ref_rate - 0.5) <= delta + 1e-12)
    judge_out = np.stack([_outcome_columns(_rater_verdicts(data, j, order, no_majority)[0], sa, sb, s)
                          for j in names], axis=1)  # (n, J, P, 3)
    stacked = np.concatenate([ref_out[:, None], judge_out], axis=1)

    def statistic(sums: np.ndarray) -> np.ndarray:
        rates = _pair_rates(sums)  # (..., 1 + J, P)
        same = np.sign(rates[..., 1:, :] - 0.5) == np.sign(rates[..., :1, :] - 0.5)
        same = same & np.isfinite(rates[..., 1:, :]) & np.isfinite(rates[..., :1, :]) & (rates[..., :1, :] != 0.5)
        out = np.full(same.shape[:-1], np.nan)
        if close.any():
            out = same[..., close].mean(axis=-1)
        return out

    boot = kern.bootstrap(stacked, statistic, n_resamples=k, rng=kern.seed_of(rng), batch=batch,
                          confidence_level=level)
    first, second = np.triu_indices(s, 1)
    results = []
    for j, name in enumerate(names):
        rates = _pair_rates(judge_out[:, j].sum(axis=0))
        same = (np.sign(rates - 0.5) == np.sign(ref_rate - 0.5)) & decided & np.isfinite(rates)
        pairs = tuple({"system_u": systems[u], "system_v": systems[v], "reference_rate": kern.num(ref_rate[p]),
                       "judge_rate": kern.num(rates[p]), "items": int(ref_out[:, p].sum()),
                       "close": bool(close[p]), "agree": bool(same[p])}
                      for p, (u, v) in enumerate(zip(first, second)) if np.isfinite(ref_rate[p]))
        results.append(ClosePairs(judge=name, reference=what, delta=float(delta), order=order,
                                  estimate=float(boot.estimate[j]), low=float(boot.low[j]), high=float(boot.high[j]),
                                  n_close=int(close.sum()),
                                  all_pairs=float(same[decided].mean()) if decided.any() else float("nan"),
                                  n_pairs=int(decided.sum()), pairs=pairs, confidence_level=level, n_resamples=k))
    return tuple(results)


__all__ = ["ClosePairs", "DavidsonFit", "RankingAgreement", "SystemRanking", "RANKING_METHODS",
           "RANK_COEFFICIENTS", "close_pair_agreement", "davidson_fit", "ranking_agreement", "system_ranking"]
