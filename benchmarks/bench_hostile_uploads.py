"""Time and peak memory of the upload parser on hostile shapes (issue 13): wide files (one column per measure),
many systems, look-alike names, huge magnitudes. Each case runs in a fresh process so its peak RSS is its own.

Run: .venv/bin/python benchmarks/bench_hostile_uploads.py [--only NAME] [--columns N]
Prints one JSON line per case: the case, bytes, outcome (accepted, or the UploadError kind), seconds, peak RSS (MB).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def wide(columns: int) -> bytes:
    """2 systems x 2 inputs, one human measure and ``columns - 1`` metrics: 200,000 columns is about 3 MB."""
    header = "system,input,human.q," + ",".join(f"m{j}" for j in range(columns - 1))
    rows = [f"{s},{d},{h}," + ",".join(str((j + h) % 7) for j in range(columns - 1))
            for s, d, h in (("A", "d1", 1), ("A", "d2", 2), ("B", "d1", 3), ("B", "d2", 4))]
    return ("\n".join([header, *rows]) + "\n").encode()


def wide_parquet(columns: int) -> bytes:
    """The same shape as :func:`wide` as Parquet (200,000 columns is over the 50 MB default: 20,000 here)."""
    import io

    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    ids = [pa.array(["A", "A", "B", "B"]), pa.array(["d1", "d2", "d1", "d2"]), pa.array([1.0, 2.0, 3.0, 4.0])]
    arrays = ids + [pa.array(np.arange(4.0) + j % 7) for j in range(columns - 1)]
    names = ["system", "input", "human.q"] + [f"m{j}" for j in range(columns - 1)]
    buffer = io.BytesIO()
    pq.write_table(pa.table(arrays, names=names), buffer)
    return buffer.getvalue()


def many_systems(systems: int) -> bytes:
    """The long CSV of issue 13: 10,000 systems x 2 inputs (0.4 MB), under every byte/row/cell limit."""
    lines = ["system,input,measure,score"]
    for s in range(systems):
        for d in range(2):
            lines.append(f"sys{s},d{d},human.q,{(s * 7 + d) % 5}")
            lines.append(f"sys{s},d{d},rouge,{(s * 3 + d) % 11 / 10}")
    return ("\n".join(lines) + "\n").encode()


def lookalikes() -> bytes:
    return "system,input,human.q,rouge\nA,d1,1,0.1\nA\u200b,d2,2,0.2\nB,d1,3,0.3\nB,d2,4,0.4\n".encode()


def huge() -> bytes:
    return b"system,input,human.q,rouge\nA,d1,1,1e308\nA,d2,2,1e308\nB,d1,3,-1e308\nB,d2,4,-1e308\n"


# name -> (bytes builder, UploadLimits overrides)
CASES = {
    "wide-200k-columns-default-limits": (lambda n: wide(n), {}),
    "wide-200k-columns-limit-raised": (lambda n: wide(n), {"max_measures": 10**6}),
    "wide-20k-columns-limit-raised": (lambda n: wide(n // 10), {"max_measures": 10**6}),
    "parquet-20k-columns-default-limits": (lambda n: wide_parquet(n // 10), {}),
    "parquet-20k-columns-limit-raised": (lambda n: wide_parquet(n // 10), {"max_measures": 10**6}),
    "long-10k-systems-default-limits": (lambda n: many_systems(10_000), {}),
    "lookalike-names": (lambda n: lookalikes(), {}),
    "magnitude-1e308": (lambda n: huge(), {}),
}


def run_case(name: str, columns: int) -> dict:
    from metaeval_core.data.upload import UploadError, UploadLimits, read_user_file

    build, limits = CASES[name]
    raw = build(columns)
    start = time.perf_counter()
    try:
        suffix = ".parquet" if name.startswith("parquet") else ".csv"
        ds = read_user_file(raw, name=f"{name}{suffix}", limits=UploadLimits(**limits))
        outcome = f"accepted: {ds.n_systems} systems, {len(ds.measures)} measures"
    except UploadError as error:
        outcome = f"rejected ({error.kind}): {str(error)[:140]}"
    seconds = time.perf_counter() - start
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"case": name, "bytes": len(raw), "outcome": outcome, "seconds": round(seconds, 3),
            "peak_rss_mb": round(peak_mb, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=sorted(CASES))
    parser.add_argument("--columns", type=int, default=200_000)
    parser.add_argument("--in-process", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.in_process:
        print(json.dumps(run_case(args.only, args.columns)))
        return
    for name in [args.only] if args.only else CASES:
        done = subprocess.run([sys.executable, __file__, "--in-process", "--only", name, "--columns",
                               str(args.columns)], capture_output=True, text=True, cwd=REPO)
        print(done.stdout.strip() or json.dumps({"case": name, "error": done.stderr.strip()[-300:]}), flush=True)


if __name__ == "__main__":
    main()
