"""Summary and reference texts of a dataset, for simulations that re-score summaries.

Only SummEval ships its texts in the data mirror (``summeval/bartscore/``, from
neulab/BARTScore; see the mirror's ``summeval/SOURCE.md``):

* ``summeval_bartscore_summaries.jsonl`` (``doc_id``, ``system``, ``summary``) and
  ``summeval_bartscore_documents.jsonl`` (``doc_id``, ``ref_summ``, ...): plain
  conversions of ``data.pkl``; derived files without a download URL, so they are
  read from the data directory when present;
* ``data.pkl``: the upstream file (a plain-builtins pickle), read with the
  restricted unpickler :func:`metaeval_core.data.safe_pickle.safe_load` when the
  jsonl files are absent.

Every file is checked against the sha256 of the mirror's ``MANIFEST.json``
before it is parsed. The reference of a summary is the single original CNN/DM
reference (``ref_summ``), the one the dataset's SacreROUGE scores were computed
against.

References: docs/methods.md sec. 9 (TACL 2021 sec. 5.2 needs texts for ROUGE-1 on a
random k% of the summary's tokens).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

import numpy as np

from metaeval_core.data.dataset import Dataset, DatasetError
from metaeval_core.data.text_model import ExampleTexts

# Paths (relative to the data directory) and sha256 copied from the mirror's MANIFEST.json.
SUMMEVAL_SUMMARIES = "summeval/bartscore/summeval_bartscore_summaries.jsonl"
SUMMEVAL_DOCUMENTS = "summeval/bartscore/summeval_bartscore_documents.jsonl"
SUMMEVAL_PICKLE = "summeval/bartscore/data.pkl"
_SHA256 = {
    SUMMEVAL_SUMMARIES: "4d8988d4a66abb2198deba5bc8c23e5abf05d3a4c2a61968ba0a4f0ba3d930b7",
    SUMMEVAL_DOCUMENTS: "841234507afebe9a7e74798513a28ad94dbf9552c9a02be7ad5d138248b00966",
    SUMMEVAL_PICKLE: "008f1639a3352f0248cac88b74ff431c27287a027a888902ef425a26005f0acf",
}

# Dataset ids whose texts this module can load.
TEXT_DATASETS: tuple[str, ...] = ("summeval",)


@dataclass(frozen=True, eq=False)
class SummaryTexts:
    """Summaries (system x input) and one reference per input.

    Attributes
    ----------
    dataset_id : str
    systems, inputs : tuple of str
        Row and column labels of ``summaries``.
    summaries : numpy.ndarray of object, shape (N, M)
        The summary of system i on input j; ``None`` where there is none.
    references : tuple of str
        The reference summary of each input.
    source : str
        The file(s) the texts were read from.
    documents : tuple of str
        The source document of each input (empty when not read).
    """

    dataset_id: str
    systems: tuple[str, ...]
    inputs: tuple[str, ...]
    summaries: np.ndarray
    references: tuple[str, ...]
    source: str = ""
    documents: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        shape = (len(self.systems), len(self.inputs))
        if self.summaries.shape != shape:
            raise ValueError(f"summaries must have shape {shape} (systems x inputs); got {self.summaries.shape}")
        if len(self.references) != len(self.inputs):
            raise ValueError(
                f"references must hold one text per input ({len(self.inputs)}); got {len(self.references)}"
            )

    @property
    def n_summaries(self) -> int:
        return int(sum(s is not None for s in self.summaries.ravel()))

    def aligned(self, dataset: Dataset, *, judged_only: bool = True) -> "SummaryTexts":
        """The texts reordered to ``dataset``'s systems and (judged) inputs.

        A system or input of the dataset that has no text gets ``None`` summaries
        (and an empty reference), so the caller can treat those cells as missing.
        """
        if not isinstance(dataset, Dataset):
            raise TypeError(f"dataset must be a Dataset; got {type(dataset).__name__}")
        inputs = [j for j, keep in zip(dataset.inputs, dataset.judged) if keep or not judged_only]
        row = {s: i for i, s in enumerate(self.systems)}
        col = {j: k for k, j in enumerate(self.inputs)}
        out = np.full((dataset.n_systems, len(inputs)), None, dtype=object)
        for i, system in enumerate(dataset.systems):
            if system not in row:
                continue
            for k, input_id in enumerate(inputs):
                if input_id in col:
                    out[i, k] = self.summaries[row[system], col[input_id]]
        references = tuple(self.references[col[j]] if j in col else "" for j in inputs)
        documents = tuple(self.documents[col[j]] if j in col else "" for j in inputs) if self.documents else ()
        return SummaryTexts(self.dataset_id, dataset.systems, tuple(inputs), out, references, self.source, documents)


def _resolve(data_dir: object) -> Path:
    if data_dir is None:
        from metaeval_core.data.registry import data_dir as default_dir

        return default_dir()
    if not isinstance(data_dir, (str, os.PathLike)):
        raise TypeError(f"data_dir must be a path or None; got {type(data_dir).__name__}")
    return Path(data_dir).expanduser()


def _verified(directory: Path, relative: str) -> Path:
    from metaeval_core.data.registry import file_sha256

    path = directory / relative
    actual = file_sha256(path)
    if actual != _SHA256[relative]:
        raise DatasetError(
            f"{path}: sha256 {actual[:12]}... does not match the mirror's {_SHA256[relative][:12]}...; "
            "the file is corrupt or from another release"
        )
    return path


def texts_available(dataset_id: str, *, data_dir: Path | str | None = None) -> bool:
    """Whether :func:`load_texts` can find texts for ``dataset_id`` in ``data_dir`` (no checksum is computed)."""
    if dataset_id not in TEXT_DATASETS:
        return False
    directory = _resolve(data_dir)
    jsonl = (directory / SUMMEVAL_SUMMARIES).is_file() and (directory / SUMMEVAL_DOCUMENTS).is_file()
    return jsonl or (directory / SUMMEVAL_PICKLE).is_file()


def _from_records(summaries: list[tuple[str, str, str]], references: Mapping[str, str], source: str,
                  documents: Mapping[str, str] | None = None) -> SummaryTexts:
    systems = sorted({s for _, s, _ in summaries}, key=_system_key)
    inputs = sorted(references)
    row = {s: i for i, s in enumerate(systems)}
    col = {j: k for k, j in enumerate(inputs)}
    matrix = np.full((len(systems), len(inputs)), None, dtype=object)
    for doc_id, system, text in summaries:
        if doc_id not in col:
            raise DatasetError(f"{source}: summary of {system!r} on {doc_id!r} has no reference document")
        matrix[row[system], col[doc_id]] = text
    return SummaryTexts("summeval", tuple(systems), tuple(inputs), matrix, tuple(references[j] for j in inputs), source,
                        tuple(documents.get(j, "") for j in inputs) if documents else ())


def _system_key(name: str) -> tuple:
    # SummEval ids M0..M23 sort numerically; anything else sorts after, by name.
    return (0, int(name[1:]), name) if name[:1] == "M" and name[1:].isdigit() else (1, 0, name)


def load_summeval_texts(*, data_dir: Path | str | None = None) -> SummaryTexts:
    """SummEval's 1,600 summaries and the 100 original CNN/DM references.

    Parameters
    ----------
    data_dir : path, optional
        The data directory (default: ``$METAEVAL_DATA_DIR`` or ``data/cache``).

    Returns
    -------
    SummaryTexts
        16 systems x 100 documents. Use :meth:`SummaryTexts.aligned` to match a
        dataset's system and input order.

    Raises
    ------
    DatasetError
        No text file is present, a file's sha256 does not match the mirror's
        MANIFEST, or the files are inconsistent.

    References
    ----------
    docs/methods.md sec. 9; the mirror's ``summeval/SOURCE.md`` (section C).
    """
    directory = _resolve(data_dir)
    if (directory / SUMMEVAL_SUMMARIES).is_file() and (directory / SUMMEVAL_DOCUMENTS).is_file():
        references, documents = {}, {}
        with open(_verified(directory, SUMMEVAL_DOCUMENTS), encoding="utf-8") as handle:
            for line in handle:
                if line.strip():
                    record = json.loads(line)
                    references[str(record["doc_id"])] = str(record["ref_summ"])
                    documents[str(record["doc_id"])] = str(record.get("src", ""))
        summaries = []
        with open(_verified(directory, SUMMEVAL_SUMMARIES), encoding="utf-8") as handle:
            for line in handle:
                if line.strip():
                    record = json.loads(line)
                    summaries.append((str(record["doc_id"]), str(record["system"]), str(record["summary"])))
        return _from_records(summaries, references, f"{SUMMEVAL_SUMMARIES} + {SUMMEVAL_DOCUMENTS}", documents)
    if (directory / SUMMEVAL_PICKLE).is_file():
        from metaeval_core.data.safe_pickle import safe_load

        data = safe_load(_verified(directory, SUMMEVAL_PICKLE))
        if not isinstance(data, dict):
            raise DatasetError(f"{SUMMEVAL_PICKLE}: expected a dict keyed by doc_id")
        references, documents = {}, {}
        summaries = []
        for doc_id, entry in data.items():
            references[str(doc_id)] = str(entry["ref_summ"])
            documents[str(doc_id)] = str(entry.get("src", ""))
            for system, summary in entry["sys_summs"].items():
                summaries.append((str(doc_id), str(system), str(summary["sys_summ"])))
        return _from_records(summaries, references, SUMMEVAL_PICKLE, documents)
    raise DatasetError(
        f"SummEval texts not found in {directory}: need {SUMMEVAL_SUMMARIES} and {SUMMEVAL_DOCUMENTS} "
        f"(derived files, no download URL) or {SUMMEVAL_PICKLE}"
    )


def load_texts(dataset_id: str, *, data_dir: Path | str | None = None) -> SummaryTexts:
    """The texts of a built-in dataset (only ``'summeval'`` has them).

    References
    ----------
    docs/methods.md sec. 9.
    """
    if not isinstance(dataset_id, str):
        raise TypeError(f"dataset_id must be a string; got {type(dataset_id).__name__}")
    if dataset_id not in TEXT_DATASETS:
        raise ValueError(
            f"dataset_id must be one with texts ({', '.join(TEXT_DATASETS)}); got {dataset_id!r}"
        )
    return load_summeval_texts(data_dir=data_dir)


# -- texts behind the numbers: one view over every dataset that has them (docs/methods.md sec. 19) -----------
REALSUMM_SUMMARIES = "realsumm/realsumm_summaries.jsonl"
# From the mirror's MANIFEST.json (a derived file without a download URL).
_SHA256[REALSUMM_SUMMARIES] = "e7afa469d96663eb5e3c7eec3de9abdc65b934ae305daf12dbcef82ab931fe6c"
# Texts per input and per cell are shown, never scored, so a very long file is refused rather than read.
_MAX_TEXT_BYTES = 64 * 1024 * 1024


def _matrix_for(dataset: Dataset, cells: Mapping[tuple[str, str], str]) -> np.ndarray:
    out = np.full((dataset.n_systems, len(dataset.inputs)), None, dtype=object)
    column = {j: k for k, j in enumerate(dataset.inputs)}
    row = {s: i for i, s in enumerate(dataset.systems)}
    for (system, input_id), text in cells.items():
        if system in row and input_id in column:
            out[row[system], column[input_id]] = text
    return out


def _summeval_example_texts(dataset: Dataset, directory: Path) -> ExampleTexts:
    texts = load_summeval_texts(data_dir=directory).aligned(dataset, judged_only=False)
    documents = texts.documents or ("",) * len(texts.inputs)
    return ExampleTexts(dataset.id, dataset.systems, texts.inputs, texts.summaries, tuple(documents),
                        texts.references, texts.source)


def _realsumm_example_texts(dataset: Dataset, directory: Path) -> ExampleTexts:
    cells: dict[tuple[str, str], str] = {}
    references: dict[str, str] = {}
    with open(_verified(directory, REALSUMM_SUMMARIES), encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                record = json.loads(line)
                doc = str(record["doc_id"])
                cells[(str(record["system"]), doc)] = str(record["summary"])
                references[doc] = str(record.get("reference", ""))
    return ExampleTexts(dataset.id, dataset.systems, dataset.inputs, _matrix_for(dataset, cells),
                        ("",) * len(dataset.inputs), tuple(references.get(j, "") for j in dataset.inputs),
                        REALSUMM_SUMMARIES)


def _text_lines(path: Path, expected: int, sha256: str | None) -> list[str]:
    from metaeval_core.data.registry import file_sha256

    if path.stat().st_size > _MAX_TEXT_BYTES:
        raise DatasetError(f"{path}: {path.stat().st_size:,} bytes; texts larger than {_MAX_TEXT_BYTES:,} are not read")
    if sha256 is not None and file_sha256(path) != sha256:
        raise DatasetError(f"{path}: sha256 does not match the registry's; the file is corrupt or from another release")
    lines = path.read_text(encoding="utf-8").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if len(lines) != expected:
        raise DatasetError(f"{path}: {len(lines):,} lines for {expected:,} segments")
    return lines


def _mtme_example_texts(dataset: Dataset, directory: Path) -> ExampleTexts | None:
    from metaeval_core.data.registry import dataset_info

    info = dataset_info(dataset.id, data_dir=directory)
    files = {f.path: f.sha256 for f in (*info.files, *info.optional_files)}
    sources = [p for p in files if "/sources/" in p and p.endswith(".txt")]
    if len(sources) != 1:
        return None
    source_path = sources[0]
    root, lp = source_path.rsplit("/sources/", 1)[0], source_path.rsplit("/", 1)[1][: -len(".txt")]
    n = len(dataset.inputs)
    if tuple(dataset.inputs) != tuple(str(k) for k in range(1, n + 1)):
        return None
    source_lines = _text_lines(directory / source_path, n, files[source_path])
    conventions = getattr(dataset, "conventions", None)
    std_ref = getattr(conventions, "std_ref", "") or "refA"
    ref_path = f"{root}/references/{lp}.{std_ref}.txt"
    references = _text_lines(directory / ref_path, n, files[ref_path]) if ref_path in files else [""] * n
    outputs = np.full((dataset.n_systems, n), None, dtype=object)
    for i, system in enumerate(dataset.systems):
        path = f"{root}/system-outputs/{lp}/{system}.txt"
        if path in files and (directory / path).is_file():
            outputs[i] = _text_lines(directory / path, n, files[path])
    return ExampleTexts(dataset.id, dataset.systems, dataset.inputs, outputs, tuple(source_lines), tuple(references),
                        f"{root}/sources, references/{lp}.{std_ref}.txt, system-outputs/{lp}/")


_EXAMPLE_READERS = {
    "summeval": _summeval_example_texts,
    "summeval-naacl2022": _summeval_example_texts,
    "realsumm": _realsumm_example_texts,
    "realsumm-naacl2022": _realsumm_example_texts,
    "wmt22-zhen": _mtme_example_texts,
}


def example_texts(dataset: Dataset, *, data_dir: Path | str | None = None) -> ExampleTexts | None:
    """The texts behind ``dataset``'s cells (outputs, sources, references), or None when it has none.

    Built-in datasets whose texts are in the data mirror: SummEval (summaries, source documents, references),
    REALSumm (summaries, references) and WMT22 zh-en (translations, sources, the standard reference). An
    uploaded dataset carries its own texts when its file had a ``text`` column (:attr:`Dataset.texts`).
    HANNA's stories, FRANK, ROSE and the XSum files are not in the mirror: None.

    Raises
    ------
    DatasetError
        A text file is present but corrupt (checksum, line count).

    References
    ----------
    docs/methods.md sec. 19.
    """
    if not isinstance(dataset, Dataset):
        raise TypeError(f"dataset must be a Dataset; got {type(dataset).__name__}")
    carried = getattr(dataset, "texts", None)
    if isinstance(carried, ExampleTexts):
        return carried
    reader = _EXAMPLE_READERS.get(dataset.id)
    if reader is None:
        return None
    directory = _resolve(data_dir)
    try:
        return reader(dataset, directory)
    except FileNotFoundError:
        return None
