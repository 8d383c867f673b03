"""Sentences of the LLM-judges pages, written from the result objects (dataset-neutral: items, judges, people)."""

from __future__ import annotations

import pandas as pd

from metaeval_ui.errors import escape_markdown as md
from metaeval_ui.figures import correction_label, fmt, fmt_p

from metaeval_core.judges import wording  # noqa: F401 - the leaderboard's sentences (core: the CLI prints them too)
from metaeval_core.judges.wording import INVALID, ORDERS, TIES  # noqa: F401

LENGTH_ORDERS = {"original": "the original order (A shown first)", "swapped": "the swapped order (B shown first)",
                 "average": "both orders pooled"}
STATISTICS = {k: v[0].upper() + v[1:] for k, v in wording.STATISTICS.items()}


def bootstrap(result, *, seed: int, detail: str = "") -> str:
    """The interval's description: level, method, resamples and seed (from the result)."""
    return (f"{result.confidence_level:.0%} percentile bootstrap over items{detail}, {result.n_resamples:,} "
            f"resamples, seed {seed}.")


def interval(estimate: float, low: float, high: float) -> str:
    return f"{fmt(estimate)} [{fmt(low)}, {fmt(high)}]"


def comparison_caption(comparison) -> str:
    table = comparison.table
    fam = {"row": "each row judge's tests", "table": "the whole table", "none": "no family"}.get(table.family,
                                                                                                 table.family)
    test = ("two-sided: do the two judges' agreements differ?" if table.alternative == "two-sided"
            else "one-sided: does the row judge agree better than the column judge?")
    return (f"Paired permutation test ({test}), each item's two verdicts swapped at random, "
            f"{table.n_resamples:,} permutations. A cell is filled when p < {table.alpha:g} and outlined when "
            f"still significant after {correction_label(table.correction)} over {fam}. Clusters: a judge opens a "
            "new cluster when a judge of the cluster above is significantly better after the correction.")


# -- biases -------------------------------------------------------------------------------------------------


def _excludes(frame: pd.DataFrame, prefix: str, value: float) -> pd.DataFrame:
    return frame[(frame[f"{prefix}_low"] > value) | (frame[f"{prefix}_high"] < value)]


def position_sentence(frame: pd.DataFrame) -> str:
    """The most consistent judge and the first-position preferences whose interval excludes 0.5."""
    defined = frame[frame["consistency"].notna()]
    if defined.empty:
        return "No judge has a defined positional consistency here."
    best = defined.loc[defined["consistency"].idxmax()]
    head = (f"Most consistent across the two orders: **{md(best['judge'])}**, the same winner in "
            f"{interval(best['consistency'], best['consistency_low'], best['consistency_high'])} of the items.")
    biased = _excludes(frame[frame["first_position"].notna()], "first_position", 0.5)
    if biased.empty:
        return head + f" No judge's first-position share differs from 0.5 (interval excludes it) among {len(frame)}."
    worst = biased.loc[(biased["first_position"] - 0.5).abs().idxmax()]
    side = "first" if worst["first_position"] > 0.5 else "second"
    return (head + f" {len(biased)} of {len(frame)} judge(s) prefer a position (interval excludes 0.5); the "
            f"strongest: **{md(worst['judge'])}** picks the {side}-shown output in "
            f"{interval(worst['first_position'], worst['first_position_low'], worst['first_position_high'])} of "
            "its A/B verdicts.")


def position_caption(result, *, seed: int) -> str:
    return (f"Consistency: share of items with the same winner (or tie) in both orders; "
            f"{INVALID.get(result.invalid, result.invalid)}. First position: share of A-or-B verdicts naming the "
            f"output shown first (ties and invalid verdicts not counted). " + bootstrap(result, seed=seed))


def order_sentence(frame: pd.DataFrame) -> str:
    """The judge whose accuracy moves most between the two presentation orders."""
    wide = frame.pivot_table(index="judge", columns="order", values="estimate", sort=False)
    if not {"original", "swapped"} <= set(wide.columns) or wide[["original", "swapped"]].isna().all().all():
        return "Accuracy per order is undefined here."
    gap = (wide["original"] - wide["swapped"]).abs()
    judge = gap.idxmax()
    both = f"; right in both orders {fmt(wide.loc[judge, 'both'])}" if "both" in wide else ""
    return (f"Largest change between orders: **{md(judge)}**, {fmt(wide.loc[judge, 'original'])} with A shown first "
            f"vs {fmt(wide.loc[judge, 'swapped'])} with B shown first{both}.")


