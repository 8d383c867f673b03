"""Measure labels and attributes, and a dataset's default system subset (issue 15)."""

from __future__ import annotations

import numpy as np
import pytest

from metaeval_core.data.dataset import Dataset, DatasetError, Measure
from metaeval_core.data.selection import parse_selection
from metaeval_core.data.store import DatasetStore
from metaeval_core.data import whatif


def _dataset(**extra) -> Dataset:
    rng = np.random.default_rng(0)
    scores = rng.normal(size=(4, 5))
    measures = {
        "h": Measure.from_annotators("h", "human", rng.integers(1, 6, size=(3, 4, 5)), label="Human H",
                                     attributes={"criterion": "h"}),
        "judge RE 1": Measure("judge RE 1", "metric", scores, label="Judge · Relevance (#1)",
                              attributes={"family": "llm-judge", "judge": "Judge"}),
        "BLEU Ξ§": Measure("BLEU Ξ§", "metric", scores + 1, label="BLEU", attributes={"family": "string-based"}),
        "plain": Measure("plain", "metric", scores * 2),
    }
    return Dataset(id="t", systems=["ref", "a", "b", "c"], inputs=list("vwxyz"), measures=measures,
                   system_attributes={"kind": ["human-written", "model", "model", "model"]}, **extra)


def test_labels_and_attributes_are_kept_and_queried():
    ds = _dataset()
    assert ds.display_name("BLEU Ξ§") == "BLEU"
    assert ds.display_name("plain") == "plain"  # no label: the id
    assert ds.measures_with("family") == ("judge RE 1", "BLEU Ξ§")
    assert ds.measures_with("family", "llm-judge") == ("judge RE 1",)
    assert ds.measures_with("criterion", kind="metric") == ()
    assert ds.measure("plain").attributes == {}
    with pytest.raises(DatasetError, match="attributes must be a mapping"):
        Measure("x", "metric", np.zeros((1, 1)), attributes=["family"])


def test_positional_construction_and_fingerprint_unchanged_without_metadata():
    scores = np.arange(6.0).reshape(2, 3)
    old = Dataset(id="d", systems=["a", "b"], inputs=["1", "2", "3"],
                  measures={"m": Measure("m", "metric", scores), "h": Measure("h", "human", scores, None)})
    described = Dataset(id="d", systems=["a", "b"], inputs=["1", "2", "3"],
                        measures={"m": Measure("m", "metric", scores, label="M"), "h": Measure("h", "human", scores)})
    # A label is metadata, yet datasets differing in it must not share a cache key.
    assert old.fingerprint() != described.fingerprint()
    assert old.default_systems == ""


def test_subset_keeps_metadata_and_default_systems():
    ds = _dataset(default_systems="kind=model")
    sub = ds.subset(systems=["a", "ref"], inputs=["w", "x"])
    assert sub.measure("BLEU Ξ§").label == "BLEU"
    assert sub.measure("judge RE 1").attributes["family"] == "llm-judge"
    assert sub.measure("h").annotators.shape == (3, 2, 2)
    assert sub.default_systems == "kind=model"
    # A subset without any system of the default drops it rather than fail.
    assert ds.subset(systems=["ref"]).default_systems == ""


def test_default_systems_validated_and_applied():
    with pytest.raises(DatasetError, match="matches no system"):
        _dataset(default_systems="kind=robot")
    with pytest.raises(DatasetError, match="matches no system"):
        _dataset(default_systems="size=large")
    ds = _dataset(default_systems="kind=model")
    assert ds.n_systems == 4  # the core keeps every system
    default = ds.with_default_systems()
    assert default.systems == ("a", "b", "c")
    assert "dropped ref" in default.notes[-1]
    assert default.with_default_systems() is default  # idempotent
    assert _dataset().with_default_systems().n_systems == 4
    assert ds.select_systems("all") is ds and parse_selection(" all ").is_all
    assert ds.select_systems("kind=human-written").systems == ("ref",)


def test_metadata_survives_whatif_and_store(tmp_path):
    ds = _dataset(default_systems="kind=model")
    edited = whatif.edit_scores(ds, [("a", "v", "BLEU Ξ§", 0.5), ("a", "v", "h", 2.0)])
    assert edited.measure("BLEU Ξ§").label == "BLEU" and edited.measure("h").attributes == {"criterion": "h"}
    assert edited.default_systems == "kind=model"
    merged = whatif.merge_datasets(ds, ds.subset(systems=["a"]), on_conflict="keep")
    assert merged.measure("judge RE 1").attributes["family"] == "llm-judge"
    store = DatasetStore(tmp_path)
    stored = store.save(ds, "attrs")
    back = store.load(stored.key)
    assert back.measure("judge RE 1").attributes == {"family": "llm-judge", "judge": "Judge"}
    assert back.display_name("BLEU Ξ§") == "BLEU"
    assert back.default_systems == "kind=model"


def test_input_attributes_select_subset_and_store(tmp_path):
    base = _dataset()
    ds = Dataset(id="t", systems=base.systems, inputs=base.inputs, measures=base.measures,
                 system_attributes=base.system_attributes,
                 input_attributes={"domain": ["news", "news", "social", "news", "social"]})
    news = ds.select_inputs("domain=news")
    assert news.inputs == ("v", "w", "y") and news.input_attributes["domain"] == ("news",) * 3
    assert ds.select_inputs(None) is ds
    with pytest.raises(DatasetError, match="unknown input attribute 'doc'"):
        ds.select_inputs("doc=1")
    with pytest.raises(DatasetError, match="no input of dataset 't' matches domain=speech"):
        ds.select_inputs("domain=speech")
    with pytest.raises(DatasetError, match="input attribute 'domain' has 1 values for 5 inputs"):
        Dataset(id="t", systems=["a"], inputs=list("vwxyz"), measures={}, input_attributes={"domain": ["x"]})
    assert ds.fingerprint() != base.fingerprint()
    store = DatasetStore(tmp_path)
    back = store.load(store.save(ds, "inputs").key)
    assert back.input_attributes == ds.input_attributes
    extra = Dataset(id="e", systems=["a"], inputs=["new"], measures={"plain": Measure("plain", "metric", [[1.0]])})
    merged = whatif.merge_datasets(ds, extra, on_conflict="keep")
    assert dict(zip(merged.inputs, merged.input_attributes["domain"]))["new"] == ""
