"""Start-up time of the command line: `metaeval --help`, a subcommand's help, bare `metaeval` and `--version`.

Run:  .venv/bin/python benchmarks/bench_cli_startup.py [--n 7]

Each command runs in a fresh interpreter (as a user types it: ``python -m metaeval_core ...``); prints one JSON
line per command with the median and minimum wall time in seconds over ``--n`` runs, and the target (0.5 s for
``--help``, issue 22). The machine's load moves these figures; compare runs made on the same machine. Reference:
before the lazy imports (2026-11-26) `--help` took 2.5-5.7 s on the 2-core CI machine, as numpy, scipy and
pandas were imported to build the parser.
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
COMMANDS = {
    "metaeval --help": ["--help"],
    "metaeval correlate --help": ["correlate", "--help"],
    "metaeval judges --help": ["judges", "--help"],
    "metaeval --version": ["--version"],
    "metaeval (bare)": [],
}
TARGET_SECONDS = 0.5


def time_command(argv: list[str], n: int) -> list[float]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    times = []
    for _ in range(n):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "metaeval_core", *argv], cwd=REPO, env=env, capture_output=True,
                       timeout=120)
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=7, help="runs per command (default 7)")
    n = parser.parse_args().n
    time_command(["--version"], 1)  # warm the file cache once
    python = []
    for _ in range(n):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], capture_output=True)
        python.append(time.perf_counter() - start)
    print(json.dumps({"command": "python -c pass (interpreter alone)", "median_s": round(statistics.median(python), 3),
                      "min_s": round(min(python), 3)}))
    for label, argv in COMMANDS.items():
        times = time_command(argv, n)
        print(json.dumps({"command": label, "median_s": round(statistics.median(times), 3),
                          "min_s": round(min(times), 3), "target_s": TARGET_SECONDS,
                          "under_target": statistics.median(times) < TARGET_SECONDS}))


if __name__ == "__main__":
    main()
