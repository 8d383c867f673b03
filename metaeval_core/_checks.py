"""Argument checks shared by the analysis modules: one helper per rule.

Every message names the parameter and the rule it breaks ("n_resamples must be >= 1; got 0"),
so a caller can show it as is. Pure Python + numpy; imports nothing from the package (the bottom floor: checks of a
dataset are in :mod:`metaeval_core.data.checks`).
"""

from __future__ import annotations

import math
import numbers
from typing import Callable, Sequence, Union

import numpy as np

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


# The dashboard's cap on resamples (metaeval_ui.data.MAX_RESAMPLES): beyond it a global-level interval takes
# minutes and its percentiles move by < 0.005. The CLI applies the same bounds.
MIN_RESAMPLES = 10
MAX_RESAMPLES = 10_000


def min_resamples_for(confidence_level: float) -> int:
    """Fewest resamples for a percentile interval at ``confidence_level``: ``ceil(2 / (1 - level))``.

    Each tail of the interval holds ``(1 - level) / 2`` of the resamples; with fewer than one resample per
    tail the bounds are simply the smallest and largest values drawn (with k = 1 a zero-width interval), so
    the nominal level means nothing. 40 resamples at 0.95, 200 at 0.99.
    """
    # 1e-9 absorbs the rounding of 1 - level (2 / 0.050000000000000044 is 39.99999999999996).
    return max(2, math.ceil(2.0 / (1.0 - confidence_level) - 1e-9))


def check_interval_resamples(n_resamples: object, confidence_level: float) -> int:
    """``n_resamples`` as an int large enough for a percentile interval at ``confidence_level``."""
    n_resamples = check_int(n_resamples, "n_resamples")
    needed = min_resamples_for(confidence_level)
    if n_resamples < needed:
        raise ValueError(
            f"n_resamples must be >= {needed} for a {confidence_level:.4g} percentile interval (each tail needs "
            f"at least one resample: ceil(2 / (1 - confidence_level))); got {n_resamples}"
        )
    return n_resamples


def check_choice(value: object, name: str, choices: Sequence[str]) -> str:
    """``value`` if it is one of ``choices``; else ValueError listing them."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(str, choices))}; got {value!r}")
    return str(value)


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
