"""The data commands: ``datasets``, ``fetch`` and ``describe``."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Callable

from metaeval_core.cli.options import terminal_width
from metaeval_core.cli.common import add_dataset_args, data_dir, load, split_list
from metaeval_core.cli.output import emit, fit_to_terminal, print_table, say, to_jsonable

if TYPE_CHECKING:
    from metaeval_core.data.dataset import Dataset


def cmd_fetch(args: argparse.Namespace) -> None:
    from metaeval_core.data.registry import fetch_dataset, verify_files

    from metaeval_core.data.registry import dataset_info

    ids = split_list(args.dataset, "dataset")
    rows = []
    for dataset_id in ids:
        if not dataset_info(dataset_id, data_dir=data_dir(args)).files:  # the demo: generated, nothing to fetch
            print(f"{dataset_id}: built in (generated when loaded); nothing to download", file=sys.stderr)
            continue
        fetch_dataset(dataset_id, data_dir=data_dir(args), base_url=args.base_url, deadline=args.deadline)
        for check in verify_files(dataset_id, data_dir=data_dir(args)):
            rows.append({"dataset": dataset_id, "path": str(check.path), "status": check.status})
    if rows or args.json:
        emit(args, rows, columns=["dataset", "path", "status"])


def cmd_datasets(args: argparse.Namespace) -> None:
    from metaeval_core.data.registry import DATA_DIR_ENV, data_dir as default_dir, list_datasets, load_dataset

    directory = data_dir(args)
    rows = []
    for info in list_datasets(data_dir=directory):
        row = {"id": info.id, "title": info.title, "kind": info.kind, "licence": info.licence,
               "available": info.available, "reason": info.reason, "systems": None, "inputs": None, "judged": None,
               "measures": None}
        if info.available and args.counts and info.kind == "pairwise":
            from metaeval_core.judges import load_pairwise

            # Pairwise verdicts: inputs are the pairs (all judged), measures the raters (humans, gold, judges).
            pairs = load_pairwise(info.id, data_dir=directory)
            row.update(systems=len(pairs.systems) or None, inputs=pairs.n_items, judged=pairs.n_items,
                       measures=pairs.n_raters)
        elif info.available and args.counts:
            ds = load_dataset(info.id, data_dir=directory)
            # The systems the commands use by default, as `describe` counts them; the others apart (HANNA: 10
            # models + Human, shown '10 + 1'; --json: systems and systems_all).
            default = ds.with_default_systems().n_systems
            row.update(systems=default, systems_all=ds.n_systems, inputs=ds.n_inputs, judged=ds.n_judged,
                       measures=len(ds.measures))
        rows.append(row)
    if args.json:  # the full reasons
        emit(args, rows)
        return
    short = {info.id: info.short_reason for info in list_datasets(data_dir=directory)}
    table = [{**row, "status": "available" if row["available"] else short[row["id"]],
              "systems": row["systems"] if row.get("systems_all", row["systems"]) == row["systems"]
              else f"{row['systems']} + {row['systems_all'] - row['systems']}"} for row in rows]
    # kind: 'scores' or 'pairwise' (for pairwise verdicts, inputs are the pairs and measures the raters)
    table, columns = fit_to_terminal(to_jsonable(table), ["id", "status", "systems", "inputs", "judged", "measures",
                                                          "kind", "licence"], shrink=("licence", "kind"))
    print_table(table, columns)
    missing = [row["id"] for row in rows if not row["available"]]
    if missing:
        import textwrap

        width = terminal_width()
        print(f"\ndata directory: {directory or default_dir()}")
        print(textwrap.fill(f"not available: download with `metaeval fetch --dataset ID` (or add --download to a "
                            f"command), or set {DATA_DIR_ENV} to a folder holding the files; --json gives the full "
                            "reasons", width=max(40, width - 1)))
    if any(row.get("systems_all", row["systems"]) != row["systems"] for row in rows):
        say("\nsystems 'N + K': N used by default, K more with --all-systems (HANNA: the human-written stories; "
            "WMT data: the references)")


def describe_dataset(ds: Dataset) -> dict:
    import numpy as np

    measures = []
    for name, m in ds.measures.items():
        judged = m.scores[:, ds.judged]
        measures.append({
            "measure": name,
            "label": m.display_name,
            "kind": m.kind,
            "family": m.attributes.get("family"),
            "annotators": None if m.annotators is None else int(m.annotators.shape[0]),
            "missing_judged_cells": int(np.isnan(judged).sum()),
            "unjudged_cells": int((~np.isnan(m.scores[:, ~ds.judged])).sum()),
            "min": float(np.nanmin(m.scores)) if np.any(~np.isnan(m.scores)) else None,
            "max": float(np.nanmax(m.scores)) if np.any(~np.isnan(m.scores)) else None,
        })
    return {
        "id": ds.id,
        "version": ds.version,
        "title": ds.title,
        "systems": list(ds.systems),
        "n_systems": ds.n_systems,
        "n_inputs": ds.n_inputs,
        "n_judged": ds.n_judged,
        "n_unjudged": ds.n_unjudged,
        "human_measures": list(ds.human_measures),
        "metric_measures": list(ds.metric_measures),
        "attributes": {k: sorted(set(v)) for k, v in ds.system_attributes.items()},
        "default_systems": ds.default_systems,
        "conventions": None if ds.conventions is None else ds.conventions.to_dict(),
        "measures": measures,
        "notes": list(ds.notes),
    }


def cmd_describe(args: argparse.Namespace) -> None:
    from metaeval_core.data.registry import dataset_ids, dataset_info
    from metaeval_core.data.upload.report import validation_report

    if args.dataset in dataset_ids() and dataset_info(args.dataset, data_dir=data_dir(args)).kind == "pairwise":
        from metaeval_core.cli.judges import describe_pairwise_command

        describe_pairwise_command(args)
        return
    if args.dataset not in dataset_ids():
        from metaeval_core.judges import is_verdict_file

        if is_verdict_file(args.dataset):
            from metaeval_core.cli.judges import describe_verdict_file_command

            describe_verdict_file_command(args)
            return
    ds = load(args)
    info = describe_dataset(ds)
    report = validation_report(ds)  # the same report the dashboard shows after an upload
    if args.json:
        info["report"] = {"judged_per_system": dict(zip(report.systems, report.judged_per_system)),
                          "human_reasons": dict(report.human_reasons),
                          "warnings": [{"kind": w.kind, "message": w.message, "names": list(w.names)}
                                       for w in report.warnings]}
        emit(args, info)
        return
    say(f"{info['id']} ({info['title']}), version {info['version']}",
        f"systems: {info['n_systems']}; inputs: {info['n_inputs']} ({info['n_judged']} judged, "
        f"{info['n_unjudged']} unjudged)",
        *(f"attribute {attr}: {', '.join(values)}" for attr, values in info["attributes"].items()),
        *report.lines()[1:])  # the first line repeats the counts above
    # Short headers and no label column where labels are the ids: the table fits 80 columns (--json: all).
    same_labels = all(m["label"] == m["measure"] for m in info["measures"])
    print_table([{"measure": m["measure"], **({} if same_labels else {"label": m["label"]}), "kind": m["kind"],
                  "annotators": m["annotators"], "missing": m["missing_judged_cells"],
                  "unjudged": m["unjudged_cells"], "min": m["min"], "max": m["max"]} for m in info["measures"]])
    say("missing: cells of judged inputs without a score; unjudged: scored cells of inputs no human judged")


def add_commands(command: Callable[..., argparse.ArgumentParser]) -> None:
    """Register this family's subcommands (``command(name, func, help)`` returns a subparser with ``--json``)."""
    p = command("datasets", cmd_datasets, "list the built-in datasets with availability and counts")
    p.add_argument("--data-dir", help="data directory (default: $METAEVAL_DATA_DIR or data/cache)")
    p.add_argument("--no-counts", dest="counts", action="store_false", help="skip loading datasets for counts")

    p = command("fetch", cmd_fetch, "download a built-in dataset's files from their pinned URLs and verify "
                                     "each by sha256 (a mismatching file is refused and removed)")
    p.add_argument("--dataset", required=True, help="one or more dataset ids, comma-separated")
    p.add_argument("--data-dir", help="data directory (default: $METAEVAL_DATA_DIR or data/cache)")
    p.add_argument("--base-url", default=None, help="an http(s) mirror to download from instead of the upstream URLs "
                                                    "(default: $METAEVAL_DATA_BASE_URL)")
    p.add_argument("--deadline", type=float, default=600.0, metavar="SECONDS",
                   help="give up after this many seconds for all files together (default 600); each file is also "
                        "capped at the size the registry records for it")

    p = command("describe", cmd_describe, "systems, inputs (judged/unjudged), measures, attributes, missing cells")
    add_dataset_args(p)
