"""Each judge on the items it judged: where judges cover different items (LLMBar's Rating strategies judged the
LLMBar sets only), a statistic over "all items" must not count the items a judge never saw.

References: docs/methods.md sec. 18.9.
"""

from __future__ import annotations

from typing import Sequence

from metaeval_core.judges.model import PairwiseData
from metaeval_core.judges.scores import ScoreAccuracy, score_accuracy


def own_items(data: PairwiseData, judge: str) -> PairwiseData:
    """The items ``judge`` gave a verdict on (in some order); ``data`` itself when it judged every item."""
    covered = data.covered(judge)
    return data if covered.all() else data.select_items(covered, label=f"judged-by={judge}")


def score_accuracy_on_own_items(data: PairwiseData, judges: Sequence[str], **options) -> tuple[ScoreAccuracy, ...]:
    """:func:`~metaeval_core.judges.score_accuracy` of each judge on its own items: an item it never scored is
    not in scope (``invalid='wrong'`` still counts the items it judged without both scores as wrong). Every judge
    is resampled with the same seed.

    References
    ----------
    docs/methods.md sec. 18.9.
    """
    return tuple(score_accuracy(own_items(data, judge), judges=[judge], **options)[0] for judge in judges)


__all__ = ["own_items", "score_accuracy_on_own_items"]
