"""Speed of the resampling core against nlpstats 0.0.1 (the TACL 2021 authors' loop implementation).

Run:  .venv/bin/pip install -r requirements-bench.txt && .venv/bin/python benchmarks/bench_resampling.py

Prints one JSON line per case: case, ours_s, reference_s, ratio, our result, reference result,
and whether the two agree within Monte Carlo error (3 combined standard errors; ours are
estimated from repeated seeds). Data: SummEval (16 systems x 100 judged inputs) when
``metaeval_core.data.registry.load_dataset('summeval')`` finds the mirror (METAEVAL_DATA_DIR or
data/cache/), otherwise the synthetic demo (said in every line as ``data``).

PERM-BOTH: docs/methods.md sec. 3 swaps each cell independently. nlpstats' own ``'both'`` swaps
whole rows and then whole columns (cell swapped iff row XOR column), a different null; the
reference here therefore calls ``nlpstats.correlations.permutation_test`` with a
cell-wise permutation callable, and the nlpstats ``'both'`` p-value is printed for information.
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from metaeval_core.stats.resampling import confidence_interval  # noqa: E402
from metaeval_core.stats.significance import compare_all_pairs, compare_metrics  # noqa: E402
from metaeval_core.data.registry import DEFAULT_DATA_DIR  # noqa: E402

N_RESAMPLES = 1000


def load():
    data_dir = os.environ.get("METAEVAL_DATA_DIR") or str(DEFAULT_DATA_DIR)
    try:
        from metaeval_core.data.registry import load_dataset

        dataset = load_dataset("summeval", data_dir=Path(data_dir))
        return "summeval", dataset, "expert.relevance", ("rouge-2.f1", "rouge-l.f1")
    except Exception as error:  # the loader is a colleague's module: fall back, and say so
        print(json.dumps({"note": f"summeval unavailable ({type(error).__name__}: {error}); using the demo"}))
        from metaeval_core.data.synthetic import synthetic_dataset

        return "demo", synthetic_dataset(), "human.quality", ("metric.good", "metric.fair")


def timed(fn, repeat=1):
    best = math.inf
    result = None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def cellwise_permute(x, y, **_):
    """PERM-BOTH as docs/methods.md sec. 3 (and TACL Algorithm 2): each cell swapped independently."""
    mask = np.random.rand(*x.shape) > 0.5
    xp, yp = x.copy(), y.copy()
    xp[mask], yp[mask] = y[mask], x[mask]
    return xp, yp


def emit(**fields):
    print(json.dumps(fields), flush=True)


def main() -> None:
    from nlpstats.correlations import bootstrap, permutation_test

    name, dataset, human, (mx, my) = load()
    X, Y, Z = dataset.matrix(mx), dataset.matrix(my), dataset.matrix(human)
    shape = list(X.shape)

    for level in ("system", "input"):
        # --- BOOT-BOTH confidence interval -------------------------------------------
        def ours_ci(seed=0):
            return confidence_interval(X, Z, level=level, coefficient="kendall", method="boot-both",
                                       n_resamples=N_RESAMPLES, rng=seed)

        ours_s, ci = timed(ours_ci, repeat=5)
        spread = [ours_ci(seed) for seed in range(1, 21)]
        se_low = float(np.std([c.low for c in spread], ddof=1))
        se_high = float(np.std([c.high for c in spread], ddof=1))
        np.random.seed(0)
        ref_s, ref = timed(lambda: bootstrap(X, Z, level, "kendall", "both", n_resamples=N_RESAMPLES))
        tol_low, tol_high = 3 * math.sqrt(2) * se_low, 3 * math.sqrt(2) * se_high
        emit(case=f"boot-both CI, {level} level, kendall", data=name, shape=shape, ours_s=round(ours_s, 4),
             reference_s=round(ref_s, 3), ratio=round(ref_s / ours_s, 1),
             ours={"estimate": ci.estimate, "low": ci.low, "high": ci.high, "n_defined": ci.n_defined},
             reference={"low": float(ref.lower), "high": float(ref.upper), "n_defined": len(ref.samples)},
             mc_se={"low": se_low, "high": se_high},
             agree=bool(abs(ci.low - ref.lower) <= tol_low and abs(ci.high - ref.upper) <= tol_high))

        # --- PERM-BOTH test --------------------------------------------------------------
        def ours_test(seed=0):
            return compare_metrics(X, Y, Z, level=level, coefficient="kendall", method="perm-both",
                                   n_resamples=N_RESAMPLES, rng=seed)

        ours_s, test = timed(ours_test, repeat=5)
        np.random.seed(0)
        ref_s, ref = timed(lambda: permutation_test(X, Y, Z, level, "kendall", cellwise_permute,
                                                    alternative="greater", n_resamples=N_RESAMPLES))
        # nlpstats reports c / k (can be 0); put it on our (1 + c) / (1 + k) scale to compare.
        ref_p = (1 + ref.pvalue * N_RESAMPLES) / (1 + N_RESAMPLES)
        se = math.sqrt(max(test.pvalue * (1 - test.pvalue), 1 / N_RESAMPLES) / N_RESAMPLES)
        extra = {}
        if level == "system":
            np.random.seed(0)
            xor = permutation_test(X, Y, Z, level, "kendall", "both", alternative="greater",
                                   n_resamples=N_RESAMPLES)
            extra = {"nlpstats_both_xor_pvalue": float(xor.pvalue)}
        emit(case=f"perm-both test, {level} level, kendall", data=name, shape=shape, x=mx, y=my,
             ours_s=round(ours_s, 4), reference_s=round(ref_s, 3), ratio=round(ref_s / ours_s, 1),
             ours={"delta": test.delta, "pvalue": test.pvalue, "n_defined": test.n_defined},
             reference={"pvalue_raw": float(ref.pvalue), "pvalue_plus_one": ref_p, **extra},
             mc_se=se, agree=bool(abs(test.pvalue - ref_p) <= 3 * math.sqrt(2) * se + 1 / N_RESAMPLES))

    # --- the full all-pairs PERM-BOTH table ----------------------------------------------
    metrics = list(dataset.metric_measures)
    ours_s, table = timed(lambda: compare_all_pairs(
        dataset, metrics, human, level="system", coefficient="kendall", method="perm-both",
        n_resamples=N_RESAMPLES, rng=0), repeat=3)
    emit(case="all-pairs perm-both table, system level, kendall", data=name, metrics=len(metrics),
         ordered_pairs=len(metrics) * (len(metrics) - 1), ours_s=round(ours_s, 3), reference_s=None, ratio=None,
         ours={"significant": int(table.significant.sum()),
               "significant_bonferroni_row": int(table.significant_corrected.sum())},
         reference=None, target_s=3.0, meets_target=bool(ours_s < 3.0))


if __name__ == "__main__":
    main()
