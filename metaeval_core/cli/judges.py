"""CLI subcommand ``judges``: pairwise ("A or B?") judges against people, per pair set (docs/methods.md sec. 18).

``metaeval judges --dataset ID`` prints, for every judge on every pair set, the items, the accuracy in each
presentation order and in both, the positional consistency and Cohen's kappa with bootstrap intervals;
``--json`` gives one record per judge and pair set (``--by ATTRIBUTE``: per value of an item attribute).
``--view leaderboard|bias|systems|scores|describe`` prints the other statistics (clusters, chance and human
ceiling; position and length biases; system rankings; scores as verdicts; the data and its warnings); with
``--view leaderboard --json`` each row carries its block's ``warnings`` and ``sentences`` (what the text prints).
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
    ("kappa_original", "kappa", "original"),
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
    chosen = list(pair_sets or data.pair_sets)
    if by == "pair_set":
        return [(name, data.select_pair_set(name)) for name in chosen]
    if by not in data.attributes:
        raise ValueError(f"--by: dataset {data.id!r} has no item attribute {by!r}; attributes: "
                         f"{', '.join(data.attributes) or '(none)'}, or pair_set")
    data = data.select_pair_sets(chosen)
    return [(value, data.select_subset(by, value)) for value in data.subsets(by)]


def judge_records(data, *, reference: str = "auto", ties: str = "three-class", invalid: str = "wrong",
                  pair_sets: list[str] | None = None, by: str = "pair_set", confidence_level: float = 0.95,
                  n_resamples: int = 1000, seed: int = 0) -> list[dict]:
    """One record per judge and pair set (or value of the item attribute ``by``): items, accuracy per order and
    in both, consistency, kappa."""
    from metaeval_core.judges import judge_agreement, positional_bias, wording

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
                          consistency_high=consistency.high, consistency_n=consistency.n,
                          consistency_basis=bias[j].basis, n_equal_scores=bias[j].n_equal_scores,
                          n_tie_broken=bias[j].n_tie_broken, tie_break_note=wording.tie_break(bias[j]))
            record.update(ties=ties, invalid=invalid, confidence_level=confidence_level, n_resamples=n_resamples,
                          seed=seed, interval="percentile bootstrap over items")
            records.append(record)
    return records


def _num(value: Any, digits: int) -> str | None:
    """A table cell: ``digits`` decimals, never '-0.000' (:func:`metaeval_core.wording.number`); None (printed
    as '-') when undefined."""
    from metaeval_core.wording import finite_or_none, number

    return None if finite_or_none(value) is None else number(value, digits)


def _fmt(value: Any, low: Any = None, high: Any = None, *, interval: bool = True) -> str:
    """'83 [76,90]': a share x 100 and its interval; '83' without one; '-' when undefined."""
    from metaeval_core.wording import number

    def pct(v: Any) -> str:  # never '-0' (wording.number drops the sign of a value that rounds to zero)
        return "?" if v is None or not math.isfinite(v) else number(100 * v, 0)

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
         _interval_note(args, "; original, swapped: accuracy with A, B shown first; both: right in both orders; "
                              "consistent: the same verdict in both orders; kappa orig.: Cohen's kappa in the "
                              "original order (A shown first)") + " (e.g. one order only)")
    for name, part in subsets(data, pair_sets, args.by):
        rows = [r for r in records if r["subset"] == name]
        if not rows:
            continue
        print(f"\n{name} ({part.n_items} pairs)")
        table = [{"judge": r["judge"], "n": r["n_items"], "original": _cell(r, "accuracy_original"),
                  "swapped": _cell(r, "accuracy_swapped"), "both": _cell(r, "accuracy_both"),
                  "consistent": _cell(r, "consistency"), "kappa orig.": _cell(r, "kappa_original")} for r in rows]
        cli.print_table(table, ["judge", "n", "original", "swapped", "both", "consistent", "kappa orig."])
        _say(*[r["tie_break_note"] for r in rows if r["tie_break_note"]])


def leaderboard_table(board) -> list[dict]:
    """The leaderboard's rows as the CLI prints them (values x 100; the page shows the same rows, x 1)."""
    def p(value: float) -> str | None:
        return _num(value, 3)

    kinds = {"human-ceiling": "ceiling", "annotator": "person"}
    people = {"judge", "annotator"}
    shown = {"chance": "(permuted)", "human-ceiling": "(mean)"}
    return [{"name": shown.get(r.kind, r.name), "kind": kinds.get(r.kind, r.kind), "value": _fmt(r.estimate, r.low, r.high),
             "n": r.n_items, "inv": r.n_invalid if r.kind in people else None,
             "ties": r.n_ties if r.kind in people else None, "cl": r.cluster,
             "chance": _fmt(r.chance_mean, r.chance_low, r.chance_high), "p": p(r.chance_pvalue),
             "p.holm": p(r.chance_pvalue_corrected)} for r in board.rows]


