"""Read one test set and language pair of google-research/mt-metrics-eval's data layout into a Dataset.

The layout (mt-metrics-eval's README, "File organization and naming convention"), relative to a
test-set directory such as ``wmt22/``::

    human-scores/<lp>.<NAME>.<LEVEL>.score      NAME: mqm, wmt-raw, wmt-z, da, ... (may contain dots)
    metric-scores/<lp>/<METRIC>-<REF>.<LEVEL>.score   REF: refA, refA.refB, src (no reference) or all
    documents/<lp>.docs                          one "DOMAIN DOCNAME" line per segment
    sources/<lp>.txt, references/<lp>.<REF>.txt, system-outputs/<lp>/<SYSTEM>.txt

``LEVEL`` is ``seg``, ``doc``, ``domain`` or ``sys``. A ``seg`` or ``sys`` file holds ``SYSTEM SCORE``
lines (``None`` marks a missing human score): a ``sys`` file one line per system, a ``seg`` file one
block per system whose k-th line is segment k. Only the file names and their numbers are read;
the texts are never loaded (the source and reference files only give the segment count and the
reference names).

How it maps to metaeval's model (docs/methods.md sec. 0.5):

* **systems** are the ``system-outputs/<lp>/`` files (else every system named in a score file), with
  attribute ``kind`` = ``reference`` for the references scored as systems, ``mt`` otherwise;
* **inputs** are the segments, ids ``1`` ... ``n`` (the source file's line numbers), with input
  attributes ``domain`` and ``document`` from the documents file when there is one;
* ``level="seg"`` (default): every ``seg`` human score is a human measure (id ``NAME``), every ``seg``
  metric file a metric (id ``METRIC-REF``, attributes ``basename`` and ``references``); metaeval's own
  system level is then the mean of the segment scores. Systems a metric does not score (the
  reference it uses) and ``None`` human scores are NaN; segments without any human score form the
  unjudged pool. ``sys`` files whose measure has segment scores are only compared with the segment
  means (a note says where they differ, e.g. corpus BLEU); ``sys`` files with no segment scores (e.g.
  ``wmt-z``) are *not* in this view, and a note names them;
* ``level="sys"``: the ``sys`` files only, as a dataset with one pseudo-input ``system``, so that the
  system level correlates exactly the files' system scores (corpus-level metric scores, system-only
  human scores). Everything over inputs (input level, input resampling) is degenerate there.
* ``doc`` and ``domain`` files and MQM ``.rating`` files are not read (a note counts them).

References: google-research/mt-metrics-eval README (file organization); Freitag et al. (WMT 2021-2023
metrics shared tasks).
"""

from __future__ import annotations

import io
import math
import os
import re
import tempfile
import zipfile
import zlib
from collections import defaultdict
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Literal, Mapping

import numpy as np

from metaeval_core.data.conventions import WmtConventions, mtme_conventions
from metaeval_core.data.dataset import Dataset, DatasetError, Measure
from metaeval_core.data.selection import resolve_selection

MtmeLevel = Literal["seg", "sys"]
MTME_LEVELS: tuple[str, ...] = ("seg", "sys")
# Which measures a reading parses: every score file, or (for WMT's task suites, which use nothing else) the gold's
# and the primary metrics' files only, chosen by the same conventions from the file names.
MtmeMeasures = Literal["all", "gold-and-primary"]
MTME_MEASURES: tuple[str, ...] = ("all", "gold-and-primary")
FILE_LEVELS: tuple[str, ...] = ("seg", "doc", "domain", "sys")
SUBDIRS: tuple[str, ...] = ("human-scores", "metric-scores")
SYSTEM_INPUT = "system"
MAX_ZIP_BYTES = 256 << 20  # uncompressed; one language pair of a WMT test set is well below (WMT22 zh-en: 60 MB)
MAX_ZIP_MEMBERS = 10_000  # one language pair has ~100 files, a whole WMT test set ~1,000
NO_SYSTEM_METRICS = ("No system-level metric files (metric-scores/<lp>/*.sys.score) for this language pair: the "
                     "system view holds human measures only. Use the segment view (level seg), where a metric's "
                     "system score is the mean of its segment scores.")
_LP = re.compile(r"^[A-Za-z0-9_]+-[A-Za-z0-9_]+$")


@dataclass(frozen=True)
class _ScoreFile:
    path: Path
    measure: str
    level: str
    human: bool
    basename: str = ""
    references: str = ""


def follows_wmt(dataset: Dataset) -> bool:
    """True when the dataset carries WMT's conventions (mt-metrics-eval data: the built-in wmt22-zhen, or a test set
    read from mt-metrics-eval's layout), so WMT's test and WMT's average are its defaults.

    References: docs/methods.md sec. 0.6, 3.6 and 13.3.
    """
    conventions = getattr(dataset, "conventions", None)
    return conventions is not None and getattr(conventions, "name", "") == "wmt"


def _is_test_set(directory: Path) -> bool:
    return any((directory / sub).is_dir() for sub in SUBDIRS)


def _test_set_dir(directory: object) -> Path:
    if not isinstance(directory, (str, os.PathLike)):
        raise TypeError(f"directory must be a path; got {type(directory).__name__}")
    path = Path(directory).expanduser()
    if not path.is_dir():
        raise DatasetError(f"{path}: not a directory (an mt-metrics-eval test set such as .../wmt22)")
    if _is_test_set(path):
        return path
    inside = sorted(p.name for p in path.iterdir() if p.is_dir() and _is_test_set(p))
    if inside:
        raise DatasetError(f"{path} holds several mt-metrics-eval test sets ({', '.join(inside[:8])}); give one of "
                           "them as the directory")
    raise DatasetError(f"{path}: not an mt-metrics-eval test set (no human-scores/ or metric-scores/ folder)")


def language_pairs(directory: str | os.PathLike) -> tuple[str, ...]:
    """The language pairs (``en-de``, ...) an mt-metrics-eval test-set directory has scores for, sorted.

    References: mt-metrics-eval README (file organization).
    """
    root = _test_set_dir(directory)
    found: set[str] = set()
    human = root / "human-scores"
    if human.is_dir():
        found |= {p.name.split(".", 1)[0] for p in human.glob("*.score")}
    metric = root / "metric-scores"
    if metric.is_dir():
        found |= {p.name for p in metric.iterdir() if p.is_dir() and any(p.glob("*.score"))}
    return tuple(sorted(lp for lp in found if _LP.match(lp)))


