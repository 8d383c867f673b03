"""``metaeval`` (or ``python -m metaeval_core``): the command line.

Every subcommand prints a readable table by default and machine-readable JSON
with ``--json``. Errors are one clear line on stderr and a non-zero exit code,
never a traceback (set ``METAEVAL_DEBUG=1`` to see one).
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

# Light imports only (standard library and metaeval_core.cli.options): `metaeval --help` builds the parser
# without numpy, scipy or pandas; each command imports what it needs when it runs.
from metaeval_core._missing import missing_dependency_message
from metaeval_core._text import PrintableStream
from metaeval_core.cli.options import (
    ALIASES, CI_METHODS, COEFFICIENTS, LEVELS, MAX_RESAMPLES, MIN_RESAMPLES, POOLS, HelpFormatter, choice,
    did_you_mean, flag_message, terminal_width,
)

if TYPE_CHECKING:
    from metaeval_core.data.dataset import Dataset

# Modules exposing ``add_commands(command)``; ``command(name, func, help)`` returns a subparser
# that already has ``--json``; helpers ``add_dataset_args``/``add_selection_args``/``add_resampling_args``/``emit``
# live here.
_COMMAND_MODULES: tuple[str, ...] = ("metaeval_core.cli.analyses", "metaeval_core.cli.practice",
                                     "metaeval_core.cli.simulations", "metaeval_core.cli.judges")

EXIT_USAGE = 2
EXIT_INTERNAL = 1


class CLIError(Exception):
    """A user-facing error: printed as one line, exit code 2."""


# -- output -------------------------------------------------------------
def to_jsonable(value: Any) -> Any:
    """Plain JSON types; NaN and infinities become null (JSON has no NaN)."""
    import numpy as np

    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return to_jsonable(value.tolist())
    if isinstance(value, (np.bool_, bool)):
        return bool(value)
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        value = float(value)
        return value if math.isfinite(value) else None
    return value


def say(*paragraphs: str, stream=None, indent: str = "") -> None:
    """Notes and footnotes wrapped at the terminal's width (COLUMNS honoured); a paragraph's own line breaks kept."""
    import textwrap

    width = max(40, terminal_width() - 1)
    for paragraph in paragraphs:
        for line in str(paragraph).splitlines() or [""]:
            print(textwrap.fill(line, width=width, subsequent_indent=indent + "  ", initial_indent=indent,
                                break_on_hyphens=False, break_long_words=False) if line else "", file=stream)


def _elide(cells: list[list[str]], columns: list[str], width: int, narrowest: int = 8) -> None:
    """Fit each line within ``width``: first shorten headers wider than their values ('significant_corrected'
    over True/False), then the widest text columns' cells, with '…'; numbers are never cut. The full names are
    in --json."""
    def numeric(text: str) -> bool:
        return text.replace(".", "", 1).replace("-", "", 1).replace("e", "", 1).replace("+", "", 1).isdigit() \
            or text in ("-", "nan")

    def excess() -> int:
        widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(columns)]
        return sum(widths) + 2 * (len(columns) - 1) - width

    values = [max(len(row[i]) for row in cells) for i in range(len(columns))]
    for k in sorted(range(len(columns)), key=lambda k: values[k] - len(columns[k])):
        over = excess()
        if over <= 0:
            return
        if len(columns[k]) > max(values[k], 6):
            keep = max(values[k], 6, len(columns[k]) - over)
            columns[k] = columns[k][:keep - 1] + "…"
    while (over := excess()) > 0:
        widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(columns)]
        text_columns = [i for i in range(len(columns)) if widths[i] > max(narrowest, len(columns[i]))
                        and not all(numeric(row[i]) for row in cells)]
        if not text_columns:
            return
        i = max(text_columns, key=lambda k: widths[k])
        keep = max(narrowest, len(columns[i]), widths[i] - over)
        for row in cells:
            if len(row[i]) > keep:
                row[i] = row[i][:keep - 1].rstrip() + "…"


def print_table(rows: list[dict], columns: Sequence[str] | None = None, stream=None,
                width: int | None = None) -> None:
    """A plain aligned text table (the default, human-readable output), its text cells elided with '…' to fit
    the terminal (``width``, default the terminal's)."""
    stream = stream or sys.stdout
    if not rows:
        print("(no rows)", file=stream)
        return
    columns = list(columns or rows[0].keys())

    def fmt(v: Any) -> str:
        if v is None:
            return "-"
        if isinstance(v, float):
            return "nan" if not math.isfinite(v) else f"{v:.4f}"
        if isinstance(v, (list, tuple)):
            return ",".join(fmt(x) for x in v)
        return str(v)

    cells = [[fmt(r.get(c)) for c in columns] for r in rows]
    columns = [str(c) for c in columns]  # headers may be elided too: the rows were read by the full names
    width = width or terminal_width()
    if len(cells) == 1 and sum(max(len(c), len(v)) + 2 for c, v in zip(columns, cells[0])) - 2 > width:
        # One record wider than the terminal: one 'name  value' line each, nothing cut.
        pad = max(map(len, columns))
        for column, value in zip(columns, cells[0]):
            print(f"{column.ljust(pad)}  {value}", file=stream)
        return
    _elide(cells, columns, width)
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(columns)]
    print("  ".join(c.ljust(w) for c, w in zip(columns, widths)).rstrip(), file=stream)
    for row in cells:
        print("  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip(), file=stream)


def emit(args: argparse.Namespace, payload: Any, rows: list[dict] | None = None, columns=None) -> None:
    if args.json:
        json.dump(to_jsonable(payload), sys.stdout, indent=None if isinstance(payload, list) else 2)
        sys.stdout.write("\n")
    else:
        print_table(to_jsonable(rows if rows is not None else payload), columns)
    sys.stdout.flush()
    print_conventions(args)


# -- shared argument helpers --------------------------------------------
def split_list(text: str | None, what: str) -> list[str]:
    items = [part.strip() for part in (text or "").split(",") if part.strip()]
    if not items:
        raise CLIError(f"--{what} needs at least one name (comma-separated)")
    return items


def number_list(text: str | None, what: str, *, integers: bool = False) -> list:
    """Comma-separated numbers for ``--what``: ints with ``integers``, else floats (whole ones as int)."""
    values = []
    for item in split_list(text, what):
        try:
            value = int(item) if integers else float(item)
        except ValueError:
            raise CLIError(f"--{what} must be comma-separated {'integers' if integers else 'numbers'}; "
                           f"got {item!r}") from None
        values.append(int(value) if not integers and value.is_integer() else value)
    return values


def data_dir(args: argparse.Namespace) -> Path | None:
    """The ``--data-dir`` option as a Path (None when not given)."""
    return Path(args.data_dir) if getattr(args, "data_dir", None) else None


def load(args: argparse.Namespace) -> Dataset:
    from metaeval_core.data.registry import DatasetUnavailable, dataset_ids, load_dataset

    humans = getattr(args, "human_measures", None)
    if humans is not None and args.dataset in dataset_ids():  # the core refuses it too, without naming the flag
        raise CLIError(f"--human-measures is only for a file given to --dataset: {args.dataset!r} is a built-in "
                       "dataset, whose human and metric measures are fixed")
    try:
        dataset = load_dataset(args.dataset, data_dir=data_dir(args), download=getattr(args, "download", False),
                               human_measures=None if humans is None else split_list(humans, "human-measures"),
                               lp=getattr(args, "lp", None), mtme_level=getattr(args, "mtme_level", None) or "seg")
    except DatasetUnavailable as error:
        raise CLIError(unavailable_message(error.info)) from None
    if getattr(args, "mtme_level", None) == "sys" and not dataset.metric_measures and (
            getattr(args, "metrics", None) or getattr(args, "metric", None)):
        from metaeval_core.data.mtme import NO_SYSTEM_METRICS

        raise CLIError(NO_SYSTEM_METRICS)
    # A dataset's conventional subset (HANNA: kind=model; WMT data: no reference as a system) applies unless
    # every system is asked for, or a --systems selection of its own is given (made among all systems).
    if getattr(args, "inputs", None):
        dataset = dataset.select_inputs(args.inputs)
    canonical_names(args, dataset)
    everything = dataset.n_systems
    if getattr(args, "systems", None) is not None:
        chosen = f"--systems {args.systems}"
        dataset = dataset.select_systems(args.systems)
        # Applied here, once, so that every table of the command uses this set (the text stays in the records).
        args.selected_systems, args.systems = args.systems, None
    elif getattr(args, "all_systems", False):
        chosen = "every system (--all-systems)"
    else:
        human_translations = bool(getattr(args, "human_translations", False))
        if human_translations and dataset.conventions is None:
            raise CLIError("--human-translations applies to mt-metrics-eval data (WMT's conventions) only; "
                           f"{args.dataset!r} has none: use --systems to choose systems")
        selection = dataset.default_selection(human_translations=human_translations)
        dataset = dataset.with_default_systems(human_translations=human_translations)
        chosen = f"default {selection}" if selection and dataset.n_systems < everything else "every system"
    dataset = _conventional_options(args, dataset)
    args.conventions_caption = _caption(args, dataset, chosen, everything)
    return dataset


def _conventional_options(args: argparse.Namespace, dataset: Dataset) -> Dataset:
    """Fill --pool, --human and --metrics from the dataset's conventions when they are not given, and keep
    the systems every table of the command can use: rated by the human measure and scored by every metric."""
    conventions = dataset.conventions
    if hasattr(args, "pool") and args.pool is None:
        args.pool = conventions.pool if conventions is not None else "judged"
    if hasattr(args, "human") and args.human is None:
        if conventions is None or not conventions.gold:
            raise CLIError(f"--human is required for {args.dataset!r} (no standard human score); its human "
                           f"measures: {', '.join(dataset.human_measures) or 'none'}")
        args.human = conventions.gold
    if hasattr(args, "metrics") and args.metrics is None:
        if conventions is None or not conventions.primary_metrics:
            raise CLIError(f"--metrics is required for {args.dataset!r} (no primary metrics are known)")
        args.metrics = ",".join(conventions.primary_metrics)
    human = getattr(args, "human", None)
    if isinstance(human, str) and human in dataset.measures:
        metrics = [m for m in split_list(args.metrics, "metrics") if m in dataset.measures] \
            if isinstance(getattr(args, "metrics", None), str) else []
        if getattr(args, "metric", None) in dataset.measures:
            metrics.append(args.metric)
        kept = dataset.scored_by([human, *metrics])
        if kept.n_systems >= 2:
            args.dropped_systems = tuple(s for s in dataset.systems if s not in set(kept.systems))
            dataset = kept
    return dataset


def _caption(args: argparse.Namespace, dataset: Dataset, chosen: str, everything: int) -> str:
    """One line naming the conventions and the system set a command's tables use (printed after them)."""
    dropped = getattr(args, "dropped_systems", ())
    systems = (f"systems: {dataset.n_systems} of {everything} ({chosen}"
               + (f"; without a score for the human measure or a metric: {', '.join(dropped)}" if dropped else "")
               + f"): {', '.join(dataset.systems)}")
    if dataset.conventions is None:
        return systems if (dataset.n_systems < everything) else ""
    conventions = dataset.conventions.caption(
        human_translations=bool(getattr(args, "human_translations", False)), pool=getattr(args, "pool", None),
        human=getattr(args, "human", None),
        systems=None if chosen.startswith("default") else chosen)
    return f"{conventions}\n{systems}"


def print_conventions(args: argparse.Namespace) -> None:
    """The conventions and system set of the tables just printed, on stderr (stdout stays the table or JSON)."""
    caption = getattr(args, "conventions_caption", "")
    if caption and not getattr(args, "conventions_printed", False):
        args.conventions_printed = True
        say(caption, stream=sys.stderr)


_NAME_ARGS = ("metric", "human", "versus")  # one measure each
_LIST_ARGS = ("metrics", "measures", "selection_metrics")  # comma-separated measures


def canonical_names(args: argparse.Namespace, dataset: Dataset) -> None:
    """Replace the measures named in ``args`` by their ids (Dataset.resolve: a label such as HANNA's ``BLEU``, any
    case, or an upstream name), so every table shows the id; an unknown name fails here with close names."""
    for attr in _NAME_ARGS:
        value = getattr(args, attr, None)
        if isinstance(value, str) and value.strip():
            setattr(args, attr, dataset.resolve(value.strip()))
    for attr in _LIST_ARGS:
        value = getattr(args, attr, None)
        if isinstance(value, str) and value.strip():
            setattr(args, attr, ",".join(dataset.resolve(v) for v in split_list(value, attr.replace("_", "-"))))


def unavailable_message(info) -> str:
    """'dataset X is not available: what is missing; the command-line remedies' (no Python function names)."""
    from metaeval_core.data.registry import DATA_DIR_ENV, missing_files_text

    # A folder the user named that is not there (a misspelling?), not '9 of 9 files missing'. The default folder
    # (data/cache/) not existing yet is the normal state before the first fetch; --data-dir is checked earlier.
    if os.environ.get(DATA_DIR_ENV) and info.data_dir is not None and not Path(info.data_dir).is_dir():
        return (f"dataset {info.id!r} is not available: its data folder {info.data_dir} ({DATA_DIR_ENV}) does not "
                f"exist; check the spelling, or download the files into it with `metaeval fetch --dataset "
                f"{info.id}` (or add --download to this command)")
    what = missing_files_text(info.files, info.missing, info.data_dir)
    if info.downloadable:
        fix = (f"download them with `metaeval fetch --dataset {info.id}` (or add --download to this command), "
               f"or set {DATA_DIR_ENV} (or --data-dir) to a folder holding them")
    else:
        fix = f"they cannot be downloaded: set {DATA_DIR_ENV} (or --data-dir) to a local mirror holding them"
    return f"dataset {info.id!r} is not available: {what}; {fix}"


def add_dataset_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--dataset", required=True, help="a dataset id (see `datasets`), a path to a CSV/JSONL/Parquet "
                                                    "file, or an mt-metrics-eval test-set directory (with --lp)")
    p.add_argument("--data-dir", help="data directory (default: $METAEVAL_DATA_DIR or data/cache)")
    p.add_argument("--download", action="store_true", help="download missing files of a built-in dataset first")
    p.add_argument("--human-measures", metavar="NAME[,NAME...]",
                   help="for a file given to --dataset: its human measures (the rest are metrics); overrides the "
                        "file's 'kind' column and detection by name")
    p.add_argument("--lp", metavar="SRC-TGT",
                   help="for an mt-metrics-eval test-set directory given to --dataset: the language pair (needed "
                        "when it has several)")
    p.add_argument("--mtme-level", choices=("seg", "sys"), default=None,
                   help="for an mt-metrics-eval directory: seg (default; systems x segments from the .seg.score "
                        "files) or sys (the .sys.score files' own system scores, e.g. corpus BLEU, wmt-z)")
    p.add_argument("--inputs", metavar="SELECTION",
                   help="only these inputs, in the --systems grammar over input attributes and ids, e.g. domain=news "
                        "or domain=news,domain=social on an mt-metrics-eval test set")
    p.add_argument("--all-systems", action="store_true",
                   help="keep every system of a dataset that has a default subset (HANNA: the human-written "
                        "stories, dropped by default as in the published figures; mt-metrics-eval data: the "
                        "references scored as systems, which WMT never scores); --systems also selects among all")
    p.add_argument("--human-translations", action="store_true",
                   help="mt-metrics-eval data: WMT's 'include human translations': every system but the standard "
                        "reference (e.g. refB kept, refA never); default: the MT systems only")


