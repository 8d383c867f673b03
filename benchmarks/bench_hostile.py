"""Hostile input shapes (issue 13), each in its own child process: time, peak RSS and how it ended.

Run: .venv/bin/python benchmarks/bench_hostile.py [--only NAME] [--timeout SECONDS]
Prints one aligned row per case (and one JSON line per case with --json): wall seconds, the child's peak RSS
(``os.wait4``'s ru_maxrss), its exit code and the first line it printed. Every child runs with a 4 GB address
space (RLIMIT_AS) so a regression fails with a MemoryError instead of swapping the shared machine.

Cases: 10,000 systems x 2 inputs (the quadratic pair blow-up) through the CLI's ``delta --grid deciles`` and
through the pair functions the Overview's headline calls; the same at the pair-system limit (1,000 systems);
a 200,000-column wide CSV; scores near 1e308; ``--n-resamples`` 10^9 and 1; the hostile pickles of
tests/core/test_safe_pickle.py. Issue 23: chance baselines and leave-one-system-out influence at the upload's
2,000-system limit (each level; tie calibration refused up front), Kendall tests at that limit, and the What-if
merge of two legal files (2,000 systems x 2 inputs and 2 systems x 200,000 inputs) through the upload reader,
refused before allocating.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
ADDRESS_SPACE = 4 * 2**30


def long_csv(path: Path, n_systems: int, n_inputs: int, *, scale: float = 1.0, seed: int = 0) -> Path:
    """A long CSV: one metric and one human measure per (system, input)."""
    rng = np.random.default_rng(seed)
    with open(path, "w") as handle:
        handle.write("system,input,measure,score\n")
        for s in range(n_systems):
            for i in range(n_inputs):
                handle.write(f"s{s},i{i},metric,{rng.random() * scale!r}\ns{s},i{i},human,{rng.random():.3f}\n")
    return path


def wide_csv(path: Path, n_columns: int) -> Path:
    """A wide CSV with ``n_columns`` metric columns over 4 systems x 2 inputs (3 MB at 200,000)."""
    rng = np.random.default_rng(1)
    header = ["system", "input", "human"] + [f"m{k}" for k in range(n_columns)]
    rows = [",".join(header)]
    for s in range(4):
        for i in range(2):
            values = np.round(rng.random(n_columns), 2).astype(str)
            rows.append(",".join([f"s{s}", f"i{i}", f"{rng.random():.2f}", *values]))
    path.write_text("\n".join(rows) + "\n")
    return path


PAIR_HEADLINE = """
import sys
from metaeval_core.data.registry import load_dataset
from metaeval_core.stats import pairs
ds = load_dataset(sys.argv[1], human_measures=["human"])
x, z, _ = pairs.dataset_means(ds, "metric", "human")
try:
    every = pairs.rsys_delta(x, z)
    grid = pairs.decile_grid(x, z)
    curve = pairs.delta_curve(x, z, n_points=200)
    ci = pairs.dataset_delta_confidence_interval(ds, "metric", "human", upper=float(grid.thresholds[1]),
                                                 n_resamples=200, rng=0)
except ValueError as error:
    print("refused:", error)
else:
    print(f"rSYS {every.estimate:.3f} on {every.n_pairs:,} pairs; closest 20% {grid.tau[0, 1]:.3f}; "
          f"CI [{ci.low:.3f}, {ci.high:.3f}]")
"""

MERGE_CHILD = """
import sys
from metaeval_core.data.registry import load_dataset
from metaeval_core.data.whatif import MergeError, describe_merge
base = load_dataset(sys.argv[1], human_measures=["human"])
extra = load_dataset(sys.argv[2], human_measures=["human"])
try:
    report = describe_merge(base, extra)
except MergeError as error:
    print("refused:", error)
else:
    print("loaded:", report.summary())
"""

TESTS_CHILD = """
import sys
import numpy as np
from metaeval_core.stats.significance import compare_metrics
rng = np.random.default_rng(0)
z = np.round(rng.random((2000, int(sys.argv[3]))), 1)
x, y = z + rng.random(z.shape), rng.random(z.shape)
r = compare_metrics(x, y, z, level=sys.argv[1], coefficient="kendall", method=sys.argv[2], n_resamples=1000, rng=0)
print(f"loaded: p = {r.pvalue:.4f}")
"""

PICKLE_CHILD = """
import sys
from metaeval_core.data.dataset import DatasetError
from metaeval_core.data.safe_pickle import safe_load
try:
    value = safe_load(sys.stdin.buffer.read())
