"""Argument checks shared by the analysis modules: one helper per rule.

Every message names the parameter and the rule it breaks ("n_resamples must be >= 1; got 0"),
so a caller can show it as is. Pure Python + numpy; imports only :mod:`metaeval_core.data.dataset` from the package.
"""

from __future__ import annotations

import numbers
from typing import Callable, Sequence, Union

import numpy as np

from metaeval_core.data.dataset import Dataset, DatasetError

RngLike = Union[np.random.Generator, int, None]


def _is_bool(value: object) -> bool:
    return isinstance(value, (bool, np.bool_))


def as_generator(rng: object) -> np.random.Generator:
    """A ``numpy.random.Generator`` from a Generator (returned as is), a non-negative int seed, or None
    (fresh entropy)."""
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None:
        return np.random.default_rng()
    if _is_bool(rng) or not isinstance(rng, numbers.Integral):
        raise TypeError(f"rng must be a numpy.random.Generator, an int seed or None; got {type(rng).__name__}")
    if int(rng) < 0:
        raise ValueError(f"rng must be a non-negative int seed; got {rng}")
    return np.random.default_rng(int(rng))


def check_int(value: object, name: str, *, minimum: int = 1, allow_none: bool = False,
              wording: str = ">=") -> int | None:
    """``value`` as an int (bools refused) that is at least ``minimum``; None passes with ``allow_none``.

    ``wording`` spells the bound in the message: ``">="`` ("batch must be >= 1") or ``"at least"``
    ("min_k must be at least 2"), as each module's callers have always read it.
    """
    if value is None and allow_none:
        return None
    if _is_bool(value) or not isinstance(value, numbers.Integral):
        kind = "an int or None" if allow_none else "an int"
        raise TypeError(f"{name} must be {kind}; got {value!r}")
    if int(value) < minimum:
        raise ValueError(f"{name} must be {wording} {minimum}; got {value}")
    return int(value)


def check_probability(value: object, name: str) -> float:
    """``value`` as a float strictly between 0 and 1 (a confidence level, an alpha, a target power)."""
    if _is_bool(value) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number strictly between 0 and 1; got {value!r}")
    number = float(value)
    if not 0.0 < number < 1.0:
        raise ValueError(f"{name} must lie strictly between 0 and 1; got {value}")
    return number


def check_confidence_level(confidence_level: object) -> float:
    """:func:`check_probability` for the parameter ``confidence_level``."""
    return check_probability(confidence_level, "confidence_level")


def check_choice(value: object, name: str, choices: Sequence[str]) -> str:
    """``value`` if it is one of ``choices``; else ValueError listing them."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(str, choices))}; got {value!r}")
    return str(value)


def check_dataset(dataset: object) -> Dataset:
    """``dataset`` if it is a :class:`~metaeval_core.data.dataset.Dataset`."""
    if not isinstance(dataset, Dataset):
        raise TypeError(f"dataset must be a metaeval_core.data.dataset.Dataset; got {type(dataset).__name__}")
    return dataset


def check_human(dataset: Dataset, human: str) -> None:
    """DatasetError unless ``human`` names a human measure of ``dataset`` (an unknown name: DatasetError too)."""
    if dataset.measure(human).kind != "human":
        raise DatasetError(f"{human!r} is not a human measure of dataset {dataset.id!r}")


def check_bool(value: object, name: str) -> bool:
    """``value`` as a bool; anything but True/False (numpy bools included) is a TypeError."""
    if not _is_bool(value):
        raise TypeError(f"{name} must be True or False; got {value!r}")
    return bool(value)


def check_callable(value: object, name: str, what: str) -> Callable | None:
    """``value`` if it is callable or None (``what`` says what it should do)."""
    if value is not None and not callable(value):
        raise TypeError(f"{name} must be a callable {what}, or None; got {type(value).__name__}")
    return value
