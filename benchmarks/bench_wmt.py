"""WMT22 zh-en: metaeval's page computations side by side with mt-metrics-eval's own code, in one run.

Run:  .venv/bin/python benchmarks/bench_wmt.py [--k 1000] [--mtme-python /tmp/mtme-venv/bin/python]
                                                [--mtme-path /tmp/mtme-src] [--data DIR]

``--data`` is the folder holding ``wmt22/`` (default ``$METAEVAL_DATA_DIR/wmt22-zhen``). The mt-metrics-eval column
needs google-research/mt-metrics-eval importable: in this interpreter, or in ``--mtme-python`` (a separate
environment, run as a child process of this script with ``--side mtme``; ``--mtme-path`` is put on its
``PYTHONPATH``). Without it the column is skipped and said so. The data: WMT's systems (refA never a system, the 14
MT systems with MQM), gold MQM, 15 metrics (tests/reference/wmt22_zhen/make_reference.py's TEST_METRICS).

Cases (seconds, wall clock; metaeval's caches cleared first, so each is a cold page):

* ``load``: reading the test set (metaeval's mt-metrics-eval reader; mt-metrics-eval's EvalSet with metric scores);
* ``page:overview`` (metaeval): the Overview leaderboard's computations, as the page calls them
  (metaeval_ui.data.leaderboard: BOOT-BOTH intervals, the pairwise table with the dataset's default test, clusters,
  chance rows) for the 15 metrics at the system level, Pearson, k resamples;
* ``page:significance`` (metaeval): the Significance page's (pairwise table, clusters, chance baselines);
* ``page:average`` (metaeval): the Overall average page's (MQM and DA at the system level, Pearson; WMT's
  rescaled average, BOOT-BOTH intervals, the tests and clusters);
* ``table:wmt-test``: the 15-metric significance table with WMT's system-level test, k resamples (metaeval:
  compare_all_pairs(method='wmt-perm-sys'); mt-metrics-eval: data.CompareMetrics(pearsonr, k) without early
  stopping, and ``table:wmt-test-early`` with the early stopping of its WMT22 notebook, block_size 100);
* ``average:point``: WMT23-style tasks' point values and their rescaled average (system and segment Pearson,
  item-wise acc23, system pairwise accuracy; metaeval: ``correlate`` per task and metric; mt-metrics-eval:
  tasks.TaskSet.Run with k=0, then AverageCorrs, which scores all primary metrics).

``--levels [--dataset wmt22-zhen] [--lp ..] [--human NAME] [--heavy] [--only CASES] [--real-only] [--save]`` times
instead every level's analyses (all-pairs PERM-BOTH Kendall, chance baselines, BOOT-BOTH intervals of every metric;
``--heavy`` adds the global-level table and chance) on the dataset's judged cells (WMT's systems, the gold or
``--human``, primary metrics) and on
synthetic continuous data of the same shape in the same run (``--real-only``: not), printing the ratios (wall and CPU
seconds), issue 33's target (``LEVEL_TARGETS``) per case; each case is first called once untimed on both sides with
``WARM_UP_K`` resamples (the process's one-time costs), then timed ``--repeat`` times per side, alternated, and the row
holds the medians (and every run's CPU seconds); ``--save`` appends the rows to
``benchmarks/results/bench_wmt_levels_<date>.jsonl``. Figures: docs/speed.md.

Prints one JSON line per case (case, metaeval_s, mtme_s, details) and a summary; the target is every whole page
under 3 s on the 2-core machine (``meets_target``). Measured figures: docs/methods.md sec. 16.4.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

PAGE_TARGET_S = 3.0
LP = "zh-en"
TEST_METRICS = (
    "BLEU-refA", "chrF-refA", "BERTScore-refA", "BLEURT-20-refA", "COMET-20-refA", "COMET-22-refA",
    "MS-COMET-22-refA", "MATESE-refA", "MEE4-refA", "UniTE-refA", "YiSi-1-refA", "metricx_xxl_MQM_2020-refA",
    "COMETKiwi-src", "COMET-QE-src", "MS-COMET-QE-22-src",
)


def _log(out: dict) -> None:
    case = next(reversed(out))
    print(f"metaeval {case}: {out[case][0]:.2f} s", file=sys.stderr, flush=True)


def _timed(fn):
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


# -- metaeval ------------------------------------------------------------------------------------------------------
def metaeval_side(folder: Path, k: int) -> dict[str, tuple[float, str]]:
    import logging
    import warnings

    warnings.filterwarnings("ignore")
    logging.getLogger("streamlit").setLevel(logging.ERROR)
    import streamlit as st

    from metaeval_core.data.mtme import read_mtme
    from metaeval_core.stats.significance import compare_all_pairs
    from metaeval_ui import data
    from metaeval_ui.data import average as du
    from metaeval_ui.data import practice as practice_data
    from metaeval_ui import tables

    out: dict[str, tuple[float, str]] = {}

    def load():
        # The built-in dataset as the dashboard loads it (WMT's conventions); the reader on the folder otherwise.
        try:
            from metaeval_core.data.registry import load_dataset

            return load_dataset("wmt22-zhen", data_dir=folder.parent)
        except Exception:  # noqa: BLE001 - an older checkout or a folder outside a data directory
            return read_mtme(folder / "wmt22", lp=LP)

    seconds, full = _timed(load)
    ds = full.with_default_systems()
    pool = getattr(getattr(full, "conventions", None), "pool", "judged") or "judged"
    chosen = [s for s, row in zip(ds.systems, ds.matrix("mqm")) if (row == row).any()]
    out["load"] = (seconds, f"{full.id}: {full.n_systems} systems x {full.n_inputs} segments, {len(full.measures)} "
                            f"measures; WMT's systems: {len(chosen)} with MQM; pool {pool}")
    key = data.dataset_key(ds)
    metrics = TEST_METRICS

    def clear():
        # Cold pages: the cached calls and the shared table store emptied.
        st.cache_data.clear()
        store = data._store()
        with store._lock:
            store._items.clear()

    clear()
    seconds, board = _timed(lambda: data.leaderboard(ds, key, metrics, "mqm", "system", "pearson", pool, "",
                                                     n_resamples=k))
    out["page:overview"] = (seconds, f"{len(metrics)} metrics, {len(chosen)} systems, test {board.attrs['test']}")
    _log(out)

    clear()

    def significance_page():
        method = data._significance.default_test(ds, "system", "pearson")
        pkey = data.pairwise_key(key, metrics, "mqm", "system", "pearson", method, "greater", pool, "", k, 0)
        table = data.pairwise_uncorrected(ds, pkey)
        still = tables.correct_table(table.pvalue, "bonferroni", "row") < 0.05
        practice_data.cluster_frame(practice_data.clusters(table, still, 0.05, "bonferroni"))
        data.chance_groups(ds, key, metrics, "mqm", "system", "pearson", pool, "", 0.95, k, 0)
        return method

    seconds, method = _timed(significance_page)
    out["page:significance"] = (seconds, f"{len(metrics)} metrics, test {method}")
    _log(out)

    # The Overall average page: one coefficient for its tasks (human dimension x level): MQM and DA at the system
    # level (a segment-level task with 15 metrics is refused by the page: its PERM-BOTH table takes minutes).
    tasks = (("wmt22", "mqm", "system", "pearson", pool, None), ("wmt22", "wmt", "system", "pearson", pool, None))
    datasets = {"wmt22": ds}
    clear()
    seconds, result = _timed(lambda: du.average(datasets, du.dataset_keys(datasets), tasks, metrics, k, 0,
                                                "rescaled"))
    out["page:average"] = (seconds, f"2 tasks (mqm and wmt, system Pearson), rule {result.rule}, test {result.test}")
    _log(out)

    seconds, table = _timed(lambda: compare_all_pairs(ds, list(metrics), "mqm", level="system", coefficient="pearson",
                                                      method="wmt-perm-sys", n_resamples=k, rng=0, correction="none",
                                                      pool=pool))
    significant = int((table.pvalue < 0.05).sum())
    out["table:wmt-test"] = (seconds, f"{len(metrics) * (len(metrics) - 1) // 2} pairs, k={k}, "
                                      f"{significant} ordered pairs p < 0.05")
    _log(out)

    # mt-metrics-eval's WMT23-style tasks, point values only (as its TaskSet with k=0), then the rescaled average.
    def point_average():
        from metaeval_core.stats.coefficients import COEFFICIENT_RANGES
        from metaeval_core.stats.correlation import correlate

        specs = (("system", "pearson", pool), ("global", "pearson", "judged"),
                 ("input", "tie-calibrated-accuracy", "judged"), ("system", "pairwise-accuracy", pool))
        values = {m: [] for m in metrics}
        for level, coefficient, task_pool in specs:
            lo, hi = COEFFICIENT_RANGES[coefficient]
            for m in metrics:
                r = correlate(ds, m, "mqm", level=level, coefficient=coefficient, pool=task_pool).estimate
                values[m].append((r - lo) / (hi - lo))
        return {m: sum(v) / len(v) for m, v in values.items()}

    seconds, _ = _timed(point_average)
    out["average:point"] = (seconds, "4 tasks (system and segment Pearson, item-wise acc23, system accuracy), values "
                                     "rescaled and averaged")
    _log(out)
    return out


# -- mt-metrics-eval -------------------------------------------------------------------------------------------------
def mtme_side(folder: Path, k: int) -> dict[str, tuple[float, str]]:
    """mt-metrics-eval's own calls (imported here, never copied)."""
    import warnings

    warnings.filterwarnings("ignore")
    import numpy as np
    import scipy.stats
    from mt_metrics_eval import data, stats, tasks

    out: dict[str, tuple[float, str]] = {}
    seconds, evs = _timed(lambda: data.EvalSet("wmt22", LP, read_stored_metric_scores=True, path=str(folder)))
    out["load"] = (seconds, "EvalSet('wmt22', 'zh-en', read_stored_metric_scores=True)")
    for name in list(evs.metric_names):
        basename, refs = evs.ParseMetricName(name)
        seg = evs.Scores("seg", name)
        if seg:
            evs.AddMetric(basename, refs, "sys", {s: [float(np.mean(v))] for s, v in seg.items()}, repair=True)
    corrs = data.GetCorrelations(evs, "sys", {"refA"}, set(), False, False, "mqm", False, metric_format="full")
    chosen = {m: corrs[m] for m in TEST_METRICS}
    np.random.seed(0)
    seconds, res = _timed(lambda: data.CompareMetrics(chosen, scipy.stats.pearsonr, "none", k,
                                                      stats.PermutationSigDiffParams(block_size=k), 0.05))
    significant = int((res[1][np.triu_indices(len(chosen), 1)] < 0.05).sum())
    out["table:wmt-test"] = (seconds, f"CompareMetrics(pearsonr, k={k}), no early stopping, {significant} pairs p < 0.05")
    seconds, _ = _timed(lambda: data.CompareMetrics(chosen, scipy.stats.pearsonr, "none", k,
                                                    stats.PermutationSigDiffParams(block_size=100), 0.05))
    out["table:wmt-test-early"] = (seconds, "CompareMetrics(pearsonr, k), early stopping (block_size=100)")

    def average():
        task_list = tasks.TaskSet()
        for spec in (dict(level="sys", corr_fcn="pearson"), dict(level="seg", corr_fcn="pearson"),
                     dict(level="seg", corr_fcn="KendallWithTiesOpt", avg_by="item", perm_test="pairs",
                          corr_fcn_args={"sample_rate": 1.0}), dict(level="sys", corr_fcn="accuracy")):
            task_list.Append(tasks.Task("wmt22", LP, human=False, k=0, **spec))
        return task_list.Run(eval_set_dict={("wmt22", LP): evs}).AverageCorrs()

    seconds, averages = _timed(average)
    out["average:point"] = (seconds, f"TaskSet.Run(k=0) + AverageCorrs, {len(averages)} primary metrics")
    return out


