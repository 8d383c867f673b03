"""``metaeval examples``: the items behind a correlation (docs/methods.md sec. 19), and ``metaeval judges --view
examples``: the items a judge gets wrong, flips or decides by length, or the system pairs behind its ranking
agreement (``--show pairs``).

``examples`` lists one record per system pair (system level), input (input level) or cell (global level), with the
texts where the dataset has them (with ``--coefficient soft-pairwise-accuracy`` each pair's SPA p-values and their
gap; with ``--mtme-level sys`` the pairs of the test set's own system scores, as WMT's system-level tasks read
them); ``--versus`` gives the items behind a two-metric comparison, ``--lower/--upper`` the pairs of an rSYS-Delta
band. Registered by :mod:`metaeval_core.cli.main` through ``add_commands(command)``;
the judges view by :mod:`metaeval_core.cli.judges` (:func:`view_judge_examples`, :func:`add_judge_example_args`).
"""

from __future__ import annotations

import argparse
import math
from typing import Callable

from metaeval_core.cli.options import COEFFICIENTS, LEVELS, POOLS

# Characters of a text shown in a table cell (the JSON records carry the whole text).
_CELL_TEXT = 60


def _cli():
    from metaeval_core.cli import common as cli

    return cli


def _short(text, width: int = _CELL_TEXT):
    if text is None:
        return None
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _texts(args: argparse.Namespace, dataset):
    from metaeval_core.data.texts import example_texts

    return None if args.no_texts else example_texts(dataset, data_dir=_cli().data_dir(args))


def cmd_examples(args: argparse.Namespace) -> None:
    from metaeval_core.analyses.examples import compare_examples, examples, pair_examples

    cli = _cli()
    dataset = cli.load(args)
    if args.top is not None and args.top < 1:
        raise cli.CLIError(f"--top must be a positive number of items; got {args.top}")
    band = args.lower is not None or args.upper is not None
    if band and args.level != "system":
        raise cli.CLIError("--lower/--upper select system pairs by their metric difference: use --level system")
    if band and args.versus:
        raise cli.CLIError("--lower/--upper and --versus cannot be combined")
    texts = _texts(args, dataset)
    if args.versus:
        result = compare_examples(dataset, args.metric, args.versus, args.human, level=args.level,
                                  coefficient=args.coefficient, pool=args.pool, systems=args.systems, texts=texts)
    elif band:
        result = pair_examples(dataset, args.metric, args.human, coefficient=args.coefficient, pool=args.pool,
                               systems=args.systems, lower=args.lower or 0.0,
                               upper=math.inf if args.upper is None else args.upper,
                               significance=not args.no_significance, texts=texts)
    else:
        result = examples(dataset, args.metric, args.human, level=args.level, coefficient=args.coefficient,
                          pool=args.pool, systems=args.systems, texts=texts, significance=not args.no_significance)
    records = result.to_records(top=args.top)
    if args.json:
        cli.emit(args, records)
        return
    summary = result.summary()
    _print_summary(summary, texts is not None, dataset.id)
    cli.print_table(cli.to_jsonable(_table_rows(records, args.level, bool(args.versus))))
    cli.print_conventions(args)


def _print_summary(summary: dict, has_texts: bool, dataset_id: str) -> None:
    say = _cli().say
    estimate = summary.get("estimate")
    if "metric_x" in summary:
        say(f"{summary['metric_x']} vs {summary['metric_y']} against {summary['human']}, {summary['level']}-level "
            f"{summary['coefficient']}: {summary['estimate_x']:.4g} vs {summary['estimate_y']:.4g}; "
            f"{summary['n_items']} items where they differ, largest first")
    elif summary["level"] == "system" and "mean_p_gap" in summary:
        say(f"{summary['metric']} vs {summary['human']}, system-level {summary['coefficient']} "
            f"{'undefined' if estimate is None else format(estimate, '.4g')}: 1 - SPA is the mean gap "
            f"|p_metric - p_human| over {summary['n_spa_pairs']} system pairs (p: SPA's one-sided permutation "
            "p-value that a beats b); largest gap first")
    elif summary["level"] == "system":
        band = "" if summary["upper"] is None and not summary["lower"] else (
            f"; pairs with {summary['lower']:g} <= |metric difference| <= "
            f"{'inf' if summary['upper'] is None else format(summary['upper'], 'g')}")
        say(f"{summary['metric']} vs {summary['human']}, system-level {summary['coefficient']} "
            f"{'undefined' if estimate is None else format(estimate, '.4g')}: {summary['n_discordant']} of "
            f"{summary['n_pairs']} system pairs discordant, {summary['n_ties']} tied{band}; discordant first")
    elif summary["level"] == "input":
        say(f"{summary['metric']} vs {summary['human']}, input-level {summary['coefficient']} "
            f"{'undefined' if estimate is None else format(estimate, '.4g')}: the mean of {summary['n_defined']} "
            f"inputs' own values; lowest first")
    else:
        say(f"{summary['metric']} vs {summary['human']}, global-level {summary['coefficient']} "
            f"{'undefined' if estimate is None else format(estimate, '.4g')} over {summary['n_cells']} cells; "
            "largest gap between metric rank and human rank first")
    if summary.get("scores") == "system":
        say("the systems' own scores (an mt-metrics-eval .sys.score view, as WMT's system-level tasks read them): "
            "no permutation p-value of the humans' difference")
    if not has_texts:
        say(f"{dataset_id} has no texts here: numbers only")


