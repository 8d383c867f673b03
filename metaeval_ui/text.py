"""Text helpers shared by pages, figures and reports: p-values that agree with their decision, and jargon.

No streamlit import (figures use these too).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable

MAX_DECIMALS = 8


def _finite(p: object) -> float | None:
    try:
        value = float(p)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def pairs_count(n: int) -> str:
    """``1 pair``, ``12 pairs``: a count of system pairs in words a slide can show."""
    return f"{n} pair" if n == 1 else f"{n} pairs"


def pvalue_decimals(pvalues: Iterable[object], alpha: float | None = None, *, decimals: int = 3) -> int:
    """Fewest decimals (at least ``decimals``) at which every rounded p sits on the same side of ``alpha``
    as the p itself, so that a shown "0.050" is never marked significant at alpha = 0.05.

    Capped at ``MAX_DECIMALS``; :func:`format_pvalue` writes "< alpha" for a p even closer than that.
    """
    values = [v for v in (_finite(p) for p in pvalues) if v is not None]
    if alpha is None or not values:
        return decimals
    for d in range(decimals, MAX_DECIMALS + 1):
        if all((round(v, d) < alpha) == (v < alpha) for v in values):
            return d
    return MAX_DECIMALS


def format_pvalue(p: object, alpha: float | None = None, *, decimals: int = 3) -> str:
    """A p-value for display: ``decimals`` decimals (two significant digits below 0.001), with more where
    rounding would put the shown number on the other side of ``alpha`` than the p itself.

    >>> format_pvalue(0.04995, 0.05)
    '0.04995'
    >>> format_pvalue(0.0502, 0.05)
    '0.050'
    >>> format_pvalue(0.2)
    '0.200'
    """
    value = _finite(p)
    if value is None:
        return "undefined"
    if value < 0.001:  # significant digits, not decimals: 1.2e-05 rather than 0.000
        for digits in range(2, MAX_DECIMALS + 1):
            text = f"{value:.{digits}g}"
            if alpha is None or (float(text) < alpha) == (value < alpha):
                return text
        return f"< {alpha:g}" if value < alpha else f"≥ {alpha:g}"
    d = pvalue_decimals([value], alpha, decimals=decimals)
    text = f"{value:.{d}f}"
    if alpha is not None and (float(text) < alpha) != (value < alpha):
        return f"< {alpha:g}" if value < alpha else f"≥ {alpha:g}"
    # "0.0500" when p is exactly alpha is honest (not significant); strip nothing else.
    return text


# -- jargon: one plain-words definition per term, used as help tooltips -----------------------------------------
GLOSSARY = {
    "M_jud": "The number of judged inputs: inputs (documents, prompts, segments, ...) that have human scores. "
             "Metrics may also score unjudged inputs.",
    "undefined pieces skipped": "A correlation is undefined when one side is constant (every system tied). Such "
                                "inputs (input level) or resamples are left out of the average and counted.",
    "Pooled reduction": "1 − (mean over systems of the variance with all inputs) / (mean over systems of the "
                        "variance with judged inputs only): the share of per-system score variance removed by "
                        "scoring systems on every input. NAACL 2022 quotes ~99% on real test sets.",
    "Average variance reduction": "The mean over systems of 1 − var(all) / var(judged), where var is the variance of "
                                  "the system's bootstrapped mean score.",
    "rSYS": "System-level Kendall τ: how often the metric orders a pair of systems as the humans do (all pairs).",
    "rSYS-Δ": "rSYS restricted to system pairs whose metric scores differ by at most u (and at least l): the close "
              "pairs a new paper actually has to tell apart (NAACL 2022).",
}


def glossary(term: str) -> str:
    """The plain-words definition of ``term`` (KeyError for an unknown term: a typo should fail a test)."""
    return GLOSSARY[term]


# -- significance tests: what each method does and how its p-value is computed (docs/methods.md sec. 3) -----------
_UNITS = {"systems": "whole system rows", "inputs": "whole input columns", "both": "every cell on its own"}
_DRAWS = {"systems": "systems", "inputs": "inputs", "both": "systems and inputs"}


def method_description(method: str, *, k: int, alternative: str = "greater") -> str:
    """One method's description in plain words with its own p-value formula (markdown)."""
    two = alternative == "two-sided"
    if method.startswith("perm-"):
        unit = method.split("-", 1)[1]
        count = "|δₛ| ≥ |δ|" if two else "δₛ ≥ δ"
        return (f"**{method.upper()}** (permutation, TACL 2021 Algorithm 2): {k:,} times, swap X's and Y's "
                f"(standardised) scores, {_UNITS[unit]} at random, and recompute δₛ = r(X, Z) − r(Y, Z). "
                f"p = (1 + #{{{count}}}) / (1 + k), over the resamples where δₛ is defined; never 0.")
    if method.startswith("boot-"):
        unit = method.split("-", 1)[1]
        count = "|δₛ − δ| ≥ |δ|" if two else "δₛ − δ ≥ δ"
        return (f"**{method.upper()}** (paired bootstrap): {k:,} times, resample {_DRAWS[unit]} with replacement, "
                "the same draw for X, Y and the humans, and recompute δₛ; centred on δ it approximates the null. "
                f"p = (1 + #{{{count}}}) / (1 + k), over the defined resamples; never 0. Lower power than "
                "PERM-BOTH (TACL 2021 sec. 5.2).")
    if method == "wmt-perm-sys":
        count = "|δₛ| ≥ |δ|" if two else "δₛ ≥ δ"
        return (f"**WMT-PERM-SYS** (WMT's system-level test, mt-metrics-eval's PermutationSigDiff): on the systems "
                "the humans and both metrics score, z-score each metric's system scores, then {k:,} times swap X's "
                "and Y's z-scored score of every system with probability 1/2 and recompute δₛ = r(X, Z) − r(Y, Z). "
                f"p = (1 + #{{{count}}}) / (1 + k); never 0 (mt-metrics-eval reports #/k and stops early).").replace(
            "{k:,}", f"{k:,}")
    if method == "williams":
        return ("**WILLIAMS** (analytic, Williams 1959): a t-test for two dependent correlations sharing the humans "
                "Z, from r(X, Z), r(Y, Z), r(X, Y) and the number of points n (systems, or cells at the global "
                f"level); p from Student's t with n − 3 degrees of freedom{', doubled' if two else ''}. No "
                "resampling (k and the seed do not apply); assumes normal data and a Pearson correlation.")
    return f"**{method.upper()}**"


