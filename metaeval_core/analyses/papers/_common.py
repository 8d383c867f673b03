"""Helpers shared by the papers' analyses (name checks, system subsets)."""

from __future__ import annotations

from typing import Sequence


from metaeval_core.data.checks import check_dataset, check_human
from metaeval_core.data.dataset import Dataset
from metaeval_core.stats.montecarlo import finite_or_none


# ---------------------------------------------------------------------------
# Shared helpers
# ---------------------------------------------------------------------------
def check_names(names: object, parameter: str, *, minimum: int = 1) -> tuple[str, ...]:
    """A tuple of unique measure ids from a sequence of strings (a bare string is refused)."""
    if isinstance(names, str) or not isinstance(names, Sequence):
        raise TypeError(f"{parameter} must be a sequence of measure ids (e.g. a list of str); got {names!r}")
    names = tuple(names)
    if not all(isinstance(n, str) for n in names):
        raise TypeError(f"{parameter} must hold measure ids as str; got {names!r}")
    if len(names) < minimum:
        raise ValueError(f"{parameter} must name at least {minimum} measure(s); got {len(names)}")
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"{parameter} must not repeat a measure; repeated: {', '.join(duplicates)}")
    return names


def check_measures_exist(dataset: Dataset, names: Sequence[str]) -> None:
    for name in names:
        dataset.measure(name)  # DatasetError naming the known measures


def check_human_measure(dataset: Dataset, human: object) -> None:
    if not isinstance(human, str):
        raise TypeError(f"human must be a measure id (str); got {human!r}")
    check_human(dataset, human)


def select_systems(dataset: object, systems: object) -> Dataset:
    check_dataset(dataset)
    if systems is not None and not isinstance(systems, (str, dict)):
        raise TypeError(f"systems must be a selection such as 'type=abs' (str) or None; got {systems!r}")
    return dataset.select_systems(systems)


float_or_none = finite_or_none  # the one NaN-to-None helper (metaeval_core.stats.montecarlo)
