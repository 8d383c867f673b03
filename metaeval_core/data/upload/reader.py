"""read_user_file: the file to a checked Dataset."""

from __future__ import annotations

import os
import re
from typing import Any, Mapping, Sequence

import numpy as np

from metaeval_core.data.dataset import Dataset, DatasetError, Measure
from metaeval_core.data.upload.csv_reader import _parse_csv
from metaeval_core.data.upload.jsonl_reader import _parse_jsonl
from metaeval_core.data.upload.limits import Format, UploadError, UploadLimits, _Context, _list_names, _show
from metaeval_core.data.upload.names import looks_human
from metaeval_core.data.upload.parquet_reader import _parse_parquet
from metaeval_core.data.upload.source import _check_request, _decode, _read_content
from metaeval_core.data.upload.tables import _Parsed, _from_table


# -- the dataset -----------------------------------------------------------------------
def _classify(parsed: _Parsed, human_measures: list[str] | None, ctx: _Context) -> dict[str, str]:
    """Each measure's kind: ``human_measures`` if given, else the 'kind' column, else annotated or conventionally
    named ones."""
    names = list(parsed.order)
    if human_measures is not None:
        unknown = [h for h in human_measures if h not in names]
        if unknown:
            ctx.fail("unknown-measure", f"human_measures names {_list_names(unknown)}, which the file does not have; "
                     f"its measures are {_list_names(names)}")
        chosen = set(human_measures)
        ctx.notes.append(f"human measures as requested: {', '.join(human_measures)}")
        overridden = [n for n in names if parsed.kinds and (parsed.kinds[n] == "human") != (n in chosen)]
        if overridden:
            ctx.notes.append(
                "the requested human measures override the file's 'kind' column for "
                + ", ".join(f"{n!r} (file: {parsed.kinds[n]})" for n in overridden)
            )
    elif parsed.kinds:
        chosen = {n for n in names if parsed.kinds[n] == "human"}
        ctx.notes.append("human measures as given by the 'kind' column: " + (", ".join(sorted(chosen)) or "none"))
    else:
        chosen = {n for n in names if n in parsed.annotators or looks_human(n)}
        if chosen:
            ctx.notes.append(
                "human measures recognised by per-annotator scores or by name: " + ", ".join(sorted(chosen))
            )
    return {n: ("human" if n in chosen else "metric") for n in names}


def _check_dataset(parsed: _Parsed, kinds: Mapping[str, str], measures: Mapping[str, Measure], ctx: _Context,
                   *, partial: bool = False) -> None:
    """The rules a usable dataset must meet, in a fixed order (``partial``: only that no measure is empty)."""
    if partial:
        for name, measure in measures.items():
            if np.isnan(measure.scores).all():
                ctx.fail("all-nan-measure", f"the measure {name!r} has no score at all (every cell is empty/NaN); "
                         f"fill it in or drop the column", column=name)
        return
    if len(parsed.systems) < 2:
        ctx.fail("too-few-systems", f"only {len(parsed.systems)} system ({_list_names(parsed.systems)}); at least 2 "
                 f"are needed to correlate a metric with human judgments")
    humans = [n for n, k in kinds.items() if k == "human"]
    metrics = [n for n, k in kinds.items() if k == "metric"]
    if not humans:
        ctx.fail(
            "no-human-measure",
            f"none of the measures ({_list_names(metrics)}) is recognised as a human judgment; name one with the "
            f"prefix 'human.' (e.g. 'human.relevance'), give per-annotator scores (an 'annotator' column in the long "
            f"layout, or a JSON list), mark it 'human' in a 'kind' column (long layout), or choose the human "
            f"measures explicitly (human_measures=[...])",
        )
    if not metrics:
        ctx.fail("no-metric-measure", f"every measure ({_list_names(humans)}) is a human judgment; add at least one "
                 f"automatic metric, or choose the human measures explicitly (human_measures=[...])")
    for name, measure in measures.items():
        if np.isnan(measure.scores).all():
            if measure.kind == "human":
                ctx.fail("no-judged-inputs", f"the human measure {name!r} has no score at all, so it judges no "
                         f"input; fill it in or drop it", column=name)
            ctx.fail("all-nan-measure", f"the metric {name!r} has no score at all (every cell is empty/NaN); fill it "
                     f"in or drop the column", column=name)


