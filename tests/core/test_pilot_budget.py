"""Pilot-priced cost decisions (docs/methods.md sec. 16.5): ``metaeval chance`` and ``metaeval correlate --ci``
time the real kernel on a few resamples of one metric and extrapolate; a fake clock stands in for the timer."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from metaeval_core.cli.main import main
from metaeval_core.stats import budget
from metaeval_core.stats.budget import pilot_decision

METRICS = "metric.strong,metric.good,metric.weak,metric.noise"


def fake_clock(step: float):
    """A clock that advances ``step`` seconds at every reading after the first pair of readings."""
    calls = []

    def clock() -> float:
        calls.append(None)
        return step * (len(calls) - 1)

    return clock


def durations(*seconds: float):
    """A clock under which the successive timed pilots take ``seconds`` (two readings per pilot)."""
    readings, now = [], 0.0
    for d in seconds:
        readings += [now, now + d]
        now += d
    calls = iter(readings)
    return lambda: next(calls)


def test_two_pilots_separate_the_fixed_cost_from_the_cost_per_resample():
    seen = []
    # Pilots of 8 and 16 resamples take 1.0 and 1.8 s: 0.1 s per resample, 0.2 s fixed, per metric.
    decision = pilot_decision(seen.append, what="x", n_resamples=1000, n_metrics=4, budget_seconds=600,
                              pilot_resamples=8, clock=durations(1.0, 1.8))
    assert seen == [8, 16]
    assert decision.action == "run" and decision.estimated_seconds == pytest.approx(4 * (0.2 + 100.0))
    assert "pilots of 8 and 16 resamples on one metric" in decision.sentence


def test_a_fixed_cost_is_not_multiplied_by_the_resamples():
    # One pilot's 40 resamples in 4 s would price 1,000 at 100 s; most of it is a fixed 3.9 s.
    decision = pilot_decision(lambda k: None, what="x", n_resamples=1000, n_metrics=1, budget_seconds=600,
                              pilot_resamples=40, clock=durations(4.0, 4.1))
    assert decision.estimated_seconds == pytest.approx(3.9 + 1000 * 0.1 / 40)


def test_over_budget_offers_fewer_resamples_and_fewer_metrics():
    decision = pilot_decision(lambda k: None, what="x", n_resamples=1000, n_metrics=4, budget_seconds=150,
                              pilot_resamples=8, clock=durations(1.0, 1.8))
    assert decision.action == "refuse"  # no early stopping for an interval
    assert [(o.setting, o.value) for o in decision.lighter] == [("n_resamples", 200), ("n_metrics", 1)]
    assert decision.lighter[0].estimated_seconds == pytest.approx(4 * (0.2 + 20.0))


def test_the_pilot_never_runs_more_resamples_than_asked():
    seen = []
    pilot_decision(seen.append, what="x", n_resamples=3, n_metrics=1, budget_seconds=1, clock=fake_clock(0.0))
    assert seen == [3]


def test_a_pilot_on_all_metrics_scales_in_resamples_only():
    decision = pilot_decision(lambda k: None, what="x", n_resamples=1000, n_metrics=20, budget_seconds=30,
                              pilot_resamples=8, pilot_on="all metrics", clock=durations(1.0, 1.8))
    assert decision.estimated_seconds == pytest.approx(0.2 + 100.0)
    assert ("n_metrics", 5) in [(o.setting, o.value) for o in decision.lighter]  # a quarter of the metrics: ~25 s
    assert "on all metrics" in decision.sentence


def test_a_bad_pilot_size_names_the_parameter():
    with pytest.raises(ValueError, match="pilot_resamples must be a positive whole number"):
        pilot_decision(lambda k: None, what="x", n_resamples=10, n_metrics=1, budget_seconds=1, pilot_resamples=0)


@pytest.mark.parametrize("command", [
    ["chance", "--level", "system"],
    ["correlate", "--level", "system", "--ci", "boot-systems"],
])
def test_cli_refusal_names_the_cost_and_the_lighter_setting(capsys, monkeypatch, command):
    # The pilots' 40 and 80 resamples take 4 and 8 s on the fake timer (only the budget module's): 0.1 s each.
    monkeypatch.setattr(budget, "time", SimpleNamespace(perf_counter=durations(4.0, 8.0)))
    code = main([*command, "--dataset", "demo", "--human", "human.quality", "--metrics", METRICS,
                 "--n-resamples", "1000", "--budget", "60", "--json"])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert "4 metric(s) with 1,000" in err and "--budget 0 runs it anyway" in err
    if command[0] == "chance":  # the pilots run all four metrics: 0.1 s a permutation
        assert "pilots of 40 and 80 resamples on all metrics" in err and "about 2 min here (--budget 60 s)" in err
        assert "lighter: n_resamples=500 (about 50 s)" in err
    else:  # one metric: 0.1 s a resample and metric
        assert "pilots of 40 and 80 resamples on one metric" in err and "about 7 min here (--budget 60 s)" in err
        assert "lighter: n_resamples=100 (about 40 s)" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("command", [
    ["chance", "--level", "system"],
    ["correlate", "--level", "system", "--ci", "boot-systems"],
])
def test_results_are_identical_with_and_without_the_pilot(capsys, command):
    argv = [*command, "--dataset", "demo", "--human", "human.quality", "--metrics", METRICS, "--n-resamples", "200",
            "--json"]
    assert main([*argv, "--budget", "600"]) == 0
    with_pilot = json.loads(capsys.readouterr().out)
    assert main([*argv, "--budget", "0"]) == 0
    assert json.loads(capsys.readouterr().out) == with_pilot


def _count_pilots(monkeypatch, option: str) -> list:
    """The ``option`` of every pilot decision the CLI asks for (the decisions themselves unchanged)."""
    calls = []
    original = budget.pilot_decision

    def counted(*args, **kwargs):
        calls.append(kwargs[option])
        return original(*args, **kwargs)

    monkeypatch.setattr(budget, "pilot_decision", counted)
    return calls


@pytest.mark.parametrize("extra,level,priced", [
    ([], "system", False),  # no --budget: the system and input levels take seconds, no pilot
    ([], "input", False),
    ([], "global", True),
    (["--budget", "600"], "system", True),  # an explicit budget is always priced
    (["--budget", "0"], "global", False),
])
def test_pilots_run_at_the_global_level_or_with_an_explicit_budget(capsys, monkeypatch, extra, level, priced):
    calls = _count_pilots(monkeypatch, "budget_seconds")
    assert main(["chance", "--level", level, "--dataset", "demo", "--human", "human.quality", "--metrics", METRICS,
                 "--n-resamples", "100", "--json", *extra]) == 0
    capsys.readouterr()
    assert calls == ([600.0] if priced else [])


@pytest.mark.realdata
def test_a_wmt_suite_with_resamples_is_priced_by_pilots_and_refused_with_what_fits(data_dir, capsys, monkeypatch):
    # Issue 33: `average --tasks wmt23 --suite-resamples K` ran ~0.4-1 s per resample unpriced. Pilots of 4 and 8
    # resamples of the real suite (here 2 s and 3 s on the fake timer: 1 s fixed, 0.25 s a resample).
    calls = _count_pilots(monkeypatch, "pilot_resamples")
    monkeypatch.setattr(budget, "time", SimpleNamespace(perf_counter=durations(2.0, 3.0)))
    argv = ["average", "--dataset", "wmt23", "--tasks", "wmt23", "--lps", "en-de", "--data-dir", str(data_dir),
            "--json"]
    code = main([*argv, "--suite-resamples", "1000", "--budget", "60"])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and calls == [4]
    said = " ".join(err.split())
    assert "WMT23 official ranking" in said and "with 1,000 resamples (intervals and clusters)" in said
    assert "pilots of 4 and 8 resamples on all metrics" in said and "about 4 min here (--budget 60 s)" in said
    assert "lighter: n_resamples=200 (about 51 s)" in said and "--budget 0 runs it anyway" in said
    # Without --budget, a few resamples are not priced (the pilots would cost a large share of the run).
    calls.clear()
    assert main([*argv, "--suite-resamples", "8"]) == 0 and calls == []
    capsys.readouterr()


@pytest.mark.realdata
def test_a_judges_view_is_priced_by_pilots_of_the_view_and_keeps_its_results(data_dir, capsys, monkeypatch):
    # Issue 33: `metaeval judges` views resample unpriced by pilots. Pilots of the view itself, 2% and 4% of the run
    # (here 1 s and 1.5 s on the fake timer: 0.5 s fixed, 0.005 s a resample).
    calls = _count_pilots(monkeypatch, "pilot_resamples")
    argv = ["judges", "--dataset", "llmbar", "--data-dir", str(data_dir), "--view", "leaderboard", "--json"]
    monkeypatch.setattr(budget, "time", SimpleNamespace(perf_counter=durations(1.0, 1.5)))
    code = main([*argv, "--n-resamples", "5000", "--budget", "20"])
    out, err = capsys.readouterr()
    said = " ".join(err.split())
    assert code == 2 and out == "" and calls == [100]
    assert ("--view leaderboard with 5,000 resamples (estimated from pilots of 100 and 200 resamples on the whole "
            "analysis) would take about 26 s here (--budget 20 s): lighter: n_resamples=2,000 (about 10 s)") in said
    # The default 1,000 resamples are not priced without --budget; an explicit budget prices them, and the pilots'
    # draws leave the results unchanged.
    calls.clear()
    monkeypatch.undo()
    calls = _count_pilots(monkeypatch, "pilot_resamples")
    assert main([*argv, "--n-resamples", "200"]) == 0 and calls == []
    plain = json.loads(capsys.readouterr().out)
    assert main([*argv, "--n-resamples", "200", "--budget", "600"]) == 0 and calls == [40]
    assert json.loads(capsys.readouterr().out) == plain
