"""Property tests: on random small verdict tables every convention matches the slow loops and sklearn."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score

from metaeval_core.judges import MISSING, PairwiseData, Rater, judge_agreement
from tests.core.judges.helpers import accuracy_oracle, cell_counts

CODES = st.sampled_from([-1, 0, 1, 2, 3])


@st.composite
def tables(draw):
    n = draw(st.integers(2, 12))
    reference = draw(st.lists(st.sampled_from([-1, 0, 1, 2]), min_size=n, max_size=n))
    judge = draw(st.lists(st.tuples(CODES, CODES), min_size=n, max_size=n))
    verdicts = np.full((n, 2, 2), MISSING, dtype=np.int8)
    verdicts[:, 0, 0] = reference
    verdicts[:, 1, :] = judge
    return PairwiseData(id="p", items=tuple(f"i{k}" for k in range(n)), pair_sets=("s",),
                        pair_set=np.zeros(n, int), raters=(Rater("ref", "gold"), Rater("j", "judge")),
                        verdicts=verdicts)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=tables(), order=st.sampled_from(["original", "swapped", "average", "both"]),
       ties=st.sampled_from(["three-class", "drop-reference-ties", "drop-any-tie"]),
       invalid=st.sampled_from(["wrong", "drop", "tie"]))
def test_accuracy_and_kappa_match_loops(data, order, ties, invalid):
    ref = data.verdicts[:, 0, 0]
    pairs = [tuple(int(x) for x in row) for row in data.verdicts[:, 1, :]]
    row = judge_agreement(data, judges=["j"], reference="gold", order=order, ties=ties, invalid=invalid,
                          n_resamples=40, rng=0).rows[0]
    expected = accuracy_oracle(pairs, ref, order, ties, invalid)
    assert row.estimate == pytest.approx(expected, nan_ok=True)
    if order in ("original", "swapped"):
        o = 0 if order == "original" else 1
        xs, ys = [], []
        for (v0, v1), r in zip(pairs, ref):
            v = (v0, v1)[o]
            c = cell_counts(v, r, ties, invalid)
            if c is None or c[0] == 0:
                continue
            xs.append(2 if (invalid == "tie" and v == 3) else v)
            ys.append(int(r))
        kappa = judge_agreement(data, judges=["j"], reference="gold", order=order, ties=ties, invalid=invalid,
                                statistic="kappa", n_resamples=40, rng=0).rows[0].estimate
        if len(xs) == 0 or len(set(xs) | set(ys)) == 1:
            assert np.isnan(kappa)
        else:
            with np.errstate(all="ignore"):
                import warnings
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    expected_kappa = cohen_kappa_score(xs, ys)
            assert kappa == pytest.approx(expected_kappa, nan_ok=True)
