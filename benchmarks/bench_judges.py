"""Speed of the pairwise-judges statistics: 1,000 bootstrap resamples of every judge on every LLMBar pair set.

Run:  .venv/bin/python benchmarks/bench_judges.py [--n-resamples 1000] [--repeat 5]

Target (issue 21): the bootstrap of all judges (26 on each LLMBar set, 8 on the other three: 154 judge x set
cells, both orders) on all eight pair sets under 1 s. Times, median of ``--repeat`` runs after one warm-up, on
LLMBar from METAEVAL_DATA_DIR (else data/cache/):

* ``accuracy-average``: :func:`judge_agreement`, accuracy averaged over both orders, per pair set;
* ``kappa-average``: the same for Cohen's kappa (confusion tables per resample);
* ``consistency``: :func:`positional_bias` (consistency and first-position preference);
* ``cli-records``: everything ``metaeval judges --dataset llmbar`` computes (accuracy in each order and in both,
  kappa, consistency), i.e. five bootstraps per set;
* ``compare-natural``: all 325 paired permutation tests between the 26 judges on Natural.

Prints one JSON line per measurement: seconds (median, min), resamples, judge x set cells, the target where one
applies. Loading the dataset is not timed.

``--synthetic-items N`` adds one run on a synthetic upload-sized dataset (N items, 3 annotators, 5 judges, both
orders): accuracy and kappa intervals, all judge-pair tests and the chance baselines, with the peak RSS (the
draws come in blocks, so memory stays far below ``n_resamples x N`` numbers).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from metaeval_core.data.registry import DEFAULT_DATA_DIR  # noqa: E402
from metaeval_core.judges import compare_judges, judge_agreement, load_pairwise, positional_bias  # noqa: E402


def _time(func, repeat: int) -> tuple[float, float]:
    func()  # warm-up
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return statistics.median(times), min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-resamples", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--synthetic-items", type=int, default=0)
    args = parser.parse_args()
    if args.synthetic_items:
        _synthetic(args.synthetic_items, args.n_resamples)
    configured = os.environ.get("METAEVAL_DATA_DIR")
    data = load_pairwise("llmbar", data_dir=Path(configured) if configured else DEFAULT_DATA_DIR)
    parts = [(name, data.select_pair_set(name)) for name in data.pair_sets]
    judges = {name: part.judges_of(name) for name, part in parts}
    cells = sum(len(j) for j in judges.values())
    k = args.n_resamples

    def agreement(statistic: str):
        return lambda: [judge_agreement(part, judges=judges[name], statistic=statistic, order="average",
                                        n_resamples=k, rng=0) for name, part in parts]

    def consistency():
        return [positional_bias(part, judges=judges[name], n_resamples=k, rng=0) for name, part in parts]

    def cli_records():
        from metaeval_core.cli.judges import judge_records

        return judge_records(data, n_resamples=k, seed=0)

    natural = dict(parts)["Natural"]
    runs = {
        "accuracy-average": (agreement("accuracy"), 1.0),
        "kappa-average": (agreement("kappa"), None),
        "consistency": (consistency, None),
        "cli-records": (cli_records, None),
        "compare-natural": (lambda: compare_judges(natural, judges=judges["Natural"], n_resamples=k, rng=0), None),
    }
    for label, (func, target) in runs.items():
        median, best = _time(func, args.repeat)
        record = {"bench": "judges", "what": label, "seconds_median": round(median, 4), "seconds_min": round(best, 4),
                  "n_resamples": k, "judge_set_cells": cells if label != "compare-natural" else len(judges["Natural"]),
                  "pair_sets": len(parts) if label != "compare-natural" else 1, "repeat": args.repeat}
        if target is not None:
            record.update(target_seconds=target, meets_target=median < target)
        print(json.dumps(record), flush=True)


def _synthetic(n: int, k: int) -> None:
    import resource

    from metaeval_core.judges import chance_baseline
    from tests.core.judges.helpers import random_data

    data = random_data(0, n=n, n_humans=3, n_judges=5)
    for label, func in (("large-accuracy-kappa", lambda: [judge_agreement(data, statistic=s, order="average",
                                                                           n_resamples=k, rng=0)
                                                          for s in ("accuracy", "kappa")]),
                        ("large-compare", lambda: compare_judges(data, n_resamples=k, rng=0)),
                        ("large-chance", lambda: chance_baseline(data, n_resamples=k, rng=0))):
        start = time.perf_counter()
        func()
        print(json.dumps({"bench": "judges", "what": label, "seconds": round(time.perf_counter() - start, 2),
                          "items": n, "judges": 5, "n_resamples": k,
                          "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}),
              flush=True)


if __name__ == "__main__":
    main()
