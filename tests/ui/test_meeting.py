"""Issue 14 (content): pages say only true things and lead with the answer (AppTest)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from ui_helpers import REPO, assert_clean, new_app, plotly_specs


def open_page(page, query=None):
    at = new_app({"dataset": "demo", **(query or {})}).run()
    at.switch_page(page).run()
    assert_clean(at)
    return at


def texts(at, kind):
    return [str(e.value) for e in getattr(at, kind)]


# -- Reproduce the papers ----------------------------------------------------------------------------------------
def test_reproduce_page_without_data_says_how_to_get_it(demo_env):
    at = open_page("pages/reproduce.py", {"paper": "all"})
    info = " ".join(texts(at, "info"))
    assert "not available here" in info and "METAEVAL_DATA_DIR" in info and "fetch --dataset summeval" in info
    assert "python -m metaeval_core" not in info  # the system Python has no numpy: the command of this install
    from metaeval_core.analyses.reproduce import PUBLISHED

    assert at.metric[0].value == f"0 of {len(PUBLISHED)}"  # nothing reproduced, out of every published number
    assert {m.label: m.value for m in at.metric}["Not computed (data missing)"] == str(len(PUBLISHED))


def test_reproduce_page_first_recomputes_one_paper_then_any_other_or_all(demo_env):
    from metaeval_core.analyses.reproduce import PUBLISHED

    at = open_page("pages/reproduce.py")
    first = PUBLISHED[0].paper
    assert at.selectbox(key="w:repro_paper").value == first
    assert at.metric[0].value == f"0 of {sum(item.paper == first for item in PUBLISHED)}"
    assert [s.value.replace("\\", "") for s in at.subheader] == [first]
    at.selectbox(key="w:repro_paper").set_value("all").run()
    assert_clean(at)
    assert at.metric[0].value == f"0 of {len(PUBLISHED)}" and at.query_params["paper"] == "all"


def test_reproduce_page_on_real_data_ticks_every_reproducible_number(real_env):
    at = open_page("pages/reproduce.py", {"paper": "all"})
    frames = [d.value for d in at.dataframe]
    rows = sum(len(f) for f in frames)
    from metaeval_core.analyses.reproduce import PUBLISHED

    assert rows == len(PUBLISHED)
    verdicts = [v for f in frames for v in f[""]]
    reproducible = sum(1 for item in PUBLISHED if not item.reason)
    assert verdicts.count("✓") == reproducible and "✗" not in verdicts
    assert verdicts.count("— (see why)") == len(PUBLISHED) - reproducible
    # Issue 24: the headline counts ✓, ✗ and not reproducible separately (was "Reproduced 71 of 71" while 8
    # published numbers were not reproduced)
    shown = {m.label: m.value for m in at.metric}
    assert shown["✓ Reproduced"] == f"{reproducible} of {len(PUBLISHED)}"
    assert shown["✗ Differ"] == "0" and shown["— Not reproducible"] == str(len(PUBLISHED) - reproducible)
    # the tolerance sits beside the numbers, and every reason is written out in full under its table
    assert list(frames[0].columns[:4]) == ["", "published", "metaeval", "± tolerance"]
    # (under its table, not in a column that ran past the page: tests/browser/test_every_page.py)
    assert all("why not" not in f.columns for f in frames)
    captions = [c.value.replace("\\", "") for c in at.caption]
    why = [c for c in captions if c.startswith("Why not (")]
    assert sum(c.count(";") + 1 for c in why) >= len(PUBLISHED) - reproducible
    assert why and all("whole test set" in c for c in why)


# -- navigation and local assets ----------------------------------------------------------------------------------
def test_overview_has_a_deep_link_alias_and_a_local_favicon():
    """'/overview' and '/home' are registered (hidden) url paths of the Overview (the browser test
    tests/browser/test_meeting_browser.py opens both); the favicon is a local file, never a Material icon or emoji
    (which browsers fetch from an outside server)."""
    source = (REPO / "app.py").read_text(encoding="utf-8")
    assert '("pages/overview.py", "overview")' in source and 'visibility="hidden"' in source
    assert (REPO / "pages" / "overview.py").is_file()
    tree = ast.parse(source)
    config = next(n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "attr", "") ==
                  "set_page_config")
    icon = next(k.value for k in config.keywords if k.arg == "page_icon")
    assert not isinstance(icon, ast.Constant)  # a path, not ':material/...' or an emoji
    favicon = REPO / "metaeval_ui" / "assets" / "favicon.png"
    assert favicon.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_overview_url_path_resolves(demo_env):
    at = new_app({"dataset": "demo"}).run()
    from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx  # noqa: F401

    at.switch_page("pages/home.py").run()
    assert_clean(at)
    assert at.title[0].value.startswith("metaeval")


# -- Overview leaderboard ------------------------------------------------------------------------------------------
def leaderboard_rows(at):
    table = next(m.value for m in at.markdown if m.value.startswith("| rank |"))
    rows = [line.strip("| ").split(" | ") for line in table.splitlines()[2:]]
    return table, [[cell.strip("*").replace("\\", "") for cell in row] for row in rows]


def test_overview_leads_with_a_leaderboard_and_the_naacl_headline(demo_env):
    at = new_app({"dataset": "demo"}).run()
    assert_clean(at)
    table, rows = leaderboard_rows(at)
    assert table.splitlines()[0] == "| rank | metric | τ | 95% interval |"
    ranked = [r for r in rows if r[0].isdigit()]
    ceiling = [r for r in rows if "human ceiling" in r[0]]
    # The demo keeps its three annotators: each is scored against the other two, below the metrics, never ranked.
    assert [r[1] for r in ranked][0] == "metric.strong" and len(ranked) == 5
    assert [r[1] for r in ceiling] == [f"annotator {a} vs the others" for a in (1, 2, 3)] and rows[-3:] == ceiling
    # Kendall of continuous metrics: one chance row for all of them (docs/methods.md sec. 12), between the two.
    chance = [r for r in rows if r[0] == "chance"]
    assert [r[1] for r in chance] == ["random scores (permuted)"] and rows[len(ranked)] == chance[0]
    assert abs(float(chance[0][2])) < 0.05 and any("randomly permuted" in c.value for c in at.caption)
    ranks = [int(r[0]) for r in ranked]
    assert ranks == sorted(ranks) and ranks[0] == 1 and ranks[-1] > 1  # metric.noise is separated from the best
    for rank, metric, estimate, interval in rows:
        low, high = (float(v) for v in interval.strip("[]").split(", "))
        assert low <= float(estimate) <= high
    labels = [m.label for m in at.metric]
    assert any(label.startswith("rSYS, all") for label in labels) and any("closest 20%" in label for label in labels)
    assert "text generation" in at.markdown[0].value
    assert not at.get("arrow_data_frame") and not at.get("plotly_chart")  # still light
    at.radio(key="w:coefficient").set_value("pearson").run()
    assert leaderboard_rows(at)[0].splitlines()[0] == "| rank | metric | r | 95% interval |"


def test_overview_leaderboard_on_summeval_matches_tacl2021(real_env):
    """TACL 2021 sec. 6: at the system level only QAEval and BERTScore are significantly better than others."""
    at = new_app({"dataset": "summeval"}).run()
    assert_clean(at)
    _, rows = leaderboard_rows(at)
    top = {r[1] for r in rows if r[0] == "1"}
    assert top == {"qa-eval.f1", "bertscore.recall"}
    assert {r[1] for r in rows if r[0] == "2"} == {"rouge-1.f1", "rouge-2.f1", "rouge-l.f1"}


# -- Judged vs all --------------------------------------------------------------------------------------------------
def test_judged_vs_all_on_the_demo_narrows_and_explains_when_it_would_not(demo_env):
    at = open_page("pages/pools.py", {"pools_k": "200"})
    change = next(m for m in at.metric if m.label == "rSYS CI width with all inputs")
    assert change.value.endswith("% narrower")  # as in NAACL 2022
    pooled = next(m for m in at.metric if m.label == "Pooled reduction")
    assert "share of per-system score variance" in pooled.help
    expander = next(e for e in at.expander if "wider" in e.label)
    text = " ".join(m.value for m in expander.markdown)
    assert "same** inputs" in text and "separately" in text and "simulation" not in at.caption[-1].value.lower()


@pytest.mark.parametrize("dataset", ["demo", "hanna"])
def test_judged_vs_all_says_one_quantity_one_way(request, dataset):
    """Issue 24: HANNA's card said "+7%", the chart "20% wider / 4% narrower", the table "width reduction -20%";
    "all 100 judged (SIMULATED)" labelled the real pool; the banner promised larger real reductions above intervals
    that got wider. One wording from one field, pools named for what they are, the promise only when it holds."""
    from metaeval_ui.figures.pairs import width_change_words

    request.getfixturevalue("demo_env" if dataset == "demo" else "real_env")
    at = new_app({"dataset": dataset, "pools_k": "200"}).run()
    at.switch_page("pages/pools.py").run()
    assert_clean(at)
    table = next(d.value for d in at.dataframe if "with all inputs" in d.value.columns)
    reduction = 100 * (1 - table["width_all"] / table["width_judged"])
    assert list(table["with all inputs"]) == [width_change_words(r) for r in reduction]
    widths = plotly_specs(at)["widths"]
    assert [a["text"] for a in widths["layout"]["annotations"]] == list(table["with all inputs"])
    card = next(m for m in at.metric if m.label == "rSYS CI width with all inputs")
    assert card.value == width_change_words(reduction.mean())
    everything = " ".join(str(e.value) for kind in ("caption", "warning", "markdown") for e in getattr(at, kind))
    promise = "real reductions would be larger"
    assert (promise in everything) == (dataset != "demo" and bool((reduction > 0).all()))
    pools = [t["name"] for t in widths["data"]]
    if dataset == "hanna":  # no unjudged pool: simulated
        assert pools[0].startswith("simulated judged pool") and "SIMULATED" not in pools[1]
        assert pools[1].startswith("all ") and pools[1].endswith("as the full pool")


def test_overview_warns_when_the_headline_rests_on_few_pairs(demo_env):
    """An upload with 5 systems has 10 pairs, so 'the closest 20%' is 2 pairs: say so instead of headlining it."""
    from test_upload import upload, wide_csv

    at = new_app().run()
    upload(at, "five.csv", wide_csv(n_systems=5))
    assert_clean(at)
    assert any("closest 20%" in m.label for m in at.metric)
    assert any("the 2 pairs (20%) closest" in c.value.replace("\\", "") for c in at.caption)
    assert any("Only 2 system pairs" in w.value and "5 systems" in w.value for w in at.warning)
    at = new_app({"dataset": "demo"}).run()
    assert not any("system pairs are among the closest" in w.value for w in at.warning)  # 16 systems: 24 pairs


# -- Significance: one description per method, only the fields that apply ---------------------------------------
@pytest.mark.parametrize("method, present, absent", [
    ("williams", "Student's t", "(1 + k)"),
    ("boot-both", "paired bootstrap", "swap"),
    ("perm-both", "swap", "Student's t"),
])
def test_significance_describes_the_chosen_method_only(demo_env, method, present, absent):
    at = open_page("pages/significance.py", {"test": method, "sig_k": "50"})
    text = " ".join(m.value for m in at.markdown)
    assert present in text and absent not in text
    records = next(d.value for d in at.dataframe if "p corrected" in d.value.columns)
    assert ("defined resamples" in records.columns) == (method != "williams")


# -- practitioner pages ----------------------------------------------------------------------------------------------
def test_planning_opens_on_a_reachable_target_width(demo_env):
    at = open_page("pages/planning.py", {"plan_trials": "4", "plan_k": "60"})
    width = at.slider(key="w:plan_width").value
    assert 0.05 <= width < 1.5
    table = next(d.value for d in at.dataframe if "width_mean" in d.value.columns)
    assert (table["width_mean"] <= width).any()  # the largest design reaches it
    assert not any("not reached" in w.value.lower() and "width" in w.value.lower() for w in at.warning)


def test_improvement_curve_starts_at_the_smallest_gap_and_the_band_is_not_degenerate(demo_env):
    import json

    at = open_page("pages/improvement.py", {"imp_k": "200"})
    band = next(m.value for m in at.metric if m.label.endswith("band"))
    assert band != "100% – 100%"
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    fitted = next(t for t in spec["data"] if "fitted" in str(t.get("name", "")))
    xs = fitted["x"] if isinstance(fitted["x"], list) else None
    if xs is not None:
        assert xs[0] > 0  # no curve value drawn at d = 0


def test_confidence_table_shows_no_resample_counts_for_fisher(demo_env):
    at = open_page("pages/confidence.py", {"ci": ["fisher", "boot-both"], "ci_k": "40"})
    table = at.dataframe[0].value
    fisher, boot = table[table["method"] == "FISHER"], table[table["method"] == "BOOT-BOTH"]
    # empty cells (text), not a grey 'None' (tests/ui/test_missing_cells.py)
    assert (fisher["n_defined"] == "").all() and (fisher["n_resamples"] == "").all()
    assert (boot["n_resamples"] == "40").all()


def test_overview_leaderboard_follows_the_system_subset(demo_env):
    at = new_app({"dataset": "demo", "systems": "type=abs"}).run()
    assert_clean(at)
    captions = [c.value.replace("\\", "") for c in at.caption]
    assert any("Rank = significance cluster" in c and "12 systems (type=abs)" in c for c in captions)
    assert any("on all 66 pairs" in c for c in captions)  # the headline follows the subset too (12 systems)
