"""The data model: systems x inputs score matrices for named measures.

References: docs/methods.md sec. 0.
"""

from __future__ import annotations

import hashlib
import threading
import unicodedata
import weakref
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Literal, Mapping, Sequence

import numpy as np

from metaeval_core.data.errors import DatasetError
from metaeval_core.data.vocabulary import ANNOTATOR_IDENTITIES, TASKS, TaskVocabulary, vocabulary

if TYPE_CHECKING:
    from metaeval_core.data.conventions import WmtConventions

MeasureKind = Literal["human", "metric"]
Pool = Literal["judged", "all"]
POOLS: tuple[str, ...] = ("judged", "all")

# Dataset.scored_by's subsets, per dataset and kept-systems mask. Every analysis of a page first drops the systems
# its human measure never scored; rebuilding that subset (copies, validation, fingerprint) cost ~70 ms a call, and a
# WMT page asked for it 50 times on one render. A Dataset never changes, so its subsets need building once; weakly
# keyed, so they go when the dataset goes.
_SCORED_BY: "weakref.WeakKeyDictionary[Dataset, dict[bytes, Dataset]]" = weakref.WeakKeyDictionary()
_SCORED_BY_LOCK = threading.Lock()
_SCORED_BY_MAX = 8  # distinct masks kept per dataset (a page uses one or two)


def _readonly(array: np.ndarray) -> np.ndarray:
    array = np.array(array, dtype=np.float64, copy=True)
    array.flags.writeable = False
    return array


