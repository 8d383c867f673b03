"""CLI subcommands of the REALSumm, SummEval and Peyrard analyses (docs/methods.md sec. 7 and 8).

``reproduce``, ``ceiling`` (human ceilings), ``chance`` (chance baselines), ``average`` (averages over tasks),
``topk``, ``pairwise-f1``, ``matrix``, ``annotators``,
``high-range`` and ``normality``; each has ``--help`` and ``--json``. Registered by
:mod:`metaeval_core.cli.main` through ``add_commands(command)``.
"""

from __future__ import annotations

import argparse
from typing import Callable

from metaeval_core.cli.options import COEFFICIENTS as ALL_COEFFICIENTS
from metaeval_core.cli.options import LEVELS, POOLS
from metaeval_core.cli.options import POINT_COEFFICIENTS as COEFFICIENTS


def _cli():
    from metaeval_core.cli import common as cli

    return cli


def cmd_topk(args: argparse.Namespace) -> None:
    from metaeval_core.analyses.papers import topk_correlations

    cli = _cli()
    result = topk_correlations(
        cli.load(args), cli.split_list(args.metrics, "metrics"), args.human, coefficient=args.coefficient,
        pool=args.pool, systems=args.systems, min_k=args.min_k,
    )
    cli.emit(args, result.to_records(), columns=["metric", "k", "estimate"])


def cmd_pairwise_f1(args: argparse.Namespace) -> None:
    from metaeval_core.analyses.papers import pairwise_f1

    cli = _cli()
    result = pairwise_f1(
        cli.load(args), cli.split_list(args.metrics, "metrics"), args.human, n_resamples=args.n_resamples,
        confidence=args.confidence, systems=args.systems, rng=args.seed,
    )
    rows = result.to_records()
    if args.labels:
        if args.json:
            for row in rows:
                row["labels"] = [
                    {k: v for k, v in label.items() if k != "metric"} for label in result.label_records(row["metric"])
                ]
            cli.emit(args, rows)
            return
        cli.print_table(rows, ["metric", "f1"])
        print()
        cli.print_table(result.label_records(), ["metric", "system_a", "system_b", "human_label", "metric_label",
                                                 "human_share", "metric_share"])
        return
    cli.emit(args, rows, columns=["metric", "f1"])


def cmd_matrix(args: argparse.Namespace) -> None:
    from metaeval_core.analyses.papers import correlation_matrix

    cli = _cli()
    result = correlation_matrix(
        cli.load(args), cli.split_list(args.measures, "measures"), level=args.level, coefficient=args.coefficient,
        pool=args.pool, systems=args.systems, order=args.order,
    )
    if args.json:
        cli.emit(args, result.to_dict())
        return
    rows = []
    for i, name in enumerate(result.measures):
        row = {"measure": name}
        for j, other in enumerate(result.measures):
            row[str(j + 1)] = float(result.matrix[i, j])
        rows.append(row)
    cli.say(f"{result.level}-level {result.coefficient} ({result.order} order); columns follow the rows' numbering")
    cli.print_table([{"#": i + 1, **row} for i, row in enumerate(rows)])


def cmd_annotators(args: argparse.Namespace) -> None:
    from metaeval_core.analyses.papers import annotator_agreement

    cli = _cli()
    groups = cli.split_list(args.groups, "groups") if args.groups else None
    levels = cli.split_list(args.levels, "levels")
    coefficients = cli.split_list(args.coefficients, "coefficients")
    result = annotator_agreement(cli.load(args), groups=groups, levels=levels, coefficients=coefficients,
                                 systems=args.systems)
    if args.correlations:
        cli.emit(args, result.correlation_records(),
                 columns=["dimension", "group_a", "group_b", "level", "coefficient", "estimate", "n"])
        return
    cli.emit(args, result.to_records(), columns=["group", "dimension", "alpha", "n_units", "n_values", "n_annotators"])
    if not args.json:
        cli.say(f"note: {result.note}")


