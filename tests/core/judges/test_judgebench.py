"""JudgeBench built in as pairs with a correctness label and no judge; a user's judge attached by pair id."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from metaeval_core.cli.main import main
from metaeval_core.data.dataset import DatasetError
from metaeval_core.judges import A, judge_agreement, judge_leaderboard, positional_bias
from metaeval_core.judges.loaders import attach_verdicts
from tests.core.judges.helpers import loaded, random_data


def judge_frame(data, seed=0, p_right=0.7) -> pd.DataFrame:
    """A generated judge: right with probability p_right in each order, a few unparseable answers."""
    rng = np.random.default_rng(seed)
    gold = data.verdicts[:, 0, 0]
    rows = []
    for item, g in zip(data.items, gold):
        for order in ("original", "swapped"):
            right = "A" if g == A else "B"
            verdict = right if rng.random() < p_right else ("B" if right == "A" else "A")
            rows.append({"pair_id": item, "rater": "my-judge", "order": order,
                         "verdict": "garbage" if rng.random() < 0.02 else verdict})
    return pd.DataFrame(rows)


def test_attach_verdicts_joins_by_item_and_refuses_unknown_items():
    data = random_data(101, n=30, gold=True, n_judges=1)
    frame = pd.DataFrame({"item": ["i0", "i1", "i1"], "verdict": ["A", "b>a", "??"],
                          "order": ["original", "original", "swapped"]})
    out = attach_verdicts(data, frame, default_rater="mine")
    k = out.rater_index("mine")
    assert out.verdicts[0, k, 0] == 0 and out.verdicts[1, k, 0] == 1 and out.verdicts[1, k, 1] == 3
    assert (out.verdicts[2:, k] == -1).all() and out.version != data.version
    with pytest.raises(DatasetError, match="not in 'synthetic'.*nope"):
        attach_verdicts(data, pd.DataFrame({"item": ["nope"], "verdict": ["A"]}))
    with pytest.raises(DatasetError, match="already in"):
        attach_verdicts(data, pd.DataFrame({"item": ["i0"], "verdict": ["A"], "rater": ["j1"]}))
    with pytest.raises(DatasetError, match="second verdict"):
        attach_verdicts(data, pd.DataFrame({"item": ["i0", "i0"], "verdict": ["A", "B"]}))


@pytest.mark.realdata
def test_judgebench_with_a_generated_judge_gets_every_statistic(data_dir, tmp_path, capsys):
    data = loaded(data_dir, "judgebench")
    assert data.n_items == 620 and not data.judges and data.golds == ("correct",)
    assert [int((data.pair_set == k).sum()) for k in range(2)] == [350, 270]
    frame = judge_frame(data)
    judged = attach_verdicts(data, frame)
    table = judge_agreement(judged, order="original", n_resamples=50, rng=0)
    gold = data.verdicts[:, 0, 0]
    mine = judged.verdicts[:, judged.rater_index("my-judge"), 0]
    assert table.rows[0].estimate == pytest.approx(np.mean(mine == gold))
    board = judge_leaderboard(judged, order="average", n_resamples=50, rng=0)
    assert board.ceiling is None and "gold label" in board.no_ceiling
    assert positional_bias(judged, n_resamples=50, rng=0)[0].n_items == 620
    path = tmp_path / "my_judge.csv"
    frame.to_csv(path, index=False)
    for view in ("leaderboard", "table", "bias", "agreement"):
        code = main(["judges", "--dataset", "judgebench", "--data-dir", str(data_dir), "--verdicts", str(path),
                     "--view", view, "--n-resamples", "50", "--json"])
        out, err = capsys.readouterr()
        assert code == 0, (view, err)
        assert json.loads(out)
    code = main(["judges", "--dataset", "judgebench", "--data-dir", str(data_dir)])
    _, err = capsys.readouterr()
    assert code != 0 and "--verdicts FILE" in err
