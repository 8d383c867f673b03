"""The Judges leaderboard page and `metaeval judges --view leaderboard` render the same core result (issue: one
leaderboard): the same rows in the same order, the same values, the same ceiling (two annotators included)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from metaeval_core.cli.main import main
from ui_helpers import assert_clean, new_app, plotly_specs

from tests.ui.test_judges_pages import LEADERBOARD, BIAS, lead, open_upload, plain, table, upload

K = "200"


def two_annotator_csv(n_items: int = 60, seed: int = 5) -> bytes:
    """Two annotators (no gold label) and three judges, one order: the ceiling is the two annotators' agreement."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n_items):
        truth = rng.choice(["A", "B", "tie"], p=[0.45, 0.45, 0.1])
        item = {"item": f"q{i}", "system_a": "x", "system_b": "y"}
        for h in (1, 2):
            rows.append({**item, "rater": f"annotator{h}", "kind": "human",
                         "verdict": truth if rng.random() < 0.85 else rng.choice(["A", "B"])})
        for j, quality in (("good", 0.8), ("fair", 0.6), ("poor", 0.3)):
            rows.append({**item, "rater": j, "kind": "judge",
                         "verdict": truth if rng.random() < quality else rng.choice(["A", "B", "tie", "??"])})
    return pd.DataFrame(rows).to_csv(index=False).encode()


def cli_board(capsys, dataset: str, *extra: str) -> list[dict]:
    code = main(["judges", "--dataset", dataset, "--view", "leaderboard", "--json", "--n-resamples", K, *extra])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def page_board(at) -> pd.DataFrame:
    return table(at, "kind", "cluster")


def assert_same(page: pd.DataFrame, records: list[dict]) -> None:
    statistic = next(c for c in page if c.endswith(" [interval]"))
    assert len(page) == len(records)
    kinds = {"judge": "judge", "chance": "chance", "annotator": "annotator vs the others",
             "human-ceiling": "human ceiling"}
    assert list(page["kind"]) == [kinds[r["kind"]] for r in records]
    for (_, shown), record in zip(page.iterrows(), records):
        assert shown["judge"].split(" vs the others")[0] == record["name"]
        assert lead(pd.Series([shown[statistic]])).iloc[0] == pytest.approx(record["estimate"], abs=5e-4)
        for column, key in (("items", "n_items"), ("cluster", "cluster")):
            value = pd.to_numeric(pd.Series([shown[column]]), errors="coerce").iloc[0]  # a dash reads as NaN
            assert (pd.isna(value) if record[key] is None else int(value) == record[key]), (column, shown[column])


def test_a_two_annotator_upload_has_the_same_ceiling_on_the_page_and_in_the_cli(demo_env, capsys, tmp_path):
    raw = two_annotator_csv()
    path = tmp_path / "two.csv"
    path.write_bytes(raw)
    records = cli_board(capsys, str(path))
    assert [r["kind"] for r in records][-3:] == ["annotator", "annotator", "human-ceiling"]
    at = new_app({"jk": K}).run()
    at.switch_page(LEADERBOARD).run()
    upload(at, "two.csv", raw)
    assert_clean(at)
    assert_same(page_board(at), records)
    captions = plain(" ".join(c.value for c in at.caption))
    assert "Human ceiling" in captions and "plain agreement" in captions
    assert "needs at least three" not in captions
    # the rater x rater matrix and the judges' macro scores sit on the same page
    assert "judges_raters" in plotly_specs(at)
    macro = table(at, "macro F1", "macro precision")
    assert list(macro["judge"]) == ["good", "fair", "poor"]
    # the alt-test with its per-annotator table; two annotators: the paper's caution is said
    per_annotator = table(at, "left out", "p (BY)")
    assert set(per_annotator["left out"]) == {"annotator1", "annotator2"}
    assert "paper recommends at least three" in captions or "paper recommends at least three" in plain(
        " ".join(c.value for c in at.caption))
    summary = table(at, "advantage probability", "winning rate")
    assert set(summary["passes"]) <= {"yes", "no"}


