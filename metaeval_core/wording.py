"""Sentences about results, in one place: numbers, ranges, counts, p-values, significance, chance and clusters.

Every surface (the CLI, the pages, the figures' captions) words a statistical statement with these functions, so
a wording fix lands everywhere. numpy/pandas only (no streamlit, no plotly); the inputs are result objects
(:class:`~metaeval_core.stats.significance.PairwiseTable`, the metrics leaderboard, the chance baselines) or plain
numbers. Conventions (docs/methods.md sec. 3 and 12):

* a number never shows as "-0" or "-0.000": a value that rounds to zero is written without a sign;
* a range is written as "[low, high]", never "low-high" (ambiguous when low is negative);
* a count agrees with its noun ("1 pair", "16 systems"), and "n of n" is written "all n";
* a note ends with exactly one full stop;
* not rejecting a test is not a tie: metrics no test separates are "not separated at the corrected level", and a
  small uncorrected p-value is said.

References
----------
docs/methods.md sec. 3 (tests and corrections), sec. 12 (chance baselines).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

MAX_DECIMALS = 8

CORRECTION_LABELS = {"bonferroni": "Bonferroni", "holm": "Holm", "bh": "Benjamini-Hochberg",
                     "fdr_bh": "Benjamini-Hochberg", "benjamini-hochberg": "Benjamini-Hochberg",
                     "none": "no correction"}


def finite_or_none(value: object) -> float | None:
    """``value`` as a float, or None when it is missing, NaN, infinite or not a number (JSON has no NaN): the one
    NaN-to-None helper of the project (:mod:`metaeval_core.stats.montecarlo` re-exports it; this module sits on
    the core's lowest floor, so the data layer can use it too).

    Examples
    --------
    >>> finite_or_none(0.25), finite_or_none(float("nan")), finite_or_none(None), finite_or_none("x")
    (0.25, None, None, None)
    """
    if value is None:
        return None
    try:
        v = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


finite = finite_or_none


def plain(value: object) -> object:
    """A JSON-safe copy of ``value``: mappings -> dicts with string keys, sequences, sets and arrays -> lists,
    numpy scalars -> Python numbers, non-finite floats -> None (:func:`finite_or_none`), anything else -> its
    ``str``. The one converter behind ``--json`` output and the report's provenance record.

    Examples
    --------
    >>> plain({"a": (1, float("nan")), 2: {"b": float("inf")}})
    {'a': [1, None], '2': {'b': None}}
    """
    from collections.abc import Mapping

    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [plain(v) for v in value]
    if hasattr(value, "tolist") and getattr(value, "ndim", 0) > 0:  # an array: its elements, nested
        return plain(value.tolist())
    if hasattr(value, "item") and callable(value.item) and not isinstance(value, (str, bytes)):
        try:
            value = value.item()  # a numpy scalar
        except (TypeError, ValueError):
            return str(value)
    if isinstance(value, float):
        return finite_or_none(value)
    if value is None or isinstance(value, (bool, int, str)):
        return value
    return str(value)


# -- numbers, ranges, counts --------------------------------------------------------------------------------------
def number(value: object, digits: int = 3, *, missing: str = "undefined", signed: bool = False) -> str:
    """A number with ``digits`` decimals, never "-0.000": a value that rounds to zero has no sign.

    ``missing`` is written for None, NaN or a non-number; ``signed`` writes "+" before a positive value.

    Examples
    --------
    >>> number(-0.0001), number(-0.0001, 4), number(0.12345), number(float("nan")), number(-0.2, 1)
    ('0.000', '-0.0001', '0.123', 'undefined', '-0.2')
    >>> number(0.05, 2, signed=True), number(None, missing="-")
    ('+0.05', '-')
    """
    v = finite(value)
    if v is None:
        return missing
    text = f"{v:+.{digits}f}" if signed else f"{v:.{digits}f}"
    if float(text) == 0.0:  # "-0.000" or "+0.000": rounding removed the value, so the sign says nothing
        text = text.lstrip("+-")
    return text


def bounds(low: object, high: object, digits: int = 3, *, missing: str = "undefined") -> str:
    """An interval or range as "[low, high]": unambiguous with negative bounds (never "-0.010-0.020").

    Examples
    --------
    >>> bounds(-0.0004, 0.0002)
    '[0.000, 0.000]'
    >>> bounds(-0.25, -0.1, 2), bounds(float("nan"), 1.0)
    ('[-0.25, -0.10]', 'undefined')
    """
    lo, hi = finite(low), finite(high)
    if lo is None or hi is None:
        return missing
    return f"[{number(lo, digits)}, {number(hi, digits)}]"


def estimate_with_bounds(estimate: object, low: object, high: object, digits: int = 3) -> str:
    """"0.512 [0.401, 0.610]": an estimate and its interval (the interval left out when undefined).

    Examples
    --------
    >>> estimate_with_bounds(0.5, 0.4, 0.6), estimate_with_bounds(0.5, None, None)
    ('0.500 [0.400, 0.600]', '0.500')
    """
    shown = bounds(low, high, digits, missing="")
    return number(estimate, digits) + (f" {shown}" if shown else "")


def plural(n: int, singular: str, plural_form: str | None = None) -> str:
    """The noun agreeing with ``n``: ``singular`` for 1, else ``plural_form`` (default: singular + "s").

    Examples
    --------
    >>> plural(1, "pair"), plural(2, "pair"), plural(0, "judge"), plural(3, "new measure")
    ('pair', 'pairs', 'judges', 'new measures')
    """
    if int(n) == 1:
        return singular
    return plural_form if plural_form is not None else singular + "s"


def count(n: int, singular: str, plural_form: str | None = None) -> str:
    """"1 pair", "16 systems", "12,000 inputs": a count with its noun in agreement.

    Examples
    --------
    >>> count(1, "new measure"), count(16, "system"), count(12000, "input"), count(2, "family", "families")
    ('1 new measure', '16 systems', '12,000 inputs', '2 families')
    """
    return f"{int(n):,} {plural(n, singular, plural_form)}"


def pairs_count(n: int) -> str:
    """``1 pair``, ``12 pairs``: a count of system pairs in words a slide can show."""
    return count(n, "pair")


def count_of(n: int, total: int, singular: str, plural_form: str | None = None, *, only: bool = False) -> str:
    """"3 of 16 systems", or "all 16 systems" when ``n == total`` (never "16 of 16"); ``only`` prefixes "only"
    when some are left out (never "only 16 of 16 systems").

    Examples
    --------
    >>> count_of(16, 16, "system", only=True), count_of(3, 16, "system", only=True), count_of(1, 2, "judge")
    ('all 16 systems', 'only 3 of 16 systems', '1 of 2 judges')
    >>> count_of(1, 1, "input"), count_of(2, 2, "input")
    ('the 1 input', 'both inputs')
    """
    n, total = int(n), int(total)
    noun = plural(total, singular, plural_form)
    if n == total:
        return {1: f"the 1 {noun}", 2: f"both {noun}"}.get(n, f"all {n:,} {noun}")
    return ("only " if only else "") + f"{n:,} of {total:,} {noun}"


def names(items: Iterable[object], *, shown: int = 5, conjunction: str = "and") -> str:
    """"a", "a and b", "a, b and c", "a, b, c, d, e and 3 more": a list of names in a sentence.

    Examples
    --------
    >>> names(["a"]), names(["a", "b"]), names("abc"), names("abcdefg", shown=3)
    ('a', 'a and b', 'a, b and c', 'a, b, c and 4 more')
    """
    items = [str(i) for i in items]
    if len(items) > shown:
        return ", ".join(items[:shown]) + f" {conjunction} {len(items) - shown} more"
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + f" {conjunction} {items[-1]}"


def sentence(text: str) -> str:
    """``text`` ending with exactly one full stop (kept when it ends with "?", "!" or "…"; never "..").

    Examples
    --------
    >>> sentence("No chance row: too many cells."), sentence("No chance row: too many cells"), sentence("Why?")
    ('No chance row: too many cells.', 'No chance row: too many cells.', 'Why?')
    """
    text = str(text).rstrip()
    if not text:
        return ""
    if text.endswith(("?", "!", "…")):
        return text
    return text.rstrip(".").rstrip() + "."


def clause(text: str) -> str:
    """``text`` without its final full stop(s), to be embedded in a longer sentence.

    Examples
    --------
    >>> clause("the dataset has one system."), clause("fine")
    ('the dataset has one system', 'fine')
    """
    return str(text).rstrip().rstrip(".").rstrip()


def correction_label(correction: str) -> str:
    """How a multiple-comparison correction is named in a sentence ("Bonferroni", "no correction")."""
    return CORRECTION_LABELS.get(str(correction).lower(), str(correction))


# -- p-values ---------------------------------------------------------------------------------------------------
def pvalue_decimals(pvalues: Iterable[object], alpha: float | None = None, *, decimals: int = 3) -> int:
    """Fewest decimals (at least ``decimals``) at which every rounded p sits on the same side of ``alpha``
    as the p itself, so that a shown "0.050" is never marked significant at alpha = 0.05.

    Capped at ``MAX_DECIMALS``; :func:`format_pvalue` writes "< alpha" for a p even closer than that.

    Examples
    --------
    >>> pvalue_decimals([0.2, 0.04995], 0.05)
    5
    """
    values = [v for v in (finite(p) for p in pvalues) if v is not None]
    if alpha is None or not values:
        return decimals
    for d in range(decimals, MAX_DECIMALS + 1):
        if all((round(v, d) < alpha) == (v < alpha) for v in values):
            return d
    return MAX_DECIMALS


def format_pvalue(p: object, alpha: float | None = None, *, decimals: int = 3) -> str:
    """A p-value for display: ``decimals`` decimals (two significant digits below 0.001), with more where
    rounding would put the shown number on the other side of ``alpha`` than the p itself.

    Examples
    --------
    >>> format_pvalue(0.04995, 0.05)
    '0.04995'
    >>> format_pvalue(0.0502, 0.05)
    '0.050'
    >>> format_pvalue(0.2), format_pvalue(1.23e-5), format_pvalue(None)
    ('0.200', '1.2e-05', 'undefined')
    """
    value = finite(p)
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


# -- separation: what the tests say about a set of metrics (docs/methods.md sec. 3) ----------------------------------
def family_size(n_metrics: int, family: str, alternative: str = "greater") -> int:
    """How many tests one correction family holds: ``n - 1`` per row metric, every ordered pair (each unordered
    pair once when two-sided) for the whole table, 1 with no family.

    Examples
    --------
    >>> family_size(21, "row"), family_size(4, "table"), family_size(4, "table", "two-sided"), family_size(4, "none")
    (20, 12, 6, 1)
    """
    n = int(n_metrics)
    if family == "row":
        return max(n - 1, 1)
    if family == "table":
        return max(n * (n - 1) // (2 if alternative == "two-sided" else 1), 1)
    return 1


def separation_sentence(table, *, subject: str = "metrics") -> str:
    """What a pairwise table says when its corrected tests separate no pair: not separated, which is not a tie;
    with the smallest uncorrected p-value when it is below alpha ('' when some pair is separated or there is
    no pair).

    ``table`` is a :class:`~metaeval_core.stats.significance.PairwiseTable` (its ``pvalue``,
    ``pvalue_corrected``, ``delta``, ``alpha``, ``correction``, ``family`` and ``alternative``).

    Examples
    --------
    >>> import numpy as np
    >>> from types import SimpleNamespace
    >>> t = SimpleNamespace(metrics=("a", "b", "c"), pvalue=np.array([[np.nan, .003, .4], [.9, np.nan, .5],
    ...                     [.6, .7, np.nan]]), pvalue_corrected=np.array([[np.nan, .06, 0.8], [1, np.nan, 1],
    ...                     [1, 1, np.nan]]), delta=np.array([[0, .97, .1], [-.97, 0, -.2], [-.1, .2, 0]]),
    ...                     alpha=0.05, correction="bonferroni", family="row", alternative="greater")
    >>> print(separation_sentence(t))
    No test separates these metrics at α = 0.05 after Bonferroni over 2 tests per metric. That is not a tie: the data do not tell them apart. Before the correction, a over b has p = 0.003 (delta 0.970).
    """
    import numpy as np  # here, not at the top: the CLI's --help imports this module and must stay light

    metrics = list(table.metrics)
    n = len(metrics)
    if n < 2:
        return ""
    corrected = np.asarray(table.pvalue_corrected, dtype=float)
    alpha = float(table.alpha)
    off = ~np.eye(n, dtype=bool)
    if np.any(np.nan_to_num(corrected[off], nan=1.0) < alpha):
        return ""
    corrects = str(table.correction).lower() != "none" and str(table.family).lower() != "none"
    size = family_size(n, table.family, table.alternative)
    per = {"row": " per metric", "table": " in all"}.get(str(table.family), "")
    level = (f"at α = {alpha:g} after {correction_label(table.correction)} over {count(size, 'test')}{per}"
             if corrects else f"at α = {alpha:g}")
    text = (f"No test separates these {subject} {level}. That is not a tie: the data do not tell them apart.")
    raw = np.where(off, np.asarray(table.pvalue, dtype=float), np.nan)
    if corrects and np.isfinite(raw).any():
        i, j = np.unravel_index(np.nanargmin(raw), raw.shape)
        p = float(raw[i, j])
        if p < alpha:
            verb = "vs" if table.alternative == "two-sided" else "over"
            text += (f" Before the correction, {metrics[i]} {verb} {metrics[j]} has p = {format_pvalue(p, alpha)} "
                     f"(delta {number(float(np.asarray(table.delta)[i, j]))}).")
    return text


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
        return sentence(f"No chance baseline: {clause(note)}")
    if groups is None or len(groups) == 0:
        return ""

    def part(row) -> str:
        return (f"{symbol} = {number(row['estimate'])}, {100 * confidence_level:g}% range "
                f"{bounds(row['low'], row['high'])}")

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
    def has_zero(pair: tuple[float, float]) -> bool | None:
        low, high = (finite(v) for v in pair)
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


# -- the system pairs behind a judge's ranking agreement (docs/methods.md sec. 19.5) -------------------------------
def ranking_pairs_sentence(summary: Mapping, kendall: float, *, coefficient: str = "kendall") -> str:
    """What the system pairs behind a judge's ranking agreement say (``RankingPairs.summary()`` and ``.kendall``).

    Examples
    --------
    >>> ranking_pairs_sentence({"judge": "J", "reference": "people", "n_pairs": 10, "n_discordant": 1,
    ...                         "n_concordant": 9}, 0.8)
    'J: 1 of 10 system pairs ordered unlike people, 9 alike, 0 tied (Kendall tau-b 0.800 from these pairs).'
    >>> ranking_pairs_sentence({"judge": "J", "reference": "people", "n_pairs": 3, "n_discordant": 0,
    ...                         "n_concordant": 2}, 0.5, coefficient="pearson")[-62:]
    'tied (the Pearson correlation is of the system scores listed).'
    """
    n, discordant, concordant = (int(summary[k]) for k in ("n_pairs", "n_discordant", "n_concordant"))
    made = (f"Kendall tau-b {number(kendall)} from these pairs" if coefficient == "kendall" else
            "the Pearson correlation is of the system scores listed")
    return (f"{summary['judge']}: {discordant:,} of {count(n, 'system pair')} ordered unlike {summary['reference']}, "
            f"{concordant:,} alike, {n - discordant - concordant:,} tied ({made}).")


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
    return (f"System set: {count(n_systems, 'system')}. Metrics evaluated on fewer systems: " + "; ".join(parts)
            + ". Each correlation uses the systems its metric scored (a reference-based metric cannot score its "
              "own reference), so these values are over fewer points; the Significance page compares metrics on "
              "the systems all of them scored.")


def duration(seconds: float) -> str:
    """"under 1 s", "12 s", "3 min", "2.5 h": a time estimate as a reader takes it in.

    Examples
    --------
    >>> duration(0.2), duration(12.4), duration(95), duration(3 * 3600)
    ('under 1 s', '12 s', '2 min', '3 h')
    """
    seconds = float(seconds)
    if seconds < 1:
        return "under 1 s"
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.2g} h"


def _about(seconds: float) -> str:
    text = duration(seconds)
    return text if text.startswith("under") else f"about {text}"


_RULE_NAMES = {"besag-clifford": "Besag-Clifford", "blocks": "blocks"}


def _lighter_clause(decision) -> str:
    options = []
    for option in decision.lighter:
        if option.setting == "n_resamples":
            name = f"n_resamples={option.value:,}"
        elif option.setting == "n_metrics":
            name = count(option.value, "metric")
        else:
            name = f"{option.setting}={option.value}"
        rule = "" if option.stopping == "none" else f"{_RULE_NAMES.get(option.stopping, option.stopping)}, "
        options.append(f"{name} ({rule}{_about(option.estimated_seconds)})")
    parts = []
    if options:
        parts.append(("use " if decision.unreachable else "lighter: ")
                     + names(options, shown=len(options), conjunction="or"))
    if decision.advice and not decision.unreachable:
        parts.append(("or " if options else "use ") + decision.advice)
    return "; ".join(parts)


def _expected_clause(decision, skip: str = "") -> str:
    """Each stopping rule's expected cost and why, but ``skip``'s: 'Besag-Clifford about 6 min (it stops only ...)'."""
    parts = []
    for rule, seconds in decision.expected.items():
        if rule == "besag-clifford" and rule != skip:
            parts.append(f"Besag-Clifford {_about(seconds)} (it stops only pairs that cannot be significant; "
                         "a significant pair runs to the end)")
        elif rule != skip:
            parts.append(f"mt-metrics-eval's blocks {_about(seconds)} at best ("
                         + decision.rules.get(rule, "blocks of 100 draws") + ")")
    return ", ".join(parts)


def cost_sentence(decision) -> str:
    """The sentence of a :class:`~metaeval_core.stats.budget.CostDecision`: the analysis, its estimated cost
    against the budget, the stopping rule it runs with and why, and the lighter settings that fit.

    References
    ----------
    docs/methods.md sec. 16.5.
    """
    where = decision.where or f"the budget is {duration(decision.budget_seconds)}"
    if decision.unreachable:
        return f"{decision.what}: {decision.unreachable}; {_lighter_clause(decision)}"
    if math.isnan(decision.estimated_seconds):
        return sentence(f"{decision.what}: not estimated ({where})")
    if decision.action == "run":
        cheaper = {rule: s for rule, s in decision.expected.items() if s < 0.5 * decision.estimated_seconds}
        hint = ("; early stopping: " + _expected_clause(dataclasses.replace(decision, expected=cheaper))
                if cheaper and decision.estimated_seconds >= 10 else "")
        return sentence(f"{decision.what}: {_about(decision.estimated_seconds)} ({where}){hint}")
    full = f"{decision.what} would take up to {_about(decision.estimated_seconds)} at full length ({where})"
    expected = _about(decision.expected.get(decision.stopping, decision.estimated_seconds))
    if decision.action == "early-stop" and decision.stopping == "blocks":
        why = _expected_clause(decision, skip="blocks")
        return sentence(
            f"{full}, so it runs with mt-metrics-eval's early stopping (blocks of 100 draws, docs/methods.md sec. "
            f"16.2), expected {expected} at best: " + decision.rules.get("blocks", "a pair stops once its p-value is "
                                                                         "clearly below or above alpha")
            + "; a stopped p-value is an estimate from fewer draws, whose decision can differ from the full run's "
            "near the thresholds" + (f"; not {why}" if why else ""))
    if decision.action == "early-stop":
        return sentence(
            f"{full}, so it runs with sequential stopping (Besag-Clifford, docs/methods.md sec. 16.2), expected "
            f"{expected}: a pair stops as soon as it cannot be significant at alpha, with the same decisions as the "
            "full run")
    expected = _expected_clause(decision)
    return (f"{decision.what} would take {_about(decision.estimated_seconds)} here ({where})"
            + (f", and early stopping does not fit: {expected}; " if expected else ": ") + _lighter_clause(decision))


def stopped_sentence(decision, *, elapsed: float, fraction: float) -> str:
    """Why a run was stopped at its budget (:func:`metaeval_core.stats.budget.deadline`), with what fits."""
    lighter = _lighter_clause(decision)
    estimate = ("" if math.isnan(decision.estimated_seconds)
                else f"; the estimate was {duration(decision.estimated_seconds)}")
    return (f"stopped after {duration(elapsed)} at {fraction:.0%} of {decision.what} "
            f"({decision.where or 'the budget is ' + duration(decision.budget_seconds)}{estimate})"
            + (f": {lighter}" if lighter else ""))


def system_level_measure(coefficient: str) -> str:
    """What a system-level value is made of, as the words before "the N systems' mean scores": a correlation for
    Pearson, Spearman and Kendall; agreement over system pairs for the accuracies; p-value gaps for soft pairwise
    accuracy (docs/methods.md sec. 11)."""
    return {
        "pairwise-accuracy": "agreement with the humans over the pairs of",
        "tie-calibrated-accuracy": "agreement with the humans (ties included) over the pairs of",
        "soft-pairwise-accuracy": "1 - the average distance of the metric's permutation p-values from the humans' over "
                                  "the pairs of",
        "pdp": "correlation of the pairwise differences of",
    }.get(coefficient, "correlation across")
