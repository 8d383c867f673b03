"""Simulations that judge the resampling methods themselves (docs/methods.md sec. 9; TACL 2021 sec. 5).

* :func:`ci_coverage` -- how often a 95% interval computed on half of the systems
  and half of the inputs contains the correlation on the *other* halves (TACL
  Table 1). A method that generalises to new systems and new inputs should come
  close to the nominal level.
* :func:`power_curve` -- how often a test detects that a metric ``X`` is better
  than a degraded copy ``Y_k`` of it (TACL Fig. 3). With texts, ``Y_k`` is
  ROUGE-1 computed on a random ``k``% of each summary's tokens (``X`` is ROUGE-1
  on the full summaries, both from the same counts); without texts, ``Y_k`` is
  ``X`` plus Gaussian noise whose sd is ``k`` times the sd of ``X``'s cells.

Randomness. Everything a run draws comes from one seed, in a fixed order, so the
same seed gives the same result whatever ``batch`` is, and a run stopped early
(``should_stop``) returns exactly the first trials of the full run:

* coverage: the split permutations of every trial (systems ``(T, N)``, then
  inputs ``(T, M)``) are drawn up front from the Generator, then 128 bits of
  entropy; the bootstrap of method ``m`` in trial ``t`` uses its own stream,
  ``SeedSequence(entropy, spawn_key=(t, index of m in CI_METHODS))``;
* power: the root entropy is drawn first; trial ``t`` draws its degradation
  (token order or noise) from stream ``(t, 0)`` and test ``s`` uses stream
  ``(t, 1 + index of s in TEST_METHODS)``. The streams do not depend on ``k``:
  the points of a curve share common random numbers (the ``k``% token samples
  of one trial are nested; the noise is one draw scaled by ``k``), which makes
  the curve smoother without biasing any point.

The ROUGE-1 of a random ``k``% subsample is counted in numpy from per-summary
token groups precomputed once with ``rouge-score``'s tokenizer and Porter
stemmer (no data files needed); :class:`Rouge1Counts` is tested to equal
``rouge_score.rouge_scorer.RougeScorer(['rouge1'], use_stemmer=True)`` exactly,
on full summaries and on subsamples.

References: docs/methods.md sec. 9; Deutsch, Dror & Roth (TACL 2021) sec. 5.1 (Table 1)
and sec. 5.2 (Fig. 3).
"""

from __future__ import annotations

import math
import numbers
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Literal, Sequence, get_args

import numpy as np

from metaeval_core._checks import (
    as_generator,
    check_callable,
    check_choice,
    check_confidence_level,
    check_dataset,
    check_int,
    check_probability,
)
from metaeval_core.stats.coefficients import Coefficient, validate_coefficient
from metaeval_core.stats.correlation import Level, correlate_matrices, correlation_inputs, validate_level
from metaeval_core.data.dataset import Dataset
from metaeval_core.stats.resampling import CI_METHODS, CIMethod, confidence_interval
from metaeval_core.stats.significance import TEST_METHODS, TestMethod, compare_metrics
from metaeval_core.data.texts import SummaryTexts

Degrade = Literal["tokens", "noise"]
DEGRADES: tuple[str, ...] = get_args(Degrade)
RougeVariant = Literal["f1", "recall", "precision"]
ROUGE_VARIANTS: tuple[str, ...] = get_args(RougeVariant)

DEFAULT_CI_METHODS: tuple[str, ...] = ("fisher", "boot-systems", "boot-inputs", "boot-both")
DEFAULT_TESTS: tuple[str, ...] = ("perm-both", "boot-both", "williams")
# TACL Fig. 3 varies k over 10%..90% of the tokens; k = 100 would be X itself.
DEFAULT_TOKEN_KS: tuple[float, ...] = (10, 20, 30, 40, 50, 60, 70, 80, 90)
# Noise sd as multiples of the sd of X's cells: from barely visible to swamping X.
DEFAULT_NOISE_KS: tuple[float, ...] = (0.25, 0.5, 1.0, 2.0, 4.0)

# ROUGE-1 measure names accepted as ``metric`` with degrade='tokens' (variant in the suffix).
_ROUGE1_NAME = re.compile(r"^rouge[-_]?1[._-](f1|fmeasure|recall|precision)$", re.IGNORECASE)


# ============================================================================================
# Shared helpers
# ============================================================================================
def _stream(entropy: Sequence[int], *key: int) -> np.random.Generator:
    """An independent generator for one (trial, purpose): a child of the run's root seed."""
    return np.random.default_rng(np.random.SeedSequence(list(entropy), spawn_key=tuple(int(k) for k in key)))


def _root_entropy(generator: np.random.Generator) -> tuple[int, ...]:
    return tuple(int(v) for v in generator.integers(0, 2**32, size=4))


def _check_names(values: object, name: str, choices: Sequence[str]) -> tuple[str, ...]:
    if isinstance(values, str) or not isinstance(values, Sequence):
        raise TypeError(f"{name} must be a sequence of names from {', '.join(choices)}; got {values!r}")
    values = tuple(values)
    if not values:
        raise ValueError(f"{name} must name at least one of {', '.join(choices)}")
    for v in values:
        if v not in choices:
            raise ValueError(f"{name} must hold names from {', '.join(repr(c) for c in choices)}; got {v!r}")
    if len(set(values)) != len(values):
        raise ValueError(f"{name} must not repeat a name; got {values!r}")
    return values