# -- chance baselines (docs/methods.md sec. 12) ---------------------------------------------------------------------
def chance_sentence(groups, *, symbol: str, confidence_level: float = 0.95, note: str = "") -> str:
    """One sentence saying where a random metric lands (markdown-safe: names are escaped by the caller's rules).

    ``groups`` is :func:`metaeval_ui.tables.chance_groups`'s frame; ``note`` says why there is no baseline.
    """
    if note:
        return f"No chance baseline: {note}."
    if groups is None or len(groups) == 0:
        return ""

    def part(row) -> str:
        def num(v: float) -> str:
            return f"{v:.3f}" if math.isfinite(v) else "undefined"

        return f"{symbol} = {num(row['estimate'])}, {100 * confidence_level:g}% range [{num(row['low'])}, {num(row['high'])}]"

    if len(groups) == 1:
        level = part(groups.iloc[0]) + " for every metric here"
    else:
        level = "; ".join(f"{', '.join(row['metrics'])}: {part(row)}" for _, row in groups.iterrows())
    k = int(groups["n_resamples"].max())
    return (f"Chance level (each metric's scores randomly permuted, {k:,} permutations, humans fixed): {level}. "
            "A metric inside that range does no better than random scores on this dataset (docs/methods.md sec. 12).")


def epsilon_note(level: str) -> str:
    """What the tie threshold epsilon of the tie-calibrated accuracy is, at ``level`` (docs/methods.md sec. 11.2)."""
    over = {"input": "one epsilon shared by every input (the one maximising the accuracy averaged over inputs), "
                     "as in Deutsch et al. (2023) and WMT, not one per input",
            "system": "one epsilon over the system pairs",
            "global": "one epsilon over all pairs of cells"}.get(level, "one epsilon for the whole level")
    return ("Tie-calibrated accuracy: a metric difference |Δ| ≤ epsilon counts as a tie; epsilon (metric units) is "
            f"the smallest value maximising the accuracy, {over}. Bootstrap intervals and tests re-choose epsilon "
            "on every resample, so they include the uncertainty of choosing it.")