def cmd_high_range(args: argparse.Namespace) -> None:
    from metaeval_core.analyses.papers import high_range

    cli = _cli()
    dataset = cli.load(args)  # first: it turns labels into ids in args
    selection = cli.split_list(args.selection_metrics, "selection-metrics") if args.selection_metrics else None
    result = high_range(
        dataset, cli.split_list(args.metrics, "metrics"), baseline=args.baseline,
        selection_metrics=selection, n_bins=args.bins, normalise=args.normalise, pool=args.pool,
        systems=args.systems,
    )
    if args.json:
        cli.emit(args, result.to_dict())
        return
    from metaeval_core.wording import number

    cli.say(f"baseline {result.baseline}: {result.mean_kept:.2f} of {len(result.system_names)} "
            f"{dataset.vocabulary.outputs} kept per input; mean Kendall tau all {number(result.mean_tau_all)}, "
            f"top range {number(result.mean_tau_top)}")
    cli.print_table(result.to_records())
    print()
    cli.print_table(result.curve_records())


def cmd_normality(args: argparse.Namespace) -> None:
    from metaeval_core.analyses.papers import normality_table

    cli = _cli()
    result = normality_table(cli.load(args), cli.split_list(args.measures, "measures"), pool=args.pool,
                             systems=args.systems, alpha=args.alpha)
    cli.emit(args, result.to_records(), columns=["measure", "kind", "pool", "system_p", "system_n", "input_share",
                                                 "input_tested", "input_skipped"])


MARKS = {"reproduced": "✓", "differs": "✗", "not reproducible": "~", "not computed": "?"}


def cmd_reproduce(args: argparse.Namespace) -> int:
    from metaeval_core.analyses.reproduce import reproduce, reproduction_records, verdict_counts
    from metaeval_core.data.registry import load_dataset

    cli = _cli()
    directory = cli.data_dir(args)
    wanted = cli.split_list(args.datasets, "datasets") if args.datasets else None
    rows = reproduce(lambda dataset_id: load_dataset(dataset_id, data_dir=directory), datasets=wanted)
    counts = verdict_counts(rows)
    if args.json:
        cli.emit(args, reproduction_records(rows))
    else:
        print_reproduction(rows, counts)
    # A real mismatch fails the command (scripts, CI); numbers the data cannot give, or data not here, do not.
    return 1 if counts["differs"] else 0


def print_reproduction(rows, counts: dict[str, int]) -> None:
    """The summary first; per paper and table one line per number (✓ / ✗ / ~ not reproducible from these
    data), each distinct note once as a footnote; numbers not computed (data missing) one line per dataset."""
    cli = _cli()
    cli.say(f"{len(rows)} published numbers: {counts['reproduced']} reproduced ✓, {counts['differs']} differ ✗, "
            f"{counts['not reproducible']} not reproducible from these data ~, {counts['not computed']} not "
            "computed ?")
    notes: dict[str, int] = {}

    def mark(note: str) -> str:
        return f"[{notes.setdefault(note, len(notes) + 1)}]" if note else ""

    computed = [r for r in rows if r.verdict != "not computed" or not r.note.startswith("data not available")]
    for source in dict.fromkeys((r.paper, r.table) for r in computed):
        section = [r for r in computed if (r.paper, r.table) == source]
        datasets = sorted({r.dataset for r in section})
        print()
        cli.say(f"{source[0]}, {source[1]}" + (f" (dataset {datasets[0]})" if len(datasets) == 1 else ""))
        cli.print_table(cli.to_jsonable([
            {" ": MARKS[r.verdict], "what": r.description, **({"dataset": r.dataset} if len(datasets) > 1 else {}),
             "published": r.published, "metaeval": r.value, "note": mark(r.note)} for r in section]))
    absent: dict[str, int] = {}
    for r in rows:
        if r not in computed:
            absent[r.dataset] = absent.get(r.dataset, 0) + 1
    if absent:  # one line, not the loader's message once per number
        print()
        cli.say(f"? not computed, data not available: {', '.join(f'{d} ({n})' for d, n in absent.items())}; "
                f"download with `metaeval fetch --dataset {','.join(absent)}`, or set METAEVAL_DATA_DIR (or "
                "--data-dir) to a folder holding them (`metaeval datasets` says what is missing)")
    if notes:
        print()
        cli.say(*(f"[{k}] {note}" for note, k in notes.items()), indent="")
    cli.say("", "✓ within the published value's tolerance; ✗ outside it; ~ the data cannot reproduce it (the value "
                "is shown for comparison); --json gives every record")