LEADERBOARD_COLUMNS = ["name", "kind", "value", "n", "inv", "ties", "cl", "chance", "p", "p.holm"]


def leaderboard_sentences(board) -> list[str]:
    """The sentences printed under a leaderboard (the page shows the same ones): headline, warnings, chance,
    ceiling."""
    from metaeval_core.judges import wording

    return [s for s in (wording.headline(board), *board.warnings, wording.chance(board), wording.ceiling(board))
            if s]


def _view_leaderboard(args: argparse.Namespace, data, pair_sets: list[str]) -> None:
    from metaeval_core.judges import judge_leaderboard, wording

    cli = _cli()
    records, boards = [], []
    for name, part in subsets(data, pair_sets, args.by):
        if not part.judges_of():
            continue
        board = judge_leaderboard(part, statistic=args.statistic, reference=args.reference, order=args.order,
                                  ties=args.ties, invalid=args.invalid, confidence_level=args.confidence_level,
                                  n_resamples=args.n_resamples, rng=args.seed)
        boards.append((name, board))
        # the text's warnings and sentences ride on every row of their block, so a JSON reader sees what a
        # terminal reader sees
        said = {"warnings": list(board.warnings), "sentences": leaderboard_sentences(board)}
        records += [{"dataset": data.id, "by": args.by, "subset": name, **r, **said} for r in board.to_records()]
    if args.json:
        cli.emit(args, records)
        return
    if boards:
        board = boards[0][1]
        _say(f"{data.id}: " + wording.conventions(board),
             _interval_note(args, f"; cl: cluster, judges no {board.correction}-corrected paired permutation "
                                  f"test separates at {board.alpha:g} share a rank; chance: each judge's verdicts "
                                  "permuted over items (mean [range]); p: one-sided permutation p-value against "
                                  "chance (is the judge above it?), uncorrected; p.holm: Holm-corrected over the "
                                  "judges of the block; inv, ties: the rater's own invalid and tie verdicts; n: "
                                  "items counted ('-' where the row's parts count different items)"))
    for name, board in boards:
        print(f"\n{name}")
        cli.print_table(leaderboard_table(board), LEADERBOARD_COLUMNS)
        _say(*leaderboard_sentences(board))


def _view_bias(args: argparse.Namespace, data, pair_sets: list[str]) -> None:
    from metaeval_core.judges import length_preference, positional_bias

    cli = _cli()
    records, positions = [], {}
    for name, part in subsets(data, pair_sets, args.by):
        judges = part.judges_of()
        if not judges:
            continue
        options = dict(judges=judges, confidence_level=args.confidence_level, n_resamples=args.n_resamples,
                       rng=args.seed)
        position = positions[name] = positional_bias(part, invalid=args.invalid, **options)
        length = (length_preference(part, reference=args.reference, order="average", **options)
                  if part.has_texts else [None] * len(judges))
        for p, l in zip(position, length):
            record = {"dataset": data.id, "by": args.by, "subset": name, **p.to_dict()}
            if l is not None:  # the length figures' own counts and order keep their names apart
                renamed = {"n_items": "length_n_items", "order": "length_order"}
                record.update({renamed.get(k, k): v for k, v in l.to_dict().items()
                               if k not in ("judge", "confidence_level", "n_resamples")})
            records.append(record)
    if args.json:
        cli.emit(args, records)
        return
    from metaeval_core.judges import wording

    two_orders = any(len(data.orders_of(j)) == 2 for j in data.judges)
    pooled = ("the judge's, both orders pooled" if two_orders else "the judge's, in the one order it judged")
    _say(f"{data.id}: position and length biases; invalid verdicts: {args.invalid}",
         _interval_note(args, "; consistent: the same verdict in both orders; first: share of winners shown first "
                              "(50 = none); a judge that scores each output is read from its scores (equal scores "
                              f"are ties); longer: share of winners that are the longer output (words), {pooled}, "
                              "and the reference's on the same items (people), and their gap"))
    if not two_orders:
        _say("The judges saw each pair in one presentation order: consistency and first-position preference "
             "need both orders, so those columns are '-'.")
    for name in dict.fromkeys(r["subset"] for r in records):
        rows = [r for r in records if r["subset"] == name]
        print(f"\n{name}")
        table = [{"judge": r["judge"], "consistent": _cell(r, "consistency"), "first": _cell(r, "first_position"),
                  "longer": _cell(r, "judge_longer"), "people": _cell(r, "reference_longer"),
                  "gap": _cell(r, "difference")} for r in rows]
        cli.print_table(table, ["judge", "consistent", "first", "longer", "people", "gap"])
        notes = [wording.tie_break(p) for p in positions[name]]
        _say(*[n for n in notes if n])


