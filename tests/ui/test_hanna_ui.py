"""The dashboard on HANNA: every page opens, the human-written stories are dropped by default (and kept on
request), and LLM judges are marked in the metric picker."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.ui.ui_helpers import REPO, assert_clean, new_app

# The score pages; the LLM-judge pages pick a pairwise dataset of their own (tests/ui/test_judges_pages.py).
PAGE_FILES = sorted(p for p in re.findall(r'\("(pages/[a-z_]+\.py)"', (REPO / "app.py").read_text(encoding="utf-8"))
                    if not p.startswith("pages/judges_"))


def open_hanna(page: str | None = None, query: dict | None = None):
    at = new_app({"dataset": "hanna", **(query or {})}).run()
    if at.sidebar.selectbox(key="w:dataset").value != "hanna":
        pytest.skip("hanna is not available in this data mirror")
    assert_clean(at)
    if page is not None:
        at.switch_page(page).run()
        assert_clean(at)
    return at


@pytest.mark.realdata
@pytest.mark.parametrize("page", [p for p in PAGE_FILES if (REPO / p).is_file()])
def test_every_page_opens_on_hanna(real_env, page):
    # Small resample counts: this is a smoke test of the wiring on HANNA's 212 metrics, not of the statistics.
    at = open_hanna(page, {"f1_k": "100", "ci_k": "100", "sig_k": "100", "stab_k": "20", "pools_k": "100",
                           "trials": "5", "sim_k": "20", "imp_k": "100", "plan_trials": "5", "plan_k": "20",
                           "infl_k": "100", "dk": "100"})
    assert at.title
    assert at.sidebar.selectbox(key="w:dataset").value == "hanna"


@pytest.mark.realdata
def test_hanna_default_systems_toggle_and_judge_labels(real_env):
    at = open_hanna("pages/correlations.py", {"level": "system"})
    toggle = at.sidebar.toggle(key="w:all_systems")
    assert toggle.value is False
    assert any("kind=model (10 of 11)" in c.value.replace("\\", "") for c in at.sidebar.caption)
    metrics = at.sidebar.multiselect(key="w:metrics")
    labels = [metrics.format_func(option) for option in metrics.options]
    assert "BLEU" in labels and not any(glyph in label for label in labels for glyph in "Ξ¤§")
    assert "ChatGPT · Relevance (prompt 1) · LLM judge [ChatGPT RE 1]" in labels
    metrics.set_value(["BLEU", "ChatGPT RE 1"]).run()
    assert_clean(at)
    table = at.dataframe[0].value.set_index("metric")
    assert (table["n"] == 10).all()
    assert table.loc["BLEU", "estimate"] == pytest.approx(25 / 45)  # the independent check's value
    toggle = at.sidebar.toggle(key="w:all_systems").set_value(True).run()
    assert_clean(at)
    table = at.dataframe[0].value.set_index("metric")
    assert (table["n"] == 11).all()
    assert table.loc["BLEU", "estimate"] == pytest.approx(0.6364, abs=1e-4)
    assert at.query_params.get("all_systems") in ("true", ["true"])
    assert not any("kind=model (10 of 11)" in c.value.replace("\\", "") for c in at.sidebar.caption)


@pytest.mark.realdata
def test_links_may_name_measures_by_label_or_upstream_column(real_env):
    """A link written with HANNA's glyph column (before ids dropped the glyphs) or a label in any case opens the
    same metrics, with no 'dropped' note (issue 24)."""
    at = open_hanna("pages/correlations.py", {"metric": ["BLEU Ξ§", "chatgpt · relevance (prompt 1)"],
                                              "human": "relevance", "dmetric": "METEOR Ξ§"})
    from metaeval_ui import state

    assert at.session_state[state.perm_key("delta_metric")] == "METEOR"
    assert at.sidebar.multiselect(key="w:metrics").value == ["BLEU", "ChatGPT RE 1"]
    assert at.sidebar.selectbox(key="w:human").value == "Relevance"
    assert not any("dropped" in c.value for c in at.caption)


@pytest.mark.realdata
def test_annotators_page_does_not_invent_groups_from_criteria(real_env):
    """HANNA's six criteria are dimensions rated by one group of raters: no 'Relevance vs Coherence' (issue 24)."""
    at = open_hanna("pages/annotators.py")
    shown = " ".join([m.value for m in at.markdown] + [i.value for i in at.info] + [c.value for c in at.caption])
    assert "Relevance vs Coherence" not in shown and "summar" not in shown.lower()
    assert any("One group of annotators rates every dimension" in i.value for i in at.info)
    alphas = at.dataframe[0].value
    assert set(alphas["group"]) == {"annotators"} and "Relevance" in set(alphas["dimension"])