class _Trials:
    """``for t in _Trials(n, progress, should_stop)``: trials 0..n-1, reporting the fraction done
    after each; ends early, with ``stopped`` True, when ``should_stop()`` says so before a trial.
    ``done`` counts the trials completed."""

    def __init__(self, n_trials: int, progress: Callable[[float], object] | None,
                 should_stop: Callable[[], bool] | None):
        self.n_trials = n_trials
        self.report = progress if progress is not None else (lambda fraction: None)
        self.should_stop = should_stop
        self.done = 0
        self.stopped = False

    def __iter__(self):
        self.report(0.0)
        for t in range(self.n_trials):
            if self.should_stop is not None and self.should_stop():
                self.stopped = True
                return
            yield t
            self.done = t + 1
            self.report(self.done / self.n_trials)


def _binomial_se(share: float, n: int) -> float:
    return math.sqrt(share * (1.0 - share) / n) if n > 0 and math.isfinite(share) else math.nan


def _num(value) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None


def _dataset_matrices(dataset: object, metric: object, human: object, level: str, systems: object,
                      metric_needed: bool = True) -> tuple[Dataset, np.ndarray | None, np.ndarray]:
    check_dataset(dataset)
    if not isinstance(metric, str):
        raise TypeError(f"metric must be a measure name (str); got {type(metric).__name__}")
    if not isinstance(human, str):
        raise TypeError(f"human must be a measure name (str); got {type(human).__name__}")
    subset = dataset.select_systems(systems)
    if metric_needed:
        x, z = correlation_inputs(subset, metric, human, level=level, pool="judged")
        return subset, np.asarray(x, dtype=np.float64), np.asarray(z, dtype=np.float64)
    _, z = correlation_inputs(subset, human, human, level=level, pool="judged")
    return subset, None, np.asarray(z, dtype=np.float64)


# ============================================================================================
# CI coverage (TACL sec. 5.1, Table 1)
# ============================================================================================
@dataclass(frozen=True)
class CoverageSplits:
    """The random halves of every trial, drawn up front (shared by the fast code and the oracles).

    ``systems_a[t]``/``systems_b[t]`` and ``inputs_a[t]``/``inputs_b[t]`` are sorted
    indices of disjoint halves of equal size ``floor(N / 2)`` and ``floor(M / 2)`` (with
    an odd count, one system or input sits out of the trial). ``entropy`` seeds the
    bootstrap streams: :meth:`rng` for trial ``t`` and method ``m``.
    """

    systems_a: np.ndarray
    systems_b: np.ndarray
    inputs_a: np.ndarray
    inputs_b: np.ndarray
    entropy: tuple[int, ...]

    @property
    def n_trials(self) -> int:
        return int(self.systems_a.shape[0])

    def rng(self, trial: int, method: str) -> np.random.Generator:
        """The bootstrap stream of ``method`` in ``trial`` (independent of the other methods)."""
        return _stream(self.entropy, trial, CI_METHODS.index(method))


def draw_coverage_splits(rng: np.random.Generator | int | None, n_trials: int, n_systems: int,
                         n_inputs: int) -> CoverageSplits:
    """Draw the halves of ``n_trials`` coverage trials: system permutations, input permutations, entropy.

    References
    ----------
    docs/methods.md sec. 9; TACL 2021 sec. 5.1.
    """
    generator = as_generator(rng)
    n_trials = check_int(n_trials, "n_trials")
    n_systems = check_int(n_systems, "n_systems")
    n_inputs = check_int(n_inputs, "n_inputs")
    systems = generator.permuted(np.tile(np.arange(n_systems), (n_trials, 1)), axis=1)
    inputs = generator.permuted(np.tile(np.arange(n_inputs), (n_trials, 1)), axis=1)
    hs, hi = n_systems // 2, n_inputs // 2
    return CoverageSplits(
        systems_a=np.sort(systems[:, :hs], axis=1), systems_b=np.sort(systems[:, hs:2 * hs], axis=1),
        inputs_a=np.sort(inputs[:, :hi], axis=1), inputs_b=np.sort(inputs[:, hi:2 * hi], axis=1),
        entropy=_root_entropy(generator),
    )


@dataclass(frozen=True)
class CoverageRow:
    """Coverage of one interval method.

    Attributes
    ----------
    method : str
    coverage : float
        Share of the valid trials whose interval on the A halves contains the
        correlation on the B halves (bounds inclusive); NaN with no valid trial.
    se : float
        Binomial standard error ``sqrt(c (1 - c) / n_valid)``.
    n_covered, n_valid : int
    n_undefined : int
        Trials left out because the interval or the held-out correlation was undefined.
    mean_width : float
        Mean ``high - low`` over the trials whose interval was defined.
    mean_low, mean_high : float
        Mean bounds over the same trials.
    """

    method: str
    coverage: float
    se: float
    n_covered: int
    n_valid: int
    n_undefined: int
    mean_width: float
    mean_low: float
    mean_high: float

    def to_dict(self) -> dict:
        return {"method": self.method, "coverage": _num(self.coverage), "se": _num(self.se),
                "n_covered": self.n_covered, "n_valid": self.n_valid, "n_undefined": self.n_undefined,
                "mean_width": _num(self.mean_width), "mean_low": _num(self.mean_low),
                "mean_high": _num(self.mean_high)}


