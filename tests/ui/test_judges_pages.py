"""AppTest of the LLM-judges pages (docs/methods.md sec. 18): a generated verdict upload (always runs) and PandaLM /
LLMBar from the mirror (skip cleanly when absent). The pages' sentences must say what their tables show."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from ui_helpers import assert_clean, new_app, plotly_specs

LEADERBOARD, BIAS, SYSTEMS = "pages/judges_leaderboard.py", "pages/judges_bias.py", "pages/judges_systems.py"
PAGES = (LEADERBOARD, BIAS, SYSTEMS)
SYSTEM_NAMES = ("alpha-7b", "beta-13b", "gamma-70b", "delta-1b")


def verdict_csv(n_items: int = 80, seed: int = 3) -> bytes:
    """Three annotators, a gold label, a good judge, a first-position judge, a coin-flip judge and a scoring judge,
    the judges in both orders, four systems and output texts of different lengths."""
    rng = np.random.default_rng(seed)
    strength = dict(zip(SYSTEM_NAMES, (1.0, 0.4, 1.6, -0.6)))
    rows = []
    for i in range(n_items):
        a, b = rng.choice(SYSTEM_NAMES, 2, replace=False)
        p_a = 1 / (1 + np.exp(strength[b] - strength[a]))
        truth = "A" if rng.random() < p_a else "B"
        other = "B" if truth == "A" else "A"
        item = {"item": f"q{i}", "system_a": a, "system_b": b, "pair_set": "easy" if i % 2 else "hard",
                "input": f"question {i}", "output_a": "word " * int(rng.integers(3, 30)),
                "output_b": "word " * int(rng.integers(3, 30))}
        rows.append({**item, "rater": "gold", "kind": "gold", "verdict": truth})
        for h in range(3):
            rows.append({**item, "rater": f"annotator{h + 1}", "kind": "human",
                         "verdict": truth if rng.random() < 0.85 else other})
        for order in ("original", "swapped"):
            first = "A" if order == "original" else "B"
            rows.append({**item, "rater": "careful-judge", "kind": "judge", "order": order,
                         "verdict": truth if rng.random() < 0.9 else other})
            rows.append({**item, "rater": "first-judge", "kind": "judge", "order": order,
                         "verdict": first if rng.random() < 0.8 else ("tie" if rng.random() < 0.5 else "garbage")})
            rows.append({**item, "rater": "coin-judge", "kind": "judge", "order": order,
                         "verdict": rng.choice(["A", "B"])})
        score = 5 + (1 if truth == "A" else -1) * rng.integers(0, 3)
        for order in ("original", "swapped"):
            rows.append({**item, "rater": "scoring-judge", "kind": "judge", "order": order,
                         "verdict": "A" if score > 5 else "B" if score < 5 else "tie", "score_a": score,
                         "score_b": 5})
    return pd.DataFrame(rows).to_csv(index=False).encode()


def lead(column: pd.Series) -> pd.Series:
    """The estimate of "0.698 [0.668, 0.721]" cells."""
    return pd.to_numeric(column.str.split().str[0], errors="coerce")


def plain(text: str) -> str:
    return text.replace("\\", "")


def sentences(at) -> str:
    return plain(" ".join(m.value for m in at.markdown))


def bold(text: str) -> list[str]:
    return re.findall(r"\*\*(.+?)\*\*", plain(text))


def table(at, *columns: str) -> pd.DataFrame:
    """The first table on the page holding these columns, numbers read back from their text (a dash: NaN)."""
    shown = next(d.value for d in at.dataframe if set(columns) <= set(d.value.columns))
    assert not shown.isna().any().any(), "a missing cell shows a dash, never None / nan"
    return shown.apply(lambda c: pd.to_numeric(c.astype(str).str.replace(",", ""), errors="coerce")
                       if c.astype(str).str.fullmatch(r"-?[\d,]+(\.\d+)?|—").all() else c)


def upload(at, name: str = "my_verdicts.csv", content: bytes | None = None):
    at.file_uploader(key="w:j_upload").upload(name, verdict_csv() if content is None else content, "text/csv").run()
    return at


def open_upload(query: dict | None = None):
    at = new_app({"jk": "300", **(query or {})}).run()
    at.switch_page(LEADERBOARD).run()
    upload(at)
    assert_clean(at)
    return at


def leaderboard_checks(at) -> pd.DataFrame:
    """The headline's judge is the table's top judge; its cluster mates are those of the table's first cluster."""
    board = table(at, "kind", "cluster")
    judges = board[board["kind"] == "judge"]
    headline = next(m.value for m in at.markdown if plain(m.value).startswith("Highest"))
    named = bold(headline)
    assert named[0] == judges["judge"].iloc[0]
    statistic = next(c for c in board if c.endswith(" [interval]"))
    assert judges[statistic].iloc[0] in plain(headline)  # "0.698 [0.668, 0.721]"
    first = judges[judges["cluster"] == judges["cluster"].iloc[0]]["judge"].tolist()
    if len(first) > 1:
        others = len(first) - 1
        assert set(named[1:]) <= set(first[1:]) and f"{others} other judge{'s' if others > 1 else ''}" in plain(headline)
    return board


