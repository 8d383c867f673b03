"""CLI subcommand ``judges``: pairwise ("A or B?") judges against people, per pair set (docs/methods.md sec. 18).

``metaeval judges --dataset ID`` prints, for every judge on every pair set, the items, the accuracy in each
presentation order and in both, the positional consistency and Cohen's kappa with bootstrap intervals;
``--json`` gives one record per judge and pair set (``--by ATTRIBUTE``: per value of an item attribute).
``--view leaderboard|bias|systems|scores|describe`` prints the other statistics (clusters, chance and human
ceiling; position and length biases; system rankings; scores as verdicts; the data and its warnings).
``metaeval describe --dataset ID`` on a pairwise dataset
lands in :func:`describe_pairwise_command`. Registered by :mod:`metaeval_core.cli.main` through
``add_commands(command)``.
"""

from __future__ import annotations

import argparse
import math
from typing import Any, Callable

from metaeval_core.cli.examples import add_judge_example_args, view_judge_examples
from metaeval_core.cli.options import (INVALID_CONVENTIONS, ORDER_MODES, RANKING_METHODS, STATISTICS,
                                       TIE_CONVENTIONS)

#: The figures of one record, in table order: (key, statistic, order).
_FIGURES: tuple[tuple[str, str, str], ...] = (
    ("accuracy_original", "accuracy", "original"),
    ("accuracy_swapped", "accuracy", "swapped"),
    ("accuracy_both", "accuracy", "both"),
    ("kappa", "kappa", "original"),
)


def _cli():
    from metaeval_core.cli import common as cli

    return cli


def _load(args: argparse.Namespace):
    from metaeval_core.data.registry import DatasetUnavailable
    from metaeval_core.data.upload import UploadLimits
    from metaeval_core.judges import load_pairwise

    cli = _cli()
    try:
        return load_pairwise(args.dataset, data_dir=cli.data_dir(args), download=getattr(args, "download", False),
                             limits=UploadLimits.from_environment())
    except DatasetUnavailable as error:
        raise cli.CLIError(cli.unavailable_message(error.info)) from None


def subsets(data, pair_sets: list[str] | None = None, by: str = "pair_set") -> list[tuple[str, Any]]:
    """(name, items) parts: each pair set (of ``pair_sets``, default all), or, with ``by`` an item attribute,
    each of its values among the items of those pair sets."""
    import numpy as np

    chosen = list(pair_sets or data.pair_sets)
    if by == "pair_set":
        return [(name, data.select_pair_set(name)) for name in chosen]
    if by not in data.attributes:
        raise ValueError(f"--by: dataset {data.id!r} has no item attribute {by!r}; attributes: "
                         f"{', '.join(data.attributes) or '(none)'}, or pair_set")
    if len(chosen) < len(data.pair_sets):
        data = data.select_items(np.isin(data.pair_set, [data.pair_sets.index(p) for p in chosen]),
                                 label="sets=" + ",".join(chosen))
    return [(value, data.select_subset(by, value)) for value in data.subsets(by)]


def judge_records(data, *, reference: str = "auto", ties: str = "three-class", invalid: str = "wrong",
                  pair_sets: list[str] | None = None, by: str = "pair_set", confidence_level: float = 0.95,
                  n_resamples: int = 1000, seed: int = 0) -> list[dict]:
    """One record per judge and pair set (or value of the item attribute ``by``): items, accuracy per order and
    in both, consistency, kappa."""
    from metaeval_core.judges import judge_agreement, positional_bias

    records = []
    for name, part in subsets(data, pair_sets, by):
        judges = part.judges_of()
        if not judges:
            continue
        options = dict(judges=judges, reference=reference, ties=ties, confidence_level=confidence_level,
                       n_resamples=n_resamples, rng=seed)
        tables = {key: judge_agreement(part, statistic=statistic, order=order, invalid=invalid, **options)
                  for key, statistic, order in _FIGURES}
        bias = positional_bias(part, judges=judges, invalid=invalid,
                               confidence_level=confidence_level, n_resamples=n_resamples, rng=seed)
        for j, judge in enumerate(judges):
            rater = part.rater(judge)
            first = tables["accuracy_original"].rows[j]
            record: dict[str, Any] = {
                "dataset": data.id, "pair_set": name if by == "pair_set" else ",".join(part.pair_sets),
                "by": by, "subset": name, "judge": judge,
                "evaluator": rater.attributes.get("evaluator", judge),
                "strategy": rater.attributes.get("strategy", ""),
                "reference": first.reference, "n_items": int(part.covered(judge).sum()),
                "n_invalid": sum(part.verdict_counts(judge, o)["invalid"] for o in ("original", "swapped")),
            }
            for key, table in tables.items():
                row = table.rows[j]
                record.update({key: row.estimate, f"{key}_low": row.low, f"{key}_high": row.high,
                               f"{key}_n": row.n_items})
            consistency = bias[j].consistency
            record.update(consistency=consistency.estimate, consistency_low=consistency.low,
                          consistency_high=consistency.high, consistency_n=consistency.n)
            record.update(ties=ties, invalid=invalid, confidence_level=confidence_level, n_resamples=n_resamples,
                          seed=seed, interval="percentile bootstrap over items")
            records.append(record)
    return records


