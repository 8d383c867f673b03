"""Loaders of the built-in human-judgment datasets (the files listed in ``data/registry.json``).

Every loader reads the upstream files unchanged and returns the parts of a
:class:`~metaeval_core.data.dataset.Dataset` (systems, inputs, measures, system
attributes, notes); :func:`metaeval_core.data.registry.load_dataset` adds the
registry metadata and the version. Measure ids are the upstream keys, nested
keys flattened with ``.`` (``rouge-1.f1``, ``expert.relevance``), otherwise
unchanged. Systems and inputs are sorted in natural order (``M2`` before
``M10``, ``"9"`` before ``"10"``). Missing scores (JSON ``null``, absent cells)
become NaN. A malformed file raises :class:`DatasetError` naming the file and
the line (or record).

Loaders are registered by name in :data:`LOADERS`; the registry entry's
``loader`` field selects one.

References: docs/methods.md sec. 0; each dataset's ``SOURCE.md`` in the data mirror.
"""

from __future__ import annotations

import gzip
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

import numpy as np
import pandas as pd

from metaeval_core.data.dataset import Dataset, DatasetError, Measure

# Bump when a loader's output changes for the same input files (part of Dataset.version).
LOADER_VERSION = "1"

SUMMEVAL_EXTRACTIVE: frozenset[str] = frozenset({"M0", "M1", "M2", "M5"})
XSUM_SYSTEM_NAMES: Mapping[str, str] = {
    "bert_withckpt": "BERTS2S",
    "bert_nockpt": "TranS2S",
    "ptgen": "PtGen",
    "tconvs2s": "TConvS2S",
}
XSUM_HUMAN: tuple[str, ...] = ("Faithful", "Factual")
XSUM_METRICS: tuple[str, ...] = ("R1", "R2", "RL", "BERTScore", "Entailment")
ROSE_PROTOCOLS: tuple[str, ...] = ("prior", "ref_free", "ref_based", "acu", "normalized_acu")
FRANK_ID_KEYS: frozenset[str] = frozenset({"hash", "model_name", "dataset", "split"})
FRANK_SUBSETS: tuple[str, ...] = ("cnndm", "bbc")


@dataclass(frozen=True)
class LoaderFiles:
    """The files a loader reads.

    ``required`` and ``optional`` map a registry path (relative to the data
    directory, e.g. ``summeval/.../rouge.jsonl``) to the file on disk;
    ``optional`` holds only the optional files that are present. ``options``
    are the registry entry's loader options (e.g. FRANK's ``subset``).
    """

    required: Mapping[str, Path]
    optional: Mapping[str, Path] = field(default_factory=dict)
    options: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, eq=False)
class LoadedData:
    """What a loader produces: everything a Dataset needs except the registry metadata."""

    systems: tuple[str, ...]
    inputs: tuple[str, ...]
    measures: Mapping[str, Measure]
    system_attributes: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    default_systems: str = ""

    def to_dataset(self, id: str, **metadata: Any) -> Dataset:
        """The Dataset with id ``id`` and registry ``metadata`` (title, citation, ...)."""
        return Dataset(
            id=id,
            systems=self.systems,
            inputs=self.inputs,
            measures=self.measures,
            system_attributes=self.system_attributes,
            notes=self.notes,
            default_systems=self.default_systems,
            **metadata,
        )