def test_a_verdict_upload_runs_every_judges_page(demo_env):
    at = open_upload()
    assert at.selectbox(key="w:j_dataset").value.startswith("verdicts:")
    assert at.query_params["jdataset"].startswith("verdicts:")
    assert any(e.label.startswith("Data check") for e in at.expander)
    board = leaderboard_checks(at)
    assert list(board["kind"].unique()) == ["judge", "chance"]  # against the gold label: no human ceiling
    assert "No human ceiling: the reference is a gold label" in plain(" ".join(c.value for c in at.caption))
    assert board["judge"].iloc[0] == "careful-judge"
    assert "do not differ significantly" in sentences(at) or "differs from it significantly" in sentences(at)
    assert "better" not in sentences(at)  # two-sided by default: "differ", never "better"
    assert {"judges_forest", "judges_pvalues"} <= set(plotly_specs(at))

    at.switch_page(BIAS).run()
    assert_clean(at)
    position = table(at, "same winner in both orders")
    said = sentences(at)
    most = position.loc[lead(position["same winner in both orders"]).idxmax(), "judge"]
    assert f"Most consistent across the two orders: **{most}**" in said.replace("\\", "")
    assert "first-judge" in bold(said), "the strongest first-position preference is named"
    assert {"judges_position", "judges_orders", "judges_length"} <= set(plotly_specs(at))
    orders = table(at, "A shown first", "B shown first", "right in both orders")
    named = bold(next(m.value for m in at.markdown if plain(m.value).startswith("Largest change between orders")))
    moved = orders.set_index("judge").apply(lambda r: abs(lead(pd.Series([r["A shown first"]])).iloc[0]
                                                          - lead(pd.Series([r["B shown first"]])).iloc[0]), axis=1)
    assert named[0] == moved.idxmax()

    at.switch_page(SYSTEMS).run()
    assert_clean(at)
    said = sentences(at)
    agreement = table(at, "coefficient", "systems")
    assert f"Closest to the reference's system ranking: **{agreement['judge'].iloc[0]}**" in said
    scores = table(at, "epsilon [range]")
    assert list(scores["judge"]) == ["scoring-judge"]
    assert f"epsilon = {scores['epsilon [range]'].iloc[0].split()[0]}" in said


def test_one_sided_wording_says_better(demo_env):
    at = open_upload({"jalt": "greater", "jset": "hard"})  # one pair set of the file, from the URL
    assert at.query_params["jset"] == "hard"
    assert table(at, "cluster", "items")["items"].iloc[0] == 40
    said = sentences(at)
    assert "not significantly worse" in said or "significantly better than every other judge" in said
    assert "differ" not in said


def test_a_bad_verdict_file_is_one_sentence(demo_env):
    at = new_app().run()
    at.switch_page(LEADERBOARD).run()
    upload(at, "broken.csv", b"item,rater\nq1,gold\n")
    assert not at.exception
    assert len(at.error) == 1
    message = plain(at.error[0].value)
    assert message.startswith("broken.csv was not loaded:") and message.count(". ") == 0


def test_the_report_of_a_judges_page_names_the_dataset(demo_env):
    from metaeval_ui import exports

    at = open_upload()
    html = exports.report_html(at.session_state["_export_snapshot"])
    assert "Judges leaderboard" in html or "careful-judge" in html
    assert "verdicts:" in html and "careful-judge" in html