def _fmt(value: Any, low: Any = None, high: Any = None, *, interval: bool = True) -> str:
    """'83 [76,90]': a share x 100 and its interval; '83' without one; '-' when undefined."""
    def pct(v: Any) -> str:
        return "?" if v is None or not math.isfinite(v) else f"{100 * v:.0f}"

    if value is None or not math.isfinite(value):
        return "-"
    return f"{pct(value)} [{pct(low)},{pct(high)}]" if interval else pct(value)


def _cell(record: dict, key: str) -> str:
    """:func:`_fmt` of ``record[key]`` with ``record[key_low]`` and ``record[key_high]``."""
    return _fmt(record.get(key), record.get(f"{key}_low"), record.get(f"{key}_high"))


def _pair_sets(args: argparse.Namespace, data) -> list[str]:
    cli = _cli()
    if not args.pair_sets:
        return list(data.pair_sets)
    pair_sets = cli.split_list(args.pair_sets, "pair-sets")
    unknown = [p for p in pair_sets if p not in data.pair_sets]
    if unknown:
        raise cli.CLIError(f"--pair-sets: {data.id!r} has no pair set {unknown[0]!r}; pair sets: "
                           f"{', '.join(data.pair_sets)}")
    return pair_sets


def _say(*lines: str) -> None:
    _cli().say(*lines)


def _interval_note(args: argparse.Namespace, extra: str = "") -> str:
    return (f"values x 100 with {args.confidence_level:.0%} percentile-bootstrap intervals over items "
            f"({args.n_resamples} resamples, seed {args.seed}){extra}; '-': undefined")


def _view_table(args: argparse.Namespace, data, pair_sets: list[str]) -> None:
    cli = _cli()
    records = judge_records(data, reference=args.reference, ties=args.ties, invalid=args.invalid,
                            pair_sets=pair_sets, by=args.by, confidence_level=args.confidence_level,
                            n_resamples=args.n_resamples, seed=args.seed)
    if args.json:
        cli.emit(args, records)
        return
    _say(f"{data.id}: judges against {records[0]['reference'] if records else 'the reference'}; ties: {args.ties}; "
         f"invalid verdicts: {args.invalid}",
         _interval_note(args, "; both: right in both orders; consistent: the same verdict in both orders") +
         " (e.g. one order only)")
    for name, part in subsets(data, pair_sets, args.by):
        rows = [r for r in records if r["subset"] == name]
        if not rows:
            continue
        print(f"\n{name} ({part.n_items} pairs)")
        table = [{"judge": r["judge"], "n": r["n_items"], "original": _cell(r, "accuracy_original"),
                  "swapped": _cell(r, "accuracy_swapped"), "both": _cell(r, "accuracy_both"),
                  "consistent": _cell(r, "consistency"), "kappa": _cell(r, "kappa")} for r in rows]
        cli.print_table(table, ["judge", "n", "original", "swapped", "both", "consistent", "kappa"])


def _view_leaderboard(args: argparse.Namespace, data, pair_sets: list[str]) -> None:
    from metaeval_core.judges import judge_leaderboard

    cli = _cli()
    records, boards = [], []
    for name, part in subsets(data, pair_sets, args.by):
        if not part.judges_of():
            continue
        board = judge_leaderboard(part, statistic=args.statistic, reference=args.reference, order=args.order,
                                  ties=args.ties, invalid=args.invalid, confidence_level=args.confidence_level,
                                  n_resamples=args.n_resamples, rng=args.seed)
        boards.append((name, board))
        records += [{"dataset": data.id, "by": args.by, "subset": name, **r} for r in board.to_records()]
    if args.json:
        cli.emit(args, records)
        return
    if boards:
        board = boards[0][1]
        _say(f"{data.id}: {args.statistic} against {board.reference}, order {args.order}; ties: {board.ties}; "
             f"invalid verdicts: {board.invalid}",
             _interval_note(args, f"; cluster: judges no {board.correction}-corrected paired permutation test "
                                  f"separates at {board.alpha:g} share a rank; chance: verdicts permuted over items"))
    for name, board in boards:
        print(f"\n{name}")
        table = [{"name": r.name, "kind": r.kind, "value": _fmt(r.estimate, r.low, r.high), "n": r.n_items,
                  "cluster": r.cluster, "chance": _fmt(r.chance_mean, r.chance_low, r.chance_high),
                  "p(chance)": None if not math.isfinite(r.chance_pvalue) else f"{r.chance_pvalue:.3f}"}
                 for r in board.rows]
        cli.print_table(table, ["name", "kind", "value", "n", "cluster", "chance", "p(chance)"])


