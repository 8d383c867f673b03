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

Loaders are registered by name in :data:`LOADERS` (:mod:`.catalogue`); the
registry entry's ``loader`` field selects one. This face only re-exports.

References: docs/methods.md sec. 0; each dataset's ``SOURCE.md`` in the data mirror.
"""

from __future__ import annotations

from metaeval_core.data.loaders._common import (  # noqa: F401 - the package's names
    LOADER_VERSION, LoadedData, LoaderFiles, flatten, iter_jsonl, natural_key, read_json,
)
from metaeval_core.data.loaders.catalogue import LOADERS  # noqa: F401
from metaeval_core.data.loaders.hanna import HANNA_HUMAN_SYSTEM, load_hanna  # noqa: F401
from metaeval_core.data.loaders.mtme import load_mtme  # noqa: F401
from metaeval_core.data.loaders.summarization import (  # noqa: F401
    load_deutsch2022, load_frank, load_realsumm, load_rose, load_summeval, load_xsum_hallucination,
)
from metaeval_core.data.loaders.synthetic import load_synthetic  # noqa: F401

__all__ = [
    "LOADER_VERSION",
    "LoadedData",
    "LoaderFiles",
    "flatten",
    "iter_jsonl",
    "natural_key",
    "read_json",
    "load_deutsch2022",
    "load_frank",
    "load_realsumm",
    "load_rose",
    "load_summeval",
    "load_xsum_hallucination",
    "HANNA_HUMAN_SYSTEM",
    "load_hanna",
    "load_mtme",
    "load_synthetic",
    "LOADERS",
]
