"""How often does a judge agree with people? Accuracy, Cohen's kappa and Krippendorff's alpha with intervals.

The reference is the human majority, a gold label, or any rater; a judge's verdicts are compared with it item
by item under named conventions for ties and invalid verdicts (:mod:`metaeval_core.judges._kernel`), in one
presentation order, on average over both, or (accuracy) in both at once. Intervals are percentile bootstraps
over items, the same resampled items for every judge (common random numbers). Also here: the chance baseline
(a judge's verdicts permuted over items, its marginals kept) and the human ceiling (each annotator against the
majority of the others).

References: docs/methods.md sec. 18.1-18.3; Cohen (1960); Krippendorff (2011), Computing Krippendorff's
Alpha-Reliability; Zheng et al. (2023), MT-Bench (agreement with and without ties); Dubois et al. (2023),
AlpacaFarm / alpaca_eval (human agreement: each annotator against the mode of the others).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Sequence

import numpy as np

from metaeval_core._checks import check_choice, check_int
from metaeval_core._frames import ToFrame
from metaeval_core.data.dataset import DatasetError
from metaeval_core.judges import _kernel as kern
from metaeval_core.judges._kernel import (
    INVALID_CONVENTIONS, ORDER_MODES, STATISTICS, TIE_CONVENTIONS, VerdictCounting, Invalid, OrderMode, Statistic, Ties,
)
from metaeval_core.judges.model import INVALID, MISSING, NO_MAJORITY, TIE, NoMajority, PairwiseData, majority_verdict
from metaeval_core.stats.significance import CORRECTIONS, Correction, correct_pvalues
from metaeval_core.stats.montecarlo import count_pvalue

BOOTSTRAP_METHOD = "percentile bootstrap over items"


@dataclass(frozen=True)
class JudgeAgreement(ToFrame):
    """One rater's agreement with the reference, with a bootstrap interval.

    Attributes
    ----------
    judge : str
        The rater compared (usually a judge; a human annotator for the ceiling).
    reference : str
        What it is compared with, spelled out (``'majority of 3 humans (no majority: tie)'``, ``'label'``).
    statistic, order, ties, invalid : str
        What was computed and under which conventions (see :func:`judge_agreement`).
    estimate, low, high : float
        The statistic on all items and its percentile-bootstrap interval (NaN when undefined).
    n_items : int
        Items that count under the conventions (in every order read).
    n_in_scope : int
        Items where the rater and the reference both gave a verdict in the orders read.
    n_invalid : int
        The rater's invalid verdicts on those items, in the orders read (counted as the ``invalid``
        convention says, never silently dropped).
    n_ties : int
        Items in scope whose reference is a tie.
    n_judge_ties : int
        The rater's own tie verdicts on the items in scope, in the orders read.
    n_defined, n_resamples : int
        Resamples whose statistic was defined, and drawn.
    confidence_level : float
    method : str
    """

    judge: str
    reference: str
    statistic: str
    order: str
    ties: str
    invalid: str
    estimate: float
    low: float
    high: float
    n_items: int
    n_in_scope: int
    n_invalid: int
    n_ties: int
    n_defined: int
    n_resamples: int
    confidence_level: float
    method: str = BOOTSTRAP_METHOD
    n_judge_ties: int = 0

    def to_dict(self) -> dict:
        return {"judge": self.judge, "reference": self.reference, "statistic": self.statistic,
                "order": self.order, "ties": self.ties, "invalid": self.invalid,
                "estimate": kern.num(self.estimate), "low": kern.num(self.low), "high": kern.num(self.high),
                "n_items": self.n_items, "n_in_scope": self.n_in_scope, "n_invalid": self.n_invalid,
                "n_ties": self.n_ties, "n_judge_ties": self.n_judge_ties, "n_defined": self.n_defined,
                "n_resamples": self.n_resamples,
                "confidence_level": self.confidence_level, "method": self.method}


@dataclass(frozen=True)
class AgreementTable(ToFrame):
    """Agreement of several raters with one reference on the same items (one row per rater).

    ``distribution`` (with ``return_distribution=True``) holds the resampled statistics, shape
    ``(n_resamples, len(rows))``, in draw order, NaN where undefined.
    """

    rows: tuple[JudgeAgreement, ...]
    dataset: str
    statistic: str
    reference: str
    order: str
    ties: str
    invalid: str
    confidence_level: float
    n_resamples: int
    n_items: int
    distribution: np.ndarray | None = None

    @property
    def judges(self) -> tuple[str, ...]:
        return tuple(r.judge for r in self.rows)

    @property
    def estimates(self) -> np.ndarray:
        return np.array([r.estimate for r in self.rows])

    def row(self, judge: str) -> JudgeAgreement:
        for r in self.rows:
            if r.judge == judge:
                return r
        raise KeyError(f"no row for {judge!r}; rows: {', '.join(self.judges)}")

    def to_records(self) -> list[dict]:
        return [r.to_dict() for r in self.rows]


# ---------------------------------------------------------------------------------------------------------
# The reference
# ---------------------------------------------------------------------------------------------------------
def resolve_reference(data: PairwiseData, reference: str, *, no_majority: NoMajority = "tie",
                      exclude: str | None = None) -> tuple[np.ndarray, str]:
    """The reference verdict per item (original numbering) and its description.

    ``'auto'`` is the gold label when the dataset has one, else the human majority; ``'majority'`` the
    verdict of more than half of the human annotators (``no_majority`` otherwise,
    :func:`~metaeval_core.judges.model.majority_verdict`), leaving out ``exclude`` (the human ceiling);
    ``'gold'`` the dataset's gold label; any rater id that rater's verdicts in the original order. An invalid
    reference verdict is no reference: the item is out of scope.

    References
    ----------
    docs/methods.md sec. 18.1.
    """
    if not isinstance(reference, str):
        raise TypeError(f"reference must be a string ('auto', 'majority', 'gold' or a rater id); got {reference!r}")
    check_choice(no_majority, "no_majority", NO_MAJORITY)
    if reference == "auto":
        reference = "gold" if data.golds else "majority"
    if reference == "majority":
        humans = [h for h in data.humans if h != exclude]
        if not humans:
            raise DatasetError(f"dataset {data.id!r} has no human annotators for a majority; use reference='gold' "
                               "or a rater id")
        cols = [data.rater_index(h) for h in humans]
        ref = majority_verdict(data.verdicts[:, cols, 0], no_majority=no_majority)
        what = (f"majority of {len(humans)} humans" + (f" other than {exclude}" if exclude else "")
                + f" (no majority: {'tie' if no_majority == 'tie' else 'item left out'})")
        return ref, what if len(humans) > 1 else humans[0]
    if reference == "gold":
        if not data.golds:
            raise DatasetError(f"dataset {data.id!r} has no gold label; use reference='majority' or a rater id")
        if len(data.golds) > 1:  # which one is *the* gold label? never the first by row order
            raise DatasetError(f"dataset {data.id!r} has {len(data.golds)} gold labels ({', '.join(data.golds)}): "
                               "choose one by name as the reference")
        reference = data.golds[0]
    ref = data.verdicts[:, data.rater_index(reference), 0]
    return np.where(ref == INVALID, MISSING, ref).astype(np.int8), reference


def _judges(data: PairwiseData, judges: Sequence[str] | None) -> list[str]:
    if judges is None:
        chosen = list(data.judges_of())  # the judges with a verdict on these items (LLMBar: per pair set)
    elif isinstance(judges, str) or not all(isinstance(j, str) for j in judges):
        raise TypeError("judges must be a sequence of rater ids (a list of strings) or None")
    else:
        chosen = list(judges)
    for j in chosen:
        data.rater_index(j)  # names an unknown id
    if not chosen:
        raise ValueError(f"judges: dataset {data.id!r} has no judge to evaluate")
    return chosen


@dataclass(frozen=True)
class _Setup:
    conv: VerdictCounting
    level: float
    k: int
    batch: int | None
    names: list[str]
    judge: np.ndarray  # (n, J, 2) codes
    refs: np.ndarray  # (n, J) reference codes
    what: str


def _setup(data, judges, statistic, reference, order, ties, invalid, no_majority, confidence_level, n_resamples,
           batch) -> _Setup:
    """The checks and arrays every judges-vs-reference function starts from (``confidence_level=None``: a test,
    no interval: ``n_resamples`` need only be positive)."""
    conv = _check(data, statistic, order, ties, invalid, no_majority)
    if confidence_level is None:
        level, k, batch = float("nan"), check_int(n_resamples, "n_resamples"), check_int(batch, "batch",
                                                                                        allow_none=True)
    else:
        level, k, batch = kern.check_resampling(confidence_level, n_resamples, batch)
    names = _judges(data, judges)
    ref, what = resolve_reference(data, reference, no_majority=no_majority)
    judge = data.verdicts[:, [data.rater_index(j) for j in names], :]
    return _Setup(conv, level, k, batch, names, judge, np.repeat(ref[:, None], len(names), axis=1), what)


def _check(data, statistic, order, ties, invalid, no_majority) -> VerdictCounting:
    if not isinstance(data, PairwiseData):
        raise TypeError(f"data must be a PairwiseData (from load_pairwise); got {type(data).__name__}")
    check_choice(statistic, "statistic", STATISTICS)
    check_choice(order, "order", ORDER_MODES)
    check_choice(no_majority, "no_majority", NO_MAJORITY)
    if order == "both" and statistic != "accuracy":
        raise ValueError("order='both' (agreement in both presentation orders at once) is an accuracy; "
                         f"{statistic} is computed per order ('original', 'swapped') or on their 'average'")
    return VerdictCounting(ties=ties, invalid=invalid)


# ---------------------------------------------------------------------------------------------------------
# The core computation, shared by judges and the human ceiling
# ---------------------------------------------------------------------------------------------------------
def _scope_counts(judge: np.ndarray, reference: np.ndarray, order: str, conv: VerdictCounting) -> dict[str, np.ndarray]:
    slots = list(kern.order_slots(order))
    v = judge[:, :, slots]
    present = (v != MISSING).all(axis=2) & (reference != MISSING)
    counted = kern.accuracy_columns(judge, reference, order if len(slots) == 1 else "both", conv)[..., 0]
    return {
        "n_items": counted.sum(axis=0).astype(int),
        "n_in_scope": present.sum(axis=0),
        "n_invalid": ((v == INVALID) & present[:, :, None]).sum(axis=(0, 2)),
        "n_ties": (present & (reference == TIE)).sum(axis=0),
        "n_judge_ties": ((v == TIE) & present[:, :, None]).sum(axis=(0, 2)),
    }


def _table(data, names, judge, reference, what, *, statistic, order, conv, confidence_level, n_resamples, rng,
           batch, return_distribution) -> AgreementTable:
    columns = kern.columns_for(statistic, judge, reference, order, conv)  # (n, J, C)
    boot = kern.bootstrap(columns, lambda sums: kern.statistic_from_sums(statistic, sums), n_resamples=n_resamples,
                          rng=rng, batch=batch, confidence_level=confidence_level)
    estimate, low, high, defined = boot.estimate, boot.low, boot.high, boot.defined
    counts = _scope_counts(judge, reference, order, conv)
    rows = tuple(
        JudgeAgreement(
            judge=name, reference=what[j], statistic=statistic, order=order, ties=conv.ties,
            invalid=conv.invalid, estimate=float(estimate[j]), low=float(low[j]), high=float(high[j]),
            n_items=int(counts["n_items"][j]), n_in_scope=int(counts["n_in_scope"][j]),
            n_invalid=int(counts["n_invalid"][j]), n_ties=int(counts["n_ties"][j]), n_defined=int(defined[j]),
            n_resamples=n_resamples, confidence_level=confidence_level, n_judge_ties=int(counts["n_judge_ties"][j]))
        for j, name in enumerate(names))
    return AgreementTable(rows=rows, dataset=data.id, statistic=statistic, reference=what[0] if len(set(what)) == 1
                          else "each annotator's others", order=order, ties=conv.ties, invalid=conv.invalid,
                          confidence_level=confidence_level, n_resamples=n_resamples, n_items=data.n_items,
                          distribution=boot.resampled if return_distribution else None)


def judge_agreement(
    data: PairwiseData,
    *,
    judges: Sequence[str] | None = None,
    statistic: Statistic = "accuracy",
    reference: str = "auto",
    order: OrderMode = "original",
    ties: Ties = "three-class",
    invalid: Invalid = "wrong",
    no_majority: NoMajority = "tie",
    confidence_level: float = 0.95,
    n_resamples: int = 1000,
    rng: np.random.Generator | int | None = None,
    batch: int | None = None,
    return_distribution: bool = False,
) -> AgreementTable:
    """Agreement of each judge with the reference on the items of ``data``, with bootstrap intervals.

    Parameters
    ----------
    data : PairwiseData
        The items (select a pair set or subset first: ``data.select_pair_set(name)``).
    judges : sequence of str, optional
        Rater ids to evaluate (default: every judge with a verdict on these items). Humans may be named too (e.g. one annotator against
        another with ``reference=<rater id>``).
    statistic : {'accuracy', 'kappa', 'alpha'}
        Share of counted items where the judge's verdict equals the reference; Cohen's kappa; Krippendorff's
        alpha (nominal, the judge and the reference as two coders). Kappa and alpha take the categories A, B,
        tie and invalid (under ``invalid='wrong'`` an invalid verdict is a category no reference has).
    reference : str
        ``'auto'`` (gold when the dataset has it, else the human majority), ``'majority'``, ``'gold'`` or a
        rater id (:func:`resolve_reference`).
    order : {'original', 'swapped', 'average', 'both'}
        The presentation order: A shown first, B shown first, the mean over both orders (items that count
        in both), or (accuracy only) agreement in both orders at once. A judge without verdicts in an order
        has an undefined (NaN) value there.
    ties : {'three-class', 'drop-reference-ties', 'drop-any-tie'}
        A tie is a third class / items whose reference is a tie are left out (a judge's tie is then wrong) /
        items where either says tie are left out (MT-Bench's agreement "without ties").
    invalid : {'wrong', 'drop', 'tie'}
        An invalid verdict counts and disagrees / its item is left out / it reads as a tie. ``n_invalid``
        always reports how many there were.
    no_majority : {'tie', 'drop'}
        For ``reference='majority'``: an item without a strict human majority is a tie, or left out.
    confidence_level, n_resamples, rng, batch
        Percentile bootstrap over items: ``n_resamples`` resamples of the items drawn up front from ``rng``
        (a Generator or a seed), evaluated ``batch`` at a time (the result does not depend on ``batch``).
        Every judge sees the same resamples.
    return_distribution : bool
        Keep the resampled statistics in the result (for tests and plots).

    Returns
    -------
    AgreementTable
        One :class:`JudgeAgreement` per judge, naming the reference and the conventions.

    References
    ----------
    docs/methods.md sec. 18.1-18.2; Cohen (1960); Krippendorff (2011); Zheng et al. (2023) (MT-Bench
    agreement with and without ties); Zeng et al. (2024) (LLMBar: accuracy in both orders).
    """
    s = _setup(data, judges, statistic, reference, order, ties, invalid, no_majority, confidence_level, n_resamples,
               batch)
    return _table(data, s.names, s.judge, s.refs, [s.what] * len(s.names), statistic=statistic, order=order,
                  conv=s.conv, confidence_level=s.level, n_resamples=s.k, rng=kern.seed_of(rng), batch=s.batch,
                  return_distribution=bool(return_distribution))


def human_ceiling(
    data: PairwiseData,
    *,
    statistic: Statistic = "accuracy",
    ties: Ties = "three-class",
    invalid: Invalid = "wrong",
    no_majority: NoMajority = "drop",
    confidence_level: float = 0.95,
    n_resamples: int = 1000,
    rng: np.random.Generator | int | None = None,
    batch: int | None = None,
    return_distribution: bool = False,
) -> AgreementTable:
    """Each human annotator against the majority of the other annotators: how well people agree with people.

    A judge that agrees with the majority as often as an annotator does is at the human ceiling. With two
    other annotators their "majority" is their common verdict; where they differ, ``no_majority='drop'``
    (default) leaves the item out, ``'tie'`` makes it a tie. Same conventions and bootstrap as
    :func:`judge_agreement`, in the original order (people see one order). Needs at least two annotators (with two, each is scored
    against the other: their agreement).

    Returns
    -------
    AgreementTable
        One row per annotator (its ``reference`` names the others); the ceiling is their mean.

    References
    ----------
    docs/methods.md sec. 18.3; Dubois et al. (2023), AlpacaFarm (human agreement: each annotator against
    the mode of the others, as alpaca_eval computes it).
    """
    conv = _check(data, statistic, "original", ties, invalid, no_majority)
    level, k, batch = kern.check_resampling(confidence_level, n_resamples, batch)
    humans = list(data.humans)
    if len(humans) < 2:
        raise DatasetError(f"dataset {data.id!r} has {len(humans)} human annotator(s): a human ceiling needs at "
                           "least two (each against the majority of the others)")
    refs, whats = [], []
    for h in humans:
        ref, what = resolve_reference(data, "majority", no_majority=no_majority, exclude=h)
        refs.append(ref)
        whats.append(what)
    judge = data.verdicts[:, [data.rater_index(h) for h in humans], :].copy()
    judge[:, :, 1] = MISSING  # people judged one order
    return _table(data, humans, judge, np.stack(refs, axis=1), whats, statistic=statistic, order="original",
                  conv=conv, confidence_level=level, n_resamples=k, rng=kern.seed_of(rng), batch=batch,
                  return_distribution=bool(return_distribution))


@dataclass(frozen=True)
class JudgeChanceBaseline(ToFrame):
    """What a judge's statistic would be by chance: its verdicts permuted over items (marginals kept).

    ``mean`` is the average over permutations and ``low``/``high`` the central ``confidence_level`` range of
    the permuted values; ``observed`` is the judge's actual value and ``pvalue`` the share of permutations
    reaching it (``(1 + #{perm >= observed}) / (1 + k)``).
    """

    judge: str
    reference: str
    statistic: str
    order: str
    ties: str
    invalid: str
    observed: float
    mean: float
    low: float
    high: float
    pvalue: float
    n_defined: int
    n_resamples: int
    confidence_level: float

    def to_dict(self) -> dict:
        return {"judge": self.judge, "reference": self.reference, "statistic": self.statistic,
                "order": self.order, "ties": self.ties, "invalid": self.invalid,
                "observed": kern.num(self.observed), "mean": kern.num(self.mean), "low": kern.num(self.low),
                "high": kern.num(self.high), "pvalue": kern.num(self.pvalue), "n_defined": self.n_defined,
                "n_resamples": self.n_resamples, "confidence_level": self.confidence_level}


class _PermutedSums:
    """The judges' column sums (b, J, C) with their verdicts permuted over the items, the references fixed.

    An item's columns are a function of its (original, swapped) verdict codes and its reference code alone: 25 x 5
    combinations. So a permutation's sums are its counts of each combination times that combination's columns,
    evaluated once by the same kernel (:func:`metaeval_core.judges._kernel.columns_for`): one ``bincount`` per block
    instead of the columns of every permuted item (most of a leaderboard's chance levels). The columns are 0/1 or
    halves and the counts integers, so the sums are exact and equal to summing the permuted columns, bit for bit.
    """

    _CODES = 5  # MISSING, A, B, TIE, INVALID (-1..3)

    def __init__(self, statistic: str, judge: np.ndarray, refs: np.ndarray, order: str, conv) -> None:
        self.args = (statistic, judge, refs, order, conv)
        m = self._CODES
        self.fast = judge.size > 0 and judge.min() >= -1 and judge.max() < m - 1 and refs.min() >= -1 and \
            refs.max() < m - 1
        if not self.fast:
            return
        pair = (judge[..., 0].astype(np.intp) + 1) * m + (judge[..., 1].astype(np.intp) + 1)  # (n, J)
        self.pair = pair * m
        self.ref = refs.astype(np.intp) + 1  # (n, J)
        # One reference for every judge (the chance levels' case): permuting the reference by the inverse
        # permutation gives the same counts (item i's judge verdicts meet the reference of the item they moved to)
        # and gathers (b, n) codes instead of (b, n, J).
        self.shared = bool((refs == refs[:, :1]).all())
        self.base = self.pair + np.arange(pair.shape[1]) * (m * m * m)  # (n, J): each judge's own cells
        grid = np.arange(m * m * m)
        codes = np.stack([grid // (m * m) - 1, grid // m % m - 1], axis=-1).astype(judge.dtype)[:, None, :]
        table = kern.columns_for(statistic, codes, (grid % m - 1).astype(refs.dtype)[:, None], order, conv)
        self.table = kern.judge_columns(table, 0)  # (125, C)

    def __call__(self, perms: np.ndarray) -> np.ndarray:
        if not self.fast:
            statistic, judge, refs, order, conv = self.args
            return kern.columns_for(statistic, judge[perms], refs, order, conv).sum(axis=1)  # (b, J, C)
        (b, n), J, cells = perms.shape, self.ref.shape[1], self.table.shape[0]
        if self.shared:
            inverse = np.empty_like(perms)
            inverse[np.arange(b)[:, None], perms] = np.arange(n)
            moved = self.ref[:, 0][inverse] + (np.arange(b) * (J * cells))[:, None]  # (b, n)
            # into a C-ordered array: numpy would lay the broadcast sum out judge-major, and bincount would copy it
            index = np.add(self.base, moved[:, :, None], out=np.empty((b, n, J), dtype=np.intp))
        else:
            index = self.pair[perms] + self.ref  # (b, n, J)
            index += (np.arange(b)[:, None, None] * J + np.arange(J)) * cells
        counts = np.bincount(index.ravel(), minlength=b * J * cells).reshape(b * J, cells)
        return (counts.astype(np.float64) @ self.table).reshape(b, J, -1)


def chance_baseline(
    data: PairwiseData,
    *,
    judges: Sequence[str] | None = None,
    statistic: Statistic = "accuracy",
    reference: str = "auto",
    order: OrderMode = "original",
    ties: Ties = "three-class",
    invalid: Invalid = "wrong",
    no_majority: NoMajority = "tie",
    confidence_level: float = 0.95,
    n_resamples: int = 1000,
    rng: np.random.Generator | int | None = None,
    batch: int | None = None,
) -> tuple[JudgeChanceBaseline, ...]:
    """The chance level of each judge's agreement: its verdicts shuffled over the items, the reference fixed.

    Each permutation moves whole items (both orders' verdicts together), so the judge's share of A, B, tie
    and invalid verdicts and its positional habits are kept while the link to the items is broken: a judge
    that always says "A" scores its chance level. The same permutations serve every judge.

    Returns
    -------
    tuple of JudgeChanceBaseline
        One per judge, with the conventions named.

    References
    ----------
    docs/methods.md sec. 18.4; Good (2005), Permutation, Parametric and Bootstrap Tests of Hypotheses.
    """
    s = _setup(data, judges, statistic, reference, order, ties, invalid, no_majority, confidence_level, n_resamples,
               batch)
    conv, level, k, batch, names, judge, refs, what = (s.conv, s.level, s.k, s.batch, s.names, s.judge, s.refs,
                                                       s.what)
    n = data.n_items
    observed = kern.statistic_from_sums(statistic, kern.columns_for(statistic, judge, refs, order, conv).sum(axis=0))
    values = np.empty((k, len(names)))
    permuted = _PermutedSums(statistic, judge, refs, order, conv)
    # Permutations in blocks from fixed streams (kern.draw_chunks): the same for any batch.
    for sl, perms in kern.draw_chunks("permutations", rng, k, n, n * len(names) * 2, batch):
        values[sl] = kern.statistic_from_sums(statistic, permuted(perms))
    low, high, defined = kern.percentile_bounds(values, level)
    finite = ~np.isnan(values)
    mean = np.full(len(names), np.nan)
    np.divide(np.where(finite, values, 0.0).sum(axis=0), finite.sum(axis=0), out=mean, where=finite.sum(axis=0) > 0)
    out = []
    for j, name in enumerate(names):
        p, _ = count_pvalue(values[:, j], observed[j])  # the permutation p-value every test uses
        out.append(JudgeChanceBaseline(judge=name, reference=what, statistic=statistic, order=order, ties=conv.ties,
                                  invalid=conv.invalid, observed=float(observed[j]), mean=float(mean[j]),
                                  low=float(low[j]), high=float(high[j]), pvalue=float(p), n_defined=int(defined[j]),
                                  n_resamples=k, confidence_level=level))
    return tuple(out)


@dataclass(frozen=True)
class RaterAlpha(ToFrame):
    """Krippendorff's alpha (nominal) among several raters, with a percentile-bootstrap interval over items."""

    raters: tuple[str, ...]
    estimate: float
    low: float
    high: float
    n_items: int
    n_values: int
    invalid: str
    n_defined: int
    confidence_level: float
    n_resamples: int

    def to_dict(self) -> dict:
        return {"raters": list(self.raters), "estimate": kern.num(self.estimate), "low": kern.num(self.low),
                "high": kern.num(self.high), "n_items": self.n_items, "n_values": self.n_values,
                "invalid": self.invalid, "n_defined": self.n_defined, "confidence_level": self.confidence_level,
                "n_resamples": self.n_resamples}


def _coincidences(codes: np.ndarray, n_categories: int) -> np.ndarray:
    """Per item, its contribution to the coincidence matrix: ``(n_uc n_uk - [c = k] n_uc) / (m_u - 1)``.

    ``codes`` (n, raters) with -1 for no value; items with fewer than two values contribute nothing.
    Returns (n, K * K).
    """
    counts = np.stack([(codes == c).sum(axis=1) for c in range(n_categories)], axis=1).astype(np.float64)
    m = counts.sum(axis=1)
    pairs = counts[:, :, None] * counts[:, None, :] - np.eye(n_categories)[None] * counts[:, :, None]
    scale = np.zeros_like(m)
    np.divide(1.0, m - 1.0, out=scale, where=m >= 2)
    return (pairs * scale[:, None, None]).reshape(len(codes), -1)


def rater_alpha(
    data: PairwiseData,
    *,
    raters: Sequence[str] | None = None,
    invalid: Literal["drop", "category"] = "drop",
    confidence_level: float = 0.95,
    n_resamples: int = 1000,
    rng: np.random.Generator | int | None = None,
    batch: int | None = None,
) -> RaterAlpha:
    """Krippendorff's alpha (nominal; A, B, tie) among several raters' original-order verdicts.

    Items with fewer than two values are not pairable and add nothing. ``invalid='drop'`` treats an invalid
    verdict as no value, ``'category'`` as a fourth category. Default raters: the human annotators. The
    interval resamples items (the per-item coincidences are additive).

    References
    ----------
    docs/methods.md sec. 18.3; Krippendorff (2011), Computing Krippendorff's Alpha-Reliability.
    """
    if not isinstance(data, PairwiseData):
        raise TypeError(f"data must be a PairwiseData (from load_pairwise); got {type(data).__name__}")
    check_choice(invalid, "invalid", ("drop", "category"))
    level, k, batch = kern.check_resampling(confidence_level, n_resamples, batch)
    names = list(data.humans) if raters is None else _judges(data, raters)
    if len(names) < 2:
        raise ValueError(f"raters: alpha needs at least two raters; got {len(names)}")
    codes = data.verdicts[:, [data.rater_index(r) for r in names], 0].astype(np.int64)
    n_categories = 4 if invalid == "category" else 3
    if invalid == "drop":
        codes = np.where(codes == INVALID, MISSING, codes)
    columns = _coincidences(codes, n_categories)
    boot = kern.bootstrap(columns, lambda sums: kern.alpha_from_coincidences(sums, n_categories), n_resamples=k,
                          rng=kern.seed_of(rng), batch=batch, confidence_level=level)
    values = (codes != MISSING).sum(axis=1)
    return RaterAlpha(raters=tuple(names), estimate=float(boot.estimate), low=float(boot.low), high=float(boot.high),
                      n_items=int((values >= 2).sum()), n_values=int(values[values >= 2].sum()), invalid=invalid,
                      n_defined=int(boot.defined), confidence_level=level, n_resamples=k)


@dataclass(frozen=True)
class SubsetAgreement(ToFrame):
    """Agreement per subset (a pair set or the values of an item attribute) and judge, with chance tests.

    ``rows`` are the :class:`JudgeAgreement` rows of every subset; ``subsets[k]`` names the subset of
    ``rows[k]``. ``chance_pvalue`` is each row's permutation p-value against its chance baseline (verdicts
    permuted within the subset) and ``chance_pvalue_corrected`` the same corrected over all rows (every
    subset and judge is one family, ``correction``), so "better than chance" holds across many subsets.
    """

    by: str
    subsets: tuple[str, ...]
    rows: tuple[JudgeAgreement, ...]
    chance_pvalue: np.ndarray
    chance_pvalue_corrected: np.ndarray
    correction: str

    def to_records(self) -> list[dict]:
        return [{"by": self.by, "subset": s, **r.to_dict(), "chance_pvalue": kern.num(p),
                 "chance_pvalue_corrected": kern.num(q), "correction": self.correction}
                for s, r, p, q in zip(self.subsets, self.rows, self.chance_pvalue, self.chance_pvalue_corrected)]


#: Most subsets (pair sets or attribute values) a breakdown computes: each is a bootstrap and a chance test
#: (20,000 pair sets once ran 102 s).
MAX_SUBSETS = 60


def agreement_by_subset(
    data: PairwiseData,
    by: str = "pair_set",
    *,
    judges: Sequence[str] | None = None,
    statistic: Statistic = "accuracy",
    reference: str = "auto",
    order: OrderMode = "original",
    ties: Ties = "three-class",
    invalid: Invalid = "wrong",
    no_majority: NoMajority = "tie",
    correction: Correction = "holm",
    confidence_level: float = 0.95,
    n_resamples: int = 1000,
    rng: np.random.Generator | int | None = None,
    batch: int | None = None,
) -> SubsetAgreement:
    """:func:`judge_agreement` on each subset (``by='pair_set'`` or an item attribute), with chance tests
    corrected over all subsets and judges.

    Each subset is resampled on its own items (the same seed per subset); judges without verdicts in a subset
    are skipped there (``judges=None``) or reported undefined (named judges).

    References
    ----------
    docs/methods.md sec. 18.2, 18.4 and sec. 3 (corrections).
    """
    check_choice(correction, "correction", CORRECTIONS)
    if not isinstance(data, PairwiseData):
        raise TypeError(f"data must be a PairwiseData (from load_pairwise); got {type(data).__name__}")
    values = data.pair_sets if by == "pair_set" else data.subsets(by)
    if len(values) > MAX_SUBSETS:  # each subset is a bootstrap and a chance test: capped before any runs
        raise ValueError(f"{'pair set' if by == 'pair_set' else repr(by)} has {len(values):,} values; a breakdown "
                         f"shows at most {MAX_SUBSETS} subsets; choose one pair set, or an attribute with fewer values")
    if by == "pair_set":
        parts = [(name, data.select_pair_set(name)) for name in data.pair_sets]
    else:
        parts = [(value, data.select_subset(by, value)) for value in data.subsets(by)]
    seed = kern.seed_of(rng)
    subsets, rows, pvalues = [], [], []
    for name, part in parts:
        chosen = list(part.judges_of() if judges is None else judges)
        if not chosen:
            continue
        options = dict(judges=chosen, statistic=statistic, reference=reference, order=order, ties=ties,
                       invalid=invalid, no_majority=no_majority, confidence_level=confidence_level,
                       n_resamples=n_resamples, batch=batch)
        table = judge_agreement(part, rng=seed, **options)
        chance = chance_baseline(part, rng=seed, **options)
        subsets += [name] * len(table.rows)
        rows += list(table.rows)
        pvalues += [c.pvalue for c in chance]
    if not rows:
        raise DatasetError(f"dataset {data.id!r}: no subset of {by!r} has a judge with verdicts")
    p = np.array(pvalues, dtype=float)
    return SubsetAgreement(by=by, subsets=tuple(subsets), rows=tuple(rows), chance_pvalue=p,
                           chance_pvalue_corrected=correct_pvalues(p, method=correction), correction=correction)


__all__ = ["AgreementTable", "JudgeChanceBaseline", "JudgeAgreement", "chance_baseline", "human_ceiling",
           "judge_agreement", "resolve_reference", "RaterAlpha", "rater_alpha", "SubsetAgreement",
           "agreement_by_subset", "INVALID_CONVENTIONS", "ORDER_MODES", "STATISTICS",
           "TIE_CONVENTIONS"]