def _table_rows(records: list[dict], level: str, versus: bool) -> list[dict]:
    rows = []
    for r in records:
        if versus:
            row = {k: v for k, v in r.items() if k not in ("source", "reference", "output", "systems")}
        elif level == "system":
            row = {"a": r["system_a"], "b": r["system_b"], "discordant": r["discordant"], "tie": r["tie"],
                   "metric a-b": r["metric_difference"], "human a-b": r["human_difference"],
                   "p(human)": r["human_p_value"]}
            if "p_gap" in r:  # soft pairwise accuracy: the pair's two one-sided p-values and their gap
                row = {k: row[k] for k in ("a", "b", "metric a-b", "human a-b")}
                row.update({"p_metric": r["p_metric"], "p_human": r["p_human"], "gap": r["p_gap"]})
        elif level == "input":
            row = {"input": r["input"], "value": r["value"], "systems": len(r["systems"])}
        else:
            row = {k: r[k] for k in ("system", "input", "metric", "human", "rank_gap")}
        for key in ("source", "reference", "output"):
            if r.get(key) is not None:
                row[key] = _short(r[key])
        rows.append(row)
    return rows


def add_commands(command: Callable[..., argparse.ArgumentParser]) -> None:
    """Register ``examples`` with the main parser's ``command`` factory."""
    cli = _cli()
    p = command("examples", cmd_examples,
                "the items behind a correlation: every system pair (discordant first), each input's own value "
                "(lowest first) or the cells with the largest rank gaps, with their texts (docs/methods.md sec. 19)")
    cli.add_dataset_args(p)
    p.add_argument("--metric", required=True)
    p.add_argument("--human", default=None,
                   help="the human measure id (required unless the dataset has a standard one: WMT's gold)")
    p.add_argument("--level", choices=LEVELS, default="system",
                   help="system: one record per system pair; input: per input; global: per (system, input) cell")
    p.add_argument("--coefficient", choices=COEFFICIENTS, default="kendall",
                   help="tau is kendall; soft-pairwise-accuracy (system level): each pair's two p-values and their "
                        "gap, largest first")
    p.add_argument("--pool", choices=POOLS, default=None, help=cli.POOL_HELP)
    p.add_argument("--systems", default=None, help=cli.SYSTEMS_HELP)
    p.add_argument("--top", type=int, default=None, metavar="N", help="only the first N items (default: all)")
    p.add_argument("--versus", default=None, metavar="METRIC",
                   help="a second metric: the items where the two differ most (a significance-table cell)")
    p.add_argument("--lower", type=float, default=None,
                   help="system level: only pairs with |metric difference| >= LOWER (an rSYS-Delta band)")
    p.add_argument("--upper", type=float, default=None,
                   help="system level: only pairs with |metric difference| <= UPPER")
    p.add_argument("--no-significance", action="store_true",
                   help="system level: skip the humans' paired permutation p-value of each pair")
    p.add_argument("--no-texts", action="store_true", help="numbers only, even where the dataset has texts")


# -- metaeval judges --view examples ---------------------------------------------------------------------------
def add_judge_example_args(p: argparse.ArgumentParser) -> None:
    """The options of ``metaeval judges --view examples``."""
    p.add_argument("--judge", default=None, metavar="RATER",
                   help="for --view examples: the judge whose items are listed (default: every judge)")
    p.add_argument("--show", choices=("wrong", "flips", "longer", "pairs"), default="wrong",
                   help="for --view examples: items the judge gets wrong against --reference (in --order), "
                        "items whose verdict flips between the two presentation orders (as the consistency counts "
                        "them), items where it chooses the longer response (in --order: original, swapped or "
                        "average; as the length preference counts them, in words), or the system pairs behind its "
                        "ranking agreement with --reference (--view systems' Kendall; --ranking; the judge's "
                        "verdicts in --order: original, swapped or average), those it orders unlike --reference "
                        "first")
    p.add_argument("--top", type=int, default=None, metavar="N",
                   help="for --view examples: only the first N items per judge and pair set")