@dataclass(frozen=True, eq=False)
class Measure:
    """One named measure: a score matrix ``scores[i, j]`` for system i, input j.

    ``annotators`` optionally keeps per-annotator scores ``A[a, i, j]``; ``scores``
    is then their NaN-ignoring mean (docs/methods.md sec. 0).

    ``label`` is an optional display name for pickers and tables (the id ``name``
    stays the key everywhere); ``attributes`` are optional string facts about the
    measure, e.g. ``family`` (``llm-judge``, ``string-based``, ...), ``reference``
    (``reference-based`` / ``reference-free``) or ``criterion``. Neither changes a number.
    """

    name: str
    kind: MeasureKind
    scores: np.ndarray
    annotators: np.ndarray | None = None
    label: str = ""
    attributes: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.kind not in ("human", "metric"):
            raise DatasetError(f"measure {self.name!r}: kind must be 'human' or 'metric', got {self.kind!r}")
        if not isinstance(self.label, str):
            raise DatasetError(f"measure {self.name!r}: label must be a string, got {type(self.label).__name__}")
        if not isinstance(self.attributes, Mapping):
            raise DatasetError(f"measure {self.name!r}: attributes must be a mapping of strings")
        object.__setattr__(self, "attributes", {str(k): str(v) for k, v in self.attributes.items()})
        object.__setattr__(self, "scores", _readonly(self.scores))
        if self.scores.ndim != 2:
            raise DatasetError(f"measure {self.name!r}: scores must be a 2-D systems x inputs matrix")
        if self.annotators is not None:
            object.__setattr__(self, "annotators", _readonly(self.annotators))
            if self.annotators.ndim != 3 or self.annotators.shape[1:] != self.scores.shape:
                raise DatasetError(
                    f"measure {self.name!r}: annotators must have shape (A, {self.scores.shape[0]}, {self.scores.shape[1]})"
                )

    @property
    def display_name(self) -> str:
        """The label when there is one, else the id."""
        return self.label or self.name

    @classmethod
    def from_annotators(cls, name: str, kind: MeasureKind, annotators: np.ndarray, *, label: str = "",
                        attributes: Mapping[str, str] | None = None) -> "Measure":
        """Build a measure whose matrix is the mean over annotators, ignoring NaN."""
        annotators = np.asarray(annotators, dtype=np.float64)
        valid = ~np.isnan(annotators)
        count = valid.sum(axis=0)
        total = np.where(valid, annotators, 0.0).sum(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(count > 0, total / np.maximum(count, 1), np.nan)
        return cls(name=name, kind=kind, scores=mean, annotators=annotators, label=label,
                   attributes=dict(attributes or {}))

    def with_scores(self, scores: np.ndarray, annotators: np.ndarray | None = None) -> "Measure":
        """The same measure (name, kind, label, attributes) over other scores, e.g. a subset or an edit."""
        return Measure(self.name, self.kind, scores, annotators, self.label, self.attributes)


@dataclass(frozen=True, eq=False)
class Dataset:
    """N systems, a pool of inputs and named measures over them.

    Inputs are ordered; ``judged[j]`` is True when input j has at least one human
    score. ``default_systems`` is the system subset the dataset's published
    figures use (``ATTR=VALUE``, e.g. ``kind=model`` on HANNA, which drops the
    human-written stories), or ``''``: the dashboard and the command line apply
    it unless asked for all systems (:meth:`with_default_systems`); the core
    functions themselves always use the systems they are given (docs/methods.md sec. 0.3). ``input_attributes``
    are optional per-input facts (e.g. an MT test set's ``domain`` and ``document``),
    selected with :meth:`select_inputs`. Human measures are always used on judged inputs only; a metric's input
    pool is either ``judged`` (the standard definition) or ``all`` (judged plus
    unjudged inputs, NAACL 2022).

    References: docs/methods.md sec. 0.
    """

    id: str
    systems: tuple[str, ...]
    inputs: tuple[str, ...]
    measures: Mapping[str, Measure]
    system_attributes: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    title: str = ""
    version: str = ""
    citation: str = ""
    licence: str = ""
    description: str = ""
    notes: tuple[str, ...] = ()
    default_systems: str = ""
    input_attributes: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    task: str = ""
    annotator_identity: str = "unknown"
    conventions: "WmtConventions | None" = None
    # The texts behind the cells (metaeval_core.data.texts.ExampleTexts) when the dataset carries them (an upload
    # with a text column); they change no number, so neither the fingerprint nor equality sees them.
    texts: object = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.task not in TASKS:
            raise DatasetError(f"dataset {self.id!r}: task must be one of {', '.join(map(repr, TASKS))}, "
                               f"got {self.task!r}")
        if self.annotator_identity not in ANNOTATOR_IDENTITIES:
            raise DatasetError(f"dataset {self.id!r}: annotator_identity must be one of "
                               f"{', '.join(ANNOTATOR_IDENTITIES)}, got {self.annotator_identity!r}")
        object.__setattr__(self, "systems", tuple(str(s) for s in self.systems))
        object.__setattr__(self, "inputs", tuple(str(j) for j in self.inputs))
        object.__setattr__(self, "measures", dict(self.measures))
        object.__setattr__(
            self, "system_attributes", {k: tuple(str(v) for v in vs) for k, vs in self.system_attributes.items()}
        )
        object.__setattr__(
            self, "input_attributes", {k: tuple(str(v) for v in vs) for k, vs in self.input_attributes.items()}
        )
        shape = (len(self.systems), len(self.inputs))
        if len(set(self.systems)) != len(self.systems):
            raise DatasetError(f"dataset {self.id!r}: system names must be unique")
        if len(set(self.inputs)) != len(self.inputs):
            raise DatasetError(f"dataset {self.id!r}: input ids must be unique")
        for name, measure in self.measures.items():
            if measure.name != name:
                raise DatasetError(f"dataset {self.id!r}: measure key {name!r} differs from its name {measure.name!r}")
            if measure.scores.shape != shape:
                raise DatasetError(
                    f"dataset {self.id!r}: measure {name!r} has shape {measure.scores.shape}, expected {shape}"
                )
        for attribute, values in self.system_attributes.items():
            if len(values) != len(self.systems):
                raise DatasetError(
                    f"dataset {self.id!r}: attribute {attribute!r} has {len(values)} values for {len(self.systems)} systems"
                )
        for attribute, values in self.input_attributes.items():
            if len(values) != len(self.inputs):
                raise DatasetError(
                    f"dataset {self.id!r}: input attribute {attribute!r} has {len(values)} values for "
                    f"{len(self.inputs)} inputs"
                )
        if not isinstance(self.default_systems, str):
            raise DatasetError(f"dataset {self.id!r}: default_systems must be a string such as 'kind=model'")
        if self.default_systems and not self._selected(self.default_systems, strict=False):
            raise DatasetError(f"dataset {self.id!r}: default_systems {self.default_systems!r} matches no system")
        judged = np.zeros(len(self.inputs), dtype=bool)
        for measure in self.measures.values():
            if measure.kind == "human":
                judged |= ~np.all(np.isnan(measure.scores), axis=0)
        judged.flags.writeable = False
        object.__setattr__(self, "judged", judged)
        if not self.version:
            object.__setattr__(self, "version", self.fingerprint())

    judged: np.ndarray = field(init=False, repr=False)

    # -- design ----------------------------------------------------------
    @property
    def vocabulary(self) -> TaskVocabulary:
        """What this dataset's outputs and inputs are called (summaries of documents, stories from prompts, ...)."""
        return vocabulary(self.task)

    def annotators_are(self, name: str) -> str:
        """Whether annotator k of measure ``name`` is one person throughout (``persons``), a position filled by
        different people (``positions``), or not known (``unknown``): the measure's attribute ``annotators``
        when set, else the dataset's ``annotator_identity``."""
        value = self.measure(name).attributes.get("annotators", self.annotator_identity)
        return value if value in ANNOTATOR_IDENTITIES else "unknown"

    # -- shape -----------------------------------------------------------
    @property
    def n_systems(self) -> int:
        return len(self.systems)

    @property
    def n_inputs(self) -> int:
        return len(self.inputs)

    @property
    def n_judged(self) -> int:
        return int(self.judged.sum())

    @property
    def n_unjudged(self) -> int:
        return self.n_inputs - self.n_judged

    @property
    def has_unjudged_pool(self) -> bool:
        """Whether some metric has scores on inputs that no human judged."""
        unjudged = ~self.judged
        if not unjudged.any():
            return False
        return any(
            (~np.isnan(m.scores[:, unjudged])).any() for m in self.measures.values() if m.kind == "metric"
        )

    @property
    def human_measures(self) -> tuple[str, ...]:
        return tuple(n for n, m in self.measures.items() if m.kind == "human")

    @property
    def metric_measures(self) -> tuple[str, ...]:
        return tuple(n for n, m in self.measures.items() if m.kind == "metric")

    # -- access ----------------------------------------------------------
    def measure(self, name: str) -> Measure:
        """The measure ``name`` names (:meth:`resolve`); a short error with close names otherwise."""
        found = self.measures.get(name)
        return found if found is not None else self.measures[self.resolve(name)]

    def resolve(self, name: str) -> str:
        """The id of the measure that ``name`` names.

        ``name`` is a measure's id; else its upstream name (attribute ``upstream``, e.g. HANNA's glyph column
        ``BLEU Ξ§``, so links and scripts written with it keep working); else, ignoring case and repeated
        spaces, the id or label of exactly one measure (``bleu``, ``Beluga-13B · Relevance (prompt 1)``).

        Raises
        ------
        DatasetError
            No measure matches (the message suggests up to three close names rather than listing every
            measure), or several do (the message names them).

        References
        ----------
        docs/methods.md sec. 0.
        """
        if name in self.measures:
            return name
        if not isinstance(name, str):
            raise DatasetError(f"a measure name must be a string; got {type(name).__name__}")
        upstream = [n for n, m in self.measures.items() if m.attributes.get("upstream") == name]
        if len(upstream) == 1:
            return upstream[0]
        key = _fold(name)
        matches = [n for n, m in self.measures.items()
                   if key in {_fold(n), _fold(m.label), _fold(m.attributes.get("upstream", ""))} - {""}]
        if len(matches) == 1:
            return matches[0]
        if matches:
            raise DatasetError(f"measure {name!r} is ambiguous in dataset {self.id!r}: it names "
                               f"{', '.join(matches)}; use one of these ids")
        raise DatasetError(f"unknown measure {name!r} in dataset {self.id!r}; {self._known_hint(name)}")

    def _known_hint(self, name: str) -> str:
        """The measures (when few) or up to three close names and how to list the rest."""
        if len(self.measures) <= 12:
            return f"known measures: {', '.join(self.measures) or 'none'}"
        import difflib

        names: dict[str, str] = {}
        for n, m in self.measures.items():
            for shown in (n, m.label):
                if shown:
                    names.setdefault(_fold(shown), shown)
        close = (difflib.get_close_matches(_fold(name), list(names), n=3, cutoff=0.6)
                 or [k for k in names if _fold(name) in k][:3])  # 'rouge' -> 'ROUGE-1 Recall', ...
        listing = (f"{len(self.measures)} measures; `metaeval describe --dataset {self.id}` or the Dataset "
                   "page lists them")
        if not close:
            return f"no close name ({listing})"
        return f"did you mean {_or_list([names[c] for c in close])}? ({listing})"

    def matrix(self, name: str, *, pool: Pool = "judged") -> np.ndarray:
        """The (systems x inputs) matrix of a measure over its input pool.

        Human measures always use the judged inputs; ``pool='all'`` applies to
        metrics only and returns every input (judged then unjudged, in dataset order).
        """
        if pool not in POOLS:
            raise DatasetError(f"pool must be one of {POOLS}, got {pool!r}")
        measure = self.measure(name)
        if pool == "judged" or measure.kind == "human":
            return measure.scores[:, self.judged]
        return measure.scores

    def display_name(self, name: str) -> str:
        """A measure's label for pickers and tables (its id when it has no label)."""
        return self.measure(name).display_name

    def measures_with(self, attribute: str, value: str | None = None, *,
                      kind: MeasureKind | None = None) -> tuple[str, ...]:
        """Ids of the measures whose ``attribute`` is set (and equals ``value`` when given), in dataset order."""
        return tuple(
            n for n, m in self.measures.items()
            if attribute in m.attributes and (value is None or m.attributes[attribute] == value)
            and (kind is None or m.kind == kind)
        )

    def system_attribute(self, attribute: str) -> tuple[str, ...]:
        try:
            return self.system_attributes[attribute]
        except KeyError:
            known = ", ".join(self.system_attributes) or "none"
            raise DatasetError(
                f"unknown system attribute {attribute!r} in dataset {self.id!r}; known attributes: {known}"
            ) from None

    # -- derived datasets ------------------------------------------------
    def subset(
        self,
        *,
        systems: Sequence[str] | None = None,
        inputs: Sequence[str] | None = None,
        measures: Sequence[str] | None = None,
        id: str | None = None,
    ) -> "Dataset":
        """A dataset restricted to some systems, inputs and measures (order kept as given)."""
        sys_index = self._indices(self.systems, systems, "system")
        inp_index = self._indices(self.inputs, inputs, "input")
        names = list(self.measures) if measures is None else list(measures)
        new_measures = {}
        for name in names:
            m = self.measure(name)
            annotators = None if m.annotators is None else m.annotators[:, sys_index][:, :, inp_index]
            new_measures[name] = m.with_scores(m.scores[np.ix_(sys_index, inp_index)], annotators)
        attributes = {k: [v[i] for i in sys_index] for k, v in self.system_attributes.items()}
        default = self.default_systems
        if default and not _resolve(default, [self.systems[i] for i in sys_index], attributes, strict=False):
            default = ""  # the subset kept none of the default's systems: it no longer applies
        return Dataset(
            id=id or self.id,
            systems=[self.systems[i] for i in sys_index],
            inputs=[self.inputs[j] for j in inp_index],
            measures=new_measures,
            system_attributes=attributes,
            title=self.title,
            citation=self.citation,
            licence=self.licence,
            description=self.description,
            notes=self.notes,
            default_systems=default,
            input_attributes={k: [v[j] for j in inp_index] for k, v in self.input_attributes.items()},
            task=self.task,
            annotator_identity=self.annotator_identity,
            conventions=self.conventions,
            texts=self.texts,
        )

    def select_systems(self, selection: str | Mapping[str, str] | None) -> "Dataset":
        """The systems a selection expression keeps: ``ATTR=VALUE``, names, ``all``, ``!``/``-`` to remove,
        joined by ``,`` (``kind=mt,refB``, ``!refA``; docs/methods.md sec. 0.3)."""
        return self._select(selection, "system")

    def select_inputs(self, selection: str | Mapping[str, str] | None) -> "Dataset":
        """The inputs a selection expression keeps (the grammar of :meth:`select_systems`), e.g. ``domain=news``."""
        return self._select(selection, "input")

    def _select(self, selection: str | Mapping[str, str] | None, what: str) -> "Dataset":
        from metaeval_core.data.selection import describe_empty, parse_selection, resolve_selection

        parsed = parse_selection(selection)
        if parsed.is_all:
            return self
        names, attributes = (self.systems, self.system_attributes) if what == "system" else (
            self.inputs, self.input_attributes)
        keep = resolve_selection(parsed, names, attributes, what=what, where=f"dataset {self.id!r}")
        if not keep:
            raise DatasetError(describe_empty(parsed, attributes, what=what, where=f"dataset {self.id!r}"))
        if len(keep) == len(names):
            return self
        chosen = [names[i] for i in keep]
        return self.subset(systems=chosen) if what == "system" else self.subset(inputs=chosen)

    def rated_by(self, human: str) -> "Dataset":
        """The systems with at least one score from ``human`` (itself when every system has one).

        A system the human measure never scored carries no information about agreement with it; removing it
        before any statistic keeps its metric cells out of standardisations and resamples (WMT removes systems
        without a gold score first: mt-metrics-eval ``data.GetCorrelations``). docs/methods.md sec. 0.2.
        """
        return self.scored_by([human])

    def scored_by(self, measures: Sequence[str]) -> "Dataset":
        """The systems with at least one score from every measure named (unknown names are ignored: the
        caller's validation names them); itself when that is every system, or none."""
        rated = np.ones(self.n_systems, dtype=bool)
        for name in measures:
            if isinstance(name, str) and name in self.measures:
                rated &= ~np.all(np.isnan(self.measures[name].scores), axis=1)
        if rated.all() or not rated.any():
            return self
        mask = rated.tobytes()
        with _SCORED_BY_LOCK:
            known = _SCORED_BY.get(self, {}).get(mask)
        if known is not None:
            return known
        subset = self.subset(systems=[s for s, keep in zip(self.systems, rated) if keep])
        with _SCORED_BY_LOCK:
            kept = _SCORED_BY.setdefault(self, {})
            if len(kept) >= _SCORED_BY_MAX:
                kept.pop(next(iter(kept)))
            kept[mask] = subset
        return subset

    def unrated_systems(self, human: str) -> tuple[str, ...]:
        """The systems ``human`` never scored (removed before any statistic; :meth:`rated_by`)."""
        scores = self.measure(human).scores
        return tuple(s for s, none in zip(self.systems, np.all(np.isnan(scores), axis=1)) if none)

    def default_selection(self, *, human_translations: bool = False) -> str:
        """The system selection applied by default: ``default_systems``, or with ``human_translations`` on a
        dataset with WMT conventions every system but the standard reference (docs/methods.md sec. 0.6)."""
        if human_translations and self.conventions is not None:
            return self.conventions.systems(human_translations=True)
        return self.default_systems

    def with_default_systems(self, *, human_translations: bool = False) -> "Dataset":
        """The dataset restricted to its default selection (:meth:`default_selection`; itself when there is
        none), with a note saying so."""
        selection = self.default_selection(human_translations=human_translations)
        if not selection:
            return self
        keep = self._selected(selection, strict=False)
        if not keep or len(keep) == self.n_systems:
            return self
        subset = self.subset(systems=[self.systems[i] for i in keep])
        dropped = [s for s in self.systems if s not in set(subset.systems)]
        if self.conventions is not None:
            why = ("WMT's convention (mt-metrics-eval): the standard reference is never a system"
                   + ("" if human_translations else ", human translations only when asked"))
            ask = "Ask for human translations or all systems to keep them."
        else:
            why, ask = "this dataset's default as in its published figures", "Ask for all systems to keep them."
        note = (f"Systems: {selection} ({subset.n_systems} of {self.n_systems}), {why}; dropped "
                f"{', '.join(dropped)}. {ask}")
        return replace(subset, notes=tuple(subset.notes) + (note,), version="")

    def _selected(self, selection: str, *, strict: bool = True) -> list[int]:
        return _resolve(selection, self.systems, self.system_attributes, strict=strict)

    def fingerprint(self) -> str:
        """A short content hash: two datasets with equal fingerprints hold the same numbers."""
        digest = hashlib.sha256()
        digest.update("\x1f".join(self.systems).encode())
        digest.update(b"\x1e")
        digest.update("\x1f".join(self.inputs).encode())
        for name, m in self.measures.items():
            digest.update(f"\x1e{name}\x1f{m.kind}".encode())
            digest.update(np.ascontiguousarray(m.scores).tobytes())
            if m.annotators is not None:
                digest.update(np.ascontiguousarray(m.annotators).tobytes())
        for attr, values in sorted(self.system_attributes.items()):
            digest.update(f"\x1e{attr}\x1f".encode() + "\x1f".join(values).encode())
        # Labels, measure attributes and the default subset enter only when set, so that the fingerprints
        # of datasets without them are unchanged.
        # A measure's ``annotators`` attribute (persons or positions) changes words, never a number, like the
        # dataset's annotator identity below.
        described = [(n, m.label, attributes) for n, m in self.measures.items()
                     for attributes in [sorted((k, v) for k, v in m.attributes.items() if k != "annotators")]
                     if m.label or attributes]
        if described or self.default_systems:
            digest.update(repr((described, self.default_systems)).encode())
        if self.input_attributes:
            digest.update(repr(sorted(self.input_attributes.items())).encode())
        # The task vocabulary and annotator identity change words, never a number: a dataset uploaded back from its
        # own export (which cannot carry them) keeps its fingerprint.
        return digest.hexdigest()[:16]

    @staticmethod
    def _indices(universe: tuple[str, ...], chosen: Sequence[str] | None, what: str) -> list[int]:
        if chosen is None:
            return list(range(len(universe)))
        position = {name: k for k, name in enumerate(universe)}
        missing = [c for c in chosen if c not in position]
        if missing:
            raise DatasetError(f"unknown {what}(s): {', '.join(map(str, missing[:5]))}")
        return [position[c] for c in chosen]


def _fold(text: str) -> str:
    """A name for matching: NFC (a name typed with decomposed accents finds its name), case-folded, runs of
    spaces collapsed."""
    return " ".join(unicodedata.normalize("NFC", str(text)).split()).casefold()


def _or_list(items: Sequence[str]) -> str:
    quoted = [repr(i) for i in items]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]


def _resolve(selection: str, names: Sequence[str], attributes: Mapping[str, Sequence[str]], *,
             strict: bool) -> list[int]:
    from metaeval_core.data.selection import resolve_selection

    return resolve_selection(selection, names, attributes, strict=strict)