def run_mtme(args) -> tuple[dict | None, str]:
    """mt-metrics-eval's column: in-process when importable, else in --mtme-python; (None, why) when neither."""
    try:
        import mt_metrics_eval  # noqa: F401

        return {c: list(v) for c, v in mtme_side(args.data, args.k).items()}, "in-process"
    except ImportError:
        pass
    if not args.mtme_python:
        return None, "mt_metrics_eval is not importable (give --mtme-python and --mtme-path to run it)"
    env = dict(os.environ)
    if args.mtme_path:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (args.mtme_path, env.get("PYTHONPATH", "")) if p)
    proc = subprocess.run([args.mtme_python, __file__, "--side", "mtme", "--data", str(args.data), "--k", str(args.k)],
                          capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return None, f"mt-metrics-eval run failed: {tail}"
    return json.loads(proc.stdout.strip().splitlines()[-1]), f"{args.mtme_python}"


# -- every level, real data against synthetic data of the same shape ----------------------------------------------
# Targets of issue 33 (WMT22 zh-en, 21 primary metrics, seconds): whole analyses, not one kernel.
# Resamples of the untimed warm-up call of each case (--levels).
WARM_UP_K = 40
LEVEL_TARGETS = {"compare:input": 10.0, "chance:input": 10.0, "intervals:input": 5.0, "intervals:global": 10.0,
                 "compare:global": 60.0, "chance:global": 20.0}


def _same_shape_datasets(dataset_id: str, lp: str | None, seed: int = 0, human: str | None = None):
    """The dataset's judged cells (WMT's systems, the gold or ``human``, primary metrics; systems every metric scores)
    and synthetic data of the same shape (continuous scores: no ties, no missing cell), both as plain Datasets, so
    that both go through the same code."""
    import numpy as np

    from metaeval_core.data.dataset import Dataset, Measure
    from metaeval_core.data.registry import load_dataset
    from metaeval_core.stats.correlation import correlation_inputs

    ds = load_dataset(dataset_id, lp=lp).with_default_systems()
    human, metrics = human or ds.conventions.gold, list(ds.conventions.primary_metrics)
    subset = ds.scored_by([human, *metrics])
    z = correlation_inputs(subset, human, human, level="input", pool="judged")[1]
    real = {human: Measure(human, "human", z)}
    for name in metrics:
        real[name] = Measure(name, "metric", correlation_inputs(subset, name, human, level="input", pool="judged")[0])
    rng = np.random.default_rng(seed)
    quality = rng.normal(size=z.shape)
    synthetic = {human: Measure(human, "human", quality + rng.normal(scale=0.5, size=z.shape))}
    for i, name in enumerate(metrics):
        synthetic[name] = Measure(name, "metric", quality + rng.normal(scale=0.5 + 0.1 * i, size=z.shape))
    systems = list(subset.systems)
    inputs = [f"i{j}" for j in range(z.shape[1])]
    return (Dataset("real", systems, inputs, real), Dataset("synthetic", systems, inputs, synthetic), human,
            metrics)


def _level_cases(dataset, human: str, metrics: list[str], k: int, heavy: bool):
    from metaeval_core.analyses.chance import chance_baselines
    from metaeval_core.stats.resampling import dataset_confidence_intervals
    from metaeval_core.stats.significance import compare_all_pairs

    def compare(level):
        return lambda: compare_all_pairs(dataset, metrics, human, level=level, coefficient="kendall",
                                         method="perm-both", n_resamples=k, rng=0)

    def chance(level):
        return lambda: chance_baselines(dataset, metrics, human, level=level, coefficient="kendall", n_resamples=k,
                                        rng=0)

    def intervals(level):
        # As the leaderboard, the CLI and the pages compute them: every metric's own interval, with the draws (and,
        # at the system and global levels, the human's side) shared.
        return lambda: dataset_confidence_intervals(dataset, metrics, human, level=level, coefficient="kendall",
                                                    method="boot-both", n_resamples=k, rng=0)

    cases = {"compare:input": compare("input"), "chance:input": chance("input"),
             "intervals:input": intervals("input"), "intervals:global": intervals("global")}
    if heavy:
        cases.update({"compare:global": compare("global"), "chance:global": chance("global")})
    return cases


def levels_main(args) -> None:
    """``--levels``: every level's analyses on the real data and on synthetic data of the same shape, one run."""
    from datetime import date

    real, synthetic, human, metrics = _same_shape_datasets(args.dataset, args.lp, human=args.human)
    n, m = real.matrix(human).shape
    meta = {"case": "_meta", "dataset": args.dataset, "lp": args.lp, "human": human, "systems": n, "inputs": m,
            "metrics": len(metrics), "k": args.k, "cores": os.cpu_count(), "loadavg": os.getloadavg(),
            "openblas_threads": os.environ.get("OPENBLAS_NUM_THREADS")}
    rows = [meta]
    print(json.dumps(meta), flush=True)
    real_cases = _level_cases(real, human, metrics, args.k, args.heavy)
    synthetic_cases = _level_cases(synthetic, human, metrics, args.k, args.heavy)
    chosen = [case for case in real_cases if not args.only or case in args.only.split(",")]
    # Warm-up, untimed: the first call of the process pays its one-time costs (lazy imports, first allocations,
    # ~0.2-0.3 s), which would otherwise land on whichever side runs first.
    warm = (_level_cases(real, human, metrics, WARM_UP_K, args.heavy),
            _level_cases(synthetic, human, metrics, WARM_UP_K, args.heavy))
    for case in chosen:
        for cases in warm[:1] if args.real_only else warm:
            cases[case]()
    for case in chosen:
        # CPU seconds too: on the shared machine the load stretches wall seconds (3x at load 12) far more than
        # this process's CPU seconds, which approach the idle machine's wall seconds with one BLAS thread.
        # Real and synthetic alternate, ``--repeat`` times each; the row holds the medians.
        runs = {"real": [], "synthetic": []}
        for _ in range(args.repeat):
            for side, cases in (("real", real_cases), ("synthetic", synthetic_cases)):
                if side == "synthetic" and args.real_only:
                    continue
                cpu, start = time.process_time(), time.perf_counter()
                cases[case]()
                runs[side].append((time.perf_counter() - start, time.process_time() - cpu))
        real_s, real_cpu = (statistics.median(v) for v in zip(*runs["real"]))
        synthetic_s = synthetic_cpu = None
        if runs["synthetic"]:
            synthetic_s, synthetic_cpu = (statistics.median(v) for v in zip(*runs["synthetic"]))
        target = LEVEL_TARGETS.get(case)
        row = {"case": case, "real_s": round(real_s, 2), "real_cpu_s": round(real_cpu, 2),
               "synthetic_s": None if synthetic_s is None else round(synthetic_s, 2),
               "ratio": None if synthetic_s is None else round(real_s / synthetic_s, 2),
               "synthetic_cpu_s": None if synthetic_cpu is None else round(synthetic_cpu, 2),
               "ratio_cpu": None if synthetic_cpu is None else round(real_cpu / synthetic_cpu, 2),
               "target_s": target, "meets_target": target is not None and real_s <= target,
               "repeats": args.repeat, "warmed_up": True,
               "real_cpu_runs": [round(c, 2) for _, c in runs["real"]],
               "synthetic_cpu_runs": [round(c, 2) for _, c in runs["synthetic"]],
               "loadavg_after": os.getloadavg()}
        rows.append(row)
        print(json.dumps(row), flush=True)
    if args.save:
        out = REPO / "benchmarks" / "results" / f"bench_wmt_levels_{date.today().isoformat()}.jsonl"
        with out.open("a") as handle:
            for row in rows:
                handle.write(json.dumps(row) + "\n")
        print(f"appended to {out.relative_to(REPO)}", file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--levels", action="store_true",
                        help="every level on the real data and on synthetic data of the same shape (ratios)")
    parser.add_argument("--dataset", default="wmt22-zhen", help="--levels: a built-in WMT dataset id")
    parser.add_argument("--lp", default=None, help="--levels: the language pair of a multi-pair dataset (wmt23)")
    parser.add_argument("--human", default=None,
                        help="--levels: a human measure other than the dataset's gold (WMT22 zh-en: wmt-appraise-z, "
                             "DA z-scores; WMT23: da-sqm)")
    parser.add_argument("--heavy", action="store_true", help="--levels: also global-level compare and chance")
    parser.add_argument("--only", default=None, help="--levels: comma-separated cases")
    parser.add_argument("--save", action="store_true", help="--levels: append the rows to benchmarks/results/")
    parser.add_argument("--real-only", action="store_true", help="--levels: skip the synthetic data of the same shape")
    parser.add_argument("--data", type=Path, default=None)
    parser.add_argument("--k", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3,
                        help="--levels: timed runs of each side, alternated (the row holds the medians)")
    parser.add_argument("--mtme-python", default=None)
    parser.add_argument("--mtme-path", default=None)
    parser.add_argument("--side", choices=("both", "mtme"), default="both", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.levels:
        levels_main(args)
        return
    if args.data is None:
        base = Path(os.environ.get("METAEVAL_DATA_DIR", REPO / "data" / "cache"))
        args.data = base / "wmt22-zhen"
    if not (args.data / "wmt22").is_dir():
        sys.exit(f"no WMT22 zh-en data at {args.data} (set METAEVAL_DATA_DIR or --data)")
    if args.side == "mtme":
        print(json.dumps({c: list(v) for c, v in mtme_side(args.data, args.k).items()}))
        return
    started = time.perf_counter()
    mine = metaeval_side(args.data, args.k)
    theirs, where = run_mtme(args)
    print(json.dumps({"case": "_meta", "cores": os.cpu_count(), "loadavg": os.getloadavg(), "k": args.k,
                      "mtme": where, "seconds": round(time.perf_counter() - started, 1)}))
    cases = list(dict.fromkeys([*mine, *(theirs or {})]))
    for case in cases:
        m = mine.get(case)
        t = (theirs or {}).get(case)
        row = {"case": case, "metaeval_s": None if m is None else round(m[0], 3),
               "mtme_s": None if t is None else round(t[0], 3),
               "metaeval": None if m is None else m[1], "mtme": None if t is None else t[1]}
        if case.startswith("page:"):
            row["meets_target"] = m is not None and m[0] < PAGE_TARGET_S
        print(json.dumps(row))


if __name__ == "__main__":
    main()
