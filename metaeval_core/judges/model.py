"""The data model of pairwise ("A or B?") verdicts: items, raters, presentation orders, integer codes.

An *item* is one input with two outputs, A and B (with the ids of the systems that wrote them when known). A
*rater* gives each item a *verdict*: A better, B better, a tie, or an invalid answer (an LLM judge's reply that
could not be parsed). Raters are human annotators, a gold label, or judges; a judge may have judged each item
in both presentation *orders* (A shown first, then B first). Verdicts are always in the item's own numbering: a
verdict ``A`` given in the swapped order means the output shown *second* won.

Everything is stored as an integer-coded array ``verdicts[item, rater, order]`` (``int8``: 0 = A, 1 = B,
2 = tie, 3 = invalid, -1 = no verdict), so a bootstrap resamples items by indexing one axis and the statistics
are vectorised over raters. An invalid verdict is a verdict: it is kept, counted and treated by each statistic
under a named convention, never dropped on loading.

Items belong to one *pair set* each (LLMBar's Natural, Neighbor, ...; a single set for PandaLM) and may carry
string attributes (the system pair, the task) that select *subsets*.

References: docs/methods.md sec. 18 (pairwise judges).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from typing import Literal, Mapping, Sequence

import numpy as np

from metaeval_core.data.dataset import DatasetError

#: Verdict codes (the values of :attr:`PairwiseData.verdicts`).
A, B, TIE, INVALID = 0, 1, 2, 3
MISSING = -1
VERDICTS: tuple[str, ...] = ("A", "B", "tie", "invalid")
RaterKind = Literal["human", "gold", "judge"]
RATER_KINDS: tuple[str, ...] = ("human", "gold", "judge")
#: Presentation orders: index 0 shows A first (the item's own order), index 1 shows B first.
ORDERS: tuple[str, ...] = ("original", "swapped")
NoMajority = Literal["tie", "drop"]
NO_MAJORITY: tuple[str, ...] = ("tie", "drop")


@dataclass(frozen=True)
class Rater:
    """One source of verdicts: a human annotator, a gold label or a judge.

    ``id`` is unique in its dataset (LLMBar judges: ``'GPT-4/Vanilla'``); ``label`` an optional display name;
    ``attributes`` string facts (LLMBar: ``evaluator`` and ``strategy``).
    """

    id: str
    kind: RaterKind
    label: str = ""
    attributes: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id:
            raise DatasetError(f"a rater id must be a non-empty string; got {self.id!r}")
        if self.kind not in RATER_KINDS:
            raise DatasetError(f"rater {self.id!r}: kind must be one of {', '.join(RATER_KINDS)}; got {self.kind!r}")
        object.__setattr__(self, "attributes", {str(k): str(v) for k, v in dict(self.attributes).items()})

    @property
    def display_name(self) -> str:
        return self.label or self.id


def _strings(values: Sequence[str] | None, n: int, name: str) -> tuple[str, ...]:
    if values is None:
        return ("",) * n
    values = tuple(values)
    # map(str) runs in C (a million items' system names: 0.1 s, not 0.4 s); None is the only non-text to read as ''
    values = tuple(map(str, values if None not in values else ("" if v is None else v for v in values)))
    if len(values) != n:
        raise DatasetError(f"{name} must hold one string per item ({n}); got {len(values)}")
    return values


def _readonly(array: np.ndarray, dtype) -> np.ndarray:
    out = np.array(array, dtype=dtype, copy=True)
    out.flags.writeable = False
    return out


@dataclass(frozen=True, eq=False)
class PairwiseData:
    """Pairwise verdicts of several raters on a set of items (see the module docstring).

    Attributes
    ----------
    id, title, citation, licence, description, version : str
        Metadata; ``version`` changes whenever the verdicts may (cache key with ``id``).
    items : tuple of str
        Unique item ids, length ``n``.
    pair_sets : tuple of str
        The pair sets' names; ``pair_set[i]`` is the index of item ``i``'s set.
    raters : tuple of Rater
        Length ``R``, ids unique.
    verdicts : numpy.ndarray
        ``int8`` of shape ``(n, R, 2)``: codes :data:`A`, :data:`B`, :data:`TIE`, :data:`INVALID` or
        :data:`MISSING`, in the item's numbering, per presentation order (:data:`ORDERS`). Read-only.
    scores : numpy.ndarray or None
        ``float64`` of shape ``(n, R, 2)``: a rater's scores of output A and of output B (NaN where none),
        for raters that score outputs (LLMBar's Rating strategy); None when no rater does.
    inputs, output_a, output_b, system_a, system_b : tuple of str
        Per item; ``''`` when unknown.
    attributes : mapping of str to tuple of str
        Item attributes (e.g. ``system_pair``, ``task``), one value per item, for subsets.
    notes : tuple of str
        Caveats a reader should see (how invalid verdicts arose, what a label means).

    References
    ----------
    docs/methods.md sec. 18.1.
    """

    id: str
    items: tuple[str, ...]
    pair_sets: tuple[str, ...]
    pair_set: np.ndarray
    raters: tuple[Rater, ...]
    verdicts: np.ndarray
    scores: np.ndarray | None = None
    inputs: tuple[str, ...] = ()
    output_a: tuple[str, ...] = ()
    output_b: tuple[str, ...] = ()
    system_a: tuple[str, ...] = ()
    system_b: tuple[str, ...] = ()
    attributes: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    title: str = ""
    citation: str = ""
    licence: str = ""
    description: str = ""
    version: str = ""
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        items = tuple(map(str, self.items))
        n = len(items)
        if n == 0:
            raise DatasetError(f"dataset {self.id!r}: no items")
        if len(set(items)) != n:
            raise DatasetError(f"dataset {self.id!r}: item ids must be unique")
        object.__setattr__(self, "items", items)
        raters = tuple(self.raters)
        if not raters or not all(isinstance(r, Rater) for r in raters):
            raise DatasetError(f"dataset {self.id!r}: raters must be a non-empty sequence of Rater")
        ids = [r.id for r in raters]
        if len(set(ids)) != len(ids):
            raise DatasetError(f"dataset {self.id!r}: rater ids must be unique")
        object.__setattr__(self, "raters", raters)
        verdicts = np.asarray(self.verdicts)
        if verdicts.shape != (n, len(raters), len(ORDERS)):
            raise DatasetError(f"dataset {self.id!r}: verdicts must have shape (items, raters, 2) = "
                               f"({n}, {len(raters)}, 2); got {verdicts.shape}")
        if verdicts.size and (verdicts.min() < MISSING or verdicts.max() > INVALID):
            raise DatasetError(f"dataset {self.id!r}: verdict codes must lie in -1..3")
        object.__setattr__(self, "verdicts", _readonly(verdicts, np.int8))
        if self.scores is not None:
            scores = np.asarray(self.scores, dtype=np.float64)
            if scores.shape != (n, len(raters), 2):
                raise DatasetError(f"dataset {self.id!r}: scores must have shape (items, raters, 2); got {scores.shape}")
            object.__setattr__(self, "scores", _readonly(scores, np.float64))
        pair_sets = tuple(str(p) for p in self.pair_sets)
        pair_set = np.asarray(self.pair_set)
        if pair_set.shape != (n,) or not pair_sets or (n and (pair_set.min() < 0 or pair_set.max() >= len(pair_sets))):
            raise DatasetError(f"dataset {self.id!r}: pair_set must give each item the index of one of the "
                               f"{len(pair_sets)} pair sets")
        object.__setattr__(self, "pair_sets", pair_sets)
        object.__setattr__(self, "pair_set", _readonly(pair_set, np.int64))
        for name in ("inputs", "output_a", "output_b", "system_a", "system_b"):
            object.__setattr__(self, name, _strings(getattr(self, name) or None, n, name))
        attributes = {}
        for key, values in dict(self.attributes).items():
            attributes[str(key)] = _strings(values, n, f"attribute {key!r}")
        object.__setattr__(self, "attributes", attributes)
        object.__setattr__(self, "notes", tuple(self.notes))

    # -- sizes and names ------------------------------------------------------------------------------------
    @property
    def n_items(self) -> int:
        return len(self.items)

    @property
    def n_raters(self) -> int:
        return len(self.raters)

    @property
    def rater_ids(self) -> tuple[str, ...]:
        return tuple(r.id for r in self.raters)

    def _ids_of(self, kind: str) -> tuple[str, ...]:
        return tuple(r.id for r in self.raters if r.kind == kind)

    @property
    def humans(self) -> tuple[str, ...]:
        """The human annotators' ids."""
        return self._ids_of("human")

    @property
    def golds(self) -> tuple[str, ...]:
        """The gold labels' ids."""
        return self._ids_of("gold")

    @property
    def judges(self) -> tuple[str, ...]:
        """The judges' ids."""
        return self._ids_of("judge")

    @property
    def systems(self) -> tuple[str, ...]:
        """The system ids named by any item, sorted (empty when the dataset does not say)."""
        return tuple(sorted({s for s in self.system_a + self.system_b if s}))

    @property
    def has_texts(self) -> bool:
        """True when the dataset carries the outputs' texts (length statistics need them; an empty output is
        a text of length 0)."""
        return any(self.output_a) or any(self.output_b)

    def rater(self, rater_id: str) -> Rater:
        return self.raters[self.rater_index(rater_id)]

    def rater_index(self, rater_id: object) -> int:
        if not isinstance(rater_id, str):
            raise TypeError(f"a rater id must be a string; got {type(rater_id).__name__}")
        try:
            return self.rater_ids.index(rater_id)
        except ValueError:
            shown = ", ".join(self.rater_ids[:12]) + (" ..." if self.n_raters > 12 else "")
            raise DatasetError(f"dataset {self.id!r} has no rater {rater_id!r}; raters: {shown}") from None

    def orders_of(self, rater_id: str) -> tuple[str, ...]:
        """The presentation orders in which ``rater_id`` gave at least one verdict."""
        v = self.verdicts[:, self.rater_index(rater_id), :]
        return tuple(o for k, o in enumerate(ORDERS) if (v[:, k] != MISSING).any())

    def order_modes(self, modes: Sequence[str] = ("original", "swapped", "average", "both")) -> tuple[str, ...]:
        """The presentation-order modes the judges' verdicts support, of ``modes``: all of them when some judge
        gave verdicts in both orders, else the one order (or two single orders) the judges were run in, so that
        judges run only in the swapped order are analysable (``('swapped',)``, not ``('original',)``)."""
        judges = [self.rater_index(j) for j in self.judges]
        given = self.verdicts[:, judges, :] != MISSING if judges else np.zeros((self.n_items, 0, 2), bool)
        if (given.any(axis=0).all(axis=1)).any():
            return tuple(modes)
        present = tuple(o for k, o in enumerate(ORDERS) if given[:, :, k].any() and o in modes)
        return present or tuple(o for o in modes if o == ORDERS[0])

    def covered(self, rater_id: str) -> np.ndarray:
        """Boolean per item: the rater gave a verdict (valid or invalid) in some order."""
        return (self.verdicts[:, self.rater_index(rater_id), :] != MISSING).any(axis=1)

    def verdict_counts(self, rater_id: str, order: str = "original") -> dict[str, int]:
        """How many A, B, tie and invalid verdicts ``rater_id`` gave in ``order`` (and how many are missing)."""
        if order not in ORDERS:
            raise ValueError(f"order must be one of {', '.join(ORDERS)}; got {order!r}")
        v = self.verdicts[:, self.rater_index(rater_id), ORDERS.index(order)]
        counts = {name: int((v == code).sum()) for code, name in enumerate(VERDICTS)}
        counts["missing"] = int((v == MISSING).sum())
        return counts

    # -- selections ------------------------------------------------------------------------------------------
    def select_items(self, which: np.ndarray | Sequence[int], *, label: str = "") -> "PairwiseData":
        """The dataset restricted to some items (a boolean mask or indices, in the given order).

        ``label`` is appended to the id and the version (a selection is another cache key).
        """
        index = np.asarray(which)
        if index.dtype == bool:
            if index.shape != (self.n_items,):
                raise ValueError(f"a boolean item mask must have length {self.n_items}; got {index.shape}")
            index = np.flatnonzero(index)
        index = index.astype(np.int64)
        if index.size == 0:
            raise DatasetError(f"dataset {self.id!r}: the selection {label or '(items)'} holds no item")
        if index.min() < 0 or index.max() >= self.n_items:
            raise ValueError(f"item indices must lie in 0..{self.n_items - 1}")
        if np.unique(index).size != index.size:
            raise ValueError("select_items: each item may be selected once (item ids stay unique); resampling "
                             "with repeats is the statistics' job")
        used = np.unique(self.pair_set[index])
        remap = np.full(len(self.pair_sets), -1)
        remap[used] = np.arange(used.size)
        digest = hashlib.sha256(index.tobytes()).hexdigest()[:12]
        pick = lambda values: tuple(values[i] for i in index)  # noqa: E731
        return replace(
            self,
            items=pick(self.items),
            pair_sets=tuple(self.pair_sets[u] for u in used),
            pair_set=remap[self.pair_set[index]],
            verdicts=self.verdicts[index],
            scores=None if self.scores is None else self.scores[index],
            inputs=pick(self.inputs), output_a=pick(self.output_a), output_b=pick(self.output_b),
            system_a=pick(self.system_a), system_b=pick(self.system_b),
            attributes={k: pick(v) for k, v in self.attributes.items()},
            version=f"{self.version}:{label or digest}",
        )

    def select_pair_set(self, name: str) -> "PairwiseData":
        """The items of one pair set."""
        if name not in self.pair_sets:
            raise DatasetError(f"dataset {self.id!r} has no pair set {name!r}; pair sets: {', '.join(self.pair_sets)}")
        return self.select_items(self.pair_set == self.pair_sets.index(name), label=f"set={name}")

    def select_pair_sets(self, names: Sequence[str]) -> "PairwiseData":
        """The items of some pair sets together (the dataset itself when ``names`` are all of them)."""
        for name in names:
            if name not in self.pair_sets:
                raise DatasetError(f"dataset {self.id!r} has no pair set {name!r}; pair sets: "
                                   f"{', '.join(self.pair_sets)}")
        if set(names) >= set(self.pair_sets):
            return self
        return self.select_items(np.isin(self.pair_set, [self.pair_sets.index(p) for p in names]),
                                 label="sets=" + ",".join(names))

    def select_subset(self, attribute: str, value: str) -> "PairwiseData":
        """The items whose ``attribute`` is ``value`` (e.g. ``('system_pair', 'llama-7b vs opt-7b')``)."""
        if attribute not in self.attributes:
            raise DatasetError(f"dataset {self.id!r} has no item attribute {attribute!r}; attributes: "
                               f"{', '.join(self.attributes) or '(none)'}")
        mask = np.array([v == value for v in self.attributes[attribute]])
        return self.select_items(mask, label=f"{attribute}={value}")

    def subsets(self, attribute: str) -> tuple[str, ...]:
        """The values of an item attribute, in first-seen order."""
        if attribute not in self.attributes:
            raise DatasetError(f"dataset {self.id!r} has no item attribute {attribute!r}")
        return tuple(dict.fromkeys(self.attributes[attribute]))

    def judges_of(self, pair_set: str | None = None) -> tuple[str, ...]:
        """The judges with at least one verdict on the items (of ``pair_set`` when given)."""
        mask = np.ones(self.n_items, bool) if pair_set is None else self.pair_set == self.pair_sets.index(pair_set)
        return tuple(j for j in self.judges
                     if (self.verdicts[mask, self.rater_index(j), :] != MISSING).any())


def majority_verdict(verdicts: np.ndarray, *, no_majority: NoMajority = "tie") -> np.ndarray:
    """The verdict more than half of the valid verdicts of each row agree on.

    Parameters
    ----------
    verdicts : array of int, shape (n, k)
        Codes per item (rows) and rater (columns); invalid and missing verdicts do not vote.
    no_majority : {'tie', 'drop'}
        What an item without a strict majority gets: a tie (the people are split: no preference) or
        :data:`MISSING` (the item is left out of every statistic that uses this reference).

    Returns
    -------
    numpy.ndarray of int8, shape (n,)
        :data:`A`, :data:`B` or :data:`TIE`; :data:`MISSING` where no rater gave a valid verdict, or no
        majority under ``'drop'``.

    References
    ----------
    docs/methods.md sec. 18.1.
    """
    if no_majority not in NO_MAJORITY:
        raise ValueError(f"no_majority must be one of {', '.join(NO_MAJORITY)}; got {no_majority!r}")
    v = np.asarray(verdicts)
    if v.ndim != 2:
        raise ValueError(f"verdicts must be a 2-D items x raters array; got shape {v.shape}")
    counts = np.stack([(v == code).sum(axis=1) for code in (A, B, TIE)], axis=1)
    valid = counts.sum(axis=1)
    best = counts.argmax(axis=1)
    strict = 2 * counts.max(axis=1) > valid
    out = np.where(strict, best, TIE if no_majority == "tie" else MISSING)
    out = np.where(valid == 0, MISSING, out)
    return out.astype(np.int8)
