"""The selection expression for systems (and inputs): attributes, names, lists and negation.

Grammar (docs/methods.md sec. 0.3), terms separated by commas, spaces ignored::

    all              every system
    ATTR=VALUE       the systems whose attribute ATTR is VALUE; several terms on the same attribute are
                     alternatives (kind=mt,kind=reference), terms on different attributes must all hold
                     (type=abs,size=large)
    NAME             that system
    !TERM or -TERM   remove what TERM (a NAME or ATTR=VALUE) selects

A name or value holding a comma, an ``=``, a leading ``!``/``-`` or surrounding spaces is written in double
quotes (``"a, b"``, ``domain="news, sport"``; ``""`` inside quotes is one quote) or with a backslash before the
character (``a\\, b``); :func:`quote_term` and :func:`selection_term` write them so. Names are compared in
Unicode NFC, so a name typed in decomposed form (NFD) finds its dataset name.

The result is (the attribute filter, when there are ATTR=VALUE terms) plus the named systems (every system
with ``all``, or when there is no positive term at all), minus the removed ones. Examples: ``!refA`` (all
but refA), ``all,-refA`` (the same), ``kind=mt,refB`` (the MT systems and refB). An empty text, ``None`` and
``all`` select everything. An unknown name or attribute is an error that names it and suggests the closest
known names (did you mean ...).

References: docs/methods.md sec. 0.3.
"""

from __future__ import annotations

import difflib
import unicodedata
from dataclasses import dataclass
from typing import Mapping, Sequence

from metaeval_core.data.errors import DatasetError

ALL = "all"
_NEGATIONS = ("!", "-")


@dataclass(frozen=True)
class Selection:
    """A parsed selection: positive and removed attribute terms and names (see the module docstring)."""

    text: str
    everything: bool = False
    attributes: tuple[tuple[str, str], ...] = ()
    names: tuple[str, ...] = ()
    removed_attributes: tuple[tuple[str, str], ...] = ()
    removed_names: tuple[str, ...] = ()

    @property
    def is_all(self) -> bool:
        """Whether the selection keeps every system whatever the dataset (empty, or ``all`` alone)."""
        return not (self.attributes or self.names or self.removed_attributes or self.removed_names)

    @property
    def attribute_only(self) -> dict[str, str]:
        """The positive ``ATTR=VALUE`` terms as a dict (one value per attribute), the legacy form."""
        return dict(self.attributes)


class SelectionText(str):
    """A selection expression parsed once, where it enters (the sidebar's system picker, ``--systems``): the text
    itself, usable wherever a selection text is (cache keys, the URL, captions), carrying its parsed
    :class:`Selection` in ``parsed``, so that the size guards and the core do not parse it again.

    Raises :class:`DatasetError` as :func:`parse_selection` does; resolving the names against a dataset
    (:meth:`Dataset.select_systems`) still happens per dataset.

    Examples
    --------
    >>> chosen = SelectionText("kind=mt, !refA")
    >>> chosen == "kind=mt, !refA", chosen.parsed.attributes, chosen.parsed.removed_names
    (True, (('kind', 'mt'),), ('refA',))
    >>> parse_selection(chosen) is chosen.parsed
    True

    References
    ----------
    docs/methods.md sec. 0.3.
    """

    parsed: Selection

    def __new__(cls, text: str = "") -> "SelectionText":
        value = super().__new__(cls, text)
        object.__setattr__(value, "parsed", parse_selection(str(text)))
        return value

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"a SelectionText is frozen; cannot set {name!r}")


_SPECIAL = frozenset(',="\\')


def quote_term(text: str) -> str:
    """``text`` as one literal NAME or VALUE of a selection: in double quotes when it holds a comma, ``=``, quote
    or backslash, starts with ``!``/``-``, has surrounding spaces or is ``all``; unchanged otherwise.

    >>> quote_term("refA"), quote_term("news, sport"), quote_term("-x")
    ('refA', '"news, sport"', '"-x"')

    References: docs/methods.md sec. 0.3.
    """
    text = str(text)
    if (text and not _SPECIAL.intersection(text) and text[0] not in _NEGATIONS and text == text.strip()
            and text != ALL):
        return text
    return '"' + text.replace('"', '""') + '"'


