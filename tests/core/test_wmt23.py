"""The built-in WMT23 test set (en-de, he-en, zh-en; one id, its pair chosen with --lp), its conventions from
mt-metrics-eval's meta-info, the WMT23 and WMT24 task suites and PDP against mt-metrics-eval's own numbers
(tests/reference/wmt23/make_reference.py, run with mt-metrics-eval's code)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from metaeval_core.data.dataset import DatasetError
from metaeval_core.data.registry import dataset_info, default_lp, language_pairs_of, load_dataset

ID = "wmt23"
REFERENCE = Path(__file__).resolve().parents[1] / "reference" / "wmt23" / "reference.json"
EXACT = 1e-9  # the same formula on the same floats: rounding only
# mt-metrics-eval's PCE sums permuted scores in float32 and compares them exactly; metaeval's SPA sums in float64
# with a relative tie tolerance (docs/methods.md sec. 11.3): on WMT23 the values differ by at most 4.9e-4 (MaTESe,
# whose integer-like scores tie most), the WMT24 averages by at most 1.2e-4, and the ranking not at all.
SPA_GAP = 6e-4
SPA_AVERAGE_GAP = 2e-4


@pytest.fixture(scope="module")
def reference() -> dict:
    return json.loads(REFERENCE.read_text(encoding="utf-8"))


def _entry() -> dict:
    repo = Path(__file__).resolve().parents[2]
    return next(d for d in json.loads((repo / "data/registry.json").read_text(encoding="utf-8"))["datasets"]
                if d["id"] == ID)


def test_registry_entry_one_id_three_pairs_with_its_licence():
    entry = _entry()
    sxs = "wmt23-ende-sxs-mqm/generalMT2023/ende/sxs_mqm_generalMT2023_ende.3ratingsPerSegment.tsv.tar.gz"
    assert entry["loader"] == "mtme" and entry["options"] == {"test_set": "wmt23", "lp": "zh-en",
                                                              "lps": ["en-de", "he-en", "zh-en"],
                                                              "lp_files": {"en-de": [sxs]}}
    assert "GPL-3.0" in entry["licence"] and "WMT23" in entry["licence"] and "Apache-2.0" in entry["licence"]
    assert "Metrics Might Be Guilty" in entry["citation"]
    paths = [f["path"] for f in entry["files"]]
    assert all(p.startswith("wmt23/wmt23/") for p in paths if p != sxs) and len(paths) == len(set(paths))
    for lp in ("en-de", "he-en", "zh-en"):
        assert sum(p.startswith(f"wmt23/wmt23/metric-scores/{lp}/") for p in paths) >= 3 * 68
        assert f"wmt23/wmt23/documents/{lp}.docs" in paths
    assert sum(".mqm.rater" in p for p in paths) == 8
    for f in entry["files"]:
        assert f["url"].startswith(("https://raw.githubusercontent.com/wmt-conference/ErrorSpanAnnotation/",
                                    "https://raw.githubusercontent.com/google/wmt-mqm-human-evaluation/"))
        assert len(f["sha256"]) == 64 and f["bytes"] > 0
    assert language_pairs_of(ID) == ("en-de", "he-en", "zh-en") and default_lp(ID) == "zh-en"
    assert language_pairs_of("wmt22-zhen") == () and default_lp("wmt22-zhen") is None


def test_the_dataset_page_names_the_licence(data_dir):
    info = dataset_info(ID, data_dir=data_dir)
    assert "GPL-3.0" in info.licence and "WMT23's terms" in info.licence


@pytest.fixture(scope="module")
def pairs(data_dir):
    return {lp: load_dataset(ID, lp=lp, data_dir=data_dir) for lp in ("en-de", "he-en", "zh-en")}


@pytest.mark.realdata
def test_each_pair_loads_with_its_conventions(pairs):
    de, he, zh = pairs["en-de"], pairs["he-en"], pairs["zh-en"]
    assert (de.n_inputs, he.n_inputs, zh.n_inputs) == (557, 1910, 1976)
    assert (de.n_systems, he.n_systems, zh.n_systems) == (14, 14, 17)
    assert "en-de" in de.title and "he-en" in he.title
    # he-en: the standard reference is refB, and refA is a human translation scored as a system.
    assert he.conventions.std_ref == "refB" and he.conventions.human_translations == ("refA",)
    assert he.default_systems == "-refB,-refA" and he.conventions.outliers == ()
    for ds in (de, zh):
        assert ds.conventions.std_ref == "refA" and ds.conventions.outliers == ("synthetic_ref",)
        assert ds.default_systems == "-refA,-synthetic_ref"
    for ds in (de, he, zh):
        assert ds.conventions.gold == "mqm" and "WMT23" in ds.conventions.source.upper()
        ref = ds.conventions.std_ref
        assert "BLEU-" + ref in ds.conventions.primary_metrics and "CometKiwi-src" in ds.conventions.primary_metrics
        assert all(m.endswith((f"-{ref}", "-src")) for m in ds.conventions.eligible_metrics)
    assert "XCOMET-Ensemble-refB" in he.conventions.primary_metrics
    # The default system set is WMT's: 12 MT systems with MQM (en-de, he-en), 15 (zh-en).
    assert [d.with_default_systems().rated_by("mqm").n_systems for d in (de, he, zh)] == [12, 12, 15]


@pytest.mark.realdata
def test_language_pair_errors_name_the_choices(data_dir):
    with pytest.raises(DatasetError, match="no language pair 'de-en'; choose one of en-de, he-en, zh-en"):
        load_dataset(ID, lp="de-en", data_dir=data_dir)
    with pytest.raises(DatasetError, match="has one language pair"):
        load_dataset("wmt22-zhen", lp="en-de", data_dir=data_dir)


@pytest.mark.realdata
def test_versions_differ_by_pair_and_level(pairs, data_dir):
    versions = {d.version for d in pairs.values()}
    assert len(versions) == 3
    assert load_dataset(ID, lp="he-en", data_dir=data_dir, mtme_level="sys").version not in versions


# -- suites ---------------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def suite_data(data_dir):
    from metaeval_core.analyses.suites import load_suite_data

    return load_suite_data(ID, data_dir=data_dir)


def test_suite_tasks_and_weights_are_mt_metrics_evals(reference):
    from metaeval_core.analyses.suites import suite_tasks

    for suite in ("wmt23", "wmt24"):
        tasks = suite_tasks(suite)
        spec = reference["suites"][suite]
        assert [t.weight for t in tasks] == pytest.approx(spec["weights"], abs=1e-15)
        for task, ref in zip(tasks, spec["tasks"]):
            attrs = ref["attrs"]
            assert task.label.startswith(f"lang={attrs['lang']} level={attrs['level']} "
                                         f"corr_fcn={attrs['corr_fcn']}"), (task.label, attrs)
            assert str(task.human) == attrs["human"]
    assert suite_tasks("wmt23")[0].weight == pytest.approx(3 / 12)


@pytest.mark.realdata
@pytest.mark.parametrize("suite", ["wmt23", "wmt24"])
def test_suite_equals_mt_metrics_eval(suite_data, reference, suite):
    from metaeval_core.analyses.suites import run_suite

    spec = reference["suites"][suite]
    result = run_suite(suite_data, suite)
    assert set(result.metrics) == set(spec["average"]) and len(result.metrics) == 32
    for t, (task, ref) in enumerate(zip(result.tasks, spec["tasks"])):
        gap = SPA_GAP if task.statistic == "spa" else EXACT
        for i, metric in enumerate(result.metrics):
            assert result.values[i, t] == pytest.approx(ref["values"][metric], abs=gap), (task.label, metric)
    got = dict(zip(result.metrics, result.average))
    gap = SPA_AVERAGE_GAP if suite == "wmt24" else EXACT
    for metric, expected in spec["average"].items():
        assert got[metric] == pytest.approx(expected, abs=gap), metric
    assert list(result.metrics) == sorted(spec["average"], key=lambda m: (-spec["average"][m], m))
    if suite == "wmt23":  # the paper's overall table: XCOMET-Ensemble first at 0.825
        assert result.metrics[0] == "XCOMET-Ensemble" and result.average[0] == pytest.approx(0.825, abs=5e-4)
    # Metrics matched by base name with each pair's standard reference.
    assert result.metric_ids["he-en"]["BLEU"] == "BLEU-refB" and result.metric_ids["en-de"]["BLEU"] == "BLEU-refA"


@pytest.mark.realdata
def test_suite_intervals_and_clusters_do_not_depend_on_batch(suite_data):
    from metaeval_core.analyses.suites import run_suite

    a = run_suite(suite_data, "wmt23", n_resamples=12, method="boot-both", rng=3)
    b = run_suite(suite_data, "wmt23", n_resamples=12, method="boot-both", rng=3, batch=5)
    np.testing.assert_array_equal(a.low, b.low)
    np.testing.assert_array_equal(a.high, b.high)
    assert a.clusters is not None and a.rank(a.metrics[0]) == 1
    assert np.all(a.low <= a.high)
    records = a.to_records()
    assert records[0]["metric"] == a.metrics[0] and "all accuracy" in records[0] and records[0]["cluster"] == 1


@pytest.mark.realdata
def test_cli_average_suite_json(data_dir, capsys):
    from metaeval_core.cli.main import main

    main(["average", "--dataset", ID, "--tasks", "wmt24", "--json", "--data-dir", str(data_dir)])
    out = json.loads(capsys.readouterr().out)
    assert out["suite"] == "wmt24" and len(out["tasks"]) == 6 and out["tasks"][0]["label"].endswith("corr_fcn=pce")
    first = out["metrics"][0]
    assert first["metric"] == "GEMBA-MQM[noref]" and set(first) >= {"average", "en-de spa", "zh-en acc23"}


def test_cli_average_suite_needs_a_test_set_with_several_pairs(capsys):
    from metaeval_core.cli.main import main

    code = main(["average", "--tasks", "wmt23"])
    assert code == 2 and "--tasks needs --dataset" in capsys.readouterr().err


# -- PDP --------------------------------------------------------------------------------------------------------------
def _pdp_sets(data_dir):
    from metaeval_core.data.mtme import read_mtme

    for key, lp, human in (("wmt23/en-de", "en-de", False), ("wmt23/he-en", "he-en", True),
                           ("wmt23/zh-en", "zh-en", False)):
        yield key, load_dataset(ID, lp=lp, data_dir=data_dir), load_dataset(ID, lp=lp, data_dir=data_dir,
                                                                             mtme_level="sys"), human
    folder = Path(data_dir) / "wmt22-zhen" / "wmt22"
    if folder.is_dir():
        seg = read_mtme(folder, lp="zh-en")
        yield "wmt22/zh-en", seg, seg, False


@pytest.mark.realdata
def test_pdp_equals_mt_metrics_eval(data_dir, reference):
    from metaeval_core.stats.correlation import correlate_matrices

    checked = 0
    for key, seg, sys, human in _pdp_sets(data_dir):
        spec = reference["pdp"][key]
        for view, level, block, field in ((seg, "input", "segment", "pdp_item"), (sys, "system", "system", "pdp")):
            ds = view.select_systems(view.conventions.systems(human_translations=human)).rated_by("mqm")
            z = ds.matrix("mqm")
            for metric, expected in spec[block].items():
                if metric not in ds.measures:
                    continue
                assert ds.n_systems == expected["num_sys"], (key, metric)
                got = correlate_matrices(ds.matrix(metric), z, level=level, coefficient="pdp")
                assert float(got.estimate) == pytest.approx(expected[field], abs=EXACT), (key, metric, level)
                checked += 1
        # At the system level PDP is Pearson (complete data); at the input level it is not the mean per item.
        some = next(iter(spec["system"].values()))
        assert some["pdp"] == pytest.approx(some["pearson"], abs=1e-12)
    assert checked > 4 * 60


@pytest.mark.realdata
def test_zh_en_per_rater_files_give_a_human_ceiling(pairs):
    from metaeval_core.analyses.ceilings import human_ceiling

    zh = pairs["zh-en"]
    m = zh.measure("mqm.raters")
    assert m.kind == "human" and m.annotators.shape == (8, 17, 1976) and zh.annotators_are("mqm.raters") == "persons"
    rated = np.sum(~np.isnan(m.annotators), axis=0)
    assert int((rated == 8).sum()) == 288 and int((rated >= 2).sum()) == 288
    assert "mqm.raters" not in pairs["he-en"].measures and "mqm.raters" not in pairs["en-de"].measures
    ceiling = human_ceiling(zh.with_default_systems(), "mqm.raters", level="input", coefficient="pearson",
                            method="boot-inputs", n_resamples=50, rng=0)
    assert len(ceiling.rows) == 8 and all(0.3 < r.estimate < 0.8 for r in ceiling.rows)


@pytest.mark.realdata
def test_en_de_side_by_side_mqm_gives_a_human_ceiling(pairs):
    from metaeval_core.analyses.ceilings import human_ceiling

    de = pairs["en-de"]
    m = de.measure("mqm.sxs")
    rated = np.sum(~np.isnan(m.annotators), axis=0)
    # 104 paragraphs x 9 outputs (GPT4-5shot's two pairings are one system), 3 of 10 raters each, HOTW-test dropped.
    assert m.annotators.shape == (10, 14, 557) and int((rated == 3).sum()) == 936 and int((rated > 0).sum()) == 936
    assert int((rated.sum(axis=0) > 0).sum()) == 104 and de.annotators_are("mqm.sxs") == "persons"
    assert "mqm.sxs" not in pairs["zh-en"].measures
    ceiling = human_ceiling(de.with_default_systems(), "mqm.sxs", level="input", coefficient="pearson",
                            method="boot-inputs", n_resamples=50, rng=0)
    assert len(ceiling.rows) == 10 and all(0.3 < r.estimate < 0.8 for r in ceiling.rows)


def test_mqm_weights_are_mt_metrics_evals():
    from metaeval_core.data.mtme import _mqm_weight

    assert _mqm_weight("Major", "Accuracy/Mistranslation") == 5 and _mqm_weight("Minor", "Style/Bad sentence") == 1
    assert _mqm_weight("Minor", "Fluency/Punctuation") == 0.1 and _mqm_weight("Major", "Non-translation!") == 25
    assert _mqm_weight("No-error", "No-error") == 0


@pytest.mark.realdata
def test_without_the_side_by_side_file_only_en_de_s_extra_measure_is_missing(data_dir, tmp_path):
    """The sxs MQM (an en-de measure from another repository) is optional: without it wmt23 stays available and
    every pair loads, en-de without mqm.sxs (issue 30: the whole dataset was unavailable). The rest of the mirror
    is symlinked, never copied."""
    from metaeval_core.data.registry import dataset_info

    partial = tmp_path / "data"
    partial.mkdir()
    for item in data_dir.iterdir():
        if item.name != "wmt23-ende-sxs-mqm":
            (partial / item.name).symlink_to(item)
    info = dataset_info(ID, data_dir=partial)
    assert info.available and not info.missing
    en_de = load_dataset(ID, lp="en-de", data_dir=partial)
    assert "mqm.sxs" not in en_de.measures and "mqm" in en_de.measures
    assert load_dataset(ID, lp="zh-en", data_dir=partial).n_systems > 10
    assert "mqm.sxs" in load_dataset(ID, lp="en-de", data_dir=data_dir).measures


@pytest.mark.realdata
def test_en_de_without_the_side_by_side_file_says_why_mqm_sxs_is_missing(data_dir, tmp_path):
    """A data directory with the test set but not Google's side-by-side MQM loads en-de without ``mqm.sxs`` and
    says which file is missing and how to fetch it; with the file, no such note."""
    from pathlib import Path

    from metaeval_core.data.registry import load_dataset

    (tmp_path / "wmt23").symlink_to(Path(data_dir) / "wmt23")
    ds = load_dataset("wmt23", lp="en-de", data_dir=tmp_path)
    assert "mqm.sxs" not in ds.measures
    note = next(n for n in ds.notes if "mqm.sxs" in n)
    assert "sxs_mqm_generalMT2023_ende.3ratingsPerSegment.tsv.tar.gz" in note and "metaeval fetch" in note
    full = load_dataset("wmt23", lp="en-de", data_dir=data_dir)
    assert "mqm.sxs" in full.measures and not any("is not loaded" in n for n in full.notes)
