"""Loaders of the built-in datasets: shapes, attributes, spot values against the raw files, NaN handling,
the NAACL 2022 unjudged pool, and clear errors for malformed files (generated in tmp dirs)."""

from __future__ import annotations

import gzip
import json
import shutil
import time
from pathlib import Path

import numpy as np
import pytest

from metaeval_core.stats.correlation import correlate
from metaeval_core.data.dataset import DatasetError
from metaeval_core.data.loaders import (
    LoaderFiles,
    load_deutsch2022,
    load_frank,
    load_rose,
    load_summeval,
    load_xsum_hallucination,
    natural_key,
)
from metaeval_core.data.registry import dataset_info, load_dataset
from metaeval_core.data.safe_pickle import safe_load

SUMMEVAL_DIR = "summeval/deutsch2021_stat_analysis/fabbri2020"
REALSUMM_DIR = "realsumm/deutsch2021_stat_analysis/bhandari2020"


@pytest.fixture(scope="module")
def loaded(data_dir):
    """Each real dataset loaded once per module."""
    cache = {}

    def get(dataset_id):
        if dataset_id not in cache:
            cache[dataset_id] = load_dataset(dataset_id, data_dir=data_dir)
        return cache[dataset_id]

    return get


def _cell(ds, measure, system, input_id):
    return ds.measure(measure).scores[ds.systems.index(system), ds.inputs.index(input_id)]


def _first_line(path: Path) -> dict:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as handle:
        return json.loads(handle.readline())


# ---------------------------------------------------------------------------
# SummEval
# ---------------------------------------------------------------------------
@pytest.mark.realdata
def test_summeval_shape_attributes_and_measures(loaded):
    ds = loaded("summeval")
    assert (ds.n_systems, ds.n_inputs, ds.n_judged) == (16, 100, 100)
    assert ds.systems[:5] == ("M0", "M1", "M2", "M5", "M8")
    types = dict(zip(ds.systems, ds.system_attribute("type")))
    assert sorted(s for s, t in types.items() if t == "ext") == ["M0", "M1", "M2", "M5"]
    assert list(types.values()).count("abs") == 12
    humans = {f"{g}.{d}" for g in ("expert", "turker") for d in ("coherence", "consistency", "fluency", "relevance")}
    assert set(ds.human_measures) == humans
    for metric in ("rouge-1.f1", "rouge-su4.recall", "bertscore.recall", "qa-eval.f1", "qa-eval.lerc", "METEOR",
                   "MoverScore", "s3.pyr", "s3.resp", "AutoSummENG", "MeMoG", "NPowER", "BEwTE.f1"):
        assert ds.measure(metric).kind == "metric"
    assert len(ds.metric_measures) == 34
    assert not any(np.isnan(m.scores).any() for m in ds.measures.values())
    assert ds.measure("expert.relevance").annotators.shape == (3, 16, 100)
    assert ds.measure("turker.relevance").annotators.shape == (5, 16, 100)
    assert ds.title.startswith("SummEval") and "Fabbri" in ds.citation and "MIT" in ds.licence
    assert ds.notes and len(ds.version) == 16


@pytest.mark.realdata
def test_summeval_spot_values_match_the_raw_files(loaded, data_dir):
    ds = loaded("summeval")
    line = _first_line(data_dir / SUMMEVAL_DIR / "relevance.jsonl")
    system, doc = line["summarizer_id"], line["instance_id"]
    m = line["metrics"]
    i, j = ds.systems.index(system), ds.inputs.index(doc)
    assert list(ds.measure("expert.relevance").annotators[:, i, j]) == m["expert"]["relevance"]
    assert list(ds.measure("turker.fluency").annotators[:, i, j]) == m["turker"]["fluency"]
    assert ds.measure("expert.coherence").scores[i, j] == pytest.approx(np.mean(m["expert"]["coherence"]))
    rouge = _first_line(data_dir / SUMMEVAL_DIR / "rouge.jsonl")
    assert _cell(ds, "rouge-1.f1", rouge["summarizer_id"], rouge["instance_id"]) == rouge["metrics"]["rouge-1"]["f1"]
    assert _cell(ds, "rouge-su4.precision", rouge["summarizer_id"], rouge["instance_id"]) == (
        rouge["metrics"]["rouge-su4"]["precision"]
    )
    bewte = _first_line(data_dir / SUMMEVAL_DIR / "bewte.jsonl")
    assert _cell(ds, "BEwTE.f1", bewte["summarizer_id"], bewte["instance_id"]) == bewte["metrics"]["BEwTE"]["f1"]


