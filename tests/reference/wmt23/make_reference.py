"""Reference numbers for tests/core/test_wmt23_suites.py and tests/core/test_pdp.py, from google-research/mt-metrics-eval.

This script is ours; it only *calls* mt-metrics-eval (never copies it). It needs mt_metrics_eval importable, which
metaeval does not depend on, so it runs in a separate environment, e.g.::

    python -m venv /tmp/mtme-venv && /tmp/mtme-venv/bin/pip install numpy scipy dacite absl-py
    git clone https://github.com/google-research/mt-metrics-eval /tmp/mtme-src   # any checkout
    mkdir -p /tmp/mtme-stub/apache_beam && touch /tmp/mtme-stub/apache_beam/__init__.py   # beam: parallel runs only
    PYTHONHASHSEED=0 PYTHONPATH=/tmp/mtme-src:/tmp/mtme-stub /tmp/mtme-venv/bin/python \\
        tests/reference/wmt23/make_reference.py --data /work/shared/datasets --out tests/reference/wmt23/reference.json

``--data`` is the folder holding ``wmt23/wmt23/`` and ``wmt22-zhen/wmt22/`` (the data mirror). The output holds
summary statistics only (correlations, accuracies, averages), never the data.

What it computes:

* ``suites``: ``tasks.WMT23()`` and ``tasks.WMT24OnWMT23()`` (k=0: point values, no resampling), run with
  ``TaskSet.Run`` on ``EvalSet('wmt23', lp, read_stored_metric_scores=True)``; per task its attributes and each
  metric's value (``TaskResults.Corr``), and ``TaskSetResults.AverageCorrs(weights)`` with the suite's weights.
  Metric names are mt-metrics-eval's display names (``[noref]`` marks a reference-free metric);
* ``pdp``: ``Correlation.Pearson(average_by, pdp=True)`` with the standard gold and reference (WMT23: human outputs
  included for he-en as WMT23's tasks do, outliers left out), at the segment level grouped by ``item`` and at the
  system level (``average_by='none'``), plus plain Pearson at both, for every metric using the standard reference
  or none; on WMT23 en-de, he-en, zh-en and WMT22 zh-en (system level there: means of the segment scores, as
  tests/reference/wmt22_zhen does, since that mirror has no metric .sys.score files);
* ``significance`` (``--significance K``; written into an existing ``--out`` without recomputing the rest with
  ``--only-significance``): both suites run with ``k=K`` permutation draws per task and metric pair
  (``np.random.seed(--seed)`` before each suite; mt-metrics-eval draws from numpy's global generator), on the
  primary metrics restricted to ``--sig-metrics`` (``EvalSet.SetPrimaryMetrics``: every pair of metrics is tested
  in every task, 15 pairs for 6 metrics, so all 32 would take hours on 2 cores); per task its ranks
  (``TaskResults.corr_ranks``) and significance matrix, and ``TaskSetResults.AverageCorrMatrix(weights)``: the
  suite's cluster ranks and its p-value matrix (rows/columns in order of decreasing average; the dump sorts
  ``average``'s keys). Recorded with ``--significance 50 --sig-metrics
  XCOMET-Ensemble,MetricX-23,CometKiwi,COMET,BLEURT-20,BLEU --only-significance`` (19 + 29 minutes, 2 shared cores).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import time
from pathlib import Path

import numpy as np
import scipy


def _num(value) -> float | None:
    value = float(value)
    return value if np.isfinite(value) else None


def _git_commit(path: str) -> str:
    try:
        return subprocess.run(["git", "-C", path, "rev-parse", "HEAD"], capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--commit", default="", help="the mt-metrics-eval commit used (recorded)")
    parser.add_argument("--skip-suites", action="store_true")
    parser.add_argument("--significance", type=int, default=0, help="k of the significance runs (0: none)")
    parser.add_argument("--seed", type=int, default=20231)
    parser.add_argument("--sig-metrics", default="XCOMET-Ensemble,MetricX-23,COMET,BLEURT-20,BLEU,chrF",
                        help="comma-separated base names of the metrics of the significance runs")
    parser.add_argument("--only-significance", action="store_true",
                        help="read --out, add or replace its 'significance' entry only")
    args = parser.parse_args()

    from mt_metrics_eval import data, tasks

    out: dict = {"source": {
        "repo": "google-research/mt-metrics-eval", "commit": args.commit, "python": platform.python_version(),
        "numpy": np.__version__, "scipy": scipy.__version__, "script": "tests/reference/wmt23/make_reference.py",
        "pythonhashseed": os.environ.get("PYTHONHASHSEED", "")}}
    root23 = os.path.join(args.data, "wmt23")
    evs = {("wmt23", lp): data.EvalSet("wmt23", lp, read_stored_metric_scores=True, path=root23)
           for lp in ("en-de", "he-en", "zh-en")}

    if args.only_significance:
        kept = json.loads(Path(args.out).read_text(encoding="utf-8"))
        kept["significance"] = _significance(args, evs)
        Path(args.out).write_text(json.dumps(kept, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        return

    if not args.skip_suites:
        out["suites"] = {}
        for name, make in (("wmt23", tasks.WMT23), ("wmt24", tasks.WMT24OnWMT23)):
            started = time.perf_counter()
            task_set, weights = make(k=0)
            results = task_set.Run(eval_set_dict=evs)
            average = results.AverageCorrs(weights)
            out["suites"][name] = {
                "weights": weights,
                "tasks": [{"attrs": r.attr_vals, "range": list(r.range),
                           "values": {m: _num(r.Corr(m)) for m in r.metrics}} for r in results],
                "average": {m: _num(v) for m, v in average.items()},
                "seconds": time.perf_counter() - started,
            }
            print(name, "done", round(time.perf_counter() - started, 1), "s", flush=True)

    # -- PDP -------------------------------------------------------------------------------------------------------
    out["pdp"] = {}
    root22 = os.path.join(args.data, "wmt22-zhen")
    sets = [("wmt23", lp, evs[("wmt23", lp)], lp == "he-en") for lp in ("en-de", "he-en", "zh-en")]
    evs22 = data.EvalSet("wmt22", "zh-en", read_stored_metric_scores=True, path=root22)
    for name in list(evs22.metric_names):  # system scores = means of the segment scores (no .sys files there)
        seg = evs22.Scores("seg", name)
        if seg and evs22.ReferencesUsed(name) <= {"refA"}:
            basename, refs = evs22.ParseMetricName(name)
            evs22.AddMetric(basename, refs, "sys", {s: [float(np.mean(v))] for s, v in seg.items()}, repair=True)
    sets.append(("wmt22", "zh-en", evs22, False))
    for test_set, lp, e, human in sets:
        started = time.perf_counter()
        refs = {e.std_ref}
        block = {"std_ref": e.std_ref, "include_human": human, "segment": {}, "system": {}}
        seg = data.GetCorrelations(e, "seg", refs, set(), human, False, "mqm", False, metric_format="full")
        for m, c in seg.items():
            block["segment"][m] = {"pdp_item": _num(c.Pearson("item", pdp=True)[0]),
                                   "pearson_item": _num(c.Pearson("item")[0]),
                                   "pearson_none": _num(c.Pearson("none")[0]), "num_sys": c.num_sys}
        sys_ = data.GetCorrelations(e, "sys", refs, set(), human, False, "mqm", False, metric_format="full")
        for m, c in sys_.items():
            block["system"][m] = {"pdp": _num(c.Pearson("none", pdp=True)[0]), "pearson": _num(c.Pearson()[0]),
                                  "num_sys": c.num_sys}
        out["pdp"][f"{test_set}/{lp}"] = block
        print("pdp", test_set, lp, round(time.perf_counter() - started, 1), "s", flush=True)

    if args.significance:
        out["significance"] = _significance(args, evs)
    Path(args.out).write_text(json.dumps(out, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def _significance(args, evs) -> dict:
    """Both suites with k = args.significance draws on the metrics of --sig-metrics (see the module docstring)."""
    from mt_metrics_eval import tasks

    subset = set(args.sig_metrics.split(","))
    for e in evs.values():
        e.SetPrimaryMetrics(subset)
    block = {"k": args.significance, "seed": args.seed, "metrics": sorted(subset), "pval": 0.05, "suites": {}}
    for name, make in (("wmt23", tasks.WMT23), ("wmt24", tasks.WMT24OnWMT23)):
        started = time.perf_counter()
        np.random.seed(args.seed)
        task_set, weights = make(k=args.significance)
        results = task_set.Run(eval_set_dict=evs)
        corr_ranks, matrix = results.AverageCorrMatrix(weights, pval=0.05)
        block["suites"][name] = {
            "weights": weights,
            "tasks": [{"attrs": r.attr_vals, "ranks": {m: [_num(c), int(k)] for m, (c, k) in r.corr_ranks.items()},
                       "matrix": [[_num(v) for v in row] for row in r.matrix]} for r in results],
            "average": {m: [_num(c), int(k)] for m, (c, k) in corr_ranks.items()},
            "matrix": [[_num(v) for v in row] for row in matrix],
            "seconds": time.perf_counter() - started,
        }
        print("significance", name, "done", round(time.perf_counter() - started, 1), "s", flush=True)
    return block


if __name__ == "__main__":
    main()