@pytest.mark.realdata
def test_pandalm_and_an_llmbar_pair_set_agree_between_page_and_cli(real_env, capsys, data_dir):
    records = cli_board(capsys, "pandalm", "--data-dir", str(data_dir))
    at = new_app({"jdataset": "pandalm", "jk": K}).run()
    at.switch_page(LEADERBOARD).run()
    assert_clean(at)
    assert_same(page_board(at), records)
    records = cli_board(capsys, "llmbar", "--data-dir", str(data_dir), "--pair-sets", "Manual")
    at = new_app({"jdataset": "llmbar", "jset": "Manual", "jk": K}).run()
    at.switch_page(LEADERBOARD).run()
    assert_clean(at)
    assert_same(page_board(at), records)
    # against an annotator there is no ceiling, and no "best judge below it"
    at = new_app({"jdataset": "pandalm", "jk": K, "jref": "annotator1"}).run()
    at.switch_page(LEADERBOARD).run()
    captions = plain(" ".join(c.value for c in at.caption))
    assert "No human ceiling: the reference is one annotator (annotator1)" in captions
    assert "below its interval" not in captions


@pytest.mark.realdata
def test_llmbar_all_items_warns_that_judges_cover_different_sets(real_env):
    at = new_app({"jdataset": "llmbar", "jk": "40"}).run()
    at.switch_page(LEADERBOARD).run()
    warnings = plain(" ".join(w.value for w in at.warning))
    assert "scored on different items" in warnings and "Natural" in warnings and "MT-Bench" in warnings
    captions = plain(" ".join(c.value for c in at.caption))
    assert "0 human annotator" not in captions
    assert "human preference" in captions and "MT-Bench, FairEval and LLMEval^2" in captions


def test_a_link_to_an_upload_of_another_session_warns_first_and_shows_no_numbers(demo_env):
    at = new_app({"jdataset": "verdicts:0123456789ab"}).run()
    at.switch_page(LEADERBOARD).run()
    assert at.warning and "not loaded in this session" in plain(at.warning[0].value)
    assert not at.dataframe


def test_the_data_check_lists_notes_and_the_bias_page_has_no_idle_order_control(demo_env):
    at = open_upload()
    check = next(e for e in at.expander if e.label.startswith("Data check"))
    assert "no warnings" not in check.label and "note" in check.label  # 'garbage' verdicts kept as invalid
    at.switch_page(BIAS).run()
    assert_clean(at)
    assert not [r for r in at.sidebar.radio if r.label == "Presentation order"]


@pytest.mark.realdata
def test_judgebench_asks_for_a_judge_then_scores_the_uploaded_one(real_env, data_dir):
    from metaeval_core.judges import load_pairwise

    from tests.core.judges.test_judgebench import judge_frame

    at = new_app({"jdataset": "judgebench", "jk": "40"}).run()
    at.switch_page(LEADERBOARD).run()
    assert_clean(at)
    assert any("has no judge of its own" in plain(i.value) for i in at.info) and not at.dataframe
    frame = judge_frame(load_pairwise("judgebench", data_dir=data_dir))
    at.file_uploader(key="j_attach_upload").upload("mine.csv", frame.to_csv(index=False).encode(), "text/csv").run()
    assert_clean(at)
    board = table(at, "kind", "cluster")
    assert list(board["judge"])[:1] == ["my-judge"]
    assert "No human ceiling: the reference is a gold label" in plain(" ".join(c.value for c in at.caption))


def test_as_verdict_runs_every_judges_page_and_is_named(demo_env):
    at = open_upload({"jinvalid": "as-verdict", "jcinvalid": "as-verdict"})
    assert at.query_params["jinvalid"] == "as-verdict"
    captions = plain(" ".join(c.value for c in at.caption))
    assert "LLMBar's convention" in captions
    headers = " ".join(table(at, "kind", "cluster").columns)
    assert "one-sided" in headers and "Holm" in headers and "own ties" in headers
    assert "not the reference's ties" in captions and "uncorrected" in captions
    at.switch_page(BIAS).run()
    assert_clean(at)