def selection_term(attribute: str, value: str) -> str:
    """The term ``ATTR=VALUE`` with both sides quoted as needed (:func:`quote_term`): a preset that parses back to
    exactly this attribute and value whatever they hold.

    References: docs/methods.md sec. 0.3.
    """
    return f"{quote_term(attribute)}={quote_term(value)}"


def _terms(selection: str) -> list[list[tuple[str, bool]]]:
    """Split a selection into terms of (character, literal) pairs: commas end a term unless quoted or escaped;
    quoted and backslash-escaped characters are literal (never a separator, ``=`` or negation)."""
    terms: list[list[tuple[str, bool]]] = [[]]
    quoted = False
    k = 0
    while k < len(selection):
        char = selection[k]
        if quoted:
            if char == '"':
                if selection[k + 1:k + 2] == '"':
                    terms[-1].append(('"', True))
                    k += 1
                else:
                    quoted = False
            else:
                terms[-1].append((char, True))
        elif char == '"':
            quoted = True
            terms[-1].append(("", True))  # an empty quoted text is still a (literal, empty) part
        elif char == "\\" and k + 1 < len(selection):
            terms[-1].append((selection[k + 1], True))
            k += 1
        elif char == ",":
            terms.append([])
        else:
            terms[-1].append((char, False))
        k += 1
    if quoted:
        raise DatasetError(f"selection {selection!r}: a double quote is not closed")
    return terms


def _strip(parts: list[tuple[str, bool]]) -> list[tuple[str, bool]]:
    """Unquoted spaces around a term or a side of ``=`` are ignored."""
    start, end = 0, len(parts)
    while start < end and not parts[start][1] and parts[start][0].isspace():
        start += 1
    while end > start and not parts[end - 1][1] and parts[end - 1][0].isspace():
        end -= 1
    return parts[start:end]


def _text(parts: list[tuple[str, bool]]) -> str:
    return unicodedata.normalize("NFC", "".join(c for c, _ in parts))


def parse_selection(selection: object) -> Selection:
    """Parse a selection text (or a legacy ``{attr: value}`` mapping) into a :class:`Selection`; a
    :class:`SelectionText` or a :class:`Selection` is already parsed and comes back without parsing.

    Raises
    ------
    DatasetError
        An empty term after ``!``/``-``, or an ``=`` with an empty side; the message quotes the term.
    TypeError
        ``selection`` is neither a string, a mapping nor None.

    References
    ----------
    docs/methods.md sec. 0.3.
    """
    if selection is None:
        return Selection("")
    if isinstance(selection, SelectionText):  # parsed where it entered
        return selection.parsed
    if isinstance(selection, Selection):
        return selection
    if isinstance(selection, Mapping):
        pairs = tuple((str(k), str(v)) for k, v in selection.items())
        return Selection(",".join(f"{k}={v}" for k, v in pairs), attributes=pairs)
    if not isinstance(selection, str):
        raise TypeError(f"a selection must be a string such as 'kind=mt,refB' or '!refA'; got "
                        f"{type(selection).__name__}")
    everything, attributes, names, removed_attributes, removed_names = False, [], [], [], []
    for parts in _terms(selection):
        parts = _strip(parts)
        if not parts:
            continue
        term = "".join(c for c, _ in parts)
        negated = not parts[0][1] and parts[0][0] in _NEGATIONS
        body = _strip(parts[1:]) if negated else parts
        if not body:
            raise DatasetError(f"selection {selection!r}: {term!r} removes nothing; write !NAME or !ATTR=VALUE")
        if all(not literal for _, literal in body) and _text(body) == ALL:
            if negated:
                raise DatasetError(f"selection {selection!r}: {term!r} would remove every system")
            everything = True
            continue
        equals = next((k for k, (c, literal) in enumerate(body) if c == "=" and not literal), None)
        if equals is not None:
            key, value = _strip(body[:equals]), _strip(body[equals + 1:])
            if not key or not value:
                raise DatasetError(f"selection {selection!r}: {term!r} must look like ATTR=VALUE")
            (removed_attributes if negated else attributes).append((_text(key), _text(value)))
        else:
            (removed_names if negated else names).append(_text(body))
    return Selection(selection.strip(), everything, tuple(attributes), tuple(names), tuple(removed_attributes),
                     tuple(removed_names))


