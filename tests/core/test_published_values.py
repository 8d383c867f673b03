"""Published SummEval correlations reproduced from the loaded data.

The nine rows are SacreROUGE's published correlations to the expert relevance
judgments of Fabbri et al. (2021), peers only (``danieldeutsch/sacrerouge``
``doc/metrics/{rouge,qaeval,moverscore}.md``), as quoted in the data mirror's
``summeval/SOURCE.md``; the two BERTScore rows are the extra values given
there. Human score: the mean of the 3 experts. System level: correlation of
per-system means over the 100 documents; summary level: the correlation over
the 16 systems within each document, averaged (docs/methods.md sec. 1).

Every value must round to the published two decimals: ``|ours - published| <= 0.005``
(plus float slack).

References: docs/methods.md sec. 1; Deutsch, Dror & Roth (TACL 2021); SOURCE.md of ``summeval/``.
"""

from __future__ import annotations

import pytest

from metaeval_core.stats.correlation import correlate
from metaeval_core.data.registry import load_dataset

pytestmark = pytest.mark.realdata

COEFFICIENTS = ("pearson", "spearman", "kendall")

# metric id: ((system r, rho, tau), (summary r, rho, tau)); None = not published.
PUBLISHED = {
    "rouge-1.f1": ((0.61, 0.62, 0.50), (0.28, 0.26, 0.20)),
    "rouge-1.recall": ((0.55, 0.56, 0.42), (0.31, 0.28, 0.23)),
    "rouge-2.f1": ((0.64, 0.60, 0.43), (0.23, 0.19, 0.14)),
    "rouge-2.recall": ((0.65, 0.78, 0.57), (0.26, 0.23, 0.18)),
    "rouge-l.f1": ((0.61, 0.48, 0.32), (0.21, 0.18, 0.14)),
    "rouge-l.recall": ((0.70, 0.83, 0.65), (0.27, 0.26, 0.21)),
    "qa-eval.f1": ((0.82, 0.91, 0.77), (0.30, 0.29, 0.22)),
    "qa-eval.lerc": ((0.80, 0.90, 0.77), (0.34, 0.31, 0.24)),
    "MoverScore": ((0.56, 0.54, 0.42), (0.28, 0.24, 0.18)),
    # Extra values in SOURCE.md (computed from these files, not in SacreROUGE's docs).
    "bertscore.recall": ((0.84, 0.91, 0.75), (0.37, 0.35, 0.27)),
    "bertscore.f1": ((0.54, 0.40, 0.28), None),
}

CASES = [
    pytest.param(metric, level, coefficient, values[k], id=f"{metric}-{level}-{coefficient}")
    for metric, rows in PUBLISHED.items()
    for level, values in zip(("system", "input"), rows)
    if values is not None
    for k, coefficient in enumerate(COEFFICIENTS)
]


@pytest.fixture(scope="module")
def summeval(data_dir):
    return load_dataset("summeval", data_dir=data_dir)


def test_all_published_rows_are_covered():
    assert len(CASES) == 9 * 6 + 6 + 3


@pytest.mark.parametrize("metric, level, coefficient, published", CASES)
def test_published_summeval_value(summeval, metric, level, coefficient, published):
    result = correlate(summeval, metric, "expert.relevance", level=level, coefficient=coefficient)
    assert result.n == (16 if level == "system" else 100)
    assert result.n_undefined == 0
    assert abs(result.estimate - published) <= 0.005 + 1e-9, f"{metric} {level} {coefficient}: {result.estimate:.4f}"
