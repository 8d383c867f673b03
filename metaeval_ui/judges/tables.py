"""Frames shown (and downloaded) by the LLM-judges pages, built from the core's result objects."""

from __future__ import annotations

import numpy as np
import pandas as pd

BOARD_COLUMNS = ["kind", "judge", "cluster", "estimate", "low", "high", "n_items", "n_invalid", "n_ties",
                 "chance", "chance_low", "chance_high", "chance_p", "chance_p_holm", "statistic", "reference", "order",
                 "ties_convention", "invalid_convention", "n_resamples", "confidence_level"]
KIND_LABELS = {"judge": "judge", "chance": "chance", "annotator": "annotator vs the others",
               "human-ceiling": "human ceiling"}


def leaderboard(board) -> pd.DataFrame:
    """The core's :class:`~metaeval_core.judges.JudgeLeaderboard` as a frame, its rows in the core's order (the
    same rows ``metaeval judges --view leaderboard`` prints)."""
    rows = pd.DataFrame(board.to_records())
    if rows.empty:
        return pd.DataFrame(columns=BOARD_COLUMNS)
    rows = rows.rename(columns={"name": "judge", "chance_mean": "chance", "chance_pvalue": "chance_p",
                                "chance_pvalue_corrected": "chance_p_holm", "ties": "ties_convention",
                                "invalid": "invalid_convention"})
    people = rows["kind"] == "annotator"
    rows.loc[people, "judge"] = rows.loc[people, "judge"] + " vs the others"
    rows["kind"] = rows["kind"].map(KIND_LABELS)
    return rows.reindex(columns=BOARD_COLUMNS).reset_index(drop=True)


def alt_test_frames(results) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The core's :class:`~metaeval_core.judges.alt_test.AltTest` results as (one row per judge, one row per
    judge and annotator left out), on verdicts and on scores alike."""
    summary = pd.DataFrame([{k: v for k, v in r.to_dict().items() if k != "annotators"} for r in results])
    summary["notes"] = summary["notes"].map(" ".join)
    summary["skipped"] = summary["skipped"].map(lambda s: ", ".join(f"{x['annotator']} ({x['n_items']})" for x in s))
    return summary, pd.DataFrame([row for r in results for row in r.to_records()])


ALT_ANNOTATORS_KEY = ("Per annotator left out: the judge's and the annotator's alignment with the remaining "
                      "annotators on the annotator's items, the share of items the judge wins, the one-sided t-test's "
                      "p-value against epsilon, that p after Benjamini-Yekutieli (BY) over the annotators, and "
                      "whether the judge wins the test.")


def chance_frame(chance) -> pd.DataFrame:
    return pd.DataFrame([{"judge": c.judge, "estimate": c.mean, "low": c.low, "high": c.high, "pvalue": c.pvalue}
                         for c in chance])


def comparison_hover(comparison) -> list[list[str]]:
    table = comparison.table
    names = table.metrics
    return [[f"{names[i]} vs {names[j]}<br>delta = {table.delta[i, j]:.3f}<br>p = {table.pvalue[i, j]:.4f}"
             f"<br>corrected p = {table.pvalue_corrected[i, j]:.4f}<br>common items: {comparison.n_common[i, j]}"
             if i != j else "" for j in range(len(names))] for i in range(len(names))]


# -- biases -------------------------------------------------------------------------------------------------


def positional(results) -> pd.DataFrame:
    return pd.DataFrame([r.to_dict() for r in results])


def dots(frame: pd.DataFrame, prefix: str, series: str) -> pd.DataFrame:
    """``<prefix>``, ``<prefix>_low``, ``<prefix>_high`` of each judge as (label, series, estimate, low, high)."""
    return pd.DataFrame({"label": frame["judge"], "series": series, "estimate": frame[prefix],
                         "low": frame[f"{prefix}_low"], "high": frame[f"{prefix}_high"]})


def per_order_dots(frame: pd.DataFrame) -> pd.DataFrame:
    names = {"original": "original order", "swapped": "swapped order", "both": "right in both orders"}
    return pd.DataFrame({"label": frame["judge"], "series": frame["order"].map(names),
                         "estimate": frame["estimate"], "low": frame["low"], "high": frame["high"]})


def length(results) -> pd.DataFrame:
    return pd.DataFrame([r.to_dict() for r in results])


def length_dots(frame: pd.DataFrame) -> pd.DataFrame:
    people = frame["reference"].iloc[0] if not frame.empty else "reference"
    return pd.concat([dots(frame, "judge_longer", "judge"), dots(frame, "reference_longer", f"reference ({people})")],
                     ignore_index=True)


# -- systems ------------------------------------------------------------------------------------------------


def rankings(judge_ranking, reference_ranking) -> pd.DataFrame:
    """Both rankings of the systems, the reference's order, as (label, series, estimate, low, high, ...)."""
    ref = pd.DataFrame(reference_ranking.to_records()).assign(series=f"reference: {reference_ranking.rater}")
    own = pd.DataFrame(judge_ranking.to_records()).assign(series=f"judge: {judge_ranking.rater}")
    both = pd.concat([ref, own], ignore_index=True).rename(columns={"system": "label", "score": "estimate"})
    order = {s: k for k, s in enumerate(ref["system"])}
    return both.iloc[np.argsort(both["label"].map(order).to_numpy(), kind="stable")].reset_index(drop=True)


def records(results) -> pd.DataFrame:
    return pd.DataFrame([r.to_dict() for r in results])