def _did_you_mean(name: str, known: Sequence[str]) -> str:
    lowered = {k.lower(): k for k in known}
    close = [lowered[name.lower()]] if name.lower() in lowered else difflib.get_close_matches(name, known, n=3,
                                                                                                 cutoff=0.6)
    return f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""


def _shown(names: Sequence[str], limit: int = 12) -> str:
    return ", ".join(names[:limit]) + (f" and {len(names) - limit} more" if len(names) > limit else "")


def resolve_selection(selection: object, names: Sequence[str], attributes: Mapping[str, Sequence[str]], *,
                      what: str = "system", where: str = "", strict: bool = True) -> list[int]:
    """The indices (in ``names`` order) that ``selection`` keeps.

    Parameters
    ----------
    selection : str, mapping or Selection
        The expression (module docstring).
    names : sequence of str
        The systems' (or inputs') names.
    attributes : mapping
        Attribute name -> one value per name.
    what, where : str
        Words for messages: ``'system'`` or ``'input'``, and e.g. ``"dataset 'x'"``.
    strict : bool
        True: an unknown name or attribute raises (naming it, with a did-you-mean). False: it selects
        nothing (used for a dataset's default selection on a subset that lost some systems).

    Raises
    ------
    DatasetError
        (strict) An unknown name or attribute.

    References
    ----------
    docs/methods.md sec. 0.3.
    """
    parsed = selection if isinstance(selection, Selection) else parse_selection(selection)
    n = len(names)
    if parsed.is_all:
        return list(range(n))
    position = {name: k for k, name in enumerate(names)}
    for k, name in enumerate(names):  # a name typed in NFD (decomposed accents) finds its NFC spelling
        position.setdefault(unicodedata.normalize("NFC", name), k)
    place = f" of {where}" if where else ""

    def attribute_matches(key: str, value: str) -> set[int] | None:
        if key not in attributes:
            if f"{key}={value}" in position:  # a name that contains '='
                return {position[f"{key}={value}"]}
            if strict:
                known = ", ".join(attributes) or "none"
                raise DatasetError(f"unknown {what} attribute {key!r}{place} in selection {parsed.text!r}; known "
                                   f"attributes: {known}{_did_you_mean(key, list(attributes))}")
            return None
        return {i for i in range(n) if unicodedata.normalize("NFC", str(attributes[key][i])) == value}

    def name_index(name: str) -> int | None:
        if name in position:
            return position[name]
        if strict:
            raise DatasetError(f"unknown {what} {name!r}{place} in selection {parsed.text!r}"
                               f"{_did_you_mean(name, list(names))}; known {what}s: {_shown(list(names))}")
        return None

    keep: set[int] = set()
    if parsed.attributes:
        by_key: dict[str, set[int]] = {}
        for key, value in parsed.attributes:
            found = attribute_matches(key, value)
            if found is None:
                by_key.setdefault(key, set())
            elif key in attributes:
                by_key[key] = by_key.get(key, set()) | found
            else:
                keep |= found  # a name containing '='
        if by_key:
            keep |= set.intersection(*by_key.values())
    for name in parsed.names:
        index = name_index(name)
        if index is not None:
            keep.add(index)
    if parsed.everything or not (parsed.attributes or parsed.names):
        keep = set(range(n))
    for key, value in parsed.removed_attributes:
        keep -= attribute_matches(key, value) or set()
    for name in parsed.removed_names:
        index = name_index(name)
        keep.discard(index)
    return sorted(keep)


def describe_empty(selection: object, attributes: Mapping[str, Sequence[str]], *, what: str = "system",
                   where: str = "") -> str:
    """Why a selection kept nothing: the message names the values each attribute it used has."""
    parsed = selection if isinstance(selection, Selection) else parse_selection(selection)
    values = [f"{key}: {', '.join(sorted(set(attributes[key])))}"
              for key in dict(parsed.attributes) if key in attributes]
    hint = f" (values of {'; '.join(values)})" if values else ""
    return f"no {what} of {where or 'the dataset'} matches {parsed.text}{hint}"
