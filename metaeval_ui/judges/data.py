"""Cached access to pairwise-verdict datasets and the judges statistics (docs/methods.md sec. 18).

Built-in datasets are ``st.cache_resource`` objects keyed on (dataset id, data directory); uploaded verdict files
live in the session's own state, keyed by the sha256 of their bytes. Every computation is ``st.cache_data`` on the
small key ``(id, version)``, the pair set and frozen options (:class:`VerdictScoring`, :class:`ResamplingOptions`); the
dataset itself is passed as ``_data`` and never hashed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import streamlit as st

from metaeval_core import judges as core
from metaeval_core.judges import PairwiseData

from metaeval_ui.data.datasets import (  # noqa: F401 - re-used by the widgets
    VERDICTS_PREFIX as UPLOAD_PREFIX, DatasetChoice, content_sha256, data_dir_key, is_pairwise,
    pairwise_choices as choices,
)
from metaeval_ui.judges import tables

DataKey = tuple[str, str]  # (dataset id, version)
MAX_UPLOADS = 3
ALL_SETS = ""  # the pair-set choice meaning every item


@dataclass(frozen=True)
class VerdictScoring:
    """How verdicts are scored against the reference: the judges pages' choice, a frozen, hashable cache key whose
    fields the calls below pass to the core by name."""

    statistic: str = "accuracy"
    reference: str = "auto"
    order: str = "original"
    ties: str = "three-class"
    invalid: str = "wrong"


@dataclass(frozen=True)
class ResamplingOptions:
    """The judges pages' resampling choice (a frozen, hashable cache key); the core receives ``n_resamples``,
    ``rng=seed`` and ``confidence_level`` by name."""

    n_resamples: int = 1000
    seed: int = 0
    confidence_level: float = 0.95


# -- datasets -------------------------------------------------------------------------------------------------


@st.cache_resource(max_entries=4, show_spinner=False)
def load_registered(dataset_id: str, data_dir: str) -> PairwiseData:
    return core.load_pairwise(dataset_id, data_dir=Path(data_dir) if data_dir else None)


def parse_upload(raw: bytes, name: str) -> PairwiseData:
    """A verdict file read by the core (raises on a bad file); its id is ``verdicts:<sha256[:12]>``."""
    return core.read_verdict_file(raw, name=name, dataset_id=UPLOAD_PREFIX + content_sha256(raw)[:12])


def attach(data: PairwiseData, raw: bytes, name: str) -> PairwiseData:
    """``data`` with the judges of an uploaded verdicts file attached by item id (the core's
    :func:`~metaeval_core.judges.loaders.attach_verdicts`; raises on a bad file)."""
    import io

    from metaeval_core.judges.loaders import attach_verdicts

    lowered = name.lower()
    if lowered.endswith((".jsonl", ".json")):
        frame = pd.read_json(io.BytesIO(raw), lines=True, dtype=False)
    else:
        frame = pd.read_csv(io.BytesIO(raw), sep="\t" if lowered.endswith(".tsv") else ",", dtype=str,
                            keep_default_na=False)
    return attach_verdicts(data, frame)


def key_of(data: PairwiseData) -> DataKey:
    return (data.id, data.version)


@st.cache_resource(max_entries=16, show_spinner=False)
def _part(_data: PairwiseData, key: DataKey, pair_set: str) -> PairwiseData:
    return _data.select_pair_set(pair_set) if pair_set else _data


def part(data: PairwiseData, pair_set: str) -> PairwiseData:
    """The items of one pair set (``''``: every item)."""
    return _part(data, key_of(data), pair_set)


@st.cache_data(max_entries=16, show_spinner=False)
def report(_data: PairwiseData, key: DataKey) -> core.VerdictReport:
    return core.verdict_report(_data)


# -- agreement ------------------------------------------------------------------------------------------------


@st.cache_data(max_entries=32, show_spinner=False)
def agreement(_data: PairwiseData, key: DataKey, pair_set: str, conv: VerdictScoring,
              res: ResamplingOptions) -> core.AgreementTable:
    return core.judge_agreement(part(_data, pair_set), statistic=conv.statistic, reference=conv.reference,
                                order=conv.order, ties=conv.ties, invalid=conv.invalid, n_resamples=res.n_resamples,
                                rng=res.seed, confidence_level=res.confidence_level)


@st.cache_data(max_entries=32, show_spinner=False)
def chance(_data: PairwiseData, key: DataKey, pair_set: str, conv: VerdictScoring,
           res: ResamplingOptions) -> tuple[core.JudgeChanceBaseline, ...]:
    return tuple(core.chance_baseline(part(_data, pair_set), statistic=conv.statistic, reference=conv.reference,
                                      order=conv.order, ties=conv.ties, invalid=conv.invalid,
                                      n_resamples=res.n_resamples, rng=res.seed, confidence_level=res.confidence_level))


@st.cache_data(max_entries=32, show_spinner=False)
def leaderboard(_data: PairwiseData, key: DataKey, pair_set: str, conv: VerdictScoring, alternative: str,
                correction: str, alpha: float, res: ResamplingOptions) -> core.JudgeLeaderboard:
    """The core's leaderboard (the same object ``metaeval judges --view leaderboard`` prints)."""
    return core.judge_leaderboard(part(_data, pair_set), statistic=conv.statistic, reference=conv.reference,
                                  order=conv.order, ties=conv.ties, invalid=conv.invalid, alternative=alternative,
                                  correction=correction, alpha=alpha, n_resamples=res.n_resamples, rng=res.seed,
                                  confidence_level=res.confidence_level)


