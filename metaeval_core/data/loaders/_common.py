"""Shared parts of the built-in loaders: the files a loader gets, what it returns, JSON lines, a cell accumulator.

References: docs/methods.md sec. 0.
"""

from __future__ import annotations

import gzip
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

import numpy as np

from metaeval_core._text import natural_key  # noqa: F401 - the loaders' name for it
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
    task: str = ""
    annotator_identity: str = "unknown"
    input_attributes: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    conventions: Any = None

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
            task=self.task,
            annotator_identity=self.annotator_identity,
            input_attributes=self.input_attributes,
            conventions=self.conventions,
            **metadata,
        )


# ---------------------------------------------------------------------------
# Helpers: JSON lines, a cell accumulator (natural order: metaeval_core._text.natural_key)
# ---------------------------------------------------------------------------
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
