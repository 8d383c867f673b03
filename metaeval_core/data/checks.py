"""Argument checks of a dataset and its measures, in the style of :mod:`metaeval_core._checks` (which sits
below the data floor and cannot name :class:`~metaeval_core.data.dataset.Dataset`)."""

from __future__ import annotations

from metaeval_core.data.dataset import Dataset, DatasetError


def check_dataset(dataset: object) -> Dataset:
    """``dataset`` if it is a :class:`~metaeval_core.data.dataset.Dataset`."""
    if not isinstance(dataset, Dataset):
        raise TypeError(f"dataset must be a metaeval_core.data.dataset.Dataset; got {type(dataset).__name__}")
    return dataset


def check_human(dataset: Dataset, human: str) -> None:
    """DatasetError unless ``human`` names a human measure of ``dataset`` (an unknown name: DatasetError too)."""
    if dataset.measure(human).kind != "human":
        raise DatasetError(f"{human!r} is not a human measure of dataset {dataset.id!r}")