@st.cache_data(max_entries=32, show_spinner=False)
def comparison(_data: PairwiseData, key: DataKey, pair_set: str, conv: VerdictScoring, alternative: str,
               correction: str, alpha: float, res: ResamplingOptions) -> core.JudgeComparison | None:
    """Paired permutation tests between the judges (None with fewer than two judges)."""
    data = part(_data, pair_set)
    if len(data.judges_of()) < 2:
        return None
    return core.compare_judges(data, statistic=conv.statistic, reference=conv.reference, order=conv.order,
                               ties=conv.ties, invalid=conv.invalid, alternative=alternative, correction=correction,
                               alpha=alpha, n_resamples=res.n_resamples, rng=res.seed)


@st.cache_data(max_entries=16, show_spinner=False)
def raters(_data: PairwiseData, key: DataKey, pair_set: str, conv: VerdictScoring) -> tuple:
    """(rater x rater agreement, the judges' macro precision/recall/F1 against the reference) on these items."""
    from metaeval_core.judges.raters import classification_scores, rater_agreement

    data = part(_data, pair_set)
    order = conv.order if conv.order in ("original", "swapped") else "original"
    matrix = rater_agreement(data, order=order, invalid=conv.invalid)
    scores = classification_scores(data, reference=conv.reference, order=order,
                                   invalid="wrong" if conv.invalid == "as-verdict" else conv.invalid)
    return matrix, pd.DataFrame([{**c.to_dict(), "labels": "/".join(c.labels)} for c in scores])


@st.cache_data(max_entries=16, show_spinner=False)
def alt_test(_data: PairwiseData, key: DataKey, pair_set: str, epsilon: float, order: str) -> tuple:
    """The alt-test of every judge: (one row per judge, one row per judge and annotator, ''), or (None, None, why)
    when the data cannot take it (too few items per annotator: the core's message carries the paper's advice)."""
    from metaeval_core.judges.alt_test import alt_test as run

    try:
        results = run(part(_data, pair_set), epsilon=epsilon, order=order if order in ("original", "swapped")
                      else "original")
    except ValueError as error:
        return None, None, str(error)
    return (*tables.alt_test_frames(results), "")


@st.cache_data(max_entries=16, show_spinner=False)
def alt_test_scores(_dataset, key, human: str, judges: tuple[str, ...], alignment: str, epsilon: float,
                    annotators: str) -> tuple:
    """The alt-test of metrics against the annotators of the score measure ``human`` (docs/methods.md sec. 18.13),
    as :func:`alt_test`: (summary, per annotator, '') or (None, None, why) when the data cannot take it (no
    per-annotator scores, annotators that are slots filled by different people, too few items)."""
    from metaeval_core.data.errors import DatasetError
    from metaeval_core.judges.alt_test import alt_test_scores as run

    try:
        results = run(_dataset, human=human, judges=list(judges), alignment=alignment, epsilon=epsilon,
                      annotators=annotators)
    except (DatasetError, ValueError) as error:
        return None, None, str(error)
    return (*tables.alt_test_frames(results), "")


