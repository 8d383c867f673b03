"""CLI subcommands of the docs/methods.md sec. 9 simulations: ``coverage`` and ``power``.

Each has ``--help`` and ``--json``. Registered by :mod:`metaeval_core.cli.main` through
``add_commands(command)``. The defaults finish in well under a minute on SummEval
(16 x 100) on two cores; TACL's own runs use 1000 trials (``--trials 1000``).

References: docs/methods.md sec. 9; Deutsch, Dror & Roth (TACL 2021) sec. 5.
"""

from __future__ import annotations

import argparse
from typing import Callable

from metaeval_core.cli.options import LEVELS
from metaeval_core.cli.options import POINT_COEFFICIENTS as COEFFICIENTS

# Default trials per level, bounded so that a run on SummEval (16 x 100) takes well under a minute
# of CPU on two cores: input- and global-level tests and intervals cost 10-50x more per trial
# than system-level ones (per-input correlations of every resample, or 1600-cell correlations).
COVERAGE_TRIALS = {"system": 1000, "input": 300, "global": 300}
POWER_TRIALS = {"system": 100, "input": 20, "global": 20}
TOKEN_KS = "10,30,50,70,90"
NOISE_KS = "0.25,0.5,1,2,4"


def _cli():
    from metaeval_core.cli import common as cli

    return cli


def cmd_coverage(args: argparse.Namespace) -> None:
    from metaeval_core.analyses.simulations import ci_coverage

    cli = _cli()
    result = ci_coverage(
        cli.load(args), args.metric, args.human, level=args.level, coefficient=args.coefficient,
        methods=cli.split_list(args.methods, "methods"),
        n_trials=COVERAGE_TRIALS[args.level] if args.trials is None else args.trials, n_resamples=args.n_resamples,
        confidence_level=args.confidence_level, rng=args.seed, systems=args.systems,
    )
    rows = result.to_records()
    if not args.json:
        _cli().say(f"{args.level}-level {args.coefficient}: {args.metric} vs {args.human}; {result.n_completed} splits "
              f"into halves of {result.half_systems} systems x {result.half_inputs} inputs; "
              f"nominal {args.confidence_level:g}")
    cli.emit(args, rows, columns=["method", "coverage", "se", "n_valid", "n_undefined", "mean_width"])


def _degrade(args: argparse.Namespace) -> str:
    from metaeval_core.analyses.simulations import rouge1_variant
    from metaeval_core.data.texts import texts_available

    if args.degrade != "auto":
        return args.degrade
    usable = rouge1_variant(args.metric) is not None and texts_available(args.dataset, data_dir=_cli().data_dir(args))
    return "tokens" if usable else "noise"


def cmd_power(args: argparse.Namespace) -> None:
    from metaeval_core.analyses.simulations import power_curve
    from metaeval_core.data.texts import load_texts

    from metaeval_core.data.texts import texts_available

    cli = _cli()
    degrade = _degrade(args)
    if degrade == "tokens" and not texts_available(args.dataset, data_dir=cli.data_dir(args)):
        # Before loading: the missing texts are the problem to name, not the metric a ROUGE-1 run would need.
        raise cli.CLIError(f"--degrade tokens needs the summaries' texts, which {args.dataset!r} does not have "
                           "here; use --degrade noise (or auto)")
    dataset = cli.load(args)
    texts = load_texts(args.dataset, data_dir=cli.data_dir(args)) if degrade == "tokens" else None
    ks = cli.number_list(args.k or (TOKEN_KS if degrade == "tokens" else NOISE_KS), "k")
    tests = cli.split_list(args.tests, "tests") if args.tests else None
    result = power_curve(
        dataset, args.metric, args.human, level=args.level, coefficient=args.coefficient, tests=tests, ks=ks,
        n_trials=POWER_TRIALS[args.level] if args.trials is None else args.trials,
        n_resamples=args.n_resamples, alpha=args.alpha, degrade=degrade, texts=texts,
        rng=args.seed, systems=args.systems,
    )
    rows = result.to_records()
    if not args.json:
        what = (f"ROUGE-1 {result.variant} on k% of the tokens" if degrade == "tokens"
                else "X + noise of sd k x sd(X)")
        _cli().say(f"{args.level}-level {args.coefficient}: X = {args.metric} (r = {result.estimate_x:.3f}) vs Y_k = "
              f"{what}; {result.n_completed} trials, alpha {args.alpha:g}")
    cli.emit(args, rows, columns=["test", "k", "power", "se", "mean_estimate_y", "mean_pvalue"])


def add_commands(command: Callable[..., argparse.ArgumentParser]) -> None:
    """Register ``coverage`` and ``power`` with the main parser's ``command`` factory."""
    cli = _cli()

    p = command("coverage", cmd_coverage, "CI coverage on held-out halves of systems and inputs, per interval "
                "method (TACL 2021 sec. 5.1, Table 1)")
    cli.add_dataset_args(p)
    p.add_argument("--metric", required=True, help="the metric id")
    p.add_argument("--human", required=True, help="the human measure id")
    p.add_argument("--level", choices=LEVELS, default="system")
    p.add_argument("--coefficient", choices=COEFFICIENTS, default="pearson", help="default pearson, as TACL 2021 Table 1 (correlate's default is kendall)")
    p.add_argument("--methods", default="fisher,boot-systems,boot-inputs,boot-both",
                   help="comma-separated interval methods")
    p.add_argument("--confidence-level", type=float, default=0.95)
    p.add_argument("--trials", type=int, default=None,
                   help="random splits (default 1000 at the system level as in TACL, 300 at the others)")
    p.add_argument("--systems", default=None, help=cli.SYSTEMS_HELP)
    cli.add_resampling_args(p)

    p = command("power", cmd_power, "power of tests to find X better than a degraded Y_k: ROUGE-1 on k%% of the "
                "tokens (texts) or X plus noise (TACL 2021 sec. 5.2, Fig. 3)")
    cli.add_dataset_args(p)
    p.add_argument("--metric", required=True,
                   help="X: a ROUGE-1 variant such as rouge-1.f1 (tokens) or any metric id (noise)")
    p.add_argument("--human", required=True, help="the human measure id")
    p.add_argument("--level", choices=LEVELS, default="system")
    p.add_argument("--coefficient", choices=COEFFICIENTS, default="pearson", help="default pearson, as TACL 2021 Fig. 3 (correlate's default is kendall)")
    p.add_argument("--tests", default=None,
                   help="comma-separated tests (default perm-both,boot-both,williams; no williams at input level)")
    p.add_argument("--k", default=None, help=f"comma-separated k: percent of tokens kept (default {TOKEN_KS}) or "
                   f"noise sd in units of X's sd (default {NOISE_KS})")
    p.add_argument("--degrade", choices=["auto", "tokens", "noise"], default="auto",
                   help="auto: tokens when the dataset has texts and --metric is ROUGE-1, else noise")
    p.add_argument("--alpha", type=float, default=0.05)
    p.add_argument("--trials", type=int, default=None,
                   help="trials (default 100 at the system level, 20 at the others; TACL uses 1000)")
    p.add_argument("--systems", default=None, help=cli.SYSTEMS_HELP)
    cli.add_resampling_args(p)