def _view_bias(args: argparse.Namespace, data, pair_sets: list[str]) -> None:
    from metaeval_core.judges import length_preference, positional_bias

    cli = _cli()
    records = []
    for name, part in subsets(data, pair_sets, args.by):
        judges = part.judges_of()
        if not judges:
            continue
        options = dict(judges=judges, confidence_level=args.confidence_level, n_resamples=args.n_resamples,
                       rng=args.seed)
        position = positional_bias(part, invalid=args.invalid, **options)
        length = (length_preference(part, reference=args.reference, order="average", **options)
                  if part.has_texts else [None] * len(judges))
        for p, l in zip(position, length):
            record = {"dataset": data.id, "by": args.by, "subset": name, **p.to_dict()}
            if l is not None:
                record.update({k: v for k, v in l.to_dict().items() if k not in ("judge", "confidence_level",
                                                                                 "n_resamples")})
            records.append(record)
    if args.json:
        cli.emit(args, records)
        return
    _say(f"{data.id}: position and length biases; invalid verdicts: {args.invalid}",
         _interval_note(args, "; consistent: the same verdict in both orders; first: share of winners shown first "
                              "(50 = none); longer: share of winners that are the longer output (words), the "
                              "judge's (both orders) and the reference's on the same items, and their gap"))
    for name in dict.fromkeys(r["subset"] for r in records):
        rows = [r for r in records if r["subset"] == name]
        print(f"\n{name}")
        table = [{"judge": r["judge"], "consistent": _cell(r, "consistency"), "first": _cell(r, "first_position"),
                  "longer": _cell(r, "judge_longer"), "people": _cell(r, "reference_longer"),
                  "gap": _cell(r, "difference")} for r in rows]
        cli.print_table(table, ["judge", "consistent", "first", "longer", "people", "gap"])


def _view_systems(args: argparse.Namespace, data, pair_sets: list[str]) -> None:
    from metaeval_core.judges import close_pair_agreement, ranking_agreement, system_ranking

    cli = _cli()
    if len(pair_sets) < len(data.pair_sets):
        data = data.select_items([k for k, p in enumerate(data.pair_set) if data.pair_sets[p] in pair_sets],
                                 label="sets=" + ",".join(pair_sets))
    if len(data.systems) < 2:
        raise cli.CLIError(f"--view systems: dataset {data.id!r} does not name the systems behind its outputs")
    options = dict(confidence_level=args.confidence_level, n_resamples=args.n_resamples, rng=args.seed)
    method = args.ranking
    people = system_ranking(data, args.reference, method=method, **options)
    judges = list(data.judges_of())
    tau = ranking_agreement(data, judges=judges, reference=args.reference, method=method, **options)
    pearson = ranking_agreement(data, judges=judges, reference=args.reference, method=method,
                                coefficient="pearson", **options)
    close = close_pair_agreement(data, judges=judges, reference=args.reference, delta=args.delta, **options)
    records = [{"dataset": data.id, "judge": t.judge, "reference": t.reference, "method": method,
                "kendall": t.estimate, "kendall_low": t.low, "kendall_high": t.high, "pearson": p.estimate,
                "pearson_low": p.low, "pearson_high": p.high, "close_pairs": c.estimate, "close_pairs_low": c.low,
                "close_pairs_high": c.high, "n_close": c.n_close, "delta": c.delta, "all_pairs": c.all_pairs,
                "n_pairs": c.n_pairs, "n_systems": t.n_systems}
               for t, p, c in zip(tau, pearson, close)]
    if args.json:
        cli.emit(args, {"reference_ranking": people.to_records(), "converged": people.converged, "judges": records})
        return
    _say(f"{data.id}: systems ranked by {method} from the verdicts of the {people.rater}"
         + ("" if method == "win-rate" else f" (Davidson's tie parameter nu = {people.nu:.3f})")
         + ("" if people.converged else "; the fit has no finite maximum (a system only ever wins, or never "
            "wins nor ties): its strengths are unbounded, the order still holds"),
         _interval_note(args, f"; scores x 100 for win rates; close pairs: the people's head-to-head win rate within "
                              f"{args.delta:g} of 50%"))
    cli.print_table([{"rank": r["rank"], "system": r["system"], "score": _fmt(r["score"], r["low"], r["high"])
                      if method == "win-rate" else f"{r['score']:.3f} [{r['low']:.2f},{r['high']:.2f}]",
                      "wins": r["wins"], "losses": r["losses"], "ties": r["ties"]} for r in people.to_records()],
                    ["rank", "system", "score", "wins", "losses", "ties"])
    print()
    cli.print_table([{"judge": r["judge"], "kendall": _cell(r, "kendall"), "pearson": _cell(r, "pearson"),
                      "close pairs": _cell(r, "close_pairs") + f" of {r['n_close']}",
                      "all pairs": _fmt(r["all_pairs"], interval=False)} for r in records],
                    ["judge", "kendall", "pearson", "close pairs", "all pairs"])