def _view_agreement(args: argparse.Namespace, data, pair_sets: list[str]) -> None:
    from metaeval_core.judges.raters import classification_scores, rater_agreement
    from metaeval_core.wording import number

    cli = _cli()
    statistic = args.statistic
    invalid = args.invalid
    order = "original" if args.order in ("original", "average", "both") else args.order
    blocks = []
    for name, part in subsets(data, pair_sets, args.by):
        if part.n_raters < 2 or not part.judges_of():
            continue
        matrix = rater_agreement(part, order=order, invalid=invalid)
        scores = classification_scores(part, reference=args.reference, order=order,
                                       invalid="wrong" if invalid == "as-verdict" else invalid)
        blocks.append((name, matrix, scores))
    if args.json:
        cli.emit(args, [{"dataset": data.id, "by": args.by, "subset": name, "raters": list(m.raters),
                         "kinds": list(m.kinds), "order": m.order, "invalid": m.invalid,
                         "pairs": m.to_records(), "classification": [c.to_dict() for c in c_]}
                        for name, m, c_ in blocks])
        return
    _say(f"{data.id}: agreement between every two raters (people, gold labels, judges) on the items both rated, "
         f"{order} order; invalid verdicts: {invalid}; shown: {statistic} (--statistic accuracy|kappa|alpha); "
         "then each judge's macro precision, recall and F1 against the reference (x 100)")
    for name, matrix, scores in blocks:
        print(f"\n{name}")
        values = matrix.matrix(statistic)
        if len(matrix.raters) <= 12:
            rows = [{"rater": f"{i + 1} {r}", **{str(j + 1): _num(values[i, j], 2) for j in range(len(matrix.raters))}}
                    for i, r in enumerate(matrix.raters)]
            cli.print_table(rows, ["rater", *[str(j + 1) for j in range(len(matrix.raters))]])
        else:
            rows = [{"rater": a, "other": b, statistic: _num(values[i, j], 3), "n": int(matrix.n_common[i, j])}
                    for i, a in enumerate(matrix.raters) for j, b in enumerate(matrix.raters) if j > i]
            cli.print_table(rows, ["rater", "other", statistic, "n"])
        print()
        pct = lambda v: "-" if not math.isfinite(v) else number(100 * v, 1)  # noqa: E731
        cli.print_table([{"judge": c.judge, "precision": pct(c.macro_precision), "recall": pct(c.macro_recall),
                          "F1": pct(c.macro_f1), "accuracy": pct(c.accuracy), "n": c.n_items,
                          "classes": "/".join(c.labels)} for c in scores],
                        ["judge", "precision", "recall", "F1", "accuracy", "n", "classes"])


def _alt_test_records(args: argparse.Namespace, results, subset: str) -> list[dict]:
    return [{"dataset": args.dataset, "subset": subset, **r.to_dict()} for r in results]