@dataclass(frozen=True)
class CoverageResult:
    """The outcome of :func:`ci_coverage`.

    Attributes
    ----------
    rows : tuple of CoverageRow
        One per method, in the order asked.
    metric, human, level, coefficient : str
    confidence_level : float
    n_resamples : int
    n_trials : int
        Trials asked for.
    n_completed : int
        Trials run (fewer than ``n_trials`` when stopped).
    stopped : bool
        True when ``should_stop`` ended the run early: the rows summarise the first
        ``n_completed`` trials, exactly those of the full run.
    half_systems, half_inputs : int
        Systems and inputs in each half.
    methods : tuple of str
    low, high : numpy.ndarray, shape (n_completed, n_methods)
        Every trial's interval (NaN where undefined).
    estimate_a, target : numpy.ndarray, shape (n_completed,)
        The correlation on the A halves and on the B halves (the target).
    """

    rows: tuple[CoverageRow, ...]
    metric: str
    human: str
    level: str
    coefficient: str
    confidence_level: float
    n_resamples: int
    n_trials: int
    n_completed: int
    stopped: bool
    half_systems: int
    half_inputs: int
    methods: tuple[str, ...]
    low: np.ndarray
    high: np.ndarray
    estimate_a: np.ndarray
    target: np.ndarray

    def row(self, method: str) -> CoverageRow:
        for r in self.rows:
            if r.method == method:
                return r
        raise KeyError(method)

    def to_records(self) -> list[dict]:
        """One dict per method: the row plus what was simulated."""
        context = {"metric": self.metric, "human": self.human, "level": self.level,
                   "coefficient": self.coefficient, "confidence_level": self.confidence_level,
                   "n_resamples": self.n_resamples, "n_trials": self.n_trials, "n_completed": self.n_completed,
                   "stopped": self.stopped, "half_systems": self.half_systems, "half_inputs": self.half_inputs}
        return [{**r.to_dict(), **context} for r in self.rows]


def _summarise_coverage(methods, low, high, target) -> tuple[CoverageRow, ...]:
    rows = []
    for m, method in enumerate(methods):
        lo, hi = low[:, m], high[:, m]
        defined = np.isfinite(lo) & np.isfinite(hi)
        valid = defined & np.isfinite(target)
        covered = valid & (lo <= target) & (target <= hi)
        n_valid, n_covered = int(valid.sum()), int(covered.sum())
        share = n_covered / n_valid if n_valid else math.nan
        rows.append(CoverageRow(
            method=method, coverage=share, se=_binomial_se(share, n_valid), n_covered=n_covered, n_valid=n_valid,
            n_undefined=int(len(target) - n_valid),
            mean_width=float(np.mean(hi[defined] - lo[defined])) if defined.any() else math.nan,
            mean_low=float(np.mean(lo[defined])) if defined.any() else math.nan,
            mean_high=float(np.mean(hi[defined])) if defined.any() else math.nan,
        ))
    return tuple(rows)


def _ci_coverage_iv(dataset, metric, human, level, coefficient, methods, n_trials, n_resamples, confidence_level,
                    rng, batch, systems, progress, should_stop):
    validate_level(level)
    validate_coefficient(coefficient)
    methods = _check_names(methods, "methods", CI_METHODS)
    n_trials = check_int(n_trials, "n_trials")
    n_resamples = check_int(n_resamples, "n_resamples")
    confidence_level = check_confidence_level(confidence_level)
    batch = check_int(batch, "batch", allow_none=True)
    generator = as_generator(rng)
    check_callable(progress, "progress", "taking a fraction in [0, 1]")
    check_callable(should_stop, "should_stop", "returning True to stop")
    subset, x, z = _dataset_matrices(dataset, metric, human, level, systems)
    n, m = z.shape
    if n < 4 or m < 2:
        raise ValueError(
            f"dataset must have at least 4 systems and 2 judged inputs to split into halves; got {n} and {m}"
        )
    return x, z, methods, n_trials, n_resamples, confidence_level, generator, batch