@pytest.mark.realdata
def test_summeval_loads_fast(data_dir):
    start = time.perf_counter()
    load_dataset("summeval", data_dir=data_dir)
    assert time.perf_counter() - start < 2.0


# ---------------------------------------------------------------------------
# REALSumm
# ---------------------------------------------------------------------------
@pytest.mark.realdata
def test_realsumm_shape_attributes_and_bertscore(loaded, data_dir):
    ds = loaded("realsumm")
    assert (ds.n_systems, ds.n_inputs) == (24, 100)
    assert ds.inputs[:3] == ("0", "1", "2") and ds.inputs[-1] == "99"
    types = dict(zip(ds.systems, ds.system_attribute("type")))
    assert list(types.values()).count("abs") == 13 and list(types.values()).count("ext") == 11
    assert types["bart_out"] == "ext" and types["t5_out_11B"] == "abs" and types["matchsumm_out"] == "ext"
    assert ds.human_measures == ("litepyramid.recall",)
    assert not any(np.isnan(m.scores).any() for m in ds.measures.values())
    f1 = ds.measure("bertscore.f1").scores
    precision = ds.measure("bertscore.precision").scores
    assert not np.allclose(f1, precision)
    assert (f1 != precision).mean() > 0.9
    # bertscore.f1 comes from REALSumm's pickles (bert_f_score).
    abs_pickle = safe_load(data_dir / "realsumm" / "scores_dicts" / "abs.pkl")
    ext_pickle = safe_load(data_dir / "realsumm" / "scores_dicts" / "ext.pkl")
    assert _cell(ds, "bertscore.f1", "t5_out_11B", "7") == abs_pickle[7]["system_summaries"]["t5_out_11B.txt"][
        "scores"]["bert_f_score"]
    assert _cell(ds, "bertscore.f1", "bart_out", "42") == ext_pickle[42]["system_summaries"]["bart_out.txt"][
        "scores"]["bert_f_score"]
    assert _cell(ds, "bertscore.precision", "bart_out", "42") == pytest.approx(
        ext_pickle[42]["system_summaries"]["bart_out.txt"]["scores"]["bert_precision_score"], abs=1e-12
    )
    assert any("bert_f_score" in note for note in ds.notes)


@pytest.mark.realdata
def test_realsumm_spot_values_match_the_raw_files(loaded, data_dir):
    ds = loaded("realsumm")
    line = _first_line(data_dir / REALSUMM_DIR / "pyramid.jsonl")
    system, doc = line["summarizer_id"], line["instance_id"]
    assert _cell(ds, "litepyramid.recall", system, doc) == line["metrics"]["litepyramid"]["recall"]
    assert _cell(ds, "rouge-2.recall", system, doc) == line["metrics"]["rouge-2"]["recall"]
    assert _cell(ds, "js-2", system, doc) == line["metrics"]["js-2"]
    qa = _first_line(data_dir / REALSUMM_DIR / "qaeval.jsonl")
    assert _cell(ds, "qa-eval.lerc", qa["summarizer_id"], qa["instance_id"]) == qa["metrics"]["qa-eval"]["lerc"]
    s3 = _first_line(data_dir / REALSUMM_DIR / "s3.jsonl")
    assert _cell(ds, "s3.resp", s3["summarizer_id"], s3["instance_id"]) == s3["metrics"]["s3"]["resp"]