def _print_alt_test(records: list[dict]) -> None:
    cli = _cli()
    for record in records:
        verdict = "passes" if record["passes"] else "does not pass"
        print(f"\n{record['subset']}: {record['judge']} {verdict}: winning rate {record['winning_rate']:.2f}, "
              f"advantage probability {record['advantage_probability']:.3f}")
        cli.print_table([{"annotator": a["annotator"], "n": a["n_items"],
                          "judge align": _num(a["judge_alignment"], 3), "own align": _num(a["annotator_alignment"], 3),
                          "judge wins": _num(a["judge_wins"], 3), "p": f"{a['pvalue']:.4f}",
                          "p (BY)": f"{a['pvalue_corrected']:.4f}", "judge wins test": "yes" if a["rejected"] else "no"}
                         for a in record["annotators"]],
                        ["annotator", "n", "judge align", "own align", "judge wins", "p", "p (BY)", "judge wins test"])
        _say(*record["notes"])


def _view_alt_test(args: argparse.Namespace, data, pair_sets: list[str]) -> None:
    from metaeval_core.judges.alt_test import alt_test

    cli = _cli()
    order = args.order if args.order in ("original", "swapped") else "original"
    records = []
    for name, part in subsets(data, pair_sets, args.by):
        if not part.judges_of():
            continue
        records += _alt_test_records(args, alt_test(part, epsilon=args.epsilon, q=args.fdr, order=order,
                                                    min_items=args.min_items), name)
    if args.json:
        cli.emit(args, records)
        return
    _alt_test_header(args, "verdicts; alignment: the share of the other annotators giving the same verdict")
    _print_alt_test(records)


def _alt_test_header(args: argparse.Namespace, what: str) -> None:
    _say(f"{args.dataset}: the alternative annotator test (Calderon, Reichart & Dror 2025) on {what}. Each annotator "
         "left out in turn: on its items, do the judge's answers align with the other annotators at least as well "
         f"as its own, allowing epsilon = {args.epsilon:g}? One-sided t-test of mean(W_annotator - W_judge) < "
         f"epsilon, Benjamini-Yekutieli over the annotators at q = {args.fdr:g}; the judge passes when it wins "
         "against at least half of them; advantage probability: the mean share of items where the judge aligns "
         f"at least as well (ties count for both). Annotators with fewer than {args.min_items} items are left out.")


def alt_test_on_scores(args: argparse.Namespace) -> None:
    """``--view alt-test`` on a dataset of scores: the judges are ``--judges`` (default: every metric) scored on
    the annotators' scale, the annotators those of ``--human``."""
    from metaeval_core.data.registry import load_dataset
    from metaeval_core.judges.alt_test import alt_test_scores

    cli = _cli()
    dataset = load_dataset(args.dataset, data_dir=cli.data_dir(args))
    human = args.human or (dataset.human_measures[0] if dataset.human_measures else None)
    if human is None:
        raise cli.CLIError(f"--view alt-test: {args.dataset!r} has no human measure")
    judges = cli.split_list(args.judges, "judges") if args.judges else list(dataset.metric_measures)
    results = alt_test_scores(dataset, human=human, judges=judges, alignment=args.alignment, epsilon=args.epsilon,
                              q=args.fdr, min_items=args.min_items, annotators=args.annotators_are)
    records = _alt_test_records(args, results, human)
    if args.json:
        cli.emit(args, records)
        return
    _alt_test_header(args, f"scores ({human}); alignment: {args.alignment} against the other annotators")
    _print_alt_test(records)


