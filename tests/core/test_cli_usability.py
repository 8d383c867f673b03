"""The command line as a newcomer meets it (issue 22): fast help, pages that fit the terminal, defaults shown,
aliases accepted, 'did you mean' for the rest, errors that name the flag and the fix."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from metaeval_core.cli import options
from metaeval_core.cli.main import build_parser, main

ROOT = Path(__file__).resolve().parents[2]
SUBCOMMANDS = sorted(build_parser()._subparsers._group_actions[0].choices)


def run(capsys, *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as stop:  # --help, --version and usage errors exit from argparse
        code = stop.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def fresh_python(code: str) -> subprocess.CompletedProcess:
    """``code`` in a new interpreter that sees only this checkout (nothing imported before it)."""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}, timeout=300)


def test_light_choices_equal_the_core_constants():
    """metaeval_core.cli.options mirrors the core's Literal types so --help needs no numpy; they must agree."""
    from metaeval_core._checks import MAX_RESAMPLES, MIN_RESAMPLES
    from metaeval_core.data.dataset import POOLS
    from metaeval_core.judges._kernel import INVALID_CONVENTIONS, ORDER_MODES, STATISTICS, TIE_CONVENTIONS
    from metaeval_core.judges.systems import RANKING_METHODS, SYSTEM_ORDERS
    from metaeval_core.stats.coefficients import COEFFICIENTS, POINT_COEFFICIENTS
    from metaeval_core.stats.correlation import LEVELS
    from metaeval_core.stats.resampling import CI_METHODS

    assert options.COEFFICIENTS == COEFFICIENTS and options.POINT_COEFFICIENTS == POINT_COEFFICIENTS
    assert options.LEVELS == LEVELS and options.POOLS == POOLS and options.CI_METHODS == CI_METHODS
    assert (options.MIN_RESAMPLES, options.MAX_RESAMPLES) == (MIN_RESAMPLES, MAX_RESAMPLES)
    assert options.STATISTICS == STATISTICS and options.ORDER_MODES == ORDER_MODES
    assert options.TIE_CONVENTIONS == TIE_CONVENTIONS and options.INVALID_CONVENTIONS == INVALID_CONVENTIONS
    assert options.RANKING_METHODS == RANKING_METHODS and options.SYSTEM_ORDERS == SYSTEM_ORDERS
    for values in options.ALIASES.values():
        assert set(values.values()) <= {*LEVELS, *COEFFICIENTS}


def test_help_imports_no_heavy_library():
    """`metaeval --help` and a subcommand's help build the parser from light modules only (startup < 0.5 s,
    benchmarks/bench_cli_startup.py)."""
    code = ("import sys; from metaeval_core.cli.main import main\n"
            "for argv in (['--help'], ['correlate', '--help'], ['judges', '--help']):\n"
            "    try: main(argv)\n"
            "    except SystemExit: pass\n"
            "heavy = sorted(m for m in ('numpy', 'scipy', 'pandas', 'pyarrow') if m in sys.modules)\n"
            "print('HEAVY', heavy, file=sys.stderr)")
    done = fresh_python(code)
    assert "HEAVY []" in done.stderr, done.stderr[-2000:]


@pytest.mark.parametrize("columns", [80, 100])
@pytest.mark.parametrize("command", ["", *SUBCOMMANDS])
def test_every_help_page_fits_the_terminal(capsys, monkeypatch, command, columns):
    monkeypatch.setenv("COLUMNS", str(columns))
    code, out, _ = run(capsys, *([command] if command else []), "--help")
    assert code == 0 and out
    too_long = [line for line in out.splitlines() if len(line) > columns]
    assert not too_long, too_long


def test_version(capsys):
    code, out, _ = run(capsys, "--version")
    assert code == 0 and out.startswith("metaeval ") and out.split()[1][0].isdigit()