@pytest.mark.realdata
@pytest.mark.parametrize("dataset", ["pandalm", "llmbar"])
def test_real_pairwise_datasets_on_every_judges_page(real_env, dataset):
    at = new_app({"jdataset": dataset, "jk": "200"}).run()
    for page in PAGES:
        at.switch_page(page).run()
        assert_clean(at)
        assert at.selectbox(key="w:j_dataset").value == dataset
        if page == LEADERBOARD:
            board = leaderboard_checks(at)
            assert ("human ceiling" in set(board["kind"])) == (dataset == "pandalm")
        assert "summar" not in sentences(at).lower()


@pytest.mark.realdata
def test_a_pairwise_id_on_a_score_page_says_where_to_go(real_env):
    at = new_app({"dataset": "pandalm"}).run()
    assert_clean(at)
    assert any("LLM judges pages" in plain(i.value) for i in at.info)
    assert at.query_params["dataset"] != "pandalm" and at.query_params["jdataset"] == "pandalm"
    at.switch_page(LEADERBOARD).run()
    assert at.selectbox(key="w:j_dataset").value == "pandalm"


def test_too_few_permutations_for_the_correction_is_said(demo_env):
    at = open_upload({"jk": "10"})  # raised to the smallest the bootstrap takes, 40: 3 / 41 > 0.05
    assert at.query_params["jk"] == "40"
    warning = plain(" ".join(w.value for w in at.warning))
    assert "no difference can reach alpha" in warning and "at least 60" in warning  # 3 tests per row / 0.05
    board = table(at, "kind", "cluster")
    assert set(board.loc[board["kind"] == "judge", "cluster"]) == {1}


def test_tied_top_rows_are_named_together_and_outlines_follow_the_correction():
    from metaeval_core.judges import compare_judges, read_verdict_file
    from metaeval_ui.judges import figures as jf, text as jx

    frame = pd.DataFrame({"judge": ["b", "a", "c"], "estimate": [0.8, 0.8, 0.5]})
    assert jx.leaders(frame) == "**b** and **a** (tied)"
    assert jx.leaders(frame.iloc[1:]) == "**a**"
    data = read_verdict_file(verdict_csv(), name="v.csv")
    comparison = compare_judges(data, n_resamples=999, rng=0)
    fig = jf.judge_heatmap(comparison, title="t", row_axis="row judge (X)")
    outlined = int(comparison.table.significant_corrected.sum())
    assert len(fig.layout.shapes) == outlined > 0
    assert list(fig.layout.yaxis.ticktext) == list(comparison.clusters.metrics)  # best first, as the leaderboard


def test_a_pairwise_link_without_its_files_says_so_on_both_sides(demo_env):
    at = new_app({"dataset": "llmbar"}).run()
    assert_clean(at)
    assert any("LLM judges pages" in plain(i.value) for i in at.info)
    assert at.query_params["dataset"] == "demo"
    at.switch_page(LEADERBOARD).run()
    assert_clean(at)
    assert at.selectbox(key="w:j_dataset").value == "llmbar"
    assert any("not available here" in plain(w.value) for w in at.warning)


def test_the_conventions_caption_comes_from_the_result(demo_env):
    at = open_upload({"jstat": "kappa", "jref": "majority", "jorder": "average", "jties": "drop-any-tie",
                      "jinvalid": "drop"})
    caption = next(plain(c.value) for c in at.caption if "of each judge's verdicts" in plain(c.value))
    assert caption.startswith("Cohen's kappa of each judge's verdicts against majority of 3 humans")
    assert "the mean over both orders" in caption
    assert "items where the reference or the judge says tie are left out" in caption
    assert "items with an invalid verdict are left out" in caption
    assert "kappa [interval]" in table(at, "cluster").columns
    assert "Highest Cohen's kappa" in sentences(at)


def test_right_in_both_orders_is_offered_for_accuracy_only(demo_env):
    at = open_upload({"jstat": "kappa", "jorder": "both"})
    assert at.query_params["jorder"] == "original"
    from metaeval_ui.judges.text import ORDERS

    shown = at.sidebar.radio(key="w:j_order").options
    assert ORDERS["average"] in shown and ORDERS["both"] not in shown
    assert any("jorder=both is not available here" in plain(c.value) for c in at.caption)