SYSTEMS_HELP = ("a system selection: ATTR=VALUE, system names, all, and !TERM or -TERM to remove, comma-separated "
                "(type=abs; !refA; all,-refA; kind=mt,refB); made among all systems")
POOL_HELP = ("the metrics' input pool at the system level: judged (each system's inputs the human measure scored) "
             "or all (every input); default: the dataset's convention (WMT data: all), else judged")


def add_selection_args(p: argparse.ArgumentParser, *, several_metrics: bool = True) -> None:
    if several_metrics:
        p.add_argument("--metrics", default=None,
                       help="comma-separated metric ids (default on WMT data: the primary metrics)")
    p.add_argument("--human", default=None,
                   help="the human measure id (required unless the dataset has a standard one: WMT's gold)")
    p.add_argument("--level", choices=LEVELS, default="system",
                   help="system (per-system means), input (per input, averaged; the papers' 'summary' level) or "
                        "global (all cells pooled)")
    p.add_argument("--coefficient", choices=COEFFICIENTS, default="kendall", help="tau is kendall")
    p.add_argument("--pool", choices=POOLS, default=None, help=POOL_HELP)
    p.add_argument("--systems", default=None, help=SYSTEMS_HELP)


def add_test_args(p: argparse.ArgumentParser) -> None:
    """The options of a pairwise significance test: --test, --alternative, --correction, --family, --alpha."""
    p.add_argument("--test", default=None,
                   choices=["perm-both", "perm-systems", "perm-inputs", "boot-both", "boot-systems", "boot-inputs",
                            "williams", "wmt-perm-sys"],
                   help="default: wmt-perm-sys (WMT's system-level test, mt-metrics-eval's PermutationSigDiff) at "
                        "the system level on WMT (mt-metrics-eval) data, else perm-both (TACL 2021)")
    p.add_argument("--alternative", choices=["greater", "two-sided"], default="greater")
    p.add_argument("--correction", choices=["bonferroni", "holm", "bh", "none"], default="bonferroni")
    p.add_argument("--family", choices=["row", "table", "none"], default="row")
    p.add_argument("--alpha", type=float, default=0.05)


