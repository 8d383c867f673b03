"""CLI subcommands of the practitioner's questions (docs/methods.md sec. 10).

``improvement``, ``plan``, ``clusters`` and ``influence``; each has ``--help`` and
``--json``. Registered by :mod:`metaeval_core.cli.main` through ``add_commands(command)``.
"""

from __future__ import annotations

import argparse
from typing import Callable

from metaeval_core.cli.options import LEVELS, POOLS
from metaeval_core.cli.options import POINT_COEFFICIENTS as COEFFICIENTS

_DEFAULT_SIZES = (10, 20, 50, 100)


def _cli():
    from metaeval_core.cli import common as cli

    return cli


def cmd_improvement(args: argparse.Namespace) -> None:
    from metaeval_core.analyses.practice import improvement_probability

    cli = _cli()
    result = improvement_probability(
        cli.load(args), args.metric, args.human, delta=args.delta, pool=args.pool, systems=args.systems,
        method=args.method, human_ties=args.human_ties, n_resamples=args.n_resamples,
        confidence_level=args.confidence_level, rng=args.seed,
    )
    payload = result.to_dict(curve=args.curve)
    if args.json:
        cli.emit(args, payload)
        return
    cli.print_table([payload], ["metric", "human", "delta", "probability", "low", "high", "n_pairs",
                                "window_pairs", "total_pairs", "extrapolated"])
    cli.say(f"P(humans agree with a {args.metric} gain of {abs(args.delta):g}) = {result.probability:.3f} "
          f"[{result.low:.3f}, {result.high:.3f}] ({result.confidence_level:.0%} {result.method} band); "
          f"{result.n_pairs} pairs support it")
    if args.curve:
        print()
        cli.print_table(payload["curve"])


def cmd_plan(args: argparse.Namespace) -> None:
    from metaeval_core.analyses.practice import plan_judgments

    cli = _cli()
    ds = cli.load(args)
    n_judged = ds.select_systems(args.systems).n_judged
    if args.sizes is None:
        sizes = sorted({s for s in _DEFAULT_SIZES if s <= n_judged} | {n_judged})
    else:
        sizes = cli.number_list(args.sizes, "sizes", integers=True)
    system_sizes = cli.number_list(args.system_sizes, "system-sizes", integers=True) if args.system_sizes else None
    _check_plan_seconds(args, sizes, system_sizes or [ds.select_systems(args.systems).n_systems])
    result = plan_judgments(
        ds, args.metric, args.human, input_sizes=sizes, system_sizes=system_sizes, target_width=args.target_width,
        target_power=args.target_power, versus=args.versus, noise=args.noise, power=not args.no_power,
        coefficient=args.coefficient, ci_method=args.ci_method, confidence_level=args.confidence_level,
        alpha=args.alpha, n_resamples=args.n_resamples, n_trials=args.n_trials, rng=args.seed,
        systems=args.systems,
    )
    if args.json:
        cli.emit(args, result.to_dict())
        return
    cli.print_table(list(result.table), ["n_inputs", "n_systems", "width_mean", "width_sd", "power",
                                         "estimate_mean"])
    cli.say(f"power against: {result.versus}; {result.ci_method} {result.confidence_level:.0%} interval of "
          f"system-level {result.coefficient}; {result.n_trials} trials of {result.n_resamples} resamples")
    cli.say(f"recommendation: {result.recommendation.message}")


def _check_plan_seconds(args: argparse.Namespace, sizes, system_sizes) -> None:
    """Refuse, as the dashboard does, a plan estimated beyond ``MAX_PLAN_SECONDS``, naming the flags to change."""
    from metaeval_core.analyses.practice import MAX_PLAN_SECONDS, estimated_plan_seconds

    designs = [(m, n) for n in system_sizes for m in sizes]
    seconds = estimated_plan_seconds(designs, n_trials=args.n_trials, n_resamples=args.n_resamples,
                                     coefficient=args.coefficient, power=not args.no_power)
    if seconds > MAX_PLAN_SECONDS:
        raise _cli().CLIError(
            f"{len(designs)} designs (up to {max(system_sizes):,} systems x {max(sizes):,} inputs) x {args.n_trials} "
            f"trials x {args.n_resamples:,} resamples would take about {seconds / 60:.0f} min here (the limit is "
            f"{MAX_PLAN_SECONDS / 60:.0f} min): use fewer or smaller --sizes / --system-sizes, fewer --n-trials or "
            "--n-resamples, or --no-power")


def cmd_clusters(args: argparse.Namespace) -> None:
    from metaeval_core.analyses.practice import significance_clusters
    from metaeval_core.stats.significance import compare_all_pairs

    cli = _cli()
    if args.view == "leaderboard":
        from metaeval_core.cli.analyses import cmd_leaderboard

        return cmd_leaderboard(args)
    metrics = cli.split_list(args.metrics, "metrics")
    if len(metrics) < 2:
        raise cli.CLIError("--metrics needs at least two metrics to cluster")
    ds = cli.load(args)
    table = compare_all_pairs(
        ds, metrics, args.human, level=args.level, coefficient=args.coefficient, method=cli.chosen_test(args, ds),
        alternative=args.alternative, correction=args.correction, family=args.family, alpha=args.alpha,
        n_resamples=args.n_resamples, rng=args.seed, pool=args.pool, systems=args.systems,
    )
    result = significance_clusters(table, use_corrected=not args.uncorrected)
    if args.json:
        cli.emit(args, result.to_dict())
        return
    cli.print_table(result.to_records(), ["rank", "metric", "estimate"])
    which = "uncorrected" if args.uncorrected else f"{result.correction}-corrected"
    cli.say(f"clusters from {result.method} at alpha {result.alpha:g} ({which}): a metric joins the current cluster "
          "unless a metric in it significantly beats it")


