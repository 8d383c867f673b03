"""``metaeval compare`` decides before it starts (docs/methods.md sec. 16.5): run, run with sequential stopping, or
refuse with the estimated cost and lighter settings."""

from __future__ import annotations

import json

from metaeval_core.cli.main import main
from metaeval_core.data.synthetic import synthetic_dataset
from metaeval_core.stats.significance import estimated_table_seconds

BASE = ["compare", "--dataset", "demo", "--human", "human.quality", "--metrics",
        "metric.strong,metric.good,metric.weak,metric.noise", "--n-resamples", "200", "--json"]


def run(capsys, *argv):
    code = main([*BASE, *argv])
    out, err = capsys.readouterr()
    return code, out, err


def _global_seconds() -> float:
    from metaeval_core.stats.budget import human_distinct_values

    z = synthetic_dataset().matrix("human.quality")  # the judged inputs; the CLI prices the human's distinct values
    return estimated_table_seconds(*z.shape, 4, level="global", coefficient="kendall", method="perm-both",
                                   n_resamples=200, human_distinct=human_distinct_values(z))


def test_over_budget_is_refused_with_the_cost_and_what_fits(capsys):
    code, out, err = run(capsys, "--level", "system", "--budget", "1e-9")
    assert code == 2 and out == ""
    ds = synthetic_dataset()
    assert f"on 6 pairs of {ds.n_systems} systems x" in err and "would take under 1 s here" in err
    assert "(--budget 1e-09 s)" in err and "--budget 0 runs it anyway" in err and "Traceback" not in err


def test_no_budget_runs_it(capsys):
    code, out, err = run(capsys, "--level", "system", "--budget", "0")
    assert code == 0, err
    assert len(json.loads(out)) == 12


def test_just_over_the_budget_a_permutation_table_stops_pairs_early_and_says_so(capsys):
    budget = _global_seconds() * 0.95  # Besag-Clifford's expected cost (0.9 of the full run) fits
    code, out, err = run(capsys, "--level", "global", "--budget", repr(budget))
    assert code == 0, err
    assert "sequential stopping (Besag-Clifford" in err
    records = json.loads(out)
    full = json.loads(run(capsys, "--level", "global", "--budget", "0")[1])
    # The same decisions at alpha as the full run (sec. 16.2).
    assert [r["significant"] for r in records] == [r["significant"] for r in full]
    assert {r["stopping"] for r in records} == {"besag-clifford"}


def test_far_over_the_budget_it_runs_blocks_when_their_expected_cost_fits_and_says_why(capsys):
    # 200 resamples, Bonferroni per row of 3 tests: a significant pair can stop after 100 draws (half the run).
    budget = _global_seconds() * 0.6
    code, out, err = run(capsys, "--level", "global", "--budget", repr(budget))
    assert code == 0, err
    said = " ".join(err.split())
    assert "mt-metrics-eval's early stopping (blocks of 100 draws" in said and "not Besag-Clifford" in said
    assert {r["stopping"] for r in json.loads(out)} == {"blocks"}


def test_a_table_that_cannot_be_significant_is_refused_with_what_can(capsys):
    code, out, err = run(capsys, "--level", "system", "--n-resamples", "50", "--family", "table")
    assert code == 2 and out == ""
    said = " ".join(err.split())
    assert ("no pair can be significant after Bonferroni over the table (12 tests): the smallest p-value of 50 "
            "resamples, 1/51, is not below alpha/12 = 0.0042; use n_resamples=240") in said
    assert "family=row" not in said  # 3 tests per row need 60 resamples
    assert "correction=bh" in said and "correction=none" in said and "--budget 0 runs it anyway" in said


def test_an_explicit_stopping_rule_wins(capsys):
    code, out, err = run(capsys, "--level", "global", "--budget", "1e-9", "--stopping", "none")
    assert code == 0, err and "sequential" not in err


def test_a_bad_budget_is_a_usage_error_naming_the_flag(capsys):
    import pytest

    with pytest.raises(SystemExit) as exit_:
        run(capsys, "--budget", "-5")
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and "argument --budget: must be 0 (no budget) or a positive number of seconds" in err


def test_a_long_table_within_the_budget_says_its_cost_before_it_runs(capsys, monkeypatch):
    from metaeval_core.cli import correlation_commands

    monkeypatch.setattr(correlation_commands, "SAY_COST_FROM_SECONDS", 0.0)  # the demo's table takes under 1 s
    code, out, err = run(capsys, "--level", "global", "--budget", "600")
    said = " ".join(err.split())
    assert code == 0 and "PERM-BOTH on 6 pairs of" in said and "(--budget 600 s)" in said
    assert {r["stopping"] for r in json.loads(out)} == {"none"}  # the full run, as it fits
