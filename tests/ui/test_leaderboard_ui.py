"""One metrics leaderboard (issue 32): the CLI's ``clusters --view leaderboard --json`` and the Overview's table are
the same object (metaeval_core.analyses.leaderboard), on the demo and on SummEval."""

from __future__ import annotations

import json
import math

import pytest

from metaeval_core.cli.main import main
from metaeval_ui import data, tables

CASES = {
    "demo": ("metric.strong,metric.good,metric.fair,metric.weak,metric.noise", "human.quality"),
    "summeval": ("rouge-1.f1,rouge-l.f1,bertscore.f1,qa-eval.f1", "expert.relevance"),
}


def _close(a, b) -> bool:
    if a is None or (isinstance(a, float) and math.isnan(a)):
        return b is None or (isinstance(b, float) and math.isnan(b))
    return b is not None and abs(float(a) - float(b)) <= 1e-12


@pytest.mark.parametrize("dataset_id", list(CASES))
def test_the_cli_json_and_the_overview_table_agree(dataset_id, capsys, monkeypatch, request):
    metrics, human = CASES[dataset_id]
    if dataset_id == "demo":
        from metaeval_core.data.synthetic import synthetic_dataset

        ds, where = synthetic_dataset(), []
    else:
        from metaeval_core.data.registry import load_dataset

        directory = request.getfixturevalue("data_dir")
        ds, where = load_dataset(dataset_id, data_dir=directory), ["--data-dir", str(directory)]
    code = main(["clusters", "--view", "leaderboard", "--json", "--dataset", dataset_id, *where, "--metrics", metrics,
                 "--human", human, "--pool", "judged", "--n-resamples", "200"])
    assert code in (0, None)
    cli = json.loads(capsys.readouterr().out)
    board = data.leaderboard(ds, data.dataset_key(ds), tuple(metrics.split(",")), human, "system", "kendall",
                             "judged", "", n_resamples=200, seed=0)
    page = board.to_dict("records")
    assert [(r["kind"], r["metric"]) for r in cli["rows"]] == [(r["kind"], r["metric"]) for r in page]
    for shown, computed in zip(cli["rows"], page):
        assert shown["cluster"] == (None if math.isnan(computed["cluster"]) else int(computed["cluster"]))
        for column in ("estimate", "low", "high"):
            assert _close(shown[column], computed[column]), (shown, computed)
        if shown["kind"] == "metric":
            assert shown["doubt"] == computed["doubt"]
    # The page's markdown table shows those numbers, row for row.
    lines = tables.leaderboard_markdown(board, "kendall").splitlines()[2:]
    for line, row in zip(lines, cli["rows"]):
        assert f"{row['estimate']:.3f}" in line and row["metric"] in line.replace("\\", "")


def test_the_overview_says_not_separated_not_tied(demo_env):
    """Issue 32: 'No test separates these metrics: on this data they are statistically tied' read a non-rejection
    as a tie. Two demo metrics no test separates: the Overview says what the test says, at its level."""
    from tests.ui.ui_helpers import assert_clean, new_app

    at = new_app({"metric": "metric.weak,metric.noise"}).run()
    assert_clean(at)
    infos = [i.value.replace("\\", "") for i in at.info]
    said = [i for i in infos if i.startswith("No test separates")]
    assert said and "tied" not in said[0] and "not a tie" in said[0] and "Bonferroni over 1 test per metric" in said[0]