def _view_scores(args: argparse.Namespace, data, pair_sets: list[str]) -> None:
    from metaeval_core.judges import score_accuracy, scoring_judges

    cli = _cli()
    records = []
    for name, part in subsets(data, pair_sets, args.by):
        judges = [j for j in scoring_judges(part) if j in part.judges_of() or data.rater(j).kind == "judge"]
        if not judges:
            continue
        for row in score_accuracy(part, judges=judges, reference=args.reference, confidence_level=args.confidence_level,
                                  n_resamples=args.n_resamples, rng=args.seed):
            records.append({"dataset": data.id, "by": args.by, "subset": name, **row.to_dict()})
    if not records:
        raise cli.CLIError(f"--view scores: no judge of {data.id!r} scores the outputs (scores as verdicts need "
                           "score_a and score_b)")
    if args.json:
        cli.emit(args, records)
        return
    _say(f"{data.id}: judges' scores read as verdicts (A when score_a - score_b > epsilon), against "
         f"{records[0]['reference']}",
         _interval_note(args, "; tie-calibrated: epsilon chosen to maximise the accuracy (re-chosen in every "
                              "resample); at 0: only equal scores tie"))
    cli.print_table([{"subset": r["subset"], "judge": r["judge"],
                      "tie-calibrated": _fmt(r["estimate"], r["low"], r["high"]), "epsilon": r["epsilon"],
                      "at 0": _fmt(r["accuracy_at_zero"], interval=False), "n": r["n_items"],
                      "equal": r["n_equal"], "unscored": r["n_unscored"]} for r in records],
                    ["subset", "judge", "tie-calibrated", "epsilon", "at 0", "n", "equal", "unscored"])


def _view_describe(args: argparse.Namespace, data, pair_sets: list[str]) -> None:
    from metaeval_core.judges import verdict_report

    info = describe_pairwise(data)
    report = verdict_report(data)
    if args.json:
        info["report"] = {"warnings": list(report.warnings)}
        _cli().emit(args, info)
        return
    _print_description(info)
    for warning in report.warnings:
        _say(f"warning: {warning}")
    if not report.warnings:
        print("no warnings")


_VIEWS = {"table": _view_table, "leaderboard": _view_leaderboard, "bias": _view_bias, "systems": _view_systems,
          "scores": _view_scores, "describe": _view_describe, "examples": view_judge_examples}


def cmd_judges(args: argparse.Namespace) -> None:
    data = _load(args)
    _VIEWS[args.view](args, data, _pair_sets(args, data))


def describe_pairwise(data) -> dict:
    """A pairwise dataset's items, pair sets, raters and verdict counts (``metaeval describe``)."""
    raters = []
    for rater in data.raters:
        counts = {o: data.verdict_counts(rater.id, o) for o in data.orders_of(rater.id)}
        raters.append({"rater": rater.id, "kind": rater.kind, "orders": list(counts),
                       **{k: sum(c[k] for c in counts.values()) for k in ("A", "B", "tie", "invalid", "missing")}})
    return {
        "id": data.id, "kind": "pairwise", "version": data.version, "title": data.title,
        "n_items": data.n_items, "systems": list(data.systems),
        "pair_sets": {name: int((data.pair_set == k).sum()) for k, name in enumerate(data.pair_sets)},
        "attributes": {k: len(set(v)) for k, v in data.attributes.items()},
        "humans": list(data.humans), "golds": list(data.golds), "judges": list(data.judges),
        "has_texts": data.has_texts, "has_scores": data.scores is not None,
        "raters": raters, "notes": list(data.notes),
    }


