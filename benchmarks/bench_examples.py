"""Speed of the examples behind a number (issue 31) at WMT scale: WMT22 zh-en, 1,875 segments x 14 rated systems.

Run:  METAEVAL_DATA_DIR=/path/to/mirror .venv/bin/python benchmarks/bench_examples.py [--n 5]

Times, once the dataset and its texts are loaded (what the dashboard's caches hold after the first view), each
level's item list with texts (system pairs with the humans' permutation p-values; each input's own Kendall; the
cells by rank gap), a two-metric comparison, and the records the panel shows. Prints one JSON line per case with
the median and minimum wall time in seconds over ``--n`` runs, and the target (1 s: the panel warm). Also the cold
load of the texts (20 files, sha256-checked). The machine's load moves these figures.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

TARGET_SECONDS = 1.0


def timed(function, n: int) -> tuple[float, float]:
    times = []
    for _ in range(n):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times), min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=5)
    args = parser.parse_args()

    from metaeval_core.analyses.examples import compare_examples, examples
    from metaeval_core.data.registry import load_dataset
    from metaeval_core.data.texts import example_texts

    dataset = load_dataset("wmt22-zhen").with_default_systems()
    start = time.perf_counter()
    texts = example_texts(dataset)
    print(json.dumps({"case": "texts cold load (wmt22-zhen)", "seconds": round(time.perf_counter() - start, 3)}))
    metric, other, human = "COMET-22-refA", "BLEU-refA", "mqm"
    cases = {
        "system pairs + p-values + records": lambda: examples(dataset, metric, human, level="system",
                                                             texts=texts).to_records(),
        "input level (1,875 inputs) + top 50 records": lambda: examples(dataset, metric, human, level="input",
                                                                        texts=texts).to_records(top=50),
        "global level (26,250 cells) + top 50 records": lambda: examples(dataset, metric, human, level="global",
                                                                         texts=texts).to_records(top=50),
        "input level, tie-calibrated accuracy": lambda: examples(dataset, metric, human, level="input",
                                                                 coefficient="tie-calibrated-accuracy"),
        "comparison COMET-22 vs BLEU, input level": lambda: compare_examples(dataset, metric, other, human,
                                                                             level="input", texts=texts),
    }
    for name, function in cases.items():
        median, fastest = timed(function, args.n)
        print(json.dumps({"case": name, "median_s": round(median, 3), "min_s": round(fastest, 3),
                          "target_s": TARGET_SECONDS, "ok": median < TARGET_SECONDS}))


if __name__ == "__main__":
    main()