@st.cache_data(max_entries=16, show_spinner=False)
def by_subset(_data: PairwiseData, key: DataKey, pair_set: str, by: str, conv: VerdictScoring,
              res: ResamplingOptions) -> pd.DataFrame:
    """Agreement per pair set or item attribute, with the chance p-value corrected over subsets and judges."""
    result = core.agreement_by_subset(part(_data, pair_set), by=by, statistic=conv.statistic, reference=conv.reference,
                                      order=conv.order, ties=conv.ties, invalid=conv.invalid,
                                      n_resamples=res.n_resamples, rng=res.seed, confidence_level=res.confidence_level)
    return pd.DataFrame(result.to_records())


def breakdowns(data: PairwiseData) -> list[str]:
    """What agreement can be broken down by: the pair sets (when several) and the item attributes."""
    from metaeval_core.judges.agreement import MAX_SUBSETS

    return (["pair_set"] if 1 < len(data.pair_sets) <= MAX_SUBSETS else []) + [
        a for a in data.attributes if 1 < len(data.subsets(a)) <= MAX_SUBSETS]


def references(data: PairwiseData) -> list[str]:
    """The references a judge can be scored against here: 'auto' first, then the majority, gold and each person."""
    return ["auto", *(["majority"] if data.humans else []), *(["gold"] if data.golds else []),
            *(data.humans if len(data.humans) > 1 else [])]


# -- biases ---------------------------------------------------------------------------------------------------


@st.cache_data(max_entries=16, show_spinner=False)
def positional(_data: PairwiseData, key: DataKey, pair_set: str, invalid: str,
               res: ResamplingOptions) -> tuple[core.PositionalBias, ...]:
    data = part(_data, pair_set)
    both = tuple(j for j in data.judges_of() if len(data.orders_of(j)) == 2)
    if not both:
        return ()
    return tuple(core.positional_bias(data, judges=both, invalid=invalid, n_resamples=res.n_resamples, rng=res.seed,
                                      confidence_level=res.confidence_level))


@st.cache_data(max_entries=16, show_spinner=False)
def per_order(_data: PairwiseData, key: DataKey, pair_set: str, conv: VerdictScoring,
              res: ResamplingOptions) -> pd.DataFrame:
    """Agreement in each presentation order and in both (one row per judge and order mode)."""
    data = part(_data, pair_set)
    judges = tuple(j for j in data.judges_of() if len(data.orders_of(j)) == 2)
    rows = []
    for order in ("original", "swapped", "both"):
        if judges:
            table = core.judge_agreement(data, judges=judges, statistic=conv.statistic, reference=conv.reference,
                                         order=order, ties=conv.ties, invalid=conv.invalid, n_resamples=res.n_resamples,
                                         rng=res.seed, confidence_level=res.confidence_level)
            rows += table.to_records()
    return pd.DataFrame(rows)


@st.cache_data(max_entries=16, show_spinner=False)
def length(_data: PairwiseData, key: DataKey, pair_set: str, reference: str, order: str, unit: str,
           res: ResamplingOptions) -> tuple[core.LengthPreference, ...]:
    return core.length_preference(part(_data, pair_set), reference=reference, order=order, unit=unit,
                                  n_resamples=res.n_resamples, rng=res.seed, confidence_level=res.confidence_level)


# -- systems --------------------------------------------------------------------------------------------------


@st.cache_data(max_entries=16, show_spinner=False)
def ranking(_data: PairwiseData, key: DataKey, pair_set: str, rater: str, method: str, order: str,
            res: ResamplingOptions) -> core.SystemRanking:
    return core.system_ranking(part(_data, pair_set), rater=rater, method=method, order=order,
                               n_resamples=res.n_resamples, rng=res.seed, confidence_level=res.confidence_level)


