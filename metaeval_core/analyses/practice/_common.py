"""Helpers shared by the practitioner tools."""

from __future__ import annotations

import math


def finite_or_none(value) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None
