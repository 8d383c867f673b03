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

from metaeval_core.analyses.reproduce import SACREROUGE_TABLE
from metaeval_core.stats.correlation import correlate
from metaeval_core.data.registry import load_dataset

pytestmark = pytest.mark.realdata

COEFFICIENTS = ("pearson", "spearman", "kendall")

# metric id: ((system r, rho, tau), (summary r, rho, tau)); None = not published. The one table of these values
# lives in the core, shared with the "Reproduce the papers" page and `metaeval reproduce`.
PUBLISHED = SACREROUGE_TABLE

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
