"""CLI subcommand ``judges``: pairwise ("A or B?") judges against people, per pair set (docs/methods.md sec. 18).

``metaeval judges --dataset ID`` prints, for every judge on every pair set, the items, the accuracy in each
presentation order and in both, the positional consistency and Cohen's kappa with bootstrap intervals;
``--json`` gives one record per judge and pair set. ``metaeval describe --dataset ID`` on a pairwise dataset
lands in :func:`describe_pairwise_command`. Registered by :mod:`metaeval_core.cli.main` through
``add_commands(command)``.
"""

from __future__ import annotations

import argparse
import math
from typing import Any, Callable

from metaeval_core.judges._kernel import INVALID_CONVENTIONS, TIE_CONVENTIONS

#: The figures of one record, in table order: (key, statistic, order).
_FIGURES: tuple[tuple[str, str, str], ...] = (
    ("accuracy_original", "accuracy", "original"),
    ("accuracy_swapped", "accuracy", "swapped"),
    ("accuracy_both", "accuracy", "both"),
    ("kappa", "kappa", "original"),
)


def _cli():
    # Imported lazily: metaeval_core.cli.main imports this module while building its parser.
    from metaeval_core.cli import main as cli

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


def judge_records(data, *, reference: str = "auto", ties: str = "three-class", invalid: str = "wrong",
                  pair_sets: list[str] | None = None, confidence_level: float = 0.95, n_resamples: int = 1000,
                  seed: int = 0) -> list[dict]:
    """One record per judge and pair set: items, accuracy per order and in both, consistency, kappa."""
    from metaeval_core.judges import judge_agreement, positional_bias

    records = []
    for name in pair_sets or data.pair_sets:
        part = data.select_pair_set(name)
        judges = part.judges_of(name)
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
                "dataset": data.id, "pair_set": name, "judge": judge,
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


def _cell(record: dict, key: str) -> str:
    """'83 [76,90]': the value and its interval, x 100, or '-' when undefined."""
    value, low, high = record.get(key), record.get(f"{key}_low"), record.get(f"{key}_high")

    def pct(v: Any) -> str:
        return "?" if v is None or not math.isfinite(v) else f"{100 * v:.0f}"

    if value is None or not math.isfinite(value):
        return "-"
    return f"{pct(value)} [{pct(low)},{pct(high)}]"


def cmd_judges(args: argparse.Namespace) -> None:
    cli = _cli()
    data = _load(args)
    pair_sets = None
    if args.pair_sets:
        pair_sets = cli.split_list(args.pair_sets, "pair-sets")
        unknown = [p for p in pair_sets if p not in data.pair_sets]
        if unknown:
            raise cli.CLIError(f"--pair-sets: {data.id!r} has no pair set {unknown[0]!r}; pair sets: "
                               f"{', '.join(data.pair_sets)}")
    records = judge_records(data, reference=args.reference, ties=args.ties, invalid=args.invalid,
                            pair_sets=pair_sets, confidence_level=args.confidence_level,
                            n_resamples=args.n_resamples, seed=args.seed)
    if args.json:
        cli.emit(args, records)
        return
    import textwrap

    width = max(40, cli.terminal_width() - 1)
    level = f"{args.confidence_level:.0%}"
    print(textwrap.fill(f"{data.id}: judges against {records[0]['reference'] if records else 'the reference'}; "
                        f"ties: {args.ties}; invalid verdicts: {args.invalid}", width=width))
    print(textwrap.fill(f"values x 100 with {level} percentile-bootstrap intervals over items ({args.n_resamples} "
                        f"resamples, seed {args.seed}); both: right in both orders; consistent: the same verdict in "
                        "both orders; '-': undefined (e.g. one order only)", width=width))
    for name in pair_sets or data.pair_sets:
        rows = [r for r in records if r["pair_set"] == name]
        if not rows:
            continue
        print(f"\n{name} ({int((data.pair_set == data.pair_sets.index(name)).sum())} pairs)")
        table = [{"judge": r["judge"], "n": r["n_items"], "original": _cell(r, "accuracy_original"),
                  "swapped": _cell(r, "accuracy_swapped"), "both": _cell(r, "accuracy_both"),
                  "consistent": _cell(r, "consistency"), "kappa": _cell(r, "kappa")} for r in rows]
        cli.print_table(table, ["judge", "n", "original", "swapped", "both", "consistent", "kappa"])


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


def describe_pairwise_command(args: argparse.Namespace) -> None:
    cli = _cli()
    info = describe_pairwise(_load(args))
    if args.json:
        cli.emit(args, info)
        return
    print(f"{info['id']} ({info['title']}), version {info['version']}")
    print(f"pairwise verdicts: {info['n_items']} items in {len(info['pair_sets'])} pair set(s); "
          f"{len(info['humans'])} human annotator(s), {len(info['golds'])} gold label(s), "
          f"{len(info['judges'])} judge(s)")
    print("pair sets: " + ", ".join(f"{k} ({v})" for k, v in info["pair_sets"].items()))
    if info["systems"]:
        print("systems: " + ", ".join(info["systems"]))
    import textwrap

    for note in info["notes"]:
        print(textwrap.fill(f"note: {note}", width=max(40, cli.terminal_width() - 1), subsequent_indent="  "))
    cli.print_table([{**r, "orders": "+".join(r["orders"])} for r in info["raters"]],
                    ["rater", "kind", "orders", "A", "B", "tie", "invalid", "missing"])


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
    p.add_argument("--reference", default="auto",
                   help="auto (the gold label when there is one, else the human majority), majority, gold, or a "
                        "rater id")
    p.add_argument("--ties", choices=TIE_CONVENTIONS, default="three-class",
                   help="a tie is a third class (default), or items with a reference tie / any tie are left out")
    p.add_argument("--invalid", choices=INVALID_CONVENTIONS, default="wrong",
                   help="an invalid verdict counts as wrong (default), its item is left out, or it reads as a tie")
    p.add_argument("--confidence-level", type=float, default=0.95)
    cli.add_resampling_args(p)