def cmd_influence(args: argparse.Namespace) -> None:
    from metaeval_core.analyses.practice import system_influence

    cli = _cli()
    result = system_influence(
        cli.load(args), args.metric, args.human, level=args.level, coefficient=args.coefficient, pool=args.pool,
        systems=args.systems, threshold=args.threshold, with_intervals=args.intervals, method=args.ci_method,
        confidence_level=args.confidence_level, n_resamples=args.n_resamples, rng=args.seed,
    )
    if args.json:
        cli.emit(args, result.to_dict())
        return
    columns = ["system", "without", "change", "flagged", "reason"]
    if args.intervals:
        columns[2:2] = ["low_without", "high_without"]
    cli.print_table(result.to_records(), columns)
    interval = f" [{result.low:.3f}, {result.high:.3f}]" if args.intervals else ""
    cli.say(f"all systems: {result.estimate:.3f}{interval}; most influential: {result.most_influential}")


def add_commands(command: Callable[..., argparse.ArgumentParser]) -> None:
    """Register the practitioner subcommands with the main parser's ``command`` factory."""
    cli = _cli()

    p = command("improvement", cmd_improvement, "is my improvement real? the probability that humans agree with "
                "a metric gain of --delta, from an isotonic fit over the dataset's system pairs, with a "
                "bootstrap band (docs/methods.md sec. 10)")
    cli.add_dataset_args(p)
    p.add_argument("--metric", required=True)
    p.add_argument("--human", required=True)
    p.add_argument("--delta", type=float, required=True, help="the metric difference, in the metric's units")
    p.add_argument("--pool", choices=POOLS, default=None, help=cli.POOL_HELP)
    p.add_argument("--systems", default=None, help=cli.SYSTEMS_HELP)
    p.add_argument("--method", choices=["boot-both", "boot-inputs", "boot-systems"], default="boot-both")
    p.add_argument("--human-ties", choices=["half", "exclude"], default="half",
                   help="agreement credited to pairs tied in the human means")
    p.add_argument("--confidence-level", type=float, default=0.95)
    p.add_argument("--curve", action="store_true", help="include the fitted curve, its band and the raw pairs")
    cli.add_resampling_args(p)

    p = command("plan", cmd_plan, "how many judgments do I need? rSYS interval width and PERM-BOTH power by "
                "number of judged inputs (and systems), by subsampling the dataset (docs/methods.md sec. 10)")
    cli.add_dataset_args(p)
    p.add_argument("--metric", required=True)
    p.add_argument("--human", required=True)
    p.add_argument("--sizes", default=None,
                   help="comma-separated numbers of judged inputs (default 10,20,50,100 up to the dataset's size, "
                        "and the size itself)")
    p.add_argument("--system-sizes", default=None, help="comma-separated numbers of systems (default: all)")
    target = p.add_mutually_exclusive_group()
    target.add_argument("--target-width", type=float, default=None, metavar="WIDTH", help="wanted interval width")
    target.add_argument("--target-power", type=float, default=None, metavar="POWER", help="wanted power, in (0, 1)")
    p.add_argument("--versus", default=None, help="a second metric for the power analysis (default: a degraded "
                   "copy of --metric)")
    p.add_argument("--noise", type=float, default=1.0, help="per-system offset sd of the degraded copy, in sds "
                   "of the metric's system means")
    p.add_argument("--no-power", action="store_true", help="widths only (faster)")
    p.add_argument("--coefficient", choices=COEFFICIENTS, default="kendall")
    p.add_argument("--ci-method", choices=["boot-both", "boot-inputs"], default="boot-both")
    p.add_argument("--confidence-level", type=float, default=0.95)
    p.add_argument("--alpha", type=float, default=0.05)
    p.add_argument("--n-trials", type=int, default=20, help="subsamples per design")
    p.add_argument("--systems", default=None, help=cli.SYSTEMS_HELP)
    p.add_argument("--n-resamples", type=cli.resample_count, default=200,
                   help="bootstrap resamples and permutations per trial")
    p.add_argument("--seed", type=int, default=0)

    p = command("clusters", cmd_clusters, "significance clusters: metrics grouped into ranks not significantly "
                "different, WMT-style (docs/methods.md sec. 10)")
    cli.add_dataset_args(p)
    cli.add_selection_args(p)
    cli.add_test_args(p)
    p.add_argument("--uncorrected", action="store_true", help="cluster on the raw p-values (not corrected)")
    p.add_argument("--view", choices=["clusters", "leaderboard"], default="clusters",
                   help="leaderboard: the Overview's table, each metric's cluster with its BOOT-BOTH interval, then "
                        "the chance and human-ceiling rows (metaeval_core.analyses.leaderboard)")
    cli.add_resampling_args(p)

    p = command("influence", cmd_influence, "leave-one-system-out: the correlation with each system removed, "
                "flagging influential systems (docs/methods.md sec. 10)")
    cli.add_dataset_args(p)
    p.add_argument("--metric", required=True)
    p.add_argument("--human", required=True)
    p.add_argument("--level", choices=LEVELS, default="system")
    p.add_argument("--coefficient", choices=COEFFICIENTS, default="kendall")
    p.add_argument("--pool", choices=POOLS, default=None, help=cli.POOL_HELP)
    p.add_argument("--systems", default=None, help=cli.SYSTEMS_HELP)
    p.add_argument("--threshold", type=float, default=0.1, help="flag removals changing the correlation by more")
    p.add_argument("--intervals", action="store_true", help="also the interval with each system removed")
    p.add_argument("--ci-method", choices=["boot-both", "boot-systems", "boot-inputs", "fisher"], default="boot-both")
    p.add_argument("--confidence-level", type=float, default=0.95)
    cli.add_resampling_args(p)
