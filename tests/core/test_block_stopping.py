"""mt-metrics-eval's blocks-of-draws early stopping (``stopping='blocks'``, docs/methods.md sec. 16.2) against a slow
loop over the full run's draws, for any batch size, calibrated under H0, and chosen by the cost decision (sec. 16.5)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from metaeval_core.cli.main import main
from metaeval_core.data.synthetic import synthetic_dataset
from metaeval_core.stats import budget
from metaeval_core.stats.significance import (
    block_early_min, blocks_settled_draws, compare_all_pairs, estimated_table_seconds,
)
from metaeval_core.stats.significance.permutation import BLOCK_EARLY_MAX, BLOCK_SIZE

from . import oracles


def _oracle_blocks(values, threshold, early_min, early_max=BLOCK_EARLY_MAX, block=BLOCK_SIZE):
    """mt-metrics-eval's PermutationSigDiff loop, one draw at a time, with metaeval's (1 + g) / (1 + l)."""
    k = len(values)
    hits = used = 0
    for i, value in enumerate(values, start=1):
        if not np.isnan(value):
            used += 1
            hits += value >= threshold - 1e-12
        if i % block == 0 and i < k and used:
            p = (1 + hits) / (1 + used)
            if p < early_min or p > early_max:
                return p, used
    return (1 + hits) / (1 + used), used


def _data(seed=12, n=6, m=12):
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, m))
    data = {"h": z, **{f"m{i}": z + rng.normal(0, 0.2 + 0.8 * i, z.shape) for i in range(4)}}
    data["m3"][0, 0] = np.nan  # a missing cell: some resamples undefined for no pair, the counts over defined ones
    return data, [f"m{i}" for i in range(4)]


@pytest.mark.parametrize("alternative", ["greater", "two-sided"])
@pytest.mark.parametrize("correction", ["none", "bonferroni"])
def test_blocks_equal_the_rule_applied_by_hand_to_the_full_runs_draws(alternative, correction):
    data, names = _data()
    kwargs = dict(level="global", coefficient="kendall", method="perm-both", alternative=alternative,
                  n_resamples=499, rng=5, correction=correction)
    full = compare_all_pairs(data, names, "h", **kwargs)
    blocks = compare_all_pairs(data, names, "h", stopping="blocks", **kwargs)
    assert blocks.stopping == "blocks" and full.stopping == "none"
    early_min = block_early_min(0.05, correction, "row", len(names))
    assert early_min == (0.02 if correction == "none" else 0.05 / 3)
    stopped = 0
    for i, j, values, threshold in oracles.table_cell_nulls(data, names, full, alternative=alternative,
                                                           n_resamples=499, rng=5):
        p, used = _oracle_blocks(values, threshold, early_min)
        assert blocks.pvalue[i, j] == pytest.approx(p, abs=1e-15) and blocks.n_defined[i, j] == used
        if used == full.n_defined[i, j]:
            assert blocks.pvalue[i, j] == full.pvalue[i, j]
        stopped += used < full.n_defined[i, j]
    assert stopped > 0


def test_blocks_do_not_depend_on_the_batch_size():
    data, names = _data(3)
    kwargs = dict(level="global", coefficient="kendall", method="perm-both", n_resamples=350, rng=9,
                  correction="none", stopping="blocks")
    runs = [compare_all_pairs(data, names, "h", batch=batch, **kwargs) for batch in (1, 37, 100, None)]
    for other in runs[1:]:
        np.testing.assert_array_equal(runs[0].pvalue, other.pvalue)
        np.testing.assert_array_equal(runs[0].n_defined, other.n_defined)


@pytest.mark.slow
def test_blocks_pvalues_are_not_anti_conservative_under_h0():
    # Two exchangeable metrics (the same noise level around the human scores): H0 of PERM-BOTH holds.
    rng = np.random.default_rng(2026)
    rejections = trials = 0
    for _ in range(300):
        z = rng.normal(size=(4, 6))
        data = {"h": z, "x": z + rng.normal(size=z.shape), "y": z + rng.normal(size=z.shape)}
        table = compare_all_pairs(data, ["x", "y"], "h", level="global", coefficient="kendall", method="perm-both",
                                  n_resamples=299, rng=int(rng.integers(2**31)), correction="none",
                                  stopping="blocks")
        rejections += int(table.pvalue[0, 1] < 0.05)
        trials += 1
    # Binomial(300, 0.05): mean 15, sd 3.8; anti-conservative p-values would reject well above 0.05.
    assert rejections / trials <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / trials)


def test_the_first_block_that_can_stop_a_significant_pair():
    assert blocks_settled_draws(1000, 0.02) == 100
    assert blocks_settled_draws(1000, 0.05 / 20) == 400  # 1 / 401 < 0.0025
    assert blocks_settled_draws(300, 0.001) == 300  # never within the run: the full run's cost


def test_the_budget_picks_blocks_when_besag_clifford_does_not_fit():
    options = dict(level="global", coefficient="kendall", method="perm-both", n_resamples=1000)
    full = estimated_table_seconds(14, 1875, 21, **options)
    budget_seconds = full / 6  # beyond Besag-Clifford's expected 0.9 of the run
    decision = budget.table_decision(14, 1875, 21, budget_seconds=budget_seconds, blocks=True, correction="none",
                                     **options)
    assert decision.action == "early-stop" and decision.stopping == "blocks"
    assert "mt-metrics-eval's early stopping" in decision.sentence and "sec. 16.2" in decision.sentence
    # Bonferroni over rows of 20: a significant pair stops after 400 draws at the earliest, 0.4 of the run.
    assert budget.table_decision(14, 1875, 21, budget_seconds=budget_seconds, blocks=True,
                                 **options).action == "refuse"
    # Not offered unless asked (the pages keep Besag-Clifford or a refusal).
    assert budget.table_decision(14, 1875, 21, budget_seconds=budget_seconds, **options).action == "refuse"
    # Issue 33: at the global level Besag-Clifford saves little (most pairs are significant and run to k), so it is
    # no longer taken within 4 budgets: blocks, whose expected cost (0.4 of the run) fits half of it.
    assert budget.table_decision(14, 1875, 21, budget_seconds=full / 2, blocks=True, **options).stopping == "blocks"
    within_its_share = budget.table_decision(14, 1875, 21, budget_seconds=full * 0.95, blocks=True, **options)
    assert within_its_share.stopping == "besag-clifford"


BASE = ["compare", "--dataset", "demo", "--human", "human.quality", "--metrics",
        "metric.strong,metric.good,metric.weak,metric.noise", "--level", "global", "--correction", "none", "--json"]


def test_cli_runs_blocks_when_asked_or_when_only_blocks_fit(capsys):
    assert main([*BASE, "--n-resamples", "500", "--stopping", "blocks"]) == 0
    records = json.loads(capsys.readouterr().out)
    assert {r["stopping"] for r in records} == {"blocks"} and min(r["n_defined"] for r in records) < 500
    n_systems, n_inputs = synthetic_dataset().matrix("human.quality").shape
    full = estimated_table_seconds(n_systems, n_inputs, 4, level="global", coefficient="kendall",
                                   method="perm-both", n_resamples=500)
    assert main([*BASE, "--n-resamples", "500", "--budget", repr(full / 4.5)]) == 0
    out, err = capsys.readouterr()
    assert "mt-metrics-eval's early stopping" in err
    assert json.loads(out) == records