def cmd_leaderboard(args: argparse.Namespace) -> None:
    """``clusters --view leaderboard``: the Overview's leaderboard (metaeval_core.analyses.leaderboard), the same
    object the page renders: clusters, BOOT-BOTH intervals, chance and human-ceiling rows."""
    from metaeval_core.analyses.leaderboard import metrics_leaderboard
    from metaeval_core.wording import bounds, number, sentence

    cli = _cli()
    ds = cli.load(args)
    board = metrics_leaderboard(
        ds, cli.split_list(args.metrics, "metrics"), args.human, level=args.level, coefficient=args.coefficient,
        pool=args.pool, systems=args.systems, test=cli.chosen_test(args, ds), alternative=args.alternative,
        correction=args.correction, family=args.family, alpha=args.alpha, n_resamples=args.n_resamples,
        rng=args.seed)
    if args.json:
        cli.emit(args, board.to_dict())
        return
    interval = f"{100 * board.confidence_level:g}% interval"
    rows = []
    for r in board.rows:
        row = {"rank": str(r.cluster) if r.kind == "metric" else r.kind, "metric": r.name,
               board.coefficient if len(board.coefficient) <= 12 else "estimate": number(r.estimate),
               interval: bounds(r.low, r.high)}
        if board.has_epsilon:
            row["epsilon"] = number(r.epsilon, 3, missing="-")
        rows.append(row)
    cli.print_table(rows)
    notes = [board.rule()]
    if separation := board.separation():
        notes.append(separation)
    if any(r.kind == "metric" and r.cluster == 1 and r.doubt for r in board.rows):
        notes.append("Rank 1 says little for " + "; ".join(f"{r.name} ({r.doubt})" for r in board.metrics
                                                          if r.cluster == 1 and r.doubt) + ".")
    if board.chance_note:
        notes.append(sentence(f"No chance row: {board.chance_note}"))
    if board.ceiling_note:
        notes.append(sentence(f"No human-ceiling rows: {board.ceiling_note}"))
    notes.append(sentence(f"Order: {board.ordering}"))
    notes.append(sentence(f"Human ceiling: {board.ceiling_rule}"))
    cli.say(*notes)


def cmd_ceiling(args: argparse.Namespace) -> None:
    from metaeval_core.analyses.ceilings import human_ceiling

    cli = _cli()
    result = human_ceiling(
        cli.load(args), args.human, level=args.level, coefficient=args.coefficient, method=args.ci,
        confidence_level=args.confidence_level, n_resamples=args.n_resamples, rng=args.seed, systems=args.systems,
    )
    cli.emit(args, result.to_records(), columns=["human", "annotator", "estimate", "low", "high", "n_defined"])


def cmd_chance(args: argparse.Namespace) -> None:
    from metaeval_core.analyses.chance import chance_baselines

    cli = _cli()
    ds, metrics = cli.load(args), cli.split_list(args.metrics, "metrics")
    options = dict(level=args.level, coefficient=args.coefficient, pool=args.pool, systems=args.systems,
                   confidence_level=args.confidence_level)
    # On all metrics: they share each permutation's work (the global level's one tau per permutation).
    cli.budget_check(args, lambda k: chance_baselines(ds, metrics, args.human, n_resamples=k, rng=0, **options),
                     what=f"chance baselines of {len(metrics)} metric(s) with {args.n_resamples:,} permutations",
                     n_metrics=len(metrics), pilot_on="all metrics")
    result = chance_baselines(
        ds, metrics, args.human, level=args.level,
        coefficient=args.coefficient, pool=args.pool, systems=args.systems, n_resamples=args.n_resamples,
        confidence_level=args.confidence_level, rng=args.seed,
    )
    if not args.json:  # what every row shares in a heading line: the table fits 80 columns
        cli.say(f"{args.human} vs each metric: {args.level}-level {args.coefficient}, chance level by permutation")
    cli.emit(args, result.to_records(), columns=["metric", "observed", "estimate", "low", "high", "mc_se",
                                                 "n_defined"])
    if not args.json:
        print()
        cli.say(f"estimate: mean over {args.n_resamples:,} permutations of each metric's scores (humans fixed, seed "
              f"{args.seed}); low/high: their central {100 * args.confidence_level:g}%; observed: the metric's own "
              "value (docs/methods.md sec. 12)")