# -- significance wording: "better" only for a one-sided test (docs/methods.md sec. 3) -------------------------------
@dataclass(frozen=True)
class SignificanceWording:
    """What the Significance page calls its test, derived from the test's alternative (and nothing else).

    ``title`` heads the heatmap, ``row_axis`` labels its rows, ``x_column`` names the table's X column,
    ``hypothesis`` is H1 in words, ``cell`` says what a filled cell means and ``joiner`` links a significant pair
    (X joiner Y) in the "still significant" list.
    """

    title: str
    row_axis: str
    x_column: str
    hypothesis: str
    cell: str
    joiner: str


def significance_wording(table, *, method_label: str) -> SignificanceWording:
    """The wording of a :class:`~metaeval_core.stats.significance.PairwiseTable` (its alternative, humans,
    coefficient and level): "better" appears only when the test is one-sided (``alternative='greater'``)."""
    where = f"({table.coefficient}, {table.level} level)"
    if table.alternative == "two-sided":
        return SignificanceWording(
            title=f"{method_label} (two-sided): do the row and column metrics differ?",
            row_axis="row metric (X)",
            x_column="X",
            hypothesis=f"H1: X and Y correlate differently with {table.human} {where}, two-sided",
            cell="X and Y differ; which of them correlates higher is read from the sign of delta",
            joiner="≠")
    return SignificanceWording(
        title=f"{method_label}: is the row metric better than the column metric?",
        row_axis="row metric (X): is X better than Y?",
        x_column="X (better?)",
        hypothesis=f"H1: X correlates better with {table.human} than Y does {where}, one-sided",
        cell="X correlates better than Y",
        joiner=">")


def significant_pairs(xs: Iterable[str], ys: Iterable[str], deltas: Iterable[float], *, alternative: str) -> list[str]:
    """The significant comparisons in words: "X > Y" (one-sided) or, two-sided, each unordered pair once as
    "X ≠ Y", the metric with the higher correlation first."""
    if alternative != "two-sided":
        return [f"{x} > {y}" for x, y in zip(xs, ys)]
    seen: dict[frozenset, str] = {}
    for x, y, d in zip(xs, ys, deltas):
        hi, lo = (x, y) if d >= 0 else (y, x)
        seen.setdefault(frozenset((x, y)), f"{hi} ≠ {lo} ({hi} higher)")
    return list(seen.values())


# -- judgment planning (docs/methods.md sec. 10.2) -------------------------------------------------------------------
def coefficient_range(coefficient: str) -> tuple[float, float]:
    """The values a coefficient can take: [-1, 1] for the correlations, [0, 1] for the pairwise accuracies."""
    return (-1.0, 1.0) if coefficient in ("pearson", "spearman", "kendall") else (0.0, 1.0)


def target_width_sentence(width: float, *, coefficient: str, default: float, full_width: float) -> str:
    """The planner's target width in words, relative to the coefficient's range, and how its default was derived
    on this dataset (the default is data-dependent, so it is stated, never silent)."""
    low, high = coefficient_range(coefficient)
    share = width / (high - low)
    full = f"{full_width:.2f}" if math.isfinite(full_width) else "undefined"
    return (f"Target width {width:.2f} = {share:.0%} of {coefficient}'s range [{low:g}, {high:g}] "
            f"(estimate ± {width / 2:.2f})" + (": wide, it rules out little" if share > 0.5 else "")
            + f". The default on this dataset is {default:.2f}: the interval width with every judged input and "
            f"system ({full}) plus a fifth, rounded up to 0.05, so that the largest design can reach it; it differs "
            "between datasets, so set the width your conclusion needs.")


