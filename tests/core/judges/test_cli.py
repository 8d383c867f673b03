"""`metaeval judges` and the pairwise datasets in `metaeval datasets` / `describe`."""

from __future__ import annotations

import json

import pytest

from metaeval_core.cli.main import main
from tests.core.judges.helpers import loaded


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.realdata
def test_judges_table_fits_and_json_names_each_judge_and_pair_set(capsys, data_dir, monkeypatch):
    data = loaded(data_dir, "llmbar")
    for columns in (80, 100):
        monkeypatch.setenv("COLUMNS", str(columns))
        code, out, err = run(capsys, "judges", "--dataset", "llmbar", "--data-dir", str(data_dir),
                             "--n-resamples", "100")
        assert code == 0, err
        assert max(len(line) for line in out.splitlines()) <= 100, out
    assert "Natural (100 pairs)" in out and "GPT-4/Vanilla_NoRules" in out
    code, out, _ = run(capsys, "judges", "--dataset", "llmbar", "--data-dir", str(data_dir), "--json",
                       "--n-resamples", "100", "--pair-sets", "Natural,MT-Bench")
    records = json.loads(out)
    assert len(records) == len(data.judges_of("Natural")) + len(data.judges_of("MT-Bench")) == 26 + 8
    first = records[0]
    assert (first["pair_set"], first["evaluator"], first["strategy"]) == ("Natural", "GPT-4", "Vanilla_NoRules")
    for key in ("accuracy_original", "accuracy_swapped", "accuracy_both", "consistency", "kappa_original"):
        assert first[f"{key}_low"] <= first[key] <= first[f"{key}_high"]
    assert first["n_items"] == 100 and first["ties"] == "three-class" and first["invalid"] == "wrong"


@pytest.mark.realdata
def test_pandalm_judges_and_describe(capsys, data_dir):
    loaded(data_dir, "pandalm")
    code, out, _ = run(capsys, "judges", "--dataset", "pandalm", "--data-dir", str(data_dir), "--json",
                       "--n-resamples", "100")
    records = json.loads(out)
    assert [r["judge"] for r in records] == ["GPT-3.5-turbo", "PandaLM-7B"]
    assert records[0]["n_invalid"] == 25 and records[0]["accuracy_swapped"] is None
    code, out, _ = run(capsys, "describe", "--dataset", "pandalm", "--data-dir", str(data_dir))
    assert code == 0 and "999 items" in out and "GPT-3.5-turbo" in out
    code, out, _ = run(capsys, "describe", "--dataset", "pandalm", "--data-dir", str(data_dir), "--json")
    assert json.loads(out)["kind"] == "pairwise"


def test_pairwise_datasets_are_listed_with_their_kind_and_refused_as_score_data(capsys, tmp_path):
    code, out, _ = run(capsys, "datasets", "--data-dir", str(tmp_path), "--json")
    listing = {row["id"]: row for row in json.loads(out)}
    assert listing["pandalm"]["kind"] == listing["llmbar"]["kind"] == "pairwise"
    assert listing["summeval"]["kind"] == "scores"
    code, out, err = run(capsys, "judges", "--dataset", "pandalm", "--data-dir", str(tmp_path))
    assert code == 2 and "not available" in err and "metaeval fetch --dataset pandalm" in err
    code, out, err = run(capsys, "judges", "--dataset", "demo")
    assert code == 2 and "score matrices" in err and len(err.splitlines()) == 1
    code, out, err = run(capsys, "correlate", "--dataset", "pandalm", "--metrics", "x", "--human", "y")
    assert code == 2 and ("pairwise verdicts" in err or "not available" in err)


@pytest.fixture
def verdict_file(tmp_path):
    from dataclasses import replace

    import numpy as np

    from metaeval_core.judges import pairwise_to_long_frame
    from tests.core.judges.helpers import random_data

    data = random_data(71, n=60, n_humans=3, n_judges=3)
    scores = np.full((data.n_items, data.n_raters, 2), np.nan)
    scores[:, 3, :] = np.random.default_rng(1).integers(0, 10, size=(data.n_items, 2))
    path = tmp_path / "verdicts.csv"
    pairwise_to_long_frame(replace(data, scores=scores)).to_csv(path, index=False)
    return path


@pytest.mark.parametrize("view", ["table", "leaderboard", "bias", "systems", "scores", "describe", "agreement",
                                  "alt-test"])
