"""System rankings from verdicts: win rates, Davidson's Bradley-Terry with ties (scipy oracle), rank agreement."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import optimize, stats

from metaeval_core.judges import (
    A, B, TIE, close_pair_agreement, davidson_fit, majority_verdict, ranking_agreement, system_ranking,
)
from metaeval_core.judges.systems import _Pairs
from tests.core.judges.helpers import block_draws, loaded, random_data


def _davidson_scipy(outcomes, s):
    """Maximum likelihood by scipy.optimize on (log p_1..p_{S-1}, log nu), p_0 = 1; centred log-strengths."""
    first, second = np.triu_indices(s, 1)

    def nll(theta):
        logp = np.concatenate([[0.0], theta[:s - 1]])
        nu = np.exp(theta[-1])
        total = 0.0
        for k, (u, v) in enumerate(zip(first, second)):
            pu, pv = np.exp(logp[u]), np.exp(logp[v])
            d = pu + pv + nu * np.sqrt(pu * pv)
            wu, wv, t = outcomes[k]
            total -= wu * np.log(pu / d) + wv * np.log(pv / d) + t * np.log(nu * np.sqrt(pu * pv) / d)
        return total

    fit = optimize.minimize(nll, np.zeros(s), method="BFGS", options={"gtol": 1e-10, "maxiter": 10000})
    logp = np.concatenate([[0.0], fit.x[:s - 1]])
    return logp - logp.mean(), np.exp(fit.x[-1]), -fit.fun


def test_davidson_matches_scipy_optimize():
    rng = np.random.default_rng(3)
    for trial in range(5):
        s = int(rng.integers(3, 7))
        p = s * (s - 1) // 2
        outcomes = rng.integers(1, 30, size=(p, 3)).astype(float)
        fit = davidson_fit(outcomes, s)
        strength, nu, loglik = _davidson_scipy(outcomes, s)
        assert fit.converged
        np.testing.assert_allclose(fit.strength, strength, atol=1e-5)
        assert float(fit.nu) == pytest.approx(nu, rel=1e-5)
        assert float(fit.log_likelihood) == pytest.approx(loglik, rel=1e-8)
    # vectorised over a batch axis: each row as fitted alone
    batch = rng.integers(1, 20, size=(4, 6, 3)).astype(float)
    together = davidson_fit(batch, 4).strength
    for r in range(4):
        np.testing.assert_allclose(together[r], davidson_fit(batch[r], 4).strength, atol=1e-9)


def test_without_ties_davidson_is_bradley_terry():
    outcomes = np.array([[7, 3, 0], [5, 5, 0], [2, 8, 0]], dtype=float)  # 3 systems
    fit = davidson_fit(outcomes, 3)
    assert float(fit.nu) == 0.0
    first, second = np.triu_indices(3, 1)

    def nll(theta):
        logp = np.array([0.0, *theta])
        return -sum(w * (logp[u] - np.logaddexp(logp[u], logp[v])) + l * (logp[v] - np.logaddexp(logp[u], logp[v]))
                    for (w, l, _), u, v in zip(outcomes, first, second))

    x = optimize.minimize(nll, np.zeros(2), method="BFGS", options={"gtol": 1e-10}).x
    logp = np.array([0.0, *x])
    np.testing.assert_allclose(fit.strength, logp - logp.mean(), atol=1e-5)


def _win_rates_loop(data, verdicts, items=None):
    wins, games = {}, {}
    for k in (range(data.n_items) if items is None else items):
        a, b, v = data.system_a[k], data.system_b[k], verdicts[k]
        if v not in (A, B, TIE) or a == b:
            continue
        for s in (a, b):
            games[s] = games.get(s, 0) + 1
        wins[a] = wins.get(a, 0) + (1 if v == A else 0.5 if v == TIE else 0)
        wins[b] = wins.get(b, 0) + (1 if v == B else 0.5 if v == TIE else 0)
    return {s: wins.get(s, 0) / games[s] for s in games}


def test_win_rates_and_ranking_agreement_match_loops():
    data = random_data(31, n=200)
    ref = majority_verdict(data.verdicts[:, :3, 0])
    human = system_ranking(data, n_resamples=50, rng=0)
    expected = _win_rates_loop(data, ref)
    assert dict(zip(human.systems, human.score)) == pytest.approx(expected)
    assert list(human.score) == sorted(human.score, reverse=True)
    judge = system_ranking(data, "j2", n_resamples=50, rng=0)
    assert dict(zip(judge.systems, judge.score)) == pytest.approx(_win_rates_loop(data, data.verdicts[:, 4, 0]))
    rows = ranking_agreement(data, n_resamples=60, rng=4, judges=["j2"])
    systems = sorted(expected)
    tau = stats.kendalltau([judge.score[list(judge.systems).index(s)] for s in systems],
                           [expected[s] for s in systems]).statistic
    assert rows[0].estimate == pytest.approx(tau)
    pearson = ranking_agreement(data, n_resamples=60, rng=4, judges=["j2"], coefficient="pearson")[0]
    r = stats.pearsonr([judge.score[list(judge.systems).index(s)] for s in systems], [expected[s] for s in systems])
    assert pearson.estimate == pytest.approx(r.statistic)
    # the bootstrap: the same resampled items for both rankings
    idx = block_draws("items", 4, 60, data.n_items)
    loop = []
    for rows_ in idx:
        h = _win_rates_loop(data, ref, rows_)
        j = _win_rates_loop(data, data.verdicts[:, 4, 0], rows_)
        common = sorted(set(h) & set(j))
        loop.append(stats.kendalltau([j[s] for s in common], [h[s] for s in common]).statistic)
    low, high = np.percentile(loop, [2.5, 97.5])
    assert (rows[0].low, rows[0].high) == pytest.approx((low, high))
    again = ranking_agreement(data, n_resamples=60, rng=4, judges=["j2"], batch=7)
    assert (again[0].low, again[0].high) == (rows[0].low, rows[0].high)


def test_close_pairs_match_a_loop():
    data = random_data(32, n=300)
    ref = majority_verdict(data.verdicts[:, :3, 0])
    result = close_pair_agreement(data, delta=0.2, n_resamples=50, rng=0, judges=["j3"])[0]
    pairs = {}
    for k in range(data.n_items):
        u, v = sorted((data.system_a[k], data.system_b[k]))
        flip = data.system_a[k] != u
        for who, verdict in (("ref", ref[k]), ("judge", data.verdicts[k, 5, 0])):
            if verdict not in (A, B, TIE):
                continue
            win = 0.5 if verdict == TIE else float((verdict == A) != flip)
            d = pairs.setdefault((u, v), {"ref": [], "judge": []})
            d[who].append(win)
    close = agree = 0
    for (u, v), d in pairs.items():
        h, j = np.mean(d["ref"]), np.mean(d["judge"])
        if h != 0.5 and abs(h - 0.5) <= 0.2:
            close += 1
            agree += np.sign(j - 0.5) == np.sign(h - 0.5)
    assert result.n_close == close and result.estimate == pytest.approx(agree / close)


def test_systems_need_system_ids():
    data = random_data(33)
    from dataclasses import replace
    with pytest.raises(Exception, match="does not name the systems"):
        system_ranking(replace(data, system_a=("",) * data.n_items, system_b=("",) * data.n_items))



def test_a_judge_without_verdicts_in_the_order_is_undefined_and_none_is_refused():
    from dataclasses import replace

    from metaeval_core.judges import MISSING
    from metaeval_core.judges.examples import ranking_pairs

    data = random_data(34, n=200)
    verdicts = data.verdicts.copy()
    verdicts[:, 3, 1] = MISSING  # j1 was run in the original order only
    partial = replace(data, verdicts=verdicts)
    close = close_pair_agreement(partial, delta=0.3, order="swapped", n_resamples=40, rng=0)
    assert [c.judge for c in close] == ["j1", "j2", "j3"]
    assert np.isnan([close[0].estimate, close[0].low, close[0].high, close[0].all_pairs]).all()  # not "0 agree"
    assert np.isfinite([close[1].estimate, close[1].all_pairs]).all()
    tau = ranking_agreement(partial, order="swapped", n_resamples=40, rng=0)
    assert np.isnan(tau[0].estimate) and np.isfinite(tau[1].estimate)
    # an order no judge was run in: the reason, as the leaderboard gives it
    verdicts[:, 3:, 1] = MISSING
    original_only = replace(data, verdicts=verdicts)
    for call in (lambda: close_pair_agreement(original_only, order="swapped", n_resamples=40, rng=0),
                 lambda: ranking_agreement(original_only, order="swapped", n_resamples=40, rng=0),
                 lambda: ranking_pairs(original_only, "j2", order="swapped")):
        with pytest.raises(ValueError, match="order='swapped' needs verdicts in swapped order; .* original order only"):
            call()
    with pytest.raises(ValueError, match="swapped order; judge 'j1' gave verdicts in the original order only"):
        ranking_pairs(partial, "j1", order="swapped")  # one judge asked: named
    # 'average' reads the orders there are (here the original one alone)
    assert ranking_pairs(original_only, "j2", order="average").records == ranking_pairs(original_only, "j2").records

@pytest.mark.realdata
def test_pandalm_system_rankings(data_dir):
    data = loaded(data_dir, "pandalm")
    human = system_ranking(data, n_resamples=100, rng=0)
    assert len(human.systems) == 5 and human.systems[0] == "llama-7b"
    davidson = system_ranking(data, method="davidson", n_resamples=100, rng=0)
    assert davidson.systems == human.systems and davidson.nu > 0
    pairs = _Pairs(*[np.array([data.systems.index(s) for s in col]) for col in (data.system_a, data.system_b)], 5)
    per_item = pairs.outcomes(majority_verdict(data.verdicts[:, :3, 0])[:, None])
    outcomes = np.stack([per_item[pairs.of_item == q].sum(axis=0) for q in range(pairs.n_pairs)])
    strength, nu, _ = _davidson_scipy(outcomes, 5)
    assert davidson.nu == pytest.approx(nu, rel=1e-5)
    close = close_pair_agreement(data, n_resamples=100, rng=0)
    assert close[0].n_pairs == 10


def test_davidson_says_when_no_finite_maximum_exists():
    outcomes = np.array([[5, 0, 0], [4, 0, 0], [3, 3, 2]], dtype=float)  # system 0 never loses nor ties
    fit = davidson_fit(outcomes, 3, max_iter=300)
    assert not bool(fit.converged) and np.argmax(fit.strength) == 0
