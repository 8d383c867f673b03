"""First render (cold) and rerun (warm) of every dashboard page on every built-in dataset, in Streamlit's AppTest.

Run:  .venv/bin/python benchmarks/bench_pages.py [--datasets summeval,wmt23:he-en] [--pages stability,average]
                                                 [--timeout 120] [--out benchmarks/results/pages.jsonl]

Every dataset of the registry that is present in ``METAEVAL_DATA_DIR`` (the synthetic demo always; WMT23 once per
language pair, ``wmt23:<lp>``) runs in a fresh Python process. There, after the imports a served dashboard does
up front (``metaeval_ui.serve.warm_up``), each page is measured as

* ``cold_s`` — a shared link to the page opened on a fresh server: every Streamlit cache (``st.cache_data``,
  ``st.cache_resource``) and every ``functools.lru_cache`` of the project emptied, a new session, one script run
  with the dataset in the URL (dataset loading included);
* ``warm_s`` — the same session's next script run (what any widget change that keeps the view costs at least).

Before the first measured page, each process renders the demo's Overview once, untimed for the pages: a process's
one-time costs (Streamlit's first script run, the first figure, the component scan) would otherwise land on the
first page it measures, so every ``cold_s`` is the page's own first render. That warm-up is reported on its own
(a ``"case": "_warmup"`` line per dataset: ``imports_s``, the imports and dataset load of ``serve.warm_up``, and
``warmup_s`` / ``warmup_cpu_s``, the demo Overview's run).

Score pages run on the score datasets, the judges pages on the pairwise ones (``?jdataset=``). Budgets (issue 33):
cold <= 5 s, warm <= 1 s of wall time. Each run also records the process's CPU seconds (``cold_cpu_s``,
``warm_cpu_s``): on the shared 2-core machine at load 8-11 the wall time is 2-4x the CPU time, which is close to an
idle machine's wall time. AppTest runs the script without a browser: the time to send and draw the elements
(tests/browser, benchmarks/bench_ui.py) comes on top. Prints a table; saves one JSON line per (dataset, page),
after a ``_meta`` line with the machine's load average and the commit, to ``--out`` (default
``benchmarks/results/pages-<UTC time>.jsonl``). ``--markdown AFTER.jsonl [BEFORE.jsonl] [--only-over]`` prints
saved runs as the tables of docs/speed.md, ``--grid A.jsonl [B.jsonl ...]`` as one page x dataset grid;
``--profile DIR`` saves a cProfile of every cold run (the script thread).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

COLD_BUDGET_S = 5.0
WARM_BUDGET_S = 1.0
JUDGES_PAGES = ("judges_leaderboard", "judges_bias", "judges_systems")
WARMUP_PAGE = "home"  # each worker's untimed first run: the demo's Overview


def url_paths() -> dict[str, str]:
    """The navigation's pages (app.py's PAGES) in their order: file stem -> url path ('' for the default page)."""
    import ast

    tree = ast.parse((REPO / "app.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "PAGES":
            rows = [ast.literal_eval(item) for item in node.value.elts]
            return {Path(row[0]).stem: "" if k == 0 else row[3] for k, row in enumerate(rows)}
    raise SystemExit("app.py: no PAGES list")


def score_pages() -> list[str]:
    return [page for page in url_paths() if page not in JUDGES_PAGES]


def datasets() -> list[str]:
    """Every available built-in dataset; a dataset with several language pairs once per pair (``id:lp``)."""
    from metaeval_core.data import registry

    out = []
    for info in registry.list_datasets():
        if not info.available:
            continue
        lps = registry.language_pairs_of(info.id) if info.kind == "scores" else ()
        out.extend([f"{info.id}:{lp}" for lp in lps] if len(lps) > 1 else [info.id])
    return out


def kind_of(dataset: str) -> str:
    from metaeval_core.data import registry

    return registry.dataset_info(dataset.split(":")[0]).kind


def _clear_caches() -> None:
    import functools
    import gc

    import streamlit as st

    st.cache_data.clear()
    st.cache_resource.clear()
    for name, module in list(sys.modules.items()):
        if not name.startswith(("metaeval_core", "metaeval_ui")):
            continue
        for value in list(vars(module).values()):
            if isinstance(value, functools._lru_cache_wrapper):
                value.cache_clear()
    gc.collect()


def _query(dataset: str) -> dict[str, str]:
    name, _, lp = dataset.partition(":")
    if kind_of(dataset) == "pairwise":
        return {"jdataset": name}
    return {"dataset": name, **({"lp": lp} if lp else {})}


def _problems(at) -> list[str]:
    return [str(e.value)[:200] for e in at.exception] + [str(e.value)[:200] for e in at.error]


def _cpu() -> float:
    """This process's CPU seconds (every thread): on a shared, oversubscribed machine the wall time of a run is
    several times its CPU time; the CPU time is close to what an idle machine's wall time would be."""
    times = os.times()
    return times.user + times.system


