"""The mt-metrics-eval reader on a replica the tests write in its exact layout (tests/mtme_replica.py)."""

from __future__ import annotations

import io
import json
import math
import zipfile

import numpy as np
import pytest
from scipy import stats

from metaeval_core.data.dataset import DatasetError
from metaeval_core.data.mtme import language_pairs, read_mtme, read_mtme_zip
from metaeval_core.data.registry import load_dataset
from metaeval_core.stats.correlation import correlate
from tests.mtme_replica import EN_DE_DOCS, EN_DE_SYSTEMS, TEST_SET, write_replica, zip_replica


@pytest.fixture
def replica(tmp_path):
    return write_replica(tmp_path)


def _expected(scores: dict, systems, width: int) -> np.ndarray:
    out = np.full((len(systems), width), np.nan)
    for i, system in enumerate(systems):
        for k, value in enumerate(scores.get(system, [None] * width)):
            out[i, k] = math.nan if value is None else value
    return out


def test_segment_level_round_trip(replica):
    ds = read_mtme(replica.test_set, lp="en-de")
    assert ds.id == f"mtme:{TEST_SET}/en-de"
    assert ds.systems == EN_DE_SYSTEMS  # the system-outputs files, natural order
    assert ds.inputs == tuple(str(k) for k in range(1, 8))
    assert ds.human_measures == ("mqm", "wmt-raw")  # human names from the file names, dashes kept
    assert ds.metric_measures == ("BLEU-refA", "COMET-22-refA", "COMET-22-refB", "Prism-src", "YiSi-1-refA.refB")
    for name, scores in replica.seg["en-de"].items():
        np.testing.assert_array_equal(ds.measure(name).scores, _expected(scores, ds.systems, 7), err_msg=name)
    # Multiple references: a metric has no score for the reference it uses, which is also a system.
    assert ds.system_attribute("kind") == ("reference", "mt", "mt", "mt")
    assert np.isnan(ds.measure("COMET-22-refB").scores[0]).all()
    assert not np.isnan(ds.measure("COMET-22-refA").scores[0]).any()
    assert np.isnan(ds.measure("YiSi-1-refA.refB").scores[0]).all()
    assert ds.measure("YiSi-1-refA.refB").attributes == {"basename": "YiSi-1", "references": "refA.refB"}
    assert ds.measure("Prism-src").attributes["references"] == "src"
    # None -> NaN; segment 5 has no human score at all: unjudged, in the metrics' 'all' pool only.
    assert np.isnan(ds.measure("mqm").scores[0, 1]) and np.isnan(ds.measure("mqm").scores[3, 5])
    assert ds.n_judged == 6 and not ds.judged[4] and ds.has_unjudged_pool
    # Domains and documents become input attributes.
    assert ds.input_attributes["domain"] == tuple(d for d, _ in EN_DE_DOCS)
    assert ds.input_attributes["document"] == tuple(doc for _, doc in EN_DE_DOCS)
    assert ds.select_inputs("domain=social").inputs == ("4", "5")
    notes = " ".join(ds.notes)
    assert "System-level only, not in this segment view: wmt-z" in notes
    assert "BLEU-refA (up to 1.5)" in notes and "COMET-22-refA (" not in notes  # only where they differ
    assert "1 doc-level file(s), 1 domain-level file(s)" in notes and "1 MQM .rating file(s)" in notes


def test_system_level_view_round_trip(replica):
    ds = read_mtme(replica.test_set, lp="en-de", level="sys")
    assert ds.inputs == ("system",) and ds.id.endswith("/sys")
    assert ds.human_measures == ("mqm", "wmt-z") and ds.metric_measures == ("BLEU-refA", "COMET-22-refA")
    for name, scores in replica.sys["en-de"].items():
        np.testing.assert_array_equal(ds.measure(name).scores, _expected(scores, ds.systems, 1), err_msg=name)
    assert np.isnan(ds.measure("wmt-z").scores[0, 0])  # refB has no wmt-z score