def test_every_view_prints_a_fitting_table_and_json(capsys, monkeypatch, verdict_file, view):
    monkeypatch.setenv("COLUMNS", "100")
    code, out, err = run(capsys, "judges", "--dataset", str(verdict_file), "--view", view, "--n-resamples", "50")
    assert code == 0, err
    assert max(len(line) for line in out.splitlines()) <= 100, out
    code, out, err = run(capsys, "judges", "--dataset", str(verdict_file), "--view", view, "--n-resamples", "50",
                         "--json")
    assert code == 0, err
    payload = json.loads(out)
    assert payload


def test_leaderboard_view_has_judges_annotators_and_the_ceiling(capsys, verdict_file):
    code, out, _ = run(capsys, "judges", "--dataset", str(verdict_file), "--view", "leaderboard", "--json",
                       "--n-resamples", "50", "--statistic", "kappa", "--order", "average")
    records = json.loads(out)
    assert [r["kind"] for r in records] == ["judge"] * 3 + ["chance"] + ["annotator"] * 3 + ["human-ceiling"]
    assert {r["statistic"] for r in records} == {"kappa"} and records[0]["order"] == "average"


def test_systems_view_scores_the_judges_in_the_order_asked(capsys, verdict_file):
    payloads = {}
    for order in ("original", "swapped"):
        code, out, err = run(capsys, "judges", "--dataset", str(verdict_file), "--view", "systems", "--json",
                             "--n-resamples", "50", "--order", order)
        assert code == 0, err
        payloads[order] = json.loads(out)["judges"]
        assert {r["order"] for r in payloads[order]} == {order}
    assert [r["kendall"] for r in payloads["original"]] != [r["kendall"] for r in payloads["swapped"]]
    code, out, _ = run(capsys, "judges", "--dataset", str(verdict_file), "--view", "systems", "--n-resamples", "50",
                       "--order", "swapped")
    assert "the judges' verdicts in order swapped" in out
    code, _, err = run(capsys, "judges", "--dataset", str(verdict_file), "--view", "systems", "--order", "both")
    assert code == 2 and "--order must be one of original, swapped, average" in err

def test_views_that_need_what_a_dataset_lacks_say_so(capsys, tmp_path):
    path = tmp_path / "v.csv"
    path.write_text("item,system_a,system_b,rater,verdict\ni1,,,human,A\ni1,,,j,B\ni2,,,human,B\ni2,,,j,B\n")
    code, _, err = run(capsys, "judges", "--dataset", str(path), "--view", "systems")
    assert code == 2 and "does not name the systems" in err
    code, _, err = run(capsys, "judges", "--dataset", str(path), "--view", "scores")
    assert code == 2 and "scores the outputs" in err
    code, _, err = run(capsys, "judges", "--dataset", str(path), "--pair-sets", "nope")
    assert code == 2 and "no pair set 'nope'" in err


def test_by_an_item_attribute(capsys, verdict_file, tmp_path):
    import pandas as pd

    frame = pd.read_csv(verdict_file)
    frame["attr.task"] = frame["item"].map(lambda item: "even" if int(item[1:]) % 2 == 0 else "odd")
    path = tmp_path / "with_task.csv"
    frame.to_csv(path, index=False)
    code, out, err = run(capsys, "judges", "--dataset", str(path), "--by", "task", "--json", "--n-resamples", "50")
    assert code == 0, err
    records = json.loads(out)
    assert {r["subset"] for r in records} == {"even", "odd"} and {r["by"] for r in records} == {"task"}
    assert {r["n_items"] for r in records} == {30}
    code, _, err = run(capsys, "judges", "--dataset", str(path), "--by", "colour")
    assert code == 2 and "no item attribute 'colour'" in err


def test_describe_reads_a_verdict_file_as_verdicts_not_scores(capsys, verdict_file, tmp_path):
    """`metaeval describe` on a long verdict file: the `judges --view describe` report, not a score-data error
    (issue 21)."""
    import gzip

    from metaeval_core.judges import is_verdict_file

    code, out, err = run(capsys, "describe", "--dataset", str(verdict_file))
    assert code == 0, err
    code, expected, _ = run(capsys, "judges", "--dataset", str(verdict_file), "--view", "describe")
    assert out.splitlines()[0] == "a pairwise verdict file: described as by metaeval judges --view describe"
    assert out.splitlines()[1:] == expected.splitlines() and "pairwise verdicts:" in out
    code, out, _ = run(capsys, "describe", "--dataset", str(verdict_file), "--json")
    payload = json.loads(out)
    assert payload["kind"] == "pairwise" and "warnings" in payload["report"]
    # Aliases, tabs, gzip and JSON Lines are sniffed from the header; score files are not verdict files.
    tsv = tmp_path / "v.tsv.gz"
    tsv.write_bytes(gzip.compress(b"pair_id\tmodel_a\tmodel_b\tjudge\twinner\np1\tx\ty\thuman\tA\n"))
    jsonl = tmp_path / "v.jsonl"
    jsonl.write_text('{"item": "1", "system_a": "x", "system_b": "y", "rater": "human", "verdict": "A"}\n')
    scores = tmp_path / "s.csv"
    scores.write_text("system,input,human,m\na,1,1,2\nb,1,2,3\na,2,3,1\nb,2,1,1\n")
    assert is_verdict_file(tsv) and is_verdict_file(jsonl)
    assert not is_verdict_file(scores) and not is_verdict_file(tmp_path / "absent.csv")
    code, out, err = run(capsys, "describe", "--dataset", str(scores))
    assert code == 0 and "pairwise" not in out, err