def _view_systems(args: argparse.Namespace, data, pair_sets: list[str]) -> None:
    from metaeval_core.judges import close_pair_agreement, ranking_agreement, system_ranking

    cli = _cli()
    order = cli.system_order(args, "--view systems")
    data = data.select_pair_sets(pair_sets)
    if len(data.systems) < 2:
        raise cli.CLIError(f"--view systems: dataset {data.id!r} does not name the systems behind its outputs")
    options = dict(confidence_level=args.confidence_level, n_resamples=args.n_resamples, rng=args.seed)
    method = args.ranking
    # The reference's ranking from its verdicts as given; the judges' in --order (as the Systems page reads them).
    people = system_ranking(data, args.reference, method=method, **options)
    judges = list(data.judges_of())
    tau = ranking_agreement(data, judges=judges, reference=args.reference, method=method, order=order, **options)
    pearson = ranking_agreement(data, judges=judges, reference=args.reference, method=method,
                                coefficient="pearson", order=order, **options)
    close = close_pair_agreement(data, judges=judges, reference=args.reference, delta=args.delta, order=order,
                                 **options)
    records = [{"dataset": data.id, "judge": t.judge, "reference": t.reference, "method": method, "order": order,
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
         _interval_note(args, f"; scores x 100 for win rates; the judges' verdicts in order {order}; close pairs: the "
                              f"people's head-to-head win rate within {args.delta:g} of 50%"))
    cli.print_table([{"rank": r["rank"], "system": r["system"], "score": _fmt(r["score"], r["low"], r["high"])
                      if method == "win-rate" else f"{_num(r['score'], 3)} [{_num(r['low'], 2)},{_num(r['high'], 2)}]",
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
        for row in score_accuracy(part, judges=judges, reference=args.reference,
                                  confidence_level=args.confidence_level, n_resamples=args.n_resamples, rng=args.seed):
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
                              "resample); at 0: only equal scores tie; each judge on the items it judged (n), "
                              "items it judged without both scores counted wrong (unscored)"))
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
        # Notes (verdicts kept as invalid, rater kinds read from names) are printed above: say they wait.
        print("no warnings" if not info["notes"] else f"no warnings; read the {len(info['notes'])} note(s) above")


_VIEWS = {"table": _view_table, "leaderboard": _view_leaderboard, "bias": _view_bias, "systems": _view_systems,
          "scores": _view_scores, "describe": _view_describe, "agreement": _view_agreement, "alt-test": _view_alt_test,
          "examples": view_judge_examples}


def cmd_judges(args: argparse.Namespace) -> None:
    if args.view == "alt-test" and _is_score_dataset(args):
        alt_test_on_scores(args)
        return
    data = _load(args)
    if args.verdicts:
        from metaeval_core.judges.loaders import attach_verdicts

        data = attach_verdicts(data, args.verdicts)
    if not data.judges and args.view != "describe":
        raise _cli().CLIError(f"{data.id!r} has no judge: attach your judge's verdicts with --verdicts FILE (CSV/TSV "
                              "or JSON Lines with columns item or pair_id, verdict, optionally rater and order)")
    pair_sets = _pair_sets(args, data)
    if args.view in PRICED_VIEWS:
        _price_view(args, data, pair_sets)
    _VIEWS[args.view](args, data, pair_sets)


# The views that resample (bootstrap intervals, chance permutations, swaps), priced by pilots of the view itself.
PRICED_VIEWS = ("table", "leaderboard", "bias", "systems", "agreement")


def _price_view(args: argparse.Namespace, data, pair_sets: list[str]) -> None:
    """The pilot-priced cost decision of a resampling view (docs/methods.md sec. 16.5): the view runs twice, output
    discarded, with the fewest resamples its interval accepts and twice that, and the run is extrapolated; a
    CLIError with the cost and the lighter resample count when it does not fit ``--budget``. Without an explicit
    ``--budget`` only beyond the default 1,000 resamples (below, the pilots would be a large share of the run)."""
    import contextlib
    import copy
    import io

    def run_one(k: int) -> None:
        pilot = copy.copy(args)
        pilot.n_resamples = k
        with contextlib.redirect_stdout(io.StringIO()):
            _VIEWS[args.view](pilot, data, pair_sets)

    from metaeval_core._checks import min_resamples_for

    # Pilots of 2% and 4% of the run (at least the interval's fewest): a view's fixed cost (its tables, the first
    # call's caches) is a large part of a 40-resample pilot, and the difference of two small pilots is noise.
    level = args.confidence_level if 0.0 < args.confidence_level < 1.0 else 0.95
    _cli().budget_check(args, run_one, what=f"--view {args.view} with {args.n_resamples:,} resamples", n_metrics=1,
                        pilot_on="the whole analysis", priced_by_default=args.n_resamples > 1000,
                        pilot_resamples=max(min_resamples_for(level), args.n_resamples // 50))


def _is_score_dataset(args: argparse.Namespace) -> bool:
    from metaeval_core.data import registry

    if args.dataset in registry.dataset_ids():
        return registry.dataset_info(args.dataset, data_dir=_cli().data_dir(args)).kind != "pairwise"
    from metaeval_core.judges.upload import is_verdict_file

    try:
        return not is_verdict_file(args.dataset)
    except (OSError, ValueError):
        return False


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
    p.add_argument("--dataset", required=True, help="a pairwise dataset id (pandalm, llmbar, judgebench) or a long CSV/JSONL "
                                                    "verdict file")
    p.add_argument("--data-dir", help="data directory (default: $METAEVAL_DATA_DIR or data/cache)")
    p.add_argument("--verdicts", metavar="FILE",
                   help="a judge's verdicts on a built-in dataset's items, joined by item id (JudgeBench: pair_id): "
                        "CSV/TSV or JSON Lines with item (or pair_id), verdict, optionally rater and order",)
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
                        "(for a verdict file; `metaeval describe` reads score files); agreement: every two raters' "
                        "--statistic (people and judges) and the judges' macro precision/recall/F1; alt-test: may each judge "
                        "replace the annotators? (Calderon et al. 2025; --epsilon, --fdr, --min-items); examples: the "
                        "items each judge gets wrong (--show wrong), flips between the orders (--show flips) or where it "
                        "chose the longer response (--show longer), with their texts, or the system pairs behind its "
                        "ranking agreement (--show pairs)")
    p.add_argument("--statistic", choices=STATISTICS, default="accuracy", help="for --view leaderboard")
    p.add_argument("--order", choices=ORDER_MODES, default="original",
                   help="for --view leaderboard and examples: original, swapped, average (of both orders) or both "
                        "(right in both); for --view systems and --show pairs, the judges' verdicts the systems are "
                        "scored from (not both)")
    p.add_argument("--ranking", choices=RANKING_METHODS, default="win-rate",
                   help="for --view systems and examples --show pairs: win rates or Bradley-Terry with ties "
                        "(Davidson)")
    p.add_argument("--delta", type=float, default=0.1,
                   help="for --view systems: a close pair's people win rate lies within this of 0.5 (default 0.1)")
    p.add_argument("--epsilon", type=float, default=0.2,
                   help="for --view alt-test: the judge's allowance (the paper: 0.2 against experts, 0.15 skilled "
                        "annotators, 0.1 crowd workers)")
    p.add_argument("--fdr", type=float, default=0.05,
                   help="for --view alt-test: the Benjamini-Yekutieli level q over annotators (default 0.05)")
    p.add_argument("--min-items", type=int, default=30,
                   help="for --view alt-test: annotators with fewer items are left out (the paper: 30 for the "
                        "t-test's normal approximation)")
    p.add_argument("--alignment", choices=("neg-rmse", "neg-abs"), default="neg-rmse",
                   help="for --view alt-test on score data: negative RMSE or negative mean absolute error")
    p.add_argument("--human", help="for --view alt-test on score data: the human measure (default: the first)")
    p.add_argument("--annotators-are", choices=("as-declared", "persons"), default="as-declared",
                   help="for --view alt-test on an uploaded score file, which does not say: persons states that each "
                        "annotator is one person throughout (refused where the data declares slots, as HANNA)")
    p.add_argument("--judges", metavar="NAME[,NAME...]",
                   help="for --view alt-test on score data: the measures tested (default: every metric)")
    p.add_argument("--confidence-level", type=float, default=0.95)
    add_judge_example_args(p)  # --view examples: items or system pairs (metaeval_core/cli/examples.py)
    # Not cli.add_resampling_args: its help says 10 while a 0.95 percentile interval needs 40 (the check refuses
    # fewer); the judges' help states the rule the check applies.
    p.add_argument("--n-resamples", type=cli.resample_count, default=1000,
                   help="resamples (default 1000): at least ceil(2 / (1 - confidence level)), i.e. 40 at the "
                        "default 0.95 (one resample in each tail of the interval), at most 10,000")
    p.add_argument("--seed", type=int, default=0, help="random seed: the same seed gives the same numbers")
    cli.add_budget_arg(p, "resampling views (table, leaderboard, bias, systems, agreement)",
                       default_note="priced beyond 1,000 resamples")