# -- realistic pairs: the decile grid in words (docs/methods.md sec. 4.2) ---------------------------------------------
def decile_grid_sentence(grid) -> str:
    """How the decile grid bins the pairs, from the grid itself (a :class:`metaeval_core.stats.pairs.DecileGrid`):
    the bucket ``b``, what the columns hold (ties and the last column included) and how many pairs each row skips
    (bounds are inclusive, so row k keeps the pair at t_k)."""
    n, b = grid.total_pairs, grid.bucket_size
    held = [int(round(float(s) * n)) for s in grid.column_share]
    nominal = [min((k + 1) * b, n) for k in range(len(held))]
    capped = next((k for k in range(1, len(held) + 1) if k * b >= n), len(held))
    exact = capped == len(held) and capped * b == n  # the last column is all pairs either way; say so otherwise
    columns = (f"Columns: u = t_k, the k·b closest pairs, b = ⌈10% of {n}⌉ = {b} (the paper's bins"
               + ("" if exact else f"; column {capped}{' on' if capped < len(held) else ''}: all {n}") + ")")
    if held != nominal:
        columns += (", plus any pair tied with t_k in |Δ|: the columns hold " + ", ".join(map(str, held))
                    + " pairs")
    skipped = [int(v) for v in grid.skipped[1:]]
    return (f"{columns}. Rows: l = t_k; both bounds are inclusive, so row k keeps the pair at t_k and skips the "
            f"pairs closer than it ({', '.join(map(str, skipped))} for rows 1–{len(skipped)}): k·b − 1, or fewer "
            "with ties at t_k. The top-right cell is the standard rSYS.")


# -- human ceilings (docs/methods.md sec. 14) ------------------------------------------------------------------------
def ceiling_sentences(identity: str, outputs: str, rows, *, level: str) -> tuple[str, str]:
    """What the human-ceiling rows mean, said for who the annotators are, and a warning when one is below 0 ('' when
    none is).

    ``identity`` is ``Dataset.annotators_are(human)`` (persons, positions or unknown); ``outputs`` the dataset's
    plural unit (``summaries``, ``stories``); ``rows`` pairs of (row label, estimate).
    """
    if identity == "persons":
        what = ("each annotator scored against the mean of the others, as if it were a metric (docs/methods.md sec. "
                "14). A metric whose interval reaches these rows agrees with the humans about as well as one more "
                "annotator would.")
    else:
        who = (f"rater slots are positions, not persons: different people fill slot k across the {outputs}"
               if identity == "positions" else f"the data do not say whether slot k is one person across the {outputs}")
        what = (f"{who}. Each row scores slot k's ratings against the mean of the other slots', so it says how well a "
                "single rating agrees with the others, not how well any one person does (docs/methods.md sec. 14).")
    negative = [(label, float(estimate)) for label, estimate in rows if math.isfinite(float(estimate)) and estimate < 0]
    warning = ""
    if negative:
        shown = ", ".join(f"{label} {estimate:.2g}" for label, estimate in negative)
        warning = (f"Human ceiling below 0 at the {level} level ({shown}): single ratings disagree with the mean of "
                   f"the other ratings, so at this level the human scores barely order the {outputs}; a metric's "
                   "correlation here is limited by that noise, not only by the metric.")
    return what, warning


# -- intervals: where two methods disagree about zero (docs/methods.md sec. 2) -----------------------------------------
def zero_disagreement_sentence(names: Iterable[str], shown: Iterable[tuple[float, float]],
                               other: Iterable[tuple[float, float]], *, shown_label: str, other_label: str) -> str:
    """Name the rows whose ``shown`` interval and ``other`` interval disagree about whether 0 is inside ("" when
    none do), so a page never shows one verdict while another page or method implies the opposite unexplained."""
    def has_zero(bounds: tuple[float, float]) -> bool | None:
        low, high = (_finite(v) for v in bounds)
        return None if low is None or high is None else low <= 0.0 <= high

    split = {True: [], False: []}
    for name, a, b in zip(names, shown, other):
        za, zb = has_zero(a), has_zero(b)
        if za is not None and zb is not None and za != zb:
            split[za].append(name)
    parts = []
    if split[True]:
        parts.append(f"{', '.join(split[True])}: the {shown_label} interval includes 0 but the {other_label} one "
                     "excludes it")
    if split[False]:
        parts.append(f"{', '.join(split[False])}: the {shown_label} interval excludes 0 but the {other_label} one "
                     "includes it")
    return "; ".join(parts)



