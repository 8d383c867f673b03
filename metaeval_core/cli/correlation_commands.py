"""The correlation commands: ``correlate``, ``compare``, ``delta`` and ``stability``."""

from __future__ import annotations

import argparse
import math
from typing import Callable

from metaeval_core.cli.common import (
    POOL_HELP, SYSTEMS_HELP, CLIError, add_dataset_args, add_resampling_args, add_selection_args, add_test_args,
    add_budget_arg, budget_check, chosen_test, load, number_list, seconds as _seconds, split_list,
)
from metaeval_core.cli.options import CI_METHODS, POOLS
from metaeval_core.cli.output import emit, print_table, say
from metaeval_core.wording import number


def cmd_correlate(args: argparse.Namespace) -> None:
    from metaeval_core.stats.correlation import correlate

    ds = load(args)
    metrics = split_list(args.metrics, "metrics")
    options = dict(level=args.level, coefficient=args.coefficient, pool=args.pool, systems=args.systems)
    if args.ci and args.ci != "fisher":
        from metaeval_core.stats.resampling import dataset_confidence_interval

        # A name or option the core rejects is left to the run below, whose validation names it.
        budget_check(args, lambda k: dataset_confidence_interval(
            ds, metrics[0], args.human, method=args.ci, confidence_level=args.confidence_level, n_resamples=k,
            rng=0, **options), what=f"{args.ci} intervals of {len(metrics)} metric(s) with {args.n_resamples:,} "
                                    "resamples", n_metrics=len(metrics))
    rows = []
    intervals = None
    if args.ci:
        from metaeval_core.stats.resampling import dataset_confidence_intervals

        # Each metric's own interval (the same seed for every metric); the draws are shared where the level allows.
        intervals = dataset_confidence_intervals(
            ds, metrics, args.human, method=args.ci, confidence_level=args.confidence_level,
            n_resamples=args.n_resamples, rng=args.seed, **options,
        )
    for i, metric in enumerate(metrics):
        row = {**correlate(ds, metric, args.human, **options).to_dict(),
               "systems": getattr(args, "selected_systems", None) or ""}
        if intervals is not None:
            ci = intervals[i]
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
    method = chosen_test(args, ds)
    stopping = _compare_stopping(args, ds, metrics, method)
    table = compare_all_pairs(
        ds, metrics, args.human, level=args.level, coefficient=args.coefficient, method=method,
        alternative=args.alternative, correction=args.correction, family=args.family, alpha=args.alpha,
        n_resamples=args.n_resamples, rng=args.seed, pool=args.pool, systems=args.systems, stopping=stopping,
    )
    # Every row names the test and the stopping rule that made it (both can depend on the data and the budget).
    records = [{**r, "test": table.method, "stopping": table.stopping} for r in table.to_records()]
    if args.json:
        emit(args, records)
        return
    say(f"x better than y with {args.human}? delta = r(x) - r(y), {args.level}-level {args.coefficient}; "
        f"{table.method} test ({args.n_resamples} resamples, seed {args.seed}, {args.alternative}), "
        f"{args.correction} per {args.family} at alpha {args.alpha:g}")
    emit(args, records, columns=["x", "y", "delta", "pvalue", "significant", "significant_corrected"])


# A table estimated at this many seconds or more says its cost (and any cheaper rule) on stderr before it starts.
SAY_COST_FROM_SECONDS = 10.0


def _compare_stopping(args: argparse.Namespace, ds, metrics: list[str], method: str) -> str:
    """The cost decision of ``compare`` before it starts (docs/methods.md sec. 16.5): the stopping rule to run
    with, said on stderr when it is sequential; a CLIError with the cost and what fits when refused."""
    import sys

    from metaeval_core.stats.budget import human_distinct_values, table_decision

    if args.stopping != "auto":
        return args.stopping
    if not args.budget or method == "williams":
        return "none"
    # The systems compare_all_pairs uses: rated by the human measure and scored by every metric. A name or selection
    # it cannot resolve is left to compare_all_pairs, whose validation names it.
    try:
        names = [ds.resolve(name) for name in (args.human, *metrics)]
        z = ds.select_systems(args.systems).scored_by(names).matrix(names[0])
    except (KeyError, ValueError):
        return "none"
    decision = table_decision(*z.shape, len(metrics), level=args.level, coefficient=args.coefficient,
                              method=method, n_resamples=args.n_resamples, budget_seconds=args.budget,
                              blocks=True, alpha=args.alpha, correction=args.correction, family=args.family,
                              refuse_unreachable=True, human_distinct=human_distinct_values(z),
                              where=f"--budget {args.budget:g} s")
    if decision.action == "refuse":
        raise CLIError(decision.sentence + " (--budget 0 runs it anyway)")
    if decision.action == "early-stop" or decision.estimated_seconds >= SAY_COST_FROM_SECONDS:
        say(decision.sentence, stream=sys.stderr)
    return decision.stopping


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
                row[f"u={up:.3g}"] = None if np.isnan(t) else f"{number(t, 2)} ({int(grid.n_pairs[r, c])})"
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


def add_commands(command: Callable[..., argparse.ArgumentParser]) -> None:
    """Register this family's subcommands (``command(name, func, help)`` returns a subparser with ``--json``)."""
    p = command("correlate", cmd_correlate, "metric-human correlations (optionally with confidence intervals)")
    add_dataset_args(p)
    add_selection_args(p)
    p.add_argument("--ci", choices=CI_METHODS, default=None,
                   help="a confidence interval: fisher, or a bootstrap over systems, inputs or both (default: none)")
    p.add_argument("--confidence-level", type=float, default=0.95, help="the interval's level, a fraction")
    add_resampling_args(p)
    add_budget_arg(p, "bootstrap intervals")

    p = command("compare", cmd_compare, "test whether one metric correlates better than another, for all pairs")
    add_dataset_args(p)
    add_selection_args(p)
    add_test_args(p)
    add_resampling_args(p)
    p.add_argument("--budget", type=_seconds, default=600.0, metavar="SECONDS",
                   help="decide before running (docs/methods.md sec. 16.5): a table estimated beyond SECONDS runs "
                        "with the early-stopping rule whose expected cost fits where the test allows one "
                        "(Besag-Clifford, else mt-metrics-eval's blocks) or is refused with its cost and lighter "
                        "settings; so is a table whose corrected p-values cannot reach --alpha with --n-resamples; "
                        "0: no budget (default 600)")
    p.add_argument("--stopping", choices=["auto", "none", "besag-clifford", "blocks"], default="auto",
                   help="auto (default): as the budget decides; besag-clifford: stop each pair once its decision "
                        "at --alpha is settled; blocks: mt-metrics-eval's rule, every 100 draws stop a pair whose "
                        "p-value is below 0.02 (or alpha over the correction's family) or above 0.5 "
                        "(docs/methods.md sec. 16.2)")

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