# ---------------------------------------------------------------------------
# Helpers: natural order, JSON lines, a cell accumulator
# ---------------------------------------------------------------------------
def natural_key(text: str) -> tuple:
    """Sort key that orders embedded integers numerically (``M2`` < ``M10``)."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", text) if part)


def _label(path: Path) -> str:
    return str(path)


def iter_jsonl(path: Path) -> Iterator[tuple[int, dict]]:
    """Yield ``(line_number, object)`` for each non-empty line of a (gzipped) JSON-lines file.

    Raises
    ------
    DatasetError
        The file cannot be read, or a line is not a JSON object (the message
        names the file and the line).
    """
    opener = gzip.open if path.name.endswith(".gz") else open
    try:
        with opener(path, "rt", encoding="utf-8") as handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as error:
                    raise DatasetError(f"{_label(path)}, line {number}: invalid JSON ({error.msg})") from None
                if not isinstance(record, dict):
                    raise DatasetError(f"{_label(path)}, line {number}: expected a JSON object")
                yield number, record
    except (OSError, EOFError, UnicodeDecodeError) as error:
        raise DatasetError(f"{_label(path)}: cannot read the file ({error})") from error


def read_json(path: Path) -> Any:
    """Parse a JSON file; a syntax error names the file, line and column."""
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except json.JSONDecodeError as error:
        raise DatasetError(
            f"{_label(path)}, line {error.lineno}, column {error.colno}: invalid JSON ({error.msg})"
        ) from None
    except (OSError, UnicodeDecodeError) as error:
        raise DatasetError(f"{_label(path)}: cannot read the file ({error})") from error


def flatten(metrics: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    """Flatten nested dicts to ``("a.b.c", value)`` pairs (lists are leaf values)."""
    for key, value in metrics.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            yield from flatten(value, name + ".")
        else:
            yield name, value


def _number(value: Any, where: str, measure: str) -> float:
    if value is None:
        return math.nan
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise DatasetError(f"{where}: measure {measure!r} must be a number or null; got {value!r}")
    return float(value)


class _Cells:
    """Accumulates (measure, system, input) -> score, refusing duplicates."""

    def __init__(self) -> None:
        self.values: dict[str, dict[tuple[str, str], float | tuple[float, ...]]] = {}
        self.kinds: dict[str, str] = {}
        self.systems: set[str] = set()
        self.inputs: set[str] = set()

    def add(self, measure: str, kind: str, system: str, input_id: str, value: Any, where: str) -> None:
        if isinstance(value, list):
            score: float | tuple[float, ...] = tuple(_number(v, where, measure) for v in value)
        else:
            score = _number(value, where, measure)
        cells = self.values.setdefault(measure, {})
        key = (system, input_id)
        if key in cells:
            raise DatasetError(
                f"{where}: a second score for measure {measure!r}, system {system!r}, input {input_id!r}"
            )
        previous = self.kinds.setdefault(measure, kind)
        if previous != kind:
            raise DatasetError(f"{where}: measure {measure!r} is both a human measure and a metric")
        cells[key] = score
        self.systems.add(system)
        self.inputs.add(input_id)

    def replace(self, measure: str, cells: dict[tuple[str, str], float]) -> None:
        self.values[measure] = dict(cells)

    def measures(self, systems: tuple[str, ...], inputs: tuple[str, ...]) -> dict[str, Measure]:
        """Build the measures over ``systems`` x ``inputs``: humans first, then metrics, in first-seen order."""
        sys_index = {s: i for i, s in enumerate(systems)}
        inp_index = {j: k for k, j in enumerate(inputs)}
        shape = (len(systems), len(inputs))
        out: dict[str, Measure] = {}
        ordered = [m for m in self.values if self.kinds[m] == "human"] + [
            m for m in self.values if self.kinds[m] == "metric"
        ]
        for name in ordered:
            cells = self.values[name]
            keep = [(sys_index[s], inp_index[j], v) for (s, j), v in cells.items() if s in sys_index and j in inp_index]
            kind = self.kinds[name]
            lists = [isinstance(v, tuple) for _, _, v in keep]
            if any(lists) and not all(lists):
                raise DatasetError(f"measure {name!r} mixes single scores and per-annotator lists")
            if keep and all(lists):
                width = max(len(v) for _, _, v in keep)
                annotators = np.full((width, *shape), np.nan)
                for i, k, v in keep:
                    annotators[: len(v), i, k] = v
                out[name] = Measure.from_annotators(name, kind, annotators)  # type: ignore[arg-type]
            else:
                matrix = np.full(shape, np.nan)
                if keep:
                    rows, cols, vals = zip(*keep)
                    matrix[list(rows), list(cols)] = vals
                out[name] = Measure(name, kind, matrix)  # type: ignore[arg-type]
        return out


def _read_sacrerouge_jsonl(
    path: Path, cells: _Cells, is_human: Callable[[str], bool], *, skip: frozenset[str] = frozenset()
) -> int:
    """Add every score of a SacreROUGE/Deutsch JSON-lines file to ``cells``; return the lines read."""
    count = 0
    for number, record in iter_jsonl(path):
        where = f"{_label(path)}, line {number}"
        try:
            input_id = record["instance_id"]
            system = record["summarizer_id"]
            metrics = record["metrics"]
        except KeyError as error:
            raise DatasetError(f"{where}: missing the field {error.args[0]!r}") from None
        if not isinstance(metrics, dict):
            raise DatasetError(f"{where}: 'metrics' must be a JSON object")
        for name, value in flatten(metrics):
            if name in skip:
                continue
            cells.add(name, "human" if is_human(name) else "metric", str(system), str(input_id), value, where)
        count += 1
    return count


def _sorted(names: set[str] | list[str]) -> tuple[str, ...]:
    return tuple(sorted(names, key=natural_key))


def _files_ending(files: LoaderFiles, suffix: str) -> list[Path]:
    return [path for rel, path in files.required.items() if rel.endswith(suffix)]


def _validate_files(files: object, loader: str, needed: tuple[str, ...]) -> LoaderFiles:
    """Check that ``files`` is a LoaderFiles holding a required file ending in each of ``needed``."""
    if not isinstance(files, LoaderFiles):
        raise TypeError(f"files must be a LoaderFiles; got {type(files).__name__}")
    for suffix in needed:
        if not _files_ending(files, suffix):
            raise DatasetError(f"loader {loader!r}: the registry entry lists no required file ending in {suffix!r}")
    for rel, path in files.required.items():
        if not Path(path).is_file():
            raise DatasetError(f"loader {loader!r}: required file {rel} is missing ({path})")
    return files


def _missing_note(measures: Mapping[str, Measure], shape_label: str) -> list[str]:
    notes = []
    for name, m in measures.items():
        missing = int(np.isnan(m.scores).sum())
        if missing:
            notes.append(f"{name}: {missing} of {m.scores.size} {shape_label} have no score (NaN)")
    return notes


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
    types = tuple("ext" if s in SUMMEVAL_EXTRACTIVE else "abs" for s in systems)
    notes = [
        "Human scores are 1-5 Likert; the matrix of each human measure is the mean of its annotators.",
        "expert.*: annotator i is the same expert for every summary and dimension (SummEval issue #41).",
        "turker.*: the 5 crowd workers are anonymous and differ across summaries; annotator index is not a person.",
        "Metrics were computed by SacreROUGE (Deutsch et al. 2021) against the single original CNN/DM reference; "
        "ROUGE is on a 0-100 scale, BERTScore is raw (not rescaled).",
        "System type: ext = M0 (Lead-3), M1, M2, M5; abs = the other 12.",
    ]
    return LoadedData(systems, inputs, measures, {"type": types}, tuple(notes + _missing_note(measures, "summaries")))


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
    return LoadedData(systems, inputs, measures, {"type": types}, tuple(notes + _missing_note(measures, "summaries")))


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
    return LoadedData(systems, inputs, measures, {}, tuple(notes))


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
    return LoadedData(systems, inputs, measures, {}, tuple(notes + _missing_note(measures, "summaries")))


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
    return LoadedData(systems, inputs, measures, {}, tuple(notes + _missing_note(measures, "summaries")))


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
    return LoadedData(systems, inputs, measures, {}, tuple(notes + _missing_note(measures, "summaries")))


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
    metrics keep their column names as ids (``BLEU Ξ§``); their label drops the glyphs (``BLEU``) and
    the glyphs become attributes ``reference`` (Ξ reference-based, ¤ reference-free) and ``family``
    (§ string-based, ε embedding-based, Δ model-based). The LLM ratings (``Beluga-13B RE 1``, ...) are
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
            metrics[column] = Measure(column, "metric", matrix, label=match["base"], attributes={
                "family": HANNA_FAMILY_GLYPHS[match["family"]], "reference": HANNA_REFERENCE_GLYPHS[match["ref"]]})
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
        f"Metrics: {len(metrics)} automatic metrics, ids as in the file; labels drop the authors' glyphs, kept as "
        "attributes: Ξ reference-based (the Human row scores itself), ¤ reference-free; § string-based, ε "
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
                      default_systems="kind=model")


def load_synthetic(files: LoaderFiles) -> LoadedData:
    """The built-in synthetic demo (no files). References: docs/methods.md sec. 9."""
    from metaeval_core.data.synthetic import synthetic_dataset

    ds = synthetic_dataset()
    return LoadedData(ds.systems, ds.inputs, ds.measures, ds.system_attributes, ds.notes)


LOADERS: Mapping[str, Callable[[LoaderFiles], LoadedData]] = {
    "synthetic": load_synthetic,
    "summeval": load_summeval,
    "realsumm": load_realsumm,
    "deutsch2022": load_deutsch2022,
    "frank": load_frank,
    "rose": load_rose,
    "xsum_hallucination": load_xsum_hallucination,
    "hanna": load_hanna,
}
