"""One cost decision per analysis (metaeval_core.stats.budget, docs/methods.md sec. 16.5)."""

import itertools

import pytest

from metaeval_core.stats import budget
from metaeval_core.stats.significance import compare_all_pairs, sequential_stopping_applies


def linear(k, m):  # one second per 1,000 resamples and metric pair
    m = 10 if m is None else m
    return k / 1000 * m * (m - 1) / 2


def test_within_the_budget_it_runs_as_asked():
    decision = budget.decide(linear, what="x", budget_seconds=60, n_resamples=1000, n_metrics=10)
    assert decision.action == "run" and decision.stopping == "none" and decision.lighter == ()
    assert decision.estimated_seconds == 45
    decision.check()


def test_over_the_budget_it_refuses_naming_the_cost_and_what_fits():
    decision = budget.decide(linear, what="PERM-BOTH on 190 pairs", budget_seconds=60, n_resamples=1000,
                             n_metrics=20, min_metrics=2, advice="the system level", where="the page stops at 60 s")
    assert decision.action == "refuse"
    # 190 s at 1,000 resamples: 200 resamples fit (38 s), 500 do not (95 s); 11 metrics fit (55 s), 12 do not (66 s).
    assert [(o.setting, o.value) for o in decision.lighter] == [("n_resamples", 200), ("n_metrics", 11)]
    with pytest.raises(budget.BudgetError) as error:
        decision.check()
    text = str(error.value)
    assert text.startswith("PERM-BOTH on 190 pairs would take about 3 min here (the page stops at 60 s)")
    assert "lighter: n_resamples=200 (about 38 s) or 11 metrics (about 55 s); or the system level" in text


def test_early_stopping_within_four_budgets_where_the_test_allows_it():
    decision = budget.decide(linear, what="x", budget_seconds=60, n_resamples=1000, n_metrics=20, early_stop=True)
    assert decision.action == "early-stop" and decision.stopping == "besag-clifford"
    assert "sequential stopping" in decision.sentence and "sec. 16.2" in decision.sentence
    far = budget.decide(linear, what="x", budget_seconds=60, n_resamples=1000, n_metrics=40, early_stop=True)
    assert far.action == "refuse"  # 780 s > 4 x 60 s


def test_nothing_lighter_fits_then_only_the_advice():
    decision = budget.decide(lambda k, m: 1e6, what="x", budget_seconds=60, n_resamples=1000, n_metrics=3,
                             min_metrics=2, advice="the system level")
    assert decision.lighter == () and decision.sentence.endswith(": use the system level")


@pytest.mark.parametrize("bad", [dict(budget_seconds=0), dict(n_resamples=-1), dict(n_metrics=0)])
def test_bad_arguments_are_named(bad):
    options = dict(what="x", budget_seconds=60, n_resamples=100, n_metrics=2) | bad
    with pytest.raises(ValueError, match=next(iter(bad))):
        budget.decide(linear, **options)


def test_a_table_names_the_systems_it_uses():
    # Issue 33: WMT22 zh-en's global-level table ran past its 60 s and named 18 systems where it used 14.
    decision = budget.table_decision(14, 1875, 21, level="global", coefficient="kendall", method="perm-both",
                                     n_resamples=1000, budget_seconds=60, where="the page stops at 60 s")
    assert decision.what == "PERM-BOTH on 210 pairs of 14 systems x 1,875 inputs with 1,000 resamples"
    assert decision.action in ("early-stop", "refuse")
    small = budget.table_decision(14, 1875, 3, level="input", coefficient="kendall", method="perm-both",
                                  n_resamples=1000, budget_seconds=60)
    assert small.action == "run"


def test_the_deadline_stops_a_run_past_its_budget():
    now = [0.0]
    seen = []
    decision = budget.table_decision(14, 1875, 5, level="global", coefficient="kendall", method="perm-both",
                                     n_resamples=1000, budget_seconds=60, where="the page stops at 60 s")
    report = budget.deadline(decision, seen.append, clock=lambda: now[0])
    report(0.0)
    now[0] = 30.0
    report(0.5)
    now[0] = 61.0
    report(1.0)  # a finished run is never thrown away
    with pytest.raises(budget.BudgetError, match=r"stopped after 61 s at 50% of PERM-BOTH on 10 pairs of 14 systems"):
        report(0.5)
    assert seen == [0.0, 0.5, 1.0]


CASES = list(itertools.product(("system", "input", "global"), ("kendall", "pearson"),
                               ("perm-both", "perm-inputs", "boot-both")))


@pytest.mark.parametrize("level,coefficient,method", CASES)
def test_sequential_stopping_applies_exactly_where_the_table_uses_it(demo, level, coefficient, method):
    table = compare_all_pairs(demo, ["metric.strong", "metric.noise", "metric.weak"], "human.quality", level=level,
                              coefficient=coefficient, method=method, n_resamples=60, rng=0,
                              stopping="besag-clifford")
    assert (table.stopping == "besag-clifford") == sequential_stopping_applies(level, coefficient, method)


def test_an_unpriced_analysis_runs_under_the_deadline():
    now = [0.0]
    decision = budget.unpriced("21 BOOT-BOTH intervals", budget_seconds=60, advice="fewer metrics",
                               where="the page stops at 60 s")
    assert decision.action == "run" and decision.sentence == "21 BOOT-BOTH intervals: not estimated (the page stops at 60 s)."
    report = budget.deadline(decision, started=-50.0, clock=lambda: now[0])  # 50 s already spent by the page
    report(0.1)
    now[0] = 11.0
    with pytest.raises(budget.BudgetError) as error:
        report(0.5)
    assert str(error.value) == ("stopped after 61 s at 50% of 21 BOOT-BOTH intervals (the page stops at 60 s): "
                                "use fewer metrics")
