"""Is metric X closer to the humans than metric Y? Permutation, paired-bootstrap and Williams tests.

``H0: rho(X, Z) - rho(Y, Z) <= 0`` against ``H1: > 0`` (or two-sided), with
``delta = r(X, Z) - r(Y, Z)`` at the system, input or global level.

* Permutation (TACL 2021 Algorithm 2): X and Y are z-scored over all their cells,
  then scores are swapped between them: whole system rows (PERM-SYSTEMS), whole
  input columns (PERM-INPUTS) or every cell independently (PERM-BOTH), each with
  probability 1/2. ``p = (1 + #{delta_s >= delta}) / (1 + k)``.
* Paired bootstrap: X, Y and Z resampled with the same indices,
  ``p = (1 + #{delta_s - delta >= delta}) / (1 + k)``.
* Williams' test from the three pairwise correlations (system and global levels).
* WMT's system-level test (``wmt-perm-sys``, ``significance.wmt``): mt-metrics-eval's PermutationSigDiff,
  which z-scores each metric's *system* scores and swaps them system by system.

``k`` counts the *defined* resamples; undefined ones are dropped and reported.
Comparisons use an absolute tolerance of 1e-12 in the direction of the null, so a
resample equal to the observed value up to rounding counts as at least as extreme
(scipy's permutation_test does the same with a relative tolerance).

Speed: the swap masks of PERM-SYSTEMS/INPUTS are drawn up front (k x N, k x M
uniforms < 1/2); PERM-BOTH draws, per resample and in draw order, ``ceil(N M / 64)``
raw 64-bit words whose bits are the cell swaps, so chunking never changes them.
At the system level the means of a swapped matrix are ``mean(X) + mean(B * (Y - X))``
along inputs; at the input level with Kendall the pair counts of every input under
every swap pattern are a quadratic form ``const + B' Q B`` in the swap bits ``B``
(pairs of cells swap in one of four ways), evaluated as one batched matrix product.

References: docs/methods.md sec. 3; Deutsch, Dror & Roth (TACL 2021) sec. 4 and App. B.

Parts: ``_common`` (method names, :class:`ComparisonResult`, p-value counting),
``permutation`` (swap masks and engines), ``compare`` (:func:`compare_metrics`, Williams),
``corrections`` (Bonferroni, Holm, BH), ``wmt`` (WMT's system-level test), ``tables`` (:func:`compare_all_pairs`,
:class:`PairwiseTable`). Every name is importable from this package as before.
"""

from metaeval_core.stats.significance._common import (  # noqa: F401
    ALTERNATIVES,
    CORRECTIONS,
    FAMILIES,
    PAIRED_BOOTSTRAP_METHODS,
    PERMUTATION_METHODS,
    STOPPING_RULES,
    Stopping,
    TEST_METHODS,
    WMT_METHODS,
    Alternative,
    ComparisonResult,
    Correction,
    Family,
    TestMethod,
    _TOLERANCE,
    _count_pvalue,
    method_label,
    method_problem,
    methods_for,
)
from metaeval_core.stats.significance.compare import _compare_core, _williams, compare_metrics  # noqa: F401
from metaeval_core.stats.significance.corrections import correct_pvalues, correct_table  # noqa: F401
from metaeval_core.stats.significance.permutation import (  # noqa: F401
    _PermutationEngine,
    _SystemPermutation,
    _draw_swap_masks,
    _iter_swap_masks,
    _permutation_null,
    _zscore_params,
)
from metaeval_core.stats.significance.tables import (  # noqa: F401
    PairwiseTable,
    _shared_seed,
    block_early_min,
    blocks_settled_draws,
    compare_all_pairs,
    estimated_table_seconds,
    permutation_pair_nulls,
    sequential_stopping_applies,
)
from metaeval_core.stats.significance.wmt import (  # noqa: F401
    WMT_SYSTEM_TEST,
    WmtSystemPermutation,
    default_test,
    draw_system_swaps,
    wmt_pair_nulls,
)