# -- what the pages show --------------------------------------------------------------------------------------

DASH = "—"  # a cell with nothing to show (never None / nan on screen)


def _cell(value: object, column: str, digits: int) -> object:
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, str):
        return value
    try:
        number = float(value)
    except (TypeError, ValueError):
        return DASH if value is None else str(value)
    if not np.isfinite(number):
        return DASH
    if column.startswith("n_") or column.endswith("_n") or column in ("cluster", "rank", "wins", "losses", "ties"):
        return f"{int(round(number)):,}"
    if column.endswith("pvalue") or column.endswith("_p") or column.startswith("chance_pvalue"):
        from metaeval_ui.figures import fmt_p

        return fmt_p(number)
    return f"{number:.{digits}f}"


def _span(estimate: object, low: object, high: object, *, digits: int = 3) -> str:
    values = [float(v) if v is not None else np.nan for v in (estimate, low, high)]
    if not np.isfinite(values[0]):
        return DASH
    bounds = f" [{values[1]:.{digits}f}, {values[2]:.{digits}f}]" if np.isfinite(values[1:]).all() else ""
    return f"{values[0]:.{digits}f}{bounds}"


def compact(frame: pd.DataFrame, columns: dict) -> pd.DataFrame:
    """A narrow table for the screen: ``columns`` maps each shown title to a column, or to (estimate, low, high)
    shown as "0.698 [0.668, 0.721]". The full frame is the CSV download."""
    out = {}
    for title, source in columns.items():
        if isinstance(source, tuple):
            out[title] = [_span(*values) for values in zip(*(frame[c] for c in source))]
        else:
            out[title] = [_cell(v, source, 3) for v in frame[source]]
    return pd.DataFrame(out, index=frame.index)


def board_view(board: pd.DataFrame, statistic: str) -> pd.DataFrame:
    """The leaderboard as read: judge, cluster, estimate with its interval, counts and the chance comparison."""
    return compact(board, {"judge": "judge", "kind": "kind", "cluster": "cluster",
                           f"{statistic} [interval]": ("estimate", "low", "high"), "items": "n_items",
                           "invalid": "n_invalid", "own ties": "n_ties",
                           "chance [range]": ("chance", "chance_low", "chance_high"),
                           "p, one-sided": "chance_p", "Holm p": "chance_p_holm"})


BOARD_NOTE = ("Columns: items counted (a dash where the row's parts count different items); invalid, own ties: the "
              "rater's own invalid and tie verdicts (not the reference's ties); chance: the judge's verdicts permuted "
              "over the items (mean [central range]); p, one-sided: the permutation p-value that the judge agrees "
              "with the reference more than chance, uncorrected; Holm p: the same, Holm-corrected over the judges of "
              "this table.")


VIEWS = {  # the columns each judges table shows on screen
    "position": {"judge": "judge", "same winner in both orders": ("consistency", "consistency_low",
                                                                  "consistency_high"),
                 "chose the first-shown": ("first_position", "first_position_low", "first_position_high"),
                 "items": "n_items", "invalid": "n_invalid"},
    "length": {"judge": "judge", "judge: longer chosen": ("judge_longer", "judge_longer_low", "judge_longer_high"),
               "reference: longer chosen": ("reference_longer", "reference_longer_low", "reference_longer_high"),
               "difference": ("difference", "difference_low", "difference_high"), "items": "n_items"},
    "ranking": {"judge": "judge", "coefficient": "coefficient", "estimate [interval]": ("estimate", "low", "high"),
                "systems": "n_systems"},
    "close": {"judge": "judge", "close pairs": "n_close", "same winner [interval]": ("estimate", "low", "high"),
              "on all pairs": "all_pairs", "pairs": "n_pairs"},
    "scores": {"judge": "judge", "accuracy [interval]": ("estimate", "low", "high"),
               "epsilon [range]": ("epsilon", "epsilon_low", "epsilon_high"), "at epsilon 0": "accuracy_at_zero",
               "items": "n_items", "unscored": "n_unscored", "equal scores": "n_equal"},
    "classification": {"judge": "judge", "macro precision": "macro_precision", "macro recall": "macro_recall",
                       "macro F1": "macro_f1", "accuracy": "accuracy", "items": "n_items", "classes": "labels"},
    "alt_summary": {"judge": "judge", "passes": "passes", "winning rate": "winning_rate",
                    "advantage probability": "advantage_probability"},
    # Short headers (a slide's 1280 px holds all nine); ALT_ANNOTATORS_KEY under the table spells them out.
    "alt_annotators": {"judge": "judge", "left out": "annotator", "items": "n_items",
                       "judge align.": "judge_alignment", "own align.": "annotator_alignment",
                       "judge wins": "judge_wins", "p": "pvalue", "p (BY)": "pvalue_corrected",
                       "wins test": "rejected"},
    "subsets": {"subset": "subset", "judge": "judge", "estimate [interval]": ("estimate", "low", "high"),
                "items": "n_items", "p vs chance (corrected)": "chance_pvalue_corrected"},
}


def per_order_view(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per judge: agreement with the original order, the swapped order and right in both (with intervals)."""
    names = {"original": "A shown first", "swapped": "B shown first", "both": "right in both orders"}
    rows = {}
    for record in frame.to_dict("records"):
        row = rows.setdefault(record["judge"], {"judge": record["judge"]})
        row[names.get(record["order"], record["order"])] = _span(record["estimate"], record["low"], record["high"])
    return pd.DataFrame(list(rows.values())).fillna(DASH)
