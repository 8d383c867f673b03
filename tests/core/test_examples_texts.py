"""Texts behind an upload's numbers (docs/methods.md sec. 19.6, docs/data.md): the wide layout and SacreROUGE
JSONL read optional text columns/keys as the long layout does, the store keeps them, What-if edits keep them."""

from __future__ import annotations

import json

import pytest

from metaeval_core.analyses.examples import input_examples
from metaeval_core.data.store import DatasetStore
from metaeval_core.data.texts import example_texts
from metaeval_core.data.upload import UploadError, read_user_file
from metaeval_core.data.whatif import edit_scores, include_exclude, merge_datasets

WIDE_WITH_TEXTS = """system,input,human,bleu,text,source,reference
A,d1,3,0.3,the cat sat,le chat,the cat sat down
B,d1,2,0.4,a cat,le chat,
C,d1,5,0.9,the cat sat down,,
A,d2,4,0.5,dogs run,les chiens,dogs are running
B,d2,1,0.1,dog,,
C,d2,5,0.8,,,
"""


def _wide(tmp_path, text: str = WIDE_WITH_TEXTS, name: str = "wide.csv"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return read_user_file(path)


def _outputs(ds) -> dict[tuple[str, str], str | None]:
    texts = example_texts(ds)
    return {(s, j): texts.output(i, k) for i, s in enumerate(texts.systems) for k, j in enumerate(texts.inputs)}


def test_wide_upload_reads_its_text_columns(tmp_path):
    ds = _wide(tmp_path)
    assert set(ds.measures) == {"human", "bleu"}  # the text columns are never measures
    texts = example_texts(ds)
    assert texts is not None and texts.systems == ds.systems and texts.inputs == ds.inputs
    assert texts.sources == ("le chat", "les chiens")
    assert texts.references == ("the cat sat down", "dogs are running")
    assert _outputs(ds)[("B", "d1")] == "a cat" and _outputs(ds)[("C", "d2")] is None
    record = next(r for r in input_examples(ds, "bleu", "human", texts=texts).to_records() if r["input"] == "d2")
    assert {s["system"]: s.get("output") for s in record["systems"]} == {"A": "dogs run", "B": "dog", "C": None}
    # texts change no number: the same file without them gives the same fingerprint
    plain = _wide(tmp_path, "\n".join(",".join(line.split(",")[:4]) for line in WIDE_WITH_TEXTS.splitlines())
                  + "\n", "plain.csv")
    assert plain.fingerprint() == ds.fingerprint() and example_texts(plain) is None


def test_wide_upload_texts_are_checked(tmp_path):
    conflicting = WIDE_WITH_TEXTS.replace("B,d1,2,0.4,a cat,le chat,", "B,d1,2,0.4,a cat,un chat,")
    with pytest.raises(UploadError, match="two different 'source' texts for the same input") as caught:
        _wide(tmp_path, conflicting)
    assert caught.value.kind == "inconsistent-attribute" and "line 3" in str(caught.value)
    with pytest.raises(UploadError, match="no measure columns"):
        _wide(tmp_path, "system,input,text\nA,d1,x\nB,d1,y\n", "only_texts.csv")


def _jsonl_line(system: str, doc: str, human: float, rouge: float, **texts) -> str:
    return json.dumps({"instance_id": doc, "summarizer_id": system,
                       "metrics": {"human": {"score": human}, "rouge": rouge}, **texts})


def test_sacrerouge_jsonl_reads_text_keys(tmp_path):
    lines = [
        _jsonl_line("A", "d1", 3, 0.3, text="summary A1", source="document one", reference="reference one"),
        _jsonl_line("B", "d1", 2, 0.4, text="summary B1"),
        _jsonl_line("C", "d1", 5, 0.9, text=None),
        _jsonl_line("A", "d2", 4, 0.5, text="summary A2", source="document two"),
        _jsonl_line("B", "d2", 1, 0.1),
        _jsonl_line("C", "d2", 5, 0.8, text="summary C2"),
    ]
    path = tmp_path / "scores.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    ds = read_user_file(path)
    texts = example_texts(ds)
    assert texts is not None
    assert texts.sources == ("document one", "document two") and texts.references == ("reference one", "")
    assert _outputs(ds) == {("A", "d1"): "summary A1", ("B", "d1"): "summary B1", ("C", "d1"): None,
                            ("A", "d2"): "summary A2", ("B", "d2"): None, ("C", "d2"): "summary C2"}
    assert not any("not read" in note and "'text'" in note for note in ds.notes)  # read, so not named as unread
    bad = tmp_path / "bad.jsonl"
    bad.write_text(_jsonl_line("A", "d1", 3, 0.3, text=["a", "list"]) + "\n", encoding="utf-8")
    with pytest.raises(UploadError, match="'text' text must be a string") as caught:
        read_user_file(bad)
    assert "line 1" in str(caught.value)


def test_the_store_keeps_the_texts(tmp_path):
    ds = _wide(tmp_path, WIDE_WITH_TEXTS.replace("dogs run", "chiens qui courent — 犬が走る"))
    store = DatasetStore(tmp_path / "store")
    entry = store.save(ds, "with texts")
    back = example_texts(store.load(entry.key))
    texts = example_texts(ds)
    assert back is not None and back.systems == texts.systems and back.inputs == texts.inputs
    assert back.sources == texts.sources and back.references == texts.references
    assert _outputs(store.load(entry.key)) == _outputs(ds)
    assert _outputs(ds)[("A", "d2")] == "chiens qui courent — 犬が走る"
    # a subset saved (texts of every system kept, looked up by name) and an entry without texts
    subset = include_exclude(ds, exclude_systems=["C"])
    assert example_texts(store.load(store.save(subset, "subset").key)).systems == ("A", "B", "C")
    plain = _wide(tmp_path, "\n".join(",".join(line.split(",")[:4]) for line in WIDE_WITH_TEXTS.splitlines())
                  + "\n", "plain.csv")
    assert example_texts(store.load(store.save(plain, "plain").key)) is None
    assert {e.name for e in store.list()} == {"with texts", "subset", "plain"}


def test_what_if_edits_keep_the_texts(tmp_path):
    ds = _wide(tmp_path)
    texts = example_texts(ds)
    edited = edit_scores(ds, [("A", "d1", "bleu", 0.7)])
    assert edited.measures["bleu"].scores[0, 0] == 0.7 and example_texts(edited) is texts
    fewer = include_exclude(ds, exclude_inputs=["d2"])
    assert fewer.inputs == ("d1",) and example_texts(fewer) is texts
    # a merge: the base's texts win, the extra's fill what the base lacks (a new system's outputs, a reference)
    extra = _wide(tmp_path, "system,input,human,bleu,text,reference\n"
                            "D,d1,2,0.2,summary D1,\nA,d1,3,0.3,another A1,\nC,d2,5,0.8,summary C2,a ref\n",
                  "extra.csv")
    merged = merge_datasets(ds, extra, on_conflict="keep")
    outputs = _outputs(merged)
    assert outputs[("D", "d1")] == "summary D1" and outputs[("A", "d1")] == "the cat sat"
    assert outputs[("C", "d2")] == "summary C2"
    assert example_texts(merged).references == ("the cat sat down", "dogs are running")
    plain = _wide(tmp_path, "system,input,human,bleu\nD,d1,2,0.2\nD,d2,3,0.1\nE,d1,1,0.5\nE,d2,4,0.3\n",
                  "plain.csv")
    assert _outputs(merge_datasets(ds, plain))[("A", "d1")] == "the cat sat"  # only one side has texts
    assert _outputs(merge_datasets(plain, ds, on_conflict="keep"))[("B", "d2")] == "dog"  # the extra's texts fill


def test_the_long_download_carries_the_texts_back(tmp_path):
    from metaeval_core.data.upload import dataset_to_long_frame, safe_csv

    tricky = 'dogs run,\n"fast", - they say'  # a comma, a line break, quotes and a leading dash inside
    ds = _wide(tmp_path, WIDE_WITH_TEXTS.replace("dogs run", '"' + tricky.replace('"', '""') + '"'))
    assert _outputs(ds)[("A", "d2")] == tricky
    edited = edit_scores(ds, [("B", "d2", "bleu", 0.2)])
    frame = dataset_to_long_frame(edited)
    assert {"text", "source", "reference"} <= set(frame.columns)
    assert frame["text"].notna().sum() == sum(t is not None for t in _outputs(ds).values())  # once per cell
    path = tmp_path / "back.csv"
    path.write_text(safe_csv(frame), encoding="utf-8")
    back = read_user_file(path)
    assert _outputs(back) == _outputs(ds)
    assert example_texts(back).sources == example_texts(ds).sources
    assert example_texts(back).references == example_texts(ds).references
    assert back.measures["bleu"].scores[1, 1] == 0.2
