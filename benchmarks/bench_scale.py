"""Speed at WMT scale (issue 16): 15-30 systems x 2,000 segments x 30 metrics, 1,000 resamples.

Run:  .venv/bin/python benchmarks/bench_scale.py            (about 10 minutes on a loaded 2-core machine)
      .venv/bin/python benchmarks/bench_scale.py --quick    (fewer repeats, no growth fits)

Each case runs in a fresh subprocess (so its peak RSS, ``ru_maxrss``, is its own; a bare
``import metaeval_core`` is printed as ``baseline``) and prints one JSON line: the median of
``--repeat`` runs, the reference implementation timed in the same run, the target and whether it is
met. References are the code paths these replace (the per-pair quadratic forms of the input-level
permutation, scipy's ``kendalltau`` per resample, the materialised resampled cells), timed on a
slice of the work (a few pairs, a few resamples) and scaled linearly to the whole case: that is
said in ``reference_note``. Growth exponents are least-squares slopes of log(time) on log(size)
for the all-pairs input-level table, one axis at a time.

Data are synthetic and WMT-like (``wmt_like``): MQM-like human scores (0 for most segments, else
minus a small integer count of weighted errors, so many ties), metrics that are noisy continuous
functions of the human scores, and in ``--tie-share`` of the segments two systems with identical
outputs (their metric and human scores equal): the case that sends a segment down the per-pair path.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

TARGET_S = 3.0


def wmt_like(n_systems: int, n_segments: int, n_metrics: int, *, tie_share: float = 0.05, seed: int = 0):
    """{'human': (N, M), 'm0'...: (N, M)}: MQM-like human scores and correlated continuous metrics."""
    rng = np.random.default_rng(seed)
    quality = rng.normal(0, 1, (n_systems, 1)) + rng.normal(0, 1, (n_systems, n_segments))
    errors = rng.poisson(np.exp(-1.0 - quality))
    human = -np.minimum(errors, 25).astype(float)
    data = {"human": human}
    for k in range(n_metrics):
        data[f"m{k}"] = quality + rng.normal(0, 0.5 + 0.1 * k, quality.shape)
    twins = rng.random(n_segments) < tie_share
    for j in np.flatnonzero(twins):
        a, b = rng.choice(n_systems, 2, replace=False)
        for matrix in data.values():
            matrix[b, j] = matrix[a, j]
    return data


def _table(data, metrics, *, level, coefficient, method, n_resamples):
    from metaeval_core.stats.significance import compare_all_pairs

    return compare_all_pairs(data, metrics, "human", level=level, coefficient=coefficient, method=method,
                             n_resamples=n_resamples, rng=0)


def _names(k):
    return [f"m{i}" for i in range(k)]


# ---------------------------------------------------------------------------------------------------
# Cases: each returns (ours: () -> None, reference: () -> float seconds for the whole case, note)
# ---------------------------------------------------------------------------------------------------
def case_table_input(args, coefficient="kendall"):
    from metaeval_core.stats.significance import _zscore_params, _iter_swap_masks
    from metaeval_core.stats.significance.linear import ColumnSwaps

    data = wmt_like(args.systems, args.segments, args.metrics, tie_share=args.tie_share)
    names = _names(args.metrics)
    n_pairs = len(names) * (len(names) - 1) // 2

    def ours():
        _table(data, names, level="input", coefficient=coefficient, method="perm-both", n_resamples=args.resamples)

    def reference():
        # Before: every pair ran the per-pair path on every input (quadratic forms for Kendall).
        start = time.perf_counter()
        z = data["human"]
        for a, b in [(0, 1), (2, 3)]:
            x, y = (data[f"m{i}"] for i in (a, b))
            (mx, sx), (my, sy) = _zscore_params(x), _zscore_params(y)
            swaps = ColumnSwaps((x - mx) / sx, (y - my) / sy, z, coefficient)
            for _, mask in _iter_swap_masks(np.random.default_rng(0), "perm-both", args.resamples, *z.shape, 64):
                swaps.per_input(mask)
        return (time.perf_counter() - start) / 2 * n_pairs

    return ours, reference, f"per-pair path on every input, 2 of {n_pairs} pairs timed, scaled to all"


def case_table_input_accuracy(args):
    return case_table_input(args, "pairwise-accuracy")


def case_table_system(args):
    data = wmt_like(args.systems, args.segments, args.metrics, tie_share=args.tie_share)
    names = _names(args.metrics)

    def ours():
        _table(data, names, level="system", coefficient="kendall", method="perm-both", n_resamples=args.resamples)

    return ours, None, "unchanged by this issue"


def case_table_global(args):
    from metaeval_core.stats.significance import compare_metrics

    data = wmt_like(args.systems, args.segments, 4, tie_share=args.tie_share)

    def ours():
        compare_metrics(data["m0"], data["m1"], data["human"], level="global", coefficient="kendall",
                        method="perm-both", n_resamples=args.resamples, rng=0)

    def reference():
        return _scipy_kendall_perm(data, args.resamples)

    return ours, reference, "scipy.stats.kendalltau per resample (the former loop), 20 resamples timed, scaled"


def _scipy_kendall_perm(data, n_resamples, timed=20):
    from scipy import stats

    rng = np.random.default_rng(0)
    x, y, z = data["m0"].ravel(), data["m1"].ravel(), data["human"].ravel()
    start = time.perf_counter()
    for _ in range(timed):
        swap = rng.random(x.size) < 0.5
        stats.kendalltau(np.where(swap, y, x), z)
        stats.kendalltau(np.where(swap, x, y), z)
    return (time.perf_counter() - start) / timed * n_resamples


def case_summeval_global_kendall_perm(args):
    data = wmt_like(16, 100, 4, tie_share=0.0)
    args = argparse.Namespace(**{**vars(args), "systems": 16, "segments": 100})
    ours, _, _ = case_table_global(args)
    return ours, lambda: _scipy_kendall_perm(data, args.resamples), \
        "scipy.stats.kendalltau per resample (the former loop), 20 resamples timed, scaled"


def _ci_case(args, n_systems, n_segments, coefficient, method):
    from metaeval_core.stats import resampling
    from metaeval_core.stats.resampling import _draw_bootstrap_indices, _resample_cells, _rows_correlation, confidence_interval

    data = wmt_like(n_systems, n_segments, 1, tie_share=args.tie_share)
    x, z = data["m0"], data["human"]

    def ours():
        confidence_interval(x, z, level="global", coefficient=coefficient, method=method, n_resamples=args.resamples,
                            rng=0)

    def reference():
        # Before: the resampled cells were materialised and the coefficient computed row by row.
        timed = 10
        idx = _draw_bootstrap_indices(np.random.default_rng(0), method, timed, *x.shape)
        start = time.perf_counter()
        for s in range(timed):
            sl = slice(s, s + 1)
            cx = _resample_cells(x, idx.systems, idx.metric_inputs, sl)
            cz = _resample_cells(z, idx.systems, idx.metric_inputs, sl)
            if coefficient == "kendall":
                resampling._kendall_rows_scipy(cx, cz)
            else:
                _rows_correlation(cx, cz, coefficient)
        return (time.perf_counter() - start) / timed * args.resamples

    return ours, reference, "materialised cells, coefficient per resample (the former path), 10 resamples timed, scaled"


def case_ci_global_accuracy_summeval(args):
    return _ci_case(args, 16, 100, "pairwise-accuracy", "boot-both")


def case_ci_global_accuracy_wmt(args):
    return _ci_case(args, args.systems, args.segments, "pairwise-accuracy", "boot-both")


def case_ci_global_kendall_wmt(args):
    return _ci_case(args, args.systems, args.segments, "kendall", "boot-both")


def case_ci_input_kendall(args):
    from metaeval_core.stats.resampling import confidence_interval

    data = wmt_like(args.systems, args.segments, 1, tie_share=args.tie_share)

    def ours():
        confidence_interval(data["m0"], data["human"], level="input", coefficient="kendall", method="boot-both",
                            n_resamples=args.resamples, rng=0)

    return ours, None, "unchanged by this issue"


def case_table_input_30x1500(args):
    return case_table_input(argparse.Namespace(**{**vars(args), "systems": 30, "segments": 1500}))


def case_wmt_task(args):
    """One task of docs/methods.md sec. 16.3: one language pair x human x level, 50 metrics (1,225 pairs)."""
    data = wmt_like(args.systems, args.segments, 50, tie_share=args.tie_share)

    def ours():
        _table(data, _names(50), level="input", coefficient="kendall", method="perm-both", n_resamples=args.resamples)

    return ours, None, "the unit of work of the Dask plan (docs/methods.md sec. 16.3)"


def case_summeval_table(args):
    """The real SummEval table (16 x 100, 34 metrics, expert relevance) when the data are present."""
    import os

    from metaeval_core.data.registry import load_dataset

    dataset = load_dataset("summeval", data_dir=Path(os.environ.get("METAEVAL_DATA_DIR", "data/cache")))
    names = list(dataset.metric_measures)[:34]
    data = {name: dataset.matrix(name) for name in names}
    data["human"] = dataset.matrix("expert.relevance")
    args = argparse.Namespace(**{**vars(args), "metrics": len(names)})

    def ours():
        _table(data, names, level="input", coefficient="kendall", method="perm-both", n_resamples=args.resamples)

    def reference():
        from metaeval_core.stats.significance import _iter_swap_masks, _zscore_params
        from metaeval_core.stats.significance.linear import ColumnSwaps

        start = time.perf_counter()
        z = data["human"]
        for a, b in [(0, 1), (2, 3)]:
            x, y = data[names[a]], data[names[b]]
            (mx, sx), (my, sy) = _zscore_params(x), _zscore_params(y)
            swaps = ColumnSwaps((x - mx) / sx, (y - my) / sy, z, "kendall")
            for _, mask in _iter_swap_masks(np.random.default_rng(0), "perm-both", args.resamples, *z.shape, 250):
                swaps.per_input(mask)
        return (time.perf_counter() - start) / 2 * len(names) * (len(names) - 1) / 2

    return ours, reference, "per-pair path on every input, 2 of 561 pairs timed, scaled to all"


def case_sequential_global(args):
    """Besag-Clifford stopping on a per-pair path: global-level table, SummEval size, 10 metrics."""
    from metaeval_core.stats.significance import compare_all_pairs

    data = wmt_like(16, 100, 10, tie_share=0.0)
    names = _names(10)
    kwargs = dict(level="global", coefficient="kendall", method="perm-both", n_resamples=args.resamples, rng=0)

    def ours():
        compare_all_pairs(data, names, "human", stopping="besag-clifford", **kwargs)

    def reference():
        start = time.perf_counter()
        full = compare_all_pairs(data, names, "human", **kwargs)
        seconds = time.perf_counter() - start
        seq = compare_all_pairs(data, names, "human", stopping="besag-clifford", **kwargs)
        assert (seq.significant == full.significant).all()
        return seconds

    return ours, reference, "the same table with every pair run to the end (stopping='none'); decisions equal"


def case_power_input(args):
    """Input-level power simulation (TACL Fig. 3 at the input level): time per trial, SummEval size."""
    from metaeval_core.analyses.simulations import power_curve
    from metaeval_core.data.synthetic import synthetic_dataset

    dataset = synthetic_dataset()

    def ours():
        power_curve(dataset, "metric.good", "human.quality", level="input", coefficient="kendall", degrade="noise",
                    tests=("perm-both", "boot-both"), n_trials=10, n_resamples=args.resamples, rng=0)

    return ours, None, "10 trials x 5 noise levels x 2 tests (the page runs it as a background job with Stop)"


CASES = {
    "all-pairs PERM-BOTH, input level, Kendall": case_table_input,
    "all-pairs PERM-BOTH, input level, pairwise accuracy": case_table_input_accuracy,
    "all-pairs PERM-BOTH, system level, Kendall": case_table_system,
    "PERM-BOTH one pair, global level, Kendall": case_table_global,
    "PERM-BOTH one pair, global level, Kendall, SummEval size (16 x 100)": case_summeval_global_kendall_perm,
    "BOOT-BOTH interval, global level, pairwise accuracy, SummEval size (16 x 100)": case_ci_global_accuracy_summeval,
    "BOOT-BOTH interval, global level, pairwise accuracy": case_ci_global_accuracy_wmt,
    "BOOT-BOTH interval, global level, Kendall": case_ci_global_kendall_wmt,
    "BOOT-BOTH interval, input level, Kendall": case_ci_input_kendall,
    "all-pairs PERM-BOTH, input level, Kendall, 30 x 1,500": case_table_input_30x1500,
    "all-pairs PERM-BOTH, input level, Kendall, SummEval (34 metrics, real data)": case_summeval_table,
    "one WMT task for Dask: all-pairs PERM-BOTH, input level, Kendall, 50 metrics": case_wmt_task,
    "power simulation, input level, Kendall, 10 trials (demo, 16 x 100)": case_power_input,
    "all-pairs PERM-BOTH, global level, Kendall, 10 metrics (16 x 100), sequential (Besag-Clifford)":
        case_sequential_global,
}


def run_case(name: str, args) -> dict:
    ours, reference, note = CASES[name](args)
    times = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        ours()
        times.append(time.perf_counter() - start)
    # Peak RSS of our runs alone, before the reference runs in the same process.
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    ref = reference() if (reference is not None and not args.no_reference) else None
    median = statistics.median(times)
    return {
        "case": name, "median_s": round(median, 3), "runs": len(times),
        "reference_s": None if ref is None else round(ref, 2),
        "speedup": None if ref is None else round(ref / median, 1),
        "reference_note": note, "peak_rss_mb": round(peak_mb),
        "target_s": TARGET_S, "met": median < TARGET_S,
    }


def _subprocess(extra: list[str]) -> dict:
    out = subprocess.run([sys.executable, __file__, *extra], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _shape_args(args) -> list[str]:
    return ["--systems", str(args.systems), "--segments", str(args.segments), "--metrics", str(args.metrics),
            "--resamples", str(args.resamples), "--tie-share", str(args.tie_share), "--repeat", str(args.repeat)]


def growth(args) -> dict:
    """Slopes of log(time) on log(size) for the input-level table, one axis at a time."""
    base = dict(systems=15, segments=2000, metrics=20, resamples=1000)
    axes = {"systems": [8, 15, 30], "segments": [500, 1000, 2000], "metrics": [10, 20, 40],
            "resamples": [250, 500, 1000]}
    fits = {}
    for axis, sizes in axes.items():
        times = []
        for size in sizes:
            shape = {**base, axis: size}
            extra = ["--case", "all-pairs PERM-BOTH, input level, Kendall", "--no-reference", "--repeat", "1",
                     "--tie-share", str(args.tie_share)]
            for key, value in shape.items():
                extra += [f"--{key}", str(value)]
            times.append(_subprocess(extra)["median_s"])
        slope = float(np.polyfit(np.log(sizes), np.log(times), 1)[0])
        fits[axis] = {"sizes": sizes, "seconds": times, "exponent": round(slope, 2)}
    return fits


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--systems", type=int, default=15)
    parser.add_argument("--segments", type=int, default=2000)
    parser.add_argument("--metrics", type=int, default=30)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--tie-share", type=float, default=0.05)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--case", choices=sorted(CASES), help="run one case in this process (used internally)")
    parser.add_argument("--no-reference", action="store_true")
    parser.add_argument("--quick", action="store_true", help="one run per case, no growth fits")
    parser.add_argument("--only", help="run only the cases whose name contains this text (and no growth fits)")
    parser.add_argument("--baseline", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.baseline:
        import metaeval_core  # noqa: F401

        print(json.dumps({"baseline_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}))
        return
    if args.case:
        print(json.dumps(run_case(args.case, args)))
        return
    if args.quick:
        args.repeat = 1
    print(json.dumps({"shape": f"{args.systems} systems x {args.segments} segments x {args.metrics} metrics",
                      "resamples": args.resamples, "tie_share": args.tie_share, **_subprocess(["--baseline"])}),
          flush=True)
    for name in CASES:
        if args.only and args.only not in name:
            continue
        try:
            print(json.dumps(_subprocess(["--case", name, *_shape_args(args)])), flush=True)
        except subprocess.CalledProcessError as error:
            reason = (error.stderr or "").strip().splitlines()[-1:] or ["failed"]
            print(json.dumps({"case": name, "skipped": reason[0]}), flush=True)
    if not (args.quick or args.only):
        print(json.dumps({"growth": growth(args)}), flush=True)


if __name__ == "__main__":
    main()