def chosen_test(args: argparse.Namespace, dataset) -> str:
    """``--test``, or the dataset's default test at ``--level`` and ``--coefficient`` (docs/methods.md sec. 3.6)."""
    from metaeval_core.stats.significance import default_test

    return args.test or default_test(dataset, args.level, args.coefficient)


def resample_count(text: str) -> int:
    """``--n-resamples``: a whole number within the dashboard's bounds (MIN_RESAMPLES..MAX_RESAMPLES)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number; got {text!r}") from None
    if not MIN_RESAMPLES <= value <= MAX_RESAMPLES:
        raise argparse.ArgumentTypeError(
            f"must be between {MIN_RESAMPLES} and {MAX_RESAMPLES:,} (the dashboard's bounds: more takes minutes "
            f"and moves the percentiles by < 0.005); got {value:,}")
    return value


def add_resampling_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--n-resamples", type=resample_count, default=1000,
                   help=f"resamples, {MIN_RESAMPLES}..{MAX_RESAMPLES:,} (default 1000)")
    p.add_argument("--seed", type=int, default=0, help="random seed: the same seed gives the same numbers")


def check_resampling_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """A percentile interval needs ceil(2 / (1 - level)) resamples (40 at 0.95), else its bounds are just the
    extremes drawn; refuse fewer as a usage error (one line, exit 2)."""
    k, level = getattr(args, "n_resamples", None), getattr(args, "confidence_level", None)
    if not isinstance(k, int) or not isinstance(level, float) or not 0.0 < level < 1.0:
        return  # the core's own validation names a bad confidence level
    from metaeval_core._checks import min_resamples_for

    needed = min_resamples_for(level)
    if k < needed:
        parser.error(f"argument --n-resamples: a {level:.4g} interval needs at least {needed} resamples "
                     f"(ceil(2 / (1 - level)): one in each tail); got {k}")


# -- subcommands ---------------------------------------------------------
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


def fit_to_terminal(rows: list[dict], columns: Sequence[str], *, shrink: Sequence[str],
                    width: int | None = None, narrowest: int = 8) -> tuple[list[dict], list[str]]:
    """Shorten the ``shrink`` columns' text (with '…') so the table's lines fit the terminal; a column that would
    be narrower than ``narrowest`` is left out. Returns the rows and the columns kept."""
    width = width or terminal_width()
    rows = [dict(row) for row in rows]
    columns = list(columns)

    def text(v: Any) -> str:
        return "-" if v is None else str(v)

    for column in shrink:
        current = {c: max(len(c), *(len(text(r.get(c))) for r in rows)) for c in columns}
        excess = sum(current.values()) + 2 * (len(columns) - 1) - width
        if excess <= 0:
            break
        keep = current[column] - excess
        if keep < max(narrowest, len(column)):
            columns.remove(column)
            continue
        for row in rows:
            value = text(row.get(column))
            if len(value) > keep:
                row[column] = value[:keep - 1].rstrip() + "…"
    return rows, columns


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


def cmd_correlate(args: argparse.Namespace) -> None:
    from metaeval_core.stats.correlation import correlate

    ds = load(args)
    metrics = split_list(args.metrics, "metrics")
    options = dict(level=args.level, coefficient=args.coefficient, pool=args.pool, systems=args.systems)
    rows = []
    for metric in metrics:
        row = {**correlate(ds, metric, args.human, **options).to_dict(),
               "systems": getattr(args, "selected_systems", None) or ""}
        if args.ci:
            from metaeval_core.stats.resampling import dataset_confidence_interval

            ci = dataset_confidence_interval(
                ds, metric, args.human, method=args.ci, confidence_level=args.confidence_level,
                n_resamples=args.n_resamples, rng=args.seed, **options,
            )
            row.update(ci_method=args.ci, low=ci.low, high=ci.high, n_defined=ci.n_defined,
                       confidence_level=args.confidence_level)
        rows.append(row)
    if args.json:
        emit(args, rows)
        return
    # Text: what every row shares in one heading line, the table only what differs (fits 80 columns).
    say(f"{args.human} vs each metric: {args.level}-level {args.coefficient}, pool {args.pool}"
        + (f"; {args.confidence_level:g} {args.ci} interval ({args.n_resamples} resamples, seed {args.seed})"
           if args.ci and args.ci != "fisher" else f"; {args.confidence_level:g} fisher interval" if args.ci else ""))
    columns = ["metric", "estimate", "n"]
    if args.coefficient == "tie-calibrated-accuracy":
        # The tie threshold is part of the value (docs/methods.md sec. 11.2): one for the whole level.
        columns.append("epsilon")
    if any(row.get("n_undefined") for row in rows):
        columns.append("n_undefined")
    if args.ci:
        columns += ["low", "high", "n_defined"]
    emit(args, rows, columns=columns)


def cmd_compare(args: argparse.Namespace) -> None:
    from metaeval_core.stats.significance import compare_all_pairs

    ds = load(args)
    metrics = split_list(args.metrics, "metrics")
    if len(metrics) < 2:
        raise CLIError("--metrics needs at least two metrics to compare")
    table = compare_all_pairs(
        ds, metrics, args.human, level=args.level, coefficient=args.coefficient, method=chosen_test(args, ds),
        alternative=args.alternative, correction=args.correction, family=args.family, alpha=args.alpha,
        n_resamples=args.n_resamples, rng=args.seed, pool=args.pool, systems=args.systems,
    )
    # Every row names the test that made it (the default depends on the data).
    records = [{**r, "test": table.method} for r in table.to_records()]
    if args.json:
        emit(args, records)
        return
    say(f"x better than y with {args.human}? delta = r(x) - r(y), {args.level}-level {args.coefficient}; "
        f"{table.method} test ({args.n_resamples} resamples, seed {args.seed}, {args.alternative}), "
        f"{args.correction} per {args.family} at alpha {args.alpha:g}")
    emit(args, records, columns=["x", "y", "delta", "pvalue", "significant", "significant_corrected"])


def cmd_delta(args: argparse.Namespace) -> None:
    from metaeval_core.stats.pairs import dataset_means, decile_grid, rsys_delta

    import numpy as np

    # The core's means: systems the human measure rated, the metric over its pool (judged: the human's cells).
    x, z, _ = dataset_means(load(args), args.metric, args.human, pool=args.pool, systems=args.systems)
    if args.grid:
        grid = decile_grid(x, z, min_pairs=args.min_pairs)
        payload = {"metric": args.metric, "human": args.human, "pool": args.pool, "lower": grid.lower,
                   "upper": grid.upper, "tau": np.where(np.isnan(grid.tau), np.nan, grid.tau),
                   "n_pairs": np.where(np.isnan(grid.tau), 0, grid.n_pairs), "min_pairs": args.min_pairs}
        if args.json:
            emit(args, payload)
            return
        rows = []
        for r, low in enumerate(grid.lower):
            row = {"l": float(low)}
            for c, up in enumerate(grid.upper):
                t = grid.tau[r, c]
                row[f"u={up:.3g}"] = None if np.isnan(t) else f"{t:.2f} ({int(grid.n_pairs[r, c])})"
            rows.append(row)
        print_table(rows)
        return
    upper = math.inf if args.upper is None else args.upper
    result = rsys_delta(x, z, lower=args.lower, upper=upper)
    row = {"metric": args.metric, "human": args.human, "pool": args.pool, "lower": args.lower,
           "upper": None if math.isinf(upper) else upper, "estimate": result.estimate,
           "n_pairs": result.n_pairs, "share_of_pairs": result.share_of_pairs}
    emit(args, row, rows=[row])


def cmd_stability(args: argparse.Namespace) -> None:
    from metaeval_core.stats.stability import MAX_STABILITY_SECONDS, estimated_stability_seconds, ranking_stability

    import numpy as np

    ds = load(args).select_systems(args.systems)
    measures = split_list(args.measures, "measures")
    sizes = number_list(args.sizes, "sizes", integers=True)
    seconds = len(measures) * estimated_stability_seconds(ds.n_systems, sizes, n_resamples=args.n_resamples)
    if seconds > MAX_STABILITY_SECONDS:
        raise CLIError(
            f"{len(measures)} measure(s) x {len(sizes)} sizes (up to {max(sizes):,} inputs) x {args.n_resamples:,} "
            f"resamples on {ds.n_systems:,} systems would take about {seconds / 60:.0f} min here (the limit is "
            f"{MAX_STABILITY_SECONDS / 60:.0f} min): use fewer --measures, --sizes or --n-resamples, or --systems")
    rng = np.random.default_rng(args.seed)
    rows = []
    for measure in measures:
        curve = ranking_stability(ds.matrix(measure, pool=args.pool), sizes=sizes,
                                  n_resamples=args.n_resamples, rng=rng)
        for size, mean, std in zip(curve.sizes, curve.mean, curve.std):
            rows.append({"measure": measure, "pool": args.pool if ds.measure(measure).kind == "metric" else "judged",
                         "size": int(size), "mean": mean, "std": std})
    emit(args, rows)


# -- parser --------------------------------------------------------------
class OneLineErrorParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr (exit 2), pointing at --help."""

    def error(self, message: str):  # noqa: D401 - argparse API
        import re

        # A mistyped subcommand: the nearest names (argparse lists all of them, without a suggestion).
        wrong = re.match(r"argument COMMAND: invalid choice: '([^']*)' \(choose from (.*)\)$", message)
        if wrong:
            names = re.findall(r"'([^']*)'", wrong.group(2))
            message = (f"unknown command {wrong.group(1)!r}{did_you_mean(wrong.group(1), names)}; "
                       f"commands: {', '.join(names)}")
        self.exit(EXIT_USAGE, f"error: {self.prog}: {message} (see --help)\n")