def _notes(dataset_measures: Mapping[str, Measure], parsed: _Parsed, ctx: _Context) -> None:
    tops = {}
    for name, measure in dataset_measures.items():
        tops[name] = float(np.nanmax(np.abs(measure.scores)))
    small = [n for n, t in tops.items() if t <= 1.0]
    large = [n for n, t in tops.items() if t > 10.0]
    if small and large:
        ctx.notes.append(
            f"measures use different scales (within [-1, 1]: {_list_names(small, 5)}; above 10: "
            f"{_list_names(large, 5)}); correlations do not depend on scale, thresholds do"
        )
    risky = [n for n in [*parsed.systems, *parsed.inputs, *dataset_measures] if n[:1] in ("=", "@", "+")
             or "<" in n]
    if risky:
        ctx.notes.append(
            f"{len(risky)} name(s) look like spreadsheet formulas or HTML (e.g. {_show(risky[0])}); they are kept "
            f"verbatim as text"
        )


def _dataset_id(ctx: _Context, dataset_id: str | None) -> str:
    if dataset_id:
        return dataset_id.strip()
    stem = ctx.file.split("/")[-1]
    for suffix in (".gz", ".gzip", ".csv", ".tsv", ".tab", ".txt", ".jsonl", ".ndjson", ".json", ".parquet", ".pq"):
        if stem.lower().endswith(suffix):
            stem = stem[: -len(suffix)]
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", stem).strip("-._")[:60] or "file"
    return f"upload-{slug}"


