"""Parse a user's score file (CSV/TSV, JSON Lines or Parquet) into a :class:`Dataset`.

Three layouts are understood (column names are matched case-insensitively and
with surrounding whitespace ignored):

* **long**: one row per score, columns ``system, input, measure, score`` and the
  optional ``annotator`` and ``kind`` (``human`` or ``metric``, see below). Aliases:
  ``system_id, summarizer_id, summarizer, model, model_id`` for *system*; ``input_id,
  doc, doc_id, document, document_id, instance_id, example_id, item, item_id`` for
  *input*; ``metric, measure_name, metric_name`` for *measure*; ``value`` for *score*;
  ``annotator_id, rater, rater_id, judge, worker, worker_id`` for *annotator*; none
  for *kind*.
* **wide**: one row per (system, input), columns ``system, input`` and one
  column per measure (every column that has no other role is a measure).
* **SacreROUGE JSON Lines**: one object per line,
  ``{"instance_id", "summarizer_id", "summarizer_type", "metrics": {...}}``;
  nested dicts flatten with ``.`` (``{"rouge-2": {"f1": 3}}`` is ``rouge-2.f1``);
  a list value holds per-annotator scores; lines whose ``summarizer_type`` is
  ``"reference"`` are skipped, other ``summarizer_type`` values become the system
  attribute ``type`` (constant per system); other keys outside ``metrics`` are named in a note.

In the long and wide layouts, a ``system_type`` (or ``summarizer_type``) column
becomes the system attribute ``type`` and an ``attr.<name>`` (or ``attr:<name>``)
column the attribute ``<name>``; its non-empty values must be constant per system. In the wide layout a
``score``/``value`` column is a measure like any other. A second id column (``doc_id`` beside ``input``) and a
saved DataFrame index (``Unnamed: 0``, ``__index_level_0__``, a pandas index named in Parquet metadata) are not
read, and a note names them: every column is used or named.

Names are read in Unicode NFC (a note says when the file wrote another form); a name with an invisible
character (zero-width, bidi control, BOM) or a control/line-separator character (U+0085, U+2028, U+2029) is
refused; U+200C/U+200D are kept between two non-ASCII letters (Persian, Devanagari spelling) unless two names
differ only by them. A key given twice in a JSON object is refused. Scores beyond +-MAX_MAGNITUDE (1e150) are refused:
their sums and squares would overflow float64 in the statistics.

Which measures are human judgments (the others are automatic metrics), first rule that applies:

1. the ``human_measures=`` argument of :func:`read_user_file` (the dashboard's "Human measures"
   box, the CLI's ``--human-measures``); where it contradicts a ``kind`` column, the argument wins
   and a note says so;
2. the long layout's ``kind`` column: ``human`` or ``metric`` (case-insensitive, surrounding
   whitespace ignored), the same on every row of a measure and given on every row; a column
   that is empty on every row counts as absent, one empty on some rows only is an error;
3. detection: a measure with per-annotator scores (an ``annotator`` column, a JSON list) or a
   name :func:`looks_human` accepts (``human.*``, ``expert.*``, ``turker.*``, ``relevance`` ...).

The wide layout and SacreROUGE JSON Lines have no ``kind``: rules 1 and 3 apply.

The file is never executed or unpickled: CSV is read as text (``dtype=str``)
and converted by this module, JSON with :func:`json.loads`, Parquet with
pyarrow (plain columns only). Names (systems, inputs, measures, annotators)
are kept verbatim apart from surrounding whitespace, even when they look like
HTML or spreadsheet formulas: escaping them is the renderer's job.

The way back: :func:`dataset_to_long_frame` writes a :class:`Dataset` as a long table
that :func:`read_user_file` reads back to the same systems, inputs, measures (with their
``kind``), scores, per-annotator scores and system attributes, with nothing to declare.

References: docs/methods.md sec. 0 (the data model); datasets/README.md (the
SacreROUGE JSONL convention).

The package's parts: ``limits`` (UploadError, UploadLimits, the message context), ``source`` (bytes, gzip,
format, decoding), ``csv_reader``/``parquet_reader``/``jsonl_reader`` (one reader per format), ``names``
(column roles, layouts, human measures, name checks), ``tables`` (long/wide tables to dense arrays),
``reader`` (:func:`read_user_file`), ``report`` (:func:`validation_report`, what to check before the
numbers), ``export`` (the way back).
"""

from __future__ import annotations

from metaeval_core.data.upload.export import check_long_export, dataset_to_long_frame, neutralise_cell, safe_csv
from metaeval_core.data.upload.limits import UPLOAD_ERROR_KINDS, Format, Layout, UploadError, UploadLimits
from metaeval_core.data.upload.names import HUMAN_NAMES, HUMAN_PREFIXES, HUMAN_SUFFIXES, detect_layout, looks_human
from metaeval_core.data.upload.reader import read_user_file
from metaeval_core.data.upload.report import ReportWarning, UploadReport, measure_role, validation_report

__all__ = [
    "Format",
    "Layout",
    "HUMAN_NAMES",
    "HUMAN_PREFIXES",
    "HUMAN_SUFFIXES",
    "ReportWarning",
    "UPLOAD_ERROR_KINDS",
    "UploadError",
    "UploadLimits",
    "UploadReport",
    "check_long_export",
    "dataset_to_long_frame",
    "detect_layout",
    "looks_human",
    "read_user_file",
    "validation_report",
    "measure_role",
    "neutralise_cell",
    "safe_csv",
]
