"""CLI subcommands of the analyses: JSON shapes, readable output, one-line errors."""

from __future__ import annotations

import json

import pytest

from metaeval_core.cli.main import main


def run_cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_topk_json(capsys):
    code, out, err = run_cli(capsys, "topk", "--dataset", "demo", "--metrics", "metric.strong,metric.weak",
                             "--human", "human.quality", "--json")
    assert code == 0, err
    rows = json.loads(out)
    assert isinstance(rows, list) and len(rows) == 2 * (16 - 3 + 1)
    assert all(set(r) == {"metric", "k", "estimate"} for r in rows)
    assert [r["k"] for r in rows[:3]] == [16, 15, 14]
    code, out, _ = run_cli(capsys, "topk", "--dataset", "demo", "--metrics", "metric.good", "--human",
                           "human.quality", "--systems", "type=abs", "--coefficient", "kendall", "--min-k", "5", "--json")
    assert code == 0 and [r["k"] for r in json.loads(out)] == list(range(12, 4, -1))


def test_pairwise_f1_json_and_labels(capsys):
    argv = ["pairwise-f1", "--dataset", "demo", "--metrics", "metric.strong,metric.noise", "--human",
            "human.quality", "--n-resamples", "200", "--seed", "3", "--json"]
    code, out, err = run_cli(capsys, *argv)
    assert code == 0, err
    rows = json.loads(out)
    assert [set(r) for r in rows] == [{"metric", "f1"}] * 2
    assert rows[0]["f1"] > rows[1]["f1"]
    code, out, _ = run_cli(capsys, *argv, "--labels")
    labelled = json.loads(out)
    assert [r["f1"] for r in labelled] == [r["f1"] for r in rows]  # same seed, same numbers
    labels = labelled[0]["labels"]
    assert len(labels) == 120
    assert {"system_a", "system_b", "human_label", "metric_label", "human_share", "metric_share"} <= set(labels[0])
    code, out, _ = run_cli(capsys, *argv[:-1], "--labels")
    assert code == 0 and "human_label" in out and "metric.strong" in out.splitlines()[1]


def test_matrix_json(capsys):
    code, out, err = run_cli(capsys, "matrix", "--dataset", "demo", "--measures",
                             "human.quality,metric.strong,metric.weak", "--level", "input", "--order", "clustered",
                             "--json")
    assert code == 0, err
    payload = json.loads(out)
    assert sorted(payload["measures"]) == ["human.quality", "metric.strong", "metric.weak"]
    matrix = payload["matrix"]
    assert len(matrix) == 3 and all(len(row) == 3 for row in matrix)
    assert all(matrix[i][i] == 1.0 for i in range(3))
    assert all(matrix[i][j] == matrix[j][i] for i in range(3) for j in range(3))
    assert payload["level"] == "input" and payload["order"] == "clustered"
    code, out, _ = run_cli(capsys, "matrix", "--dataset", "demo", "--measures", "human.quality,metric.good")
    assert code == 0 and "human.quality" in out


def test_annotators_json(capsys):
    code, out, err = run_cli(capsys, "annotators", "--dataset", "demo", "--json")
    assert code == 0, err
    rows = json.loads(out)
    assert [(r["group"], r["dimension"]) for r in rows] == [("human", "quality"), ("human", "all")]
    assert all({"group", "dimension", "alpha"} <= set(r) for r in rows) and 0 < rows[0]["alpha"] < 1
    code, out, _ = run_cli(capsys, "annotators", "--dataset", "demo")
    assert code == 0 and "note:" in out


def test_annotators_summeval(capsys, data_dir):
    code, out, err = run_cli(capsys, "annotators", "--dataset", "summeval", "--data-dir", str(data_dir), "--json")
    assert code == 0, err
    alpha = {(r["group"], r["dimension"]): r["alpha"] for r in json.loads(out)}
    assert alpha["expert", "all"] == pytest.approx(0.7187, abs=5e-5)
    assert alpha["turker", "all"] == pytest.approx(0.4920, abs=5e-5)
    code, out, err = run_cli(capsys, "annotators", "--dataset", "summeval", "--data-dir", str(data_dir),
                             "--correlations", "--levels", "system", "--coefficients", "pearson", "--json")
    assert code == 0, err
    rows = json.loads(out)
    assert {r["dimension"] for r in rows} == {"coherence", "consistency", "fluency", "relevance"}
    assert all(r["level"] == "system" and r["coefficient"] == "pearson" and r["n"] == 16 for r in rows)


def test_high_range_json(capsys):
    code, out, err = run_cli(capsys, "high-range", "--dataset", "demo", "--metrics",
                             "metric.strong,metric.good,metric.fair", "--baseline", "S05", "--bins", "5", "--json")
    assert code == 0, err
    payload = json.loads(out)
    assert payload["baseline"] == "S05" and len(payload["correlations"]) == 3
    assert {"metric_a", "metric_b", "tau_all", "tau_top"} <= set(payload["correlations"][0])
    assert len(payload["disagreement"]) == 3 * 5
    assert {"bin_low", "bin_high", "disagreement", "n_pairs"} <= set(payload["disagreement"][0])
    code, out, _ = run_cli(capsys, "high-range", "--dataset", "demo", "--metrics", "metric.strong,metric.good",
                           "--baseline", "S05")
    assert code == 0 and out.startswith("baseline S05:")


def test_normality_json(capsys):
    code, out, err = run_cli(capsys, "normality", "--dataset", "demo", "--measures", "human.quality,metric.good",
                             "--pool", "all", "--json")
    assert code == 0, err
    rows = json.loads(out)
    assert [r["measure"] for r in rows] == ["human.quality", "metric.good"]
    assert rows[0]["pool"] == "judged" and rows[1]["pool"] == "all" and rows[1]["input_tested"] == 2100


@pytest.mark.parametrize("command", ["topk", "pairwise-f1", "matrix", "annotators", "high-range", "normality"])
def test_help(capsys, command):
    with pytest.raises(SystemExit) as info:
        main([command, "--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert "--json" in out and "--dataset" in out


@pytest.mark.parametrize(
    "argv, fragment",
    [
        (["topk", "--dataset", "demo", "--metrics", "metric.good", "--human", "human.quality", "--min-k", "40"],
         "--min-k must not exceed"),
        (["topk", "--dataset", "demo", "--metrics", "rouge-9", "--human", "human.quality"], "unknown measure 'rouge-9'"),
        (["pairwise-f1", "--dataset", "demo", "--metrics", "metric.good", "--human", "human.quality",
          "--confidence", "1.5"], "confidence must lie strictly between 0 and 1"),
        (["pairwise-f1", "--dataset", "demo", "--metrics", "metric.good", "--human", "metric.weak"],
         "not a human measure"),
        (["matrix", "--dataset", "demo", "--measures", "metric.good"], "measures must name at least 2"),
        (["high-range", "--dataset", "demo", "--metrics", "metric.good,metric.weak", "--baseline", "S99"],
         "baseline: unknown system 'S99'"),
        (["high-range", "--dataset", "demo", "--metrics", "metric.good,metric.weak", "--baseline", "S01",
          "--systems", "type=abs"], "baseline: unknown system 'S01'"),
        (["annotators", "--dataset", "demo", "--groups", "crowd"], "unknown annotator group"),
        (["normality", "--dataset", "demo", "--measures", "metric.good", "--systems", "type=mixed"], "no system"),
    ],
)
def test_errors_are_one_line(capsys, argv, fragment):
    code, out, err = run_cli(capsys, *argv)
    assert code == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1 and err.startswith("error: ")
    assert fragment in err and "Traceback" not in err
