"""The input-level tie path on real data: how much work it has, and where its time goes (issue 33).

Run:  OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/bench_tie_path.py [--dataset wmt22-zhen] [--lp ..]
                                                                           [--profile]

This reads the judged cells of the dataset as ``bench_wmt.py --levels`` does: WMT's systems, the gold and the primary
metrics. It builds the input-level engine for every pair of metrics, then prints one JSON line with:

* ``entries``: the (input, pair) entries on the tie path, and the number of rows the engine multiplies. Each entry
  costs one look-up per side per resample.
* ``classes``: the share of entries whose two metrics tie the same system pairs (``same``), where only one metric
  ties (``one_sided``), and where both tie differently (``both_differ``). In the first two classes the denominators
  do not depend on the second metric.
* ``cross``: the share of rows whose ``x`` weights have a cross term ``W sz (T_1 + T_2)``, and its mean number of
  non-zero system pairs per row. Without cross terms, per-metric products could replace the per-pair ``x`` product.
* ``rank``: the mean rank of a product's ``x`` weights against its mean rows and features. A low rank would let a
  factored product ``A (B x)`` cost less.

``--profile`` also times one warm ``compare_all_pairs`` at the input level (1,000 resamples, PERM-BOTH, Kendall). It
then prints the per-line seconds of ``TiedInputs.add``, which needs ``line_profiler`` importable (``pip install
--target /tmp/lp line_profiler`` and ``PYTHONPATH=/tmp/lp``). Figures and what they rule out: docs/speed.md, "The 3x
target is out of reach of numpy".
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

# Inputs per block when the anatomy builds the engine's weights (as TiedInputs.add does, in its input order).
BLOCK = 50


def _engine(dataset_id: str, lp: str | None):
    from bench_wmt import _same_shape_datasets

    from metaeval_core.stats.significance.linear import TiedInputs
    from metaeval_core.stats.significance.tables import _input_engine

    real, _, human, metrics = _same_shape_datasets(dataset_id, lp)
    engine = _input_engine([real.matrix(name) for name in metrics], real.matrix(human), "kendall")
    return real, human, metrics, TiedInputs(engine)


def anatomy(tied) -> dict:
    """Counts of the tie path's work on the engine's own weights (see the module docstring)."""
    from metaeval_core.stats.significance.linear import _signs

    f, s = tied.first, tied.second
    classes = np.zeros(3, dtype=np.int64)
    rows_with_cross = cross_nonzero = 0
    ranks, rows, features = [], [], []
    for start in range(0, tied.columns.size, BLOCK):
        members = tied.sequence[start:start + BLOCK]
        columns = tied.columns[members]
        values = tied.values[columns]  # (C, K, N)
        z = tied.engine.z[:, columns].T
        compared = ~(np.isnan(z[:, f]) | np.isnan(z[:, s]))
        sz = _signs(z[:, f], z[:, s])
        ties = (values[:, :, f] == values[:, :, s]) & compared[:, None, :]  # (C, K, P)
        for c in range(columns.size):
            on = np.flatnonzero(tied.on[members[c]])
            px, py = tied.pair_x[on], tied.pair_y[on]
            tx, ty = ties[c, px], ties[c, py]
            same = (tx == ty).all(axis=1)
            one_sided = ~same & (~tx.any(axis=1) | ~ty.any(axis=1))
            classes += [same.sum(), one_sided.sum(), (~same & ~one_sided).sum()]
            v = values[c]
            cross = (np.sign(v[px][:, f] - v[py][:, s]) + np.sign(v[py][:, f] - v[px][:, s])) != 0
            cross &= sz[c] != 0
            rows_with_cross += int(cross.any(axis=1).sum())
            cross_nonzero += int(cross.sum())
        for _, _, _, (_, blocks, _) in tied._block(columns, tied.on[members], tied.rows[members]):
            for _, weights, _, _ in blocks:
                ranks.append(np.linalg.matrix_rank(weights.astype(np.float64)))
                rows.append(weights.shape[0])
                features.append(weights.shape[1])
    entries = int(tied.on.sum())
    return {
        "tied_inputs": int(tied.columns.size), "pairs": int(tied.on.shape[1]), "entries": entries,
        "rows_multiplied": int(tied.rows.sum()),
        "classes": dict(zip(("same", "one_sided", "both_differ"), np.round(classes / entries, 3).tolist())),
        "cross": {"rows_share": round(rows_with_cross / entries, 3),
                  "nonzero_per_row": round(cross_nonzero / entries, 1)},
        "rank": {"mean_rank": round(float(np.mean(ranks)), 1), "mean_rows": round(float(np.mean(rows)), 1),
                 "mean_features": round(float(np.mean(features)), 1)},
    }


def profile(real, human: str, metrics: list[str]) -> None:
    from line_profiler import LineProfiler

    from metaeval_core.stats.significance import compare_all_pairs
    from metaeval_core.stats.significance.linear import TiedInputs

    def run():
        compare_all_pairs(real, metrics, human, level="input", coefficient="kendall", method="perm-both",
                          n_resamples=1000, rng=0)

    run()  # warm: the process's one-time costs
    profiler = LineProfiler(TiedInputs.add, TiedInputs._block)
    profiler.enable()
    run()
    profiler.disable()
    profiler.print_stats(stripzeros=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="wmt22-zhen")
    parser.add_argument("--lp", default=None)
    parser.add_argument("--profile", action="store_true", help="also the per-line seconds of TiedInputs.add")
    args = parser.parse_args()
    real, human, metrics, tied = _engine(args.dataset, args.lp)
    print(json.dumps({"dataset": args.dataset, "lp": args.lp, "metrics": len(metrics), **anatomy(tied)}))
    if args.profile:
        profile(real, human, metrics)


if __name__ == "__main__":
    main()
