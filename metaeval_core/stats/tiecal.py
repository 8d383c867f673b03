"""Tie-calibrated pairwise accuracy at the input level: one epsilon shared by every input.

Deutsch, Foster & Freitag (2023) and the WMT metrics tasks choose a single tie threshold for the
whole dataset. At the input level that is the ``epsilon`` maximising the accuracy *averaged over
inputs*, every input using the same ``epsilon``. The accuracy at ``epsilon`` is a sum over all
(system pair, input) entries of each entry's gain (what calling it a tie changes) weighted by
``1 / (valid pairs of its input)``, so one sort of every entry's ``|dx|`` and one cumulative sum find
the best ``epsilon``: O(P log P) for P entries, vectorised over a leading batch axis.

The weighted sums are kept exact where possible: every weight is multiplied by the least common
multiple ``L`` of the row's pair counts, so the cumulative sums are integers held exactly in float64
(when ``L`` times the number of inputs stays below 2^53). The smallest maximiser is then found
exactly, whatever the batch or chunk size. Otherwise (very many distinct pair counts) the sums are
plain float64 and accuracies within ``1e-10`` of the maximum count as maximal.

References: docs/methods.md sec. 11.2; Deutsch, Foster & Freitag (2023) sec. 4.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

# Entries (rows x candidate pairs) handled at once: bounds memory to some tens of MB per array.
_ENTRY_BUDGET = 2_000_000
# Exact integer arithmetic in float64 while every partial sum stays below this.
_EXACT_LIMIT = 2.0**53
# Accuracy tolerance of the inexact fallback (many distinct per-input pair counts).
_FLOAT_TOLERANCE = 1e-10


@dataclass(frozen=True)
class InputCalibration:
    """Input-level tie-calibrated accuracy per leading batch index.

    ``accuracy`` is the mean over the defined inputs (at least one valid system pair) of each
    input's accuracy with the shared ``epsilon`` (NaN with no defined input); ``epsilon`` is the
    smallest maximiser, in the metric's units (NaN when undefined); ``n`` counts the defined inputs
    and ``n_undefined`` the others.
    """

    accuracy: np.ndarray
    epsilon: np.ndarray
    n: np.ndarray
    n_undefined: np.ndarray


def _scales(n_pairs: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row: ``L`` making every ``weight_j * L / n_j`` an integer, and whether the sums stay exact.

    ``n_pairs`` (b, M) are the pair counts (0 = undefined input), ``weights`` (b, M) the inputs'
    integer multiplicities. Rows where no such ``L`` keeps ``L * sum(weights)`` below 2^53 get
    ``L = 1`` and ``exact = False``.
    """
    b = n_pairs.shape[0]
    scale = np.ones(b)
    exact = np.zeros(b, dtype=bool)
    defined = n_pairs > 0
    totals = np.where(defined, weights, 0.0).sum(axis=1)
    for r in range(b):
        values = np.unique(n_pairs[r][defined[r]])
        lcm = 1
        for v in values.tolist():
            lcm = math.lcm(lcm, int(v))
            if lcm * max(totals[r], 1.0) >= _EXACT_LIMIT:
                break
        else:
            scale[r], exact[r] = float(lcm), True
    return scale, exact


