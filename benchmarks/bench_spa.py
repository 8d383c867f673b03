"""Soft pairwise accuracy (docs/methods.md sec. 11.3): cost of the estimate, intervals and all-pairs tables.

Run:  .venv/bin/python benchmarks/bench_spa.py [--n-resamples 1000] [--cases summeval,wmt] [--tables]

Synthetic cases (seed 0): SummEval-sized 16 systems x 100 inputs, and WMT-like 15 systems x 2,000
segments; system quality ``q ~ N(0, 0.3)``, human ``z = q + N(0, 1)``, metrics ``x = q + s N(0, 1)`` with
noise scales ``s`` from 0.5 to 2.5. Prints one JSON line per measurement (wall clock and process CPU
seconds; CPU time counts every BLAS thread, wall clock is what a user waits on a loaded machine): the point
estimate (1,000 permutations per pair, as in the product), BOOT-SYSTEMS / BOOT-INPUTS / BOOT-BOTH intervals
with ``--n-resamples`` resamples, and with ``--tables`` all-pairs tables of 5 metrics (BOOT-BOTH,
PERM-SYSTEMS, and PERM-BOTH, the last with --perm-resamples resamples, since it costs two products per
resample and pair).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from metaeval_core.stats.correlation import correlate_matrices  # noqa: E402
from metaeval_core.stats.resampling import confidence_interval  # noqa: E402
from metaeval_core.stats.significance import compare_all_pairs  # noqa: E402

SPA = "soft-pairwise-accuracy"
CASES = {"summeval": (16, 100), "wmt": (15, 2000)}


def synthetic(n_systems: int, n_inputs: int, n_metrics: int = 5, seed: int = 0):
    rng = np.random.default_rng(seed)
    quality = 0.3 * rng.normal(size=(n_systems, 1))
    human = quality + rng.normal(size=(n_systems, n_inputs))
    metrics = {f"m{k}": quality + scale * rng.normal(size=(n_systems, n_inputs))
               for k, scale in enumerate(np.linspace(0.5, 2.5, n_metrics))}
    return metrics, human


def timed(fn):
    """The value, and the seconds it took as {'seconds': wall clock, 'cpu': process CPU time}."""
    start, cpu = time.perf_counter(), time.process_time()
    value = fn()
    return value, {"seconds": round(time.perf_counter() - start, 3), "cpu": round(time.process_time() - cpu, 3)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-resamples", type=int, default=1000)
    parser.add_argument("--perm-resamples", type=int, default=100)
    parser.add_argument("--cases", default="summeval,wmt")
    parser.add_argument("--methods", default="boot-systems,boot-inputs,boot-both")
    parser.add_argument("--tables", action="store_true")
    args = parser.parse_args(argv)
    for case in args.cases.split(","):
        n, m = CASES[case]
        metrics, human = synthetic(n, m)
        x = metrics["m0"]
        result, seconds = timed(lambda: correlate_matrices(x, human, level="system", coefficient=SPA))
        print(json.dumps({"case": f"{case} {n}x{m}", "what": "estimate", "spa": round(float(result.estimate), 4),
                          **seconds}), flush=True)
        for method in args.methods.split(","):
            ci, seconds = timed(lambda: confidence_interval(x, human, level="system", coefficient=SPA, method=method,
                                                            n_resamples=args.n_resamples, rng=0))
            print(json.dumps({"case": f"{case} {n}x{m}", "what": f"interval {method}", "k": args.n_resamples,
                              "low": round(ci.low, 4), "high": round(ci.high, 4), **seconds}), flush=True)
        if not args.tables:
            continue
        data = {**metrics, "human": human}
        for method, k in (("boot-both", args.n_resamples), ("perm-systems", args.n_resamples),
                          ("perm-both", args.perm_resamples)):
            table, seconds = timed(lambda: compare_all_pairs(data, list(metrics), "human", level="system",
                                                             coefficient=SPA, method=method, n_resamples=k, rng=0))
            print(json.dumps({"case": f"{case} {n}x{m}", "what": f"table {method}", "metrics": len(metrics), "k": k,
                              "significant": int(table.significant_corrected.sum()), **seconds}),
                  flush=True)


if __name__ == "__main__":
    main()
