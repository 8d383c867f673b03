"""The loaders of score datasets by name: a registry entry's ``loader`` field selects one (``kind: scores``;
pairwise-verdict datasets have their loaders in :mod:`metaeval_core.judges.loaders`)."""

from __future__ import annotations

from typing import Callable, Mapping

from metaeval_core.data.loaders._common import LoadedData, LoaderFiles
from metaeval_core.data.loaders.hanna import load_hanna
from metaeval_core.data.loaders.mtme import load_mtme
from metaeval_core.data.loaders.summarization import (
    load_deutsch2022, load_frank, load_realsumm, load_rose, load_summeval, load_xsum_hallucination,
)
from metaeval_core.data.loaders.synthetic import load_synthetic

LOADERS: Mapping[str, Callable[[LoaderFiles], LoadedData]] = {
    "synthetic": load_synthetic,
    "summeval": load_summeval,
    "realsumm": load_realsumm,
    "deutsch2022": load_deutsch2022,
    "frank": load_frank,
    "rose": load_rose,
    "xsum_hallucination": load_xsum_hallucination,
    "hanna": load_hanna,
    "mtme": load_mtme,
}