def _search(key: np.ndarray, gains: np.ndarray, base: np.ndarray, total: np.ndarray,
            exact: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Best threshold per row.

    ``key`` (E,) or (b, E): candidate ``|dx|`` ascending, ``inf`` for padding; ``gains`` (b, E): each
    entry's weighted gain in the same order; ``base`` (b,): the weighted correct count at epsilon 0;
    ``total`` (b,): the weighted count of all pairs. Returns (accuracy, epsilon).
    """
    b, e = gains.shape
    rows = np.arange(b)
    with np.errstate(invalid="ignore", divide="ignore"):
        undefined = ~(total > 0)
    if e == 0:
        accuracy = np.where(undefined, np.nan, base / np.where(undefined, 1.0, total))
        return accuracy, np.where(undefined, np.nan, 0.0)
    cumulative = np.cumsum(gains, axis=1)
    # Only the last entry of a run of equal |dx| is a threshold: the whole run ties at once.
    run_end = np.ones(key.shape, dtype=bool)
    run_end[..., :-1] = key[..., 1:] != key[..., :-1]
    run_end &= np.isfinite(key)
    if key.ndim == 1:
        ends = np.flatnonzero(run_end)
        if ends.size == 0:
            candidate, end_key = np.zeros((b, 1)), np.zeros(1)
        elif ends.size < e:
            candidate, end_key = np.take(cumulative, ends, axis=1), key[ends]
        else:
            candidate, end_key = cumulative, key
        end_key = np.broadcast_to(end_key, candidate.shape)
    else:
        candidate, end_key = np.where(run_end, cumulative, -np.inf), key
    # argmax returns the first maximum: the smallest maximiser when the sums are exact integers.
    first = candidate.argmax(axis=1)
    best = candidate[rows, first]
    loose = ~exact
    if loose.any():
        # Float sums: values within the tolerance of the maximum count as maximal.
        tolerance = _FLOAT_TOLERANCE * total[loose]
        first[loose] = np.argmax(candidate[loose] >= (best[loose] - tolerance)[:, None], axis=1)
        best[loose] = np.where(best[loose] > tolerance, candidate[loose, first[loose]], 0.0)
    use = best > np.where(exact, 0.5, 0.0)  # otherwise epsilon 0 (no threshold adds ties) is the smallest
    with np.errstate(invalid="ignore", divide="ignore"):
        accuracy = np.where(undefined, np.nan, (base + np.where(use, best, 0.0)) / np.where(undefined, 1.0, total))
    epsilon = np.where(use, end_key[rows, first], 0.0)
    return accuracy, np.where(undefined, np.nan, epsilon)


def _pair_tables(x: np.ndarray, z: np.ndarray):
    """Per (system pair, input): valid, correct at epsilon 0, gain of calling it a tie; ``|dx|``.

    ``x``, ``z`` (..., N, M) -> arrays (..., P, M); see :func:`_entry_tables`.
    """
    n = x.shape[-2]
    first, second = np.triu_indices(n, 1)
    tables = _entry_tables(x[..., first, :], x[..., second, :], z[..., first, :], z[..., second, :])
    return (*tables, first, second)


def _entry_tables(xa: np.ndarray, xb: np.ndarray, za: np.ndarray, zb: np.ndarray):
    """(valid, correct, gain, |dx|) of the pairs (a, b) given their four scores.

    The gain is +1 when the humans tie the pair (a tie is right), -1 when the metric orders it as the humans do
    (a tie is wrong), 0 otherwise (already tied, or wrong either way).
    """
    valid = ~(np.isnan(xa) | np.isnan(xb) | np.isnan(za) | np.isnan(zb))
    with np.errstate(invalid="ignore"):
        dx = xa - xb
        dz = za - zb
    sx, sz = np.sign(dx), np.sign(dz)
    correct = valid & (sx == sz)  # equal signs, including both tied
    gain = np.where(valid & (sx != 0), (sz == 0).astype(np.int8) - (sx == sz).astype(np.int8), 0).astype(np.int8)
    return valid, correct, gain, np.abs(dx)


def pair_agreement(metric: np.ndarray, human: np.ndarray, epsilon: float) -> tuple[np.ndarray, np.ndarray]:
    """Per (system pair, input) of ``(N, M)`` matrices at a fixed tie threshold: ``(valid, agree)``, (P, M) each.

    A valid pair (four scores) agrees when the humans tie it and ``|dx| <= epsilon``, or when ``|dx| > epsilon``
    and both order it the same way; the pairs are ``numpy.triu_indices(N, 1)``. The mean over an input's valid
    pairs is its accuracy at ``epsilon`` (:func:`input_tie_calibrated` maximises their mean over ``epsilon``).

    References: docs/methods.md sec. 11.2.
    """
    valid, correct, gain, adx, _, _ = _pair_tables(np.asarray(metric, dtype=np.float64),
                                                   np.asarray(human, dtype=np.float64))
    with np.errstate(invalid="ignore"):
        agree = correct.astype(np.int8) + np.where(adx <= epsilon, gain, 0).astype(np.int8)
    return valid, (agree > 0) & valid


def input_tie_calibrated(metric: np.ndarray, human: np.ndarray) -> InputCalibration:
    """Input-level tie-calibrated accuracy of ``(..., N, M)`` score matrices, one epsilon per leading index.

    Every input ``j`` with ``n_j >= 1`` valid system pairs (both scores on both systems) is defined;
    the value is ``max over epsilon of mean_j acc_j(epsilon)``, where ``acc_j(epsilon)`` counts a pair
    correct when the humans tie it and ``|dx| <= epsilon``, or when ``|dx| > epsilon`` and both order it
    the same way. The candidates are 0 and every observed ``|dx|``; the smallest maximiser is reported.

    References: docs/methods.md sec. 11.2; Deutsch, Foster & Freitag (2023) sec. 4.
    """
    x = np.asarray(metric, dtype=np.float64)
    z = np.asarray(human, dtype=np.float64)
    x, z = np.broadcast_arrays(x, z)
    batch_shape = x.shape[:-2]
    n, m = x.shape[-2:]
    x2 = x.reshape(-1, n, m)
    z2 = z.reshape(-1, n, m)
    rows = x2.shape[0]
    accuracy = np.full(rows, np.nan)
    epsilon = np.full(rows, np.nan)
    defined = np.zeros(rows, dtype=np.int64)
    p = n * (n - 1) // 2
    step = max(1, _ENTRY_BUDGET // max(p * m, 1))
    for start in range(0, rows, step):
        sl = slice(start, min(start + step, rows))
        pair_valid, correct, gain, adx, _, _ = _pair_tables(x2[sl], z2[sl])
        b = sl.stop - sl.start
        n_pairs = pair_valid.sum(axis=1)  # (b, M)
        defined[sl] = (n_pairs > 0).sum(axis=1)
        ones = np.ones((b, m))
        scale, exact = _scales(n_pairs, ones)
        with np.errstate(invalid="ignore", divide="ignore"):
            factor = np.where(n_pairs > 0, scale[:, None] / n_pairs, 0.0)  # (b, M): L / n_j
        key = np.where(gain != 0, adx, np.inf).reshape(b, -1)
        # Entries of equal |dx| form one run whose total is read at its end, so their order is irrelevant.
        order = np.argsort(key, axis=1)
        weighted = (gain * factor[:, None, :]).reshape(b, -1)
        base = (correct.sum(axis=1) * factor).sum(axis=1)
        total = scale * (n_pairs > 0).sum(axis=1)
        accuracy[sl], epsilon[sl] = _search(np.take_along_axis(key, order, axis=1),
                                            np.take_along_axis(weighted, order, axis=1), base, total, exact)
    return InputCalibration(accuracy.reshape(batch_shape), epsilon.reshape(batch_shape),
                            defined.reshape(batch_shape), (m - defined).reshape(batch_shape))


class ResampledInputCalibration:
    """Input-level tie-calibrated accuracy of bootstrap resamples of one metric against the human.

    A resample of systems with multiplicities ``c`` holds ``c_u c_v`` copies of every original pair
    ``(u, v)`` (the same ``|dx|`` and correctness) and ``c_u (c_u - 1) / 2`` pairs of a system with its
    own copy, tied in both scores (correct whatever epsilon, no gain); a resample of inputs weights
    input ``j`` by its multiplicity ``d_j``. So every resample's candidates are the original entries'
    ``|dx|``: they are sorted once, and each resample only re-weights the gains (O(P) per resample).
    The result equals :func:`input_tie_calibrated` on the materialised resampled matrices.
    """

    def __init__(self, metric: np.ndarray, human: np.ndarray):
        x = np.asarray(metric, dtype=np.float64)
        z = np.asarray(human, dtype=np.float64)
        self.n, self.m = x.shape
        pair_valid, correct, gain, adx, self.first, self.second = _pair_tables(x, z)
        self.valid = (~(np.isnan(x) | np.isnan(z))).astype(np.float64)  # (N, M)
        self.correct = correct.astype(np.float64)  # (P, M)
        pair, column = np.nonzero(gain)
        order = np.argsort(adx[pair, column], kind="stable")
        self.pair, self.column = pair[order], column[order]
        self.key = adx[self.pair, self.column]
        self.gain = gain[self.pair, self.column].astype(np.float64)

    @property
    def entries(self) -> int:
        return int(self.key.size)

    def evaluate(self, system_counts: np.ndarray | None, input_counts: np.ndarray | None,
                 ) -> tuple[np.ndarray, np.ndarray]:
        """(accuracy, epsilon) per resample; counts are (b, N) and (b, M) multiplicities, or None for all 1."""
        b = (system_counts if system_counts is not None else input_counts).shape[0]
        c = np.ones((b, self.n)) if system_counts is None else np.asarray(system_counts, dtype=np.float64)
        d = np.ones((b, self.m)) if input_counts is None else np.asarray(input_counts, dtype=np.float64)
        c_pair = c[:, self.first] * c[:, self.second]  # (b, P)
        s = c @ self.valid  # valid systems per input, with multiplicity; integer-valued, so exact
        n_pairs = np.rint(s * (s - 1) / 2).astype(np.int64)
        self_pairs = ((c * c) @ self.valid - s) / 2
        correct = c_pair @ self.correct + self_pairs  # (b, M)
        scale, exact = _scales(n_pairs, d)
        with np.errstate(invalid="ignore", divide="ignore"):
            factor = np.where(n_pairs > 0, d * scale[:, None] / n_pairs, 0.0)
        base = (correct * factor).sum(axis=1)
        total = scale * np.where(n_pairs > 0, d, 0.0).sum(axis=1)
        # np.take, not fancy indexing: several times faster for these row gathers.
        gains = self.gain * np.take(factor, self.column, axis=1)
        if system_counts is not None:
            gains *= np.take(c_pair, self.pair, axis=1)
        return _search(self.key, gains, base, total, exact)

    def batch_size(self) -> int:
        return max(1, _ENTRY_BUDGET // max(self.entries, 1))


class SwappedInputCalibration:
    """Input-level tie-calibrated accuracies of cell-swapped metrics ``Xs`` and ``Ys`` (permutation tests).

    For a system pair ``(a, a')`` of one input, the swapped ``Xs`` compares one of four outcomes
    ``c = 2 B_a + B_a'`` (``X_a`` or ``Y_a`` against ``X_a'`` or ``Y_a'``) and ``Ys`` the complementary
    ``3 - c``. So every resample's candidates are among the ``4 P M`` entries of the four outcomes: they are
    sorted by ``|dx|`` once, and a resample switches on the entries its swap bits select (O(P M) per
    resample, no sort). The result equals :func:`input_tie_calibrated` on the swapped matrices.
    """

    def __init__(self, x: np.ndarray, y: np.ndarray, human: np.ndarray):
        x, y, z = (np.asarray(a, dtype=np.float64) for a in (x, y, human))
        self.n, self.m = z.shape
        first, second = np.triu_indices(self.n, 1)
        self.first, self.second = first, second
        vz = ~np.isnan(z)
        self.valid_x = (~np.isnan(x) & vz).astype(np.float64)
        self.valid_y = (~np.isnan(y) & vz).astype(np.float64)
        correct, keys, gains, outcomes, flat = [], [], [], [], []
        for c in range(4):
            ua = y if c >> 1 else x  # cell a of the pair: Y's when swapped
            ub = y if c & 1 else x
            _, right, gain, adx = _entry_tables(ua[first], ub[second], z[first], z[second])
            correct.append(right.astype(np.float64))
            nonzero = np.flatnonzero(gain)
            keys.append(adx.ravel()[nonzero])
            gains.append(gain.ravel()[nonzero])
            outcomes.append(np.full(nonzero.size, c, dtype=np.int8))
            flat.append(nonzero)
        self.correct = np.stack(correct)  # (4, P, M)
        key = np.concatenate(keys)
        order = np.argsort(key, kind="stable")
        self.key = key[order]
        self.gain = np.concatenate(gains)[order].astype(np.float64)
        self.outcome = np.concatenate(outcomes)[order]
        self.flat = np.concatenate(flat)[order]  # index into the (P, M) layout
        self.column = self.flat % self.m

    def evaluate(self, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Accuracies of ``Xs`` and ``Ys`` for swap masks broadcastable to (b, N, M) (True = swapped)."""
        step = self.batch_size()
        parts = [self._evaluate(mask[start:start + step]) for start in range(0, mask.shape[0], step)]
        return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])

    def _evaluate(self, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        b = mask.shape[0]
        bits = np.broadcast_to(mask, (b, self.n, self.m))
        outcome = (2 * bits[:, self.first].astype(np.int8) + bits[:, self.second]).reshape(b, -1)  # (b, P M)
        active = np.take(outcome, self.flat, axis=1)  # (b, E): the outcome each entry's (pair, input) takes in Xs
        p_idx = np.arange(self.first.size)[:, None]
        j_idx = np.arange(self.m)[None, :]
        results = []
        for side, (mine, other) in enumerate(((self.valid_x, self.valid_y), (self.valid_y, self.valid_x))):
            taken = outcome if side == 0 else 3 - outcome
            s = np.where(bits, other, mine).sum(axis=1)  # valid systems per input
            n_pairs = np.rint(s * (s - 1) / 2).astype(np.int64)
            correct = self.correct[taken.reshape(b, -1, self.m), p_idx, j_idx].sum(axis=1)  # (b, M)
            scale, exact = _scales(n_pairs, np.ones((b, self.m)))
            with np.errstate(invalid="ignore", divide="ignore"):
                factor = np.where(n_pairs > 0, scale[:, None] / n_pairs, 0.0)
            on = (active if side == 0 else 3 - active) == self.outcome
            gains = np.where(on, self.gain * np.take(factor, self.column, axis=1), 0.0)
            results.append(_search(self.key, gains, (correct * factor).sum(axis=1),
                                   scale * (n_pairs > 0).sum(axis=1), exact)[0])
        return results[0], results[1]

    def batch_size(self) -> int:
        return max(1, _ENTRY_BUDGET // max(self.key.size, self.first.size * self.m, 1))
