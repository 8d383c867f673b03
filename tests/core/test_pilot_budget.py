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


def test_the_pilot_extrapolates_linearly_in_resamples_and_metrics():
    seen = []
    # One clock step of 0.8 s around a pilot of 8 resamples: 0.1 s per resample and metric.
    decision = pilot_decision(seen.append, what="x", n_resamples=1000, n_metrics=4, budget_seconds=600,
                              pilot_resamples=8, clock=fake_clock(0.8))
    assert seen == [8]
    assert decision.action == "run" and decision.estimated_seconds == pytest.approx(400.0)
    assert "8-resample pilot on one metric" in decision.sentence


def test_over_budget_offers_fewer_resamples_and_fewer_metrics():
    decision = pilot_decision(lambda k: None, what="x", n_resamples=1000, n_metrics=4, budget_seconds=150,
                              pilot_resamples=8, clock=fake_clock(0.8))
    assert decision.action == "refuse"  # no early stopping for an interval
    assert [(o.setting, o.value) for o in decision.lighter] == [("n_resamples", 200), ("n_metrics", 1)]
    assert decision.lighter[0].estimated_seconds == pytest.approx(80.0)


def test_the_pilot_never_runs_more_resamples_than_asked():
    seen = []
    pilot_decision(seen.append, what="x", n_resamples=3, n_metrics=1, budget_seconds=1, clock=fake_clock(0.0))
    assert seen == [3]


def test_a_bad_pilot_size_names_the_parameter():
    with pytest.raises(ValueError, match="pilot_resamples must be a positive whole number"):
        pilot_decision(lambda k: None, what="x", n_resamples=10, n_metrics=1, budget_seconds=1, pilot_resamples=0)


@pytest.mark.parametrize("command", [
    ["chance", "--level", "system"],
    ["correlate", "--level", "system", "--ci", "boot-systems"],
])
def test_cli_refusal_names_the_cost_and_the_lighter_setting(capsys, monkeypatch, command):
    # The pilot's 40 resamples take 4 s on the fake timer (only the budget module's).
    monkeypatch.setattr(budget, "time", SimpleNamespace(perf_counter=fake_clock(4.0)))
    code = main([*command, "--dataset", "demo", "--human", "human.quality", "--metrics", METRICS,
                 "--n-resamples", "1000", "--budget", "60", "--json"])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert "4 metric(s) with 1,000" in err and "40-resample pilot on one metric" in err
    assert "would take about 7 min here (--budget 60 s)" in err
    assert "lighter: n_resamples=100 (about 40 s)" in err and "--budget 0 runs it anyway" in err
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