def _choose_lp(root: Path, lp: str | None) -> str:
    pairs = language_pairs(root)
    if lp is not None:
        if not isinstance(lp, str) or lp not in pairs:
            raise DatasetError(f"{root}: no scores for language pair {lp!r}; it has {', '.join(pairs) or 'none'}")
        return lp
    if len(pairs) == 1:
        return pairs[0]
    if not pairs:
        raise DatasetError(f"{root}: no <lp>.<name>.<level>.score file in human-scores/ and no "
                           "metric-scores/<lp>/ folder with .score files")
    raise DatasetError(f"{root} has scores for {len(pairs)} language pairs ({', '.join(pairs)}); choose one "
                       "(--lp on the command line)")


def _score_files(root: Path, lp: str) -> list[_ScoreFile]:
    files = []
    for path in sorted((root / "human-scores").glob(f"{lp}.*.score")):
        parts = path.name[len(lp) + 1:-len(".score")].rsplit(".", 1)
        if len(parts) != 2 or not parts[0] or parts[1] not in FILE_LEVELS:
            raise DatasetError(f"{path}: a human-score file must be named {lp}.NAME.LEVEL.score with LEVEL one of "
                               f"{', '.join(FILE_LEVELS)}")
        files.append(_ScoreFile(path, parts[0], parts[1], True))
    for path in sorted((root / "metric-scores" / lp).glob("*.score")):
        parts = path.name[:-len(".score")].rsplit(".", 1)
        if len(parts) != 2 or parts[1] not in FILE_LEVELS or "-" not in parts[0]:
            raise DatasetError(f"{path}: a metric-score file must be named METRIC-REF.LEVEL.score (REF: a reference "
                               f"name, src or all; LEVEL one of {', '.join(FILE_LEVELS)})")
        basename, references = parts[0].rsplit("-", 1)
        if not basename or not references:
            raise DatasetError(f"{path}: empty metric or reference name in {parts[0]!r}")
        files.append(_ScoreFile(path, parts[0], parts[1], False, basename, references))
    return files


def _limits():
    from metaeval_core.data.upload.limits import UploadLimits

    return UploadLimits.from_environment()


def _check_size(path: Path, size: int) -> None:
    """A file this reader parses may be no larger than an upload (its text costs memory per token)."""
    limit = _limits().max_bytes
    if size > limit:
        raise DatasetError(f"{path}: {size:,} bytes; a file read here may have at most {limit:,} (the upload limit, "
                           "METAEVAL_MAX_UPLOAD_MB)")


def _lines(path: Path) -> list[str]:
    try:
        _check_size(path, path.stat().st_size)
        with open(path, encoding="utf-8") as handle:
            return handle.read().splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise DatasetError(f"{path}: cannot read the file ({error})") from error


def _read_scores(file: _ScoreFile) -> tuple[dict[str, np.ndarray], int]:
    """``{system: scores in file order}`` (read-only arrays) and the number of missing (``None``) scores."""
    try:
        stat = file.path.stat()
    except OSError as error:
        raise DatasetError(f"{file.path}: cannot read the file ({error})") from error
    _check_size(file.path, stat.st_size)
    return _parsed(str(file.path), stat.st_size, stat.st_mtime_ns)


