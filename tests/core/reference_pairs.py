"""Slow, readable reference implementations of docs/methods.md sec. 4-6, written straight from the text.

Plain Python loops, no vectorisation, used as test oracles for metaeval_core.stats.pairs,
metaeval_core.stats.stability and metaeval_core.stats.pools.
"""

from __future__ import annotations

import math

import numpy as np


def sign(value: float) -> int:
    return int(value > 0) - int(value < 0)


def tau_b_over_pairs(pairs: list[tuple[float, float]]) -> float:
    """Kendall tau-b from (dx, dz) pairs: (P - Q) / sqrt((P + Q + T)(P + Q + U)); NaN if undefined."""
    p = q = t = u = 0
    for dx, dz in pairs:
        sx, sz = sign(dx), sign(dz)
        if sx * sz > 0:
            p += 1
        elif sx * sz < 0:
            q += 1
        elif sx == 0 and sz != 0:
            t += 1
        elif sx != 0 and sz == 0:
            u += 1
    if p + q + t == 0 or p + q + u == 0:
        return float("nan")
    return (p - q) / math.sqrt((p + q + t) * (p + q + u))


def all_pairs(x, z) -> list[tuple[float, float]]:
    """(dx, dz) for every i < i' whose means are both present."""
    x = [float(v) for v in x]
    z = [float(v) for v in z]
    out = []
    n = len(x)
    for i in range(n):
        for j in range(i + 1, n):
            if any(math.isnan(v) for v in (x[i], x[j], z[i], z[j])):
                continue
            out.append((x[i] - x[j], z[i] - z[j]))
    return out


def rsys_delta(x, z, lower: float, upper: float) -> tuple[float, int]:
    """rSYS-Delta(l, u) and the number of selected pairs, by a loop over pairs."""
    selected = [(dx, dz) for dx, dz in all_pairs(x, z) if lower <= abs(dx) <= upper]
    return tau_b_over_pairs(selected), len(selected)


def decile_grid(x, z, min_pairs: int):
    """docs/methods.md sec. 4 decile grid: returns (lower, upper, tau, n_pairs) as Python lists."""
    pairs = all_pairs(x, z)
    n = len(pairs)
    if n == 0:
        nan_row = [float("nan")] * 10
        return nan_row, nan_row, [[float("nan")] * 10 for _ in range(10)], [[0] * 10 for _ in range(10)]
    ordered = sorted(abs(dx) for dx, _ in pairs)
    b = math.ceil(n * 0.1)  # b = ceil(0.1 * #pairs), as the paper's script evaluates it
    t = [ordered[min(k * b, n) - 1] for k in range(1, 11)]
    uppers = t
    lowers = [0.0] + t[:9]
    tau = [[float("nan")] * 10 for _ in range(10)]
    counts = [[0] * 10 for _ in range(10)]
    for r, low in enumerate(lowers):
        for c, up in enumerate(uppers):
            if not low < up:
                continue
            cell = [(dx, dz) for dx, dz in pairs if low <= abs(dx) <= up]
            if len(cell) < min_pairs:
                continue
            counts[r][c] = len(cell)
            tau[r][c] = tau_b_over_pairs(cell)
    return lowers, uppers, tau, counts


def nan_mean(values) -> float:
    kept = [v for v in values if not math.isnan(v)]
    return sum(kept) / len(kept) if kept else float("nan")


def delta_bootstrap(metric, human, draws, lower: float, upper: float) -> list[float]:
    """rSYS-Delta of every resample described by ``draws`` (a pairs.DeltaResamples), by loops."""
    metric = np.asarray(metric)
    human = np.asarray(human)
    n_sys = metric.shape[0]
    values = []
    for k in range(draws.n_resamples):
        x_cols = range(metric.shape[1]) if draws.metric_inputs is None else draws.metric_inputs[k]
        z_cols = range(human.shape[1]) if draws.human_inputs is None else draws.human_inputs[k]
        x = [nan_mean([metric[i, j] for j in x_cols]) for i in range(n_sys)]
        z = [nan_mean([human[i, j] for j in z_cols]) for i in range(n_sys)]
        chosen = range(n_sys) if draws.systems is None else draws.systems[k]
        xs = [x[i] for i in chosen]
        zs = [z[i] for i in chosen]
        values.append(rsys_delta(xs, zs, lower, upper)[0])
    return values