def test_correlate_help_shows_the_defaults(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    code, out, _ = run(capsys, "correlate", "--help")
    text = " ".join(out.split())
    for shown in ("(default: system)", "(default: kendall)", "(default: none)", "(default: 0.95)",
                  "(default: 0)"):
        assert shown in text, shown


def test_power_and_coverage_say_why_their_default_coefficient_differs(capsys):
    for command in ("power", "coverage"):
        _, out, _ = run(capsys, command, "--help")
        assert "correlate's default is kendall" in " ".join(out.split())


def test_one_spelling_metrics_with_metric_as_a_hidden_alias(capsys):
    _, out, _ = run(capsys, "delta", "--help")
    assert "--metrics METRIC" in out and "--metric " not in out.replace("--metrics", "")
    args = build_parser().parse_args(["delta", "--dataset", "demo", "--metric", "m", "--human", "h"])
    assert args.metric == "m"
    args = build_parser().parse_args(["delta", "--dataset", "demo", "--metrics", "m", "--human", "h"])
    assert args.metric == "m"
    code, _, err = run(capsys, "delta", "--dataset", "demo", "--metrics", "a,b", "--human", "h")
    assert code == 2 and "takes one metric" in err


@pytest.mark.parametrize("given, option, expected", [
    ("summary", "--level", "input"), ("SYSTEM", "--level", "system"), ("tau", "--coefficient", "kendall"),
    ("Pearson", "--coefficient", "pearson"),
])
def test_aliases_and_case_are_accepted(given, option, expected):
    args = build_parser().parse_args(["correlate", "--dataset", "demo", option, given])
    assert getattr(args, option.lstrip("-")) == expected


def test_a_wrong_choice_names_the_nearest(capsys):
    code, _, err = run(capsys, "correlate", "--dataset", "demo", "--level", "sytem")
    assert code == 2 and "did you mean 'system'" in err and "\n" == err[-1] and err.count("\n") == 1


def test_a_mistyped_subcommand_is_suggested(capsys):
    code, _, err = run(capsys, "corelate")
    assert code == 2 and "did you mean 'correlate'" in err


def test_version_in_json_is_not_needed_for_datasets(capsys):
    """--json output stays plain JSON (the conventions caption goes to stderr)."""
    code, out, _ = run(capsys, "datasets", "--no-counts", "--json")
    assert code == 0 and isinstance(json.loads(out), list)


# -- errors in the command line's words --------------------------------------------------------------------
def test_confidence_level_95_says_use_0_95(capsys):
    code, _, err = run(capsys, "correlate", "--dataset", "demo", "--human", "human.quality", "--metrics",
                       "metric.good", "--ci", "fisher", "--confidence-level", "95")
    assert code == 2 and "--confidence-level" in err and "use 0.95" in err and "confidence_level" not in err


def test_human_measures_error_names_the_flag(capsys, tmp_path):
    path = tmp_path / "scores.csv"
    path.write_text("system,input,alpha,beta\na,1,1,2\nb,1,2,3\na,2,3,1\nb,2,1,1\n")
    code, _, err = run(capsys, "describe", "--dataset", str(path))
    assert code == 2 and "--human-measures" in err and "human_measures" not in err


def test_a_bad_base_url_names_the_environment_variable(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("METAEVAL_DATA_BASE_URL", "ftp://mirror.example")
    code, _, err = run(capsys, "fetch", "--dataset", "summeval", "--data-dir", str(tmp_path))
    assert code == 2 and "METAEVAL_DATA_BASE_URL" in err and "base_url" not in err and "None" not in err


def test_flag_message_is_the_one_translation():
    flags = {"confidence_level": "--confidence-level", "seed": "--seed", "alpha": "--alpha"}
    assert options.flag_message("alpha must lie in (0, 1); got 5", flags) == "--alpha must lie in (0, 1); got 5"
    assert options.flag_message("the system level is empty", flags) == "the system level is empty"
    assert options.flag_message("rng must be an integer", flags) == "--seed must be an integer"
    assert options.flag_message("baseline: unknown system 'S00'", {"baseline": "--baseline"}).startswith(
        "--baseline: unknown")


# -- datasets by name --------------------------------------------------------------------------------------
def test_a_dataset_id_in_another_case_is_accepted(capsys):
    code, out, _ = run(capsys, "describe", "--dataset", "DEMO")
    assert code == 0 and out.startswith("demo ")


def test_a_misspelled_dataset_gets_the_nearest_id(capsys):
    code, _, err = run(capsys, "describe", "--dataset", "dem0")
    assert code == 2 and "did you mean 'demo'" in err
    code, _, err = run(capsys, "describe", "--dataset", "sumeval")
    assert code == 2 and "did you mean 'summeval'" in err


def test_a_misspelled_data_dir_is_a_missing_folder(capsys, tmp_path):
    code, _, err = run(capsys, "describe", "--dataset", "summeval", "--data-dir", str(tmp_path / "datsets"))
    assert code == 2 and "no such folder" in err and "missing from" not in err


def test_a_missing_data_dir_from_the_environment_is_named(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("METAEVAL_DATA_DIR", str(tmp_path / "nowhere"))
    code, _, err = run(capsys, "describe", "--dataset", "summeval")
    assert code == 2 and "does not exist" in err and "METAEVAL_DATA_DIR" in err and "of 9" not in err


def test_fetch_demo_says_it_is_built_in(capsys, tmp_path):
    code, out, err = run(capsys, "fetch", "--dataset", "demo", "--data-dir", str(tmp_path))
    assert code == 0 and "built in" in err and "(no rows)" not in out + err


def test_a_plain_json_file_is_named_as_such(capsys, tmp_path):
    path = tmp_path / "scores.json"
    path.write_text(json.dumps({"system": "a", "input": "1", "metrics": {"m": 1}}, indent=2))
    code, _, err = run(capsys, "describe", "--dataset", str(path))
    assert code == 2 and "expected one JSON object per line (JSON Lines)" in err
    assert "single JSON document" in err and "character" not in err


# -- output at the terminal's width ------------------------------------------------------------------------
DEMO_COMMANDS = [
    ["datasets", "--no-counts"],
    ["describe", "--dataset", "demo"],
    ["correlate", "--dataset", "demo", "--human", "human.quality", "--metrics", "metric.good,metric.weak",
     "--ci", "fisher"],
    ["compare", "--dataset", "demo", "--human", "human.quality", "--metrics", "metric.good,metric.weak",
     "--n-resamples", "50"],
    ["delta", "--dataset", "demo", "--human", "human.quality", "--metrics", "metric.good"],
    ["stability", "--dataset", "demo", "--measures", "metric.good", "--sizes", "10,20", "--n-resamples", "20"],
    ["topk", "--dataset", "demo", "--human", "human.quality", "--metrics", "metric.good"],
    ["matrix", "--dataset", "demo", "--measures", "human.quality,metric.good,metric.weak"],
    ["annotators", "--dataset", "demo"],
    ["normality", "--dataset", "demo", "--measures", "metric.good"],
    ["ceiling", "--dataset", "demo", "--human", "human.quality", "--n-resamples", "50"],
    ["chance", "--dataset", "demo", "--human", "human.quality", "--metrics", "metric.good", "--n-resamples", "50"],
    ["improvement", "--dataset", "demo", "--human", "human.quality", "--metrics", "metric.good", "--delta", "1",
     "--n-resamples", "50"],
    ["clusters", "--dataset", "demo", "--human", "human.quality", "--metrics", "metric.good,metric.weak",
     "--n-resamples", "50"],
    ["pairwise-f1", "--dataset", "demo", "--human", "human.quality", "--metrics", "metric.good,metric.weak",
     "--n-resamples", "50"],
    ["high-range", "--dataset", "demo", "--metrics", "metric.good,metric.weak", "--baseline", "S01"],
    ["plan", "--dataset", "demo", "--human", "human.quality", "--metrics", "metric.good", "--n-resamples", "50",
     "--target-width", "0.5"],
    ["influence", "--dataset", "demo", "--human", "human.quality", "--metrics", "metric.good"],
    ["coverage", "--dataset", "demo", "--human", "human.quality", "--metrics", "metric.good", "--trials", "3",
     "--n-resamples", "50"],
    ["power", "--dataset", "demo", "--human", "human.quality", "--metrics", "metric.good", "--trials", "2",
     "--n-resamples", "50"],
    ["average", "--task", "demo:human.quality", "--task", "demo:human.quality:input", "--metrics",
     "metric.good,metric.weak", "--n-resamples", "50"],
]


@pytest.mark.parametrize("columns", [80, 100])
@pytest.mark.parametrize("argv", DEMO_COMMANDS, ids=lambda argv: argv[0])
def test_main_outputs_fit_the_terminal(capsys, monkeypatch, argv, columns):
    monkeypatch.setenv("COLUMNS", str(columns))
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    too_long = [line for line in (out + err).splitlines() if len(line) > columns]
    assert not too_long, too_long


def test_long_names_are_elided_in_text_and_whole_in_json(capsys, monkeypatch, tmp_path):
    long = "metric." + "x" * 120
    path = tmp_path / "scores.csv"
    rows = ["system,input,human.q,metric.short," + long] + [f"s{i},{j},{(i * j) % 5},{i - j},{i + j}"
                                                            for i in range(3) for j in range(4)]
    path.write_text("\n".join(rows) + "\n")
    monkeypatch.setenv("COLUMNS", "80")
    both = f"metric.short,{long}"
    code, out, _ = run(capsys, "correlate", "--dataset", str(path), "--human", "human.q", "--metrics", both)
    assert code == 0 and "…" in out and long not in out and max(map(len, out.splitlines())) <= 80
    code, out, _ = run(capsys, "correlate", "--dataset", str(path), "--human", "human.q", "--metrics", both, "--json")
    assert json.loads(out)[1]["metric"] == long


# -- reproduce ---------------------------------------------------------------------------------------------
def test_reproduce_without_data_is_one_note_and_exit_0(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = run(capsys, "reproduce", "--data-dir", str(tmp_path))
    lines = out.splitlines()
    assert code == 0 and lines[0].split()[1:3] == ["published", "numbers:"] and "0 reproduced" in lines[0]
    assert out.count("data not available") == 1 and max(map(len, lines)) <= 80


def test_reproduce_exits_1_only_on_a_real_mismatch(capsys, monkeypatch):
    from metaeval_core.analyses import reproduce as module
    from metaeval_core.analyses.reproduce import Reproduction

    rows = (Reproduction("P", "T", "a number", "demo", 0.5, 0.01, 0.5, True, ""),
            Reproduction("P", "T", "not from these data", "demo", 0.5, 0.01, 0.9, False, "why not"),
            Reproduction("P", "T", "another", "demo", 0.5, 0.01, 0.7, False, ""))
    monkeypatch.setattr(module, "reproduce", lambda load, datasets=None: rows)
    code, out, _ = run(capsys, "reproduce")
    assert code == 1 and out.splitlines()[0].startswith("3 published numbers: 1 reproduced ✓, 1 differ ✗, "
                                                         "1 not reproducible")
    assert "✓" in out and "✗" in out and "~" in out and out.count("why not") == 1
    monkeypatch.setattr(module, "reproduce", lambda load, datasets=None: rows[:2])
    assert run(capsys, "reproduce")[0] == 0  # 'not reproducible' is not a failure


def test_bare_metaeval_lists_the_commands(capsys):
    code, out, _ = run(capsys)
    assert code == 2 and "correlate" in out and "judges" in out and out.startswith("usage:")


@pytest.mark.realdata
@pytest.mark.parametrize("view", ["table", "leaderboard", "bias", "systems", "describe"])
def test_judges_views_fit_80_columns(capsys, monkeypatch, data_dir, view):
    monkeypatch.setenv("COLUMNS", "80")
    code, out, err = run(capsys, "judges", "--dataset", "pandalm", "--data-dir", str(data_dir), "--view", view,
                         "--n-resamples", "50")
    assert code == 0, err
    assert not [line for line in (out + err).splitlines() if len(line) > 80]


@pytest.mark.realdata
def test_hanna_counts_agree_between_datasets_describe_and_the_readme(capsys, data_dir):
    """HANNA: 10 models by default + the human-written stories ('10 + 1'), in `datasets`, `describe`, the
    registry's title and the README (was 11 in `datasets`, 10 elsewhere)."""
    code, out, _ = run(capsys, "datasets", "--data-dir", str(data_dir), "--json")
    row = next(r for r in json.loads(out) if r["id"] == "hanna")
    assert (row["systems"], row["systems_all"]) == (10, 11)
    code, out, _ = run(capsys, "datasets", "--data-dir", str(data_dir))
    assert any(line.split()[:3] == ["hanna", "available", "10"] and "10 + 1" in line for line in out.splitlines())
    code, out, _ = run(capsys, "describe", "--dataset", "hanna", "--data-dir", str(data_dir))
    assert "systems: 10;" in out and "10 models + Human" in " ".join(out.split())
    assert "| `hanna` |" in (ROOT / "README.md").read_text() and "10 models (+ `Human`" in (ROOT / "README.md").read_text()


def test_the_package_re_exports_lazily_and_completely():
    """`import metaeval_core` is light (the re-exports load on first use) and every name of __all__ resolves,
    `from metaeval_core import *` included."""
    code = ("import sys, metaeval_core as me\n"
            "light = 'numpy' not in sys.modules\n"
            "missing = [n for n in me.__all__ if getattr(me, n, None) is None]\n"
            "ns = {}; exec('from metaeval_core import *', ns)\n"
            "print(light, missing, sorted(set(me.__all__) - set(ns)))")
    done = fresh_python(code)
    assert done.stdout.split("\n")[0] == "True [] []", done.stderr[-2000:]
