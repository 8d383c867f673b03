"""ROUGE-1 on a random k% of each summary's tokens, counted in numpy from token groups precomputed once with
rouge-score's tokenizer and Porter stemmer (tested equal to rouge_score's RougeScorer).

References: docs/methods.md sec. 9.2; TACL 2021 sec. 5.2.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal, Sequence, get_args

import numpy as np

from metaeval_core._checks import check_choice
from metaeval_core.data.texts import SummaryTexts


RougeVariant = Literal["f1", "recall", "precision"]
ROUGE_VARIANTS: tuple[str, ...] = get_args(RougeVariant)

# ROUGE-1 measure names accepted as ``metric`` with degrade='tokens' (variant in the suffix).
_ROUGE1_NAME = re.compile(r"^rouge[-_]?1[._-](f1|fmeasure|recall|precision)$", re.IGNORECASE)


# ============================================================================================
# ROUGE-1 on a random k% of each summary's tokens (TACL sec. 5.2)
# ============================================================================================
@lru_cache(maxsize=1)
def _rouge_tokenizer():
    # Imported lazily (nltk is slow to import). use_stemmer=True uses nltk's Porter stemmer,
    # which is pure code: no nltk data download is needed.
    from rouge_score import tokenizers

    return tokenizers.DefaultTokenizer(use_stemmer=True)


@lru_cache(maxsize=16384)
def rouge_tokens(text: str) -> tuple[str, ...]:
    """``rouge-score``'s ROUGE tokens of ``text``: lower-cased, alphanumeric, Porter-stemmed.

    References
    ----------
    rouge-score 0.1.2 (``tokenizers.DefaultTokenizer(use_stemmer=True)``).
    """
    return tuple(_rouge_tokenizer().tokenize(text))


def subsample_sizes(lengths: np.ndarray, k: float) -> np.ndarray:
    """Tokens kept from summaries of ``lengths`` tokens at ``k``%: ``floor(length * k / 100)``.

    The product is formed before dividing, so an integer ``k`` that divides exactly gives
    the exact count (the rounding of TACL's implementation, SacreROUGE's simulations).
    """
    return np.floor(np.asarray(lengths, dtype=np.float64) * float(k) / 100.0).astype(np.int64)


@dataclass(frozen=True, eq=False)
class Rouge1Counts:
    """Unigram counts for ROUGE-1 of every summary, on all its tokens or a random subsample.

    A *group* is one token type within one summary: ``group_cell`` is its summary
    (cell ``i * M + j``), ``group_cap`` how often the type occurs in the reference.
    Token positions are stored contiguously by cell: ``position_cell`` and
    ``position_group`` give the cell and the group of each position, ``cell_start``
    the first position of each cell. The overlap of a sample is
    ``sum_g min(#sampled positions of g, group_cap[g])`` -- ROUGE-1's clipped count.

    Build with :meth:`from_texts` (rouge-score tokens) or :meth:`from_tokens`.

    References
    ----------
    docs/methods.md sec. 9; TACL 2021 sec. 5.2; Lin (2004).
    """

    shape: tuple[int, int]
    present: np.ndarray
    lengths: np.ndarray
    reference_lengths: np.ndarray
    position_cell: np.ndarray
    position_group: np.ndarray
    cell_start: np.ndarray
    group_cell: np.ndarray
    group_cap: np.ndarray

    @classmethod
    def from_tokens(cls, summaries: Sequence[Sequence[Sequence[str] | None]],
                    references: Sequence[Sequence[str]]) -> "Rouge1Counts":
        """From token lists: ``summaries[i][j]`` (None where missing) and ``references[j]``."""
        rows = [list(r) for r in summaries]
        n = len(rows)
        m = len(references)
        if n == 0 or m == 0 or any(len(r) != m for r in rows):
            raise ValueError(f"summaries must be an N x M nested sequence matching the {m} references")
        reference_counts = []
        for ref in references:
            counts: dict[str, int] = {}
            for token in ref:
                counts[token] = counts.get(token, 0) + 1
            reference_counts.append(counts)
        present = np.zeros((n, m), dtype=bool)
        lengths = np.zeros(n * m, dtype=np.int64)
        reference_lengths = np.zeros(n * m, dtype=np.int64)
        position_cell, position_group, group_cell, group_cap = [], [], [], []
        for i, row in enumerate(rows):
            for j, tokens in enumerate(row):
                cell = i * m + j
                reference_lengths[cell] = len(references[j])
                if tokens is None:
                    continue
                present[i, j] = True
                lengths[cell] = len(tokens)
                local: dict[str, int] = {}
                for token in tokens:
                    g = local.get(token)
                    if g is None:
                        g = local[token] = len(group_cell)
                        group_cell.append(cell)
                        group_cap.append(reference_counts[j].get(token, 0))
                    position_cell.append(cell)
                    position_group.append(g)
        cell_start = np.zeros(n * m, dtype=np.int64)
        cell_start[1:] = np.cumsum(lengths)[:-1]
        return cls(
            shape=(n, m), present=present, lengths=lengths, reference_lengths=reference_lengths,
            position_cell=np.asarray(position_cell, dtype=np.int64),
            position_group=np.asarray(position_group, dtype=np.int64), cell_start=cell_start,
            group_cell=np.asarray(group_cell, dtype=np.int64), group_cap=np.asarray(group_cap, dtype=np.int64),
        )

    @classmethod
    def from_texts(cls, texts: SummaryTexts) -> "Rouge1Counts":
        """From raw texts, tokenised (once per distinct text) as rouge-score does with ``use_stemmer=True``."""
        if not isinstance(texts, SummaryTexts):
            raise TypeError(f"texts must be SummaryTexts; got {type(texts).__name__}")
        summaries = [[None if s is None else rouge_tokens(s) for s in row] for row in texts.summaries]
        return cls.from_tokens(summaries, [rouge_tokens(r) for r in texts.references])

    @property
    def n_positions(self) -> int:
        return int(self.position_cell.size)

    def draw_ranks(self, rng: np.random.Generator) -> np.ndarray:
        """A uniformly random order of every summary's tokens: the rank of each position in its cell.

        Keeping the positions of rank ``< m`` is a uniform sample of ``m`` tokens without
        replacement; one draw serves every ``k`` (the samples are nested).
        """
        keys = rng.random(self.n_positions)
        # Cells are integers and keys lie in [0, 1): sorting cell + key orders by cell, then key.
        order = np.argsort(self.position_cell + keys, kind="stable")
        ranks = np.empty(self.n_positions, dtype=np.int64)
        ranks[order] = np.arange(self.n_positions) - self.cell_start[self.position_cell[order]]
        return ranks

    def counts(self, k: float | None = None, ranks: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Per cell (flat): the clipped overlap with the reference and the number of tokens scored.

        ``k=None`` (or 100) scores the full summaries; otherwise ``ranks`` from
        :meth:`draw_ranks` selects ``floor(length * k / 100)`` tokens of each summary.
        """
        n_cells = self.shape[0] * self.shape[1]
        if k is None or ranks is None:
            if k is not None and float(k) != 100.0:
                raise ValueError("ranks must be given to score a k% subsample (draw them with draw_ranks)")
            sampled = np.bincount(self.position_group, minlength=self.group_cell.size)
            kept = self.lengths
        else:
            kept = subsample_sizes(self.lengths, k)
            selected = ranks < kept[self.position_cell]
            sampled = np.bincount(self.position_group[selected], minlength=self.group_cell.size)
        clipped = np.minimum(sampled, self.group_cap)
        overlap = np.bincount(self.group_cell, weights=clipped, minlength=n_cells).astype(np.int64)
        return overlap, kept

    def scores(self, variant: RougeVariant, k: float | None = None, ranks: np.ndarray | None = None) -> np.ndarray:
        """ROUGE-1 ``variant`` of every summary as an (N, M) matrix, NaN where there is no summary.

        Precision ``o / max(m, 1)``, recall ``o / max(|ref|, 1)`` and F1 ``2 P R / (P + R)`` (0
        when both are 0), in rouge-score's floating-point order, so the full-summary values
        equal ``RougeScorer(['rouge1'], use_stemmer=True)`` exactly.
        """
        check_choice(variant, "variant", ROUGE_VARIANTS)
        overlap, kept = self.counts(k, ranks)
        overlap = overlap.astype(np.float64)
        precision = overlap / np.maximum(kept, 1)
        recall = overlap / np.maximum(self.reference_lengths, 1)
        if variant == "precision":
            values = precision
        elif variant == "recall":
            values = recall
        else:
            total = precision + recall
            with np.errstate(invalid="ignore", divide="ignore"):
                values = np.where(total > 0, 2 * precision * recall / total, 0.0)
        out = values.reshape(self.shape)
        return np.where(self.present, out, np.nan)


def rouge1_variant(metric: str) -> str | None:
    """The ROUGE-1 variant a measure name denotes (``'rouge-1.f1'`` -> ``'f1'``), or None."""
    match = _ROUGE1_NAME.match(metric) if isinstance(metric, str) else None
    if match is None:
        return None
    variant = match.group(1).lower()
    return "f1" if variant == "fmeasure" else variant