def ci_coverage(
    dataset: Dataset,
    metric: str,
    human: str,
    *,
    level: Level,
    coefficient: Coefficient,
    methods: Sequence[CIMethod] = DEFAULT_CI_METHODS,
    n_trials: int = 1000,
    n_resamples: int = 1000,
    confidence_level: float = 0.95,
    rng: np.random.Generator | int | None = None,
    batch: int | None = None,
    systems: str | None = None,
    progress: Callable[[float], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> CoverageResult:
    """Coverage of confidence-interval methods on held-out systems and inputs.

    Each trial splits the systems and the judged inputs at random into halves A
    and B, computes each method's interval for ``r(metric, human)`` on (A systems,
    A inputs) and records whether the correlation on (B systems, B inputs) lies
    inside it. A method that generalises to new systems *and* new inputs covers
    the held-out value about ``confidence_level`` of the time.

    Parameters
    ----------
    dataset : Dataset
    metric, human : str
        Measure names (the metric's judged pool).
    level : {'system', 'input', 'global'}
    coefficient : {'pearson', 'spearman', 'kendall'}
        TACL Table 1 uses Pearson.
    methods : sequence of {'fisher', 'boot-systems', 'boot-inputs', 'boot-both'}
        Interval methods, as in :func:`~metaeval_core.stats.resampling.confidence_interval`.
    n_trials : int, default 1000
        Random splits (TACL: 1000).
    n_resamples : int, default 1000
        Bootstrap resamples per interval.
    confidence_level : float, default 0.95
    rng : numpy.random.Generator, int or None
        The splits are drawn up front from it, then the root of the bootstrap streams
        (see the module notes); an int seeds ``numpy.random.default_rng``.
    batch : int, optional
        Passed to the bootstrap (speed/memory only: results do not depend on it).
    systems : str, optional
        A system subset such as ``"type=abs"`` before splitting.
    progress : callable, optional
        Called with the fraction of trials done (0 to 1).
    should_stop : callable, optional
        Polled before every trial; when it returns True the run stops and the result,
        flagged ``stopped``, summarises the trials completed.

    Returns
    -------
    CoverageResult

    Notes
    -----
    Halves have ``floor(N / 2)`` systems and ``floor(M / 2)`` inputs, so A and B are
    equally sized (TACL: "two equally sized disjoint sets"); with an odd count one
    system or input sits out of that trial. A trial counts as covered when
    ``low <= r_B <= high``. Trials whose interval is undefined (e.g. Fisher with
    ``n <= b``, or no defined resample) or whose held-out correlation is undefined are
    left out of that method's coverage and counted in ``n_undefined``. ``se`` is the
    binomial standard error of the coverage. Following TACL (footnote 8), Fisher at the
    input level is applied to the averaged input-level correlation, with docs/methods.md sec. 2's
    ``n`` (the largest number of valid systems in any input).

    References
    ----------
    docs/methods.md sec. 2 and 9; Deutsch, Dror & Roth (TACL 2021) sec. 5.1 and Table 1.
    """
    x, z, methods, n_trials, n_resamples, confidence_level, generator, batch = _ci_coverage_iv(
        dataset, metric, human, level, coefficient, methods, n_trials, n_resamples, confidence_level, rng, batch,
        systems, progress, should_stop,
    )
    splits = draw_coverage_splits(generator, n_trials, z.shape[0], z.shape[1])
    low = np.full((n_trials, len(methods)), np.nan)
    high = np.full((n_trials, len(methods)), np.nan)
    estimate_a = np.full(n_trials, np.nan)
    target = np.full(n_trials, np.nan)
    trials = _Trials(n_trials, progress, should_stop)
    for t in trials:
        a = np.ix_(splits.systems_a[t], splits.inputs_a[t])
        b = np.ix_(splits.systems_b[t], splits.inputs_b[t])
        xa, za = x[a], z[a]
        target[t] = float(correlate_matrices(x[b], z[b], level=level, coefficient=coefficient).estimate)
        for k, method in enumerate(methods):
            ci = confidence_interval(xa, za, level=level, coefficient=coefficient, method=method,
                                     confidence_level=confidence_level, n_resamples=n_resamples,
                                     rng=splits.rng(t, method), batch=batch)
            low[t, k], high[t, k] = ci.low, ci.high
            estimate_a[t] = ci.estimate
    done, stopped = trials.done, trials.stopped
    low, high, estimate_a, target = low[:done], high[:done], estimate_a[:done], target[:done]
    return CoverageResult(
        rows=_summarise_coverage(methods, low, high, target), metric=metric, human=human, level=level,
        coefficient=coefficient, confidence_level=confidence_level, n_resamples=n_resamples, n_trials=n_trials,
        n_completed=done, stopped=stopped, half_systems=int(splits.systems_a.shape[1]),
        half_inputs=int(splits.inputs_a.shape[1]), methods=methods, low=low, high=high, estimate_a=estimate_a,
        target=target,
    )


# ============================================================================================
# ROUGE-1 on a random k% of each summary's tokens (TACL sec. 5.2)
# ============================================================================================
@lru_cache(maxsize=1)
def _rouge_tokenizer():
    # Imported lazily (nltk is slow to import). use_stemmer=True uses nltk's Porter stemmer,
    # which is pure code: no nltk data download is needed.
    from rouge_score import tokenizers

    return tokenizers.DefaultTokenizer(use_stemmer=True)


@lru_cache(maxsize=16384)
def rouge_tokens(text: str) -> tuple[str, ...]:
    """``rouge-score``'s ROUGE tokens of ``text``: lower-cased, alphanumeric, Porter-stemmed.

    References
    ----------
    rouge-score 0.1.2 (``tokenizers.DefaultTokenizer(use_stemmer=True)``).
    """
    return tuple(_rouge_tokenizer().tokenize(text))


def subsample_sizes(lengths: np.ndarray, k: float) -> np.ndarray:
    """Tokens kept from summaries of ``lengths`` tokens at ``k``%: ``floor(length * k / 100)``.

    The product is formed before dividing, so an integer ``k`` that divides exactly gives
    the exact count (the rounding of TACL's implementation, SacreROUGE's simulations).
    """
    return np.floor(np.asarray(lengths, dtype=np.float64) * float(k) / 100.0).astype(np.int64)


@dataclass(frozen=True, eq=False)
class Rouge1Counts:
    """Unigram counts for ROUGE-1 of every summary, on all its tokens or a random subsample.

    A *group* is one token type within one summary: ``group_cell`` is its summary
    (cell ``i * M + j``), ``group_cap`` how often the type occurs in the reference.
    Token positions are stored contiguously by cell: ``position_cell`` and
    ``position_group`` give the cell and the group of each position, ``cell_start``
    the first position of each cell. The overlap of a sample is
    ``sum_g min(#sampled positions of g, group_cap[g])`` -- ROUGE-1's clipped count.

    Build with :meth:`from_texts` (rouge-score tokens) or :meth:`from_tokens`.

    References
    ----------
    docs/methods.md sec. 9; TACL 2021 sec. 5.2; Lin (2004).
    """

    shape: tuple[int, int]
    present: np.ndarray
    lengths: np.ndarray
    reference_lengths: np.ndarray
    position_cell: np.ndarray
    position_group: np.ndarray
    cell_start: np.ndarray
    group_cell: np.ndarray
    group_cap: np.ndarray

    @classmethod
    def from_tokens(cls, summaries: Sequence[Sequence[Sequence[str] | None]],
                    references: Sequence[Sequence[str]]) -> "Rouge1Counts":
        """From token lists: ``summaries[i][j]`` (None where missing) and ``references[j]``."""
        rows = [list(r) for r in summaries]
        n = len(rows)
        m = len(references)
        if n == 0 or m == 0 or any(len(r) != m for r in rows):
            raise ValueError(f"summaries must be an N x M nested sequence matching the {m} references")
        reference_counts = []
        for ref in references:
            counts: dict[str, int] = {}
            for token in ref:
                counts[token] = counts.get(token, 0) + 1
            reference_counts.append(counts)
        present = np.zeros((n, m), dtype=bool)
        lengths = np.zeros(n * m, dtype=np.int64)
        reference_lengths = np.zeros(n * m, dtype=np.int64)
        position_cell, position_group, group_cell, group_cap = [], [], [], []
        for i, row in enumerate(rows):
            for j, tokens in enumerate(row):
                cell = i * m + j
                reference_lengths[cell] = len(references[j])
                if tokens is None:
                    continue
                present[i, j] = True
                lengths[cell] = len(tokens)
                local: dict[str, int] = {}
                for token in tokens:
                    g = local.get(token)
                    if g is None:
                        g = local[token] = len(group_cell)
                        group_cell.append(cell)
                        group_cap.append(reference_counts[j].get(token, 0))
                    position_cell.append(cell)
                    position_group.append(g)
        cell_start = np.zeros(n * m, dtype=np.int64)
        cell_start[1:] = np.cumsum(lengths)[:-1]
        return cls(
            shape=(n, m), present=present, lengths=lengths, reference_lengths=reference_lengths,
            position_cell=np.asarray(position_cell, dtype=np.int64),
            position_group=np.asarray(position_group, dtype=np.int64), cell_start=cell_start,
            group_cell=np.asarray(group_cell, dtype=np.int64), group_cap=np.asarray(group_cap, dtype=np.int64),
        )

    @classmethod
    def from_texts(cls, texts: SummaryTexts) -> "Rouge1Counts":
        """From raw texts, tokenised (once per distinct text) as rouge-score does with ``use_stemmer=True``."""
        if not isinstance(texts, SummaryTexts):
            raise TypeError(f"texts must be SummaryTexts; got {type(texts).__name__}")
        summaries = [[None if s is None else rouge_tokens(s) for s in row] for row in texts.summaries]
        return cls.from_tokens(summaries, [rouge_tokens(r) for r in texts.references])

    @property
    def n_positions(self) -> int:
        return int(self.position_cell.size)

    def draw_ranks(self, rng: np.random.Generator) -> np.ndarray:
        """A uniformly random order of every summary's tokens: the rank of each position in its cell.

        Keeping the positions of rank ``< m`` is a uniform sample of ``m`` tokens without
        replacement; one draw serves every ``k`` (the samples are nested).
        """
        keys = rng.random(self.n_positions)
        # Cells are integers and keys lie in [0, 1): sorting cell + key orders by cell, then key.
        order = np.argsort(self.position_cell + keys, kind="stable")
        ranks = np.empty(self.n_positions, dtype=np.int64)
        ranks[order] = np.arange(self.n_positions) - self.cell_start[self.position_cell[order]]
        return ranks

    def counts(self, k: float | None = None, ranks: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Per cell (flat): the clipped overlap with the reference and the number of tokens scored.

        ``k=None`` (or 100) scores the full summaries; otherwise ``ranks`` from
        :meth:`draw_ranks` selects ``floor(length * k / 100)`` tokens of each summary.
        """
        n_cells = self.shape[0] * self.shape[1]
        if k is None or ranks is None:
            if k is not None and float(k) != 100.0:
                raise ValueError("ranks must be given to score a k% subsample (draw them with draw_ranks)")
            sampled = np.bincount(self.position_group, minlength=self.group_cell.size)
            kept = self.lengths
        else:
            kept = subsample_sizes(self.lengths, k)
            selected = ranks < kept[self.position_cell]
            sampled = np.bincount(self.position_group[selected], minlength=self.group_cell.size)
        clipped = np.minimum(sampled, self.group_cap)
        overlap = np.bincount(self.group_cell, weights=clipped, minlength=n_cells).astype(np.int64)
        return overlap, kept

    def scores(self, variant: RougeVariant, k: float | None = None, ranks: np.ndarray | None = None) -> np.ndarray:
        """ROUGE-1 ``variant`` of every summary as an (N, M) matrix, NaN where there is no summary.

        Precision ``o / max(m, 1)``, recall ``o / max(|ref|, 1)`` and F1 ``2 P R / (P + R)`` (0
        when both are 0), in rouge-score's floating-point order, so the full-summary values
        equal ``RougeScorer(['rouge1'], use_stemmer=True)`` exactly.
        """
        check_choice(variant, "variant", ROUGE_VARIANTS)
        overlap, kept = self.counts(k, ranks)
        overlap = overlap.astype(np.float64)
        precision = overlap / np.maximum(kept, 1)
        recall = overlap / np.maximum(self.reference_lengths, 1)
        if variant == "precision":
            values = precision
        elif variant == "recall":
            values = recall
        else:
            total = precision + recall
            with np.errstate(invalid="ignore", divide="ignore"):
                values = np.where(total > 0, 2 * precision * recall / total, 0.0)
        out = values.reshape(self.shape)
        return np.where(self.present, out, np.nan)


def rouge1_variant(metric: str) -> str | None:
    """The ROUGE-1 variant a measure name denotes (``'rouge-1.f1'`` -> ``'f1'``), or None."""
    match = _ROUGE1_NAME.match(metric) if isinstance(metric, str) else None
    if match is None:
        return None
    variant = match.group(1).lower()
    return "f1" if variant == "fmeasure" else variant


# ============================================================================================
# Power (TACL sec. 5.2, Fig. 3)
# ============================================================================================
class _TokenDegrader:
    """Y_k = ROUGE-1 on a random k% of each summary's tokens; X = the same on all tokens."""

    def __init__(self, counts: Rouge1Counts, variant: str):
        self.counts, self.variant = counts, variant
        self.x = counts.scores(variant)

    def draw(self, rng: np.random.Generator) -> np.ndarray:
        return self.counts.draw_ranks(rng)

    def degrade(self, draw: np.ndarray, k: float) -> np.ndarray:
        return self.counts.scores(self.variant, k, draw)


class _NoiseDegrader:
    """Y_k = X + k * sd(X) * eps, eps standard normal per cell (one draw per trial, scaled by k)."""

    def __init__(self, x: np.ndarray):
        self.x = x
        values = x[~np.isnan(x)]
        self.sd = float(values.std()) if values.size else 0.0

    def draw(self, rng: np.random.Generator) -> np.ndarray:
        return rng.standard_normal(self.x.shape)

    def degrade(self, draw: np.ndarray, k: float) -> np.ndarray:
        return self.x + (float(k) * self.sd) * draw


@dataclass(frozen=True)
class PowerRow:
    """Power of one test at one degradation level ``k``.

    Attributes
    ----------
    test : str
    k : float
        Percent of tokens kept (``degrade='tokens'``) or noise sd in units of X's sd
        (``degrade='noise'``).
    power : float
        Share of the valid trials with ``p < alpha`` (H0 rejected in favour of X).
    se : float
        Binomial standard error.
    n_rejected, n_valid : int
    n_undefined : int
        Trials whose p-value was undefined (left out).
    mean_pvalue : float
    mean_delta : float
        Mean ``r(X, Z) - r(Y_k, Z)`` over the trials.
    mean_estimate_y : float
        Mean ``r(Y_k, Z)``.
    """

    test: str
    k: float
    power: float
    se: float
    n_rejected: int
    n_valid: int
    n_undefined: int
    mean_pvalue: float
    mean_delta: float
    mean_estimate_y: float

    def to_dict(self) -> dict:
        return {"test": self.test, "k": self.k, "power": _num(self.power), "se": _num(self.se),
                "n_rejected": self.n_rejected, "n_valid": self.n_valid, "n_undefined": self.n_undefined,
                "mean_pvalue": _num(self.mean_pvalue), "mean_delta": _num(self.mean_delta),
                "mean_estimate_y": _num(self.mean_estimate_y)}


@dataclass(frozen=True)
class PowerResult:
    """The outcome of :func:`power_curve`.

    Attributes
    ----------
    rows : tuple of PowerRow
        Test-major, then ``k`` in the order asked.
    metric, human, level, coefficient, degrade : str
    variant : str
        The ROUGE-1 variant (``degrade='tokens'``), else ``''``.
    estimate_x : float
        ``r(X, Z)`` on the full data.
    alpha : float
    n_resamples, n_trials, n_completed : int
    stopped : bool
        True when ``should_stop`` ended the run early (every ``k`` has ``n_completed`` trials,
        exactly the first trials of the full run).
    tests : tuple of str
    ks : tuple of float
    pvalues : numpy.ndarray, shape (n_completed, n_ks, n_tests)
    estimate_y : numpy.ndarray, shape (n_completed, n_ks)
    noise_sd : float
        The sd of X's cells (``degrade='noise'``; NaN otherwise).
    """

    rows: tuple[PowerRow, ...]
    metric: str
    human: str
    level: str
    coefficient: str
    degrade: str
    variant: str
    estimate_x: float
    alpha: float
    n_resamples: int
    n_trials: int
    n_completed: int
    stopped: bool
    tests: tuple[str, ...]
    ks: tuple[float, ...]
    pvalues: np.ndarray
    estimate_y: np.ndarray
    noise_sd: float = math.nan

    def power(self, test: str, k: float) -> float:
        for r in self.rows:
            if r.test == test and r.k == k:
                return r.power
        raise KeyError((test, k))

    def to_records(self) -> list[dict]:
        """One dict per (test, k): the row plus what was simulated."""
        context = {"metric": self.metric, "human": self.human, "level": self.level,
                   "coefficient": self.coefficient, "degrade": self.degrade, "alpha": self.alpha,
                   "estimate_x": _num(self.estimate_x), "n_resamples": self.n_resamples,
                   "n_trials": self.n_trials, "n_completed": self.n_completed, "stopped": self.stopped}
        return [{**r.to_dict(), **context} for r in self.rows]


def _summarise_power(tests, ks, pvalues, estimate_y, estimate_x, alpha) -> tuple[PowerRow, ...]:
    rows = []
    for s, test in enumerate(tests):
        for q, k in enumerate(ks):
            p = pvalues[:, q, s]
            valid = ~np.isnan(p)
            n_valid = int(valid.sum())
            n_rejected = int((p[valid] < alpha).sum())
            share = n_rejected / n_valid if n_valid else math.nan
            ey = estimate_y[:, q]
            rows.append(PowerRow(
                test=test, k=k, power=share, se=_binomial_se(share, n_valid), n_rejected=n_rejected,
                n_valid=n_valid, n_undefined=int(p.size - n_valid),
                mean_pvalue=float(p[valid].mean()) if n_valid else math.nan,
                mean_delta=float(np.nanmean(estimate_x - ey)) if np.isfinite(ey).any() else math.nan,
                mean_estimate_y=float(np.nanmean(ey)) if np.isfinite(ey).any() else math.nan,
            ))
    return tuple(rows)


def _check_ks(ks: object, degrade: str) -> tuple[float, ...]:
    if ks is None:
        return DEFAULT_TOKEN_KS if degrade == "tokens" else DEFAULT_NOISE_KS
    if isinstance(ks, (str, bytes)) or not isinstance(ks, Sequence):
        raise TypeError(f"ks must be a sequence of numbers; got {ks!r}")
    values = []
    for k in ks:
        if isinstance(k, (bool, np.bool_)) or not isinstance(k, numbers.Real) or not math.isfinite(float(k)):
            raise TypeError(f"ks must hold finite numbers; got {k!r}")
        if degrade == "tokens" and not 0.0 < float(k) <= 100.0:
            raise ValueError(f"ks must be percentages of tokens kept, in (0, 100], with degrade='tokens'; got {k}")
        if degrade == "noise" and float(k) < 0.0:
            raise ValueError(
                f"ks must be non-negative noise levels (multiples of X's sd) with degrade='noise'; got {k}"
            )
        values.append(int(k) if float(k).is_integer() else float(k))
    if not values:
        raise ValueError("ks must hold at least one value")
    if len(set(values)) != len(values):
        raise ValueError(f"ks must not repeat a value; got {tuple(values)!r}")
    return tuple(values)


def _power_curve_iv(dataset, metric, human, level, coefficient, tests, ks, n_trials, n_resamples, alpha, degrade,
                    texts, rng, batch, systems, progress, should_stop):
    validate_level(level)
    validate_coefficient(coefficient)
    check_choice(degrade, "degrade", DEGRADES)
    if tests is None:
        tests = tuple(t for t in DEFAULT_TESTS if not (t == "williams" and level == "input"))
    tests = _check_names(tests, "tests", TEST_METHODS)
    if "williams" in tests and level == "input":
        raise ValueError("tests must not include 'williams' at the input level (it is defined at the system "
                         "and global levels only, docs/methods.md sec. 3)")
    ks = _check_ks(ks, degrade)
    n_trials = check_int(n_trials, "n_trials")
    n_resamples = check_int(n_resamples, "n_resamples")
    alpha = check_probability(alpha, "alpha")
    batch = check_int(batch, "batch", allow_none=True)
    generator = as_generator(rng)
    check_callable(progress, "progress", "taking a fraction in [0, 1]")
    check_callable(should_stop, "should_stop", "returning True to stop")
    variant = ""
    if degrade == "tokens":
        variant = rouge1_variant(metric) if isinstance(metric, str) else None
        if variant is None:
            raise ValueError(
                "metric must name a ROUGE-1 variant ('rouge-1.f1', 'rouge-1.recall' or 'rouge-1.precision') with "
                f"degrade='tokens' (X is ROUGE-1 recomputed from the texts); got {metric!r}"
            )
        if not isinstance(texts, SummaryTexts):
            raise TypeError(
                "texts must be SummaryTexts (see metaeval_core.data.texts.load_texts) with degrade='tokens'; "
                f"got {type(texts).__name__}"
            )
        subset, _, z = _dataset_matrices(dataset, metric, human, level, systems, metric_needed=False)
        aligned = texts.aligned(subset)
        if aligned.n_summaries == 0:
            raise ValueError(f"texts ({texts.dataset_id}) share no system and input with dataset {subset.id!r}")
        degrader = _TokenDegrader(Rouge1Counts.from_texts(aligned), variant)
    else:
        if texts is not None and not isinstance(texts, SummaryTexts):
            raise TypeError(f"texts must be SummaryTexts or None; got {type(texts).__name__}")
        _, x, z = _dataset_matrices(dataset, metric, human, level, systems)
        degrader = _NoiseDegrader(x)
    if z.shape[0] < 4:
        raise ValueError(f"dataset must have at least 4 systems to compare correlations; got {z.shape[0]}")
    return z, tests, ks, n_trials, n_resamples, float(alpha), generator, batch, degrader, variant


def power_curve(
    dataset: Dataset,
    metric: str,
    human: str,
    *,
    level: Level,
    coefficient: Coefficient,
    tests: Sequence[TestMethod] | None = None,
    ks: Sequence[float] | None = None,
    n_trials: int = 1000,
    n_resamples: int = 1000,
    alpha: float = 0.05,
    degrade: Degrade = "tokens",
    texts: SummaryTexts | None = None,
    rng: np.random.Generator | int | None = None,
    batch: int | None = None,
    systems: str | None = None,
    progress: Callable[[float], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> PowerResult:
    """Power of tests that a metric ``X`` correlates better than a degraded copy ``Y_k``.

    H1 is true by construction: ``Y_k`` sees less of each summary (or more noise) than
    ``X``. Every trial draws a fresh ``Y_k`` for each ``k`` and runs each test of
    ``H0: rho(X, Z) - rho(Y_k, Z) <= 0`` (one-sided) on all systems and inputs; power is
    the share of trials with ``p < alpha``.

    Parameters
    ----------
    dataset : Dataset
    metric : str
        ``degrade='tokens'``: a ROUGE-1 variant, ``'rouge-1.f1'`` (TACL on SummEval),
        ``'rouge-1.recall'`` (TACL on TAC'08 and REALSumm) or ``'rouge-1.precision'``;
        ``X`` is that variant recomputed from ``texts`` on the full summaries, so ``X`` and
        ``Y_k`` differ only in the tokens seen. ``degrade='noise'``: any measure; it is ``X``.
    human : str
    level : {'system', 'input', 'global'}
    coefficient : {'pearson', 'spearman', 'kendall'}
        TACL Fig. 3 uses Pearson.
    tests : sequence of test names, optional
        From :data:`~metaeval_core.stats.significance.TEST_METHODS`. Default: PERM-BOTH,
        BOOT-BOTH and Williams (Williams is left out by default at the input level,
        where it is undefined; asking for it there is an error).
    ks : sequence of float, optional
        ``degrade='tokens'``: percent of each summary's tokens kept, in (0, 100]
        (default 10, 20, ..., 90); ``degrade='noise'``: noise sd as multiples of the sd of
        ``X``'s cells (default 0.25, 0.5, 1, 2, 4).
    n_trials : int, default 1000
    n_resamples : int, default 1000
        Resamples per test (ignored by Williams).
    alpha : float, default 0.05
        A trial rejects H0 when ``p < alpha`` (the heatmap convention of docs/methods.md sec. 3).
    degrade : {'tokens', 'noise'}, default 'tokens'
        ``'tokens'`` needs ``texts``; ``'noise'`` is the generic fallback for any dataset.
    texts : SummaryTexts, optional
        Summaries and references (:func:`metaeval_core.data.texts.load_texts`); aligned to the
        dataset's systems and judged inputs by name. Cells without a text are missing.
    rng : numpy.random.Generator, int or None
        Root of every stream (see the module notes).
    batch : int, optional
        Passed to the resampling tests; results do not depend on it.
    systems : str, optional
        A system subset such as ``"type=abs"``.
    progress : callable, optional
        Called with the fraction of trials done (0 to 1).
    should_stop : callable, optional
        Polled before every trial; True stops the run (the result is flagged ``stopped``).

    Returns
    -------
    PowerResult

    Notes
    -----
    ROUGE-1 on ``k``% of the tokens keeps ``floor(length * k / 100)`` tokens of each
    summary, sampled uniformly without replacement, and scores them against the
    reference with rouge-score's tokenizer and Porter stemmer: precision over the kept
    tokens, recall over the reference's tokens, clipped unigram counts (as SacreROUGE's
    simulation of TACL does with its own ROUGE). ``Y_100`` equals ``X``. The noise
    fallback adds ``N(0, (k sd)^2)`` to every cell of ``X``, ``sd`` over all of ``X``'s
    judged cells. A trial whose p-value is undefined (e.g. a constant ``Y_k``) is left
    out of that test's power and counted in ``n_undefined``.

    References
    ----------
    docs/methods.md sec. 3 and 9; Deutsch, Dror & Roth (TACL 2021) sec. 5.2 and Fig. 3.
    """
    z, tests, ks, n_trials, n_resamples, alpha, generator, batch, degrader, variant = _power_curve_iv(
        dataset, metric, human, level, coefficient, tests, ks, n_trials, n_resamples, alpha, degrade, texts, rng,
        batch, systems, progress, should_stop,
    )
    entropy = _root_entropy(generator)
    x = degrader.x
    estimate_x = float(correlate_matrices(x, z, level=level, coefficient=coefficient).estimate)
    pvalues = np.full((n_trials, len(ks), len(tests)), np.nan)
    estimate_y = np.full((n_trials, len(ks)), np.nan)
    trials = _Trials(n_trials, progress, should_stop)
    for t in trials:
        draw = degrader.draw(_stream(entropy, t, 0))
        for q, k in enumerate(ks):
            y = degrader.degrade(draw, k)
            for s, test in enumerate(tests):
                result = compare_metrics(
                    x, y, z, level=level, coefficient=coefficient, method=test, alternative="greater",
                    n_resamples=n_resamples, rng=_stream(entropy, t, 1 + TEST_METHODS.index(test)), batch=batch,
                )
                pvalues[t, q, s] = result.pvalue
                estimate_y[t, q] = result.estimate_y
    done, stopped = trials.done, trials.stopped
    pvalues, estimate_y = pvalues[:done], estimate_y[:done]
    return PowerResult(
        rows=_summarise_power(tests, ks, pvalues, estimate_y, estimate_x, alpha), metric=metric, human=human,
        level=level, coefficient=coefficient, degrade=degrade, variant=variant, estimate_x=estimate_x, alpha=alpha,
        n_resamples=n_resamples, n_trials=n_trials, n_completed=done, stopped=stopped, tests=tests, ks=ks,
        pvalues=pvalues, estimate_y=estimate_y,
        noise_sd=degrader.sd if isinstance(degrader, _NoiseDegrader) else math.nan,
    )
