"""Synthetic pairwise data and slow, readable oracles for the judges statistics (one item at a time)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from metaeval_core.data.registry import list_datasets
from metaeval_core.judges import load_pairwise
from metaeval_core.judges.model import A, B, INVALID, MISSING, TIE, PairwiseData, Rater


def random_data(seed: int = 0, *, n: int = 40, n_humans: int = 3, n_judges: int = 3, orders: int = 2,
                p_invalid: float = 0.05, p_missing: float = 0.0, p_tie: float = 0.15, gold: bool = False,
                texts: bool = True, pair_sets: int = 1) -> PairwiseData:
    """Humans who mostly agree with a hidden truth, judges of varying quality, some ties and invalid verdicts."""
    rng = np.random.default_rng(seed)
    truth = rng.choice([A, B, TIE], size=n, p=[(1 - p_tie) / 2, (1 - p_tie) / 2, p_tie])
    raters, columns = [], []

    def noisy(quality: float, invalid: float) -> np.ndarray:
        v = np.where(rng.random(n) < quality, truth, rng.choice([A, B, TIE], size=n))
        v = np.where(rng.random(n) < invalid, INVALID, v)
        return np.where(rng.random(n) < p_missing, MISSING, v)

    for h in range(n_humans):
        raters.append(Rater(f"h{h + 1}", "human"))
        columns.append(np.stack([noisy(0.8, 0.0), np.full(n, MISSING)], axis=1))
    if gold:
        raters.append(Rater("gold", "gold"))
        columns.append(np.stack([np.where(truth == TIE, A, truth), np.full(n, MISSING)], axis=1))
    for j in range(n_judges):
        raters.append(Rater(f"j{j + 1}", "judge", attributes={"evaluator": f"E{j}", "strategy": "S"}))
        quality = 0.3 + 0.6 * j / max(1, n_judges - 1)
        first = noisy(quality, p_invalid)
        second = noisy(quality, p_invalid) if orders == 2 else np.full(n, MISSING)
        # some first-position bias in the swapped order: B shown first
        second = np.where((rng.random(n) < 0.2) & (second != MISSING), B, second)
        columns.append(np.stack([first, second], axis=1))
    verdicts = np.stack(columns, axis=1)
    words = lambda k: " ".join(["w"] * int(k))  # noqa: E731
    return PairwiseData(
        id="synthetic", items=tuple(f"i{k}" for k in range(n)),
        pair_sets=tuple(f"set{s}" for s in range(pair_sets)), pair_set=np.arange(n) % pair_sets,
        raters=tuple(raters), verdicts=verdicts,
        output_a=tuple(words(k) for k in rng.integers(1, 30, n)) if texts else (),
        output_b=tuple(words(k) for k in rng.integers(1, 30, n)) if texts else (),
        system_a=tuple(f"s{k}" for k in rng.integers(0, 4, n)), system_b=tuple(f"t{k}" for k in rng.integers(0, 4, n)),
        version="1",
    )


def majority_oracle(votes, no_majority="tie"):
    valid = [v for v in votes if v in (A, B, TIE)]
    if not valid:
        return MISSING
    value, count = Counter(valid).most_common(1)[0]
    if 2 * count > len(valid):
        return value
    return TIE if no_majority == "tie" else MISSING


def cell_counts(judge, ref, ties, invalid):
    """(counted, agrees) of one verdict against one reference under the conventions; None when out of scope."""
    if judge == MISSING or ref == MISSING:
        return None
    if invalid == "tie" and judge == INVALID:
        judge = TIE
    if invalid == "drop" and judge == INVALID:
        return (0, 0)
    if ties in ("drop-reference-ties", "drop-any-tie") and ref == TIE:
        return (0, 0)
    if ties == "drop-any-tie" and judge == TIE:
        return (0, 0)
    return (1, int(judge == ref))


def accuracy_oracle(pairs, ref, order, ties, invalid):
    """pairs: list of (verdict original, verdict swapped) per item; ref: reference per item."""
    counted = correct = 0.0
    for (v0, v1), r in zip(pairs, ref):
        c0 = cell_counts(v0, r, ties, invalid)
        c1 = cell_counts(v1, r, ties, invalid)
        if order == "original":
            cells = [c0]
        elif order == "swapped":
            cells = [c1]
        else:
            cells = [c0, c1]
        if any(c is None or c[0] == 0 for c in cells):
            continue
        counted += 1
        if order == "both":
            correct += all(c[1] for c in cells)
        else:
            correct += sum(c[1] for c in cells) / len(cells)
    return correct / counted if counted else float("nan")


def loaded(data_dir, dataset_id):
    if not any(info.id == dataset_id and info.available for info in list_datasets(data_dir=data_dir)):
        pytest.skip(f"{dataset_id} is not in the data directory {data_dir}: `metaeval fetch --dataset {dataset_id}`")
    return load_pairwise(dataset_id, data_dir=data_dir)


def block_draws(kind: str, seed: int, k: int, n: int) -> np.ndarray:
    """The documented resampling scheme, written out: blocks of 64 resamples, block b from child stream b of
    ``SeedSequence(seed)``; 'items' are ``integers(0, n)``, 'swaps' ``random() < 1/2``, 'permutations'
    ``permuted`` rows of ``range(n)``."""
    children = np.random.SeedSequence(seed).spawn(-(-k // 64))
    parts = []
    for b, child in enumerate(children):
        rows = min(64, k - 64 * b)
        gen = np.random.default_rng(child)
        if kind == "items":
            parts.append(gen.integers(0, n, size=(rows, n)))
        elif kind == "swaps":
            parts.append((gen.random((rows, n)) < 0.5).astype(float))
        else:
            parts.append(gen.permuted(np.tile(np.arange(n), (rows, 1)), axis=1))
    return np.concatenate(parts)


def annotated_scores_csv(seed: int = 7, *, noise: bool = False) -> str:
    """A long score file: 4 systems x 12 documents, the human measure ``quality`` by three named annotators
    (ann-ana, ann-ben, ann-cy, each within 1 of a hidden truth on a 1-5 scale), the metric ``my-judge`` on the
    same scale and, with ``noise``, a metric ``noise`` drawn at random."""
    rng = np.random.default_rng(seed)
    rows = []
    for s in range(4):
        for i in range(12):
            truth = rng.integers(1, 6)
            for a in ("ann-ana", "ann-ben", "ann-cy"):
                rows.append(f"sys{s},doc{i},quality,{int(np.clip(truth + rng.integers(-1, 2), 1, 5))},{a},human")
            rows.append(f"sys{s},doc{i},my-judge,{int(np.clip(truth + rng.integers(-1, 2), 1, 5))},,metric")
            if noise:
                rows.append(f"sys{s},doc{i},noise,{rng.integers(1, 6)},,metric")
    return "system,input,measure,score,annotator,kind\n" + "\n".join(rows) + "\n"
