"""`metaeval plan`'s up-front price against its measured time (issue 28: the estimate was 2.5x low).

Run: METAEVAL_DATA_DIR=... .venv/bin/python benchmarks/bench_plan_estimate.py [--quick]
Prints one JSON line per shape: dataset, designs (n_inputs x n_systems), trials, resamples, power, the estimate
(``estimated_plan_seconds``), the measured wall and CPU seconds of ``plan_judgments`` and their ratios to the
estimate (wanted: within 1.5x either way; the estimate is CPU seconds, which the shared machine's load stretches
into more wall seconds). Shapes: the demo and SummEval at the CLI's defaults, larger resample counts,
widths only, and WMT22 zh-en (1,875 judged inputs) with large input sizes.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

SHAPES = [
    # dataset, metric, human, input sizes, system sizes, trials, resamples, power
    ("demo", "metric.good", "human.quality", (10, 20, 50, 100), None, 20, 200, True),
    ("summeval", "rouge-1.f1", "expert.relevance", (10, 20, 50, 100), None, 20, 200, True),
    ("summeval", "rouge-1.f1", "expert.relevance", (10, 20, 50, 100), None, 20, 200, False),
    ("summeval", "rouge-1.f1", "expert.relevance", (50, 100), (8, 16), 10, 1000, True),
    ("summeval", "rouge-1.f1", "expert.relevance", (100,), None, 50, 500, True),
    ("summeval", "rouge-1.f1", "expert.relevance", (10, 20, 50, 100), None, 200, 200, True),
    ("summeval", "rouge-1.f1", "expert.relevance", (10,), (4,), 300, 100, True),
    ("wmt22-zhen", "BLEU-refA", "mqm", (500, 1875), None, 5, 200, True),
]


def run(shape) -> dict:
    from metaeval_core.analyses.practice import estimated_plan_seconds, plan_judgments
    from metaeval_core.data.registry import load_dataset

    name, metric, human, inputs, systems, trials, k, power = shape
    ds = load_dataset(name)
    sys_sizes = systems or (ds.rated_by(human).n_systems,)  # the systems the plan keeps
    designs = [(m, n) for n in sys_sizes for m in inputs]
    estimate = estimated_plan_seconds(designs, n_trials=trials, n_resamples=k, power=power)
    start, cpu = time.perf_counter(), time.process_time()
    plan_judgments(ds, metric, human, input_sizes=inputs, system_sizes=systems, n_trials=trials, n_resamples=k,
                   power=power, rng=0)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    return {"dataset": name, "designs": [f"{m}x{n}" for m, n in designs], "n_trials": trials, "n_resamples": k,
            "power": power, "estimated_s": round(estimate, 2), "measured_s": round(seconds, 2),
            "measured_cpu_s": round(cpu, 2), "ratio": round(seconds / estimate, 2), "ratio_cpu": round(cpu / estimate, 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the first three shapes only")
    parser.add_argument("--only", type=int, help="one shape by index")
    args = parser.parse_args()
    shapes = [SHAPES[args.only]] if args.only is not None else SHAPES[:3] if args.quick else SHAPES
    for shape in shapes:
        print(json.dumps(run(shape)), flush=True)


if __name__ == "__main__":
    main()
