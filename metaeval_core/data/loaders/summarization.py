"""Loaders of the built-in summarization datasets: SummEval, REALSumm, the NAACL 2022 files, FRANK, RoSE, XSum.

References: docs/methods.md sec. 0, 7, 8; each dataset's ``SOURCE.md`` in the data mirror.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from metaeval_core.data.dataset import DatasetError, Measure
from metaeval_core.data.loaders._common import (
    _Cells, _files_ending, flatten, FRANK_ID_KEYS, FRANK_SUBSETS, iter_jsonl, _label, LoadedData, LoaderFiles, _missing_note, natural_key, _number, read_json, _read_sacrerouge_jsonl, ROSE_PROTOCOLS, _sorted, SUMMEVAL_EXTRACTIVE, _validate_files, XSUM_HUMAN, XSUM_METRICS, XSUM_SYSTEM_NAMES,
)


# ---------------------------------------------------------------------------
# SummEval (Deutsch et al. 2021 copy of Fabbri et al. 2021)
# ---------------------------------------------------------------------------
def load_summeval(files: LoaderFiles) -> LoadedData:
    """SummEval: 16 systems x 100 CNN/DM documents, all annotations and metric families.

    Human measures ``expert.{coherence,consistency,fluency,relevance}`` (3
    experts) and ``turker.{...}`` (5 crowd workers) keep per-annotator scores;
    their matrix is the annotator mean. Metric ids are the flattened upstream
    keys (``rouge-1.f1``, ``bertscore.recall``, ``qa-eval.lerc``, ``METEOR``,
    ``MoverScore``, ``s3.pyr``, ``AutoSummENG``, ``BEwTE.f1``, ...). System
    attribute ``type``: ``ext`` for M0, M1, M2, M5, else ``abs``.

    References
    ----------
    Fabbri et al. (TACL 2021); Deutsch, Dror & Roth (TACL 2021); SOURCE.md of ``summeval/``.
    """
    files = _validate_files(files, "summeval", ("relevance.jsonl",))
    cells = _Cells()
    for path in files.required.values():
        _read_sacrerouge_jsonl(path, cells, lambda name: name.startswith(("expert.", "turker.")))
    systems, inputs = _sorted(cells.systems), _sorted(cells.inputs)
    measures = cells.measures(systems, inputs)
    # Annotator identity (issue 24): the experts are persons, the crowd slots are not.
    measures = {name: (replace(m, attributes={**m.attributes, "annotators": "persons" if name.startswith("expert.")
                                              else "positions"}) if m.annotators is not None else m)
                for name, m in measures.items()}
    types = tuple("ext" if s in SUMMEVAL_EXTRACTIVE else "abs" for s in systems)
    notes = [
        "Human scores are 1-5 Likert; the matrix of each human measure is the mean of its annotators.",
        "expert.*: annotator i is the same expert for every summary and dimension (SummEval issue #41).",
        "turker.*: the 5 crowd workers are anonymous and differ across summaries; annotator index is not a person.",
        "Metrics were computed by SacreROUGE (Deutsch et al. 2021) against the single original CNN/DM reference; "
        "ROUGE is on a 0-100 scale, BERTScore is raw (not rescaled).",
        "System type: ext = M0 (Lead-3), M1, M2, M5; abs = the other 12.",
    ]
    return LoadedData(systems, inputs, measures, {"type": types}, tuple(notes + _missing_note(measures, "summaries")),
                      task="summarization")


# ---------------------------------------------------------------------------
# REALSumm (Bhandari et al. 2020)
# ---------------------------------------------------------------------------
def _realsumm_pickle(path: Path) -> dict[str, dict[str, float]]:
    """``{system: {doc_id: bert_f_score}}`` from a REALSumm score pickle, read with the restricted unpickler."""
    from metaeval_core.data.safe_pickle import safe_load

    data = safe_load(path)
    if not isinstance(data, dict):
        raise DatasetError(f"{_label(path)}: expected a dict keyed by doc_id; got {type(data).__name__}")
    out: dict[str, dict[str, float]] = {}
    for doc_id, entry in data.items():
        where = f"{_label(path)}, doc_id {doc_id!r}"
        summaries = entry.get("system_summaries") if isinstance(entry, dict) else None
        if not isinstance(summaries, dict):
            raise DatasetError(f"{where}: missing the 'system_summaries' dict")
        for key, summary in summaries.items():
            system = str(key)[:-4] if str(key).endswith(".txt") else str(key)
            scores = summary.get("scores") if isinstance(summary, dict) else None
            if not isinstance(scores, dict) or "bert_f_score" not in scores:
                raise DatasetError(f"{where}, system {key!r}: missing scores['bert_f_score']")
            out.setdefault(system, {})[str(doc_id)] = _number(scores["bert_f_score"], where, "bert_f_score")
    return out


def load_realsumm(files: LoaderFiles) -> LoadedData:
    """REALSumm: 24 systems x 100 CNN/DM documents, LitePyramid recall and metric scores.

    The JSON-lines files (Deutsch et al. 2021) give every metric and the human
    ``litepyramid.recall``. ``bertscore.f1`` is taken from REALSumm's own
    pickles (key ``bert_f_score``) because the JSON-lines copy duplicates
    ``bertscore.precision``. System attribute ``type`` comes from the pickle a
    system is in; ``bart_out``, in both, counts as ``ext`` (SacreROUGE), giving
    13 abs / 11 ext. Pickles are read with :func:`metaeval_core.data.safe_pickle.safe_load`.

    References
    ----------
    Bhandari et al. (EMNLP 2020); Deutsch, Dror & Roth (TACL 2021); SOURCE.md of ``realsumm/``.
    """
    files = _validate_files(files, "realsumm", ("pyramid.jsonl", "abs.pkl", "ext.pkl"))
    cells = _Cells()
    for rel, path in files.required.items():
        if rel.endswith(".jsonl"):
            _read_sacrerouge_jsonl(path, cells, lambda name: name == "litepyramid.recall")
    if "litepyramid.recall" not in cells.values:
        raise DatasetError(f"{_files_ending(files, 'pyramid.jsonl')[0]}: no 'litepyramid.recall' scores found")
    abs_scores = _realsumm_pickle(_files_ending(files, "abs.pkl")[0])
    ext_scores = _realsumm_pickle(_files_ending(files, "ext.pkl")[0])
    systems, inputs = _sorted(cells.systems), _sorted(cells.inputs)
    unknown = [s for s in systems if s not in abs_scores and s not in ext_scores]
    if unknown:
        raise DatasetError(f"realsumm: systems {unknown} of the JSON-lines files are in neither abs.pkl nor ext.pkl")
    bert_f: dict[tuple[str, str], float] = {}
    for system in systems:
        source = ext_scores.get(system, abs_scores.get(system, {}))
        for doc_id, value in source.items():
            bert_f[(system, doc_id)] = value
    cells.kinds.setdefault("bertscore.f1", "metric")
    cells.replace("bertscore.f1", bert_f)
    measures = cells.measures(systems, inputs)
    types = tuple("ext" if s in ext_scores else "abs" for s in systems)
    both = sorted(set(abs_scores) & set(ext_scores))
    notes = [
        "bertscore.f1 is REALSumm's own bert_f_score from scores_dicts/{abs,ext}.pkl: the JSON-lines copy "
        "(pyramid.jsonl) duplicates bertscore.precision. REALSumm's BERTScore appears baseline-rescaled.",
        f"{', '.join(both) or 'no system'} appears in both abs.pkl and ext.pkl (identical copies); kept once, as ext "
        f"(SacreROUGE convention): {types.count('abs')} abs / {types.count('ext')} ext.",
        "Human score: LitePyramid recall (0-1). REALSumm's ROUGE is on a 0-1 scale; js-2 is a negated JS divergence.",
    ]
    return LoadedData(systems, inputs, measures, {"type": types}, tuple(notes + _missing_note(measures, "summaries")),
                      task="summarization")


# ---------------------------------------------------------------------------
# Deutsch, Dror & Roth (NAACL 2022): judged file + optional unjudged pool
# ---------------------------------------------------------------------------
def _read_unjudged_pool(
    path: Path, systems: tuple[str, ...], judged: set[str]
) -> tuple[tuple[str, ...], dict[str, np.ndarray], int, set[str]]:
    """Metric scores of the inputs of an ``all/metrics.jsonl.gz`` file that are not judged.

    Returns the unjudged inputs (natural order), a ``(systems x unjudged)``
    matrix per metric, the number of lines skipped because their input is
    judged, and the systems skipped because they were never judged. Written
    for speed: such a file can hold 16 systems x 11,490 documents.
    """
    sys_index = {s: i for i, s in enumerate(systems)}
    inp_index: dict[str, int] = {}
    columns: dict[str, tuple[list[int], list[int], list[float]]] = {}
    seen: set[tuple[int, int]] = set()
    skipped_judged = 0
    extra_systems: set[str] = set()
    for number, record in iter_jsonl(path):
        try:
            input_id, system, metrics = str(record["instance_id"]), str(record["summarizer_id"]), record["metrics"]
        except KeyError as error:
            raise DatasetError(f"{_label(path)}, line {number}: missing the field {error.args[0]!r}") from None
        if not isinstance(metrics, dict):
            raise DatasetError(f"{_label(path)}, line {number}: 'metrics' must be a JSON object")
        if input_id in judged:
            skipped_judged += 1
            continue
        row = sys_index.get(system)
        if row is None:
            extra_systems.add(system)
            continue
        col = inp_index.setdefault(input_id, len(inp_index))
        if (row, col) in seen:
            raise DatasetError(
                f"{_label(path)}, line {number}: a second line for system {system!r}, input {input_id!r}"
            )
        seen.add((row, col))
        items = metrics.items() if not any(type(v) is dict for v in metrics.values()) else flatten(metrics)
        for name, value in items:
            if name == "ground-truth":
                continue
            if type(value) is not float:
                value = _number(value, f"{_label(path)}, line {number}", name)
            rows, cols, vals = columns.setdefault(name, ([], [], []))
            rows.append(row)
            cols.append(col)
            vals.append(value)
    inputs = _sorted(list(inp_index))
    order = np.empty(len(inp_index), dtype=np.int64)
    for position, input_id in enumerate(inputs):
        order[inp_index[input_id]] = position
    matrices = {}
    for name, (rows, cols, vals) in columns.items():
        matrix = np.full((len(systems), len(inputs)), np.nan)
        matrix[np.asarray(rows, dtype=np.int64), order[np.asarray(cols, dtype=np.int64)]] = vals
        matrices[name] = matrix
    return inputs, matrices, skipped_judged, extra_systems


def _append_pool(measures: dict[str, Measure], pool: dict[str, np.ndarray], n_systems: int, n_pool: int
                 ) -> dict[str, Measure]:
    """Extend every measure by the unjudged columns (NaN for humans and for metrics absent from the pool)."""
    out: dict[str, Measure] = {}
    for name, m in measures.items():
        if m.kind == "human":
            if m.annotators is not None:
                pad = np.full((m.annotators.shape[0], n_systems, n_pool), np.nan)
                out[name] = Measure.from_annotators(name, "human", np.concatenate([m.annotators, pad], axis=-1))
            else:
                out[name] = Measure(name, "human", np.hstack([m.scores, np.full((n_systems, n_pool), np.nan)]))
        else:
            extra = pool.get(name, np.full((n_systems, n_pool), np.nan))
            out[name] = Measure(name, "metric", np.hstack([m.scores, extra]))
    n_judged = next(iter(measures.values())).scores.shape[1] if measures else 0
    for name, extra in pool.items():
        if name not in out:
            out[name] = Measure(name, "metric", np.hstack([np.full((n_systems, n_judged), np.nan), extra]))
    return out


def load_deutsch2022(files: LoaderFiles) -> LoadedData:
    """A NAACL 2022 ``judged/metrics.jsonl.gz`` file, plus the optional ``all/`` pool.

    Human measure ``ground-truth`` (a list of annotator scores for SummEval, a
    float for REALSumm); metrics ``ROUGE-1``, ``ROUGE-2``, ``ROUGE-L``,
    ``BERTScore``, ``QAEval``. When the optional ``all/metrics.jsonl.gz`` is
    present, its inputs that are not judged are appended as the unjudged pool
    (metric scores only; docs/methods.md sec. 0); judged inputs keep their judged
    values, and systems that were never judged are ignored.

    References
    ----------
    Deutsch, Dror & Roth (NAACL 2022) sec. 3; docs/methods.md sec. 0 and 6.
    """
    files = _validate_files(files, "deutsch2022", ("judged/metrics.jsonl.gz",))
    cells = _Cells()
    judged_path = _files_ending(files, "judged/metrics.jsonl.gz")[0]
    _read_sacrerouge_jsonl(judged_path, cells, lambda name: name == "ground-truth")
    if "ground-truth" not in cells.values:
        raise DatasetError(f"{_label(judged_path)}: no 'ground-truth' human scores found")
    systems, inputs = _sorted(cells.systems), _sorted(cells.inputs)
    measures = cells.measures(systems, inputs)
    notes = []
    all_paths = [path for rel, path in files.optional.items() if rel.endswith("all/metrics.jsonl.gz")]
    if all_paths:
        path = all_paths[0]
        unjudged, pool, skipped_judged, extra_systems = _read_unjudged_pool(path, systems, set(inputs))
        measures = _append_pool(measures, pool, len(systems), len(unjudged))
        inputs = inputs + unjudged
        notes.append(
            f"Unjudged pool from {path.name} (deutsch2022_reexamining/all): {len(unjudged)} inputs with metric scores "
            f"only; {skipped_judged} lines for judged inputs were ignored (judged values kept)."
        )
        if extra_systems:
            notes.append(f"Ignored {len(extra_systems)} system(s) of the unjudged pool that were never judged: "
                         f"{', '.join(sorted(extra_systems, key=natural_key)[:10])}")
    else:
        notes.append("No unjudged pool: the full-test-set file all/metrics.jsonl.gz is not in the data directory.")
    notes.append(
        "ground-truth is the human score (SummEval: the 3 expert relevance scores, matrix = their mean; "
        "REALSumm: LitePyramid recall). Metrics are x100 (SummEval: ROUGE F1; REALSumm: ROUGE recall; both: "
        "BERTScore recall, QAEval F1)."
    )
    # SummEval's ground-truth keeps its 3 experts, the same persons on every summary (REALSumm keeps no annotators).
    return LoadedData(systems, inputs, measures, {}, tuple(notes), task="summarization",
                      annotator_identity="persons")


# ---------------------------------------------------------------------------
# FRANK (Pagnoni et al. 2021)
# ---------------------------------------------------------------------------
def _frank_records(path: Path) -> list[dict]:
    data = read_json(path)
    if not isinstance(data, list):
        raise DatasetError(f"{_label(path)}: expected a JSON list of records")
    for k, record in enumerate(data):
        if not isinstance(record, dict) or not {"hash", "model_name", "dataset"} <= set(record):
            raise DatasetError(f"{_label(path)}, record {k}: expected an object with hash, model_name and dataset")
    return data


def load_frank(files: LoaderFiles) -> LoadedData:
    """FRANK factuality judgments for one subset (``options['subset']``: ``cnndm`` or ``bbc``).

    Human measures: ``Factuality`` and the error-category scores
    (``Semantic_Frame_Errors``, ..., ``Other``; 1 = no such error); the
    ``Flip_*`` ablation variants are not loaded. Metrics keep their upstream
    names (``Rouge 1``, ``BertScore F1 Art``, ``Dep Entail``, ...); nulls become NaN.
    The per-input ``split`` (test/valid) is reported in the notes.

    References
    ----------
    Pagnoni, Balachandran & Tsvetkov (NAACL 2021); SOURCE.md of ``frank/``.
    """
    files = _validate_files(files, "frank", ("human_annotations.json", "baseline_factuality_metrics_outputs.json"))
    subset = files.options.get("subset")
    if subset not in FRANK_SUBSETS:
        raise DatasetError(f"loader 'frank': option subset must be one of {FRANK_SUBSETS}; got {subset!r}")
    cells = _Cells()
    splits: dict[str, str] = {}
    flips: set[str] = set()
    for suffix, kind in (("human_annotations.json", "human"), ("baseline_factuality_metrics_outputs.json", "metric")):
        path = _files_ending(files, suffix)[0]
        for k, record in enumerate(_frank_records(path)):
            if record["dataset"] != subset:
                continue
            where = f"{_label(path)}, record {k}"
            system, input_id = str(record["model_name"]), str(record["hash"])
            if "split" in record:
                splits[input_id] = str(record["split"])
            for name, value in record.items():
                if name in FRANK_ID_KEYS:
                    continue
                if name.startswith("Flip_"):
                    flips.add(name)
                    continue
                cells.add(name, kind, system, input_id, value, where)
    if not cells.values:
        raise DatasetError(f"FRANK files hold no record with dataset == {subset!r}")
    systems, inputs = _sorted(cells.systems), _sorted(cells.inputs)
    measures = cells.measures(systems, inputs)
    split_counts = pd.Series(list(splits.values())).value_counts().to_dict() if splits else {}
    notes = [
        f"FRANK {'CNN/DM' if subset == 'cnndm' else 'XSum (BBC)'} subset (dataset == {subset!r}).",
        "Per-input split (not a system attribute): "
        + ", ".join(f"{n} {s}" for s, n in sorted(split_counts.items()))
        + " inputs.",
        "Factuality: sentence-level judgments averaged over sentences (0-1); error categories: 1 = no such error.",
        f"Not loaded: the {len(flips)} Flip_* ablation variants of the error categories.",
        "Metrics with 'Art' are computed against the article; the others against the reference. The FRANK paper "
        "reports partial correlations controlling for the system; BERTScore results were fixed after publication.",
    ]
    return LoadedData(systems, inputs, measures, {}, tuple(notes + _missing_note(measures, "summaries")),
                      task="summarization")


# ---------------------------------------------------------------------------
# RoSE protocol comparison (Liu et al. 2023)
# ---------------------------------------------------------------------------
def load_rose(files: LoaderFiles) -> LoadedData:
    """RoSE protocol comparison: 12 systems x 100 CNN/DM documents, five human protocols.

    Human measures ``prior``, ``ref_free``, ``ref_based`` (1-5, mean of 3
    annotators upstream), ``acu`` and ``normalized_acu``. No automatic metrics;
    texts are not loaded. Inputs are the CNN/DM ``example_id`` hashes.

    References
    ----------
    Liu et al. (ACL 2023); SOURCE.md of ``rose/``.
    """
    files = _validate_files(files, "rose", ("protocol-comparison.json",))
    path = _files_ending(files, "protocol-comparison.json")[0]
    data = read_json(path)
    if not isinstance(data, list):
        raise DatasetError(f"{_label(path)}: expected a JSON list of examples")
    cells = _Cells()
    for k, example in enumerate(data):
        where = f"{_label(path)}, example {k}"
        if not isinstance(example, dict) or "example_id" not in example or not isinstance(
            example.get("annotations"), dict
        ):
            raise DatasetError(f"{where}: expected an object with example_id and an annotations dict")
        input_id = str(example["example_id"])
        for system, annotation in example["annotations"].items():
            if not isinstance(annotation, dict):
                raise DatasetError(f"{where}, system {system!r}: annotations must be an object")
            for protocol in ROSE_PROTOCOLS:
                value = annotation.get(protocol)
                if isinstance(value, list) and not value:
                    value = None
                cells.add(protocol, "human", str(system), input_id, value, f"{where}, system {system!r}")
    systems, inputs = _sorted(cells.systems), _sorted(cells.inputs)
    measures = cells.measures(systems, inputs)
    notes = [
        "A human-protocol dataset: there are no automatic metrics; correlate the protocols with each other.",
        "prior (no input shown), ref_free (document shown), ref_based (reference shown): 1-5, each the mean of 3 "
        "annotators upstream. acu: ACU recall (0-1); normalized_acu: length-normalised ACU score.",
        "'gold' is a system (the GOLD outputs), not the reference.",
    ]
    return LoadedData(systems, inputs, measures, {}, tuple(notes + _missing_note(measures, "summaries")),
                      task="summarization")


# ---------------------------------------------------------------------------
# XSum hallucinations (Maynez et al. 2020)
# ---------------------------------------------------------------------------
def load_xsum_hallucination(files: LoaderFiles) -> LoadedData:
    """XSum hallucination scores: 4 systems x 498 documents.

    ``system_bbcid`` is split on its last ``_``; system file names map to the
    paper names (bert_withckpt -> BERTS2S, bert_nockpt -> TranS2S, ptgen ->
    PtGen, tconvs2s -> TConvS2S). Humans ``Faithful`` and ``Factual``; metrics
    ``R1``, ``R2``, ``RL``, ``BERTScore``, ``Entailment``.

    References
    ----------
    Maynez et al. (ACL 2020); SOURCE.md of ``xsum_hallucination/``.
    """
    files = _validate_files(files, "xsum_hallucination", ("eval_scores_xsum_summaries.csv",))
    path = _files_ending(files, "eval_scores_xsum_summaries.csv")[0]
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (OSError, UnicodeDecodeError, pd.errors.ParserError, pd.errors.EmptyDataError) as error:
        raise DatasetError(f"{_label(path)}: cannot parse the CSV ({error})") from error
    expected = ["system_bbcid", *XSUM_METRICS, *XSUM_HUMAN]
    missing = [c for c in expected if c not in frame.columns]
    if missing:
        raise DatasetError(f"{_label(path)}: missing column(s) {', '.join(missing)}")
    cells = _Cells()
    for row in frame.itertuples(index=True):
        where = f"{_label(path)}, line {row.Index + 2}"
        key = getattr(row, "system_bbcid")
        if "_" not in key:
            raise DatasetError(f"{where}: system_bbcid {key!r} must look like <system>_<bbcid>")
        raw_system, bbcid = key.rsplit("_", 1)
        system = XSUM_SYSTEM_NAMES.get(raw_system, raw_system)
        values = row._asdict()
        for name in expected[1:]:
            text = values[name].strip()
            if text == "" or text.lower() in ("nan", "null", "na"):
                value = None
            else:
                try:
                    value = float(text)
                except ValueError:
                    raise DatasetError(f"{where}: column {name!r} must be a number; got {text!r}") from None
            cells.add(name, "human" if name in XSUM_HUMAN else "metric", system, bbcid, value, where)
    systems, inputs = _sorted(cells.systems), _sorted(cells.inputs)
    measures = cells.measures(systems, inputs)
    notes = [
        "System names mapped to the paper's: bert_withckpt -> BERTS2S, bert_nockpt -> TranS2S, ptgen -> PtGen, "
        "tconvs2s -> TConvS2S.",
        "Faithful: share of summary words outside any hallucinated span, averaged over 3 raters; Factual: mean of "
        "3 binary factuality labels. R1/R2/RL are ROUGE F1 (0-1).",
    ]
    return LoadedData(systems, inputs, measures, {}, tuple(notes + _missing_note(measures, "summaries")),
                      task="summarization")