# ---------------------------------------------------------------------------
# NAACL 2022 files
# ---------------------------------------------------------------------------
@pytest.mark.realdata
def test_naacl2022_summeval_matches_the_expert_relevance(loaded):
    ds = loaded("summeval-naacl2022")
    assert (ds.n_systems, ds.n_inputs, ds.n_unjudged) == (16, 100, 0)
    assert ds.human_measures == ("ground-truth",)
    assert ds.metric_measures == ("ROUGE-1", "ROUGE-2", "ROUGE-L", "BERTScore", "QAEval")
    assert ds.measure("ground-truth").annotators.shape == (3, 16, 100)
    assert not ds.has_unjudged_pool
    full = loaded("summeval").subset(systems=ds.systems, inputs=ds.inputs)
    np.testing.assert_array_equal(ds.measure("ground-truth").annotators, full.measure("expert.relevance").annotators)
    np.testing.assert_allclose(ds.matrix("QAEval"), 100 * full.matrix("qa-eval.f1"), atol=1e-9)
    np.testing.assert_allclose(ds.matrix("ROUGE-1"), full.matrix("rouge-1.f1"), atol=1e-3)


@pytest.mark.realdata
def test_naacl2022_realsumm_matches_litepyramid(loaded):
    ds = loaded("realsumm-naacl2022")
    assert (ds.n_systems, ds.n_inputs) == (24, 100)
    assert ds.measure("ground-truth").annotators is None
    full = loaded("realsumm").subset(systems=ds.systems, inputs=ds.inputs)
    np.testing.assert_array_equal(ds.matrix("ground-truth"), full.matrix("litepyramid.recall"))