def _print_description(info: dict) -> None:
    _say(f"{info['id']} ({info['title']}), version {info['version']}")
    _say(f"pairwise verdicts: {info['n_items']} items in {len(info['pair_sets'])} pair set(s); "
          f"{len(info['humans'])} human annotator(s), {len(info['golds'])} gold label(s), "
          f"{len(info['judges'])} judge(s)")
    _say("pair sets: " + ", ".join(f"{k} ({v})" for k, v in info["pair_sets"].items()))
    if info["systems"]:
        _say("systems: " + ", ".join(info["systems"]))
    for note in info["notes"]:
        _say(f"note: {note}")
    _cli().print_table([{**r, "orders": "+".join(r["orders"])} for r in info["raters"]],
                       ["rater", "kind", "orders", "A", "B", "tie", "invalid", "missing"])


def describe_pairwise_command(args: argparse.Namespace) -> None:
    info = describe_pairwise(_load(args))
    if args.json:
        _cli().emit(args, info)
        return
    _print_description(info)


def describe_verdict_file_command(args: argparse.Namespace) -> None:
    """``metaeval describe`` of a verdict file: what ``metaeval judges --dataset FILE --view describe`` prints."""
    if not args.json:
        _say("a pairwise verdict file: described as by metaeval judges --view describe")
    _view_describe(args, _load(args), [])


def add_commands(command: Callable[..., argparse.ArgumentParser]) -> None:
    cli = _cli()
    p = command("judges", cmd_judges, "pairwise (A or B?) judges against people: accuracy in each presentation "
                                      "order and in both, positional consistency and kappa, with intervals, for "
                                      "every judge on every pair set")
    p.add_argument("--dataset", required=True, help="a pairwise dataset id (pandalm, llmbar) or a long CSV/JSONL "
                                                    "verdict file")
    p.add_argument("--data-dir", help="data directory (default: $METAEVAL_DATA_DIR or data/cache)")
    p.add_argument("--download", action="store_true", help="download missing files of a built-in dataset first")
    p.add_argument("--pair-sets", metavar="NAME[,NAME...]", help="only these pair sets (default: all)")
    p.add_argument("--by", default="pair_set", metavar="ATTRIBUTE",
                   help="one block per pair set (default), or per value of an item attribute, e.g. system_pair or "
                        "task on PandaLM, group on LLMBar (each resampled on its own items)")
    p.add_argument("--reference", default="auto",
                   help="auto (the gold label when there is one, else the human majority), majority, gold, or a "
                        "rater id")
    p.add_argument("--ties", choices=TIE_CONVENTIONS, default="three-class",
                   help="a tie is a third class (default), or items with a reference tie / any tie are left out")
    p.add_argument("--invalid", choices=INVALID_CONVENTIONS, default="wrong",
                   help="an invalid verdict counts as wrong (default), its item is left out, or it reads as a tie")
    p.add_argument("--view", choices=tuple(_VIEWS), default="table",
                   help="table (default): accuracy per order and in both, consistency, kappa; leaderboard: the chosen "
                        "--statistic with clusters, chance level and the human ceiling; bias: position and length; "
                        "systems: rankings from verdicts, judge vs people (needs system ids); scores: judges' scores "
                        "as verdicts (tie-calibrated accuracy); describe: items, raters, verdict counts and warnings "
                        "(for a verdict file; `metaeval describe` reads score files); examples: the items each judge "
                        "gets wrong (--show wrong) or flips between the orders (--show flips), with their texts")
    p.add_argument("--statistic", choices=STATISTICS, default="accuracy", help="for --view leaderboard")
    p.add_argument("--order", choices=ORDER_MODES, default="original",
                   help="for --view leaderboard and examples: original, swapped, average (of both orders) or both "
                        "(right in both)")
    p.add_argument("--ranking", choices=RANKING_METHODS, default="win-rate",
                   help="for --view systems: win rates or Bradley-Terry with ties (Davidson)")
    p.add_argument("--delta", type=float, default=0.1,
                   help="for --view systems: a close pair's people win rate lies within this of 0.5 (default 0.1)")
    p.add_argument("--confidence-level", type=float, default=0.95)
    add_judge_example_args(p)  # --view examples: items wrong or flipped (metaeval_core/cli/examples.py)
    cli.add_resampling_args(p)
