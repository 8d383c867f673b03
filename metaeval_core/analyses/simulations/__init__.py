"""Simulations that judge the resampling methods themselves (docs/methods.md sec. 9; TACL 2021 sec. 5).

* :func:`ci_coverage` -- how often a 95% interval computed on half of the systems
  and half of the inputs contains the correlation on the *other* halves (TACL
  Table 1). A method that generalises to new systems and new inputs should come
  close to the nominal level.
* :func:`power_curve` -- how often a test detects that a metric ``X`` is better
  than a degraded copy ``Y_k`` of it (TACL Fig. 3). With texts, ``Y_k`` is
  ROUGE-1 computed on a random ``k``% of each summary's tokens (``X`` is ROUGE-1
  on the full summaries, both from the same counts); without texts, ``Y_k`` is
  ``X`` plus Gaussian noise whose sd is ``k`` times the sd of ``X``'s cells.

Randomness. Everything a run draws comes from one seed, in a fixed order, so the
same seed gives the same result whatever ``batch`` is, and a run stopped early
(``should_stop``) returns exactly the first trials of the full run:

* coverage: the split permutations of every trial (systems ``(T, N)``, then
  inputs ``(T, M)``) are drawn up front from the Generator, then 128 bits of
  entropy; the bootstrap of method ``m`` in trial ``t`` uses its own stream,
  ``SeedSequence(entropy, spawn_key=(t, index of m in CI_METHODS))``;
* power: the root entropy is drawn first; trial ``t`` draws its degradation
  (token order or noise) from stream ``(t, 0)`` and test ``s`` uses stream
  ``(t, 1 + index of s in TEST_METHODS)``. The streams do not depend on ``k``:
  the points of a curve share common random numbers (the ``k``% token samples
  of one trial are nested; the noise is one draw scaled by ``k``), which makes
  the curve smoother without biasing any point.

The ROUGE-1 of a random ``k``% subsample is counted in numpy from per-summary
token groups precomputed once with ``rouge-score``'s tokenizer and Porter
stemmer (no data files needed); :class:`Rouge1Counts` is tested to equal
``rouge_score.rouge_scorer.RougeScorer(['rouge1'], use_stemmer=True)`` exactly,
on full summaries and on subsamples.

References: docs/methods.md sec. 9; Deutsch, Dror & Roth (TACL 2021) sec. 5.1 (Table 1)
and sec. 5.2 (Fig. 3).
"""

from metaeval_core.analyses.simulations._common import _root_entropy, _stream
from metaeval_core.analyses.simulations.coverage import (
    DEFAULT_CI_METHODS,
    CoverageResult,
    CoverageRow,
    CoverageSplits,
    ci_coverage,
    draw_coverage_splits,
)
from metaeval_core.analyses.simulations.power import (
    DEFAULT_NOISE_KS,
    DEFAULT_TESTS,
    DEFAULT_TOKEN_KS,
    DEGRADES,
    PowerResult,
    PowerRow,
    power_curve,
)
from metaeval_core.analyses.simulations.rouge import ROUGE_VARIANTS, Rouge1Counts, rouge1_variant, rouge_tokens, subsample_sizes

__all__ = [
    "DEFAULT_CI_METHODS", "DEFAULT_NOISE_KS", "DEFAULT_TESTS", "DEFAULT_TOKEN_KS", "DEGRADES", "ROUGE_VARIANTS",
    "CoverageResult", "CoverageRow", "CoverageSplits", "PowerResult", "PowerRow", "Rouge1Counts", "ci_coverage",
    "draw_coverage_splits", "power_curve", "rouge1_variant", "rouge_tokens", "subsample_sizes",
]
