"""Cached access to datasets: the picker's catalogue, registry datasets shared by every session, downloads,
uploads parsed by the core reader, and the reproduction table.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import pandas as pd
import streamlit as st

from metaeval_core.data import registry as _registry, upload as _upload
from metaeval_core.data.dataset import Dataset
from metaeval_core.data.synthetic import synthetic_dataset


DatasetKey = tuple[str, str]  # (dataset id, version)


DEMO_ID = "demo"


UPLOAD_PREFIX = "upload:"


MAX_UPLOADS_PER_SESSION = 3


MAX_UPLOAD_MB = 50  # the core's UploadLimits default; checked again (also after gunzip) by the reader
VERDICTS_PREFIX = "verdicts:"  # the id of an uploaded verdict file (the judges pages' own uploads)


@dataclass(frozen=True)
class DatasetChoice:
    """One entry of the dataset picker (a registry DatasetInfo, the demo, or an upload)."""

    id: str
    title: str
    available: bool = True
    reason: str = ""
    description: str = ""
    citation: str = ""
    licence: str = ""


def data_dir_key() -> str:
    """The data directory as a string (part of cache keys: another directory is another catalogue)."""
    try:
        return str(_registry.data_dir())
    except Exception:  # noqa: BLE001 - a misconfigured directory must not break the app
        return os.environ.get("METAEVAL_DATA_DIR", "")


@st.cache_data(max_entries=8, ttl=300, show_spinner=False)
def list_choices(data_dir: str) -> tuple[DatasetChoice, ...]:
    """The datasets the picker offers for ``data_dir`` (the demo first)."""
    demo = DatasetChoice(DEMO_ID, "Synthetic demo (offline)", description="Generated data with a known truth.")
    # Score-matrix datasets only: pairwise-verdict datasets (kind 'pairwise') are the judges pages' own.
    infos = _registry.list_datasets(data_dir=Path(data_dir) if data_dir else None, kind="scores")
    out = [
        DatasetChoice(
            id=str(info.id),
            title=str(getattr(info, "title", "") or info.id),
            available=bool(getattr(info, "available", True)),
            reason=str(getattr(info, "reason", "") or ""),
            description=str(getattr(info, "description", "") or ""),
            citation=str(getattr(info, "citation", "") or ""),
            licence=str(getattr(info, "licence", "") or ""),
        )
        for info in infos
    ]
    if not any(c.id == DEMO_ID for c in out):
        out.insert(0, demo)
    return tuple(out)


@st.cache_data(max_entries=8, ttl=300, show_spinner=False)
def pairwise_choices(data_dir: str) -> tuple[DatasetChoice, ...]:
    """The pairwise-verdict datasets of the registry (available or not, with the reason): the judges pages' own."""
    infos = _registry.list_datasets(data_dir=Path(data_dir) if data_dir else None, kind="pairwise")
    return tuple(DatasetChoice(id=str(i.id), title=str(i.title or i.id), available=bool(i.available),
                               reason=str(i.reason or ""), description=str(i.description or ""),
                               citation=str(i.citation or ""), licence=str(i.licence or "")) for i in infos)


def is_pairwise(dataset_id: str | None) -> bool:
    """True for a built-in pairwise dataset id or a verdict upload's id."""
    if not dataset_id:
        return False
    if str(dataset_id).startswith(VERDICTS_PREFIX):
        return True
    return any(c.id == dataset_id for c in pairwise_choices(data_dir_key()))


@st.cache_resource(max_entries=6, show_spinner="Loading dataset…")
def load_registered(dataset_id: str, data_dir: str, lp: str | None = None) -> Dataset:
    """A built-in dataset, loaded once per process and shared (read-only arrays) by every session; ``lp`` picks
    the language pair of a test set with several (wmt23)."""
    if dataset_id == DEMO_ID:
        return synthetic_dataset()
    return _registry.load_dataset(dataset_id, data_dir=Path(data_dir) if data_dir else None, lp=lp)


def language_pairs(dataset_id: str) -> tuple[str, ...]:
    """The language pairs a built-in dataset offers (``()`` for one with a single pair, or not built in)."""
    if dataset_id not in _registry.dataset_ids():
        return ()
    return _registry.language_pairs_of(dataset_id)


def default_lp(dataset_id: str) -> str | None:
    return _registry.default_lp(dataset_id)


def fetch(dataset_id: str, data_dir: str) -> list[Path]:
    """Download a registry dataset's files (clears the catalogue cache so it shows as available)."""
    paths = _registry.fetch_dataset(dataset_id, data_dir=Path(data_dir) if data_dir else None)
    list_choices.clear()
    return paths


def content_sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def parse_upload(data: bytes, name: str, *, human_measures: Sequence[str] | None = None) -> Dataset:
    """Parse an uploaded file with the core reader (raises UploadError/DatasetError on bad files)."""
    digest = content_sha256(data)
    options: dict[str, Any] = {"name": name, "dataset_id": f"{UPLOAD_PREFIX}{digest[:12]}",
                               "limits": _upload.UploadLimits.from_environment()}
    if human_measures:
        options["human_measures"] = list(human_measures)
    return _upload.read_user_file(data, **options)


def dataset_key(dataset: Dataset) -> DatasetKey:
    return (dataset.id, dataset.version)


REPRODUCE_ALL = "all"


def reproduction_papers() -> list[str]:
    """The papers of metaeval_core.analyses.reproduce.PUBLISHED, in its order."""
    from metaeval_core.analyses.reproduce import PUBLISHED

    return list(dict.fromkeys(item.paper for item in PUBLISHED))


@st.cache_data(max_entries=16, show_spinner=False)
def reproduction(data_dir: str, paper: str = REPRODUCE_ALL) -> pd.DataFrame:
    """The published numbers of metaeval_core.analyses.reproduce (one paper's, or all: ~20 s with WMT23's suite)
    recomputed on ``data_dir``'s datasets."""
    from metaeval_core.analyses.reproduce import PUBLISHED, reproduce, reproduction_records

    def load(dataset_id: str) -> Dataset:
        return load_registered(dataset_id, data_dir)

    values = PUBLISHED if paper == REPRODUCE_ALL else [item for item in PUBLISHED if item.paper == paper]
    return pd.DataFrame(reproduction_records(reproduce(load, values=values)))
