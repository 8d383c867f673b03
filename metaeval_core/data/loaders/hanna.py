"""The HANNA loader (story generation, per-rater human criteria, automatic metrics and LLM judges).

References: docs/methods.md sec. 0; the dataset's ``SOURCE.md`` in the data mirror.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Mapping

import numpy as np
import pandas as pd

from metaeval_core.data.dataset import DatasetError, Measure
from metaeval_core.data.loaders._common import (
    _files_ending, _label, LoadedData, LoaderFiles, _missing_note, _number, _validate_files,
)


# ---------------------------------------------------------------------------
# HANNA (Chhun et al. 2022; LLM ratings: Chhun et al. 2024)
# ---------------------------------------------------------------------------
HANNA_CRITERIA: Mapping[str, str] = {
    "RE": "Relevance", "CH": "Coherence", "EM": "Empathy", "SU": "Surprise", "EG": "Engagement", "CX": "Complexity",
}
HANNA_HUMAN_SYSTEM = "Human"
# The authors' suffix glyphs: the first says whether the metric uses the human story as reference, the second
# what it compares (their paper's metric taxonomy).
HANNA_REFERENCE_GLYPHS: Mapping[str, str] = {"Ξ": "reference-based", "¤": "reference-free"}
HANNA_FAMILY_GLYPHS: Mapping[str, str] = {"§": "string-based", "ε": "embedding-based", "Δ": "model-based"}
_HANNA_METRIC = re.compile(r"^(?P<base>.+?) (?P<ref>[Ξ¤])(?P<family>[§εΔ])$")
_HANNA_RATER = re.compile(r"^Human (?P<rater>\d+) (?P<criterion>RE|CH|EM|SU|EG|CX)$")
_HANNA_RATER_SUBSET = re.compile(r"^Human Avg \d+ (RE|CH|EM|SU|EG|CX)$")
_HANNA_JUDGE = re.compile(r"^(?P<judge>.+) (?P<criterion>RE|CH|EM|SU|EG|CX|AVG) (?P<prompt>\d+)$")


def _hanna_cells(frame: pd.DataFrame, column: str, path: Path, n_inputs: int | None) -> np.ndarray:
    """The (systems x prompts) matrix of one column, each cell a JSON list of numbers (one per prompt)."""
    rows = []
    for k, text in enumerate(frame[column]):
        where = f"{_label(path)}, line {k + 2}, column {column!r}"
        try:
            values = json.loads(text)
        except (json.JSONDecodeError, TypeError):
            raise DatasetError(f"{where}: expected a list of numbers such as [1.5, 2.0, ...]") from None
        if not isinstance(values, list):
            raise DatasetError(f"{where}: expected a list of numbers, one per prompt")
        rows.append([_number(v, where, column) for v in values])
    lengths = {len(r) for r in rows}
    if len(lengths) != 1 or (n_inputs is not None and lengths != {n_inputs}):
        expected = n_inputs if n_inputs is not None else "the same number"
        raise DatasetError(f"{_label(path)}, column {column!r}: lists of {sorted(lengths)} numbers; expected "
                           f"{expected} on every row (one per prompt)")
    return np.array(rows, dtype=np.float64)


def load_hanna(files: LoaderFiles) -> LoadedData:
    """HANNA: 11 systems (10 story generators and the human-written stories) x 96 WritingPrompts prompts.

    Human measures are the six criteria ``Relevance``, ``Coherence``, ``Empathy``, ``Surprise``,
    ``Engagement``, ``Complexity`` (1-5), each keeping its three raters (columns ``Human k XX``) as
    annotators; the loader checks that their mean is the file's criterion column. The 72 automatic
    metrics' ids drop the authors' glyphs (column ``BLEU Ξ§`` is measure ``BLEU``); the glyphs become
    attributes ``reference`` (Ξ reference-based, ¤ reference-free) and ``family`` (§ string-based,
    ε embedding-based, Δ model-based), and the column name attribute ``upstream``, which
    :meth:`Dataset.resolve` still accepts as a name. The LLM ratings (``Beluga-13B RE 1``, ...) are
    metrics with ``family = llm-judge``, ``judge``, ``criterion`` and ``prompt`` (the trailing 1-4)
    attributes and a label such as ``Beluga-13B · Relevance (prompt 1)``. The ``Human Avg k XX``
    columns (mean of the raters other than k) are not loaded: they are the annotators' leave-one-out means.

    Systems are in the file's order; attribute ``kind`` is ``human-written`` for ``Human`` and ``model``
    otherwise, and ``default_systems = "kind=model"``: the authors' figures drop the human-written
    stories, which the reference-based metrics score against themselves (BLEU 100, BERTScore 1).
    Inputs are the prompt indices ``0`` ... ``95`` (the order of every list in the file).

    References
    ----------
    Chhun, Colombo, Suchanek & Clavel (COLING 2022); Chhun, Suchanek & Clavel (TACL 2024);
    SOURCE.md of ``hanna/``; docs/methods.md sec. 0.3 (default subset).
    """
    files = _validate_files(files, "hanna", ("hanna_metric_scores_llm.csv",))
    path = _files_ending(files, "hanna_metric_scores_llm.csv")[0]
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8")
    except (OSError, UnicodeDecodeError, pd.errors.ParserError, pd.errors.EmptyDataError) as error:
        raise DatasetError(f"{_label(path)}: cannot parse the CSV ({error})") from error
    missing = [c for c in ("Model", *HANNA_CRITERIA.values()) if c not in frame.columns]
    if missing:
        raise DatasetError(f"{_label(path)}: missing column(s) {', '.join(missing)}")
    systems = tuple(frame["Model"].str.strip())
    if len(set(systems)) != len(systems) or HANNA_HUMAN_SYSTEM not in systems:
        raise DatasetError(f"{_label(path)}: column 'Model' must name each system once, including "
                           f"{HANNA_HUMAN_SYSTEM!r}")
    first = _hanna_cells(frame, HANNA_CRITERIA["RE"], path, None)
    n_inputs = first.shape[1]
    raters: dict[str, dict[int, np.ndarray]] = {code: {} for code in HANNA_CRITERIA}
    metrics: dict[str, Measure] = {}
    judges: dict[str, Measure] = {}
    skipped, unknown = [], []
    for column in frame.columns:
        if column == "Model" or column in HANNA_CRITERIA.values():
            continue
        if _HANNA_RATER_SUBSET.match(column):
            skipped.append(column)
            continue
        matrix = _hanna_cells(frame, column, path, n_inputs)
        if match := _HANNA_RATER.match(column):
            raters[match["criterion"]][int(match["rater"])] = matrix
        elif match := _HANNA_METRIC.match(column):
            # The id is the clean name: the glyphs are read as attributes, and the column name stays a name
            # Dataset.resolve accepts (attribute ``upstream``).
            name = match["base"] if match["base"] not in metrics else column  # two glyph variants: keep both
            metrics[name] = Measure(name, "metric", matrix, attributes={
                "family": HANNA_FAMILY_GLYPHS[match["family"]], "reference": HANNA_REFERENCE_GLYPHS[match["ref"]],
                "upstream": column})
        elif match := _HANNA_JUDGE.match(column):
            criterion = HANNA_CRITERIA.get(match["criterion"], "average")
            shown = criterion if criterion != "average" else "average of the six criteria"
            judges[column] = Measure(column, "metric", matrix, label=f"{match['judge']} · {shown} (prompt "
                                     f"{match['prompt']})", attributes={
                                         "family": "llm-judge", "judge": match["judge"], "criterion": criterion,
                                         "prompt": match["prompt"]})
        else:
            unknown.append(column)
            metrics[column] = Measure(column, "metric", matrix)
    humans: dict[str, Measure] = {}
    for code, criterion in HANNA_CRITERIA.items():
        per_rater = raters[code]
        if not per_rater:
            raise DatasetError(f"{_label(path)}: no per-rater columns 'Human k {code}' for {criterion}")
        stacked = np.stack([per_rater[k] for k in sorted(per_rater)])
        measure = Measure.from_annotators(criterion, "human", stacked, attributes={"criterion": criterion})
        upstream = _hanna_cells(frame, criterion, path, n_inputs)
        if not np.allclose(measure.scores, upstream, rtol=0, atol=1e-9, equal_nan=True):
            worst = float(np.nanmax(np.abs(measure.scores - upstream)))
            raise DatasetError(f"{_label(path)}: column {criterion!r} is not the mean of its raters' columns "
                               f"(largest difference {worst:.3g})")
        humans[criterion] = measure
    n_raters = sorted({len(r) for r in raters.values()})
    inputs = tuple(str(k) for k in range(n_inputs))
    kinds = tuple("human-written" if s == HANNA_HUMAN_SYSTEM else "model" for s in systems)
    judge_names = sorted({m.attributes["judge"] for m in judges.values()})
    notes = [
        f"Human: {len(humans)} criteria (1-5 Likert), {'/'.join(map(str, n_raters))} mTurk raters per story; the "
        "matrix is their mean (the file's criterion column, checked). Rater k is a position, not a person: "
        "workers differ across stories.",
        f"Systems: {len(systems)} in the file's order. '{HANNA_HUMAN_SYSTEM}' (kind=human-written) holds the "
        "human-written WritingPrompts stories, which reference-based metrics score against themselves (BLEU 100, "
        "BERTScore F1 1). Default: the 10 model systems (kind=model), as in the authors' figures "
        "(METRICS_DF_NO_HUMAN in their notebook); keep it with --all-systems or the dashboard's 'Keep every system'.",
        f"Metrics: {len(metrics)} automatic metrics, named without the authors' glyphs (column 'BLEU Ξ§' is 'BLEU', "
        "and either name is accepted); the glyphs are kept as attributes: Ξ reference-based (the Human row scores itself), ¤ reference-free; § string-based, ε "
        "embedding-based, "
        "Δ model-based (our reading of the authors' taxonomy).",
        f"LLM judges (family=llm-judge): {', '.join(judge_names)}; for each, the six criteria and AVG (their mean) "
        "under prompts 1-4 (the authors' task ids 0-3). Cells are the authors' aggregates of repeated answers (their "
        "notebook averages 3 tries per story).",
        f"Not loaded: the {len(skipped)} 'Human Avg k XX' columns (mean of the raters other than k), which the "
        "per-rater scores give.",
    ]
    if unknown:
        notes.append(f"Columns without the authors' glyphs, loaded as metrics without a family: {', '.join(unknown)}")
    measures = {**humans, **metrics, **judges}
    return LoadedData(systems, inputs, measures, {"kind": kinds}, tuple(notes + _missing_note(measures, "stories")),
                      default_systems="kind=model", task="story-generation", annotator_identity="positions")
