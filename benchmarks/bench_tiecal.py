"""Tie-calibrated accuracy at the input level: one epsilon vs per-item epsilons, and resampling speed.

Run:  .venv/bin/python benchmarks/bench_tiecal.py [--n-resamples 1000]

The synthetic case of docs/methods.md sec. 11.2: 15 systems x 2,000 inputs, continuous metric scores
``x ~ N(0, 1)`` and integer human scores ``z = round(x + 2 e)``, ``e ~ N(0, 1)`` (seed 0), so the humans
tie often and the metric never does; and a coarse variant with ``z`` clipped to -1, 0, 1 (ties in most pairs). Prints one JSON line per measurement: the per-item value (a separate
best epsilon per input, averaged; what metaeval no longer reports), the one-epsilon value with its epsilon,
and the seconds of an input-level bootstrap interval (``--n-resamples`` resamples, seed 0) per method.
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

from metaeval_core.stats.coefficients import tie_calibrated_accuracy  # noqa: E402
from metaeval_core.stats.correlation import correlate_matrices  # noqa: E402
from metaeval_core.stats.resampling import confidence_interval  # noqa: E402

COEF = "tie-calibrated-accuracy"


def synthetic(n_systems: int = 15, n_inputs: int = 2000, seed: int = 0, coarse: bool = False):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n_systems, n_inputs))
    z = np.round(x + 2.0 * rng.normal(size=x.shape))
    # coarse: a 3-point human scale (-1, 0, 1), ties in most pairs
    return x, (np.clip(z, -1, 1) if coarse else z)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-resamples", type=int, default=1000)
    parser.add_argument("--methods", default="boot-inputs,boot-systems,boot-both")
    args = parser.parse_args(argv)
    for coarse in (False, True):
        x, z = synthetic(coarse=coarse)
        start = time.perf_counter()
        per_item = float(np.nanmean(tie_calibrated_accuracy(x.T, z.T).accuracy))
        per_item_s = time.perf_counter() - start
        start = time.perf_counter()
        shared = correlate_matrices(x, z, level="input", coefficient=COEF)
        shared_s = time.perf_counter() - start
        print(json.dumps({"case": "15x2000" + (" coarse" if coarse else ""), "per_item": round(per_item, 4),
                          "per_item_s": round(per_item_s, 3), "one_epsilon": round(float(shared.estimate), 4),
                          "epsilon": float(shared.epsilon), "one_epsilon_s": round(shared_s, 3)}), flush=True)
    x, z = synthetic()
    for method in args.methods.split(","):
        start = time.perf_counter()
        ci = confidence_interval(x, z, level="input", coefficient=COEF, method=method,
                                 n_resamples=args.n_resamples, rng=0)
        print(json.dumps({"case": "15x2000", "method": method, "n_resamples": args.n_resamples,
                          "seconds": round(time.perf_counter() - start, 2), "estimate": round(ci.estimate, 4),
                          "low": round(ci.low, 4), "high": round(ci.high, 4)}), flush=True)


if __name__ == "__main__":
    main()