def length_sentence(frame: pd.DataFrame) -> str:
    """How many judges choose the longer output more (or less) often than the reference does."""
    defined = frame[frame["difference"].notna()]
    if defined.empty:
        return ("No judge has a verdict naming a winner on these items in the order chosen: the length preference "
                "is undefined here (every row is empty), not zero.")
    more = defined[defined["difference_low"] > 0]
    less = defined[defined["difference_high"] < 0]
    reference = frame["reference"].iloc[0]
    of = f"{len(defined)} judges" if len(defined) > 1 else "the one judge"
    parts = [f"Of {of} with a value, {len(more)} choose the longer output more often than the reference "
             f"({md(reference)}) and {len(less)} less often (interval of the difference excludes 0)."]
    if not frame["difference"].isna().all():
        top = frame.loc[frame["difference"].abs().idxmax()]
        parts.append(f"Largest gap: **{md(top['judge'])}**, {fmt(top['judge_longer'])} vs the reference's "
                     f"{fmt(top['reference_longer'])} (difference "
                     f"{interval(top['difference'], top['difference_low'], top['difference_high'])}).")
    return " ".join(parts)


def length_caption(result, *, seed: int) -> str:
    return (f"Share of A-or-B verdicts choosing the longer output (in {result.unit}), judge vs reference on the same "
            f"items; items whose outputs have equal length are left out; the judge's verdicts: "
            f"{LENGTH_ORDERS.get(result.order, result.order)}. "
            + bootstrap(result, seed=seed, detail=" (both shares from the same resamples)"))


# -- systems ------------------------------------------------------------------------------------------------

COEFFICIENTS = {"kendall": "Kendall tau-b", "pearson": "Pearson r"}
METHODS = {"win-rate": "win rate (ties count half)", "davidson": "Bradley-Terry log-strength (Davidson's ties)"}


def ranking_sentence(own, ref) -> str:
    """Who ranks first for the judge and for the reference (from the two rankings)."""
    same = own.systems[0] == ref.systems[0]
    return (f"The reference ({md(ref.rater)}) ranks **{md(ref.systems[0])}** first; **{md(own.rater)}** ranks "
            f"**{md(own.systems[0])}** first" + (" too." if same else ".")
            + f" {len(ref.systems)} systems, scored by {METHODS.get(own.method, own.method)}.")


def leaders(frame: pd.DataFrame, column: str = "estimate") -> str:
    """The top row's judge in bold, with every judge tied with it ("**A** and **B** (tied)")."""
    top = frame[column].iloc[0]
    tied = [str(j) for j, v in zip(frame["judge"], frame[column]) if v == top]
    names = [f"**{md(j)}**" for j in tied]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + f" and {names[-1]} (tied)"


def rank_agreement_sentence(frame: pd.DataFrame) -> str:
    """The table's top judge (closest to the reference's ranking, with those tied) and its interval."""
    if frame.empty or not frame["estimate"].notna().any():
        return "No judge's ranking agreement is defined here."
    top = frame.iloc[0]
    return (f"Closest to the reference's system ranking: {leaders(frame)}, "
            f"{COEFFICIENTS.get(top['coefficient'], top['coefficient'])} "
            f"{interval(top['estimate'], top['low'], top['high'])} over {int(top['n_systems'])} systems.")


def rank_caption(result, *, seed: int) -> str:
    return (f"Each judge's system scores ({METHODS.get(result.method, result.method)}) correlated with the "
            f"reference's ({md(result.reference)}); the judge's verdicts: {ORDERS.get(result.order, result.order)}. "
            + bootstrap(result, seed=seed, detail=" (both rankings recomputed in each resample)")
            + " With few systems the interval is coarse.")


def close_sentence(frame: pd.DataFrame) -> str:
    if frame.empty:
        return "No close pairs."
    top = frame.iloc[0]
    n_close = int(top["n_close"])
    if n_close == 0:
        return (f"No system pair is close for the reference (its win rate within {fmt(top['delta'])} of 50%): widen "
                "the band to compare judges on close pairs.")
    return (f"On the {n_close} of {int(top['n_pairs'])} system pairs the reference finds close (win rate within "
            f"{fmt(top['delta'])} of 50%), {leaders(frame)} name(s) the reference's winner most often: "
            f"{interval(top['estimate'], top['low'], top['high'])} (on all pairs {fmt(top['all_pairs'])}).")


def score_sentence(frame: pd.DataFrame) -> str:
    top = frame.iloc[0]
    return (f"Highest tie-calibrated accuracy: {leaders(frame)}, "
            f"{interval(top['estimate'], top['low'], top['high'])} with ties declared when the two scores differ by "
            f"at most epsilon = {fmt(top['epsilon'])} (resamples' range {fmt(top['epsilon_low'])}–"
            f"{fmt(top['epsilon_high'])}); {fmt(top['accuracy_at_zero'])} when only equal scores tie.")


def score_caption(result, *, seed: int) -> str:
    return (f"Scores as verdicts: A wins when its score exceeds B's by more than epsilon, a tie otherwise; epsilon "
            f"is chosen to maximise accuracy against the reference ({md(result.reference)}) and re-chosen in every "
            f"resample. Items without both scores: {'counted wrong' if result.invalid == 'wrong' else 'left out'}. "
            + bootstrap(result, seed=seed))


