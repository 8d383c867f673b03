"""What-if modifications of a dataset: merge extra scores, edit cells, include or exclude systems and inputs.

Every function returns a **new** :class:`Dataset` (datasets are immutable); its ``version`` is the new
content's :meth:`Dataset.fingerprint`, so caches keyed on ``(id, version)`` recompute. Nothing here
imports streamlit.

* :func:`describe_merge` says what merging ``extra`` into ``base`` would add (new systems, inputs,
  measures, cells filled) and which cells conflict (both hold a different number).
* :func:`merge_datasets` does it, with ``on_conflict`` = ``'error'`` (default: a :class:`MergeError`
  naming the first conflicting cell), ``'keep'`` (the base's value wins) or ``'replace'`` (extra's wins).
* :func:`edit_scores` sets single cells (validated: known names, a finite number or NaN).
* :func:`include_exclude` keeps or drops systems and inputs by name.

Per-annotator scores (``Measure.annotators``) stay consistent with the mean matrix: merged cell by cell
when both sides hold the same number of annotators; kept where a file of mean scores only fills or replaces a
cell, every annotator's rating of that cell set to the file's value; otherwise dropped (with a note; the merge
preview says so first, :meth:`MergeReport.annotator_notes`). A measure whose cells are edited by hand keeps
them, every annotator's rating of an edited cell set to the new value.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from dataclasses import dataclass, field
from typing import Iterable, Literal, Sequence

import numpy as np

from metaeval_core._checks import check_choice
from metaeval_core.data.dataset import Dataset, DatasetError, Measure
from metaeval_core.data.selection import resolve_selection
from metaeval_core.data.text_model import combined_texts
from metaeval_core.data.upload.limits import MAX_MAGNITUDE, UploadLimits

__all__ = [
    "CONFLICT_POLICIES",
    "Conflict",
    "MergeError",
    "MergeReport",
    "check_merge_size",
    "describe_merge",
    "edit_scores",
    "include_exclude",
    "lookalike_names",
    "merge_datasets",
    "with_identity",
]

OnConflict = Literal["replace", "keep", "error"]
CONFLICT_POLICIES: tuple[str, ...] = ("error", "keep", "replace")
_MAX_LISTED = 20


class MergeError(DatasetError):
    """Two datasets cannot be merged as asked (e.g. a conflicting cell with ``on_conflict='error'``)."""


@dataclass(frozen=True)
class Conflict:
    """One cell both datasets score differently."""

    system: str
    input: str
    measure: str
    base: float
    extra: float

    def describe(self) -> str:
        return (f"system {self.system!r}, input {self.input!r}, measure {self.measure!r}: "
                f"{self.base!r} in the base dataset, {self.extra!r} in the new one")


@dataclass(frozen=True)
class MergeReport:
    """What merging ``extra`` into ``base`` adds and where the two disagree."""

    new_systems: tuple[str, ...]
    new_inputs: tuple[str, ...]
    new_measures: tuple[str, ...]
    shared_measures: tuple[str, ...]
    filled_cells: int  # cells empty in the base that extra fills (in existing or new rows/columns)
    same_cells: int  # cells both hold with the same value
    n_conflicts: int
    conflicts: tuple[Conflict, ...]  # the first few, in (measure, system, input) order
    kind_changes: tuple[str, ...] = ()  # shared measures whose kind differs (the base's kind is kept)
    attribute_conflicts: tuple[str, ...] = ()
    newly_judged_inputs: int = 0  # inputs without human scores in the base that get some
    notes: tuple[str, ...] = field(default=())
    lookalikes: tuple[str, ...] = ()  # "new system 'M2O' looks like 'M20'": probable typos, one sentence each
    # Shared measures whose per-annotator scores (the human ceiling, the annotator rows) the merge changes or
    # drops, one sentence each, said before the merge: {'keep': [...], 'replace': [...]} as tuples of pairs.
    annotator_changes: tuple[tuple[str, str], ...] = ()

    def annotator_notes(self, on_conflict: str) -> tuple[str, ...]:
        """The sentences of :attr:`annotator_changes` that apply under ``on_conflict``."""
        return tuple(text for policy, text in self.annotator_changes if policy in ("any", on_conflict))

    @property
    def adds_anything(self) -> bool:
        return bool(self.new_systems or self.new_inputs or self.new_measures or self.filled_cells
                    or self.n_conflicts)

    def summary(self) -> str:
        parts = []
        from metaeval_core.wording import count

        for label, items in (("new system", self.new_systems), ("new input", self.new_inputs),
                             ("new measure", self.new_measures)):
            if items:
                parts.append(count(len(items), label))
        parts.append(f"{count(self.filled_cells, 'cell')} filled")
        if self.n_conflicts:
            parts.append(count(self.n_conflicts, "conflicting cell"))
        return ", ".join(parts)


# -- helpers -------------------------------------------------------------------------------------------------


def with_identity(dataset: Dataset, id: str, *, version: str = "", title: str | None = None) -> Dataset:
    """The same content under another id (version: its fingerprint unless given)."""
    changes: dict = {"id": id, "version": version}
    if title is not None:
        changes["title"] = title
    return dataclasses.replace(dataset, **changes)


def _union(first: Sequence[str], second: Sequence[str]) -> tuple[str, ...]:
    seen = dict.fromkeys(first)
    for name in second:
        seen.setdefault(name, None)
    return tuple(seen)


def _place(matrix: np.ndarray, rows: np.ndarray, cols: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """``matrix`` (..., r, c) scattered into a NaN array of ``shape`` at ``rows`` x ``cols``."""
    out = np.full(shape, np.nan)
    out[..., rows[:, None], cols[None, :]] = matrix
    return out


def _rebuild(dataset: Dataset, **changes) -> Dataset:
    """A new dataset (fresh fingerprint as version) with some fields replaced."""
    fields = dict(id=dataset.id, systems=dataset.systems, inputs=dataset.inputs, measures=dataset.measures,
                  system_attributes=dataset.system_attributes, title=dataset.title, citation=dataset.citation,
                  licence=dataset.licence, description=dataset.description, notes=dataset.notes,
                  default_systems=dataset.default_systems, input_attributes=dataset.input_attributes,
                  task=dataset.task, annotator_identity=dataset.annotator_identity,
                  conventions=dataset.conventions, texts=dataset.texts)  # texts: looked up by name, kept whole
    fields.update(changes)
    if "inputs" in changes and tuple(changes["inputs"]) != dataset.inputs:
        # A merge may bring inputs this dataset has no attributes for: they get "".
        fields["input_attributes"] = {
            attr: [dict(zip(dataset.inputs, values)).get(str(j), "") for j in changes["inputs"]]
            for attr, values in dataset.input_attributes.items()}
    if fields["default_systems"] and "system_attributes" in changes:
        if not resolve_selection(fields["default_systems"], fields["systems"], fields["system_attributes"],
                                 strict=False):
            fields["default_systems"] = ""  # the merge or exclusion kept none of the default's systems
    return Dataset(version="", **fields)


# -- merge -----------------------------------------------------------------------------------------------


def _check_policy(on_conflict: str) -> None:
    check_choice(on_conflict, "on_conflict", CONFLICT_POLICIES)


def _aligned(base: Dataset, extra: Dataset):
    systems = _union(base.systems, extra.systems)
    inputs = _union(base.inputs, extra.inputs)
    sys_pos = {s: k for k, s in enumerate(systems)}
    inp_pos = {j: k for k, j in enumerate(inputs)}
    base_rows = np.arange(base.n_systems)
    base_cols = np.arange(base.n_inputs)
    extra_rows = np.array([sys_pos[s] for s in extra.systems], dtype=int)
    extra_cols = np.array([inp_pos[j] for j in extra.inputs], dtype=int)
    return systems, inputs, (base_rows, base_cols), (extra_rows, extra_cols)


def check_merge_size(base: Dataset, extra: Dataset, *, limits: UploadLimits | None = None) -> None:
    """Refuse, before anything is allocated, a merge whose result would exceed the upload limits.

    Two files each within the limits can unite into one that is not (2,000 systems x 2 inputs and 2 systems x
    200,000 inputs make 2,000 x 200,002 cells per measure): the union's systems, measures and dense cells
    (systems x inputs per measure, plus annotators x systems x inputs for per-annotator scores) are counted
    from the names alone and checked against ``limits`` (default: the deployment's, docs/methods.md sec. 17.2).

    Raises
    ------
    MergeError
        Naming the count, the limit, the variable that sets it, and what to change.
    """
    limits = UploadLimits.from_environment() if limits is None else limits
    n_systems = len(set(base.systems) | set(extra.systems))
    n_inputs = len(set(base.inputs) | set(extra.inputs))
    names = set(base.measures) | set(extra.measures)
    if n_systems > limits.max_systems:
        raise MergeError(
            f"the merged dataset would have {n_systems:,} systems; the limit is {limits.max_systems:,} "
            "(METAEVAL_MAX_UPLOAD_SYSTEMS): merge a file with fewer new systems, or exclude systems first")
    if len(names) > limits.max_measures:
        raise MergeError(
            f"the merged dataset would have {len(names):,} measures; the limit is {limits.max_measures:,} "
            "(METAEVAL_MAX_UPLOAD_MEASURES): merge a file with fewer measures")
    layers = 0
    for name in names:
        annotators = [m.annotators.shape[0] for m in (base.measures.get(name), extra.measures.get(name))
                      if m is not None and m.annotators is not None]
        layers += 1 + max(annotators, default=0)
    n_cells = n_systems * n_inputs * layers
    if n_cells > limits.max_cells:
        raise MergeError(
            f"the merged dataset would have {n_systems:,} systems x {n_inputs:,} inputs x {len(names):,} "
            f"measures = {n_cells:,} score cells (annotators included); the limit is {limits.max_cells:,} "
            "(METAEVAL_MAX_UPLOAD_CELLS): merge files that share their systems or inputs, or exclude systems or "
            "inputs first")


def _positions(ours: Sequence[str], theirs: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Indices into ``ours`` and into ``theirs`` of the names both hold, in ``ours``' order."""
    where = {name: k for k, name in enumerate(theirs)}
    mine = [k for k, name in enumerate(ours) if name in where]
    return np.array(mine, dtype=int), np.array([where[ours[k]] for k in mine], dtype=int)


def describe_merge(base: Dataset, extra: Dataset) -> MergeReport:
    """What :func:`merge_datasets` would add, and every conflicting cell (counted; the first few listed).

    Works on the cells the two datasets share, never on the union's systems x inputs (refused beyond the
    upload limits, :func:`check_merge_size`).
    """
    check_merge_size(base, extra)
    b_sys, e_sys = _positions(base.systems, extra.systems)
    b_inp, e_inp = _positions(base.inputs, extra.inputs)
    filled = same = n_conflicts = 0
    conflicts: list[Conflict] = []
    kind_changes = []
    annotator_changes: list[tuple[str, str]] = []
    judged_before = {j for j, judged in zip(base.inputs, base.judged) if judged}
    judged_after: set[str] = set()
    for name, extra_measure in extra.measures.items():
        has_theirs = ~np.isnan(extra_measure.scores)
        n_theirs = int(has_theirs.sum())
        if name in base.measures:
            kind = base.measures[name].kind
            if kind != extra_measure.kind:
                kind_changes.append(name)
            # Conflicts and equal cells exist only where both datasets have the system and the input.
            ours = base.measures[name].scores[np.ix_(b_sys, b_inp)]
            theirs = extra_measure.scores[np.ix_(e_sys, e_inp)]
            both = ~np.isnan(ours) & ~np.isnan(theirs)
            differ = both & (ours != theirs)
        else:
            kind = extra_measure.kind
            both = differ = np.zeros((b_sys.size, b_inp.size), dtype=bool)
        filled += n_theirs - int(both.sum())
        if name in base.measures:
            annotator_changes.extend(_annotator_changes(name, base.measures[name], extra_measure,
                                                        n_theirs - int(both.sum()), int(differ.sum())))
        same += int((both & ~differ).sum())
        n_conflicts += int(differ.sum())
        if kind == "human":
            judged_after.update(j for j, any_score in zip(extra.inputs, has_theirs.any(axis=0)) if any_score)
        if differ.any() and len(conflicts) < _MAX_LISTED:
            for i, j in zip(*np.nonzero(differ)):
                if len(conflicts) >= _MAX_LISTED:
                    break
                conflicts.append(Conflict(base.systems[b_sys[i]], base.inputs[b_inp[j]], name,
                                          float(ours[i, j]), float(theirs[i, j])))
    attribute_conflicts = []
    for attr, values in extra.system_attributes.items():
        if attr not in base.system_attributes:
            continue
        mine = dict(zip(base.systems, base.system_attributes[attr]))
        for system, value in zip(extra.systems, values):
            if system in mine and mine[system] and value and mine[system] != value:
                attribute_conflicts.append(f"{attr} of {system!r}: {mine[system]!r} vs {value!r}")
    lookalikes = [f"new {what} {name!r} looks like the existing {match!r}: a typo? Merged as is, it becomes a "
                  f"new {what}."
                  for what, new, known in (("system", extra.systems, base.systems), ("input", extra.inputs, base.inputs),
                                           ("measure", tuple(extra.measures), tuple(base.measures)))
                  for name, match in lookalike_names(new, known).items()]
    known_systems, known_inputs = set(base.systems), set(base.inputs)  # once: not per name (200k x 200k)
    notes = [f"measure {name!r} is {base.measures[name].kind} in the base dataset and "
             f"{extra.measures[name].kind} in the new file: kept as {base.measures[name].kind}"
             for name in kind_changes]
    return MergeReport(
        new_systems=tuple(s for s in extra.systems if s not in known_systems),
        new_inputs=tuple(j for j in extra.inputs if j not in known_inputs),
        new_measures=tuple(m for m in extra.measures if m not in base.measures),
        shared_measures=tuple(m for m in extra.measures if m in base.measures),
        filled_cells=filled,
        same_cells=same,
        n_conflicts=n_conflicts,
        conflicts=tuple(conflicts),
        kind_changes=tuple(kind_changes),
        attribute_conflicts=tuple(attribute_conflicts),
        newly_judged_inputs=len(judged_after - judged_before),
        notes=tuple(notes),
        lookalikes=tuple(lookalikes),
        annotator_changes=tuple(annotator_changes),
    )


def _annotator_changes(name: str, ours: Measure, theirs: Measure, n_filled: int,
                       n_conflicts: int) -> list[tuple[str, str]]:
    """What a merge does to a shared measure's per-annotator scores, as (policy, sentence) pairs (policy 'any',
    or 'replace' for what only replacing the conflicting cells does); see :func:`_merge_annotators`."""
    mine, other = ours.annotators, theirs.annotators
    if mine is None and other is None:
        return []
    if mine is not None and other is not None and mine.shape[0] != other.shape[0]:
        if n_filled or n_conflicts:
            return [("any" if n_filled else "replace",
                     f"measure {name!r}: the dataset holds {mine.shape[0]} annotators' scores and the file "
                     f"{other.shape[0]}: its per-annotator scores will be dropped, and with them its human-ceiling "
                     "and annotator rows")]
        return []
    if mine is None:
        return []  # the base's means only: the file's annotators cannot be combined with them (nothing shown now)
    if other is not None:
        return []  # same annotators: merged cell by cell
    out = []
    if n_filled:
        out.append(("any", f"measure {name!r}: the file gives mean scores only; in the {n_filled:,} cell(s) it "
                    f"fills every annotator's rating is set to the file's value, so its human-ceiling and "
                    "annotator rows will change"))
    if n_conflicts:
        out.append(("replace", f"measure {name!r}: replacing its {n_conflicts:,} conflicting cell(s) sets every "
                    "annotator's rating there to the file's value (the file gives mean scores only), so its "
                    "human-ceiling and annotator rows will change"))
    return out


_MAX_FUZZY_COMPARISONS = 100_000
_CONFUSABLE = str.maketrans({"o": "0", "l": "1", "i": "1", " ": "", "-": "", "_": "", ".": ""})


def _typo_key(name: str) -> str:
    """A name with the usual typos folded away: case, O/0, l/I/1, spaces, dashes, dots and underscores."""
    return str(name).casefold().translate(_CONFUSABLE)


def lookalike_names(new: Sequence[str], known: Sequence[str], *, cutoff: float = 0.88) -> dict[str, str]:
    """Each name of ``new`` that is not in ``known`` but looks like one that is (``M2O`` for ``M20``,
    ``expert.relevence``): equal once case, O/0, l/I/1 and separators are folded, or (names of 6+ characters)
    a difflib ratio of at least ``cutoff`` (only while new x known names stay within 100,000 comparisons, a
    second or two; beyond, folded spellings only). ``{new name: the known name it resembles}``.

    References: docs/methods.md sec. 10.5.
    """
    import difflib

    present = set(known)
    folded = {}
    for name in known:
        folded.setdefault(_typo_key(name), name)
    out = {}
    missing = [name for name in new if name not in present]
    # difflib compares each new name with every known one: beyond _MAX_FUZZY_COMPARISONS (200,000 new inputs
    # against 20,000 known would take hours) only the folded spellings are matched.
    fuzzy = len(missing) * len(present) <= _MAX_FUZZY_COMPARISONS
    for name in missing:
        match = folded.get(_typo_key(name))
        if match is None and fuzzy and len(str(name)) >= 6:
            close = difflib.get_close_matches(str(name), [str(k) for k in known], n=1, cutoff=cutoff)
            match = close[0] if close else None
        if match is not None:
            out[name] = match
    return out


def _merge_annotators(name: str, ours: Measure | None, theirs: Measure, take_theirs: np.ndarray, merged: np.ndarray,
                      brc, erc, shape, notes: list[str]) -> np.ndarray | None:
    """Per-annotator scores of the merged measure, or None (noted) when the two sides do not line up.

    A file with mean scores only, merged into a measure with per-annotator scores, keeps them as an edit does
    (:func:`edit_scores`): every annotator's rating of a cell taken from the file is set to the file's value."""
    mine = None if ours is None else ours.annotators
    other = theirs.annotators
    if mine is None and other is None:
        return None
    if ours is None:  # a new measure: its annotators, padded
        return _place(other, *erc, (other.shape[0], *shape))
    if not take_theirs.any():
        return None if mine is None else _place(mine, *brc, (mine.shape[0], *shape))
    if mine is not None and other is None:
        kept = _place(mine, *brc, (mine.shape[0], *shape))
        kept[:, take_theirs] = merged[take_theirs]
        notes.append(f"per-annotator scores of {name!r} kept; every annotator's rating of the "
                     f"{int(take_theirs.sum()):,} cell(s) taken from the file (mean scores only) is the file's value")
        return kept
    if mine is not None and other is not None and mine.shape[0] == other.shape[0]:
        merged = _place(mine, *brc, (mine.shape[0], *shape))
        placed = _place(other, *erc, (other.shape[0], *shape))
        merged[:, take_theirs] = placed[:, take_theirs]
        return merged
    notes.append(f"per-annotator scores of {name!r} were dropped: the two datasets do not hold the same "
                 "annotators for it (its mean scores are merged)")
    return None


def merge_datasets(base: Dataset, extra: Dataset, *, on_conflict: OnConflict = "error",
                   id: str | None = None) -> Dataset:
    """``base`` plus what ``extra`` adds: new measures, systems and inputs, and cells ``base`` lacks.

    Parameters
    ----------
    base, extra : Dataset
        ``extra`` typically holds new human judgments (e.g. for inputs ``base`` has only metric scores
        on), a new metric's scores, or a new system's scores.
    on_conflict : {'error', 'keep', 'replace'}
        What to do with a cell both datasets score with different numbers: raise a :class:`MergeError`
        naming the first one, keep the base's value, or take the extra's. Equal values and cells missing
        on one side are never conflicts.
    id : str, optional
        The merged dataset's id (default: the base's).

    Returns
    -------
    Dataset
        Systems and inputs of ``base`` first (in order), then the new ones of ``extra``; measures of
        ``base`` then the new ones. A measure in both keeps the base's kind (human or metric). System
        attributes are united (a new system's missing attribute is ``""``; a disagreeing value follows
        ``on_conflict``). Metadata (title, citation, licence) come from ``base``; ``notes`` record the merge.
    """
    _check_policy(on_conflict)
    if not isinstance(base, Dataset) or not isinstance(extra, Dataset):
        raise TypeError("merge_datasets needs two Dataset objects")
    report = describe_merge(base, extra)
    if on_conflict == "error" and report.n_conflicts:
        first = report.conflicts[0]
        more = f" (and {report.n_conflicts - 1} more)" if report.n_conflicts > 1 else ""
        raise MergeError(f"conflicting cell: {first.describe()}{more}; choose to keep or replace such cells")
    if on_conflict == "error" and report.attribute_conflicts:
        raise MergeError(f"conflicting system attribute: {report.attribute_conflicts[0]}; "
                         "choose to keep or replace such values")
    systems, inputs, brc, erc = _aligned(base, extra)
    shape = (len(systems), len(inputs))
    notes: list[str] = list(report.notes)
    measures: dict[str, Measure] = {}
    for name in _union(tuple(base.measures), tuple(extra.measures)):
        ours = base.measures.get(name)
        theirs = extra.measures.get(name)
        if theirs is None:
            annotators = None if ours.annotators is None else _place(ours.annotators, *brc,
                                                                     (ours.annotators.shape[0], *shape))
            measures[name] = ours.with_scores(_place(ours.scores, *brc, shape), annotators)
            continue
        placed = _place(theirs.scores, *erc, shape)
        if ours is None:
            merged = placed
            take = ~np.isnan(placed)
        else:
            merged = _place(ours.scores, *brc, shape)
            missing = np.isnan(merged)
            take = ~np.isnan(placed) & (missing | (on_conflict == "replace"))
            merged[take] = placed[take]
        annotators = _merge_annotators(name, ours, theirs, take, merged, brc, erc, shape, notes)
        if annotators is not None:
            # The mean must summarise the kept annotators: identical where a side's cells were taken whole.
            measures[name] = (ours or theirs).with_scores(merged, annotators)
        else:
            measures[name] = (ours or theirs).with_scores(merged)
    attributes: dict[str, list[str]] = {}
    for attr in _union(tuple(base.system_attributes), tuple(extra.system_attributes)):
        mine = dict(zip(base.systems, base.system_attributes.get(attr, ())))
        other = dict(zip(extra.systems, extra.system_attributes.get(attr, ())))
        values = []
        for system in systems:
            a, b = mine.get(system, ""), other.get(system, "")
            values.append(b if (b and (not a or on_conflict == "replace")) else a)
        attributes[attr] = values
    notes.append(f"merged with {extra.id!r} ({report.summary()}; conflicts: {on_conflict})")
    return _rebuild(base, id=id or base.id, systems=systems, inputs=inputs, measures=measures,
                    system_attributes=attributes, notes=tuple(base.notes) + tuple(notes),
                    texts=combined_texts(base.texts, extra.texts))


# -- edits -----------------------------------------------------------------------------------------------


def _number(value, where: str) -> float:
    if value is None:
        return math.nan
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise DatasetError(f"{where}: the new score must be a number (or empty/NaN), got {value!r}")
    number = float(value)
    if math.isinf(number):
        raise DatasetError(f"{where}: the new score must be finite, got {number}")
    if abs(number) > MAX_MAGNITUDE:  # the upload's rule: sums and squares of such scores overflow float64
        raise DatasetError(f"{where}: the new score {number:g} is larger in magnitude than {MAX_MAGNITUDE:g}, "
                           "beyond which the statistics overflow")
    return number


def edit_scores(dataset: Dataset, edits: Iterable[tuple[str, str, str, float]], *, id: str | None = None) -> Dataset:
    """``dataset`` with single cells set: each edit is ``(system, input, measure, value)``.

    ``value`` is a finite real number within +-1e150 (the upload's limit), or NaN / None to clear the cell. Unknown names and non-finite or
    non-numeric values raise a :class:`DatasetError` naming the edit; nothing is applied then. Several
    edits of one cell: the last wins. A measure with per-annotator scores keeps them: every annotator's rating of
    a cell whose value changes becomes the new value (NaN clears them all), so the matrix stays their mean and the
    other cells' ratings, agreement and human ceilings are unchanged; a note counts the cells.
    """
    edits = list(edits)
    sys_pos = {s: k for k, s in enumerate(dataset.systems)}
    inp_pos = {j: k for k, j in enumerate(dataset.inputs)}
    changes: dict[str, list[tuple[int, int, float]]] = {}
    for n, edit in enumerate(edits, start=1):
        try:
            system, input_id, measure, value = edit
        except (TypeError, ValueError):
            raise DatasetError(f"edit {n}: expected (system, input, measure, value), got {edit!r}") from None
        where = f"edit {n} ({system!r}, {input_id!r}, {measure!r})"
        if measure not in dataset.measures:
            raise DatasetError(f"{where}: unknown measure {measure!r}; known: {', '.join(dataset.measures)}")
        if system not in sys_pos:
            raise DatasetError(f"{where}: unknown system {system!r}")
        if input_id not in inp_pos:
            raise DatasetError(f"{where}: unknown input {input_id!r}")
        changes.setdefault(measure, []).append((sys_pos[system], inp_pos[input_id], _number(value, where)))
    if not changes:
        return dataset if id is None else with_identity(dataset, id)
    measures = dict(dataset.measures)
    notes = list(dataset.notes)
    for name, cells in changes.items():
        old = dataset.measures[name]
        scores = np.array(old.scores, copy=True)
        for i, j, value in cells:
            scores[i, j] = value
        annotators = old.annotators
        changed = ~((scores == old.scores) | (np.isnan(scores) & np.isnan(old.scores)))
        if annotators is not None and changed.any():
            annotators = np.array(annotators, copy=True)
            annotators[:, changed] = scores[changed]  # every annotator's rating: their mean is the new value
            notes.append(f"per-annotator scores of {name!r} kept; every annotator's rating of the "
                         f"{int(changed.sum())} edited cell(s) set to the new value")
        measures[name] = old.with_scores(scores, annotators)
    notes.append(f"{len(edits)} score(s) edited by hand")
    return _rebuild(dataset, id=id or dataset.id, measures=measures, notes=tuple(notes))


# -- include / exclude -----------------------------------------------------------------------------------


def _keep(universe: tuple[str, ...], include, exclude, what: str) -> list[str] | None:
    if include is None and not exclude:
        return None
    known = set(universe)
    for label, names in (("include", include), ("exclude", exclude)):
        unknown = [n for n in (names or ()) if n not in known]
        if unknown:
            raise DatasetError(f"cannot {label} unknown {what}(s): {', '.join(map(repr, unknown[:5]))}")
    wanted = set(universe if include is None else include) - set(exclude or ())
    kept = [n for n in universe if n in wanted]
    if not kept:
        raise DatasetError(f"no {what} would be left")
    return kept


def include_exclude(dataset: Dataset, *, systems: Sequence[str] | None = None, inputs: Sequence[str] | None = None,
                    exclude_systems: Sequence[str] | None = None, exclude_inputs: Sequence[str] | None = None,
                    id: str | None = None) -> Dataset:
    """Keep only ``systems`` / ``inputs`` (None: all), minus ``exclude_systems`` / ``exclude_inputs``.

    The dataset's order is kept. Unknown names, or nothing left, raise a :class:`DatasetError`.
    """
    keep_systems = _keep(dataset.systems, systems, exclude_systems, "system")
    keep_inputs = _keep(dataset.inputs, inputs, exclude_inputs, "input")
    if keep_systems is None and keep_inputs is None:
        return dataset if id is None else with_identity(dataset, id)
    subset = dataset.subset(systems=keep_systems, inputs=keep_inputs, id=id or dataset.id)
    dropped = []
    if keep_systems is not None and len(keep_systems) < dataset.n_systems:
        dropped.append(f"{dataset.n_systems - len(keep_systems)} system(s)")
    if keep_inputs is not None and len(keep_inputs) < dataset.n_inputs:
        dropped.append(f"{dataset.n_inputs - len(keep_inputs)} input(s)")
    notes = tuple(subset.notes) + ((f"excluded {' and '.join(dropped)}",) if dropped else ())
    description = subset.description
    if dropped:  # the base's description may count systems/inputs ("16 systems, ..."): lead with the true counts
        description = (f"Now {subset.n_systems} systems and {subset.n_inputs} inputs ({subset.n_judged} judged), after "
                       f"excluding {' and '.join(dropped)}." + (f" Before: {dataset.description}" if dataset.description
                                                               else ""))
    return _rebuild(subset, notes=notes, description=description)
