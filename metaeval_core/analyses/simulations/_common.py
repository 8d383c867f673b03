"""Helpers shared by the simulations: seeded streams per trial, name checks, trial bookkeeping."""

from __future__ import annotations

import math
from typing import Callable, Sequence

import numpy as np

from metaeval_core.data.checks import check_dataset
from metaeval_core.stats.correlation import correlation_inputs
from metaeval_core.stats.montecarlo import finite_or_none
from metaeval_core.data.dataset import Dataset


# ============================================================================================
# Shared helpers
# ============================================================================================
def _stream(entropy: Sequence[int], *key: int) -> np.random.Generator:
    """An independent generator for one (trial, purpose): a child of the run's root seed."""
    return np.random.default_rng(np.random.SeedSequence(list(entropy), spawn_key=tuple(int(k) for k in key)))


def _root_entropy(generator: np.random.Generator) -> tuple[int, ...]:
    return tuple(int(v) for v in generator.integers(0, 2**32, size=4))


def _check_names(values: object, name: str, choices: Sequence[str]) -> tuple[str, ...]:
    if isinstance(values, str) or not isinstance(values, Sequence):
        raise TypeError(f"{name} must be a sequence of names from {', '.join(choices)}; got {values!r}")
    values = tuple(values)
    if not values:
        raise ValueError(f"{name} must name at least one of {', '.join(choices)}")
    for v in values:
        if v not in choices:
            raise ValueError(f"{name} must hold names from {', '.join(repr(c) for c in choices)}; got {v!r}")
    if len(set(values)) != len(values):
        raise ValueError(f"{name} must not repeat a name; got {values!r}")
    return values


class _Trials:
    """``for t in _Trials(n, progress, should_stop)``: trials 0..n-1, reporting the fraction done
    after each; ends early, with ``stopped`` True, when ``should_stop()`` says so before a trial.
    ``done`` counts the trials completed."""

    def __init__(self, n_trials: int, progress: Callable[[float], object] | None,
                 should_stop: Callable[[], bool] | None):
        self.n_trials = n_trials
        self.report = progress if progress is not None else (lambda fraction: None)
        self.should_stop = should_stop
        self.done = 0
        self.stopped = False

    def __iter__(self):
        self.report(0.0)
        for t in range(self.n_trials):
            if self.should_stop is not None and self.should_stop():
                self.stopped = True
                return
            yield t
            self.done = t + 1
            self.report(self.done / self.n_trials)


def _binomial_se(share: float, n: int) -> float:
    return math.sqrt(share * (1.0 - share) / n) if n > 0 and math.isfinite(share) else math.nan


_num = finite_or_none  # the one NaN-to-None helper (metaeval_core.stats.montecarlo)


def _dataset_matrices(dataset: object, metric: object, human: object, level: str, systems: object,
                      metric_needed: bool = True) -> tuple[Dataset, np.ndarray | None, np.ndarray]:
    check_dataset(dataset)
    if not isinstance(metric, str):
        raise TypeError(f"metric must be a measure name (str); got {type(metric).__name__}")
    if not isinstance(human, str):
        raise TypeError(f"human must be a measure name (str); got {type(human).__name__}")
    subset = dataset.select_systems(systems).rated_by(human)
    if metric_needed:
        x, z = correlation_inputs(subset, metric, human, level=level, pool="judged")
        return subset, np.asarray(x, dtype=np.float64), np.asarray(z, dtype=np.float64)
    _, z = correlation_inputs(subset, human, human, level=level, pool="judged")
    return subset, None, np.asarray(z, dtype=np.float64)
