"""The selection expression for systems and inputs (metaeval_core.data.selection; docs/methods.md sec. 0.3)."""

from __future__ import annotations

import numpy as np
import pytest

from metaeval_core.data.dataset import Dataset, DatasetError, Measure
from metaeval_core.data.selection import parse_selection, resolve_selection

NAMES = ("refA", "refB", "sysA", "sysB", "sysC")
ATTRS = {"kind": ("reference", "reference", "mt", "mt", "mt"), "size": ("-", "-", "big", "small", "big")}


def _pick(text: str) -> list[str]:
    return [NAMES[i] for i in resolve_selection(text, NAMES, ATTRS)]


@pytest.mark.parametrize("text, expected", [
    ("", list(NAMES)),
    ("all", list(NAMES)),
    ("!refA", ["refB", "sysA", "sysB", "sysC"]),
    ("-refA", ["refB", "sysA", "sysB", "sysC"]),
    ("all,-refA", ["refB", "sysA", "sysB", "sysC"]),
    (" ! refA , -refB ", ["sysA", "sysB", "sysC"]),
    ("kind=mt", ["sysA", "sysB", "sysC"]),
    ("kind=mt,refB", ["refB", "sysA", "sysB", "sysC"]),
    ("kind=mt,size=big", ["sysA", "sysC"]),  # different attributes: all must hold
    ("kind=mt,kind=reference", list(NAMES)),  # one attribute: alternatives
    ("kind=mt,-sysB", ["sysA", "sysC"]),
    ("!kind=reference", ["sysA", "sysB", "sysC"]),
    ("sysC,sysA", ["sysA", "sysC"]),  # names keep the dataset's order
    ("all,!size=big", ["refA", "refB", "sysB"]),
])
def test_the_grammar(text, expected):
    assert _pick(text) == expected


def test_legacy_forms_still_work():
    assert _pick({"kind": "mt"}) == ["sysA", "sysB", "sysC"]
    assert parse_selection(None).is_all and parse_selection(" all ").is_all


@pytest.mark.parametrize("text, message", [
    ("!refX", r"unknown system 'refX' .*did you mean 'ref[AB]' or 'ref[AB]'\?\); known systems: refA, refB"),
    ("sysa", r"unknown system 'sysa' .*did you mean 'sysA'\?"),
    ("knd=mt", r"unknown system attribute 'knd' .*known attributes: kind, size \(did you mean 'kind'\?\)"),
    ("!", r"'!' removes nothing"),
    ("-all", "would remove every system"),
    ("kind=", "must look like ATTR=VALUE"),
])
def test_errors_name_the_unknown_and_suggest(text, message):
    with pytest.raises(DatasetError, match=message):
        resolve_selection(text, NAMES, ATTRS)


def test_lenient_resolution_ignores_unknown_names():
    assert [NAMES[i] for i in resolve_selection("-refA,-refZ", NAMES, ATTRS, strict=False)] == list(NAMES[1:])
    assert resolve_selection("refZ", NAMES, ATTRS, strict=False) == []


def _dataset() -> Dataset:
    scores = np.arange(15.0).reshape(5, 3)
    return Dataset(id="t", systems=NAMES, inputs=("1", "2", "3"), measures={"m": Measure("m", "metric", scores)},
                   system_attributes=ATTRS, input_attributes={"domain": ("news", "news", "chat")})


def test_dataset_selection_uses_the_same_parser():
    ds = _dataset()
    assert ds.select_systems("!refA,!refB").systems == ("sysA", "sysB", "sysC")
    assert ds.select_systems("kind=mt,refB").systems == ("refB", "sysA", "sysB", "sysC")
    assert ds.select_inputs("!3").inputs == ("1", "2") and ds.select_inputs("domain=chat,1").inputs == ("1", "3")
    with pytest.raises(DatasetError, match="no system of dataset 't' matches kind=robot \\(values of kind: mt, "
                                           "reference\\)"):
        ds.select_systems("kind=robot")
    with pytest.raises(DatasetError, match="unknown input '4'"):
        ds.select_inputs("-4")


def test_a_default_selection_with_names_survives_a_subset():
    ds = Dataset(id="t", systems=NAMES, inputs=("1",), measures={}, system_attributes=ATTRS,
                 default_systems="-refA,-refB")
    assert ds.with_default_systems().systems == ("sysA", "sysB", "sysC")
    sub = ds.subset(systems=["refB", "sysA"])  # refA gone: the default still applies, leniently
    assert sub.default_systems == "-refA,-refB" and sub.with_default_systems().systems == ("sysA",)
    assert ds.subset(systems=["refA"]).default_systems == ""  # it would keep nothing: dropped


def test_a_selection_is_parsed_once_where_it_enters(monkeypatch):
    """The sidebar and --systems parse the text once (SelectionText); the size guards and the core reuse the parse."""
    from metaeval_core.data import selection
    from metaeval_core.data.selection import SelectionText

    chosen = SelectionText("kind=mt,-sysB")
    assert chosen == "kind=mt,-sysB" and isinstance(chosen, str) and hash(chosen) == hash("kind=mt,-sysB")
    assert not SelectionText("") and parse_selection(chosen) is chosen.parsed
    with pytest.raises(AttributeError):
        chosen.parsed = None
    with pytest.raises(DatasetError, match="removes nothing"):
        SelectionText("!")
    parsed_texts = []
    real = selection.parse_selection

    def counting(value):
        if isinstance(value, str) and not isinstance(value, SelectionText):
            parsed_texts.append(value)
        return real(value)

    monkeypatch.setattr(selection, "parse_selection", counting)
    ds = _dataset()
    for _ in range(4):  # the page, the size guard, the core...: the same systems, and no parse of the text
        assert ds.select_systems(chosen).systems == ("sysA", "sysC")
    assert parsed_texts == []
    assert ds.select_systems("kind=mt,-sysB").systems == ("sysA", "sysC") and parsed_texts == ["kind=mt,-sysB"]