def _profile_script_thread(box: list) -> None:
    """Run each script run under the profiler in ``box`` (if any): AppTest runs the script in its own thread."""
    from streamlit.runtime.scriptrunner import script_runner

    original = script_runner.ScriptRunner._run_script

    def profiled(self, rerun_data):
        if not box:
            return original(self, rerun_data)
        box[0].enable()
        try:
            return original(self, rerun_data)
        finally:
            box[0].disable()

    script_runner.ScriptRunner._run_script = profiled


def worker(dataset: str, pages: list[str], timeout: float, profile_dir: str | None) -> None:
    """Measure the pages on one dataset in this process; one JSON line per page on stdout."""
    import warnings

    warnings.filterwarnings("ignore")
    start, cpu = time.perf_counter(), _cpu()
    from metaeval_ui import serve

    serve.warm_up()
    import streamlit.logger
    from streamlit.testing.v1 import AppTest

    from streamlit.util import calc_hash

    streamlit.logger.set_log_level("error")
    imports = (round(time.perf_counter() - start, 3), round(_cpu() - cpu, 3))
    paths = url_paths()

    def app(query: dict[str, str], page: str, components):
        at = AppTest.from_file(str(REPO / "app.py"), default_timeout=timeout)
        # A server scans the installed component packages once; AppTest does it per instance (0.3-1.2 s).
        at._bidi_component_manager = components
        for key, value in query.items():
            at.query_params[key] = value
        # A deep link: the first run goes to the page (AppTest.switch_page resolves url paths only after a run;
        # st.Page hashes its url path).
        at._page_hash = calc_hash(paths[page]) if paths[page] else ""
        return at

    # What a served dashboard has done before its first visitor: one script run, untimed for the pages.
    _clear_caches()
    at = app({"dataset": "demo"}, WARMUP_PAGE, None)
    warm = {"case": "_warmup", "dataset": dataset, "page": WARMUP_PAGE, "on": "demo", "imports_s": imports[0],
            "imports_cpu_s": imports[1]}
    start, cpu = time.perf_counter(), _cpu()
    try:
        at.run()
        warm |= {"warmup_s": round(time.perf_counter() - start, 3), "warmup_cpu_s": round(_cpu() - cpu, 3),
                 "title": at.title[0].value if at.title else "", "elements": len(list(at.main)),
                 "problems": _problems(at)}
    except RuntimeError as error:  # AppTest's timeout
        warm |= {"warmup_s": None, "problems": [f"warm-up run: {error}"[:200]]}
    print(json.dumps(warm), flush=True)
    components = at._bidi_component_manager
    profiler_box: list = []
    if profile_dir:
        _profile_script_thread(profiler_box)
    for page in pages:
        _clear_caches()
        at = app(_query(dataset), page, components)
        row: dict = {"dataset": dataset, "page": page}
        profiler = None
        if profile_dir:
            import cProfile

            profiler = cProfile.Profile()
            profiler_box[:] = [profiler]
        start, cpu = time.perf_counter(), _cpu()
        try:
            at.run()
            row["cold_s"] = round(time.perf_counter() - start, 3)
            row["cold_cpu_s"] = round(_cpu() - cpu, 3)
        except RuntimeError as error:  # AppTest's timeout
            row["cold_s"], row["problems"] = None, [f"cold run: {error}"[:200]]
        components = at._bidi_component_manager
        if profiler is not None:
            profiler_box.clear()
            profiler.dump_stats(str(Path(profile_dir) / f"{dataset.replace(':', '_')}-{page}.prof"))
        if row.get("cold_s") is not None:
            row["title"] = at.title[0].value if at.title else ""
            row["problems"] = _problems(at)
            start, cpu = time.perf_counter(), _cpu()
            try:
                at.run()
                row["warm_s"] = round(time.perf_counter() - start, 3)
                row["warm_cpu_s"] = round(_cpu() - cpu, 3)
            except RuntimeError as error:
                row["warm_s"], row["problems"] = None, [*row["problems"], f"warm run: {error}"[:200]]
        print(json.dumps(row), flush=True)


