"""WMT's conventions on mt-metrics-eval data (metaeval_core.data.conventions; docs/methods.md sec. 0.6), on the
replica the tests write in mt-metrics-eval's layout (tests/mtme_replica.py): inferred for an unknown test set,
taken from mt-metrics-eval's meta-info for a known one; the CLI's defaults, flags and messages."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from metaeval_core.cli.main import main
from metaeval_core.data.conventions import WmtConventions, mtme_conventions
from metaeval_core.data.mtme import NO_SYSTEM_METRICS, read_mtme
from metaeval_core.data.store import DatasetStore
from metaeval_core.stats.correlation import correlate
from tests.mtme_replica import write_replica


@pytest.fixture
def replica(tmp_path):
    return write_replica(tmp_path)


def test_an_unknown_test_set_gets_inferred_conventions(replica):
    ds = read_mtme(replica.test_set, lp="en-de")
    c = ds.conventions
    assert (c.std_ref, c.human_translations, c.gold, c.primary_metrics, c.pool) == ("refA", ("refB",), "mqm", (),
                                                                                   "all")
    assert "inferred" in c.source
    assert c.eligible_metrics == ("BLEU-refA", "COMET-22-refA", "Prism-src")  # refB-based metrics: not WMT's
    assert "primary" not in ds.measure("BLEU-refA").attributes  # unknown: no metric is marked
    assert ds.default_systems == "-refA,-refB" and ds.with_default_systems().systems == ("sysA", "sysB", "sysC")
    assert ds.with_default_systems(human_translations=True).systems == ds.systems  # refA is no system here


def test_a_known_test_set_takes_mt_metrics_evals_meta_info(replica, tmp_path):
    known = tmp_path / "mtme" / "wmt22"
    shutil.copytree(replica.test_set, known)
    ds = read_mtme(known, lp="en-de")
    c = ds.conventions
    assert c.source.endswith("wmt22 en-de") and "meta_info.py" in c.source
    assert c.primary_metrics == ("BLEU-refA", "COMET-22-refA")  # Prism is not a WMT22 primary
    assert ds.measure("BLEU-refA").attributes["primary"] == "yes"
    assert ds.measure("Prism-src").attributes["primary"] == "no"
    assert ds.measure("mqm").attributes == {"gold": "yes"}


def test_conventions_facts_and_caption():
    c = mtme_conventions("wmt22", "cs-en", references=["refA", "refB"], systems=["a", "refA", "refB"],
                         humans=["wmt", "mqm"], metrics={"BLEU-refB": ("BLEU", "refB"), "BLEU-refA": ("BLEU", "refA"),
                                                         "X-src": ("X", "src")})
    assert (c.std_ref, c.gold, c.human_translations) == ("refB", "wmt", ("refA",))  # meta_info: cs-en uses refB
    assert c.primary_metrics == ("BLEU-refB",) and c.eligible_metrics == ("BLEU-refB", "X-src")
    assert c.systems() == "-refB,-refA" and c.systems(human_translations=True) == "-refB"
    text = c.caption(human="mqm", pool="judged")
    assert "references (refB, refA) not systems" in text and "WMT's gold is wmt" in text and "not WMT's" in text
    assert "human translations refA included" in c.caption(human_translations=True)
    assert "system set not WMT's: every system" in c.caption(systems="")
    assert WmtConventions.from_dict(c.to_dict()) == c


def test_conventions_survive_subsets_and_the_store(replica, tmp_path):
    ds = read_mtme(replica.test_set, lp="en-de")
    assert ds.subset(systems=["sysA", "sysB"]).conventions == ds.conventions
    back = DatasetStore(tmp_path / "store").load(DatasetStore(tmp_path / "store").save(ds, "wmt").key)
    assert back.conventions == ds.conventions and back.default_systems == ds.default_systems


def test_unrated_systems_are_removed_before_any_statistic(replica):
    ds = read_mtme(replica.test_set, lp="en-de")
    # wmt-raw never scores refB: every statistic against it uses sysA-sysC, whatever the metric scores.
    assert ds.unrated_systems("wmt-raw") == ("refB",) and ds.rated_by("wmt-raw").systems == ("sysA", "sysB", "sysC")
    assert correlate(ds, "Prism-src", "wmt-raw").n == 3


def test_cli_defaults_flags_and_messages(replica, capsys, tmp_path):
    base = ["correlate", "--dataset", str(replica.test_set), "--lp", "en-de", "--json"]
    assert main([*base, "--metrics", "BLEU-refA"]) == 0  # --human: the gold (mqm); pool all
    out, err = capsys.readouterr()
    (row,) = json.loads(out)
    assert (row["human"], row["pool"], row["n"]) == ("mqm", "all", 3)
    assert "WMT conventions" in err and "systems: 3 of 4" in err
    assert main([*base, "--metrics", "BLEU-refA", "--human-translations"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["n"] == 4
    assert main(base) == 2  # no primary metrics known for this test set
    assert "--metrics is required" in capsys.readouterr().err
    assert main(["correlate", "--dataset", "demo", "--metrics", "metric.good", "--human-translations"]) == 2
    assert "--human-translations applies to mt-metrics-eval data" in capsys.readouterr().err
    assert main(["correlate", "--dataset", "demo", "--metrics", "metric.good"]) == 2
    assert "--human is required" in capsys.readouterr().err
    # The system view without metric files says so instead of an unknown-measure error.
    for path in (replica.test_set / "metric-scores" / "en-de").glob("*.sys.score"):
        path.unlink()
    assert main([*base, "--mtme-level", "sys", "--metrics", "BLEU-refA", "--human", "mqm"]) == 2
    assert NO_SYSTEM_METRICS.split(":")[0] in capsys.readouterr().err
    assert read_mtme(replica.test_set, lp="en-de", level="sys").notes[0] == NO_SYSTEM_METRICS


def test_judged_pool_is_the_human_measures_cells(replica):
    ds = read_mtme(replica.test_set, lp="en-de")
    z, x = ds.matrix("mqm"), ds.matrix("BLEU-refA")
    both = ~np.isnan(x).all(axis=1) & ~np.isnan(z).all(axis=1)
    means = np.nanmean(np.where(np.isnan(z), np.nan, x)[both], axis=1)
    from scipy import stats

    expected = stats.pearsonr(means, np.nanmean(z[both], axis=1))[0]
    assert correlate(ds, "BLEU-refA", "mqm", coefficient="pearson", pool="judged").estimate == pytest.approx(expected)


def test_an_average_over_human_measures_rating_different_systems(replica):
    from metaeval_core.analyses.average import Task, average_over_tasks

    ds = read_mtme(replica.test_set, lp="en-de")
    tasks = [Task("wmt", "mqm", pool="judged"), Task("wmt", "wmt-raw", pool="judged")]  # 4 vs 3 rated systems
    result = average_over_tasks({"wmt": ds}, tasks, ["BLEU-refA", "Prism-src"], n_resamples=50, rng=0)
    assert result.draw_groups == (0, 1)  # different systems: separate draws
    assert np.isfinite(result.values).all()


def test_outlier_systems_of_the_meta_info_are_left_out():
    c = mtme_conventions("wmt22", "en-de", references=["refA", "refB"], systems=["a", "M2M100_1.2B-B4", "refB"],
                         humans=["mqm"], metrics={})
    assert c.outliers == ("M2M100_1.2B-B4",) and c.systems() == "-refA,-refB,-M2M100_1.2B-B4"
    assert "outlier systems left out (M2M100_1.2B-B4)" in c.caption()
    assert mtme_conventions("wmt22", "zh-en", references=["refA"], systems=["M2M100_1.2B-B4"], humans=["mqm"],
                            metrics={}).outliers == ()