def test_system_level_correlations_match_an_independent_computation(replica):
    seg = read_mtme(replica.test_set, lp="en-de")
    scores = replica.seg["en-de"]
    for metric in ("BLEU-refA", "COMET-22-refA", "Prism-src"):
        for coefficient, oracle in (("pearson", stats.pearsonr), ("kendall", stats.kendalltau)):
            # Independent: per-system means over the judged segments, from the written lists.
            judged = [k for k in range(7) if any(scores[h][s][k] is not None for h in ("mqm", "wmt-raw")
                                                 for s in scores[h])]
            systems = [s for s in EN_DE_SYSTEMS if s in scores[metric]]
            human = [np.mean([v for k, v in enumerate(scores["mqm"][s]) if k in judged and v is not None])
                     for s in systems]
            # The judged pool of mqm: each system's segments mqm scored (docs/methods.md sec. 0.2).
            machine = [np.mean([scores[metric][s][k] for k in judged if scores["mqm"][s][k] is not None])
                       for s in systems]
            ours = correlate(seg, metric, "mqm", level="system", coefficient=coefficient)
            assert ours.n == len(systems)
            assert ours.estimate == pytest.approx(oracle(machine, human)[0], abs=1e-12), (metric, coefficient)
    sys_view = read_mtme(replica.test_set, lp="en-de", level="sys")
    sys_scores = replica.sys["en-de"]
    systems = [s for s in EN_DE_SYSTEMS if s in sys_scores["wmt-z"]]
    oracle = stats.pearsonr([sys_scores["BLEU-refA"][s][0] for s in systems],
                            [sys_scores["wmt-z"][s][0] for s in systems])[0]
    assert correlate(sys_view, "BLEU-refA", "wmt-z", level="system", coefficient="pearson").estimate == \
        pytest.approx(oracle, abs=1e-12)


def test_language_pairs_and_a_pair_without_sources(replica):
    assert language_pairs(replica.test_set) == ("en-de", "zh-en")
    with pytest.raises(DatasetError, match=r"2 language pairs \(en-de, zh-en\); choose one"):
        read_mtme(replica.test_set)
    with pytest.raises(DatasetError, match="no scores for language pair 'de-fr'"):
        read_mtme(replica.test_set, lp="de-fr")
    zh = read_mtme(replica.test_set, lp="zh-en")
    assert zh.systems == ("m1", "m2", "m3") and zh.n_inputs == 5 and zh.human_measures == ("da",)
    np.testing.assert_array_equal(zh.measure("chrF-refA").scores,
                                  _expected(replica.seg["zh-en"]["chrF-refA"], zh.systems, 5))
    assert "kind" not in zh.system_attributes and zh.input_attributes == {}
    with pytest.raises(DatasetError, match="no system-level human scores"):
        read_mtme(replica.test_set, lp="zh-en", level="sys")


