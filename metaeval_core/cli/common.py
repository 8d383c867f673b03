"""What the command families share: the one-line user error, the dataset, selection, test and resampling
options, and the dataset they load (WMT's conventions applied and named).

A command module needs one import, ``from metaeval_core.cli import common as cli``: the output helpers of
:mod:`metaeval_core.cli.output` are re-exported here."""

from __future__ import annotations

import argparse
import math
import os
from pathlib import Path
from typing import TYPE_CHECKING

from metaeval_core.cli.options import COEFFICIENTS, LEVELS, MAX_RESAMPLES, MIN_RESAMPLES, POOLS, SYSTEM_ORDERS
from metaeval_core.cli.output import (  # noqa: F401 - one import for a command module
    emit, fit_to_terminal, print_conventions, print_table, say, to_jsonable,
)

if TYPE_CHECKING:
    from metaeval_core.data.dataset import Dataset


class CLIError(Exception):
    """A user-facing error: printed as one line, exit code 2."""


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


def seconds(text: str) -> float:
    """``--budget``: a non-negative number of seconds (0: no budget)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of seconds; got {text!r}") from None
    if not value >= 0 or math.isinf(value):
        raise argparse.ArgumentTypeError(f"must be 0 (no budget) or a positive number of seconds; got {text!r}")
    return value


DEFAULT_BUDGET_SECONDS = 600.0


def add_budget_arg(p: argparse.ArgumentParser, what: str,
                   default_note: str = "priced at the global level only") -> None:
    """``--budget`` for a command whose resampling is priced by a pilot (docs/methods.md sec. 16.5)."""
    p.add_argument("--budget", type=seconds, default=None, metavar="SECONDS",
                   help=f"decide before running (docs/methods.md sec. 16.5): {what} estimated (by a short pilot "
                        "runs) beyond SECONDS are refused with their cost and lighter settings; 0: no budget "
                        f"(default 600, {default_note})")


def budget_check(args: argparse.Namespace, run_one, *, what: str, n_metrics: int,
                 pilot_on: str = "one metric", n_resamples: int | None = None, pilot_resamples: int | None = None,
                 priced_by_default: bool | None = None) -> None:
    """The pilot-priced cost decision of a resampling command before it starts: a CLIError naming the cost and
    what fits when refused. ``run_one(k)`` runs the real kernel with ``k`` resamples on one metric (or on all,
    ``pilot_on="all metrics"``); an error in it is left to the real run, whose validation names it.
    ``n_resamples``: the run's resamples (default ``--n-resamples``); ``pilot_resamples``: the pilot's (default:
    the fewest the interval's level accepts); ``priced_by_default``: whether the pilots run without an explicit
    ``--budget`` (default: at the global level only)."""
    explicit = args.budget is not None
    budget = args.budget if explicit else DEFAULT_BUDGET_SECONDS
    # Without an explicit --budget the pilots run only at the global level: the system and input levels of these
    # commands take seconds at WMT scale (docs/speed.md), where the pilots would only add to the wait.
    if priced_by_default is None:
        priced_by_default = getattr(args, "level", "global") == "global"
    if not budget or (not explicit and not priced_by_default):
        return
    from metaeval_core._checks import min_resamples_for
    from metaeval_core.stats.budget import PILOT_RESAMPLES, pilot_decision

    # The pilot's own percentile interval must be one the core accepts (40 resamples at 0.95).
    level = getattr(args, "confidence_level", 0.95)
    pilot = pilot_resamples or max(PILOT_RESAMPLES, min_resamples_for(level) if 0.0 < level < 1.0 else 1)
    try:
        decision = pilot_decision(run_one, what=what, n_metrics=n_metrics, budget_seconds=budget,
                                  n_resamples=args.n_resamples if n_resamples is None else n_resamples,
                                  pilot_resamples=pilot, where=f"--budget {budget:g} s", pilot_on=pilot_on)
    except (KeyError, ValueError):
        return
    if decision.action == "refuse":
        raise CLIError(decision.sentence + " (--budget 0 runs it anyway)")


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


def system_order(args: argparse.Namespace, what: str) -> str:
    """``--order`` where the judges' verdicts score systems (``what``: the view, for the message): never 'both'."""
    if args.order not in SYSTEM_ORDERS:
        raise CLIError(f"{what}: --order must be one of {', '.join(SYSTEM_ORDERS)} (the judges' verdicts the systems "
                       f"are scored from); got {args.order!r}")
    return args.order
