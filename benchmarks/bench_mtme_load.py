"""Load time of the built-in mt-metrics-eval datasets: WMT22 zh-en (62 MB in 90 files) and WMT23 per language pair
(en-de, he-en, zh-en: each loads and checks only its own files, 28-64 MB).

Run:  .venv/bin/python benchmarks/bench_mtme_load.py [--repeat 3] [--dataset wmt23 --lp he-en]
      (METAEVAL_DATA_DIR: a folder holding it)

Prints one JSON line per measurement, CPU seconds (``process_time``: the machine's load does not count) and wall
seconds: ``cold`` loads in a fresh process (the imports, sha256 of every file + parsing), ``cached`` a second load in
the same process (the parsed score and per-rater files and each file's sha256 are kept per path, size and
modification time), and ``parse`` the reader's vectorised parse of the seg/sys score files alone (pyarrow's tab
reader; pandas' whitespace reader for other separators; the line-by-line path, which names a malformed line, runs
only on a file that is not one 'SYSTEM SCORE' pair per line).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from metaeval_core.data.registry import dataset_info, load_dataset  # noqa: E402

ID = "wmt22-zhen"
_COLD = """
import json, sys, time
sys.path.insert(0, {repo!r})
from metaeval_core.data.registry import load_dataset
c, w = time.process_time(), time.perf_counter()
load_dataset({id!r}, lp={lp!r})
c1, w1 = time.process_time(), time.perf_counter()
load_dataset({id!r}, lp={lp!r})
print(json.dumps({{"cold_cpu": c1 - c, "cold_wall": w1 - w, "cached_cpu": time.process_time() - c1,
                  "cached_wall": time.perf_counter() - w1}}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--dataset", default=ID, help="wmt22-zhen (default) or wmt23")
    parser.add_argument("--lp", default=None, help="with wmt23: en-de, he-en or zh-en (default zh-en)")
    args = parser.parse_args()
    dataset_id, lp = args.dataset, args.lp
    info = dataset_info(dataset_id)
    if not info.available:
        print(json.dumps({"skipped": info.reason}))
        return
    for _ in range(args.repeat):
        run = subprocess.run([sys.executable, "-c", _COLD.format(repo=str(REPO), id=dataset_id, lp=lp)],
                             capture_output=True, text=True, check=True)
        print(json.dumps({"what": "load", "dataset": dataset_id, "lp": lp,
                          **{k: round(v, 3) for k, v in json.loads(run.stdout).items()}}))
    from metaeval_core.data import mtme

    ds = load_dataset(dataset_id, lp=lp)
    root = next(info.data_dir / f.path for f in info.files if "/documents/" in f.path).parent.parent
    pair = lp or (ds.title.rsplit(", ", 1)[-1] if dataset_id != ID else "zh-en")
    files = sorted(p for level in ("seg", "sys") for pattern in (f"human-scores/{pair}.*.{level}.score",
                                                                 f"metric-scores/{pair}/*.{level}.score")
                   for p in root.glob(pattern))  # what the reader reads
    start = time.process_time()
    for path in files:
        mtme._parsed.__wrapped__(str(path), 0, 0)  # uncached
    print(json.dumps({"what": "parse", "files": len(files), "cpu": round(time.process_time() - start, 3)}))
    print(json.dumps({"what": "dataset", "lp": pair, "systems": ds.n_systems, "inputs": ds.n_inputs,
                      "measures": len(ds.measures)}))


if __name__ == "__main__":
    main()
