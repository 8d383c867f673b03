"""Selection grammar: names and values with commas, quotes, '=', leading '-' or NFD accents (issue 28)."""

from __future__ import annotations

import unicodedata

import numpy as np
import pytest

from metaeval_core.data.dataset import DatasetError
from metaeval_core.data.selection import parse_selection, quote_term, resolve_selection, selection_term

PIECES = ["a", "b", ",", " ", "=", '"', "\\", "-", "!", "é", "all", "x,y", "'"]


def hostile_names(seed: int, k: int = 12) -> list[str]:
    rng = np.random.default_rng(seed)
    names: list[str] = []
    while len(names) < k:
        name = "".join(rng.choice(PIECES, size=int(rng.integers(1, 6))))
        if name.strip() and name == name.strip() and name not in names:
            names.append(name)
    return names


@pytest.mark.parametrize("seed", range(6))
def test_every_quoted_name_selects_itself_and_only_itself(seed):
    names = hostile_names(seed)
    for k, name in enumerate(names):
        assert resolve_selection(quote_term(name), names, {}) == [k]
        assert resolve_selection("!" + quote_term(name), names, {}) == [j for j in range(len(names)) if j != k]
    both = ",".join(quote_term(n) for n in names[:3])
    assert resolve_selection(both, names, {}) == sorted(range(3))


@pytest.mark.parametrize("seed", range(4))
def test_a_preset_with_a_comma_in_its_value_parses_back(seed):
    values = hostile_names(seed, k=5)
    names = [f"s{k}" for k in range(10)]
    attribute = {"group, kind": [values[k % 5] for k in range(10)]}
    for value in values:
        term = selection_term("group, kind", value)
        assert parse_selection(term).attributes == (("group, kind", value),)
        assert resolve_selection(term, names, attribute) == [k for k in range(10) if values[k % 5] == value]


def test_nfd_typed_names_find_their_nfc_names():
    names = [unicodedata.normalize("NFC", n) for n in ("café", "naïve-mt", "plain")]
    typed = unicodedata.normalize("NFD", "café,!naïve-mt")
    assert typed != unicodedata.normalize("NFC", typed)
    assert resolve_selection(typed, names, {}) == [0]
    attributes = {"lang": [unicodedata.normalize("NFC", "français")] * 3}
    assert resolve_selection(unicodedata.normalize("NFD", "lang=français"), names, attributes) == [0, 1, 2]


def test_plain_expressions_keep_their_meaning():
    names = ["refA", "refB", "mt1", "mt2"]
    kinds = {"kind": ["reference", "reference", "mt", "mt"]}
    assert resolve_selection("kind=mt,refB", names, kinds) == [1, 2, 3]
    assert resolve_selection("!refA", names, kinds) == [1, 2, 3]
    assert resolve_selection("all, -refA", names, kinds) == [1, 2, 3]
    with pytest.raises(DatasetError, match="not closed"):
        parse_selection('"refA')


def test_an_nfd_typed_measure_name_resolves():
    from metaeval_core.data.dataset import Dataset, Measure

    name = unicodedata.normalize("NFC", "fidélité")
    ds = Dataset("d", ["a", "b"], ["x"], {name: Measure(name, "human", np.ones((2, 1))),
                                         "m": Measure("m", "metric", np.ones((2, 1)))})
    assert ds.resolve(unicodedata.normalize("NFD", name)) == name
