"""Meta-evaluation of pairwise ("A or B?") judges against human preferences (docs/methods.md sec. 18).

Public API (every name is re-exported here; the modules hold the code):

Data (``model``, ``loaders``)
    :class:`PairwiseData` (items x raters x orders of integer-coded verdicts, texts, systems, pair sets,
    item attributes; ``select_pair_set``, ``select_subset``, ``select_items``, ``judges_of``, ``covered``,
    ``verdict_counts``, ``orders_of``), :class:`Rater` (id, kind human/gold/judge, attributes: LLMBar's
    ``evaluator`` and ``strategy``), the codes :data:`A`, :data:`B`, :data:`TIE`, :data:`INVALID`,
    :data:`MISSING` and names :data:`VERDICTS`, :data:`ORDERS` (``'original'``: A shown first,
    ``'swapped'``: B shown first), :func:`majority_verdict`;
    :func:`load_pairwise` (a registry id of kind ``pairwise``: ``'pandalm'``, ``'llmbar'``, or a verdict file),
    :func:`load_pandalm`, :func:`load_llmbar`, :data:`PAIRWISE_LOADERS`.
Uploads (``upload``)
    :func:`read_verdict_file` (long CSV/TSV or JSONL: item, system_a, system_b, rater, verdict[, order]
    [, score_a, score_b][, kind, pair_set, input, output_a, output_b, attr.*]; the score uploads' checks and
    limits; invalid verdicts kept and named), :func:`verdict_report` -> :class:`VerdictReport`, :func:`pairwise_to_long_frame` (the way back).
Agreement with people (``agreement``)
    :func:`judge_agreement` -> :class:`AgreementTable` of :class:`JudgeAgreement` (estimate, low, high,
    n_items, n_invalid, n_ties, reference and conventions named); statistics ``'accuracy'``, ``'kappa'``,
    ``'alpha'``; ``order`` ``'original'``/``'swapped'``/``'average'``/``'both'``; ``ties``
    ``'three-class'``/``'drop-reference-ties'``/``'drop-any-tie'``; ``invalid`` ``'wrong'``/``'drop'``/``'tie'``;
    ``reference`` ``'auto'``/``'majority'``/``'gold'``/a rater id (:func:`resolve_reference`).
    :func:`human_ceiling` (each annotator against the majority of the others, an :class:`AgreementTable`),
    :func:`chance_baseline` (verdicts permuted over items -> :class:`JudgeChanceBaseline` per judge),
    :func:`rater_alpha` (Krippendorff's alpha among several raters -> :class:`RaterAlpha`),
    :func:`agreement_by_subset` (per pair set or item attribute, chance p-values corrected over all subsets and
    judges -> :class:`SubsetAgreement`).
Judge against judge (``compare``)
    :func:`compare_judges` -> :class:`JudgeComparison`: paired permutation tests between every two judges
    (verdicts swapped per item), corrected (Bonferroni/Holm/BH over the table or each row), a
    :class:`~metaeval_core.stats.significance.PairwiseTable` and WMT-style significance ``clusters``.
Leaderboard (``leaderboard``)
    :func:`judge_leaderboard` -> :class:`JudgeLeaderboard`: in one call, each judge's agreement with interval,
    significance cluster and chance level (:class:`JudgeLeaderboardRow` of kind ``'judge'``), then the annotators and
    a chance row (kind ``'chance'``), the annotators and the human ceiling (kinds ``'annotator'``,
    ``'human-ceiling'``, one stated rule) when the reference is the human majority of at least two annotators;
    keeps the underlying ``agreement``, ``chance``, ``comparison`` (clusters) and ``ceiling``; its sentences are
    in ``wording`` (the CLI and the page print the same).
Raters and the alt-test (``raters``, ``alt_test``)
    :func:`rater_agreement` -> :class:`RaterAgreement` (rater x rater kappa, raw agreement, alpha of people and
    judges), :func:`classification_scores` (macro precision/recall/F1 against the reference); :func:`alt_test`,
    :func:`alt_test_scores` -> :class:`AltTest` (Calderon et al. 2025: may a judge replace the annotators?).
    :func:`attach_verdicts` adds a user's judges to a built-in dataset by item id (JudgeBench: :func:`load_judgebench`).
Biases (``biases``)
    :func:`positional_bias` -> :class:`PositionalBias` (consistency across orders, first-position preference,
    each an :class:`Estimate` with interval); :func:`length_preference` -> :class:`LengthPreference` (judge vs
    reference share choosing the longer output and their difference); :func:`output_lengths`.
Systems (``systems``)
    :func:`system_ranking` -> :class:`SystemRanking` (win rates, or Bradley-Terry with ties in Davidson's
    form: :func:`davidson_fit` -> :class:`DavidsonFit`), :func:`ranking_agreement` -> :class:`RankingAgreement`
    (Kendall tau-b / Pearson between a judge's and the reference's system scores, item bootstrap),
    :func:`close_pair_agreement` -> :class:`ClosePairs` (same winner on the system pairs people find close:
    the rSYS-Delta analogue).
Scores as verdicts (``scores``)
    :func:`score_accuracy` -> :class:`ScoreAccuracy` (tie-calibrated pairwise accuracy of judges that score
    each output, with the epsilon), :func:`scoring_judges`, :func:`verdicts_from_scores`.

All resampling takes ``confidence_level``, ``n_resamples``, ``rng`` (a Generator or a seed) and ``batch``
(results do not depend on it); every result is a frozen dataclass with ``to_dict()``/``to_frame()``.
"""