# The suite's pilots: 4 and 8 resamples (~0.4 s each for wmt23, ~1.5 s for wmt24, plus the point values twice);
# without an explicit --budget only from this many resamples, where the pilots cost a small share of the run.
SUITE_PILOT_RESAMPLES = 4
SUITE_PRICED_FROM = 100


def cmd_suite(args: argparse.Namespace) -> None:
    """``average --dataset wmt23 --tasks wmt23|wmt24``: mt-metrics-eval's task suite over the test set's pairs."""
    from metaeval_core.analyses.suites import SUITE_LABELS, SUITE_TEST_LABELS, load_suite_data, run_suite

    cli = _cli()
    if args.task or args.metrics:
        raise cli.CLIError("--tasks runs a whole suite on --dataset (its metrics: the primary metrics of every "
                           "language pair); leave out --task and --metrics")
    if not args.dataset:
        raise cli.CLIError("--tasks needs --dataset: a built-in test set with several language pairs (wmt23)")
    from metaeval_core.data.registry import DatasetUnavailable

    lps = None if not args.lps else cli.split_list(args.lps, "lps")
    try:
        data = load_suite_data(args.dataset, lps, data_dir=cli.data_dir(args), download=args.download)
    except DatasetUnavailable as error:
        raise cli.CLIError(cli.unavailable_message(error.info)) from None
    k = args.suite_resamples if args.suite_resamples is not None else 0
    if k:  # priced by pilots of the real run (docs/methods.md sec. 16.5); their level only sets the interval
        cli.budget_check(args, lambda r: run_suite(data, args.tasks, n_resamples=r, method=args.ci,
                                                   test=args.suite_test, confidence_level=0.5, alpha=args.alpha,
                                                   rng=args.seed),
                         what=f"{SUITE_LABELS[args.tasks]} with {k:,} resamples (intervals and clusters)",
                         n_metrics=1, pilot_on="all metrics", n_resamples=k, pilot_resamples=SUITE_PILOT_RESAMPLES,
                         priced_by_default=k >= SUITE_PRICED_FROM)
    result = run_suite(data, args.tasks, n_resamples=k, method=args.ci, test=args.suite_test,
                       confidence_level=args.confidence_level, alpha=args.alpha, rng=args.seed)
    if args.json:
        cli.emit(args, result.to_dict())
        return
    rows = result.to_records()
    columns = ["cluster", "metric", "average", "low", "high"] if k else ["metric", "average"]
    cli.print_table(rows, columns)
    print()
    cli.say(f"{SUITE_LABELS[result.suite]}; average: each task rescaled to [0, 1] by its range, weighted "
            f"(mt-metrics-eval AverageCorrs)" + (f"; interval {result.method.upper()} over {k:,} resamples, clusters "
                                                 f"by {SUITE_TEST_LABELS[result.test]}, alpha "
                                                 f"{result.table.alpha:g}" if k and result.table else
                                                 "; no intervals (--suite-resamples K for intervals and clusters)"))
    print()
    cli.say("tasks (mt-metrics-eval's names, weight):")
    for task in result.tasks:
        print(f"  {task.short}: {task.label} (weight {task.weight:.4f})")
    cli.print_table([{"metric": r["metric"], **{t.short: r[t.short] for t in result.tasks}} for r in rows])