def _write_gz(path: Path, records: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt") as handle:
        for record in records:
            handle.write(json.dumps(record) + "\n")


def _record(doc, system, **metrics):
    return {"instance_id": doc, "summarizer_id": system, "summarizer_type": "peer", "metrics": metrics}


def _synthetic_pool(tmp_path: Path) -> tuple[Path, Path]:
    judged = tmp_path / "judged" / "metrics.jsonl.gz"
    pool = tmp_path / "all" / "metrics.jsonl.gz"
    _write_gz(judged, [
        _record(d, s, **{"ground-truth": [1 + k, 2, 3], "ROUGE-1": 10.0 * k + i, "QAEval": 1.0})
        for k, d in enumerate(["d1", "d2"]) for i, s in enumerate(["A", "B", "C"])
    ])
    _write_gz(pool, [
        _record("d1", "A", **{"ROUGE-1": 999.0, "QAEval": 999.0}),  # a judged input: judged values win
        *[_record(d, s, **{"ROUGE-1": 50.0 + i, "QAEval": None}) for d in ["u3", "u10", "u2"] for i, s in
          enumerate(["A", "B", "C"])],
        _record("u3", "Z", **{"ROUGE-1": 1.0}),  # a system never judged: ignored
    ])
    return judged, pool


def test_deutsch2022_unjudged_pool_from_generated_files(tmp_path):
    judged, pool = _synthetic_pool(tmp_path)
    rel_judged, rel_all = "x/deutsch2022_reexamining/judged/metrics.jsonl.gz", "x/deutsch2022_reexamining/all/metrics.jsonl.gz"
    data = load_deutsch2022(LoaderFiles(required={rel_judged: judged}, optional={rel_all: pool}))
    assert data.systems == ("A", "B", "C")
    assert data.inputs == ("d1", "d2", "u2", "u3", "u10")
    ds = data.to_dataset("t")
    assert ds.n_judged == 2 and ds.n_unjudged == 3 and ds.has_unjudged_pool
    assert ds.judged.tolist() == [True, True, False, False, False]
    assert ds.matrix("ROUGE-1", pool="all")[:, 2:].tolist() == [[50.0] * 3, [51.0] * 3, [52.0] * 3]
    assert ds.matrix("ROUGE-1")[:, 0].tolist() == [0.0, 1.0, 2.0]  # judged value kept, not 999
    assert np.isnan(ds.matrix("QAEval", pool="all")[:, 2:]).all()
    assert ds.matrix("ground-truth").shape == (3, 2)
    assert ds.measure("ground-truth").scores[:, 0].tolist() == [2.0, 2.0, 2.0]
    assert any("3 inputs" in n and "1 lines for judged inputs" in n for n in ds.notes)
    assert any("never judged" in n and "Z" in n for n in ds.notes)
    full = correlate(ds, "ROUGE-1", "ground-truth", level="system", pool="all")
    assert full.pool == "all"
    without = load_deutsch2022(LoaderFiles(required={rel_judged: judged}))
    assert without.inputs == ("d1", "d2")
    assert any("No unjudged pool" in n for n in without.notes)


@pytest.mark.realdata
def test_naacl2022_optional_pool_through_the_registry(data_dir, tmp_path):
    rel = "summeval/deutsch2022_reexamining/judged/metrics.jsonl.gz"
    (tmp_path / rel).parent.mkdir(parents=True)
    shutil.copyfile(data_dir / rel, tmp_path / rel)
    plain = load_dataset("summeval-naacl2022", data_dir=tmp_path)
    systems = plain.systems
    judged_doc = plain.inputs[0]
    _write_gz(tmp_path / "summeval/deutsch2022_reexamining/all/metrics.jsonl.gz", [
        _record(judged_doc, "M0", **{"ROUGE-1": -1.0, "ROUGE-2": -1.0}),
        *[_record(f"cnn-test-extra{k}", s, **{"ROUGE-1": 30.0 + k, "ROUGE-2": 10.0, "ROUGE-L": 20.0,
                                               "BERTScore": 85.0, "QAEval": 20.0})
          for k in range(4) for s in systems],
    ])
    info = dataset_info("summeval-naacl2022", data_dir=tmp_path)
    assert info.optional_present == ("summeval/deutsch2022_reexamining/all/metrics.jsonl.gz",)
    ds = load_dataset("summeval-naacl2022", data_dir=tmp_path)
    assert (ds.n_judged, ds.n_unjudged) == (100, 4) and ds.has_unjudged_pool
    assert ds.version != plain.version
    np.testing.assert_array_equal(ds.matrix("ROUGE-1"), plain.matrix("ROUGE-1"))
    assert ds.matrix("ROUGE-1", pool="all").shape == (16, 104)
    judged = correlate(ds, "ROUGE-1", "ground-truth", level="system", pool="judged").estimate
    assert judged == correlate(plain, "ROUGE-1", "ground-truth", level="system").estimate


# ---------------------------------------------------------------------------
# FRANK
# ---------------------------------------------------------------------------
FRANK_ERRORS = ("Semantic_Frame_Errors", "Discourse_Errors", "Content_Verifiability_Errors", "RelE", "EntE", "CircE",
                "OutE", "GramE", "CorefE", "LinkE", "Other")


@pytest.mark.realdata
@pytest.mark.parametrize(
    "dataset_id, systems, n_inputs, nulls",
    [
        ("frank-cnndm", ("bart", "bert_sum", "bus", "pgn", "s2s"), 250, {"Dep Entail": 68, "FEQA": 0}),
        ("frank-xsum", ("BERTS2S", "PtGen", "TConvS2S", "TranS2S"), 249, {"Dep Entail": 15, "FEQA": 4}),
    ],
)
def test_frank_subsets(loaded, dataset_id, systems, n_inputs, nulls):
    ds = loaded(dataset_id)
    assert ds.systems == systems and ds.n_inputs == n_inputs
    assert ds.human_measures == ("Factuality", *FRANK_ERRORS)
    assert {"Rouge 1", "Rouge L", "Bleu", "BertScore F1", "BertScore F1 Art", "FactCC", "FEQA", "Dep Entail",
            "QAGS"} <= set(ds.metric_measures)
    assert len(ds.metric_measures) == 15
    assert not any(name.startswith("Flip_") for name in ds.measures)
    for name, count in nulls.items():
        assert int(np.isnan(ds.measure(name).scores).sum()) == count
    assert not np.isnan(ds.matrix("Factuality")).any()
    assert ds.system_attributes == {}
    assert any("split" in n and "test" in n for n in ds.notes)
    # NaN cells are dropped pairwise, never an exception.
    result = correlate(ds, "Dep Entail", "Factuality", level="global", coefficient="pearson")
    assert result.defined and result.n == ds.n_systems * ds.n_inputs - nulls["Dep Entail"]


@pytest.mark.realdata
def test_frank_spot_values_match_the_raw_files(loaded, data_dir):
    human = json.loads((data_dir / "frank/data/human_annotations.json").read_text())
    metrics = json.loads((data_dir / "frank/data/baseline_factuality_metrics_outputs.json").read_text())
    ds = loaded("frank-cnndm")
    h0, m0 = human[0], metrics[0]
    assert h0["dataset"] == "cnndm"
    assert _cell(ds, "Factuality", h0["model_name"], h0["hash"]) == h0["Factuality"]
    assert _cell(ds, "Rouge 1", m0["model_name"], m0["hash"]) == m0["Rouge 1"]
    assert _cell(ds, "BertScore F1 Art", m0["model_name"], m0["hash"]) == m0["BertScore F1 Art"]
    null = next(r for r in metrics if r["dataset"] == "bbc" and r["FEQA"] is None)
    assert np.isnan(_cell(loaded("frank-xsum"), "FEQA", null["model_name"], null["hash"]))


# ---------------------------------------------------------------------------
# RoSE and XSum hallucinations
# ---------------------------------------------------------------------------
@pytest.mark.realdata
def test_rose_protocols_are_human_measures(loaded, data_dir):
    ds = loaded("rose")
    assert (ds.n_systems, ds.n_inputs) == (12, 100)
    assert "gold" in ds.systems and "brio-ext" in ds.systems
    assert ds.human_measures == ("prior", "ref_free", "ref_based", "acu", "normalized_acu")
    assert ds.metric_measures == ()
    assert not any(np.isnan(m.scores).any() for m in ds.measures.values())
    raw = json.loads((data_dir / "rose/docs/_data/protocol-comparison.json").read_text())[0]
    for protocol in ds.human_measures:
        assert _cell(ds, protocol, "bart", raw["example_id"]) == raw["annotations"]["bart"][protocol]
    # Protocols can be correlated with each other.
    assert correlate(ds, "ref_based", "acu", level="system", coefficient="kendall").defined


@pytest.mark.realdata
def test_xsum_hallucination(loaded):
    ds = loaded("xsum-hallucination")
    assert (ds.n_systems, ds.n_inputs) == (4, 498)
    assert set(ds.systems) == {"BERTS2S", "TranS2S", "PtGen", "TConvS2S"}
    assert ds.human_measures == ("Faithful", "Factual")
    assert ds.metric_measures == ("R1", "R2", "RL", "BERTScore", "Entailment")
    assert not any(np.isnan(m.scores).any() for m in ds.measures.values())
    # First data row: bert_withckpt_39328391,0.2,0.125,0.16,0.6909142601749696,0.0017102116,0.0350877...,0.0
    assert _cell(ds, "R1", "BERTS2S", "39328391") == 0.2
    assert _cell(ds, "BERTScore", "BERTS2S", "39328391") == 0.6909142601749696
    assert _cell(ds, "Faithful", "BERTS2S", "39328391") == pytest.approx(0.03508771929824561)
    assert _cell(ds, "Factual", "BERTS2S", "39328391") == 0.0


@pytest.mark.realdata
@pytest.mark.parametrize("dataset_id", ["summeval", "realsumm", "summeval-naacl2022", "realsumm-naacl2022",
                                        "frank-cnndm", "frank-xsum", "xsum-hallucination"])
def test_every_metric_correlates_at_every_level(loaded, dataset_id):
    ds = loaded(dataset_id)
    human = ds.human_measures[0]
    for metric in ds.metric_measures:
        for level, coefficient in (("system", "kendall"), ("input", "kendall"), ("global", "pearson")):
            result = correlate(ds, metric, human, level=level, coefficient=coefficient)
            assert result.n > 0


# ---------------------------------------------------------------------------
# Malformed files (generated in tmp dirs)
# ---------------------------------------------------------------------------
def _summeval_files(path: Path) -> LoaderFiles:
    return LoaderFiles(required={"s/relevance.jsonl": path})


def test_jsonl_errors_name_the_file_and_line(tmp_path):
    path = tmp_path / "relevance.jsonl"
    good = json.dumps(_record("d1", "M0", expert={"relevance": [1, 2, 3]}))
    path.write_text(good + "\n\n" + "{not json\n")
    with pytest.raises(DatasetError, match=r"relevance.jsonl, line 3: invalid JSON"):
        load_summeval(_summeval_files(path))
    path.write_text(good + "\n" + json.dumps({"instance_id": "d1", "metrics": {}}) + "\n")
    with pytest.raises(DatasetError, match=r"relevance.jsonl, line 2: missing the field 'summarizer_id'"):
        load_summeval(_summeval_files(path))
    path.write_text(good + "\n" + json.dumps(_record("d2", "M0", expert={"relevance": "high"})) + "\n")
    with pytest.raises(DatasetError, match=r"line 2: measure 'expert.relevance' must be a number or null"):
        load_summeval(_summeval_files(path))
    path.write_text(good + "\n" + good + "\n")
    with pytest.raises(DatasetError, match=r"line 2: a second score for measure 'expert.relevance'"):
        load_summeval(_summeval_files(path))
    path.write_text("[1, 2]\n")
    with pytest.raises(DatasetError, match=r"line 1: expected a JSON object"):
        load_summeval(_summeval_files(path))


def test_gzip_errors_name_the_file(tmp_path):
    path = tmp_path / "judged" / "metrics.jsonl.gz"
    path.parent.mkdir()
    path.write_bytes(b"this is not gzip")
    with pytest.raises(DatasetError, match=r"metrics.jsonl.gz: cannot read the file"):
        load_deutsch2022(LoaderFiles(required={"x/judged/metrics.jsonl.gz": path}))
    _write_gz(path, [_record("d1", "A", **{"ROUGE-1": 1.0})])
    with pytest.raises(DatasetError, match="no 'ground-truth' human scores"):
        load_deutsch2022(LoaderFiles(required={"x/judged/metrics.jsonl.gz": path}))


def test_frank_errors(tmp_path):
    human = tmp_path / "human_annotations.json"
    metrics = tmp_path / "baseline_factuality_metrics_outputs.json"
    files = LoaderFiles(required={"f/human_annotations.json": human,
                                  "f/baseline_factuality_metrics_outputs.json": metrics},
                        options={"subset": "cnndm"})
    human.write_text('[{"hash": "h", "model_name": "m", "dataset": "cnndm", "Factuality": 1.0}]')
    metrics.write_text('[\n{"hash": "h",\n "model_name": "m", "dataset": "cnndm", "Rouge 1": }]')
    with pytest.raises(DatasetError, match=r"baseline_factuality_metrics_outputs.json, line 3, column \d+: invalid JSON"):
        load_frank(files)
    metrics.write_text('[{"hash": "h", "model_name": "m", "dataset": "cnndm", "Rouge 1": null, "Flip_RelE": 1}]')
    data = load_frank(files)
    assert data.systems == ("m",) and np.isnan(data.measures["Rouge 1"].scores).all()
    assert "Flip_RelE" not in data.measures
    metrics.write_text('[{"hash": "h", "dataset": "cnndm"}]')
    with pytest.raises(DatasetError, match=r"record 0: expected an object with hash, model_name and dataset"):
        load_frank(files)
    bad_subset = LoaderFiles(required=files.required, options={"subset": "xsum"})
    with pytest.raises(DatasetError, match="subset must be one of"):
        load_frank(bad_subset)


def test_xsum_csv_errors_name_the_line(tmp_path):
    path = tmp_path / "eval_scores_xsum_summaries.csv"
    files = LoaderFiles(required={"x/eval_scores_xsum_summaries.csv": path})
    header = "system_bbcid,R1,R2,RL,BERTScore,Entailment,Faithful,Factual\n"
    path.write_text(header + "ptgen_1,0.1,0.1,0.1,0.5,0.1,0.5,1.0\nptgen_2,0.1,abc,0.1,0.5,0.1,0.5,1.0\n")
    with pytest.raises(DatasetError, match=r"csv, line 3: column 'R2' must be a number; got 'abc'"):
        load_xsum_hallucination(files)
    path.write_text(header + "nounderscore,0.1,0.1,0.1,0.5,0.1,0.5,1.0\n")
    with pytest.raises(DatasetError, match=r"line 2: system_bbcid 'nounderscore' must look like"):
        load_xsum_hallucination(files)
    path.write_text("system_bbcid,R1\nptgen_1,0.1\n")
    with pytest.raises(DatasetError, match="missing column"):
        load_xsum_hallucination(files)
    path.write_text(header + "bert_nockpt_7,0.1,0.1,0.1,0.5,,0.5,1.0\n")
    data = load_xsum_hallucination(files)
    assert data.systems == ("TranS2S",) and np.isnan(data.measures["Entailment"].scores).all()


def test_rose_errors(tmp_path):
    path = tmp_path / "protocol-comparison.json"
    files = LoaderFiles(required={"r/protocol-comparison.json": path})
    path.write_text('[{"example_id": "e1"}]')
    with pytest.raises(DatasetError, match=r"example 0: expected an object with example_id and an annotations dict"):
        load_rose(files)
    path.write_text('[{"example_id": "e1", "annotations": {"s": {"prior": 4.0, "acu": []}}}]')
    data = load_rose(files)
    assert data.measures["prior"].scores.tolist() == [[4.0]]
    assert np.isnan(data.measures["acu"].scores).all()


def test_loader_input_validation(tmp_path):
    with pytest.raises(TypeError, match="files must be a LoaderFiles"):
        load_rose({"r/protocol-comparison.json": tmp_path / "x"})
    with pytest.raises(DatasetError, match="required file r/protocol-comparison.json is missing"):
        load_rose(LoaderFiles(required={"r/protocol-comparison.json": tmp_path / "absent.json"}))
    with pytest.raises(DatasetError, match="lists no required file ending in 'protocol-comparison.json'"):
        load_rose(LoaderFiles(required={}))


def test_natural_order():
    assert sorted(["M10", "M2", "M0", "M23"], key=natural_key) == ["M0", "M2", "M10", "M23"]
    assert sorted(["10", "9", "100"], key=natural_key) == ["9", "10", "100"]


def test_unjudged_pool_errors_name_the_file_and_line(tmp_path):
    judged, pool = _synthetic_pool(tmp_path)
    _write_gz(pool, [_record("u1", "A", **{"ROUGE-1": 1.0}), _record("u1", "A", **{"ROUGE-1": 2.0})])
    files = LoaderFiles(required={"x/judged/metrics.jsonl.gz": judged}, optional={"x/all/metrics.jsonl.gz": pool})
    with pytest.raises(DatasetError, match=r"all/metrics.jsonl.gz, line 2: a second line for system 'A'"):
        load_deutsch2022(files)
    _write_gz(pool, [_record("u1", "A", **{"ROUGE-1": "x"})])
    with pytest.raises(DatasetError, match=r"line 1: measure 'ROUGE-1' must be a number"):
        load_deutsch2022(files)


class _Evil:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        import os

        return (os.system, (f"touch {self.marker}",))


def test_realsumm_loader_refuses_a_malicious_pickle(tmp_path):
    import pickle

    from metaeval_core.data.loaders import load_realsumm
    from metaeval_core.data.safe_pickle import UnsafePickleError

    pyramid = tmp_path / "pyramid.jsonl"
    pyramid.write_text(json.dumps(_record("0", "sys_a", litepyramid={"recall": 0.5},
                                          bertscore={"precision": 0.1, "f1": 0.1})) + "\n")
    marker = tmp_path / "pwned"
    evil = tmp_path / "abs.pkl"
    evil.write_bytes(pickle.dumps({0: {"system_summaries": {"sys_a.txt": {"scores": _Evil(marker)}}}}))
    ext = tmp_path / "ext.pkl"
    ext.write_bytes(pickle.dumps({0: {"system_summaries": {}}}))
    files = LoaderFiles(required={"r/pyramid.jsonl": pyramid, "r/abs.pkl": evil, "r/ext.pkl": ext})
    with pytest.raises(UnsafePickleError, match=r"abs.pkl: refused to unpickle the global"):
        load_realsumm(files)
    assert not marker.exists()
    evil.write_bytes(pickle.dumps({0: {"system_summaries": {"sys_a.txt": {"scores": {"bert_f_score": 0.7}}}}}))
    data = load_realsumm(files)
    assert data.system_attributes == {"type": ("abs",)}
    assert data.measures["bertscore.f1"].scores.tolist() == [[0.7]]
    assert data.measures["bertscore.precision"].scores.tolist() == [[0.1]]