def test_directory_errors(replica, tmp_path):
    with pytest.raises(DatasetError, match="holds several mt-metrics-eval test sets"):
        read_mtme(replica.root)  # the folder above the test set, as in ~/.mt-metrics-eval/mt-metrics-eval-v2
    with pytest.raises(DatasetError, match="not a directory"):
        read_mtme(tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    with pytest.raises(DatasetError, match="not an mt-metrics-eval test set"):
        read_mtme(tmp_path / "empty")
    with pytest.raises(ValueError, match="level must be one of"):
        read_mtme(replica.test_set, lp="en-de", level="doc")
    metric_dir = replica.test_set / "metric-scores" / "en-de"
    bad = metric_dir / "BLEU-refA.seg.score"
    original = bad.read_text()
    bad.write_text(original.replace("sysB\t", "sysX\t", 1))
    with pytest.raises(DatasetError, match=r"BLEU-refA.seg.score: system\(s\) sysX not in system-outputs/en-de/"):
        read_mtme(replica.test_set, lp="en-de")
    bad.write_text("\n".join(original.splitlines()[:-1]) + "\n")
    with pytest.raises(DatasetError, match="6 scores for system 'sysC'; expected one per segment \\(7\\)"):
        read_mtme(replica.test_set, lp="en-de")
    bad.write_text(original.replace("\t", " 1 ", 1))
    with pytest.raises(DatasetError, match="BLEU-refA.seg.score, line 1: expected 'SYSTEM SCORE'"):
        read_mtme(replica.test_set, lp="en-de")
    bad.write_text(original.replace(original.split()[1], "abc", 1))
    with pytest.raises(DatasetError, match="line 1: score 'abc' is neither a number nor None"):
        read_mtme(replica.test_set, lp="en-de")
    bad.write_text(original)
    (metric_dir / "NOREF.seg.score").write_text(original)
    with pytest.raises(DatasetError, match="must be named METRIC-REF.LEVEL.score"):
        read_mtme(replica.test_set, lp="en-de")


def test_zip_upload_matches_the_directory(replica, tmp_path):
    direct = read_mtme(replica.test_set, lp="en-de")
    for top in (TEST_SET, "", f"mt-metrics-eval-v2/{TEST_SET}"):
        data = zip_replica(replica, tmp_path / "set.zip", top=top).read_bytes()
        zipped = read_mtme_zip(data, lp="en-de", name="set.zip")
        assert zipped.systems == direct.systems and zipped.inputs == direct.inputs
        assert zipped.fingerprint() == direct.fingerprint()
        assert str(replica.root) not in " ".join(zipped.notes)  # no temporary path in the notes
    with pytest.raises(DatasetError, match="not a zip archive"):
        read_mtme_zip(b"not a zip", name="x.zip")
    evil = io.BytesIO()
    with zipfile.ZipFile(evil, "w") as archive:
        archive.writestr("../outside.score", "sysA 1.0\n")
    with pytest.raises(DatasetError, match="outside the archive's folder"):
        read_mtme_zip(evil.getvalue(), name="evil.zip")
    data = zip_replica(replica, tmp_path / "set.zip").read_bytes()
    with pytest.raises(DatasetError, match="more than 0.000954 MB once uncompressed"):
        read_mtme_zip(data, lp="en-de", max_bytes=1000)


def test_load_dataset_and_cli(replica, capsys):
    from metaeval_core.cli.main import main

    ds = load_dataset(str(replica.test_set), lp="en-de")
    assert ds.metric_measures[0] == "BLEU-refA"
    with pytest.raises(DatasetError, match="not a directory: a language pair"):
        load_dataset(str(replica.test_set / "sources" / "en-de.txt"), lp="en-de")
    assert main(["correlate", "--dataset", str(replica.test_set), "--lp", "en-de", "--metrics",
                 "BLEU-refA,COMET-22-refB", "--human", "mqm", "--json"]) in (0, None)
    rows = json.loads(capsys.readouterr().out)
    assert [r["metric"] for r in rows] == ["BLEU-refA", "COMET-22-refB"] and rows[1]["n"] == 3
    assert main(["correlate", "--dataset", str(replica.test_set), "--lp", "en-de", "--mtme-level", "sys",
                 "--metrics", "BLEU-refA", "--human", "wmt-z", "--coefficient", "pearson", "--json"]) in (0, None)
    (row,) = json.loads(capsys.readouterr().out)
    assert row["n"] == 3
    code = main(["describe", "--dataset", str(replica.test_set)])
    err = capsys.readouterr().err
    assert code == 2 and "choose one (--lp on the command line)" in err and "Traceback" not in err


def test_cli_selects_a_domain(replica, capsys):
    from metaeval_core.cli.main import main

    base = ["describe", "--dataset", str(replica.test_set), "--lp", "en-de", "--json"]
    assert main([*base, "--inputs", "domain=social"]) in (0, None)
    info = json.loads(capsys.readouterr().out)
    assert info["n_inputs"] == 2 and info["n_judged"] == 1  # segments 4 and 5; 5 has no human score
    assert main([*base, "--inputs", "domain=speech"]) == 2
    assert "no input of dataset" in capsys.readouterr().err
