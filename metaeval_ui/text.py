"""The dashboard's words: the glossary of its jargon (help tooltips); every sentence about a result comes from
:mod:`metaeval_core.wording` (re-exported here for the pages and figures), so the CLI and the pages say the same.

No streamlit import (figures use these too).
"""

from __future__ import annotations

from metaeval_core.wording import (  # noqa: F401 - re-exported: one wording for the CLI and the pages
    MAX_DECIMALS,
    SignificanceWording,
    ceiling_sentences,
    chance_sentence,
    coefficient_range,
    decile_grid_sentence,
    decisive_sentence,
    doubt_sentence,
    epsilon_note,
    fewer_systems_note,
    format_pvalue,
    method_description,
    pairs_count,
    pvalue_decimals,
    reference_caution,
    sentence,
    clause,
    count,
    count_of,
    number,
    bounds,
    separation_sentence,
    significance_wording,
    significant_pairs,
    system_level_measure,
    target_width_sentence,
    zero_disagreement_sentence,
)

# -- jargon: one plain-words definition per term, used as help tooltips -----------------------------------------
GLOSSARY = {
    "M_jud": "The number of judged inputs: inputs (documents, prompts, segments, ...) that have human scores. "
             "Metrics may also score unjudged inputs.",
    "undefined pieces skipped": "A correlation is undefined when one side is constant (every system tied). Such "
                                "inputs (input level) or resamples are left out of the average and counted.",
    "Pooled reduction": "1 − (mean over systems of the variance with all inputs) / (mean over systems of the "
                        "variance with judged inputs only): the share of per-system score variance removed by "
                        "scoring systems on every input. NAACL 2022 quotes ~99% on real test sets.",
    "Average variance reduction": "The mean over systems of 1 − var(all) / var(judged), where var is the variance of "
                                  "the system's bootstrapped mean score.",
    "rSYS": "System-level Kendall τ: how often the metric orders a pair of systems as the humans do (all pairs).",
    "rSYS-Δ": "rSYS restricted to system pairs whose metric scores differ by at most u (and at least l): the close "
              "pairs a new paper actually has to tell apart (NAACL 2022).",
}


def glossary(term: str) -> str:
    """The plain-words definition of ``term`` (KeyError for an unknown term: a typo should fail a test)."""
    return GLOSSARY[term]