def _meta() -> dict:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True,
                            text=True).stdout.strip()
    dirty = bool(subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO,
                                capture_output=True, text=True).stdout.strip())
    return {"case": "_meta", "commit": commit + ("+dirty" if dirty else ""), "load_average": os.getloadavg(),
            "cpus": os.cpu_count(), "data_dir": os.environ.get("METAEVAL_DATA_DIR", ""),
            "utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "budget_s": {"cold": COLD_BUDGET_S, "warm": WARM_BUDGET_S}}


def _fmt(value) -> str:
    return "  n/a" if value is None else f"{value:5.1f}"


def _read(path: str) -> tuple[dict, dict]:
    meta, rows = {}, {}
    for line in Path(path).read_text().splitlines():
        row = json.loads(line)
        if row.get("case") == "_meta":
            meta = row
        elif row.get("case"):  # a worker's warm-up ("_warmup"): not a page of the run
            continue
        else:
            rows[row["dataset"], row["page"]] = row
    return meta, rows


def markdown(after: str, before: str | None = None, *, only_over: bool = False) -> str:
    """A markdown table of a saved run (and the run before it): cold and warm seconds per dataset and page."""
    meta, now = _read(after)
    old = _read(before)[1] if before else {}

    def cell(rows, key, field):
        value = rows.get(key, {}).get(field)
        return "—" if value is None else f"{value:.1f}"

    head = "| dataset | page | " + ("cold before | " if before else "") + "cold | " + \
        ("warm before | " if before else "") + "warm | cold CPU | over budget | load |"
    lines = [f"Load average at the start {tuple(round(x, 1) for x in meta.get('load_average', ()))}, "
             f"commit {meta.get('commit', '?')}, {meta.get('utc', '')}.", "", head,
             "|" + "---|" * (head.count("|") - 1)]
    for key, row in now.items():
        over = [name for name, ok in (("cold", row.get("cold_ok")), ("warm", row.get("warm_ok"))) if not ok]
        if only_over and not over:
            continue
        parts = [key[0], key[1]] + ([cell(old, key, "cold_s")] if before else []) + [cell(now, key, "cold_s")] + \
            ([cell(old, key, "warm_s")] if before else []) + [cell(now, key, "warm_s"), cell(now, key, "cold_cpu_s"), ", ".join(over),
                                                                   f"{row.get('load_average', float('nan')):.1f}"]
        lines.append("| " + " | ".join(parts) + " |")
    return "\n".join(lines)


def grid(paths: list[str], field: str = "cold_s") -> str:
    """Saved runs as one markdown grid: a row per page, a column per dataset, ``field`` in seconds (* = over)."""
    rows: dict = {}
    datasets: list[str] = []
    for path in paths:
        for key, row in _read(path)[1].items():
            datasets += [key[0]] if key[0] not in datasets else []
            rows.setdefault(key[1], {})[key[0]] = row
    budget = WARM_BUDGET_S if field.startswith("warm") else COLD_BUDGET_S
    lines = ["| page | " + " | ".join(datasets) + " |", "|---|" + "---|" * len(datasets)]
    for page, cells in rows.items():
        shown = []
        for dataset in datasets:
            value = cells.get(dataset, {}).get(field)
            shown.append("" if value is None else f"{value:.1f}" + ("*" if value > budget else ""))
        lines.append(f"| {page} | " + " | ".join(shown) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", default="", help="comma-separated ids (wmt23:he-en for one pair); "
                        "default: every available dataset")
    parser.add_argument("--pages", default="", help="comma-separated page file stems; default: every page")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds one script run may take")
    parser.add_argument("--out", default="", help="JSONL file (default benchmarks/results/pages-<time>.jsonl)")
    parser.add_argument("--profile", default="", help="folder for one cProfile file per cold run")
    parser.add_argument("--markdown", nargs="+", metavar="JSONL", help="print a saved run (and, second, the run "
                        "before it) as a markdown table, and exit")
    parser.add_argument("--only-over", action="store_true", help="with --markdown: only pages over a budget")
    parser.add_argument("--grid", nargs="+", metavar="JSONL", help="print saved runs as one page x dataset grid "
                        "of cold seconds (--field warm_s, cold_cpu_s, ...), and exit")
    parser.add_argument("--field", default="cold_s", help=argparse.SUPPRESS)
    parser.add_argument("--worker", default="", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.grid:
        print(grid(args.grid, args.field))
        return 0
    if args.markdown:
        print(markdown(args.markdown[0], args.markdown[1] if len(args.markdown) > 1 else None,
                       only_over=args.only_over))
        return 0
    wanted = [p for p in args.pages.split(",") if p]
    if args.worker:
        worker(args.worker, wanted, args.timeout, args.profile or None)
        return 0

    chosen = [d for d in args.datasets.split(",") if d] or datasets()
    out = Path(args.out) if args.out else (
        REPO / "benchmarks" / "results" / f"pages-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}.jsonl")
    out.parent.mkdir(parents=True, exist_ok=True)
    if args.profile:
        Path(args.profile).mkdir(parents=True, exist_ok=True)
    meta = _meta()
    rows = []
    with out.open("w") as sink:
        sink.write(json.dumps(meta) + "\n")
        print(f"load average {meta['load_average']}, commit {meta['commit']}; budgets: cold {COLD_BUDGET_S} s, "
              f"warm {WARM_BUDGET_S} s", flush=True)
        print(f"{'dataset':<22} {'page':<20} {'cold s':>6} {'warm s':>6}  {'cold CPU':>6} {'warm CPU':>6}  "
              "over budget (wall) / problems", flush=True)
        for dataset in chosen:
            pages = wanted or (list(JUDGES_PAGES) if kind_of(dataset) == "pairwise" else score_pages())
            if kind_of(dataset) == "pairwise":
                pages = [p for p in pages if p in JUDGES_PAGES]
            else:
                pages = [p for p in pages if p not in JUDGES_PAGES]
            if not pages:
                continue
            command = [sys.executable, str(Path(__file__).resolve()), "--worker", dataset, "--pages",
                       ",".join(pages), "--timeout", str(args.timeout)]
            if args.profile:
                command += ["--profile", args.profile]
            proc = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            for line in proc.stdout:  # type: ignore[union-attr]
                if not line.startswith("{"):
                    continue
                row = json.loads(line)
                if row.get("case") == "_warmup":
                    sink.write(json.dumps(row) + "\n")
                    print(f"{dataset:<22} {'(warm-up: demo ' + row['page'] + ')':<20} {_fmt(row.get('warmup_s'))}"
                          f"  {'':>5}  {_fmt(row.get('warmup_cpu_s'))}  {'':>5}  untimed for the pages; imports and "
                          f"dataset load before it {row['imports_s']:.1f} s ({row['imports_cpu_s']:.1f} s CPU) "
                          f"{'; '.join(row.get('problems') or [])[:120]}", flush=True)
                    continue
                row["cold_ok"] = row.get("cold_s") is not None and row["cold_s"] <= COLD_BUDGET_S
                row["warm_ok"] = row.get("warm_s") is not None and row["warm_s"] <= WARM_BUDGET_S
                row["load_average"] = os.getloadavg()[0]
                rows.append(row)
                sink.write(json.dumps(row) + "\n")
                sink.flush()
                flags = [name for name, ok in (("COLD", row["cold_ok"]), ("WARM", row["warm_ok"])) if not ok]
                print(f"{dataset:<22} {row['page']:<20} {_fmt(row.get('cold_s'))}  {_fmt(row.get('warm_s'))}  "
                      f"{_fmt(row.get('cold_cpu_s'))}  {_fmt(row.get('warm_cpu_s'))}  "
                      f"{' '.join(flags)} {'; '.join(row.get('problems') or [])[:120]}", flush=True)
            proc.wait()
    over = [r for r in rows if not (r["cold_ok"] and r["warm_ok"])]
    print(f"\n{len(rows)} page renders; {len(over)} over budget; saved {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