@st.cache_data(max_entries=16, show_spinner=False)
def rank_agreement(_data: PairwiseData, key: DataKey, pair_set: str, reference: str, method: str, coefficient: str,
                   order: str, res: ResamplingOptions) -> tuple[core.RankingAgreement, ...]:
    return tuple(core.ranking_agreement(part(_data, pair_set), reference=reference, method=method,
                                        coefficient=coefficient, order=order, n_resamples=res.n_resamples, rng=res.seed,
                                        confidence_level=res.confidence_level))


@st.cache_data(max_entries=16, show_spinner=False)
def close_pairs(_data: PairwiseData, key: DataKey, pair_set: str, reference: str, delta: float, order: str,
                res: ResamplingOptions) -> tuple[core.ClosePairs, ...]:
    return tuple(core.close_pair_agreement(part(_data, pair_set), reference=reference, delta=delta, order=order,
                                           n_resamples=res.n_resamples, rng=res.seed,
                                           confidence_level=res.confidence_level))


@st.cache_data(max_entries=16, show_spinner=False)
def scores(_data: PairwiseData, key: DataKey, pair_set: str, reference: str, invalid: str,
           res: ResamplingOptions) -> tuple[core.ScoreAccuracy, ...]:
    data = part(_data, pair_set)
    judges = tuple(j for j in core.scoring_judges(data) if j in data.judges_of())
    if not judges:
        return ()
    return core.score_accuracy(data, judges=judges, reference=reference, invalid=invalid,
                               n_resamples=res.n_resamples, rng=res.seed, confidence_level=res.confidence_level)


def scoring(data: PairwiseData) -> tuple[str, ...]:
    return core.scoring_judges(data)


def n_systems(data: PairwiseData) -> int:
    return len(data.systems)


def finite(value: object) -> bool:
    try:
        return bool(np.isfinite(float(value)))
    except (TypeError, ValueError):
        return False


# -- figures of the heaviest page, cached like its numbers (pure builders from metaeval_ui.judges.figures) ---------


@st.cache_resource(max_entries=16, show_spinner=False)
def leaderboard_view(_data: PairwiseData, key: DataKey, pair_set: str, conv: VerdictScoring, alternative: str,
                     correction: str, alpha: float, res: ResamplingOptions) -> tuple:
    """(core leaderboard, board frame, chance frame, forest figure, heatmap figure or None) of the Judges
    leaderboard: building the figures of LLMBar's 26 judges took ~1 s per run, now once per view. Shared and
    read-only: callers never mutate them."""
    from metaeval_ui.judges import figures as jf, tables as jt

    result = leaderboard(_data, key, pair_set, conv, alternative, correction, alpha, res)
    board = jt.leaderboard(result)
    chance_frame = jt.chance_frame(result.chance)
    drawn = board[board["kind"] != "chance"].replace({"kind": {jt.KIND_LABELS["annotator"]: "human ceiling"}})
    forest = jf.leaderboard_forest(drawn, statistic=conv.statistic, chance=chance_frame)
    heatmap = None
    compared = result.comparison
    if compared is not None:
        two = compared.table.alternative == "two-sided"
        heatmap = jf.judge_heatmap(compared, title="Do the row and column judges differ?" if two else
                                   "Is the row judge better than the column judge?",
                                   row_axis="row judge (X)" if two else "row judge (X): better than Y?",
                                   hover=jt.comparison_hover(compared))
    return result, board, chance_frame, forest, heatmap


@st.cache_data(max_entries=16, show_spinner=False)
def ranking_pairs(_data: PairwiseData, key: DataKey, pair_set: str, judge: str, reference: str, method: str,
                  order: str) -> tuple[dict, list[dict], float]:
    """(summary, system pairs discordant first, Kendall tau-b from them) behind a judge's ranking agreement."""
    from metaeval_core.judges.examples import ranking_pairs as pairs_of

    found = pairs_of(part(_data, pair_set), judge, reference=reference, method=method, order=order)
    return found.summary(), found.to_records(), found.kendall
