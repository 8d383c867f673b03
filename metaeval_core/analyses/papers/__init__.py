"""REALSumm, SummEval and Peyrard analyses: top-k, pairwise F1, metric correlation
matrix, annotator agreement, the high-scoring range and normality.

Every public function takes the dataset first and its options as keyword-only
arguments, validates them in one helper (a ``ValueError``/``TypeError`` naming
the parameter and the rule, or a :class:`~metaeval_core.data.dataset.DatasetError`
for an unknown measure, system or attribute) and returns a frozen dataclass
with named fields and a ``to_records()`` method giving plain rows.

Undefined pieces (a correlation on fewer than 2 points or on a constant vector)
are NaN, never 0, and every result counts what it dropped (docs/methods.md sec. 1).

References: docs/methods.md sec. 7 (Bhandari et al., EMNLP 2020) and sec. 8
(Fabbri et al., TACL 2021; Peyrard, ACL 2019).
"""

from metaeval_core.analyses.papers.normality import NormalityRow, NormalityTable, normality_table
from metaeval_core.analyses.papers.peyrard import NORMALISATIONS, HighRangeResult, high_range
from metaeval_core.analyses.papers.realsumm import PairwiseF1Result, TopKResult, pairwise_f1, topk_correlations, weighted_f1
from metaeval_core.analyses.papers.summeval import (
    ALPHA_NOTE,
    DEFAULT_GROUP,
    MATRIX_ORDERS,
    AlphaRow,
    AnnotatorAgreement,
    CorrelationMatrix,
    GroupCorrelationRow,
    alpha_note,
    annotator_agreement,
    correlation_matrix,
    krippendorff_interval,
)


__all__ = [
    "TopKResult",
    "topk_correlations",
    "PairwiseF1Result",
    "pairwise_f1",
    "weighted_f1",
    "CorrelationMatrix",
    "correlation_matrix",
    "AlphaRow",
    "GroupCorrelationRow",
    "AnnotatorAgreement",
    "annotator_agreement",
    "alpha_note",
    "ALPHA_NOTE",
    "DEFAULT_GROUP",
    "HighRangeResult",
    "high_range",
    "NormalityRow",
    "NormalityTable",
    "normality_table",
]
