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


def test_light_choices_equal_the_core_constants():
    """metaeval_core.cli.options mirrors the core's Literal types so --help needs no numpy; they must agree."""
    from metaeval_core._checks import MAX_RESAMPLES, MIN_RESAMPLES
    from metaeval_core.data.dataset import POOLS
    from metaeval_core.judges._kernel import INVALID_CONVENTIONS, ORDER_MODES, STATISTICS, TIE_CONVENTIONS
    from metaeval_core.judges.systems import RANKING_METHODS
    from metaeval_core.stats.coefficients import COEFFICIENTS, POINT_COEFFICIENTS
    from metaeval_core.stats.correlation import LEVELS
    from metaeval_core.stats.resampling import CI_METHODS

    assert options.COEFFICIENTS == COEFFICIENTS and options.POINT_COEFFICIENTS == POINT_COEFFICIENTS
    assert options.LEVELS == LEVELS and options.POOLS == POOLS and options.CI_METHODS == CI_METHODS
    assert (options.MIN_RESAMPLES, options.MAX_RESAMPLES) == (MIN_RESAMPLES, MAX_RESAMPLES)
    assert options.STATISTICS == STATISTICS and options.ORDER_MODES == ORDER_MODES
    assert options.TIE_CONVENTIONS == TIE_CONVENTIONS and options.INVALID_CONVENTIONS == INVALID_CONVENTIONS
    assert options.RANKING_METHODS == RANKING_METHODS
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
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}, timeout=120)
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
