"""Beyond the papers: the questions a practitioner asks of a meta-evaluation (docs/methods.md sec. 10).

* :func:`improvement_probability` -- "is my improvement real?": the probability that humans
  order two systems the same way as a metric difference of size ``delta``, from a monotone
  (isotonic) fit of agreement against ``|dx|`` over the dataset's system pairs, with a
  bootstrap band.
* :func:`plan_judgments` -- "how many judgments do I need?": rSYS interval width and
  PERM-BOTH power against the number of judged inputs (and systems), by subsampling the
  dataset, with a recommendation for a target width or power.
* :func:`significance_clusters` -- WMT-style clusters of metrics that are not significantly
  different, from a :class:`~metaeval_core.stats.significance.PairwiseTable`.
* :func:`system_influence` -- leave-one-system-out: how much each system moves the
  metric-human correlation.

References: docs/methods.md sec. 10; Deutsch, Dror & Roth (TACL 2021, NAACL 2022);
Deutsch, Foster & Freitag (2023) on ties; Kocmi et al. (2021, 2024) on metric deltas.
"""

from metaeval_core.analyses.practice.clusters import SignificanceClusters, significance_clusters
from metaeval_core.analyses.practice.improvement import (
    HUMAN_TIES,
    AgreementCurve,
    ImprovementResult,
    fit_agreement_curve,
    improvement_probability,
    pair_agreement,
)
from metaeval_core.analyses.practice.influence import InfluenceResult, system_influence
from metaeval_core.analyses.practice.planning import (
    PLAN_METHODS,
    PlanRecommendation,
    PlanResult,
    _recommend,
    MAX_PLAN_SECONDS,
    estimated_plan_seconds,
    plan_judgments,
    recommend_design,
)

__all__ = [
    "HUMAN_TIES", "PLAN_METHODS", "AgreementCurve", "ImprovementResult", "InfluenceResult", "PlanRecommendation",
    "MAX_PLAN_SECONDS", "PlanResult", "SignificanceClusters", "estimated_plan_seconds", "fit_agreement_curve", "improvement_probability", "pair_agreement",
    "plan_judgments", "recommend_design", "significance_clusters", "system_influence",
]
