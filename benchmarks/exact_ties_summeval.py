"""How often float means of averaged ratings break exact ties on SummEval (docs/methods.md sec. 15).

    METAEVAL_DATA_DIR=/path/to/datasets .venv/bin/python benchmarks/exact_ties_summeval.py [--human H] [--metric M]

For BOOT-BOTH resamples of SummEval's expert judgments (means of three 1-5 ratings), counts the pairs of distinct
systems whose resampled human means are equal as rationals, how many of them the float means of the averaged
scores split, and in how many resamples the system-level Kendall tau-b changes. metaeval itself uses the exact
integer grid; the float path here is what it did before, and what tools that average floats do.
"""

from __future__ import annotations

import argparse

import numpy as np

from metaeval_core.data.registry import load_dataset
from metaeval_core.stats.correlation import correlate_matrices
from metaeval_core.stats.exact import exact_matrix
from metaeval_core.stats.resampling import _draw_bootstrap_indices


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--human", default="expert.coherence")
    parser.add_argument("--metric", default="rouge-2.recall")
    parser.add_argument("--n-resamples", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    ds = load_dataset("summeval")
    floats, grid, metric = ds.matrix(args.human), exact_matrix(ds, args.human), ds.matrix(args.metric)
    n, m = floats.shape
    draws = _draw_bootstrap_indices(np.random.default_rng(args.seed), "boot-both", args.n_resamples, n, m)
    first, second = np.triu_indices(n, 1)
    ties = split = resamples_split = tau_changed = 0
    for s in range(args.n_resamples):
        rows, cols = draws.systems[s], draws.metric_inputs[s]
        z_float = floats[np.ix_(rows, cols)]
        z_exact = grid[np.ix_(rows, cols)]
        mean_float, mean_exact = z_float.mean(axis=1), z_exact.mean(axis=1)
        tied = (mean_exact[first] == mean_exact[second]) & (rows[first] != rows[second])
        broken = tied & (mean_float[first] != mean_float[second])
        ties, split, resamples_split = ties + tied.sum(), split + broken.sum(), resamples_split + broken.any()
        x = metric[np.ix_(rows, cols)]
        a = correlate_matrices(x, z_float, level="system", coefficient="kendall").estimate
        b = correlate_matrices(x, z_exact, level="system", coefficient="kendall").estimate
        tau_changed += not np.isclose(a, b, atol=1e-12)
    k = args.n_resamples
    print(f"SummEval {args.human} vs {args.metric}, BOOT-BOTH, {k:,} resamples, seed {args.seed}")
    print(f"pairs of distinct systems tied exactly: {ties:,}; split by float means: {split:,} "
          f"({100 * split / max(ties, 1):.0f}%)")
    print(f"resamples with a split tie: {100 * resamples_split / k:.1f}%; tau-b changed: {100 * tau_changed / k:.1f}%")


if __name__ == "__main__":
    main()
