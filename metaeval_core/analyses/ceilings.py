"""How good can a metric get? Human ceilings from per-annotator scores.

Where a human measure keeps its annotators' scores (SummEval's experts and crowd, HANNA's raters, the demo), each
annotator is scored against the mean of the *other* annotators exactly as a metric is scored against the human
measure: same level, coefficient, system subset and confidence-interval method. A metric whose interval overlaps
these rows agrees with the humans about as well as one more annotator would; one far below them has room to
improve. The comparison is slightly unfair to the annotator (their reference is a mean of k - 1 ratings, the
metric's a mean of k), so a metric can sit a little above the ceiling.

References: docs/methods.md sec. 14.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from metaeval_core._checks import as_generator, check_choice, check_confidence_level
from metaeval_core.data.checks import check_dataset, check_human
from metaeval_core._frames import ToFrame
from metaeval_core.data.dataset import Dataset, DatasetError
from metaeval_core.stats.coefficients import Coefficient, validate_coefficient
from metaeval_core.stats.correlation import Level, validate_level
from metaeval_core.stats.montecarlo import finite_or_none
from metaeval_core.stats.resampling import CI_METHODS, CIMethod, confidence_interval

__all__ = ["CeilingRow", "HumanCeiling", "ceiling_measure", "human_ceiling"]


def ceiling_measure(dataset: Dataset, human: str) -> str | None:
    """The measure whose annotators give ``human``'s ceiling rows: ``human`` itself when it keeps two or more
    annotators' scores; else its per-rater release, a human measure named ``<human>.<suffix>`` that does (WMT23
    zh-en ``mqm.raters``, en-de ``mqm.sxs`` beside the gold ``mqm``; the first by name); None when there is none.

    References: docs/methods.md sec. 14.4.
    """
    def rated(name: str) -> bool:
        annotators = dataset.measure(name).annotators
        return annotators is not None and annotators.shape[0] >= 2

    if rated(human):
        return human
    family = [m for m in sorted(dataset.human_measures) if m.startswith(human + ".") and rated(m)]
    return family[0] if family else None


@dataclass(frozen=True)
class CeilingRow:
    """One annotator scored against the mean of the others."""

    annotator: str
    estimate: float
    low: float
    high: float
    n_defined: int


@dataclass(frozen=True)
class HumanCeiling(ToFrame):
    """Leave-one-annotator-out correlations of a human measure: the agreement a metric could hope for.

    References: docs/methods.md sec. 14.
    """

    human: str
    level: str
    coefficient: str
    method: str
    confidence_level: float
    n_resamples: int
    rows: tuple[CeilingRow, ...]
    annotators: str = "persons"  # 'persons', 'positions' or 'unknown' (Dataset.annotators_are)

    @property
    def mean_estimate(self) -> float:
        """The average annotator's agreement with the others (NaN when none is defined)."""
        values = np.array([r.estimate for r in self.rows], dtype=float)
        return float(np.nanmean(values)) if np.isfinite(values).any() else float("nan")

    def to_records(self) -> list[dict]:
        num = finite_or_none
        return [{"human": self.human, "annotator": r.annotator, "estimate": num(r.estimate), "low": num(r.low),
                 "high": num(r.high), "n_defined": r.n_defined, "level": self.level,
                 "coefficient": self.coefficient, "method": self.method} for r in self.rows]


def _validate_ceiling(dataset, human, level, coefficient, method, confidence_level, systems) -> tuple[Dataset, np.ndarray]:
    dataset = check_dataset(dataset)
    check_human(dataset, human)
    validate_level(level)
    validate_coefficient(coefficient)
    check_choice(method, "method", CI_METHODS)
    check_confidence_level(confidence_level)
    if systems is not None:
        dataset = dataset.select_systems(systems)
    annotators = dataset.measure(human).annotators
    if annotators is None or annotators.shape[0] < 2:
        kept = 0 if annotators is None else annotators.shape[0]
        raise DatasetError(f"human measure {human!r} keeps {kept} annotator's scores; a human ceiling needs at "
                           "least 2 annotators (each is scored against the others)")
    return dataset, annotators[:, :, dataset.judged]


def human_ceiling(
    dataset: Dataset,
    human: str,
    *,
    level: Level = "system",
    coefficient: Coefficient = "kendall",
    method: CIMethod = "boot-both",
    confidence_level: float = 0.95,
    n_resamples: int = 1000,
    rng: np.random.Generator | int | None = None,
    systems: str | None = None,
    batch: int | None = None,
) -> HumanCeiling:
    """Score each annotator of ``human`` against the mean of the other annotators, as if it were a metric.

    Parameters
    ----------
    dataset : Dataset
    human : str
        A human measure that keeps per-annotator scores (``Measure.annotators``, at least two annotators).
    level, coefficient, method, confidence_level, n_resamples, batch
        As for :func:`~metaeval_core.stats.resampling.confidence_interval`; the same choices as the metrics'
        rows make the two comparable.
    rng : Generator, int or None
        Each annotator's resamples come from its own child stream (``Generator.spawn``), so adding an
        annotator never changes the others' intervals.
    systems : str, optional
        A system subset (``ATTR=VALUE``, names, or ``all``), as everywhere else.

    Returns
    -------
    HumanCeiling
        One row per annotator: estimate, interval, defined resamples. A cell an annotator did not rate is NaN
        and is left out like any missing score. Rows are ``annotator k`` when the dataset says annotator k is
        one person throughout (``Dataset.annotators_are``), else ``rater slot k``: one rating per item against
        the mean of the other ratings, not a person's agreement (``annotators`` records which).

    Examples
    --------
    >>> from metaeval_core.data.synthetic import synthetic_dataset
    >>> ceiling = human_ceiling(synthetic_dataset(), "human.quality", n_resamples=100, rng=0)
    >>> [row.annotator for row in ceiling.rows], ceiling.annotators
    (['annotator 1', 'annotator 2', 'annotator 3'], 'persons')

    References
    ----------
    docs/methods.md sec. 14.
    """
    dataset, ratings = _validate_ceiling(dataset, human, level, coefficient, method, confidence_level, systems)
    identity = dataset.annotators_are(human)
    # A slot filled by different people is no one's agreement: its rows are named for what they are.
    unit = "annotator" if identity == "persons" else "rater slot"
    streams = as_generator(rng).spawn(ratings.shape[0])
    rows = []
    for a, stream in enumerate(streams):
        others = np.delete(ratings, a, axis=0)
        rated = ~np.isnan(others)
        with np.errstate(invalid="ignore", divide="ignore"):
            reference = np.where(rated.any(axis=0), np.where(rated, others, 0.0).sum(axis=0) / rated.sum(axis=0),
                                 np.nan)
        ci = confidence_interval(ratings[a], reference, level=level, coefficient=coefficient, method=method,
                                 confidence_level=confidence_level, n_resamples=n_resamples, rng=stream,
                                 batch=batch)
        rows.append(CeilingRow(f"{unit} {a + 1}", float(ci.estimate), float(ci.low), float(ci.high),
                               int(ci.n_defined)))
    return HumanCeiling(human, level, coefficient, method, float(confidence_level), int(n_resamples), tuple(rows),
                        identity)
