"""The built-in WMT22 zh-en dataset (mt-metrics-eval's layout) with WMT's conventions by default.

Real-data figures are the issue's (issue 25), from google-research/mt-metrics-eval's own rules: SEScore-refA's
system Pearson with MQM is 0.920 and COMETKiwi-src's 0.7949 on the 15 systems WMT scores with human translations
(14 MT systems with MQM + refB); keeping refA as a system gives the old 0.646 / 0.7988 (n = 16).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from metaeval_core.cli.main import main
from metaeval_core.data.registry import dataset_info, fetch_dataset, load_dataset, verify_files
from metaeval_core.stats.correlation import correlate
from tests.core.test_registry import no_proxy  # noqa: F401 - the fixture: downloads from 127.0.0.1 bypass proxies
from tests.localhttp import serve

ID = "wmt22-zhen"
UNRATED_MQM = ("DLUT", "NiuTrans", "QUARTZ_TuneReranking", "chrf_bestmbr")
PRIMARY = ("BERTScore-refA", "BLEU-refA", "BLEURT-20-refA", "COMET-20-refA", "COMET-22-refA", "COMET-QE-src",
           "COMETKiwi-src", "HWTSC-Teacher-Sim-src", "MATESE-QE-src", "MATESE-refA", "MEE4-refA", "MS-COMET-22-refA",
           "MS-COMET-QE-22-src", "REUSE-src", "SEScore-refA", "UniTE-refA", "UniTE-src-src", "YiSi-1-refA",
           "chrF-refA", "f200spBLEU-refA", "metricx_xxl_MQM_2020-refA")


def _entry() -> dict:
    repo = Path(__file__).resolve().parents[2]
    return next(d for d in json.loads((repo / "data/registry.json").read_text(encoding="utf-8"))["datasets"]
                if d["id"] == ID)


def test_registry_entry_lists_every_file_of_the_test_set():
    entry = _entry()
    assert entry["loader"] == "mtme" and entry["options"] == {"lp": "zh-en", "test_set": "wmt22"}
    assert "Freitag" in entry["citation"] and "Stop Using BLEU" in entry["citation"]
    paths = [f["path"] for f in entry["files"]]
    assert len(paths) == 90 and all(p.startswith("wmt22-zhen/wmt22/") for p in paths)
    assert sum(p.startswith("wmt22-zhen/wmt22/metric-scores/zh-en/") for p in paths) == 52
    assert sum(p.startswith("wmt22-zhen/wmt22/system-outputs/zh-en/") for p in paths) == 20
    for f in entry["files"]:
        assert f["url"] == ("https://raw.githubusercontent.com/florethsong/mtme-zh-mwe/"
                            f"78ea1631766a57553ac97ee21380c09b06ad6918/{f['upstream_path']}")
        assert f["repo"] == "florethsong/mtme-zh-mwe" and f["bytes"] > 0 and len(f["sha256"]) == 64


@pytest.fixture(scope="module")
def wmt(data_dir):
    return load_dataset(ID, data_dir=data_dir)


@pytest.mark.realdata
def test_loads_with_wmt_conventions(wmt):
    assert wmt.task == "translation" and wmt.vocabulary.count(2, "input") == "2 segments"  # pages' words
    assert wmt.n_systems == 20 and wmt.n_inputs == 1875 and wmt.human_measures == (
        "mqm", "wmt", "wmt-appraise", "wmt-appraise-z", "wmt-z")
    assert len(wmt.metric_measures) == 52 and sorted(set(wmt.input_attributes["domain"])) == [
        "conversation", "ecommerce", "news", "social"]
    c = wmt.conventions
    assert (c.name, c.std_ref, c.human_translations, c.gold, c.pool) == ("wmt", "refA", ("refB",), "mqm", "all")
    assert c.primary_metrics == PRIMARY and len(c.eligible_metrics) == 31
    assert wmt.measures_with("primary", "yes") == tuple(m for m in wmt.metric_measures if m in PRIMARY)
    assert wmt.measure("mqm").attributes == {"gold": "yes"}
    assert wmt.unrated_systems("mqm") == UNRATED_MQM
    assert wmt.with_default_systems().systems == tuple(s for s in wmt.systems if s not in ("refA", "refB"))
    assert wmt.with_default_systems(human_translations=True).systems == tuple(s for s in wmt.systems if s != "refA")
    notes = " ".join(wmt.notes)
    assert "these score it against itself: SEScore-refA, SEScore-refB" in notes
    assert "standard reference refA is never a system" in notes


@pytest.mark.realdata
@pytest.mark.parametrize("human_translations, selection, expected", [
    (True, None, {"SEScore-refA": (0.920, 15), "COMETKiwi-src": (0.7949, 15)}),  # WMT with human translations
    (False, None, {"SEScore-refA": (0.9435, 14), "COMETKiwi-src": (0.8662, 14)}),  # WMT's default: MT only
    (False, "all", {"SEScore-refA": (0.646, 16), "COMETKiwi-src": (0.7988, 16)}),  # the old default, by name
])
def test_issue_figures(wmt, human_translations, selection, expected):
    ds = wmt if selection == "all" else wmt.with_default_systems(human_translations=human_translations)
    for metric, (value, n) in expected.items():
        result = correlate(ds, metric, "mqm", coefficient="pearson", pool="all")
        assert result.n == n and result.estimate == pytest.approx(value, abs=5e-4), metric


@pytest.mark.realdata
def test_judged_pool_is_each_human_measures_own(wmt):
    ds = wmt.with_default_systems()
    human, metric = ds.measure("wmt").scores, ds.measure("COMET-22-refA").scores
    rated = ~np.isnan(human).all(axis=1)
    z = np.nanmean(human[rated], axis=1)
    every = stats.pearsonr(metric[rated].mean(axis=1), z)[0]
    cells = stats.pearsonr(np.nanmean(np.where(np.isnan(human), np.nan, metric)[rated], axis=1), z)[0]
    assert every == pytest.approx(0.135, abs=5e-4) and cells == pytest.approx(0.166, abs=5e-4)
    assert correlate(ds, "COMET-22-refA", "wmt", coefficient="pearson", pool="all").estimate == pytest.approx(every)
    assert correlate(ds, "COMET-22-refA", "wmt", coefficient="pearson", pool="judged").estimate == \
        pytest.approx(cells)


@pytest.mark.realdata
def test_systems_without_gold_are_removed_before_a_permutation_test(wmt):
    from metaeval_core.stats.significance import compare_all_pairs

    ds = wmt.with_default_systems()
    options = dict(level="system", coefficient="pearson", method="perm-systems", n_resamples=200, rng=3, pool="all")
    with_unrated = compare_all_pairs(ds, ["COMET-22-refA", "MS-COMET-22-refA"], "mqm", **options)
    removed_first = compare_all_pairs(ds.subset(systems=[s for s in ds.systems if s not in UNRATED_MQM]),
                                      ["COMET-22-refA", "MS-COMET-22-refA"], "mqm", **options)
    assert with_unrated.to_records() == removed_first.to_records()


@pytest.mark.realdata
def test_cli_defaults_and_their_caption(data_dir, capsys):
    base = ["correlate", "--dataset", ID, "--data-dir", str(data_dir), "--coefficient", "pearson", "--json"]
    assert main([*base, "--metrics", "SEScore-refA", "--human-translations"]) == 0
    out, err = capsys.readouterr()
    err = " ".join(err.split())  # the caption is wrapped at the terminal's width
    (row,) = json.loads(out)
    assert (row["human"], row["pool"], row["n"]) == ("mqm", "all", 15) and row["estimate"] == pytest.approx(
        0.920, abs=5e-4)
    assert "WMT conventions" in err and "human translations refB included" in err and "systems: 15 of 20" in err
    assert main(base) == 0  # every default: the primary metrics against the gold
    out, err = capsys.readouterr()
    assert [r["metric"] for r in json.loads(out)] == list(PRIMARY)
    assert {r["n"] for r in json.loads(out)} == {14}
    assert main([*base, "--metrics", "SEScore-refA", "--systems", "!refB"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)[0]["n"] == 15 and "system set not WMT's: --systems !refB" in " ".join(err.split())


@pytest.mark.realdata
def test_compare_uses_one_system_set(data_dir, capsys):
    args = ["compare", "--dataset", ID, "--data-dir", str(data_dir), "--metrics", "COMET-22-refA,COMETKiwi-src",
            "--coefficient", "pearson", "--all-systems", "--n-resamples", "100", "--json"]
    assert main(args) == 0
    err = " ".join(capsys.readouterr().err.split())  # the caption is wrapped at the terminal's width
    # COMETKiwi-src scores refA, COMET-22-refA does not: the table keeps the 15 systems both score.
    assert "systems: 15 of 20" in err
    assert "or a metric: DLUT, NiuTrans, QUARTZ_TuneReranking, chrf_bestmbr, refA)" in err


@pytest.mark.realdata
def test_describe_names_every_unrated_system(data_dir, capsys):
    assert main(["describe", "--dataset", ID, "--data-dir", str(data_dir), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["conventions"]["gold"] == "mqm" and info["conventions"]["primary_metrics"] == list(PRIMARY)
    unrated = [w for w in info["report"]["warnings"] if w["kind"] == "unrated-systems"]
    assert {w["message"].split("'")[1]: tuple(w["names"]) for w in unrated}["mqm"] == UNRATED_MQM
    assert info["report"]["human_reasons"]["mqm"].startswith("an mt-metrics-eval human-scores file")
    assert not any("declared human" in reason for reason in info["report"]["human_reasons"].values())


@pytest.mark.realdata
def test_fetch_downloads_and_verifies_the_test_set(data_dir, tmp_path, no_proxy):
    target = tmp_path / "cache"
    with serve(data_dir) as base:
        fetch_dataset(ID, data_dir=target, base_url=base)
    assert dataset_info(ID, data_dir=target).available
    assert all(check.ok for check in verify_files(ID, data_dir=target))
    assert load_dataset(ID, data_dir=target).version == load_dataset(ID, data_dir=data_dir).version