def view_judge_examples(args: argparse.Namespace, data, pair_sets: list[str]) -> None:
    """``metaeval judges --view examples``: each judge's wrong (flipped, longer) items per pair set, with texts, or
    the system pairs behind its ranking agreement (``--show pairs``)."""
    from metaeval_core.judges.agreement import resolve_reference
    from metaeval_core.judges.examples import judge_examples

    cli = _cli()
    top = getattr(args, "top", None)
    if top is not None and top < 1:
        raise cli.CLIError(f"--top must be a positive number of items; got {top}")
    judge = getattr(args, "judge", None)
    judges = [judge] if judge else list(data.judges)
    if judge and judge not in data.rater_ids:
        raise cli.CLIError(f"--judge: {data.id!r} has no rater {judge!r}; judges: {', '.join(data.judges)}")
    show = getattr(args, "show", "wrong")
    if show == "pairs":
        _view_ranking_pairs(args, data, pair_sets, judges, top)
        return
    records, blocks = [], []
    for name in pair_sets:
        part = data.select_pair_set(name) if len(data.pair_sets) > 1 else data
        for j in judges:
            if j not in part.judges_of():
                continue
            listed = judge_examples(part, j, view=show, reference=args.reference, order=args.order,
                                    ties=args.ties, invalid=args.invalid)
            rows = listed.to_records(top=top)
            records += [{"dataset": data.id, "pair_set": name, "judge": j, "view": show, **r} for r in rows]
            blocks.append((name, j, listed, rows))
    if args.json:
        cli.emit(args, records)
        return
    against = resolve_reference(data, args.reference)[1] if show == "wrong" else ""
    for name, j, listed, rows in blocks:
        what = {"wrong": f"items wrong against {against} (order {args.order})",
                "flips": "items flipped between the orders",
                "longer": f"items where it chose the longer response (order {args.order}; {listed.n_hits} of its "
                          f"{listed.n_verdicts} verdicts naming a winner)"}[show]
        print(f"\n{name}, {j}: {listed.n_items} of {listed.n_counted} {what}")
        cli.print_table(cli.to_jsonable([
            {"item": r["item"], "judge": r["judge_original"] + ("/" + r["judge_swapped"] if r["judge_swapped"] else "")
             if r["judge_original"] else r["judge_swapped"], "reference": r["reference"],
             "instruction": _short(r["instruction"], 40), "A": _short(r["output_a"], 30),
             "B": _short(r["output_b"], 30)} for r in rows]))


def _view_ranking_pairs(args: argparse.Namespace, data, pair_sets: list[str], judges: list[str],
                        top: int | None) -> None:
    """``--show pairs``: per judge, the system pairs its ranking agreement is made of, discordant first."""
    from metaeval_core.judges.examples import ranking_pairs
    from metaeval_core.wording import ranking_pairs_sentence

    cli = _cli()
    order = cli.system_order(args, "--show pairs")
    # The selected pair sets together, as --view systems ranks them: the pairs make its number.
    data = data.select_pair_sets(pair_sets)
    if len(data.systems) < 2:
        raise cli.CLIError(f"--show pairs: dataset {data.id!r} does not name the systems behind its outputs")
    found = [ranking_pairs(data, j, reference=args.reference, method=args.ranking, order=order)
             for j in judges if j in data.judges_of()]
    if args.json:
        cli.emit(args, [{**listed.summary(), "kendall": listed.kendall, **r}
                        for listed in found for r in listed.to_records(top=top)])
        return
    for listed in found:
        print(f"\n{data.id}, systems scored by {listed.method}, the judge's verdicts in order {listed.order}: "
              + ranking_pairs_sentence(listed.summary(), listed.kendall))
        cli.print_table(cli.to_jsonable([
            {"system_a": r["system_a"], "system_b": r["system_b"], "agreement": r["agreement"],
             "judge": f"{r['judge_a']:.3f} - {r['judge_b']:.3f}",
             "reference": f"{r['reference_a']:.3f} - {r['reference_b']:.3f}"}
            for r in listed.to_records(top=top)]))