from metaeval_core.judges.model import (  # noqa: F401
    A, B, INVALID, MISSING, NO_MAJORITY, ORDERS, RATER_KINDS, TIE, VERDICTS, PairwiseData, Rater, majority_verdict,
)
from metaeval_core.judges.loaders import PAIRWISE_LOADERS, load_llmbar, load_pairwise, load_pandalm  # noqa: F401
from metaeval_core.judges._kernel import (  # noqa: F401
    INVALID_CONVENTIONS, ORDER_MODES, STATISTICS, TIE_CONVENTIONS,
)
from metaeval_core.judges.agreement import (  # noqa: F401
    AgreementTable, JudgeAgreement, JudgeChanceBaseline, RaterAlpha, SubsetAgreement, agreement_by_subset,
    chance_baseline, human_ceiling, judge_agreement, rater_alpha, resolve_reference,
)
from metaeval_core.judges.compare import PERMUTATION_METHOD, JudgeComparison, compare_judges, draw_swaps  # noqa: F401
from metaeval_core.judges.leaderboard import JudgeLeaderboard, JudgeLeaderboardRow, judge_leaderboard  # noqa: F401
from metaeval_core.judges import wording  # noqa: F401
from metaeval_core.judges.loaders import attach_verdicts, load_judgebench  # noqa: F401
from metaeval_core.judges.raters import (  # noqa: F401
    ClassificationScores, RaterAgreement, classification_scores, rater_agreement,
)
from metaeval_core.judges.alt_test import AltTest, AnnotatorTest, alt_test, alt_test_scores  # noqa: F401
from metaeval_core.judges.biases import (  # noqa: F401
    Estimate, LengthPreference, PositionalBias, length_preference, output_lengths, positional_bias,
)
from metaeval_core.judges.systems import (  # noqa: F401
    RANK_COEFFICIENTS, RANKING_METHODS, ClosePairs, DavidsonFit, RankingAgreement, SystemRanking,
    close_pair_agreement, davidson_fit, ranking_agreement, system_ranking,
)
from metaeval_core.judges.upload import (  # noqa: F401
    VerdictReport, is_verdict_file, pairwise_to_long_frame, read_verdict_file, verdict_report,
)
from metaeval_core.judges.scores import ScoreAccuracy, score_accuracy, scoring_judges, verdicts_from_scores  # noqa: F401

__all__ = [
    "A", "B", "TIE", "INVALID", "MISSING", "VERDICTS", "ORDERS", "RATER_KINDS", "NO_MAJORITY",
    "PairwiseData", "Rater", "majority_verdict",
    "PAIRWISE_LOADERS", "load_pairwise", "load_pandalm", "load_llmbar",
    "STATISTICS", "ORDER_MODES", "TIE_CONVENTIONS", "INVALID_CONVENTIONS",
    "AgreementTable", "JudgeAgreement", "JudgeChanceBaseline", "judge_agreement", "human_ceiling", "chance_baseline",
    "resolve_reference", "RaterAlpha", "rater_alpha", "SubsetAgreement", "agreement_by_subset",
    "JudgeComparison", "compare_judges", "draw_swaps", "PERMUTATION_METHOD",
    "JudgeLeaderboard", "JudgeLeaderboardRow", "judge_leaderboard",
    "Estimate", "PositionalBias", "LengthPreference", "positional_bias", "length_preference", "output_lengths",
    "RANKING_METHODS", "RANK_COEFFICIENTS", "SystemRanking", "DavidsonFit", "RankingAgreement", "ClosePairs",
    "system_ranking", "davidson_fit", "ranking_agreement", "close_pair_agreement",
    "ScoreAccuracy", "score_accuracy", "scoring_judges", "verdicts_from_scores",
    "VerdictReport", "is_verdict_file", "pairwise_to_long_frame", "read_verdict_file", "verdict_report",
    "wording", "attach_verdicts", "load_judgebench", "RaterAgreement", "ClassificationScores", "rater_agreement",
    "classification_scores", "AltTest", "AnnotatorTest", "alt_test", "alt_test_scores",
]
