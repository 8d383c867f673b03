"""Systems from verdicts on many systems (generated): sparse per-pair sums, Davidson capped, priced (issue 28)."""

from __future__ import annotations

import time
import tracemalloc
import warnings

import numpy as np
import pytest

from metaeval_core.data.dataset import DatasetError
from metaeval_core.judges import close_pair_agreement, davidson_fit, ranking_agreement, system_ranking
from metaeval_core.judges.model import PairwiseData, Rater


def many_systems(n: int, s: int, *, seed: int = 0, judges: int = 1, self_pairs: int = 0) -> PairwiseData:
    """n items, each a random pair of s systems with Bradley-Terry outcomes; three humans and some judges."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, s, n)
    b = (a + rng.integers(1, s, n)) % s
    b[:self_pairs] = a[:self_pairs]
    strength = rng.normal(size=s)
    p_a = 1 / (1 + np.exp(-(strength[a] - strength[b])))
    columns = []
    for _ in range(3 + judges):
        v = np.where(rng.random(n) < p_a, 0, 1)
        columns.append(np.stack([np.where(rng.random(n) < 0.1, 2, v), np.full(n, -1)], axis=1))
    raters = tuple(Rater(f"h{h}", "human") for h in range(3)) + tuple(Rater(f"j{j}", "judge") for j in range(judges))
    return PairwiseData(id="many", items=tuple(f"i{k}" for k in range(n)), pair_sets=("all",),
                        pair_set=np.zeros(n, int), raters=raters, verdicts=np.stack(columns, axis=1),
                        system_a=tuple(f"s{k}" for k in a), system_b=tuple(f"s{k}" for k in b))


def test_two_thousand_systems_rank_in_bounded_memory_and_time():
    """items x systems^2 would be 89 GiB here; the observed pairs are at most the items."""
    data = many_systems(3_000, 2_000)
    tracemalloc.start()
    started = time.perf_counter()
    ranking = system_ranking(data, "j0", n_resamples=200, rng=0)
    close = close_pair_agreement(data, n_resamples=200, rng=0)
    elapsed = time.perf_counter() - started
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 300 * 2**20 and elapsed < 30
    assert len(ranking.systems) == len(data.systems) and close[0].n_pairs > 0


def test_ranking_agreement_over_budget_is_refused_with_its_cost_and_a_lighter_setting():
    data = many_systems(3_000, 2_000)
    with pytest.raises(ValueError, match=r"would take about [\d,]+ s here .*lighter: n_resamples=[\d,]+, Pearson"):
        ranking_agreement(data, n_resamples=1000, rng=0)
    pearson = ranking_agreement(data, coefficient="pearson", n_resamples=100, rng=0)[0]
    assert np.isfinite(pearson.estimate)


def test_sparse_sums_equal_the_dense_pair_table():
    """Win rates from the observed pairs equal a loop over items (and do not depend on the batch)."""
    data = many_systems(400, 30, seed=3)
    ranking = system_ranking(data, "j0", n_resamples=40, rng=1)
    v = data.verdicts[:, 3, 0]
    wins, games = {}, {}
    for k in range(data.n_items):
        for side, system in enumerate((data.system_a[k], data.system_b[k])):
            games[system] = games.get(system, 0) + 1
            wins[system] = wins.get(system, 0) + (0.5 if v[k] == 2 else float(v[k] == side))
    assert dict(zip(ranking.systems, ranking.score)) == pytest.approx({s: wins[s] / games[s] for s in games})
    again = system_ranking(data, "j0", n_resamples=40, rng=1, batch=3)
    np.testing.assert_array_equal(again.low, ranking.low)


def test_davidson_on_a_sparse_design_is_capped_and_silent():
    """Few comparisons per system: most resamples have no finite maximum; capped iterations, no warnings."""
    data = many_systems(300, 60, seed=4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        started = time.perf_counter()
        ranking = system_ranking(data, "j0", method="davidson", n_resamples=200, rng=0)
        assert time.perf_counter() - started < 20
    assert len(ranking.systems) == 60
    with pytest.raises(ValueError, match="the win rate instead of Davidson"):
        ranking_agreement(many_systems(3_000, 300), method="davidson", n_resamples=1000, rng=0)


def test_davidson_fit_checks_the_shape():
    with pytest.raises(ValueError, match=r"outcomes must have shape \(\.\.\., 3, 3\) for 3 systems"):
        davidson_fit(np.ones((4, 3)), 3)


def test_pairs_of_a_system_with_itself_are_refused_not_dropped():
    with pytest.raises(DatasetError, match="2 item\\(s\\) compare a system with itself"):
        system_ranking(many_systems(50, 5, self_pairs=2), n_resamples=40, rng=0)