def resolution_warning(comparison) -> str | None:
    """When too few permutations leave nothing able to pass the correction (the smallest p is 1 / (k + 1))."""
    table = comparison.table
    n = len(table.metrics)
    if table.correction == "none" or table.family == "none" or n < 2:
        return None
    family = n - 1 if table.family == "row" else n * (n - 1) // (2 if table.alternative == "two-sided" else 1)
    smallest = family / (table.n_resamples + 1)
    if table.correction == "bh" or smallest < table.alpha:
        return None
    return (f"With {table.n_resamples:,} permutations the smallest p-value is 1/{table.n_resamples + 1:,}, so after "
            f"{correction_label(table.correction)} over {family} tests no difference can reach alpha = "
            f"{table.alpha:g}: every judge lands in one cluster. Raise the resamples to at least "
            f"{int(family / table.alpha):,} (sidebar: Bootstrap).")


def subset_resolution(n_tests: int, n_resamples: int, correction: str) -> str:
    """A clause for the per-subset table when its permutations cannot show significance after the correction."""
    smallest = n_tests / (n_resamples + 1)
    if correction in ("none", "bh") or smallest < 0.05:
        return ""
    return (f"; with {n_resamples:,} permutations the smallest corrected p-value is {n_tests}/{n_resamples + 1:,} = "
            f"{fmt(smallest)}, so none can fall below 0.05 (more resamples in the sidebar's Bootstrap)")


# -- raters -------------------------------------------------------------------------------------------------


def raters_caption(matrix, statistic: str) -> str:
    shown = STATISTICS.get(statistic, statistic)
    return (f"{shown} between every two raters (people, gold labels, judges) on the items both rated, in "
            f"{ORDERS.get(matrix.order, matrix.order)}; {INVALID.get(matrix.invalid, matrix.invalid)}"
            ". A judge that agrees with each annotator as well as the annotators agree with each other is at the "
            "people's level; the download holds kappa, raw agreement and alpha with the common items of every pair.")


def classification_caption(frame: pd.DataFrame) -> str:
    return (f"Each judge's verdicts as a classifier of the reference ({frame['reference'].iloc[0]}): precision, "
            "recall and F1 per class (A, B, tie, and invalid when the judge gave invalid verdicts and they count as "
            "wrong), averaged over the classes with equal weight (macro, as PandaLM reports them; sklearn's "
            "average='macro', zero_division=0).")


# -- alt-test -----------------------------------------------------------------------------------------------

from metaeval_core.judges.alt_test import EPSILONS  # noqa: E402,F401

EPSILON_CHOICES = {"experts": "experts (epsilon 0.2)", "skilled": "skilled annotators (0.15)",
                   "crowd": "crowd workers (0.1)"}


def alt_test_sentence(summary: pd.DataFrame) -> str:
    passing = summary[summary["passes"]]
    best = summary.loc[summary["advantage_probability"].idxmax()]
    head = (f"{len(passing)} of {len(summary)} judges pass (winning rate at least 0.5)"
            if len(summary) > 1 else f"The judge {'passes' if len(passing) else 'does not pass'}")
    return (f"{head} at epsilon = {fmt(summary['epsilon'].iloc[0], 2)}; highest advantage probability: "
            f"**{md(best['judge'])}**, {fmt(best['advantage_probability'])}.")


ALIGNMENT_WORDS = {"accuracy": "share of the other annotators giving the same verdict",
                   "neg-rmse": "minus the root mean squared difference from the other annotators' scores",
                   "neg-abs": "minus the mean absolute difference from the other annotators' scores"}


def alt_test_caption(summary: pd.DataFrame) -> str:
    alignment = ALIGNMENT_WORDS[summary["alignment"].iloc[0]]
    scale = ("" if summary["alignment"].iloc[0] == "accuracy" else
             " Scores are compared as numbers: a judge on another scale than the annotators' always loses.")
    return ("Alternative annotator test (Calderon, Reichart & Dror, ACL 2025): each annotator left out in turn; on "
            f"its items, alignment = {alignment}, for the judge and for the left-out annotator.{scale} "
            "A judge wins an item when it aligns at least as well (a tie counts for both). "
            "One-sided t-test that the annotator's advantage (its wins minus the judge's) is below epsilon, "
            "Benjamini-Yekutieli over the annotators at q = 0.05; winning rate: share of annotators beaten; the "
            "judge passes at 0.5; advantage probability: the judge's mean share of wins. Epsilon is the judge's "
            "allowance for being cheaper: the paper's 0.2 for experts, 0.15 skilled annotators, 0.1 crowd workers."
            + "".join(f" {n}" for n in dict.fromkeys(summary["notes"]) if n))
