"""The command line: JSON shapes, readable output, one-line errors, no tracebacks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from metaeval_core.cli.main import main

REPO = Path(__file__).resolve().parents[2]


def run_cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_correlate_json_shape(capsys):
    code, out, err = run_cli(capsys, "correlate", "--dataset", "demo", "--metrics", "metric.strong,metric.weak",
                             "--human", "human.quality", "--level", "system", "--coefficient", "kendall", "--json")
    assert code == 0, err
    rows = json.loads(out)
    assert [r["metric"] for r in rows] == ["metric.strong", "metric.weak"]
    for r in rows:
        assert {"metric", "human", "level", "coefficient", "estimate", "n"} <= set(r)
        assert r["n"] == 16 and -1 <= r["estimate"] <= 1


def test_correlate_readable_table(capsys):
    code, out, _ = run_cli(capsys, "correlate", "--dataset", "demo", "--metrics", "metric.good",
                           "--human", "human.quality", "--level", "input")
    assert code == 0
    assert "metric.good" in out and "estimate" in out.splitlines()[1]  # after the heading line


def test_correlate_subset_and_pool(capsys):
    code, out, _ = run_cli(capsys, "correlate", "--dataset", "demo", "--metrics", "metric.good", "--human",
                           "human.quality", "--pool", "all", "--systems", "type=abs", "--json")
    assert code == 0
    row = json.loads(out)[0]
    assert row["n"] == 12 and row["pool"] == "all" and row["systems"] == "type=abs"


def test_describe_and_datasets(capsys, tmp_path):
    code, out, _ = run_cli(capsys, "describe", "--dataset", "demo", "--json")
    assert code == 0
    info = json.loads(out)
    assert info["n_judged"] == 100 and info["n_unjudged"] == 2000
    assert info["human_measures"] == ["human.quality"]
    code, out, _ = run_cli(capsys, "datasets", "--data-dir", str(tmp_path), "--json")
    assert code == 0
    listing = {d["id"]: d for d in json.loads(out)}
    assert listing["demo"]["available"] and listing["demo"]["systems"] == 16
    assert not listing["summeval"]["available"] and listing["summeval"]["reason"]


@pytest.mark.parametrize(
    "argv, fragment",
    [
        (["correlate", "--dataset", "demo", "--metrics", "rouge-9", "--human", "human.quality"], "unknown measure 'rouge-9'"),
        (["correlate", "--dataset", "nope", "--metrics", "m", "--human", "h"], "nope"),
        (["correlate", "--dataset", "demo", "--metrics", ",", "--human", "human.quality"], "--metrics needs"),
        (["correlate", "--dataset", "demo", "--metrics", "metric.good", "--human", "metric.fair"], "not a human measure"),
    ],
)
def test_errors_are_one_line(capsys, argv, fragment):
    code, out, err = run_cli(capsys, *argv)
    assert code == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1 and err.startswith("error: ")
    assert fragment in err
    assert "Traceback" not in err


def test_subprocess_usage_error_and_help():
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    bad = subprocess.run([sys.executable, "-m", "metaeval_core", "correlate", "--level", "x"], capture_output=True,
                         text=True, cwd=REPO, env=env)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1 and "Traceback" not in bad.stderr
    for command in ["datasets", "fetch", "describe", "correlate", "compare", "delta", "stability"]:
        ok = subprocess.run([sys.executable, "-m", "metaeval_core", command, "--help"], capture_output=True,
                            text=True, cwd=REPO, env=env)
        assert ok.returncode == 0 and "--json" in ok.stdout


def test_fetch_verifies_present_files(capsys, data_dir):
    code, out, err = run_cli(capsys, "fetch", "--dataset", "rose,xsum-hallucination", "--data-dir", str(data_dir),
                             "--json")
    assert code == 0, err
    rows = json.loads(out)
    assert {r["dataset"] for r in rows} == {"rose", "xsum-hallucination"}
    assert all(r["status"] == "ok" for r in rows)


# -- --human-measures: which measures of an uploaded file are human ----------------------------------------------
KIND_FILE = ("system,input,measure,score,kind\n"
             + "".join(f"{s},{d},RelE,{q},human\n{s},{d},bertscore,{b},metric\n{s},{d},rouge,{r},metric\n"
                       for s, d, q, b, r in [("A", "d1", 1, 0.8, 0.4), ("B", "d1", 0, 0.9, 0.5),
                                             ("C", "d1", 1, 0.7, 0.3), ("A", "d2", 0, 0.7, 0.3),
                                             ("B", "d2", 1, 0.85, 0.6), ("C", "d2", 1, 0.6, 0.2)]))


def test_every_dataset_subcommand_takes_human_measures():
    from metaeval_core.cli.main import build_parser

    parser = build_parser()
    subcommands = next(a for a in parser._actions if a.dest == "command").choices
    with_dataset = {name for name, p in subcommands.items() if any("--dataset" in a.option_strings
                                                                   for a in p._actions)}
    assert len(with_dataset) > 15
    # fetch takes built-in ids only; judges reads pairwise verdicts, whose raters carry their kind (no measures);
    # average's --dataset names the built-in test set of a WMT suite (--tasks wmt23), its tasks' datasets are ids
    for name in with_dataset - {"fetch", "judges", "average"}:
        assert any("--human-measures" in a.option_strings for a in subcommands[name]._actions), name


def test_human_measures_for_an_uploaded_file(capsys, tmp_path):
    path = tmp_path / "scores.csv"
    path.write_text(KIND_FILE)
    code, out, err = run_cli(capsys, "describe", "--dataset", str(path), "--json")
    assert code == 0, err
    info = json.loads(out)
    assert info["human_measures"] == ["RelE"] and info["metric_measures"] == ["bertscore", "rouge"]
    code, out, err = run_cli(capsys, "describe", "--dataset", str(path), "--human-measures", " bertscore , RelE",
                             "--json")
    assert code == 0, err
    info = json.loads(out)
    assert info["human_measures"] == ["RelE", "bertscore"] and info["metric_measures"] == ["rouge"]
    assert any("override" in note and "'bertscore' (file: metric)" in note for note in info["notes"])
    code, out, err = run_cli(capsys, "correlate", "--dataset", str(path), "--human-measures", "bertscore",
                             "--metrics", "rouge", "--human", "bertscore", "--json")
    assert code == 0, err
    assert json.loads(out)[0]["human"] == "bertscore"
    bare = REPO / "tests" / "data" / "bad_uploads" / "no_human_measure.csv"  # nothing is human by name
    code, out, err = run_cli(capsys, "describe", "--dataset", str(bare), "--human-measures", "bertscore", "--json")
    assert code == 0, err
    assert json.loads(out)["human_measures"] == ["bertscore"]


@pytest.mark.parametrize("dataset, value, fragment", [
    ("demo", "human.quality", "--human-measures is only for a file given to --dataset: 'demo' is a built-in"),
    ("summeval", "expert.relevance", "--human-measures is only for a file given to --dataset: 'summeval'"),
    (None, "nope", "--human-measures names 'nope'"),
    (None, " , ", "--human-measures needs at least one name"),
])
def test_human_measures_errors_are_one_line(capsys, tmp_path, dataset, value, fragment):
    if dataset is None:
        dataset = str(tmp_path / "scores.csv")
        Path(dataset).write_text(KIND_FILE)
    code, out, err = run_cli(capsys, "describe", "--dataset", dataset, "--human-measures", value)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and err.startswith("error: ") and fragment in err, err
