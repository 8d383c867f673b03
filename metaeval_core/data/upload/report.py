"""The upload report: what a dataset holds and what looks wrong, before any analysis (issue 13).

Shown after an upload and after a What if... merge, and printed by ``metaeval describe``. Problems are warnings
with the affected systems or measures; none of them stops the user.

References: docs/methods.md sec. 0 (the data model: judged inputs, human and metric measures).
"""

from __future__ import annotations

import hashlib
import warnings as warnings_module
from dataclasses import dataclass

import numpy as np

from metaeval_core.wording import count, count_of
from metaeval_core.data.checks import check_dataset
from metaeval_core.data.dataset import Dataset
from metaeval_core.data.upload.names import looks_human

# A system is flagged when it has fewer judged inputs than this share of the median system's.
FEW_INPUTS_SHARE = 0.5


@dataclass(frozen=True)
class ReportWarning:
    """One problem: a stable ``kind``, a one-sentence ``message``, and the systems or measures it concerns."""

    kind: str  # 'few-judged-inputs', 'unrated-systems', 'constant-measure', 'no-system-differences', 'duplicate-measures'
    message: str
    names: tuple[str, ...]


@dataclass(frozen=True)
class UploadReport:
    """What :func:`validation_report` found.

    Attributes
    ----------
    dataset_id : str
    systems : tuple of str
    judged_per_system : tuple of int
        Judged inputs (some human score) of each system, in ``systems`` order.
    n_inputs, n_judged : int
    human_measures, metric_measures : tuple of str
    human_reasons : tuple of (str, str)
        Why each human measure is one: an mt-metrics-eval human-scores file, per-annotator scores, its name, or
        declared (the ``kind`` column or the human measures the user named).
    notes : tuple of str
        The reader's notes (columns not read, names normalised, mixed scales ...).
    warnings : tuple of ReportWarning
    """

    dataset_id: str
    systems: tuple[str, ...]
    judged_per_system: tuple[int, ...]
    n_inputs: int
    n_judged: int
    human_measures: tuple[str, ...]
    metric_measures: tuple[str, ...]
    human_reasons: tuple[tuple[str, str], ...]
    notes: tuple[str, ...]
    warnings: tuple[ReportWarning, ...]

    def lines(self) -> list[str]:
        """The report as plain text lines (the CLI prints them; the dashboard shows the same facts)."""
        out = [f"{len(self.systems)} systems, {self.n_inputs} inputs ({self.n_judged} judged), "
               f"{len(self.human_measures)} human and {len(self.metric_measures)} metric measures"]
        counts = sorted(set(self.judged_per_system))
        if len(counts) == 1:
            out.append(f"judged inputs per system: {counts[0]} for every system")
        else:
            out.append(f"judged inputs per system: {counts[0]} to {counts[-1]} (median "
                       f"{int(np.median(self.judged_per_system))})")
        for name, reason in self.human_reasons:
            out.append(f"human measure {name!r}: {reason}")
        out.extend(f"note: {note}" for note in self.notes)
        out.extend(f"warning: {w.message}" for w in self.warnings)
        if not self.warnings:
            out.append("no warnings")
        return out