@lru_cache(maxsize=256)
def _parsed(path: str, size: int, mtime_ns: int) -> tuple[dict[str, np.ndarray], int]:
    """One score file, parsed once per (path, size, modification time): a WMT language pair has 60-150 files of
    ~40,000 lines, and the dashboard re-reads a directory for another level or language pair.

    pyarrow's reader for the tab-separated files mt-metrics-eval writes (half pandas' CPU: a cold WMT23 zh-en load
    parses 143 files), else pandas' C reader with any whitespace; systems as codes and labels: a few bytes a line
    (a Python string per token cost ~100 bytes a line: two 45 MB files took 18 s and 1.1 GB). Anything unusual (a
    line without two fields, a score that is not a number or None, an infinite or huge score) goes to the
    line-by-line path, which names the line."""
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
        raw.decode("utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise DatasetError(f"{path}: cannot read the file ({error})") from error
    columns = _columns_by_tab(raw)
    if columns is None:
        columns = _columns_by_whitespace(raw)
    if columns is None:
        return _parsed_by_line(Path(path))
    codes, labels, values = columns
    missing = int(np.isnan(values).sum())
    with np.errstate(invalid="ignore"):
        unusual = (missing > 0 and missing > raw.count(b"None")) or bool((np.abs(values) > _max_magnitude()).any())
    if not len(values) or unusual:  # inf, nan written as a number or a huge score: said with its line
        return _parsed_by_line(Path(path))
    del raw
    starts = np.concatenate(([0], np.flatnonzero(codes[1:] != codes[:-1]) + 1, [len(codes)]))
    runs = [int(codes[k]) for k in starts[:-1]]
    if len(set(runs)) == len(runs):  # one block per system, as mt-metrics-eval writes them
        scores = {labels[c]: values[a:b] for c, a, b in zip(runs, starts[:-1], starts[1:])}
    else:
        scores = {labels[c]: values[codes == c] for c in dict.fromkeys(runs)}
    for array in scores.values():
        array.flags.writeable = False
    return scores, missing


def _columns_by_tab(raw: bytes) -> tuple[np.ndarray, list[str], np.ndarray] | None:
    """(system codes, system labels, scores) of a file of 'SYSTEM TAB SCORE' lines, or None for anything else (a
    system name with a space or a byte-order mark, a third field, a score that is not a number or None), which the
    whitespace reader then decides as before."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    if raw.startswith(b"\xef\xbb\xbf"):
        return None
    try:
        table = pacsv.read_csv(
            io.BytesIO(raw),
            read_options=pacsv.ReadOptions(column_names=["system", "score"], use_threads=False),
            parse_options=pacsv.ParseOptions(delimiter="\t", quote_char=False, double_quote=False,
                                             escape_char=False, newlines_in_values=False, ignore_empty_lines=True),
            convert_options=pacsv.ConvertOptions(
                column_types={"system": pa.dictionary(pa.int32(), pa.string()), "score": pa.float64()},
                null_values=["None"], strings_can_be_null=False, quoted_strings_can_be_null=False))
        if table.num_rows == 0:
            return None
        # Each block of the file has its own dictionary: one dictionary for the file before the codes are read.
        systems = table.column("system").unify_dictionaries().combine_chunks()
        labels = [str(name) for name in systems.dictionary.to_pylist()]
        codes = systems.indices.to_numpy(zero_copy_only=False)
        values = table.column("score").to_numpy().astype(np.float64, copy=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError, ValueError):
        return None
    if any(name.split() != [name] for name in labels):  # the whitespace reader splits these (and says so)
        return None
    return codes, labels, values


def _columns_by_whitespace(raw: bytes) -> tuple[np.ndarray, list[str], np.ndarray] | None:
    """As :func:`_columns_by_tab` with any run of spaces or tabs between the fields (pandas' C reader); None for a
    line that is not two fields."""
    import csv

    import pandas as pd

    try:
        frame = pd.read_csv(io.BytesIO(raw), sep=r"\s+", header=None, names=["system", "score", "extra"],
                            dtype={"system": "category", "score": np.float64, "extra": "category"},
                            na_values={"score": ["None"]},
                            keep_default_na=False, quoting=csv.QUOTE_NONE, engine="c", encoding="utf-8")
    except (ValueError, pd.errors.ParserError, pd.errors.EmptyDataError):
        return None
    if frame.empty or bool(set(frame["extra"].cat.categories) - {""}) or frame["system"].isna().any():
        return None
    return (frame["system"].cat.codes.to_numpy(), [str(c) for c in frame["system"].cat.categories],
            frame["score"].to_numpy(dtype=np.float64))


def _max_magnitude() -> float:
    from metaeval_core.data.upload.limits import MAX_MAGNITUDE

    return MAX_MAGNITUDE


_NONE = {"None": "nan"}


def _check_values(path: str | Path, values: np.ndarray, place) -> None:
    """Refuse infinite scores and magnitudes beyond the uploads' MAX_MAGNITUDE (their squares overflow), naming the
    file and line; ``place(k)`` gives value k's (line number, text)."""
    from metaeval_core.data.upload.limits import MAX_MAGNITUDE

    with np.errstate(invalid="ignore"):
        bad = np.isinf(values) | (np.abs(values) > MAX_MAGNITUDE)
    if bad.any():
        line, text = place(int(np.argmax(bad)))
        why = ("is not finite" if np.isinf(values[int(np.argmax(bad))]) else
               f"is larger in magnitude than {MAX_MAGNITUDE:.0e}: means, variances and correlations of such scores "
               "overflow")
        raise DatasetError(f"{path}, line {line}: the score {str(text)[:60]!r} {why}; write None for a missing score")


def _normal_names(names, where: str | Path, what: str = "system") -> dict[str, str]:
    """Each name as written -> its NFC form, after the upload's name rules (no control or invisible character, not
    too long); two names with one NFC form are refused, since they would look the same on every page."""
    import unicodedata

    from metaeval_core.data.upload.names import name_problem

    limit = _limits().max_name_length
    out: dict[str, str] = {}
    seen: dict[str, str] = {}
    for name in names:
        problem = name_problem(name, what, limit)
        if problem is not None:
            raise DatasetError(f"{where}: {problem[1]}")
        normal = unicodedata.normalize("NFC", name)
        if seen.setdefault(normal, name) != name:
            raise DatasetError(f"{where}: the {what} names {seen[normal]!r} and {name!r} are one name written in two "
                               "Unicode forms (NFC and NFD); write it one way")
        out[name] = normal
    return out


def _normal_scores(scores: Mapping[str, np.ndarray], where: Path) -> dict[str, np.ndarray]:
    mapping = _normal_names(list(scores), where)
    return {mapping[name]: values for name, values in scores.items()}


def _parsed_by_line(path: Path) -> tuple[dict[str, np.ndarray], int]:
    scores: dict[str, list[float]] = defaultdict(list)
    missing = 0
    for number, line in enumerate(_lines(path), start=1):
        if not line.strip():
            continue
        fields = line.split()
        if len(fields) != 2:
            raise DatasetError(f"{path}, line {number}: expected 'SYSTEM SCORE'; got {line.strip()[:60]!r}")
        system, text = fields
        if text == "None":
            value = math.nan
        else:
            try:
                value = float(text)
            except ValueError:
                raise DatasetError(f"{path}, line {number}: score {text!r} is neither a number nor None") from None
        if math.isinf(value) or abs(value) > _max_magnitude():
            _check_values(path, np.array([value]), lambda k: (number, text))
        if math.isnan(value):
            missing += 1
        scores[system].append(value)
    if not scores:
        raise DatasetError(f"{path}: no scores")
    return {k: np.array(v) for k, v in scores.items()}, missing


def _names_in(folder: Path, pattern: str, strip: str) -> list[str]:
    if not folder.is_dir():
        return []
    return sorted(p.name[len(strip):].rsplit(".", 1)[0] if strip else p.name.rsplit(".", 1)[0]
                  for p in folder.glob(pattern) if p.is_file())


def read_mtme(directory: str | os.PathLike, *, lp: str | None = None, level: MtmeLevel = "seg",
              dataset_id: str | None = None, measures: MtmeMeasures = "all") -> Dataset:
    """Read one language pair of a local mt-metrics-eval test-set directory.

    Parameters
    ----------
    directory : path
        The test-set directory (e.g. ``~/.mt-metrics-eval/mt-metrics-eval-v2/wmt22``), holding
        ``human-scores/`` and/or ``metric-scores/``.
    lp : str, optional
        The language pair (``en-de``); needed only when the directory has several.
    level : {'seg', 'sys'}
        ``seg``: the segment-level files (systems x segments); ``sys``: the system-level files
        only, as one pseudo-input, so that the files' own system scores are what is correlated.
    dataset_id : str, optional
        The dataset id (default ``mtme:<test set>/<lp>``, with ``/sys`` for the system view).
    measures : {'all', 'gold-and-primary'}
        ``'gold-and-primary'``: parse only the gold's and the primary metrics' score files (the eligible
        metrics' when the test set names no primary ones) and no per-rater file: what WMT's task suites read
        (:mod:`metaeval_core.analyses.suites`), a third of a WMT23 pair's files. The conventions, systems and
        segments are the full reading's (they come from the file names), and so are the matrices read.

    Returns
    -------
    Dataset
        See the module docstring for the mapping; ``notes`` say what was not read and why.

    Raises
    ------
    DatasetError
        Not a test-set directory, an unknown or ambiguous language pair, a badly named file, a
        malformed line (file and line named), a system not in ``system-outputs``, or segment
        blocks of the wrong length.

    References
    ----------
    google-research/mt-metrics-eval README (file organization and naming convention); docs/methods.md sec. 0.5.
    """
    if level not in MTME_LEVELS:
        raise ValueError(f"level must be one of {MTME_LEVELS}; got {level!r}")
    if measures not in MTME_MEASURES:
        raise ValueError(f"measures must be one of {MTME_MEASURES}; got {measures!r}")
    root = _test_set_dir(directory)
    lp = _choose_lp(root, lp)
    files = _score_files(root, lp)
    outputs = _names_in(root / "system-outputs" / lp, "*.*", "")
    outputs = list(_normal_names(outputs, root / "system-outputs" / lp).values())
    limits = _limits()
    if len(outputs) > limits.max_systems:  # before any score file is read
        raise DatasetError(f"{root / 'system-outputs' / lp}: {len(outputs):,} systems; the limit is "
                           f"{limits.max_systems:,} (METAEVAL_MAX_UPLOAD_SYSTEMS)")
    n_measures = len({f.measure for f in files if f.level == level})
    if n_measures > limits.max_measures:
        raise DatasetError(f"{root}: {n_measures:,} {level}-level score files for {lp}; the limit is "
                           f"{limits.max_measures:,} measures (METAEVAL_MAX_UPLOAD_MEASURES)")
    for file in files:
        _normal_names([file.measure], file.path, "measure")
    references = _names_in(root / "references", f"{lp}.*.*", f"{lp}.")
    n_segments = _segment_count(root, lp)
    docs = _documents(root, lp)
    if docs is not None:
        if n_segments is not None and len(docs) != n_segments:
            raise DatasetError(f"{root / 'documents' / (lp + '.docs')}: {len(docs)} lines for {n_segments} source "
                               "segments")
        n_segments = len(docs)

    view = "seg" if level == "seg" else "sys"
    in_view = [f for f in files if f.level == view]
    reference_names = set(references) | {r for f in files if not f.human
                                         for r in f.references.split(".") if r not in ("src", "all")}
    wanted = None if measures == "all" else _gold_and_primary(root.name, lp, reference_names, in_view)
    read: dict[_ScoreFile, dict[str, list[float]]] = {}
    missing: dict[str, int] = {}
    skipped: dict[str, int] = defaultdict(int)
    for file in files:
        if file.level in ("doc", "domain"):
            skipped[file.level] += 1
            continue
        if level == "sys" and file.level == "seg":
            continue  # the system view needs none of the (large) segment files
        if wanted is not None and file.measure not in wanted:
            continue
        scores, missing[file.path.name] = _read_scores(file)
        read[file] = _normal_scores(scores, file.path)
        if len(read[file]) > limits.max_systems:
            raise DatasetError(f"{file.path}: {len(read[file]):,} systems; the limit is {limits.max_systems:,} "
                               "(METAEVAL_MAX_UPLOAD_SYSTEMS)")
    rater_files = _rater_files(root, lp) if wanted is None else {}
    ratings = len(list((root / "human-scores").glob(f"{lp}.*.rating"))) - sum(map(len, rater_files.values()))

    systems = _natural(list(set(outputs) or {s for scores in read.values() for s in scores}))
    known = set(systems)
    for file, scores in read.items():
        unknown = [s for s in scores if s not in known]
        if unknown:
            raise DatasetError(f"{file.path}: system(s) {', '.join(unknown[:5])} not in system-outputs/{lp}/")
    if len(systems) > limits.max_systems:
        raise DatasetError(f"{root}: {len(systems):,} systems for {lp}; the limit is {limits.max_systems:,} "
                           "(METAEVAL_MAX_UPLOAD_SYSTEMS)")
    seg_files = [f for f in read if f.level == "seg"]
    if n_segments is None and seg_files:
        lengths = {len(v) for f in seg_files for v in read[f].values()}
        if len(lengths) != 1:
            raise DatasetError(f"{root}: segment-level files disagree on the number of segments ({sorted(lengths)}) "
                               f"and there is no sources/{lp}.txt or documents/{lp}.docs to say which is right")
        n_segments = lengths.pop()
    for file in seg_files:
        for system, values in read[file].items():
            if len(values) != n_segments:
                raise DatasetError(f"{file.path}: {len(values)} scores for system {system!r}; expected one per "
                                   f"segment ({n_segments})")
    in_level = {f.measure for f in read if f.level == level}
    cells = len(systems) * (n_segments or 1 if level == "seg" else 1) * len(in_level)
    if cells > limits.max_cells:
        raise DatasetError(f"{root}: {len(systems):,} systems x {n_segments or 1:,} segments x {len(in_level):,} "
                           f"measures make {cells:,} score cells; the limit is {limits.max_cells:,} "
                           "(METAEVAL_MAX_UPLOAD_CELLS)")
    for file in (f for f in read if f.level == "sys"):
        repeated = [s for s, v in read[file].items() if len(v) != 1]
        if repeated:
            raise DatasetError(f"{file.path}: a system-level file needs one line per system; {repeated[0]!r} has "
                               f"{len(read[file][repeated[0]])}")

    attributes = {}
    if reference_names & known:
        attributes["kind"] = tuple("reference" if s in reference_names else "mt" for s in systems)
    test_set = root.name
    conventions = mtme_conventions(
        test_set, lp, references=sorted(reference_names), systems=systems,
        humans=[f.measure for f in in_view if f.human],
        metrics={f.measure: (f.basename, f.references) for f in sorted(in_view, key=lambda f: f.measure)
                 if not f.human})
    notes = [f"mt-metrics-eval test set {test_set}, language pair {lp} ({root}).",
             "Metric ids keep the reference suffix (BLEU-refA: BLEU against reference refA; -src: no reference; "
             "-all: every reference)." + _self_scored(read, systems)]
    if "kind" in attributes:
        notes.append(f"System kind=reference: the reference translations scored as systems "
                     f"({', '.join(s for s in systems if s in reference_names)}).")
    notes.append(_conventions_note(conventions))
    if skipped:
        notes.append("Not read: " + ", ".join(f"{n} {lvl}-level file(s)" for lvl, n in sorted(skipped.items()))
                     + " (metaeval's levels are system, input and global).")
    if ratings:
        notes.append(f"Not read: {ratings} MQM .rating file(s) (the .score files carry the scores).")
    if wanted is not None:
        left = sorted({f.measure for f in files if f.level in ("seg", "sys") and f.measure not in wanted})
        notes.append(f"Read for WMT's task suites: the gold and the primary metrics only ({len(left)} other "
                     "measure(s) and the per-rater files not read).")
    if level == "seg":
        dataset = _segment_view(read, systems, n_segments, docs, attributes, notes, missing,
                                dataset_id or f"mtme:{test_set}/{lp}",
                                f"{test_set} {lp} (mt-metrics-eval, segments)", conventions)
    else:
        dataset = _system_view(read, systems, attributes, notes, missing, dataset_id or f"mtme:{test_set}/{lp}/sys",
                               f"{test_set} {lp} (mt-metrics-eval, system scores)", conventions)
    if level == "seg" and rater_files:
        raters = {f"{name}.raters": _rater_measure(f"{name}.raters", paths, systems, n_segments)
                  for name, paths in rater_files.items()}
        notes = [*dataset.notes, *(
            f"Human measure {key}: {name} recomputed from its {len(rater_files[name])} per-rater files "
            f"({lp}.{name}.rater1..{len(rater_files[name])}.seg.rating: minus the sum of each rater's error "
            f"weights), the raters kept apart; {int((np.sum(~np.isnan(m.annotators), axis=0) >= 2).sum()):,} cells "
            f"have two or more raters: a human ceiling (metaeval ceiling --human {key}; docs/methods.md sec. 14.4). "
            f"These files are a release of their own: their scores need not equal {name}'s."
            for key, m, name in ((k, v, k[:-len('.raters')]) for k, v in raters.items()))]
        dataset = replace(dataset, measures={**dataset.measures, **raters}, notes=tuple(notes))
    default = conventions.systems()
    if default and not resolve_selection(default, dataset.systems, dataset.system_attributes, strict=False):
        default = ""
    return replace(dataset, conventions=conventions, default_systems=default)


def _gold_and_primary(test_set: str, lp: str, reference_names: set[str], in_view: list[_ScoreFile]) -> set[str]:
    """The gold and the primary metrics (else the eligible ones) of the view, from the file names alone: the
    conventions :func:`read_mtme` derives after reading (they need no score and no system name for these)."""
    conventions = mtme_conventions(
        test_set, lp, references=sorted(reference_names), systems=(),
        humans=[f.measure for f in in_view if f.human],
        metrics={f.measure: (f.basename, f.references) for f in sorted(in_view, key=lambda f: f.measure)
                 if not f.human})
    return {conventions.gold, *(conventions.primary_metrics or conventions.eligible_metrics)} - {""}


_RATER = re.compile(r"^(?P<name>.+)\.rater(?P<k>[0-9]+)\.seg\.rating$")


def _rater_files(root: Path, lp: str) -> dict[str, list[Path]]:
    """Per-rater MQM files ``<lp>.<name>.rater<k>.seg.rating`` grouped by name (only names with two or more)."""
    groups: dict[str, list[tuple[int, Path]]] = defaultdict(list)
    for path in (root / "human-scores").glob(f"{lp}.*.rater*.seg.rating"):
        match = _RATER.match(path.name[len(lp) + 1:])
        if match:
            groups[match["name"]].append((int(match["k"]), path))
    return {name: [p for _, p in sorted(found)] for name, found in sorted(groups.items()) if len(found) >= 2}


def _rater_measure(name: str, paths: list[Path], systems: tuple[str, ...], n_segments: int) -> Measure:
    """One human measure whose annotators are the raters: each rating line is ``SYSTEM TAB JSON`` (its errors, each
    with its MQM weight ``score``) or ``None``; a rated segment scores minus the sum of its error weights (MQM's
    penalties, as the .score files write them)."""
    position = {s: i for i, s in enumerate(systems)}
    stack = np.full((len(paths), len(systems), n_segments), np.nan)
    for a, path in enumerate(paths):
        try:
            stat = path.stat()
        except OSError as error:
            raise DatasetError(f"{path}: cannot read the file ({error})") from error
        labels, codes, values = _ratings(str(path), stat.st_size, stat.st_mtime_ns)
        rows = np.array([position.get(label, -1) for label in labels], dtype=np.intp)[codes]
        if (rows < 0).any():
            number = int(np.argmax(rows < 0))
            raise DatasetError(f"{path}, line {number + 1}: system {labels[codes[number]][:60]!r} not in "
                               "system-outputs")
        # A system's k-th line is its segment k: the line's rank among its system's lines.
        order = np.argsort(rows, kind="stable")
        firsts = np.searchsorted(rows[order], rows[order])
        columns = np.empty(len(rows), dtype=np.intp)
        columns[order] = np.arange(len(rows)) - firsts
        if (columns >= n_segments).any():
            number = int(np.argmax(columns >= n_segments))
            raise DatasetError(f"{path}, line {number + 1}: more than {n_segments} segments for "
                               f"{labels[codes[number]]!r}")
        stack[a, rows, columns] = values
    label = f"{name.rsplit('.', 1)[0].upper()}, {len(paths)} raters"  # short: pickers show 'label [id]'
    # rater<k> is one person throughout the files (mt-metrics-eval keeps rater ids per file).
    return Measure.from_annotators(name, "human", stack, label=label,
                                   attributes={"raters": str(len(paths)), "annotators": "persons"})


@lru_cache(maxsize=64)
def _ratings(path: str, size: int, mtime_ns: int) -> tuple[tuple[str, ...], np.ndarray, np.ndarray]:
    """A per-rater file's lines as (system names, the system code of each line, its score or NaN for ``None``),
    parsed once per (path, size, modification time) as the score files are. pyarrow splits the lines (WMT23 zh-en has
    eight files of 33,592 lines) and the JSON of the rated ones is decoded in one call (a line at a time cost a third
    of a cold load); when either fails, line by line, to name the line."""
    import json

    _check_size(Path(path), size)
    columns = _rating_columns(path)
    if columns is None:
        lines = [line.partition("\t") for line in _lines(Path(path))]
        index: dict[str, int] = {}
        codes = np.array([index.setdefault(system, len(index)) for system, _, _ in lines], dtype=np.intp)
        labels = tuple(index)
        rated = [number for number, (_, _, text) in enumerate(lines) if text.strip() != "None"]
        texts = [lines[number][2] for number in rated]
    else:
        labels, codes, rated, texts = columns
    values = np.full(len(codes), np.nan)
    try:
        ratings = json.loads("[" + ",".join(texts) + "]")
        if len(ratings) != len(texts):  # a line holding two values separated by a comma
            raise ValueError
        values[rated] = [_penalty(rating) for rating in ratings]
    except (ValueError, KeyError, TypeError, RecursionError):
        for number, text in zip(rated, texts):
            try:
                values[number] = _penalty(json.loads(text))
            except (ValueError, KeyError, TypeError, RecursionError) as error:
                raise DatasetError(f"{path}, line {number + 1}: not a rating ({type(error).__name__})") from None
    codes.flags.writeable = False
    values.flags.writeable = False
    return labels, codes, values


def _rating_columns(path: str) -> tuple[tuple[str, ...], np.ndarray, list[int], list[str]] | None:
    """(system names, each line's system code, the rated lines' numbers, their JSON texts) of a file of
    'SYSTEM TAB JSON-or-None' lines, or None for anything else (an empty line, a line without one tab, bytes that are
    not UTF-8), which the line-by-line reading then names."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pacsv

    try:
        table = pacsv.read_csv(
            path,
            read_options=pacsv.ReadOptions(column_names=["system", "text"], use_threads=False),
            parse_options=pacsv.ParseOptions(delimiter="\t", quote_char=False, double_quote=False,
                                             escape_char=False, newlines_in_values=False, ignore_empty_lines=False),
            convert_options=pacsv.ConvertOptions(
                column_types={"system": pa.dictionary(pa.int32(), pa.string()), "text": pa.string()},
                null_values=[], strings_can_be_null=False, quoted_strings_can_be_null=False))
        if table.num_rows == 0:
            return None
        systems = table.column("system").unify_dictionaries().combine_chunks()
        text = table.column("text")
        rated = np.flatnonzero(~pc.equal(pc.utf8_trim_whitespace(text), "None").to_numpy(zero_copy_only=False))
        texts = text.take(pa.array(rated)).to_pylist()
    except (OSError, pa.ArrowInvalid, pa.ArrowTypeError, ValueError):
        return None
    labels = tuple(str(name) for name in systems.dictionary.to_pylist())
    codes = systems.indices.to_numpy(zero_copy_only=False).astype(np.intp)
    return labels, codes, rated.tolist(), texts


def _penalty(rating) -> float:
    return -float(sum(float(e["score"]) for e in rating["errors"])) + 0.0


# mt-metrics-eval converters/score_mqm.py's default weights (severity[/category[/subcategory]]: weight; lower case).
MQM_WEIGHTS = {"major": 5.0, "minor": 1.0, "neutral": 0.0, "major/non-translation!": 25.0,
               "minor/fluency/punctuation": 0.1}
# A system rated in two side-by-side pairings (the same output twice): one system, the mean of its two ratings.
_SXS_SYSTEMS = {"GPT4-5shot_with_refA": "GPT4-5shot", "GPT4-5shot_with_ONLINE-W": "GPT4-5shot"}


def _mqm_weight(severity: str, category: str) -> float:
    """The weight of the longest ``severity/category/...`` prefix in :data:`MQM_WEIGHTS`; 0 for none (No-error)."""
    parts = [severity.lower(), *category.lower().split("/")]
    for k in range(len(parts), 0, -1):
        key = "/".join(parts[:k])
        if key in MQM_WEIGHTS:
            return MQM_WEIGHTS[key]
    return 0.0


@lru_cache(maxsize=2)
def _sxs_rows(path: str, size: int, mtime_ns: int) -> tuple[list[str], ...]:
    """The side-by-side MQM TSV's rows, parsed once per (path, size, modification time) as the score files are."""
    import csv
    import tarfile

    try:
        with tarfile.open(path, "r:gz") as tar:
            member = next(m for m in tar.getmembers() if m.isfile() and m.name.endswith(".tsv"))
            text = tar.extractfile(member).read().decode("utf-8")  # type: ignore[union-attr]
    except (OSError, tarfile.TarError, StopIteration, UnicodeDecodeError) as error:
        raise DatasetError(f"{path}: not a gzip tar holding a .tsv ({type(error).__name__})") from None
    return tuple(csv.reader(io.StringIO(text), delimiter="\t", quoting=csv.QUOTE_NONE))


def with_sxs_mqm(dataset: Dataset, archive: str | os.PathLike, sources: str | os.PathLike) -> Dataset:
    """The dataset with one more human measure, ``mqm.sxs``: Google's side-by-side MQM (a gzip tar holding one TSV,
    google/wmt-mqm-human-evaluation), its raters kept apart.

    Rows ``system, doc, docSegId, globalSegId, rater, source, target, category, severity, metadata``, one per
    error (or ``No-error``); ``HOTW-test`` rows (attention checks) are dropped. A (system, segment, rater) scores
    minus the sum of its errors' MQM weights (:data:`MQM_WEIGHTS`); segments are joined on the source text (its
    ``<v>`` span marks removed) to the lines of ``sources``. An output rated in two pairings (GPT4-5shot) takes
    the mean of its two ratings per rater.

    References: docs/methods.md sec. 14.4; google/wmt-mqm-human-evaluation (generalMT2023); mt-metrics-eval
    ``converters/score_mqm.py`` (weights).
    """
    try:
        stat = os.stat(archive)
    except OSError as error:
        raise DatasetError(f"{archive}: cannot read the file ({error})") from None
    rows = _sxs_rows(os.fspath(archive), stat.st_size, stat.st_mtime_ns)
    line_of = {line: k for k, line in enumerate(_lines(Path(sources)))}
    header = rows[0][:10]
    if header != ["system", "doc", "docSegId", "globalSegId", "rater", "source", "target", "category", "severity",
                  "metadata"]:
        raise DatasetError(f"{archive}: unexpected header {header}")
    # globalSegId -> source line, from the rows whose source text (without its span marks) is a line verbatim (a
    # source-error row's marks can also alter the text around the span: such rows take their segment's line).
    segment_of: dict[str, int] = {}
    for row in rows[1:]:
        if len(row) >= 10 and row[3] not in segment_of and re.sub(r"</?v>", "", row[5]) in line_of:
            segment_of[row[3]] = line_of[re.sub(r"</?v>", "", row[5])]
    totals: dict[tuple[str, int, str], float] = defaultdict(float)
    for number, row in enumerate(rows[1:], start=2):
        if len(row) < 10:
            raise DatasetError(f"{archive}, line {number}: {len(row)} fields, expected 10")
        system, rater, category, severity = row[0], row[4], row[7], row[8]
        if severity == "HOTW-test":
            continue
        segment = segment_of.get(row[3])
        if segment is None:
            raise DatasetError(f"{archive}, line {number}: its source paragraph is not a line of {sources}")
        totals[(system, segment, rater)] += _mqm_weight(severity, category)
    raters = sorted({key[2] for key in totals})
    position = {s: i for i, s in enumerate(dataset.systems)}
    stack = np.full((len(raters), dataset.n_systems, dataset.n_inputs), np.nan)
    sums = np.zeros_like(stack)
    counts = np.zeros_like(stack)
    for (system, segment, rater), penalty in totals.items():
        name = _SXS_SYSTEMS.get(system, system)
        if name not in position:
            raise DatasetError(f"{archive}: system {system!r} is not a system of {dataset.id}")
        a, i = raters.index(rater), position[name]
        sums[a, i, segment] += -penalty
        counts[a, i, segment] += 1
    rated = counts > 0
    stack[rated] = sums[rated] / counts[rated] + 0.0
    measure = Measure.from_annotators("mqm.sxs", "human", stack, label="MQM, side by side (3 of 10 raters)",
                                      attributes={"raters": str(len(raters)), "annotators": "persons"})
    cells = int((rated.any(axis=0)).sum())
    note = (f"Human measure mqm.sxs: Google's side-by-side MQM for WMT23 en-de ({cells} cells: "
            f"{int(rated.any(axis=(0, 1)).sum())} paragraphs x their outputs, 3 of {len(raters)} raters each, who "
            "rated every output of the paragraph; HOTW-test attention checks dropped; GPT4-5shot, rated in two "
            "pairings, the mean of both): a human ceiling (metaeval ceiling --human mqm.sxs; docs/methods.md "
            "sec. 14.4). Apache-2.0, google/wmt-mqm-human-evaluation.")
    return replace(dataset, measures={**dataset.measures, "mqm.sxs": measure}, notes=(*dataset.notes, note))


def _self_scored(read: Mapping[_ScoreFile, Mapping[str, np.ndarray]], systems: tuple[str, ...]) -> str:
    """Which metric files score the reference they use as a system (SEScore-refA scores refA against itself)."""
    scored, unscored = [], 0
    for file, scores in read.items():
        used = [r for r in file.references.split(".") if r in systems] if not file.human else []
        for ref in used:
            values = scores.get(ref)
            if values is not None and not np.all(np.isnan(values)):
                scored.append(file.measure)  # once per file: seg and sys files share the measure name
            else:
                unscored += 1
    if not scored and not unscored:
        return ""
    text = " Most metrics have no score for the reference they use (NaN)" if unscored else ""
    if scored:
        text += ("; " if text else " ") + (f"these score it against itself: {', '.join(sorted(set(scored)))} (a "
                                           "reason WMT never scores its standard reference as a system)")
    return text + "."


def _conventions_note(conventions: WmtConventions) -> str:
    return (f"WMT conventions (from {conventions.source}): standard reference {conventions.std_ref or 'none'} "
            f"is never a system; human translations ({', '.join(conventions.human_translations) or 'none'}) only "
            f"when asked; {'outlier systems ' + ', '.join(conventions.outliers) + ' left out; ' if conventions.outliers else ''}"
            f"gold (default human measure) {conventions.gold or 'none'}; systems without a score for the "
            f"chosen human measure removed before any statistic; {len(conventions.primary_metrics)} primary "
            f"metrics (attribute primary=yes) among {len(conventions.eligible_metrics)} that use only the standard "
            f"reference or the source; metrics over every segment (pool all). Keep every system with --all-systems "
            f"(dashboard: 'Keep every system'); the judged pool with --pool judged.")


def _natural(names: list[str]) -> tuple[str, ...]:
    from metaeval_core._text import natural_key

    return tuple(sorted(names, key=natural_key))


def _segment_count(root: Path, lp: str) -> int | None:
    for name in (f"{lp}.txt", f"{lp}.jsonl"):
        path = root / "sources" / name
        if path.is_file():
            return len(_lines(path))
    return None


def _documents(root: Path, lp: str) -> list[tuple[str, str]] | None:
    path = root / "documents" / f"{lp}.docs"
    if not path.is_file():
        return None
    out = []
    for number, line in enumerate(_lines(path), start=1):
        fields = line.split()
        if len(fields) != 2:
            raise DatasetError(f"{path}, line {number}: expected 'DOMAIN DOCNAME'; got {line.strip()[:60]!r}")
        out.append((fields[0], fields[1]))
    return out


def _measure(file: _ScoreFile, matrix: np.ndarray, conventions: WmtConventions) -> Measure:
    if file.human:
        return Measure(file.measure, "human", matrix,
                       attributes={"gold": "yes"} if file.measure == conventions.gold else {})
    attributes = {"basename": file.basename, "references": file.references}
    if conventions.primary_metrics:  # known only for test sets in mt-metrics-eval's meta-info
        attributes["primary"] = "yes" if file.measure in conventions.primary_metrics else "no"
    return Measure(file.measure, "metric", matrix, attributes=attributes)


def _matrix(scores: Mapping[str, list[float]], systems: tuple[str, ...], width: int) -> np.ndarray:
    matrix = np.full((len(systems), width), np.nan)
    for i, system in enumerate(systems):
        if system in scores:
            matrix[i] = scores[system]
    return matrix


def _row_means(matrix: np.ndarray) -> np.ndarray:
    """Each row's mean over its non-NaN cells (NaN for an empty row), without numpy's all-NaN warning."""
    valid = ~np.isnan(matrix)
    count = valid.sum(axis=1)
    total = np.where(valid, matrix, 0.0).sum(axis=1)
    return np.where(count > 0, total / np.maximum(count, 1), np.nan)


def _segment_view(read, systems, n_segments, docs, attributes, notes, missing, dataset_id, title,
                  conventions) -> Dataset:
    seg = {f: s for f, s in read.items() if f.level == "seg"}
    if not seg:
        raise DatasetError("no segment-level (.seg.score) file for this language pair; read it with level='sys' "
                           "(--mtme-level sys) to use its system-level scores")
    human_seg = [f for f in seg if f.human]
    if not human_seg:
        raise DatasetError("no segment-level human scores (human-scores/<lp>.NAME.seg.score) for this language "
                           "pair; read it with level='sys' (--mtme-level sys) to use system-level human scores")
    measures: dict[str, Measure] = {}
    for file in sorted(seg, key=lambda f: (not f.human, f.measure)):
        if file.measure in measures:
            raise DatasetError(f"{file.path}: a second segment-level file for {file.measure!r}")
        measures[file.measure] = _measure(file, _matrix(seg[file], systems, n_segments), conventions)
    compared, sys_only = [], []
    for file in (f for f in read if f.level == "sys"):
        if file.measure not in measures:
            sys_only.append(file.measure)
            continue
        own = _matrix(read[file], systems, 1)[:, 0]
        means = _row_means(measures[file.measure].scores)
        both = ~np.isnan(own) & ~np.isnan(means)
        if both.any():
            gap = float(np.max(np.abs(own[both] - means[both])))
            if gap > 1e-9 * max(1.0, float(np.max(np.abs(own[both])))):
                compared.append(f"{file.measure} (up to {gap:.4g})")
    n_human_missing = {f.measure: missing[f.path.name] for f in human_seg if missing[f.path.name]}
    inputs = tuple(str(k + 1) for k in range(n_segments))
    input_attributes = {}
    if docs is not None:
        input_attributes = {"domain": tuple(d for d, _ in docs), "document": tuple(doc for _, doc in docs)}
        domains = sorted({d for d, _ in docs})
        notes.append(f"Input attributes domain ({', '.join(domains)}) and document from documents/*.docs; "
                     "select a domain with Dataset.select_inputs('domain=...').")
    notes.append(f"Inputs: the {n_segments} segments, ids 1..{n_segments} (source line numbers). metaeval's system "
                 "level is the mean of a measure's segment scores: a human measure's over the segments it scored; "
                 "a metric's over every segment with pool 'all' (WMT's convention, the default on this data), or "
                 "over each system's segments the human measure scored with pool 'judged'.")
    if n_human_missing:
        notes.append("Missing human scores (None): " + ", ".join(f"{k}: {v}" for k, v in n_human_missing.items())
                     + "; segments no human scored are unjudged (the 'all' pool of the metrics).")
    if compared:
        notes.append("Their .sys.score differs from the mean of their segment scores: " + ", ".join(compared)
                     + " (e.g. corpus-level BLEU); this view uses the segment means; level='sys' (--mtme-level sys) "
                       "uses the files' system scores.")
    if sys_only:
        notes.append(f"System-level only, not in this segment view: {', '.join(sorted(sys_only))}; read them with "
                     "level='sys' (--mtme-level sys).")
    return Dataset(id=dataset_id, systems=systems, inputs=inputs, measures=measures, system_attributes=attributes,
                   title=title, notes=tuple(notes), input_attributes=input_attributes, task="translation",
                   description="A local copy of mt-metrics-eval data (systems x segments).")


def _system_view(read, systems, attributes, notes, missing, dataset_id, title, conventions) -> Dataset:
    sys_files = [f for f in read if f.level == "sys"]
    if not any(f.human for f in sys_files):
        raise DatasetError("no system-level human scores (human-scores/<lp>.NAME.sys.score) for this language pair")
    measures: dict[str, Measure] = {}
    for file in sorted(sys_files, key=lambda f: (not f.human, f.measure)):
        if file.measure in measures:
            raise DatasetError(f"{file.path}: a second system-level file for {file.measure!r}")
        measures[file.measure] = _measure(file, _matrix(read[file], systems, 1), conventions)
    notes.append("System scores as the .sys.score files give them (corpus-level metric scores, system-level human "
                 "scores), on one pseudo-input 'system': use the system level; input-level views and input "
                 "resampling are degenerate here.")
    if not any(not f.human for f in sys_files):
        notes.insert(0, NO_SYSTEM_METRICS)
    return Dataset(id=dataset_id, systems=systems, inputs=(SYSTEM_INPUT,), measures=measures,
                   system_attributes=attributes, title=title, notes=tuple(notes), task="translation",
                   description="A local copy of mt-metrics-eval data (system-level scores).")


# -- zip archives ----------------------------------------------------------------------------------------
def read_mtme_zip(data: bytes, *, lp: str | None = None, level: MtmeLevel = "seg", name: str = "upload.zip",
                  dataset_id: str | None = None, max_bytes: int = MAX_ZIP_BYTES) -> Dataset:
    """Read an mt-metrics-eval test set from a zip archive (the test-set folder, or its content, inside).

    Members are checked before anything is written: no absolute path or ``..``, no links, and at most
    ``max_bytes`` uncompressed in all. The archive is extracted to a temporary folder that is removed
    afterwards. Other arguments as :func:`read_mtme`.

    References
    ----------
    Python ``zipfile`` documentation (extraction of untrusted archives).
    """
    if not isinstance(data, (bytes, bytearray)):
        raise TypeError(f"data must be bytes; got {type(data).__name__}")
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile as error:
        raise DatasetError(f"{name}: not a zip archive ({error})") from None
    with archive, tempfile.TemporaryDirectory(prefix="metaeval-mtme-") as folder:
        infos = archive.infolist()
        if len(infos) > MAX_ZIP_MEMBERS:
            raise DatasetError(f"{name}: {len(infos):,} members; the limit is {MAX_ZIP_MEMBERS:,}")
        total = 0
        seen: set[str] = set()
        for info in infos:
            parts = Path(info.filename).parts
            if info.filename.startswith(("/", "\\")) or ".." in parts or (parts and ":" in parts[0]):
                raise DatasetError(f"{name}: member {info.filename!r} would be written outside the archive's folder")
            if (info.external_attr >> 16) & 0o170000 == 0o120000:
                raise DatasetError(f"{name}: member {info.filename!r} is a symbolic link")
            key = info.filename.rstrip("/")
            if key in seen:  # extracting both would silently keep the last one
                raise DatasetError(f"{name}: the member {info.filename!r} appears twice in the archive; zip it once")
            seen.add(key)
            total += info.file_size
            if total > max_bytes:
                raise DatasetError(f"{name}: more than {max_bytes / (1 << 20):.3g} MB once uncompressed (its "
                                   "directory says); zip one language pair")
        _extract(archive, infos, Path(folder), name, max_bytes)
        root = _find_test_set(Path(folder), name)
        dataset = read_mtme(root, lp=lp, level=level, dataset_id=dataset_id)
        notes = tuple(n.replace(str(root), f"{name}:{root.relative_to(folder) or '.'}") for n in dataset.notes)
        from dataclasses import replace

        return replace(dataset, notes=notes)


def _extract(archive: zipfile.ZipFile, infos: list[zipfile.ZipInfo], folder: Path, name: str, max_bytes: int) -> None:
    """Write the members under ``folder``, counting the bytes actually inflated (a member whose directory entry
    understates its size is stopped at the limit, not trusted)."""
    written = 0
    try:
        for info in infos:
            target = folder.joinpath(*Path(info.filename).parts)
            if info.is_dir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            with archive.open(info) as source, open(target, "xb") as out:
                while chunk := source.read(1 << 20):
                    written += len(chunk)
                    if written > max_bytes:
                        raise DatasetError(f"{name}: more than {max_bytes / (1 << 20):.3g} MB once uncompressed; "
                                           "zip one language pair")
                    out.write(chunk)
    except DatasetError:
        raise
    except FileExistsError:
        raise DatasetError(f"{name}: the member {info.filename!r} appears twice in the archive; zip it once") from None
    except (OSError, zipfile.BadZipFile, RuntimeError, EOFError, zlib.error) as error:
        raise DatasetError(f"{name}: cannot extract the archive ({error})") from error


def _find_test_set(folder: Path, name: str) -> Path:
    found = sorted({p.parent for sub in SUBDIRS for p in folder.rglob(sub) if p.is_dir()},
                   key=lambda p: (len(p.parts), str(p)))
    if not found:
        raise DatasetError(f"{name}: no human-scores/ or metric-scores/ folder inside (an mt-metrics-eval test set)")
    shallow = [p for p in found if len(p.parts) == len(found[0].parts)]
    if len(shallow) > 1:
        raise DatasetError(f"{name} holds several test sets ({', '.join(p.name for p in shallow[:8])}); zip one")
    return shallow[0]