@pytest.mark.realdata
def test_ceiling_rows_say_rater_slots_and_warn_when_negative(real_env):
    """Rater k is a position on HANNA: the rows say 'rater slot k vs the other slots', the caption says what they
    mean, and an input-level ceiling below 0 gets a warning (issue 24)."""
    at = open_hanna(None, {"level": "input", "human": "Relevance"})
    table = next(m.value for m in at.markdown if m.value.startswith("| rank |"))
    assert "rater slot 1 vs the other slots" in table and "annotator 1" not in table
    assert any("positions, not persons" in c.value for c in at.caption)
    rows = [line.strip("| ").split(" | ") for line in table.splitlines()[2:]]
    ceiling = [float(r[2].strip("*")) for r in rows if "rater slot" in r[1]]
    negative = [w.value for w in at.warning if "Human ceiling below 0" in w.value]
    assert bool(negative) == any(v < 0 for v in ceiling), (ceiling, negative)


@pytest.mark.realdata
def test_defaults_include_llm_judges_and_doubtful_rank_one_is_flagged(real_env):
    """HANNA opens with LLM judges of the chosen criterion among its metrics; a bold rank-1 metric whose interval
    includes 0 (or whose estimate is inside the chance range) is marked ⚠ and the page says why (issue 24)."""
    at = open_hanna()
    chosen = at.sidebar.multiselect(key="w:metrics").value
    judges = [m for m in chosen if m.split(" ")[-2:-1] == ["RE"]]
    assert "BLEU" in chosen and len(judges) >= 1, chosen
    table = next(m.value for m in at.markdown if m.value.startswith("| rank |"))
    rows = [line.strip("| ").split(" | ") for line in table.splitlines()[2:]]
    for rank, metric, estimate, interval in rows:
        if rank.strip("*") != "1":
            continue
        low, high = (float(v) for v in interval.strip("*[]").split(", "))
        if low <= 0 <= high:
            assert "⚠" in metric, (metric, interval)
    flagged_first = [r[1].strip("*").replace("\\", "").replace(" ⚠", "") for r in rows
                     if r[0].strip("*") == "1" and "⚠" in r[1]]
    warning = " ".join(w.value.replace("\\", "") for w in at.warning)
    assert all(name in warning for name in flagged_first) and (not flagged_first or "Rank 1 is not evidence" in warning)


@pytest.mark.realdata
def test_keep_every_system_names_the_reference_scored_system(real_env):
    """With 'Keep every system', reference-based metrics score the human stories against themselves (BLEU 100): a
    caution names the system; without it, none (issue 24)."""
    at = open_hanna(None, {"metric": ["BLEU", "ChatGPT RE 1"]})
    assert not any("Reference-scored" in w.value.replace("\\", "") for w in at.warning)
    at.sidebar.toggle(key="w:all_systems").set_value(True).run()
    caution = [w.value.replace("\\", "") for w in at.warning if "Reference-scored" in w.value.replace("\\", "")]
    assert caution and "Human" in caution[0] and "BLEU" in caution[0] and "ChatGPT" not in caution[0]