def reference_caution(found: dict, *, inputs: str, can_drop: bool) -> str:
    """A caution naming the systems that reference-based metrics score against themselves (``found``:
    :func:`metaeval_ui.tables.reference_scored`); '' when there are none."""
    if not found:
        return ""
    systems = list(dict.fromkeys(s for names in found.values() for s in names))
    who, many = ", ".join(systems), len(systems) > 1
    it, its = ("them", "their") if many else ("it", "its")
    return (f"Reference-scored system{'s' if many else ''}: {who} score{'' if many else 's'} above every other "
            f"system on every one of the {inputs} under {', '.join(found)}: {its} outputs are the references these "
            f"metrics compare with, so they rank {it} first by construction and their correlations with the humans "
            "are inflated. "
            + (f"Turn 'Keep every system' off to drop {it}, as the dataset's published figures do." if can_drop
               else "Select the other systems to compare the metrics fairly."))


def doubt_sentence(board) -> str:
    """The Overview's warning about bold rank-1 metrics whose place means little (``board``: the leaderboard with
    its ``doubt`` column, :func:`metaeval_ui.tables.doubts`); '' when none has a doubt."""
    if board is None or "doubt" not in board.columns:
        return ""
    ranked = board[(board["kind"] == "metric") & board["doubt"].fillna("").astype(bool)]
    if ranked.empty:
        return ""
    first = ranked[ranked["cluster"] == 1]
    if first.empty:
        return ""
    parts = [f"{m} ({d})" for m, d in zip(first["metric"], first["doubt"])]
    return (f"⚠ Rank 1 is not evidence of a good metric here: {'; '.join(parts)}. Rank 1 only means no test "
            "separates the metric from the best; with such an interval it is not shown to beat the others, nor "
            "random scores.")


# -- leave one system out (docs/methods.md sec. 10.4) ----------------------------------------------------------------
def decisive_sentence(result, *, coefficient: str) -> str:
    """What "decisive" means for a :class:`~metaeval_core.analyses.practice.InfluenceResult`: the limit a change
    must exceed, and why it is not the threshold alone (the granularity and the noise of leaving out any system)."""
    n = len(result.systems)
    parts = [f"A removal is decisive when it moves {coefficient} by more than {result.limit:.3f}"]
    if math.isfinite(result.noise):
        parts.append(f": the larger of the threshold ({result.threshold:g}) and twice the change leaving out an "
                     f"ordinary system makes ({result.noise:.3f}, the robust spread of the {n} changes")
        if math.isfinite(result.resolution):
            parts.append(f"; one discordant pair alone moves τ by {result.resolution:.3f} on {n - 1} systems, and "
                         "the changes differ from one another by multiples of that")
        parts.append("). Smaller moves are the granularity and sampling noise of the coefficient, not one system "
                     "deciding the result")
    return "".join(parts) + "."


def fewer_systems_note(n_by_metric: dict[str, int], n_systems: int, missing: dict[str, tuple[str, ...]], *,
                       shown: int = 6) -> str | None:
    """The sentence naming the metrics whose system-level correlation uses fewer than the ``n_systems`` of the
    page's system set, grouped by the systems they did not score (None when every metric uses all of them).

    Each correlation keeps the systems both measures scored (docs/methods.md sec. 0.2); on mt-metrics-eval data
    with every system kept, a reference-based metric has no score for its own reference (sec. 0.6).
    """
    groups: dict[tuple[int, tuple[str, ...]], list[str]] = {}
    for metric, n in n_by_metric.items():
        if n < n_systems:
            groups.setdefault((int(n), tuple(missing.get(metric, ()))), []).append(metric)
    if not groups:
        return None
    parts = []
    for (n, lacking), metrics in sorted(groups.items(), key=lambda item: (-item[0][0], item[0][1])):
        names = ", ".join(metrics[:shown]) + (f" and {len(metrics) - shown} more" if len(metrics) > shown else "")
        why = f"no score for {', '.join(lacking)}" if lacking else "no metric mean for the others"
        parts.append(f"{names} ({n} of {n_systems}: {why})")
    return (f"System set: {n_systems} systems. Metrics evaluated on fewer systems: " + "; ".join(parts)
            + ". Each correlation uses the systems its metric scored (a reference-based metric cannot score its "
              "own reference), so these values are over fewer points; the Significance page compares metrics on "
              "the systems all of them scored.")