def _names(names, limit: int = 8) -> str:
    names = list(names)
    shown = ", ".join(repr(n) for n in names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def measure_role(dataset: Dataset, name: str, *, declared=()) -> str:
    """One sentence: the role a file's measure was given and why (the rules of :mod:`metaeval_core.data.upload`),
    e.g. for a What if… preview: "'q' is a metric: not named as human, no per-annotator scores, and its name does
    not mark a human judgment". ``declared``: the names given as human measures (the Human measures box).

    References: docs/methods.md sec. 10.5.
    """
    measure = dataset.measures[name]
    if measure.kind == "human":
        why = ("named in the human measures" if name in set(declared) else _human_reason(dataset, name))
        return f"{name!r} is a human measure: {why}"
    return (f"{name!r} is a metric: it is not named as a human measure (nor marked human by a kind column), has no "
            "per-annotator scores, and its name does not mark a human judgment; name it in the human measures to "
            "add it as human judgments")


def _human_reason(dataset: Dataset, name: str) -> str:
    if dataset.conventions is not None:  # mt-metrics-eval data: the human-scores files say which are human
        gold = " (WMT's gold, the default human measure)" if name == dataset.conventions.gold else ""
        return f"an mt-metrics-eval human-scores file{gold}"
    if dataset.measures[name].annotators is not None:
        return "has per-annotator scores"
    if looks_human(name):
        return "its name marks a human judgment"
    return "declared human (the file's kind column or the human measures named at upload)"


def _fingerprint(scores: np.ndarray) -> bytes:
    canonical = np.where(np.isnan(scores), np.nan, scores + 0.0)  # -0.0 as 0.0; every NaN the same NaN
    return hashlib.blake2b(np.ascontiguousarray(canonical).tobytes(), digest_size=16).digest()


def validation_report(dataset: Dataset) -> UploadReport:
    """Check a dataset before analysis: per-system coverage, constant and duplicated measures.

    Parameters
    ----------
    dataset : Dataset
        Any dataset (an upload, a What if... merge, a built-in one).

    Returns
    -------
    UploadReport
        Facts (systems, judged inputs per system, which measures are human and why, the reader's notes) and
        warnings naming the affected systems or measures:

        * ``few-judged-inputs``: systems with fewer than half the median system's judged inputs (their
          averages rest on fewer judgments, so system-level results lean on them less reliably);
        * ``unrated-systems``: per human measure, every system it never scored (removed before any statistic
          against it, docs/methods.md sec. 0.2);
        * ``constant-measure``: a measure with one value on every scored cell (a constant human measure makes
          every correlation undefined, which reads as a failure of the metrics);
        * ``no-system-differences``: a measure that gives every system the same score on every input (it
          cannot rank systems: significance tests find nothing to separate);
        * ``duplicate-measures``: measures with identical score matrices (one is probably a copy);
        * ``sparse-human-measure``: a human measure that scores fewer than half of the systems or of the judged
          inputs (e.g. new judgments of 3 systems on 20 inputs merged into a 16 x 100 dataset).

    Raises
    ------
    TypeError
        When ``dataset`` is not a :class:`Dataset`.
    """
    dataset = check_dataset(dataset)
    judged_inputs = dataset.judged
    humans = list(dataset.human_measures)
    covered = np.zeros((dataset.n_systems, dataset.n_inputs), dtype=bool)
    for name in humans:
        covered |= ~np.isnan(dataset.measures[name].scores)
    per_system = (covered & judged_inputs[None, :]).sum(axis=1) if dataset.n_inputs else np.zeros(
        dataset.n_systems, dtype=int)
    warnings: list[ReportWarning] = []
    if dataset.n_systems >= 2 and humans:
        median = float(np.median(per_system))
        few = [s for s, k in zip(dataset.systems, per_system) if k < FEW_INPUTS_SHARE * median]
        if few:
            worst = int(per_system.min())
            warnings.append(ReportWarning(
                "few-judged-inputs",
                f"{len(few)} system(s) have fewer than half the median {median:g} judged inputs (as few as "
                f"{worst}): {_names(few)}; their system scores rest on fewer judgments",
                tuple(few)))
    if dataset.n_systems >= 2:
        for name in humans:
            unrated = dataset.unrated_systems(name)
            if unrated and len(unrated) < dataset.n_systems:
                warnings.append(ReportWarning(
                    "unrated-systems",
                    f"human measure {name!r} scores no input of {len(unrated)} system(s): "
                    f"{_names(unrated, limit=len(unrated))}; they are removed before any statistic against "
                    f"{name!r}", tuple(unrated)))
    for name in humans:  # a measure added for a few systems and inputs (issue 24: 3 x 20 got "no new warnings")
        rated = ~np.isnan(dataset.measures[name].scores[:, judged_inputs])
        n_sys, n_inp = int(rated.any(axis=1).sum()), int(rated.any(axis=0).sum())
        if dataset.n_judged and (n_sys < FEW_INPUTS_SHARE * dataset.n_systems
                                 or n_inp < FEW_INPUTS_SHARE * dataset.n_judged):
            warnings.append(ReportWarning(
                "sparse-human-measure",
                f"human measure {name!r} scores {count_of(n_sys, dataset.n_systems, 'system', only=True)} on "
                f"{count_of(n_inp, dataset.n_judged, 'judged input', only=n_sys == dataset.n_systems)} "
                f"({count(int(rated.sum()), 'cell')}): "
                "correlations with it rest on those "
                "judgments alone (a metric is averaged over the same cells)",
                (name,)))
    constant, flat = [], []
    groups: dict[bytes, list[str]] = {}
    for name, measure in dataset.measures.items():
        scores = measure.scores
        scored = scores[~np.isnan(scores)]
        if scored.size and np.all(scored == scored[0]):
            constant.append(name)
        elif dataset.n_systems >= 2 and scored.size:
            with warnings_module.catch_warnings():  # an input no system scored has no spread: NaN, skipped
                warnings_module.simplefilter("ignore", RuntimeWarning)
                spread = np.nanmax(scores, axis=0) - np.nanmin(scores, axis=0)
            if np.all(np.isnan(spread) | (spread == 0)):
                flat.append(name)
        groups.setdefault(_fingerprint(scores), []).append(name)
    if constant:
        human_constant = [n for n in constant if n in humans]
        why = (" (a constant human measure leaves every correlation undefined: that is no verdict on the "
               "metrics)" if human_constant else "")
        warnings.append(ReportWarning("constant-measure", f"{len(constant)} measure(s) have a single value on "
                                      f"every scored cell: {_names(constant)}{why}", tuple(constant)))
    if flat:
        warnings.append(ReportWarning("no-system-differences", f"{len(flat)} measure(s) give every system the same "
                                      f"score on each input, so they cannot rank systems: {_names(flat)}",
                                      tuple(flat)))
    duplicates = []
    for names in groups.values():
        if len(names) < 2:
            continue
        first = dataset.measures[names[0]].scores
        same = [n for n in names[1:] if np.array_equal(dataset.measures[n].scores, first, equal_nan=True)]
        if same:
            duplicates.append((names[0], *same))
    for group in duplicates:
        warnings.append(ReportWarning("duplicate-measures", f"the measures {_names(group)} have identical scores "
                                      f"on every cell (one is probably a copy of the other)", tuple(group)))
    return UploadReport(
        dataset_id=dataset.id,
        systems=tuple(dataset.systems),
        judged_per_system=tuple(int(k) for k in per_system),
        n_inputs=dataset.n_inputs,
        n_judged=dataset.n_judged,
        human_measures=tuple(humans),
        metric_measures=tuple(dataset.metric_measures),
        human_reasons=tuple((name, _human_reason(dataset, name)) for name in humans),
        notes=tuple(dataset.notes),
        warnings=tuple(warnings),
    )
