"""Sentences about the judges' results, written from the result objects: the CLI and the pages print the same words.

Plain text (no markdown); a page escapes it. Numbers, intervals, counts and p-values come from the project's one
wording module (:mod:`metaeval_core.wording`); this module words the judges' own results.

References: docs/methods.md sec. 18.
"""

from __future__ import annotations

import math
from typing import Callable, Sequence

from metaeval_core.wording import CORRECTION_LABELS as CORRECTIONS
from metaeval_core.wording import count, count_of, estimate_with_bounds, format_pvalue, number
from metaeval_core.wording import names as _names

TIES = {"three-class": "a tie is a third verdict (three classes)",
        "drop-reference-ties": "items the reference calls a tie are left out",
        "drop-any-tie": "items where the reference or the judge says tie are left out"}
INVALID = {"wrong": "an invalid (unparsed) verdict counts as wrong",
           "drop": "items with an invalid verdict are left out",
           "tie": "an invalid verdict counts as a tie",
           "as-verdict": "an invalid verdict is an answer like another (LLMBar's convention: two invalid verdicts "
                         "agree; against a reference it is wrong)"}
ORDERS = {"original": "the original order (A shown first)", "swapped": "the swapped order (B shown first)",
          "average": "the mean over both orders", "both": "both orders (right only when right in both)"}
STATISTICS = {"accuracy": "accuracy", "kappa": "Cohen's kappa", "alpha": "Krippendorff's alpha"}


def interval(estimate: float, low: float, high: float) -> str:
    """"0.698 [0.668, 0.721]" (:func:`metaeval_core.wording.estimate_with_bounds`)."""
    return estimate_with_bounds(estimate, low, high)


def pvalue(p: float | None) -> str:
    return format_pvalue(p)


def names(items: Sequence[str], limit: int = 5) -> str:
    return _names(items, shown=limit)


# -- the leaderboard ------------------------------------------------------------------------------------------


def conventions(board) -> str:
    """What every number of the leaderboard means: statistic, reference, order, ties, invalid verdicts, interval."""
    return (f"{STATISTICS.get(board.statistic, board.statistic).capitalize()} of each judge's verdicts against "
            f"{board.reference}, in {ORDERS.get(board.order, board.order)}; ties: "
            f"{TIES.get(board.ties, board.ties)}; {INVALID.get(board.invalid, board.invalid)}. Intervals: "
            f"{board.confidence_level:.0%} percentile bootstrap over items ({_resampled_items(board)}), "
            f"{board.n_resamples:,} resamples.")


def _resampled_items(board) -> str:
    """The items each resample draws, and, where judges are scored on fewer of them, how many each judge counts."""
    counts = sorted({r.n_items for r in board.judge_rows() if r.n_items})
    if counts == [board.n_items] or not counts:
        return count(board.n_items, "item")
    span = f"{counts[0]:,}" if len(counts) == 1 else f"{counts[0]:,} to {counts[-1]:,}"
    return (f"all {count(board.n_items, 'item')} drawn together; each judge is scored on the drawn items it "
            f"counts, {span} of them")


def headline(board, *, mark: Callable[[str], str] = str) -> str:
    """The top judge (with every judge tied with it), its interval, and the other judges of its cluster.

    ``mark`` wraps each judge's name (a page passes an escaping bold; the CLI prints names as they are)."""
    judges = [r for r in board.judge_rows() if math.isfinite(r.estimate)]
    if not judges:
        return "No judge has a defined agreement on these items."
    top = judges[0]
    leaders = [r.name for r in judges if r.estimate == top.estimate and r.cluster == top.cluster]
    tied = " (tied)" if len(leaders) > 1 else ""
    head = (f"Highest {STATISTICS.get(board.statistic, board.statistic)}: {names([mark(n) for n in leaders], 10)}"
            f"{tied}, "
            f"{interval(top.estimate, top.low, top.high)} on {count(top.n_items, 'item')}.")
    if board.comparison is None:
        return head
    two = board.alternative == "two-sided"
    where = (f"(paired permutation test, {CORRECTIONS.get(board.correction, board.correction)}-corrected, "
             f"alpha = {board.alpha:g})")
    mates = [r.name for r in judges if r.cluster == top.cluster and r.name not in leaders]
    if not mates:
        if len(judges) == len(leaders):
            return head
        rest = ("every other judge differs from it significantly" if two
                else "it is significantly better than every other judge")
        return f"{head} {'They are' if len(leaders) > 1 else 'It is'} alone in the first cluster: {rest} {where}."
    one = len(mates) == 1
    verb = (("does not" if one else "do not") + " differ significantly from it" if two
            else ("is" if one else "are") + " not significantly worse than it")
    return (f"{head} {count(len(mates), 'other judge')} {verb} and {'shares' if one else 'share'} its cluster: "
            f"{names([mark(m) for m in mates])} {where}.")


