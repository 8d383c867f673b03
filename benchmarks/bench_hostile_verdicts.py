"""Time and peak memory of the verdict readers and the judges analyses on the largest legal and hostile inputs
(issue 28). Each case runs in a fresh child process (4 GB address space) so its peak RSS is its own.

Run: .venv/bin/python benchmarks/bench_hostile_verdicts.py [--only NAME]
Prints one JSON line per case: the case, the file's bytes, the outcome (accepted / ran, or the one-line refusal),
seconds (generating the file included), for the readers the read's own wall and CPU seconds (read_s, read_cpu_s),
and the child's peak RSS in MB. Cases: the largest legal verdict CSV (a million items x 2 raters = the
2,000,000-row limit, 32 MB) read, and its leaderboard (refused at once, then run with the resamples it names);
the largest legal JSON Lines verdict file (50 MB limit) read; the JSON Lines of many distinct keys (1.2 MB once
took 35 s and 2.6 GB); 2,000 systems ranked from 3,000 items (items x systems^2 once: 89 GiB); Davidson on a
sparse design (an 8.7 KB file once ran 230 s); 1,999 judges compared (150 s once).
"""

from __future__ import annotations

import argparse
import json
import re
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


def million_csv(folder: Path, n: int = 1_000_000) -> Path:
    """One person and one judge per item, no systems: 2n rows (the default row limit at a million items)."""
    path = folder / f"verdicts_{n}.csv"
    rng = np.random.default_rng(0)
    truth = rng.integers(0, 2, n)
    judge = np.where(rng.random(n) < 0.8, truth, 1 - truth)
    ab = np.array(["A", "B"])
    with open(path, "w") as handle:
        handle.write("item,system_a,system_b,rater,verdict\n")
        for k in range(n):
            handle.write(f"i{k},,,human,{ab[truth[k]]}\ni{k},,,judge,{ab[judge[k]]}\n")
    return path


def largest_jsonl(folder: Path, target_bytes: int = 48 * 2**20) -> Path:
    path = folder / "verdicts.jsonl"
    rng = np.random.default_rng(1)
    written, k = 0, 0
    with open(path, "w") as handle:
        while written < target_bytes:
            truth = "AB"[int(rng.integers(0, 2))]
            for rater in ("human-1", "judge-1"):
                line = json.dumps({"item": f"i{k}", "system_a": f"s{k % 50}", "system_b": f"s{(k + 1) % 50}",
                                   "rater": rater, "verdict": truth}) + "\n"
                handle.write(line)
                written += len(line)
            k += 1
    return path


def many_keys_jsonl(folder: Path) -> Path:
    path = folder / "many_keys.jsonl"
    with open(path, "w") as handle:
        for k in range(300):
            record = {"item": f"i{k}", "system_a": "a", "system_b": "b", "rater": "human-1", "verdict": "A",
                      **{f"k{k}_{c}": 1 for c in range(400)}}
            handle.write(json.dumps(record) + "\n")
    return path


def case_read(path_of):
    def run(folder: Path):
        from metaeval_core.judges import read_verdict_file

        path = path_of(folder)
        start, cpu = time.perf_counter(), time.process_time()
        data = read_verdict_file(path)
        timed = {"read_s": round(time.perf_counter() - start, 2), "read_cpu_s": round(time.process_time() - cpu, 2)}
        return path.stat().st_size, f"accepted: {data.n_items:,} items, {data.n_raters} raters", timed
    return run


def case_million_board(folder: Path):
    from metaeval_core.judges import judge_leaderboard, read_verdict_file

    path = million_csv(folder)
    data = read_verdict_file(path)
    try:
        judge_leaderboard(data, n_resamples=1000, rng=0)
        return path.stat().st_size, "ran with 1,000 resamples"
    except ValueError as error:
        fits = int(re.search(r"n_resamples=([\d,]+\d)", str(error)).group(1).replace(",", ""))
        first = str(error)[:160]
    try:
        judge_leaderboard(data, n_resamples=fits, rng=0)
        return path.stat().st_size, f"refused at 1,000 ({first}); ran with {fits}"
    except ValueError as error:
        return path.stat().st_size, f"refused at 1,000 ({first}); then {str(error)[:160]}"


def _many_systems(n: int, s: int):
    from tests.core.judges.test_systems_cost import many_systems

    return many_systems(n, s)


def case_systems(folder: Path):
    from metaeval_core.judges import close_pair_agreement, system_ranking

    data = _many_systems(3_000, 2_000)
    ranking = system_ranking(data, "j0", n_resamples=1000, rng=0)
    close_pair_agreement(data, n_resamples=1000, rng=0)
    return 0, f"ran: {len(ranking.systems):,} systems ranked, close pairs"


def case_davidson(folder: Path):
    from metaeval_core.judges import system_ranking

    data = _many_systems(300, 60)
    ranking = system_ranking(data, "j0", method="davidson", n_resamples=1000, rng=0)
    return 0, f"ran: {len(ranking.systems)} systems, converged={ranking.converged}"


def case_judges(folder: Path):
    from metaeval_core.judges import compare_judges
    from tests.core.judges.test_compare_cost import many_judges

    try:
        compare_judges(many_judges(20, 1_999), n_resamples=1000, rng=0)
        return 0, "ran"
    except ValueError as error:
        return 0, f"refused: {str(error)[:200]}"


CASES = {
    "verdict-csv-2M-rows-read": case_read(million_csv),
    "verdict-csv-2M-rows-leaderboard": case_million_board,
    "verdict-jsonl-48MB-read": case_read(largest_jsonl),
    "verdict-jsonl-many-keys": case_read(many_keys_jsonl),
    "systems-2000-from-3000-items": case_systems,
    "davidson-60-systems-300-items": case_davidson,
    "compare-1999-judges": case_judges,
}


def run_case(name: str) -> dict:
    from metaeval_core.data.upload import UploadError

    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))
    with tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        try:
            size, outcome, *timed = CASES[name](Path(folder))
        except UploadError as error:
            size, outcome, timed = -1, f"rejected ({error.kind}): {str(error)[:160]}", []
        seconds = time.perf_counter() - start
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    # seconds: the whole case (writing the generated file included); read_s / read_cpu_s: the reader alone (CPU
    # seconds say what wall seconds cannot on a shared machine)
    return {"case": name, "bytes": size, "outcome": outcome, "seconds": round(seconds, 2),
            **(timed[0] if timed else {}), "peak_rss_mb": round(peak_mb, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=sorted(CASES))
    parser.add_argument("--in-process", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.in_process:
        print(json.dumps(run_case(args.only)))
        return
    for name in [args.only] if args.only else CASES:
        done = subprocess.run([sys.executable, __file__, "--in-process", "--only", name], capture_output=True,
                              text=True, cwd=REPO)
        print(done.stdout.strip() or json.dumps({"case": name, "error": done.stderr.strip()[-300:]}), flush=True)


if __name__ == "__main__":
    main()