except DatasetError as error:
    print("refused:", str(error).splitlines()[0])
else:
    import numpy as np
    if isinstance(value, np.dtype):
        np.zeros(4, dtype=value).sum()
    print("loaded:", type(value).__name__)
"""


def cases(tmp: Path) -> dict[str, tuple[list[str], bytes | None, dict]]:
    """Name -> (argv, stdin bytes, extra environment)."""
    py = sys.executable
    cli = [py, "-m", "metaeval_core"]
    big = long_csv(tmp / "systems_10000x2.csv", 10_000, 2)
    cap = long_csv(tmp / "systems_1000x2.csv", 1_000, 2, seed=2)
    small = long_csv(tmp / "systems_8x5.csv", 8, 5, seed=3)
    huge = long_csv(tmp / "values_1e308.csv", 12, 20, scale=1.7e308, seed=4)
    wide = wide_csv(tmp / "wide_200000.csv", 200_000)
    limit = long_csv(tmp / "systems_2000x2.csv", 2_000, 2, seed=5)
    long_inputs = long_csv(tmp / "inputs_2x200000.csv", 2, 200_000, seed=6)
    delta = ["delta", "--human-measures", "human", "--metric", "metric", "--human", "human"]
    uploads_raised = {"METAEVAL_MAX_UPLOAD_SYSTEMS": "20000"}
    correlate = ["correlate", "--human-measures", "human", "--metrics", "metric", "--human", "human"]
    out: dict[str, tuple[list[str], bytes | None, dict]] = {
        "systems-10000x2: cli delta --grid deciles": ([*cli, *delta, "--dataset", str(big), "--grid", "deciles"],
                                                      None, {}),
        # With the upload's own system limit raised, the pair functions' bound is what stops it.
        "systems-10000x2, upload limit raised: cli delta --grid deciles": (
            [*cli, *delta, "--dataset", str(big), "--grid", "deciles"], None, uploads_raised),
        "systems-10000x2, upload limit raised: overview headline calls": (
            [py, "-c", PAIR_HEADLINE, str(big)], None, uploads_raised),
        "systems-1000x2 (the limit): cli delta --grid deciles": (
            [*cli, *delta, "--dataset", str(cap), "--grid", "deciles"], None, {}),
        "systems-1000x2 (the limit): headline + 200-resample CI": ([py, "-c", PAIR_HEADLINE, str(cap)], None, {}),
        "systems-10000x2, both limits raised to 10,000: cli delta": (
            [*cli, *delta, "--dataset", str(big)], None, {**uploads_raised, "METAEVAL_MAX_PAIR_SYSTEMS": "10000"}),
        "wide-200000-columns: cli describe": ([*cli, "describe", "--dataset", str(wide), "--human-measures",
                                               "human"], None, {}),
        "values-1e308: cli correlate --ci boot-inputs": (
            [*cli, *correlate, "--dataset", str(huge), "--ci", "boot-inputs", "--n-resamples", "200"], None, {}),
        "cli --n-resamples 1000000000": ([*cli, *correlate, "--dataset", str(small), "--ci", "boot-inputs",
                                          "--n-resamples", "1000000000"], None, {}),
        "cli --n-resamples 10000 (the cap), 1000 systems x 2, boot-both": (
            [*cli, *correlate, "--dataset", str(cap), "--ci", "boot-both", "--n-resamples", "10000"], None, {}),
        "cli --n-resamples 1": ([*cli, *correlate, "--dataset", str(small), "--ci", "boot-inputs",
                                 "--n-resamples", "1"], None, {}),
        "cli METAEVAL_MAX_UPLOAD_MB=inf": ([*cli, "describe", "--dataset", str(small), "--human-measures", "human"],
                                           None, {"METAEVAL_MAX_UPLOAD_MB": "inf"}),
    }
    chance = ["chance", "--human-measures", "human", "--metrics", "metric", "--human", "human", "--dataset", str(limit)]
    for level in ("system", "input", "global"):
        for coefficient in ("kendall", "pairwise-accuracy", "tie-calibrated-accuracy"):
            out[f"systems-2000x2 (the limit): cli chance {level} {coefficient}"] = (
                [*cli, *chance, "--level", level, "--coefficient", coefficient], None, {})
    influence = ["influence", "--human-measures", "human", "--metric", "metric", "--human", "human", "--dataset",
                 str(limit)]
    for level in ("system", "input"):
        out[f"systems-2000x2 (the limit): cli influence {level} kendall"] = (
            [*cli, *influence, "--level", level], None, {})
    out["systems-2000x2 (the limit): cli correlate soft-pairwise-accuracy"] = (
        [*cli, *correlate, "--dataset", str(limit), "--coefficient", "soft-pairwise-accuracy"], None, {})
    for level, method, width in (("system", "perm-both", 2), ("system", "boot-both", 2), ("input", "perm-both", 2),
                                 ("input", "boot-both", 2), ("input", "perm-both", 20)):
        out[f"systems-2000x{width}: compare_metrics {level} kendall {method}, k=1000"] = (
            [py, "-c", TESTS_CHILD, level, method, str(width)], None, {})
    out["what-if merge 2000x2 + 2x200000 (both legal): describe_merge"] = (
        [py, "-c", MERGE_CHILD, str(limit), str(long_inputs)], None, {})
    from tests.core.test_safe_pickle import hostile_pickles

    for name, data in hostile_pickles().items():
        out[f"pickle {name} ({len(data)} bytes)"] = ([py, "-c", PICKLE_CHILD], data, {})
    return out


def _limit_address_space() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


# Runs argv as its child and reports that child's exit code and peak RSS (os.wait4: one process's own rusage).
_WRAPPER = """
import json, os, subprocess, sys
proc = subprocess.Popen(json.loads(sys.argv[1]), stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
output = proc.stdout.read()
_, status, usage = os.wait4(proc.pid, 0)
sys.stdout.buffer.write(output)
print(f"\\n@@ {usage.ru_maxrss / 1024:.0f} {os.waitstatus_to_exitcode(status)}")
"""
_SAID = ("error", "internal error", "refused", "loaded", "rSYS", "Traceback", "Segmentation", "MemoryError")


def run(argv: list[str], stdin: bytes | None, env: dict, timeout: float) -> dict:
    """Run one case under the 4 GB address-space limit: wall seconds, peak RSS (MB), exit code, first message."""
    environ = {k: v for k, v in os.environ.items() if k != "METAEVAL_DEBUG"} | env
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", _WRAPPER, json.dumps(argv)], cwd=REPO, env=environ,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            preexec_fn=_limit_address_space, start_new_session=True)
    try:
        output, _ = proc.communicate(stdin or b"", timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)  # the wrapper and the case it runs (their own session)
        proc.communicate()
        return {"seconds": round(time.perf_counter() - start, 2), "peak_mb": None, "exit": "timeout",
                "said": f"stopped after {timeout:.0f} s"}
    seconds = time.perf_counter() - start
    lines = [ln for ln in output.decode(errors="replace").splitlines() if ln.strip()]
    peak, code = None, proc.returncode
    if lines and lines[-1].startswith("@@ "):
        _, peak_text, code_text = lines.pop().split()
        peak, code = int(peak_text), int(code_text)
    said = next((ln for ln in lines if ln.startswith(_SAID)), lines[-1] if lines else "")
    return {"seconds": round(seconds, 2), "peak_mb": peak, "exit": code, "said": said[:160]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=None, help="run the cases whose name contains this text")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per case (default 120)")
    parser.add_argument("--json", action="store_true", help="one JSON line per case instead of the table")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench_hostile_") as folder:
        table = cases(Path(folder))
        if not args.json:
            print(f"{'case':<60} {'s':>7} {'peak MB':>8} {'exit':>7}  outcome")
        for name, (argv, stdin, env) in table.items():
            if args.only and args.only not in name:
                continue
            r = run(argv, stdin, env, args.timeout)
            if args.json:
                print(json.dumps({"case": name, **r}), flush=True)
            else:
                print(f"{name:<60} {r['seconds']:>7.2f} {r['peak_mb'] if r['peak_mb'] is not None else '-':>8} "
                      f"{r['exit']!s:>7}  {r['said']}", flush=True)


if __name__ == "__main__":
    main()