def chance(board) -> str:
    """The judges' chance range and how many beat chance (one-sided permutation p, corrected over the judges)."""
    rows = [r for r in board.judge_rows() if math.isfinite(r.chance_pvalue)]
    if not rows:
        return ""
    low = min(r.chance_mean for r in rows)
    high = max(r.chance_mean for r in rows)
    beaten = sum(r.chance_pvalue_corrected < 0.05 for r in rows)
    correction = CORRECTIONS.get(board.chance_correction, board.chance_correction)
    who = count_of(beaten, len(rows), "judge")
    who = who[0].upper() + who[1:]
    span = number(low) if number(low) == number(high) else f"{number(low)} to {number(high)}"
    return (f"Chance (each judge's verdicts permuted over the items, its and the reference's verdict shares kept): "
            f"mean {span}. {who} {'agrees' if len(rows) == 1 else 'agree'}"
            f" with the reference more than chance (one-sided permutation p < 0.05 after {correction} over the "
            f"{len(rows)}; smallest uncorrected p = {pvalue(min(r.chance_pvalue for r in rows))}).")


def ceiling(board) -> str:
    """The human ceiling under its rule, or why there is none."""
    if board.ceiling is None:
        return board.no_ceiling
    people = board.kind_rows("annotator")
    values = [r.estimate for r in people]
    counts = [r.n_items for r in people]
    mean = board.ceiling_mean
    judges = [r for r in board.judge_rows() if math.isfinite(r.estimate)]
    compare = ""
    if judges and math.isfinite(mean.low):
        best = judges[0].estimate
        side = ("below" if best < mean.low else "above" if best > mean.high else "within")
        compare = f"; the best judge ({number(best)}) is {side} its interval"
    on = (f"on {count(counts[0], 'item')} each" if len(set(counts)) == 1
          else f"on {', '.join(f'{c:,}' for c in counts)} items respectively ({', '.join(r.name for r in people)})")
    return (f"Human ceiling {interval(mean.estimate, mean.low, mean.high)}: {board.ceiling_rule}. The "
            f"{count(len(people), 'annotator')} score {number(min(values))} to {number(max(values))} {on}"
            f"{compare}. The ceiling's reference is the other annotators' majority, not exactly the judges' one.")


# -- biases ---------------------------------------------------------------------------------------------------


def tie_break(result) -> str:
    """Why a scoring judge's positional figures read as they do (a :class:`PositionalBias`); '' for others."""
    if result.n_equal_scores == 0 and result.basis != "scores":
        return ""
    head = (f"{result.judge} scores each output once, so its verdicts in both orders come from the same two scores"
            f"; it gave equal scores on {result.n_equal_scores} of {count(result.n_items, 'item')} judged in both "
            "orders")
    broken = (f", and its given verdicts name a winner on {result.n_tie_broken} of them (by a rule: LLMBar's Rating "
              "strategy names the output shown second), so its verdict-level consistency (about 1 minus the share of equal "
              "scores), first-position share and the gap between its accuracies in the two orders describe that "
              "tie-break rule, not the judge"
              if result.n_tie_broken else "")
    if result.basis == "scores":
        return (head + broken + ". Shown here on its scores (equal scores are ties): consistent on every scored item "
                "by construction, and no position preference can show.")
    return head + broken + "."


__all__ = ["tie_break", "INVALID", "ORDERS", "STATISTICS", "TIES", "ceiling", "chance", "conventions", "count", "headline",
           "interval", "names", "number", "pvalue"]
