"""CLI subcommands of docs/methods.md sec. 10: JSON shapes, readable output, one-line errors."""

from __future__ import annotations

import json

import pytest

from metaeval_core.cli.main import main


def run_cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_improvement_json(capsys):
    argv = ["improvement", "--dataset", "demo", "--metric", "metric.strong", "--human", "human.quality",
            "--delta", "1.5", "--n-resamples", "100", "--seed", "3", "--json"]
    code, out, err = run_cli(capsys, *argv)
    assert code == 0, err
    payload = json.loads(out)
    assert isinstance(payload, dict)
    assert {"probability", "low", "high", "n_pairs", "window_pairs", "total_pairs", "extrapolated"} <= set(payload)
    assert 0 <= payload["low"] <= payload["probability"] <= payload["high"] <= 1
    assert isinstance(payload["n_pairs"], int) and payload["total_pairs"] == 120
    code, again, _ = run_cli(capsys, *argv)
    assert again == out  # same seed, same numbers
    code, out, _ = run_cli(capsys, *argv, "--curve", "--pool", "all")
    payload = json.loads(out)
    assert len(payload["curve"]) == 101 and len(payload["pairs"]) == payload["total_pairs"]
    assert payload["pool"] == "all"


def test_improvement_text_and_errors(capsys):
    code, out, err = run_cli(capsys, "improvement", "--dataset", "demo", "--metric", "metric.good", "--human",
                             "human.quality", "--delta", "2", "--n-resamples", "50")
    assert code == 0, err
    assert "probability" in out and "pairs support it" in " ".join(out.split())
    code, out, err = run_cli(capsys, "improvement", "--dataset", "demo", "--metric", "metric.good", "--human",
                             "human.quality", "--delta", "0")
    assert code == 2 and err.startswith("error: --delta") and len(err.strip().splitlines()) == 1


def test_plan_json(capsys):
    code, out, err = run_cli(capsys, "plan", "--dataset", "demo", "--metric", "metric.strong", "--human",
                             "human.quality", "--sizes", "10,50", "--target-width", "0.5", "--n-trials", "4",
                             "--n-resamples", "60", "--json")
    assert code == 0, err
    payload = json.loads(out)
    assert [row["n_inputs"] for row in payload["table"]] == [10, 50]
    assert {"n_inputs", "n_systems", "width_mean", "power"} <= set(payload["table"][0])
    assert set(payload["recommendation"]) == {"reached", "n_inputs", "n_systems", "message", "isolated", "borderline"}
    assert payload["target_width"] == 0.5 and payload["target_power"] is None


def test_plan_defaults_text_and_errors(capsys):
    code, out, err = run_cli(capsys, "plan", "--dataset", "demo", "--metric", "metric.strong", "--human",
                             "human.quality", "--target-power", "0.8", "--n-trials", "2", "--n-resamples", "40")
    assert code == 0, err
    assert "recommendation:" in out
    assert [line.split()[0] for line in out.splitlines()[1:5]] == ["10", "20", "50", "100"]
    code, _, err = run_cli(capsys, "plan", "--dataset", "demo", "--metric", "metric.strong", "--human",
                           "human.quality", "--sizes", "10,500")
    assert code == 2 and "input_sizes" in err
    with pytest.raises(SystemExit) as exit_info:  # argparse usage error: one line, exit 2
        main(["plan", "--dataset", "demo", "--metric", "metric.strong", "--human", "human.quality",
              "--target-width", "0.3", "--target-power", "0.8"])
    assert exit_info.value.code == 2 and "not allowed with" in capsys.readouterr().err


