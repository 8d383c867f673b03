"""Shared vocabulary of the significance tests: method names, the result of one comparison, p-value counting.

References: docs/methods.md sec. 3.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, get_args

import numpy as np

from metaeval_core._frames import ToFrame
# Resampled deltas within this of the threshold count as reaching it (errs towards H0).
from metaeval_core.stats.montecarlo import TOLERANCE as _TOLERANCE
from metaeval_core.stats.montecarlo import count_pvalue, finite_or_none

TestMethod = Literal["perm-both", "perm-systems", "perm-inputs", "boot-both", "boot-systems", "boot-inputs", "williams",
                     "wmt-perm-sys"]
TEST_METHODS: tuple[str, ...] = get_args(TestMethod)
PERMUTATION_METHODS: tuple[str, ...] = ("perm-both", "perm-systems", "perm-inputs")
# WMT's system-level test (mt-metrics-eval PermutationSigDiff on system scores, docs/methods.md sec. 3.6).
WMT_METHODS: tuple[str, ...] = ("wmt-perm-sys",)
PAIRED_BOOTSTRAP_METHODS: tuple[str, ...] = ("boot-both", "boot-systems", "boot-inputs")
Alternative = Literal["greater", "two-sided"]
ALTERNATIVES: tuple[str, ...] = get_args(Alternative)
Correction = Literal["bonferroni", "holm", "bh", "none"]
CORRECTIONS: tuple[str, ...] = get_args(Correction)
Stopping = Literal["none", "besag-clifford", "blocks"]
STOPPING_RULES: tuple[str, ...] = get_args(Stopping)
Family = Literal["row", "table", "none"]
FAMILIES: tuple[str, ...] = get_args(Family)

def method_problem(method: str, level: str, coefficient: str) -> str:
    """Why ``method`` cannot test ``coefficient`` at ``level`` ('' when it can): one rule for every caller."""
    from metaeval_core.stats.coefficients import CORRELATIONS

    if method == "williams" and level == "input":
        return ("method 'williams' is defined at the system and global levels only (docs/methods.md sec. 3); "
                "got level='input'")
    if method == "williams" and coefficient not in CORRELATIONS:
        return (f"method 'williams' needs a correlation coefficient ({', '.join(CORRELATIONS)}); {coefficient!r} is a "
                "pairwise accuracy, which has no Fisher transform: use a bootstrap or permutation method")
    if method in WMT_METHODS and level != "system":
        return (f"method {method!r} swaps system-level scores (WMT's system-level test, docs/methods.md sec. 3.6); "
                f"got level={level!r}: use perm-both at the {level} level")
    if method in WMT_METHODS and coefficient == "soft-pairwise-accuracy":
        return (f"method {method!r} swaps system scores, but soft-pairwise-accuracy needs the segment scores of "
                "every system; use perm-systems or perm-both")
    return ""


def methods_for(level: str, coefficient: str) -> tuple[str, ...]:
    """The test methods defined for ``coefficient`` at ``level``, in TEST_METHODS order."""
    return tuple(m for m in TEST_METHODS if not method_problem(m, level, coefficient))


def method_label(method: str) -> str:
    """How tables and pages name a method: upper case, WMT's test with its origin."""
    if method in WMT_METHODS:
        return "WMT-PERM-SYS (mt-metrics-eval PermutationSigDiff)"
    return method.upper()



@dataclass(frozen=True)
class ComparisonResult(ToFrame):
    """The outcome of testing whether metric ``x`` correlates better with the humans than ``y``.

    Attributes
    ----------
    x, y : str
        Names of the two metrics.
    estimate_x, estimate_y : float
        ``r(X, Z)`` and ``r(Y, Z)`` at the level (NaN when undefined).
    delta : float
        ``estimate_x - estimate_y``.
    pvalue : float
        Never 0 for resampling tests; NaN when ``delta`` or every resample is undefined.
    method, alternative, level, coefficient : str
    n_resamples : int
        Resamples drawn (0 for Williams).
    n_defined : int
        Resamples whose ``delta_s`` was defined; the p-value's ``k`` (0 for Williams).
    null_distribution : numpy.ndarray or None
        With ``return_distribution=True``: the permutation ``delta_s`` or the bootstrap
        ``delta_s - delta`` in draw order (NaN where undefined).
    statistic : float
        ``delta`` for resampling tests; Williams' ``t`` for ``'williams'``.
    approximate : bool
        True for Williams' test on Spearman or Kendall (it assumes Pearson and normality).
    """

    x: str
    y: str
    estimate_x: float
    estimate_y: float
    delta: float
    pvalue: float
    method: str
    alternative: str
    n_resamples: int
    n_defined: int
    null_distribution: np.ndarray | None = None
    level: str = ""
    coefficient: str = ""
    statistic: float = math.nan
    approximate: bool = False

    def to_dict(self) -> dict:
        num = finite_or_none
        return {
            "x": self.x, "y": self.y, "estimate_x": num(self.estimate_x), "estimate_y": num(self.estimate_y),
            "delta": num(self.delta), "pvalue": num(self.pvalue), "method": self.method,
            "alternative": self.alternative, "level": self.level, "coefficient": self.coefficient,
            "n_resamples": self.n_resamples, "n_defined": self.n_defined, "statistic": num(self.statistic),
            "approximate": self.approximate,
        }


def _count_pvalue(values: np.ndarray, threshold: float, alternative: str) -> tuple[float, int]:
    """``(1 + #{values >= threshold}) / (1 + k)`` over the defined values (|.| when two-sided):
    :func:`metaeval_core.stats.montecarlo.count_pvalue`."""
    return count_pvalue(values, threshold, alternative=alternative)
