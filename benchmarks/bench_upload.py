"""Time the upload parser on a 192,000-row long CSV (16 systems x 2,000 inputs x 6 measures).

Run: .venv/bin/python benchmarks/bench_upload.py
Prints one JSON line per case: rows, bytes, best and median seconds over repeats.
"""

from __future__ import annotations

import io
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from metaeval_core.data.synthetic import SyntheticSpec, synthetic_dataset  # noqa: E402
from metaeval_core.data.upload import read_user_file  # noqa: E402


def long_csv() -> bytes:
    big = synthetic_dataset(SyntheticSpec(n_systems=16, n_judged=100, n_unjudged=1900))
    grid_s, grid_i = np.meshgrid(np.arange(big.n_systems), np.arange(big.n_inputs), indexing="ij")
    parts = [
        pd.DataFrame({"system": np.asarray(big.systems)[grid_s.ravel()],
                      "input": np.asarray(big.inputs)[grid_i.ravel()], "measure": name, "score": m.scores.ravel()})
        for name, m in big.measures.items()
    ]
    frame = pd.concat(parts).dropna(subset=["score"])
    buffer = io.StringIO()
    frame.to_csv(buffer, index=False)
    return buffer.getvalue().encode()


def main(repeats: int = 5) -> None:
    raw = long_csv()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        read_user_file(raw, name="big.csv")
        times.append(time.perf_counter() - start)
    print(json.dumps({"case": "long CSV upload", "rows": raw.count(b"\n") - 1, "bytes": len(raw),
                      "best_s": round(min(times), 3), "median_s": round(statistics.median(times), 3),
                      "target_s": 2.0}))


if __name__ == "__main__":
    main()