@pytest.mark.realdata
def test_pandalm_bias_counts_its_invalid_verdicts_and_says_one_order(capsys, data_dir, monkeypatch):
    loaded(data_dir, "pandalm")
    code, out, _ = run(capsys, "judges", "--dataset", "pandalm", "--data-dir", str(data_dir), "--view", "bias",
                       "--n-resamples", "50", "--json")
    records = json.loads(out)
    assert records[0]["judge"] == "GPT-3.5-turbo" and records[0]["n_invalid"] == 25
    assert records[0]["length_n_items"] > 0 and records[0]["n_items"] == 0  # no item judged in both orders
    monkeypatch.setenv("COLUMNS", "100")
    code, out, _ = run(capsys, "judges", "--dataset", "pandalm", "--data-dir", str(data_dir), "--view", "bias",
                       "--n-resamples", "50")
    flat = " ".join(out.split())
    assert "both orders pooled" not in flat and "in the one order it judged" in flat
    assert "saw each pair in one presentation order" in flat
    code, out, err = run(capsys, "judges", "--dataset", "pandalm", "--data-dir", str(data_dir), "--view",
                         "leaderboard", "--order", "average", "--n-resamples", "50")
    assert code != 0 and "needs verdicts in original and swapped order" in err
    with pytest.raises(SystemExit):
        main(["judges", "--help"])
    assert "40 at the default 0.95" in " ".join(capsys.readouterr().out.split())


def test_as_verdict_is_named_in_every_result(capsys, verdict_file):
    for view in ("leaderboard", "table", "bias"):
        code, out, err = run(capsys, "judges", "--dataset", str(verdict_file), "--view", view, "--invalid",
                             "as-verdict", "--n-resamples", "50", "--json")
        assert code == 0, err
        records = json.loads(out)
        assert all(r["invalid"] == "as-verdict" for r in records), view


def test_describe_does_not_say_no_warnings_over_unread_notes(capsys, tmp_path):
    path = tmp_path / "v.csv"
    path.write_text("item,system_a,system_b,rater,verdict\n" + "".join(
        f"q{i},x,y,annotator1,A\nq{i},x,y,my-judge,{'??' if i == 0 else 'B'}\n" for i in range(4)))
    code, out, err = run(capsys, "judges", "--dataset", str(path), "--view", "describe")
    assert code == 0, err
    assert "no warnings\n" not in out and "note(s) above" in out or "warning:" in out


def test_leaderboard_json_carries_the_warnings_and_sentences_the_text_prints(capsys, tmp_path):
    """A judge that judged one of two pair sets: the coverage warning and every sentence under the table are in
    `--json` too, on each row of their block (issue 29)."""
    from metaeval_core.judges import pairwise_to_long_frame
    from tests.core.judges.helpers import random_data

    frame = pairwise_to_long_frame(random_data(5, n=60, n_humans=3, n_judges=3, pair_sets=2))
    frame = frame[(frame["rater"] != "j1") | (frame["pair_set"] == "set0")].assign(**{"attr.block": "both"})
    path = tmp_path / "partial.csv"
    frame.to_csv(path, index=False)
    options = ["judges", "--dataset", str(path), "--view", "leaderboard", "--n-resamples", "50", "--by", "block"]
    code, out, err = run(capsys, *options)
    assert code == 0, err
    text = " ".join(out.split())
    code, out, err = run(capsys, *options, "--json")
    assert code == 0, err
    records = json.loads(out)
    warnings, sentences = records[0]["warnings"], records[0]["sentences"]
    assert all(r["warnings"] == warnings and r["sentences"] == sentences for r in records)
    assert len(warnings) == 1 and "scored on different items" in warnings[0] and "j1" in warnings[0]
    assert warnings[0] in sentences and len(sentences) >= 2
    for sentence in sentences:
        assert " ".join(sentence.split()) in text
