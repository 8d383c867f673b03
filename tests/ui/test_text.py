"""metaeval_ui.text: p-values whose shown digits agree with the decision; method descriptions; glossary."""

from __future__ import annotations

import math

import numpy as np
import pytest

from metaeval_ui import figures
from metaeval_ui.text import format_pvalue, glossary, pvalue_decimals, method_description


@pytest.mark.parametrize("p, alpha, shown", [
    (0.04995, 0.05, "0.04995"),  # the case: "0.050" would read as not significant
    (0.0502, 0.05, "0.050"), (0.05, 0.05, "0.050"), (0.2, 0.05, "0.200"), (0.2, None, "0.200"),
    (0.0004, 0.05, "0.0004"), (0.00012, None, "0.00012"), (math.nan, 0.05, "undefined"), (None, 0.05, "undefined"),
    (0.0099996, 0.01, "0.0099996"), (0.05 - 1e-12, 0.05, "< 0.05"),
])
def test_format_pvalue(p, alpha, shown):
    assert format_pvalue(p, alpha) == shown


def test_shown_pvalue_always_agrees_with_the_decision():
    rng = np.random.default_rng(0)
    for alpha in (0.05, 0.01, 0.1, 0.001):
        for p in np.concatenate([alpha + rng.normal(0, 1e-4, 500), rng.uniform(0, 1, 500), [alpha]]):
            text = format_pvalue(p, alpha)
            if text.startswith(("<", "≥")):
                assert text.startswith("<") == (p < alpha)
            else:
                assert (float(text) < alpha) == (p < alpha), (p, alpha, text)
            assert (float(figures.fmt_p(p, alpha).lstrip("<≥ ")) < alpha) == (p < alpha) or text.startswith("<")


def test_pvalue_decimals_for_a_table_column():
    assert pvalue_decimals([0.2, 0.5], 0.05) == 3
    assert pvalue_decimals([0.2, 0.04995], 0.05) == 5
    assert round(0.04995, pvalue_decimals([0.04995], 0.05)) < 0.05


def test_heatmap_text_and_hover_use_the_decision_digits():
    p = np.array([[np.nan, 0.04995], [0.9, np.nan]])
    sig = p < 0.05
    fig = figures.pvalue_heatmap(["a", "b"], p, np.nan_to_num(sig), np.zeros((2, 2), bool), alpha=0.05)
    assert "0.04995" in list(fig.data[1].text)
    sentence = figures.comparison_sentence("a", "b", "h", delta=0.1, pvalue=0.04995, method="PERM-BOTH",
                                           n_resamples=1000, significant=True, significant_corrected=False,
                                           alpha=0.05, correction="none", family="row")
    assert "p = 0.04995" in sentence and "Significant" in sentence


def test_each_method_has_its_own_description():
    perm = method_description("perm-both", k=1000)
    boot = method_description("boot-both", k=1000)
    williams = method_description("williams", k=1000)
    assert "swap" in perm and "(1 + #{δₛ ≥ δ}) / (1 + k)" in perm
    assert "resample systems and inputs" in boot and "δₛ − δ ≥ δ" in boot and "swap" not in boot
    assert "Student's t" in williams and "(1 + k)" not in williams and "k and the seed do not apply" in williams
    assert "|δₛ| ≥ |δ|" in method_description("perm-inputs", k=10, alternative="two-sided")


def test_glossary_terms():
    for term in ("M_jud", "undefined pieces skipped", "Pooled reduction", "rSYS", "rSYS-Δ"):
        assert len(glossary(term)) > 40
    with pytest.raises(KeyError):
        glossary("no such term")


def test_tiny_pvalues_keep_significant_digits_even_with_a_tiny_alpha():
    assert format_pvalue(1.23e-5, 0.001) == "1.2e-05"
    assert format_pvalue(0.00099996, 0.001) == "0.00099996"
    assert format_pvalue(1.23e-5) == "1.2e-05"


def test_significance_wording_follows_the_alternative():
    from types import SimpleNamespace

    from metaeval_ui import text

    table = SimpleNamespace(alternative="two-sided", human="expert.relevance", coefficient="kendall", level="system")
    two = text.significance_wording(table, method_label="PERM-BOTH")
    assert all("better" not in v for v in (two.title, two.row_axis, two.x_column, two.hypothesis, two.cell))
    assert two.hypothesis == "H1: X and Y correlate differently with expert.relevance (kendall, system level), two-sided"
    one = text.significance_wording(SimpleNamespace(**{**vars(table), "alternative": "greater"}), method_label="P")
    assert "better" in one.title and one.x_column == "X (better?)" and "better" in one.hypothesis
    # the filled two-sided cell rouge-l / bertscore (rouge-l lower) never reads as "rouge-l beats bertscore"
    pairs = text.significant_pairs(["rouge", "bert"], ["bert", "rouge"], [-0.433, 0.433], alternative="two-sided")
    assert pairs == ["bert ≠ rouge (bert higher)"]
    assert text.significant_pairs(["a"], ["b"], [0.1], alternative="greater") == ["a > b"]


def test_zero_disagreement_sentence_names_each_side():
    from metaeval_ui import text

    sentence = text.zero_disagreement_sentence(
        ["a", "b", "c", "d"], [(-0.1, 0.9), (0.1, 0.9), (0.2, 0.8), (None, None)],
        [(0.1, 0.9), (-0.2, 0.5), (0.1, 0.7), (-1, 1)], shown_label="BOOT-BOTH", other_label="Fisher")
    assert sentence == ("a: the BOOT-BOTH interval includes 0 but the Fisher one excludes it; "
                        "b: the BOOT-BOTH interval excludes 0 but the Fisher one includes it")
    assert text.zero_disagreement_sentence(["c"], [(0.2, 0.8)], [(0.1, 0.7)], shown_label="x", other_label="y") == ""


def test_fewer_systems_note_groups_metrics_by_the_systems_they_lack():
    from metaeval_ui.text import fewer_systems_note

    assert fewer_systems_note({"a": 16, "b": 16}, 16, {"a": (), "b": ()}) is None
    n = {f"m{i}-refA": 15 for i in range(8)} | {"src": 16, "odd": 14}
    lacking = {f"m{i}-refA": ("refA",) for i in range(8)} | {"src": (), "odd": ()}
    note = fewer_systems_note(n, 16, lacking)
    assert note.startswith("System set: 16 systems. Metrics evaluated on fewer systems: m0-refA, ")
    assert "m5-refA and 2 more (15 of 16: no score for refA); odd (14 of 16: no metric mean for the others)" in note
    assert "src" not in note