def cmd_average(args: argparse.Namespace) -> None:
    from metaeval_core.analyses.average import average_over_tasks, parse_task

    cli = _cli()
    if args.tasks:
        cmd_suite(args)
        return
    if not args.task or not args.metrics:
        raise cli.CLIError("average needs --task (repeated) and --metrics, or a suite: --dataset wmt23 --tasks "
                           "wmt23|wmt24")
    try:
        tasks = [parse_task(text, level=args.level, coefficient=args.coefficient, pool=args.pool,
                            systems=args.systems) for text in args.task]
    except ValueError as error:
        raise cli.CLIError(f"--task: {error}") from None
    # Each dataset once, loaded as --dataset would load it (default system subset, data directory, download).
    # The tasks apply --systems themselves, among all systems (as --systems does for one dataset).
    datasets = {name: cli.load(argparse.Namespace(**{**vars(args), "dataset": name, "systems": None,
                                                     "all_systems": args.all_systems or args.systems is not None}))
                for name in dict.fromkeys(t.dataset for t in tasks)}
    result = average_over_tasks(
        datasets, tasks, cli.split_list(args.metrics, "metrics"), method=args.ci, test=args.test,
        alternative=args.alternative, correction=args.correction, family=args.family, alpha=args.alpha,
        confidence_level=args.confidence_level, n_resamples=args.n_resamples, rng=args.seed, rule=args.rule,
    )
    if args.json:
        cli.emit(args, result.to_dict())
        return
    from metaeval_core.analyses.average import RULE_LABELS
    from metaeval_core.stats.significance import method_label

    rows = result.to_records()
    cli.print_table(rows, ["cluster", "metric", "average", "low", "high", "n_defined", "reason"])
    print()
    cli.say(f"average: {RULE_LABELS[result.rule]} (--rule {result.rule}); interval {result.method.upper()}; "
          f"clusters: {method_label(result.test)}, {result.correction} per {result.family}, alpha {result.alpha:g}")
    print()
    cli.say("per task (draw group in brackets: tasks of one group share their resamples):")
    labels = [f"{i + 1}" for i in range(len(tasks))]
    for label, task, group in zip(labels, tasks, result.draw_groups):
        print(f"  {label}: {task.label} [{group}]")
    cli.print_table([{"metric": r["metric"], **{label: r[t.label] for label, t in zip(labels, tasks)}} for r in rows])


