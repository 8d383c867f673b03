"""Reference numbers for tests/core/test_wmt_parity.py, computed with google-research/mt-metrics-eval's own code.

This script is ours; it only *calls* mt-metrics-eval (never copies it). It needs mt_metrics_eval importable, which
metaeval does not depend on, so it runs in a separate environment, e.g.::

    python -m venv /tmp/mtme-venv && /tmp/mtme-venv/bin/pip install numpy scipy absl-py dacite apache-beam
    git clone https://github.com/google-research/mt-metrics-eval /tmp/mtme-src   # any checkout
    PYTHONHASHSEED=0 PYTHONPATH=/tmp/mtme-src /tmp/mtme-venv/bin/python tests/reference/wmt22_zhen/make_reference.py \\
        --data /work/shared/datasets/wmt22-zhen --out tests/reference/wmt22_zhen/reference.json

``--data`` is the folder holding ``wmt22/`` (the mirror's ``wmt22-zhen``), which mt-metrics-eval reads as
``EvalSet('wmt22', 'zh-en', path=...)``. The output holds summary statistics only (correlations, epsilons,
p-values, averages), never the data.

What it computes, as WMT does (standard reference refA never a system, gold MQM, systems without gold dropped by
``data.GetCorrelations``; every metric whose references are a subset of {refA}):

* system level (``Correlation`` of system scores, ``average_by='none'``): Pearson and Kendall (scipy tau-b), without
  and with human translations (``include_human``: refB); the metrics' system scores are the means of their segment
  scores over all 1,875 segments (the mirror has no metric .sys.score files), added with ``EvalSet.AddMetric``;
* segment level, no grouping and item-wise: Kendall (tau-b), Pearson; item-wise ``KendallWithTiesOpt`` (acc23,
  ``sample_rate=1.0``) with its epsilon;
* soft pairwise accuracy (``Correlation.PairwiseConfidenceError``, 1,000 permutations, its fixed seed 4), on the
  systems in sorted order (it depends on their order when segment scores tie);
* WMT's system-level test: ``data.CompareMetrics(..., scipy.stats.pearsonr, k=K)`` on 15 metrics without early
  stopping (``PermutationSigDiffParams(block_size=K)``), ``np.random.seed(SEED)``: each pair's p-value;
* WMT's average: ``tasks.TaskSetResults.AverageCorrs`` over four tasks (system Pearson, segment Pearson, item-wise
  acc23, system pairwise accuracy), primary metrics, no human translations.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import scipy
import scipy.stats

LP = "zh-en"
STD_REF = "refA"
K = 2000
SEED = 12345
# The 15 metrics of the significance table (issue 25's size): reference-based and source-based, strong and weak.
TEST_METRICS = (
    "BLEU-refA", "chrF-refA", "BERTScore-refA", "BLEURT-20-refA", "COMET-20-refA", "COMET-22-refA",
    "MS-COMET-22-refA", "MATESE-refA", "MEE4-refA", "UniTE-refA", "YiSi-1-refA", "metricx_xxl_MQM_2020-refA",
    "COMETKiwi-src", "COMET-QE-src", "MS-COMET-QE-22-src",
)


def _git_commit(path: Path) -> str:
    try:
        return subprocess.run(["git", "-C", str(path), "rev-parse", "HEAD"], capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def _num(value) -> float | None:
    value = float(value)
    return value if np.isfinite(value) else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, help="the folder holding wmt22/ (the mirror's wmt22-zhen)")
    parser.add_argument("--out", required=True)
    parser.add_argument("--commit", default="", help="the mt-metrics-eval commit used (recorded)")
    args = parser.parse_args()

    from mt_metrics_eval import data, stats, tasks

    started = time.perf_counter()
    evs = data.EvalSet("wmt22", LP, read_stored_metric_scores=True, path=args.data)
    seg_metrics = sorted(m for m in evs.metric_names if evs.ReferencesUsed(m) <= {STD_REF}
                         and evs.Scores("seg", m))
    # System scores of a metric: the mean of its segment scores (WMT22 metrics also submitted their own).
    for name in seg_metrics:
        basename, refs = evs.ParseMetricName(name)
        seg = evs.Scores("seg", name)
        evs.AddMetric(basename, refs, "sys", {s: [float(np.mean(v))] for s, v in seg.items()}, repair=True)
    load_seconds = time.perf_counter() - started

    out: dict = {
        "source": {
            "repo": "google-research/mt-metrics-eval", "commit": args.commit, "python": platform.python_version(),
            "numpy": np.__version__, "scipy": scipy.__version__, "lp": LP, "gold": "mqm", "std_ref": STD_REF,
            "script": "tests/reference/wmt22_zhen/make_reference.py",
            "pythonhashseed": os.environ.get("PYTHONHASHSEED", ""),
        },
        "metrics": seg_metrics,
    }

    def correlations(level: str, include_human: bool, primary: bool = False):
        return data.GetCorrelations(evs, level, {STD_REF}, set(), include_human, False, "mqm", primary,
                                    metric_format="full")

    # -- systems ---------------------------------------------------------------------------------------------------
    systems = {}
    for label, human in (("without_human", False), ("with_human", True)):
        corrs = correlations("sys", human)
        first = next(iter(corrs.values()))
        names = sorted(evs.sys_names - {STD_REF} - (set() if human else evs.human_sys_names))
        gold = evs.Scores("sys", "mqm")
        systems[label] = sorted(s for s in names if gold.get(s) and gold[s][0] is not None)
        assert first.num_sys == len(systems[label]), (first.num_sys, systems[label])
        out.setdefault("system", {})[label] = {
            m: {"pearson": _num(c.Pearson()[0]), "kendall": _num(c.Kendall()[0]),
                "n": c.num_sys}
            for m, c in corrs.items()}
    out["systems"] = systems

    # -- segments --------------------------------------------------------------------------------------------------
    seg = correlations("seg", False)
    out["segment"] = {}
    gold_seg = evs.Scores("seg", "mqm")
    for m, c in seg.items():
        acc, epsilon, _ = stats.KendallWithTiesOpt(c.gold_scores, c.metric_scores, "acc23", c.num_sys, "item", 1.0)
        # SPA's pairwise p-values are one-sided per ordered pair, and with tied segment scores p(i > j) + p(j > i) is
        # not 1: the value depends on the systems' order, which EvalSet.Correlation takes from a set (the process's
        # hash seed). Here the systems are in sorted order (reference["systems"]), as the test reads them.
        ordered = systems["without_human"]
        metric_seg = evs.Scores("seg", m)
        spa = stats.Correlation(len(ordered), [g for s in ordered for g in gold_seg[s]],
                                [v for s in ordered for v in metric_seg[s]]).PairwiseConfidenceError()[0]
        out["segment"][m] = {
            "kendall_none": _num(c.Kendall("none")[0]), "kendall_item": _num(c.Kendall("item")[0]),
            "pearson_none": _num(c.Pearson("none")[0]), "acc23_item": _num(acc), "acc23_item_epsilon": _num(epsilon),
            "spa": _num(spa),
        }

    # -- WMT's system-level test -----------------------------------------------------------------------------------
    sys_corrs = correlations("sys", False)
    chosen = {m: sys_corrs[m] for m in TEST_METRICS}
    np.random.seed(SEED)
    t0 = time.perf_counter()
    ranks, matrix, _, _ = data.CompareMetrics(
        chosen, scipy.stats.pearsonr, "none", K, stats.PermutationSigDiffParams(block_size=K), 0.05)
    test_seconds = time.perf_counter() - t0
    order = list(ranks)
    pvalues = {f"{order[i]}>{order[j]}": float(matrix[i, j])
               for i in range(len(order)) for j in range(i + 1, len(order))}
    out["wmt_test"] = {"coefficient": "pearson", "k": K, "seed": SEED, "early_stopping": False,
                       "metrics": list(TEST_METRICS), "order": order, "pvalues": pvalues,
                       "clusters": {m: int(r[1]) for m, r in ranks.items()},
                       "significant_at_0.05": sum(p < 0.05 for p in pvalues.values()),
                       "seconds": round(test_seconds, 2)}

    # -- WMT's average over tasks (AverageCorrs, rescaled to [0, 1]) ---------------------------------------------------
    task_list = tasks.TaskSet()
    specs = [dict(level="sys", corr_fcn="pearson"), dict(level="seg", corr_fcn="pearson"),
             dict(level="seg", corr_fcn="KendallWithTiesOpt", avg_by="item", perm_test="pairs",
                  corr_fcn_args={"sample_rate": 1.0}),
             dict(level="sys", corr_fcn="accuracy")]
    for spec in specs:
        task_list.Append(tasks.Task("wmt22", LP, human=False, k=0, **spec))
    results = task_list.Run(eval_set_dict={("wmt22", LP): evs})
    # Display names drop the reference (BERTScore-refA and -refB are both 'BERTScore'): map back among the tasks' own.
    display = {evs.DisplayName(m, "spreadsheet"): m for m in seg_metrics}
    averages = results.AverageCorrs()
    out["average"] = {
        "tasks": [{k: (v if not isinstance(v, dict) else dict(v)) for k, v in spec.items()} for spec in specs],
        "ranges": [list(r.range) for r in results],
        "per_task": [{display.get(m, m): _num(r.Corr(m)) for m in r.metrics} for r in results],
        "averages": {display.get(m, m): _num(v) for m, v in averages.items()},
    }
    out["source"]["seconds"] = {"load": round(load_seconds, 2), "total": round(time.perf_counter() - started, 2)}
    Path(args.out).write_text(json.dumps(out, indent=1, sort_keys=False) + "\n", encoding="utf-8")
    print(f"wrote {args.out}: {len(seg_metrics)} metrics, {len(pvalues)} test pairs, "
          f"{time.perf_counter() - started:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