def test_plan_refuses_a_plan_beyond_the_budget_up_front(capsys):
    """As the dashboard's planning page: one line naming the size and the flags to change (issue 23)."""
    import time

    from metaeval_core.analyses.practice import MAX_PLAN_SECONDS, estimated_plan_seconds

    assert estimated_plan_seconds([(m, 16) for m in (10, 20, 50, 100)], n_trials=20_000,
                                  n_resamples=1000) > MAX_PLAN_SECONDS
    start = time.perf_counter()
    code, out, err = run_cli(capsys, "plan", "--dataset", "demo", "--metric", "metric.strong", "--human",
                             "human.quality", "--n-trials", "20000", "--n-resamples", "1000")
    assert time.perf_counter() - start < 10 and not out
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "4 designs (up to 16 systems x 100 inputs)" in err and "the limit is 5 min" in err
    assert all(flag in err for flag in ("--sizes", "--system-sizes", "--n-trials", "--n-resamples", "--no-power"))


def test_clusters_json(capsys):
    code, out, err = run_cli(capsys, "clusters", "--dataset", "demo", "--metrics",
                             "metric.noise,metric.strong,metric.good", "--human", "human.quality",
                             "--n-resamples", "200", "--json")
    assert code == 0, err
    payload = json.loads(out)
    assert payload["metrics"][0]["metric"] == "metric.strong" and payload["metrics"][0]["rank"] == 1
    assert sorted(m for c in payload["clusters"] for m in c) == sorted(
        ["metric.noise", "metric.strong", "metric.good"])
    assert payload["use_corrected"] is True
    code, out, _ = run_cli(capsys, "clusters", "--dataset", "demo", "--metrics", "metric.noise,metric.strong",
                           "--human", "human.quality", "--n-resamples", "100", "--uncorrected", "--json")
    assert json.loads(out)["use_corrected"] is False
    code, _, err = run_cli(capsys, "clusters", "--dataset", "demo", "--metrics", "metric.strong", "--human",
                           "human.quality")
    assert code == 2 and "at least two" in err


def test_influence_json(capsys):
    code, out, err = run_cli(capsys, "influence", "--dataset", "demo", "--metric", "metric.good", "--human",
                             "human.quality", "--json")
    assert code == 0, err
    payload = json.loads(out)
    assert len(payload["systems"]) == 16
    assert {"system", "without", "change", "flagged", "reason"} <= set(payload["systems"][0])
    assert payload["most_influential"] in {row["system"] for row in payload["systems"]}
    assert payload["low"] is None and payload["ci_method"] is None
    code, out, err = run_cli(capsys, "influence", "--dataset", "demo", "--metric", "metric.good", "--human",
                             "human.quality", "--intervals", "--n-resamples", "50", "--level", "input")
    assert code == 0, err
    assert "low_without" in out.splitlines()[0] and "most influential" in out


def test_influence_prints_names_with_terminal_escapes_escaped(capsys, monkeypatch):
    """A stored or hand-built dataset may hold any name: the CLI never writes its control characters raw."""
    from dataclasses import replace

    import metaeval_core.cli.common as cli_main

    real_load = cli_main.load

    def hostile(args):
        ds = real_load(args)
        return replace(ds, systems=("\x1b]0;pwned\x07\x1b[2J" + ds.systems[0], *ds.systems[1:]))

    monkeypatch.setattr(cli_main, "load", hostile)
    code, out, err = run_cli(capsys, "influence", "--dataset", "demo", "--metric", "metric.good", "--human",
                             "human.quality")
    assert code == 0, err
    assert "\x1b" not in out and "\x07" not in out and "\\x1b]0;pwned\\x07\\x1b[2J" in out


def test_printable_keeps_text_and_line_ends():
    from metaeval_core._text import printable, redact_url

    assert printable("a\tb\r\nc\n") == "a\tb\r\nc\n"
    assert printable("x\ry\u202ez") == "x\\ry\\u202ez"
    assert printable("l1\nl2", keep_newlines=False) == "l1\\nl2"
    assert redact_url("https://u:pw@h.org/x") == "https://u:***@h.org/x"
    assert redact_url("https://token@h.org/x") == "https://***@h.org/x"
