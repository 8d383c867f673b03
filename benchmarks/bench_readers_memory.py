"""Time and peak memory of every reader on the hostile shapes of issue 23, at the default limits: JSON Lines with
huge lines, Parquet whose names hide behind compression, an mt-metrics-eval zip bomb and folder of 3,000 systems,
a store entry inflating to 2 GiB and a FIFO in the store, and a download whose server trickles its headers.

Each case is built in one process (written to a temporary folder) and read in a fresh one, so the peak RSS
printed is the reader's own. The target: within the limits, read or refused in seconds and well under 1 GB.

Run: .venv/bin/python benchmarks/bench_readers_memory.py [--only NAME]
Prints one JSON line per case: case, input bytes, outcome (accepted, or the error), seconds (after imports), peak
RSS (MB, imports included: about 170 MB). Last run: benchmarks/results/bench_readers_memory_2026-11-26.jsonl.
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

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


# -- builders: write the input under `folder`, return its path ------------------------------------------------
def _jsonl_line(metrics: bytes, system: bytes = b"A", item: bytes = b"d") -> bytes:
    return b'{"instance_id": "' + item + b'", "summarizer_id": "' + system + b'", "metrics": {' + metrics + b"}}\n"


def jsonl_list_24m(folder: Path) -> Path:
    """One line holding a list of 24M ratings (48 MB)."""
    path = folder / "list.jsonl"
    path.write_bytes(_jsonl_line(b'"human": [' + b"1," * 24_000_000 + b"1]"))
    return path


def jsonl_keys_2x2m(folder: Path) -> Path:
    """Two lines of 2.2M keys each."""
    path = folder / "keys.jsonl"
    body = b'"m": 1, ' * 2_200_000 + b'"z": 1'
    path.write_bytes(_jsonl_line(body) + _jsonl_line(body, item=b"e"))
    return path


def jsonl_2m_scores(folder: Path) -> Path:
    """2M scores, at the limit: one list of 1,999,990 ratings and a few scalars."""
    path = folder / "at-limit.jsonl"
    path.write_bytes(_jsonl_line(b'"human": [' + b"1," * 1_999_990 + b'1], "r": 1') +
                     _jsonl_line(b'"human": [1], "r": 2', system=b"B"))
    return path


def _parquet(folder: Path, name: str, system_codes, input_codes, pad: int) -> Path:
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    def names(prefix: str, codes, pad: int = 0):
        return pc.binary_join_element_wise(pa.scalar(prefix), pc.cast(pa.array(codes), pa.string()),
                                           pa.scalar("x" * pad), "")

    n = len(system_codes)
    path = folder / name
    pq.write_table(pa.table({"system": names("s", system_codes), "input": names("d", input_codes, pad),
                             "human.q": pa.array(np.arange(n) % 5 * 1.0), "rouge": pa.array(np.arange(n) % 7 / 7)}),
                   path)
    return path


def parquet_2m_long_names(folder: Path) -> Path:
    """2M rows, 1M distinct 200-character input names (about 26 MB compressed)."""
    import numpy as np

    k = np.arange(2_000_000)
    return _parquet(folder, "long-names.parquet", k // 1_000_000, k % 1_000_000, 190)


def parquet_2m_repeated_long_names(folder: Path) -> Path:
    """2M rows: 2,000 systems x 1,000 inputs with 200-character names (accepted: within every limit)."""
    import numpy as np

    k = np.arange(2_000_000)
    return _parquet(folder, "repeated-long-names.parquet", k // 1000, k % 1000, 190)


def parquet_1_9m_one_system(folder: Path) -> Path:
    """1.9M rows of one system."""
    import numpy as np

    k = np.arange(1_900_000)
    return _parquet(folder, "one-system.parquet", k * 0, k, 0)


def mtme_zip_bomb(folder: Path) -> Path:
    """A few-MB zip whose one score file inflates to 1 GiB."""
    import zipfile

    path = folder / "bomb.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        with archive.open("wmt99/human-scores/en-de.mqm.seg.score", "w", force_zip64=True) as member:
            block = b"sysA 1.0\n" * (1 << 20)
            for _ in range(114):
                member.write(block)
    return path


def mtme_zip_two_45mb_files(folder: Path) -> Path:
    """A zip within every limit: two score files of 45 MB (4 systems x 1.25M segments)."""
    import zipfile

    path = folder / "within.zip"
    body = b"".join(b"sys%d\t0.5\n" % s * 1_250_000 for s in range(4))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("wmt99/human-scores/en-de.mqm.seg.score", body)
        archive.writestr("wmt99/metric-scores/en-de/BLEU-refA.seg.score", body)
    return path


def mtme_3000_systems(folder: Path) -> Path:
    """An mt-metrics-eval folder naming 3,000 systems (about 76 KB of score lines)."""
    root = folder / "wmt99"
    outputs = root / "system-outputs" / "en-de"
    outputs.mkdir(parents=True)
    for k in range(3000):
        (outputs / f"sys{k}.txt").write_text("out\n")
    (root / "human-scores").mkdir()
    (root / "human-scores" / "en-de.mqm.seg.score").write_text("".join(f"sys{k}\t{k % 5}\n" for k in range(3000)))
    (root / "metric-scores" / "en-de").mkdir(parents=True)
    (root / "metric-scores" / "en-de" / "BLEU-refA.seg.score").write_text(
        "".join(f"sys{k}\t{k % 7}\n" for k in range(3000)))
    return root


def store_2gib_entry(folder: Path) -> Path:
    """A store with one good entry and one of a few MB whose scores inflate to 2 GiB."""
    import zipfile

    import numpy as np

    from metaeval_core.data.store import DatasetStore
    from metaeval_core.data.synthetic import SyntheticSpec, synthetic_dataset

    store = folder / "store"
    good = DatasetStore(store).save(synthetic_dataset(SyntheticSpec(n_systems=4, n_judged=6, seed=1)), "good").path
    n = int((2 * 2**30 // 8) ** 0.5)
    import io

    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f8", "fortran_order": False, "shape": (n, n)})
    with zipfile.ZipFile(good) as source, zipfile.ZipFile(store / "bomb.npz", "w", zipfile.ZIP_DEFLATED,
                                                          compresslevel=1) as out:
        for info in source.infolist():
            if info.filename != "scores_0.npy":
                out.writestr(info.filename, source.read(info))
                continue
            with out.open("scores_0.npy", "w", force_zip64=True) as member:
                member.write(header.getvalue())
                zeros, left = bytes(1 << 24), n * n * 8
                while left > 0:
                    member.write(zeros[:min(left, len(zeros))])
                    left -= len(zeros)
    return store


def store_fifo(folder: Path) -> Path:
    """A store with one good entry and a FIFO named x.npz."""
    from metaeval_core.data.store import DatasetStore
    from metaeval_core.data.synthetic import SyntheticSpec, synthetic_dataset

    store = folder / "store"
    DatasetStore(store).save(synthetic_dataset(SyntheticSpec(n_systems=4, n_judged=6, seed=1)), "good")
    os.mkfifo(store / "x.npz")
    return store


def header_trickle(folder: Path) -> Path:
    return folder  # the server runs in the reading process


# -- readers: read `path`, return the outcome -------------------------------------------------------------------
def read_upload(path: Path) -> str:
    from metaeval_core.data.upload import UploadError, read_user_file

    try:
        ds = read_user_file(path)
        return f"accepted: {ds.n_systems} systems x {ds.n_inputs} inputs"
    except UploadError as error:
        return f"refused ({error.kind}): {str(error)[:150]}"


def read_mtme_case(path: Path) -> str:
    from metaeval_core.data.dataset import DatasetError
    from metaeval_core.data.mtme import read_mtme, read_mtme_zip

    try:
        ds = read_mtme_zip(path.read_bytes(), name=path.name) if path.suffix == ".zip" else read_mtme(path)
        return f"accepted: {ds.n_systems} systems x {ds.n_inputs} segments"
    except DatasetError as error:
        return f"refused: {str(error)[-150:]}"


def list_store(path: Path) -> str:
    from metaeval_core.data.store import DatasetStore

    entries, damaged = DatasetStore(path).scan()
    return f"listed {[e.name for e in entries]}; damaged: " + "; ".join(d.reason[:110] for d in damaged)


def fetch_trickle(path: Path) -> str:
    import hashlib
    import json as json_module
    import threading
    from http.server import BaseHTTPRequestHandler

    from metaeval_core.data import registry
    from tests.localhttp import serve

    stop = threading.Event()

    class Trickle(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):  # noqa: N802 - http.server API
            start = time.monotonic()
            try:
                self.wfile.write(b"HTTP/1.1 200 OK\r\n")
                while not stop.is_set() and time.monotonic() - start < 30:
                    self.wfile.write(b"a")
                    self.wfile.flush()
                    stop.wait(0.2)
            except OSError:
                pass

    payload = b"x"
    entry = {"id": "tiny", "title": "t", "citation": "c", "licence": "l", "description": "d", "loader": "rose",
             "files": [{"path": "tiny/x.csv", "url": "https://example.invalid/x", "bytes": 1,
                        "sha256": hashlib.sha256(payload).hexdigest()}], "optional_files": []}
    (path / "registry.json").write_text(json_module.dumps({"datasets": [entry]}))
    registry.REGISTRY_PATH = path / "registry.json"
    registry._read_registry.cache_clear()
    os.environ["NO_PROXY"] = "127.0.0.1"
    with serve(Trickle) as base:
        try:
            registry.fetch_dataset("tiny", data_dir=path / "cache", base_url=base, deadline=3)
            return "downloaded"
        except registry.DownloadError as error:
            return f"refused: {str(error)[-110:]}"
        finally:
            stop.set()


CASES = {
    "jsonl-one-line-24M-list": (jsonl_list_24m, read_upload),
    "jsonl-2-lines-2.2M-keys": (jsonl_keys_2x2m, read_upload),
    "jsonl-2M-scores-at-limit": (jsonl_2m_scores, read_upload),
    "parquet-2M-rows-distinct-200-char-names": (parquet_2m_long_names, read_upload),
    "parquet-2000x1000-200-char-names": (parquet_2m_repeated_long_names, read_upload),
    "parquet-1.9M-rows-one-system": (parquet_1_9m_one_system, read_upload),
    "mtme-zip-inflating-to-1GiB": (mtme_zip_bomb, read_mtme_case),
    "mtme-zip-two-45MB-score-files": (mtme_zip_two_45mb_files, read_mtme_case),
    "mtme-folder-3000-systems": (mtme_3000_systems, read_mtme_case),
    "store-entry-inflating-to-2GiB": (store_2gib_entry, list_store),
    "store-fifo-named-x.npz": (store_fifo, list_store),
    "download-header-trickle-deadline-3s": (header_trickle, fetch_trickle),
}


def _size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=sorted(CASES))
    parser.add_argument("--build", metavar="FOLDER", help=argparse.SUPPRESS)
    parser.add_argument("--read", metavar="PATH", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.build:
        print(CASES[args.only][0](Path(args.build)))
        return
    if args.read:
        import pyarrow.parquet  # noqa: F401 - imports before the clock: the figure is the reader's own time

        import metaeval_core.data.mtme  # noqa: F401
        import metaeval_core.data.registry  # noqa: F401
        import metaeval_core.data.store  # noqa: F401
        import metaeval_core.data.upload  # noqa: F401

        start = time.perf_counter()
        outcome = CASES[args.only][1](Path(args.read))
        print(json.dumps({"case": args.only, "bytes": _size(Path(args.read)), "outcome": outcome,
                          "seconds": round(time.perf_counter() - start, 2),
                          "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}))
        return
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    for name in [args.only] if args.only else CASES:
        with tempfile.TemporaryDirectory(prefix="bench-readers-") as folder:
            built = subprocess.run([sys.executable, __file__, "--only", name, "--build", folder], capture_output=True,
                                   text=True, cwd=REPO, env=env)
            if built.returncode:
                print(json.dumps({"case": name, "error": built.stderr.strip()[-300:]}), flush=True)
                continue
            done = subprocess.run([sys.executable, __file__, "--only", name, "--read", built.stdout.strip()],
                                  capture_output=True, text=True, cwd=REPO, env=env, timeout=600)
            print(done.stdout.strip() or json.dumps({"case": name, "error": done.stderr.strip()[-300:]}), flush=True)


if __name__ == "__main__":
    main()