def cmd_app(args: argparse.Namespace) -> None:
    # By name, at call time: the core never imports the dashboard's stack (streamlit, plotly) otherwise.
    try:
        serve = importlib.import_module("metaeval_ui.serve")
    except ImportError as error:
        raise CLIError(f"the dashboard cannot start: {error} (install metaeval with its dependencies: "
                       "pip install metaeval, or bash run.sh app in a checkout)") from None
    raise SystemExit(serve.main(list(args.streamlit_args)))


def version() -> str:
    """The installed distribution's version, else pyproject.toml's (a checkout run with PYTHONPATH)."""
    from importlib import metadata

    try:
        return metadata.version("metaeval")
    except metadata.PackageNotFoundError:
        import re

        pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
        found = re.search(r'^version\s*=\s*"([^"]+)"', pyproject.read_text(encoding="utf-8"), re.M) \
            if pyproject.is_file() else None
        return found.group(1) if found else "unknown"


class _VersionAction(argparse.Action):
    """``--version``: read only when asked (importlib.metadata is not free at startup)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"metaeval {version()}")
        parser.exit(0)


def build_parser(prog: str = "metaeval") -> argparse.ArgumentParser:
    parser = OneLineErrorParser(
        prog=prog, formatter_class=HelpFormatter,
        description="Meta-evaluate automatic evaluation metrics against human judgments.",
        epilog="Start with `metaeval datasets`, then `metaeval correlate --dataset demo --human relevance "
               "--metrics rouge1`; every command has --help and --json. The dashboard: `metaeval app`.",
    )
    parser.add_argument("--version", action=_VersionAction, help="print the version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    app = sub.add_parser("app", help="start the dashboard (http://localhost:8501); Streamlit options may follow",
                         formatter_class=HelpFormatter,
                         description="Start the dashboard. Options after `app` go to Streamlit, e.g. "
                                     "`metaeval app --server.port 8600`.")
    app.add_argument("streamlit_args", nargs=argparse.REMAINDER, help="Streamlit options")
    app.set_defaults(func=cmd_app)

    def command(name: str, func: Callable, help: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help, description=help, formatter_class=HelpFormatter)
        p.add_argument("--json", action="store_true", help="machine-readable JSON on stdout")
        p.set_defaults(func=func)
        return p

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

    p = command("correlate", cmd_correlate, "metric-human correlations (optionally with confidence intervals)")
    add_dataset_args(p)
    add_selection_args(p)
    p.add_argument("--ci", choices=CI_METHODS, default=None,
                   help="a confidence interval: fisher, or a bootstrap over systems, inputs or both (default: none)")
    p.add_argument("--confidence-level", type=float, default=0.95, help="the interval's level, a fraction")
    add_resampling_args(p)

    p = command("compare", cmd_compare, "test whether one metric correlates better than another, for all pairs")
    add_dataset_args(p)
    add_selection_args(p)
    add_test_args(p)
    add_resampling_args(p)

    p = command("delta", cmd_delta, "rSYS-Delta(l, u): Kendall tau on system pairs whose metric gap lies in [l, u]")
    add_dataset_args(p)
    p.add_argument("--metric", required=True)
    p.add_argument("--human", required=True)
    p.add_argument("--pool", choices=POOLS, default=None, help=POOL_HELP)
    p.add_argument("--systems", default=None, help=SYSTEMS_HELP)
    p.add_argument("--lower", type=float, default=0.0)
    p.add_argument("--upper", type=float, default=None, help="default: no upper bound")
    p.add_argument("--grid", choices=["deciles"], default=None, help="the decile grid of NAACL 2022 Fig. 6")
    p.add_argument("--min-pairs", type=int, default=5)

    p = command("stability", cmd_stability, "ranking stability: Kendall tau between rankings on two input samples")
    add_dataset_args(p)
    p.add_argument("--measures", required=True)
    p.add_argument("--sizes", required=True, help="comma-separated sample sizes, e.g. 10,20,50,100")
    p.add_argument("--pool", choices=POOLS, default=None, help=POOL_HELP)
    p.add_argument("--systems", default=None, help=SYSTEMS_HELP)
    add_resampling_args(p)

    # Further analyses register their subcommands from their own modules.
    for module_name in _COMMAND_MODULES:
        module = importlib.import_module(module_name)
        module.add_commands(command)
    for subparser in sub.choices.values():
        _polish(subparser)
    return parser


def _polish(parser: argparse.ArgumentParser) -> None:
    """One place for what every subcommand shares: choices in any case, with their aliases (``--coefficient tau``,
    ``--level summary``) and the nearest names when wrong; one spelling ``--metrics`` (``--metric`` kept as a
    hidden alias of a one-metric option)."""
    # The flags by parameter name, for errors raised by the core in its parameters' names (flag_message).
    parser.set_defaults(cli_flags={a.dest: a.option_strings[0] for a in parser._actions if a.option_strings})
    for action in parser._actions:
        if action.choices and action.type is None and action.option_strings:
            dest = action.dest
            action.type = choice(action.choices, aliases=ALIASES.get(dest), name=action.option_strings[0])
            if len(",".join(action.choices)) > 24:  # a long {a,b,...} would overflow the usage line
                action.metavar = dest.upper()
                action.help = f"{action.help + '; ' if action.help else ''}one of: {', '.join(action.choices)}"
        if action.option_strings == ["--metric"]:
            action.option_strings = ["--metrics", "--metric"]
            parser._option_string_actions["--metrics"] = action
            action.type = _one_metric
            action.metavar = action.metavar or "METRIC"
            action.help = action.help or "a metric id (one)"


def _one_metric(text: str) -> str:
    if "," in text:
        raise argparse.ArgumentTypeError(f"this command takes one metric; got {text!r} (run it once per metric)")
    return text


def main(argv: Sequence[str] | None = None, *, prog: str = "metaeval") -> int:
    parser = build_parser(prog)
    if not (sys.argv[1:] if argv is None else list(argv)):  # bare `metaeval`: the commands, not an error line
        sys.stdout.write(parser.format_help())
        return EXIT_USAGE
    # Streamlit's own options follow `app` (argparse's REMAINDER does not take a leading --option).
    args, extra = parser.parse_known_args(argv)
    if extra and args.command != "app":
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    if args.command == "app":
        args.streamlit_args = [*extra, *args.streamlit_args]
    check_resampling_args(parser, args)
    if args.command == "app":  # Streamlit's own output, not ours
        return _run(args)
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = PrintableStream(sys.stdout), PrintableStream(sys.stderr)  # names are data
    try:
        return _run(args)
    finally:
        sys.stdout, sys.stderr = saved


def _check_dataset_args(args: argparse.Namespace) -> None:
    """--data-dir must be a folder; a built-in dataset id in any case is that dataset (SummEval -> summeval), and
    a name that is neither an id nor a file gets the nearest ids."""
    if getattr(args, "data_dir", None) and args.command != "fetch" and not Path(args.data_dir).is_dir():
        raise CLIError(f"--data-dir {args.data_dir}: no such folder (check the spelling; `metaeval fetch "
                       "--data-dir FOLDER` creates one and downloads into it)")
    for attr in ("dataset", "datasets"):
        value = getattr(args, attr, None)
        if not isinstance(value, str) or not value.strip():
            continue
        from metaeval_core.data.registry import dataset_ids

        ids = dataset_ids()
        by_case = {i.lower(): i for i in ids}
        several = args.command == "fetch" or attr == "datasets"
        names = split_list(value, attr) if several else [value.strip()]
        fixed = []
        for name in names:
            if name in ids or Path(name).exists():
                fixed.append(name)
            elif name.lower() in by_case:
                fixed.append(by_case[name.lower()])
            else:
                raise CLIError(f"--{attr} {name!r} is neither a built-in dataset nor an existing file or folder"
                               f"{did_you_mean(name, ids)}; built-in datasets: {', '.join(ids)} "
                               "(`metaeval datasets` lists them)")
        setattr(args, attr, ",".join(fixed))


def _run(args: argparse.Namespace) -> int:
    try:
        _check_dataset_args(args)
        code = args.func(args)  # None, or a command's own exit code (reproduce: 1 on a real mismatch)
        sys.stdout.flush()
        print_conventions(args)  # commands that print their tables themselves: once, after them
        if code:
            return int(code)
    except BrokenPipeError:  # the reader went away (`... | head`): stop quietly, as other command-line tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (CLIError, ValueError, TypeError, FileNotFoundError, OSError) as error:
        if os.environ.get("METAEVAL_DEBUG"):
            raise
        message = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        if not isinstance(error, CLIError):  # the core names its parameters; say the flags
            message = flag_message(message, getattr(args, "cli_flags", {}))
        print(f"error: {message}", file=sys.stderr)
        return EXIT_USAGE
    except ImportError as error:  # run outside the environment the README sets up
        if os.environ.get("METAEVAL_DEBUG"):
            raise
        print(f"error: {missing_dependency_message(error)}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    except Exception as error:  # noqa: BLE001 - the CLI must never show a traceback to a user
        if os.environ.get("METAEVAL_DEBUG"):
            raise
        print(f"internal error ({type(error).__name__}): {error}; rerun with METAEVAL_DEBUG=1 for details",
              file=sys.stderr)
        return EXIT_INTERNAL
    return 0


def entry() -> None:
    """The ``metaeval`` console command (``pyproject.toml``'s ``[project.scripts]``)."""
    sys.exit(main())
