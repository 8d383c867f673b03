"""The suites' reading of an mt-metrics-eval test set (gold and primary metrics only) holds the same systems,
segments, conventions and matrices as the full reading, and the WMT23 suites give the same numbers from it."""

from __future__ import annotations

import numpy as np
import pytest

from metaeval_core.data.dataset import DatasetError
from metaeval_core.data.mtme import read_mtme
from metaeval_core.data.registry import load_dataset
from tests.mtme_replica import write_replica


def _same_view(light, full, wanted):
    assert light.systems == full.systems and light.inputs == full.inputs
    assert light.conventions == full.conventions and light.default_systems == full.default_systems
    assert light.system_attributes == full.system_attributes and light.input_attributes == full.input_attributes
    assert set(light.measures) == wanted & set(full.measures)
    for name in light.measures:
        a, b = light.measure(name), full.measure(name)
        assert a.kind == b.kind and a.attributes == b.attributes
        # every input's scores (a Dataset's matrix() keeps the inputs some human measure judged: fewer measures
        # here, so fewer such inputs; the suites keep the gold's judged cells of either)
        np.testing.assert_array_equal(a.scores, b.scores)


@pytest.mark.parametrize("level", ["seg", "sys"])
def test_replica_reads_the_gold_and_the_eligible_metrics_only(tmp_path, level):
    replica = write_replica(tmp_path)
    full = read_mtme(replica.test_set, lp="en-de", level=level)
    light = read_mtme(replica.test_set, lp="en-de", level=level, measures="gold-and-primary")
    # wmt99 is not in mt-metrics-eval's meta-info: no primary metrics, so the eligible ones (refA or no reference)
    conventions = full.conventions
    assert conventions.primary_metrics == () and conventions.gold == "mqm"
    wanted = {"mqm", *conventions.eligible_metrics}
    assert "COMET-22-refB" not in wanted and "wmt-raw" not in wanted
    _same_view(light, full, wanted)
    assert set(light.measures) < set(full.measures)
    assert any("gold and the primary metrics only" in note for note in light.notes)


def test_the_reading_is_named_and_checked(tmp_path):
    replica = write_replica(tmp_path)
    with pytest.raises(ValueError, match="measures must be one of"):
        read_mtme(replica.test_set, lp="en-de", measures="primary")
    with pytest.raises(DatasetError, match="mtme_measures must be one of"):
        load_dataset("wmt23", lp="en-de", mtme_measures="some")
    with pytest.raises(DatasetError, match="applies only to those"):
        load_dataset("summeval", mtme_measures="gold-and-primary")
    light = load_dataset(str(replica.test_set), lp="en-de", mtme_measures="gold-and-primary")
    assert "wmt-raw" not in light.measures and "mqm" in light.measures


@pytest.mark.realdata
def test_wmt23_suite_views_equal_the_full_reading(data_dir):
    from metaeval_core.analyses.suites import _pair, load_suite_data, run_suite

    light = load_suite_data("wmt23", data_dir=data_dir)
    full = {}
    for lp, pair in light.items():
        seg = load_dataset("wmt23", lp=lp, data_dir=data_dir)
        sys = load_dataset("wmt23", lp=lp, data_dir=data_dir, mtme_level="sys")
        wanted = {seg.conventions.gold, *seg.conventions.primary_metrics}
        _same_view(pair.seg, seg, wanted)
        _same_view(pair.sys, sys, {sys.conventions.gold, *sys.conventions.primary_metrics})
        assert pair.seg.version != seg.version and "mqm.sxs" not in pair.seg.measures
        full[lp] = _pair(lp, seg, sys)
        assert full[lp].metrics == pair.metrics
    runs = [dict(suite="wmt23"), dict(suite="wmt24"),
            dict(suite="wmt23", n_resamples=4, method="boot-both", rng=2),
            dict(suite="wmt23", n_resamples=4, method="boot-both", rng=2, test="paired-bootstrap")]
    for options in runs:
        a, b = run_suite(light, **options), run_suite(full, **options)
        assert a.metrics == b.metrics and a.metric_ids == b.metric_ids and a.left_out == b.left_out
        for name in ("values", "average", "low", "high"):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
        if a.table is not None:
            np.testing.assert_array_equal(a.table.pvalue, b.table.pvalue)
            np.testing.assert_array_equal(a.clusters.rank, b.clusters.rank)