def read_user_file(
    source: str | os.PathLike | bytes | Any,
    *,
    name: str | None = None,
    format: Format | None = None,
    human_measures: Sequence[str] | None = None,
    limits: UploadLimits = UploadLimits(),
    dataset_id: str | None = None,
    partial: bool = False,
) -> Dataset:
    """Read a user's score file into a :class:`Dataset`, or explain exactly what is wrong with it.

    Parameters
    ----------
    source : str, os.PathLike, bytes or binary file-like
        A path (a ``str`` is always a path, never content), the bytes, or an object with
        ``read()`` (e.g. Streamlit's ``UploadedFile``; its ``.name`` is used when ``name``
        is not given).
    name : str, optional
        The display name used in messages and to infer the format from its extension:
        ``.csv``, ``.tsv``/``.tab`` (tab separated), ``.jsonl``/``.ndjson``/``.json``
        (JSON Lines), ``.parquet``/``.pq``, each optionally with ``.gz``; ``.txt`` or no
        extension means "look at the content". Gzip is also recognised by its magic bytes.
        A CSV's separator (``,``, tab or ``;``) is the most frequent of them in the header.
    format : {'csv', 'jsonl', 'parquet'}, optional
        Overrides the extension.
    human_measures : sequence of str, optional
        The measures that are human judgments; all others are metrics. It overrides a
        long file's ``kind`` column (a note names the measures where they differ). When
        ``None`` (or empty), the ``kind`` column decides when the file has one; otherwise
        a measure is human when it has per-annotator scores (an ``annotator``
        column, a JSON list) or when :func:`looks_human` accepts its name (prefix
        ``human.``/``human:``/``expert.``/``turker.`` ..., or a known name such as
        ``ground-truth``, ``litepyramid.recall``, ``Factuality``, ``relevance``,
        ``coherence``, ``consistency``, ``fluency``, ``overall``, ``score_human``).
    limits : UploadLimits
        Size limits; the byte limit is checked before anything is parsed.
    dataset_id : str, optional
        The dataset's id; default ``upload-<file stem>``.
    partial : bool
        Read a file meant to be merged into another dataset (the what-if page): it may hold a single
        system, only human or only metric measures, and fewer than 2 judged inputs. Empty measures are
        still rejected.

    Returns
    -------
    Dataset
        Systems and inputs in order of first appearance; missing cells are NaN; an input
        is judged when some human measure scores it (inputs with metric scores only are
        the unjudged pool). Per-annotator human scores are kept (``Measure.annotators``).
        ``notes`` say which measures were taken as human and why, and flag mixed scales,
        skipped reference lines and formula/HTML-looking names.

    Raises
    ------
    UploadError
        With a ``kind`` from :data:`UPLOAD_ERROR_KINDS` and a message naming the file and,
        where it applies, the line/row and column.
    TypeError
        When an argument has the wrong Python type (a programming error, not a file problem).

    Notes
    -----
    Layout rules are in the module docstring. Surrounding whitespace is stripped from
    names and scores; empty, ``NA``, ``N/A``, ``NaN``, ``null`` and ``None`` scores are
    missing; ``inf`` is an error. Names are never evaluated: ``=cmd|...`` or ``<script>``
    stay plain strings.
    """
    display, fmt, humans = _check_request(source, name, format, human_measures, limits, dataset_id)
    ctx = _Context(file=display, limits=limits, partial=partial)
    raw = _read_content(source, fmt, ctx)
    if ctx.fmt == "parquet":
        ctx.row_word = "row"
        frame, rows = _parse_parquet(raw, ctx)
        parsed = _from_table(frame, rows, ctx)
    else:
        text = _decode(raw, ctx)
        if not text.strip():
            ctx.fail("empty-file", "the file holds only whitespace")
        if ctx.fmt == "jsonl":
            parsed = _parse_jsonl(text, ctx)
        else:
            frame, rows = _parse_csv(text, ctx)
            parsed = _from_table(frame, rows, ctx)
    kinds = _classify(parsed, humans, ctx)
    measures: dict[str, Measure] = {}
    for measure_name, kind in kinds.items():
        if measure_name in parsed.annotators:
            measures[measure_name] = Measure.from_annotators(measure_name, kind, parsed.annotators[measure_name])
        else:
            measures[measure_name] = Measure(measure_name, kind, parsed.matrices[measure_name])
    _check_dataset(parsed, kinds, measures, ctx, partial=partial)
    judged = np.zeros(len(parsed.inputs), dtype=bool)
    for measure in measures.values():
        if measure.kind == "human":
            judged |= ~np.isnan(measure.scores).all(axis=0)
    if judged.sum() < 2 and not partial:
        ctx.fail("too-few-inputs", f"only {int(judged.sum())} input(s) have human scores (judged) out of "
                 f"{len(parsed.inputs)}; at least 2 judged inputs are needed")
    _notes(measures, parsed, ctx)
    if ctx.normalised:
        written, normal = next(iter(ctx.normalised.items()))
        ctx.notes.append(
            f"{len(ctx.normalised)} name(s) were written in a decomposed Unicode form and are read in the composed "
            f"form (NFC), e.g. {ascii(written)} as {normal!r}; names that differed only in this form are one name"
        )
    n_unjudged = int((~judged).sum())
    layout = "SacreROUGE JSON Lines" if parsed.layout == "jsonl" else f"{parsed.layout} layout"
    try:
        return Dataset(
            id=_dataset_id(ctx, dataset_id),
            systems=parsed.systems,
            inputs=parsed.inputs,
            measures=measures,
            system_attributes=parsed.attributes,
            title=display,
            description=(
                f"Uploaded file {display!r} ({ctx.fmt}, {layout}): {len(parsed.systems)} systems, "
                f"{len(parsed.inputs)} inputs ({int(judged.sum())} judged, {n_unjudged} unjudged), "
                f"{sum(1 for k in kinds.values() if k == 'human')} human and "
                f"{sum(1 for k in kinds.values() if k == 'metric')} metric measures."
            ),
            notes=tuple(ctx.notes),
            texts=parsed.texts,
        )
    except UploadError:
        raise
    except DatasetError as error:  # should not happen after the checks above; keep the contract anyway
        ctx.fail("invalid-dataset", str(error))
