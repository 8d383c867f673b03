"""WMT's conventions for mt-metrics-eval data: the standard reference, human translations, gold, primary metrics.

A :class:`WmtConventions` record travels with a dataset read from mt-metrics-eval's layout (the built-in
``wmt22-zhen`` and any user directory or zip). It says which systems WMT scores (never the standard
reference; the other human translations only when asked), which human score is the gold, which metrics
are primary, and which input pool metrics use at the system level. The dashboard and the command line
apply it by default and print its :meth:`WmtConventions.caption`; the old behaviour stays available by name
(``--all-systems``, ``--pool judged``, any ``--human``).

The facts for known test sets come from mt-metrics-eval's ``meta_info.py`` (``std_ref``, ``std_gold``,
``primary_metrics``); for an unknown test set they are inferred from the files and the record says so.

References: google-research/mt-metrics-eval, ``mt_metrics_eval/meta_info.py`` and ``data.GetCorrelations``
(systems: ``sys_names - main_refs - close_refs``, minus ``human_sys_names`` unless ``include_human``, then
only systems with a gold score; metrics: references within ``main_refs``); Freitag et al. (WMT 2022)
"Results of WMT22 Metrics Shared Task: Stop Using BLEU - Neural Metrics Are Better and More Robust";
docs/methods.md sec. 0.6.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

WMT = "wmt"
SOURCE = "mt-metrics-eval (google-research), meta_info.py; Freitag et al. (WMT22 and WMT23 metrics tasks)"

# mt-metrics-eval meta_info.py, WMT22_PRIMARIES: base names (without the -REF suffix) of the primary
# submissions and baselines of the WMT22 metrics task.
WMT22_PRIMARIES: frozenset[str] = frozenset({
    "BERTScore", "BLEURT-20", "BLEU", "chrF", "COMET-20", "COMET-22", "COMETKiwi", "COMET-QE", "f200spBLEU",
    "HuaweiTSC_EE_BERTScore_0.3_With_Human", "HWTSC-Teacher-Sim", "MATESE-QE", "MATESE", "MEE4",
    "metricx_xxl_MQM_2020", "MS-COMET-22", "MS-COMET-QE-22", "REUSE", "SEScore", "UniTE", "UniTE-src", "YiSi-1",
})

# mt-metrics-eval meta_info.py, DATA['wmt22']: (std_ref, std_gold at the segment and system level) per lp.
_WMT22: Mapping[str, tuple[str, str]] = {
    "en-de": ("refA", "mqm"), "en-ru": ("refA", "mqm"), "zh-en": ("refA", "mqm"),
    "cs-en": ("refB", "wmt"), "de-en": ("refA", "wmt"), "ja-en": ("refA", "wmt"), "ru-en": ("refA", "wmt"),
    "uk-en": ("refA", "wmt"), "en-cs": ("refB", "wmt-appraise"), "en-hr": ("refA", "wmt-appraise"),
    "en-ja": ("refA", "wmt-appraise"), "en-uk": ("refA", "wmt-appraise"), "en-zh": ("refA", "wmt-appraise"),
}
# mt-metrics-eval meta_info.py, WMT23_PRIMARIES (the WMT23 primary submissions and baselines).
WMT23_PRIMARIES: frozenset[str] = frozenset({
    "Calibri-COMET22", "Calibri-COMET22-QE", "cometoid22-wmt22", "eBLEU", "embed_llama", "GEMBA-MQM", "KG-BERTScore",
    "MaTESe", "MEE4", "MetricX-23", "MetricX-23-QE", "mre-score-labse-regular", "mbr-metricx-qe", "sescoreX",
    "tokengram_F", "XCOMET-Ensemble", "XCOMET-QE-Ensemble", "XLsim", "BERTscore", "BLEU", "BLEURT-20", "chrF", "COMET",
    "CometKiwi", "docWMT22CometDA", "docWMT22CometKiwiDA", "f200spBLEU", "MS-COMET-QE-22", "prismRef", "prismSrc",
    "Random-sysname", "YiSi-1",
})
# mt-metrics-eval meta_info.py, DATA['wmt23']: the MQM pairs (WMT23) and the DA+SQM pairs (WMT23_DA); en-he, en-ru,
# en-uk, ru-en and uk-en have no standard gold there.
_WMT23: Mapping[str, tuple[str, str]] = {
    "en-de": ("refA", "mqm"), "he-en": ("refB", "mqm"), "zh-en": ("refA", "mqm"),
    "cs-uk": ("refA", "da-sqm"), "de-en": ("refA", "da-sqm"), "en-cs": ("refA", "da-sqm"), "en-he": ("refB", ""),
    "en-ja": ("refA", "da-sqm"), "en-ru": ("refA", ""), "en-uk": ("refA", ""), "en-zh": ("refA", "da-sqm"),
    "ja-en": ("refA", "da-sqm"), "ru-en": ("refA", ""), "uk-en": ("refA", ""),
}
KNOWN: Mapping[tuple[str, str], tuple[str, str, frozenset[str]]] = {
    **{("wmt22", lp): (ref, gold, WMT22_PRIMARIES) for lp, (ref, gold) in _WMT22.items()},
    **{("wmt23", lp): (ref, gold, WMT23_PRIMARIES) for lp, (ref, gold) in _WMT23.items()},
}
# mt-metrics-eval meta_info.py: outlier_systems, left out unless include_outliers.
OUTLIERS: Mapping[tuple[str, str], frozenset[str]] = {
    ("wmt22", "en-de"): frozenset({"M2M100_1.2B-B4"}),
    ("wmt23", "en-de"): frozenset({"synthetic_ref"}), ("wmt23", "zh-en"): frozenset({"synthetic_ref"}),
}


@dataclass(frozen=True)
class WmtConventions:
    """WMT's conventions for one mt-metrics-eval test set and language pair.

    Attributes
    ----------
    name : str
        ``'wmt'``.
    source : str
        Where the facts come from (mt-metrics-eval's meta-info, or "inferred from the files").
    std_ref : str
        The standard reference (the metrics' reference): never scored as a system.
    human_translations : tuple of str
        The other references scored as systems: included only on request.
    gold : str
        The standard human score (mt-metrics-eval's ``std_gold``), the default human measure; ``''`` if unknown.
    primary_metrics : tuple of str
        Metric ids whose base name is primary and whose references are within the standard reference
        (``-refA`` or ``-src``): the default metric selection.
    eligible_metrics : tuple of str
        Every metric id WMT scores with the standard reference (``-refA``, ``-src``): a metric using another
        reference is left out of WMT's tables.
    pool : str
        The metrics' input pool at the system level: ``'all'`` (WMT averages a metric over every segment).
    outliers : tuple of str
        Systems mt-metrics-eval marks as outliers for this language pair (left out, as WMT does by default).
    """

    name: str
    source: str
    std_ref: str
    human_translations: tuple[str, ...] = ()
    gold: str = ""
    primary_metrics: tuple[str, ...] = ()
    eligible_metrics: tuple[str, ...] = ()
    pool: str = "all"
    outliers: tuple[str, ...] = ()

    def systems(self, *, human_translations: bool = False) -> str:
        """The system selection of WMT's tables: without the references scored as systems, or (with
        ``human_translations``) every system but the standard reference. Syntax: docs/methods.md sec. 0.3."""
        excluded = [self.std_ref] if human_translations else [self.std_ref, *self.human_translations]
        from metaeval_core.data.selection import quote_term

        # dict.fromkeys: an outlier may also be a human translation (WMT23's synthetic_ref is both).
        return ",".join(f"-{quote_term(name)}" for name in dict.fromkeys((*excluded, *self.outliers)) if name)

    def caption(self, *, human_translations: bool = False, pool: str | None = None, human: str | None = None,
                systems: str | None = None) -> str:
        """One sentence naming the conventions in use, for a page or a table (the same record as the numbers).

        ``systems`` is the selection actually applied when it is not the convention's (e.g. every system).
        """
        parts = [f"WMT conventions ({self.source.split(';')[0]})"]
        if systems is not None and systems != self.systems(human_translations=human_translations):
            parts.append(f"system set not WMT's: {systems or 'every system'}")
        elif human_translations:
            parts.append(f"standard reference {self.std_ref} not a system; human translations "
                         f"{', '.join(self.human_translations) or 'none'} included")
        else:
            refs = ", ".join(r for r in (self.std_ref, *self.human_translations) if r)
            parts.append(f"references ({refs}) not systems")
        if self.outliers and (systems is None or systems == self.systems(human_translations=human_translations)):
            parts.append(f"outlier systems left out ({', '.join(self.outliers)})")
        gold = human or self.gold
        if gold:
            parts.append(f"human {gold}" + (" (WMT's gold)" if gold == self.gold else f" (WMT's gold is "
                                                                                      f"{self.gold})"))
            parts.append("systems without a score for it removed")
        used = pool or self.pool
        parts.append("metrics over every segment (pool all)" if used == "all" else
                     "metrics over the judged cells (pool judged, not WMT's)")
        return "; ".join(parts) + "."

    def to_dict(self) -> dict:
        return {"name": self.name, "source": self.source, "std_ref": self.std_ref,
                "human_translations": list(self.human_translations), "gold": self.gold,
                "primary_metrics": list(self.primary_metrics), "eligible_metrics": list(self.eligible_metrics),
                "pool": self.pool, "outliers": list(self.outliers)}

    @classmethod
    def from_dict(cls, raw: Mapping) -> "WmtConventions":
        return cls(name=str(raw["name"]), source=str(raw["source"]), std_ref=str(raw["std_ref"]),
                   human_translations=tuple(raw.get("human_translations", ())), gold=str(raw.get("gold", "")),
                   primary_metrics=tuple(raw.get("primary_metrics", ())),
                   eligible_metrics=tuple(raw.get("eligible_metrics", ())), pool=str(raw.get("pool", "all")),
                   outliers=tuple(raw.get("outliers", ())))


def mtme_conventions(test_set: str, lp: str, *, references: Sequence[str], systems: Sequence[str],
                     humans: Sequence[str], metrics: Mapping[str, tuple[str, str]]) -> WmtConventions:
    """WMT's conventions for an mt-metrics-eval test set and language pair.

    ``references`` are the reference names, ``systems`` the system names, ``humans`` the human measures and
    ``metrics`` maps each metric id to its (base name, references) as in the file name. A known test set
    takes mt-metrics-eval's meta-info; otherwise the standard reference is ``refA`` when present (else the
    first reference), the gold ``mqm`` when present (else the first human measure), and no metric is primary.

    References
    ----------
    mt-metrics-eval ``meta_info.py`` and ``data.GetCorrelations``.
    """
    known = KNOWN.get((test_set, lp))
    refs = sorted(references)
    if known is not None and known[0] in refs:
        std_ref, gold, primaries = known
        source = f"{SOURCE}: {test_set} {lp}"
    else:
        std_ref = "refA" if "refA" in refs else (refs[0] if refs else "")
        gold = "mqm" if "mqm" in humans else (humans[0] if humans else "")
        primaries = frozenset()
        source = (f"WMT's rules (mt-metrics-eval data.GetCorrelations); standard reference and gold inferred from "
                  f"the files ({test_set} {lp} is not in mt-metrics-eval's meta-info as known here)")
    if gold not in humans:
        gold = ""
    allowed = {std_ref, "src"}
    eligible = tuple(m for m, (_, used) in metrics.items() if set(used.split(".")) <= allowed)
    primary = tuple(m for m in eligible if metrics[m][0] in primaries)
    return WmtConventions(name=WMT, source=source, std_ref=std_ref,
                       human_translations=tuple(s for s in systems if s in set(refs) and s != std_ref),
                       gold=gold, primary_metrics=primary, eligible_metrics=eligible, pool="all",
                       outliers=tuple(s for s in systems if s in OUTLIERS.get((test_set, lp), ())))