def add_commands(command: Callable[..., argparse.ArgumentParser]) -> None:
    """Register the analysis subcommands with the main parser's ``command`` factory."""
    cli = _cli()

    p = command("reproduce", cmd_reproduce, "recompute the published numbers the built-in data can reproduce "
                "(SummEval/SacreROUGE tables, TACL 2021, NAACL 2022, Krippendorff alphas, REALSumm) and tick each")
    p.add_argument("--data-dir", help="data directory (default: $METAEVAL_DATA_DIR or data/cache)")
    p.add_argument("--datasets", default=None, help="only these dataset ids, comma-separated (default: all)")

    p = command("ceiling", cmd_ceiling, "the human ceiling: each annotator scored against the mean of the others "
                "as if it were a metric, with intervals (docs/methods.md sec. 14)")
    cli.add_dataset_args(p)
    p.add_argument("--human", required=True, help="a human measure that keeps per-annotator scores")
    p.add_argument("--level", choices=LEVELS, default="system")
    p.add_argument("--coefficient", choices=ALL_COEFFICIENTS, default="kendall")
    p.add_argument("--systems", default=None, help=cli.SYSTEMS_HELP)
    p.add_argument("--ci", choices=["fisher", "boot-systems", "boot-inputs", "boot-both"], default="boot-both")
    p.add_argument("--confidence-level", type=float, default=0.95)
    cli.add_resampling_args(p)

    p = command("chance", cmd_chance, "chance baselines: each metric's coefficient after permuting its scores "
                "within the level's grouping (mean and central range over the permutations; docs/methods.md "
                "sec. 12)")
    cli.add_dataset_args(p)
    cli.add_selection_args(p)
    p.add_argument("--confidence-level", type=float, default=0.95, help="width of the permutation range")
    cli.add_resampling_args(p)
    cli.add_budget_arg(p, "chance baselines")

    p = command("average", cmd_average, "average of each metric over several tasks (dataset, human measure, level, "
                "coefficient): WMT's rescaled average or the plain mean, with intervals, tests and significance "
                "clusters on the average (docs/methods.md sec. 13)")
    p.add_argument("--task", action="append", metavar="DATASET:HUMAN[:LEVEL[:COEFFICIENT]]",
                   help="a task; repeat for each (e.g. --task summeval:expert.coherence --task "
                        "summeval:expert.relevance:input:pearson); level and coefficient default to --level and "
                        "--coefficient")
    p.add_argument("--metrics", help="comma-separated metric ids (with --task)")
    p.add_argument("--tasks", choices=["wmt23", "wmt24"], default=None,
                   help="instead of --task: mt-metrics-eval's task suite on --dataset (all its language pairs): "
                        "wmt23 = tasks.WMT23() (the WMT23 official ranking), wmt24 = tasks.WMT24OnWMT23() (the WMT24 "
                        "protocol); one record per metric: its average and each task's value (docs/methods.md "
                        "sec. 13.4)")
    p.add_argument("--dataset", default=None, help="with --tasks: a built-in test set with several language pairs "
                                                   "(wmt23)")
    p.add_argument("--lps", default=None, help="with --tasks: only these language pairs, comma-separated")
    p.add_argument("--suite-resamples", type=int, default=None, metavar="K",
                   help="with --tasks: bootstrap resamples for the average's intervals and clusters (default 0: "
                        "point values, as mt-metrics-eval's k=0; ~0.4 s per resample for wmt23, ~1.5 s for wmt24)")
    cli.add_budget_arg(p, "with --tasks: the suite's intervals and clusters (--suite-resamples)",
                       default_note=f"priced from {SUITE_PRICED_FROM} resamples")
    p.add_argument("--suite-test", choices=["wmt-perm", "paired-bootstrap"], default=None,
                   help="with --tasks and --suite-resamples: how the clusters are found. wmt-perm (default for "
                        "wmt23): mt-metrics-eval's AverageCorrMatrix, K permutation draws per task and pair of "
                        "metrics (perm_test='pairs' for acc23), no correction, ~0.5 s per draw; paired-bootstrap "
                        "(default for wmt24, whose SPA permutation test takes ~25 s per draw): metaeval's paired "
                        "bootstrap test on the averages, Bonferroni per row (docs/methods.md sec. 13.4)")
    p.add_argument("--level", choices=LEVELS, default="system", help="level of tasks that do not name one")
    p.add_argument("--coefficient", choices=ALL_COEFFICIENTS, default="kendall",
                   help="coefficient of tasks that do not name one")
    p.add_argument("--pool", choices=POOLS, default="judged", help="the metrics' input pool (system level)")
    p.add_argument("--systems", default=None, help="a system subset such as type=abs (every task)")
    p.add_argument("--data-dir", help="data directory (default: $METAEVAL_DATA_DIR or data/cache)")
    p.add_argument("--download", action="store_true", help="download missing files of built-in datasets first")
    p.add_argument("--all-systems", action="store_true",
                   help="keep every system of a dataset that has a default subset (HANNA's human-written stories)")
    p.add_argument("--ci", choices=["boot-both", "boot-systems", "boot-inputs"], default="boot-both")
    p.add_argument("--confidence-level", type=float, default=0.95)
    p.add_argument("--test", default=None,
                   choices=["perm-both", "perm-systems", "perm-inputs", "boot-both", "boot-systems", "boot-inputs",
                            "wmt-perm-sys"],
                   help="default: wmt-perm-sys (WMT's test) when every dataset is WMT data and every task is at the "
                        "system level, else perm-both")
    p.add_argument("--rule", default=None, choices=["rescaled", "mean"],
                   help="rescaled: WMT's average (each task mapped to [0, 1] by its coefficient's range, "
                        "mt-metrics-eval AverageCorrs); mean: the plain mean. Default: rescaled on WMT data, else mean")
    p.add_argument("--alternative", choices=["greater", "two-sided"], default="greater")
    p.add_argument("--correction", choices=["bonferroni", "holm", "bh", "none"], default="bonferroni")
    p.add_argument("--family", choices=["row", "table", "none"], default="row")
    p.add_argument("--alpha", type=float, default=0.05)
    cli.add_resampling_args(p)

    p = command("topk", cmd_topk, "system-level correlation among the top-k systems by human score, k = N..min-k "
                "(Bhandari et al. 2020, sec. 4.2)")
    cli.add_dataset_args(p)
    p.add_argument("--metrics", required=True, help="comma-separated metric ids")
    p.add_argument("--human", required=True, help="the human measure id")
    p.add_argument("--coefficient", choices=COEFFICIENTS, default="pearson")
    p.add_argument("--pool", choices=POOLS, default=None, help=cli.POOL_HELP)
    p.add_argument("--systems", default=None, help=cli.SYSTEMS_HELP)
    p.add_argument("--min-k", type=int, default=3)

    p = command("pairwise-f1", cmd_pairwise_f1, "weighted F1 of metric vs human significance labels for every "
                "system pair, paired bootstrap over inputs (Bhandari et al. 2020, sec. 4.3)")
    cli.add_dataset_args(p)
    p.add_argument("--metrics", required=True, help="comma-separated metric ids")
    p.add_argument("--human", required=True, help="the human measure id")
    p.add_argument("--systems", default=None, help=cli.SYSTEMS_HELP)
    p.add_argument("--confidence", type=float, default=0.95, help="share of resamples needed for a label 1 or 2")
    p.add_argument("--labels", action="store_true", help="include the per-pair labels")
    cli.add_resampling_args(p)

    p = command("matrix", cmd_matrix, "measure-by-measure correlation matrix, humans included (SummEval Fig. 1)")
    cli.add_dataset_args(p)
    p.add_argument("--measures", required=True, help="comma-separated measure ids (metrics and humans)")
    p.add_argument("--level", choices=LEVELS, default="system")
    p.add_argument("--coefficient", choices=COEFFICIENTS, default="kendall")
    p.add_argument("--pool", choices=POOLS, default=None, help=cli.POOL_HELP)
    p.add_argument("--systems", default=None, help=cli.SYSTEMS_HELP)
    p.add_argument("--order", choices=["given", "clustered"], default="given")

    p = command("annotators", cmd_annotators, "Krippendorff's alpha per annotator group and dimension (and 'all'); "
                "with --correlations, group-mean correlations such as expert vs crowd")
    cli.add_dataset_args(p)
    p.add_argument("--groups", default=None, help="comma-separated annotator groups (default: all)")
    p.add_argument("--levels", default="global,system", help="levels of the group-mean correlations")
    p.add_argument("--coefficients", default="kendall,pearson", help="coefficients of the group-mean correlations")
    p.add_argument("--systems", default=None, help=cli.SYSTEMS_HELP)
    p.add_argument("--correlations", action="store_true", help="print the group-mean correlations instead of alpha")

    p = command("high-range", cmd_high_range, "metric-metric Kendall tau on all outputs vs those beating a "
                "baseline, and the disagreement curve (Peyrard 2019)")
    cli.add_dataset_args(p)
    p.add_argument("--metrics", required=True, help="comma-separated metric ids (at least two)")
    p.add_argument("--baseline", required=True, help="the baseline system, e.g. M0 (Lead-3) on SummEval")
    p.add_argument("--selection-metrics", default=None, metavar="NAMES", help="metrics that select the high range (default: --metrics)")
    p.add_argument("--bins", type=int, default=10, help="bins of the normalised pair score")
    p.add_argument("--normalise", choices=["input", "global"], default="input")
    p.add_argument("--pool", choices=POOLS, default=None, help=cli.POOL_HELP)
    p.add_argument("--systems", default=None, help="a system subset such as type=abs (must keep the baseline)")

    p = command("normality", cmd_normality, "Shapiro-Wilk p of system means; share of inputs with p < alpha")
    cli.add_dataset_args(p)
    p.add_argument("--measures", required=True, help="comma-separated measure ids")
    p.add_argument("--pool", choices=POOLS, default=None, help=cli.POOL_HELP)
    p.add_argument("--systems", default=None, help=cli.SYSTEMS_HELP)
    p.add_argument("--alpha", type=float, default=0.05)
