"""``metaeval`` (or ``python -m metaeval_core``): the command line's parser and entry point.

Every subcommand prints a readable table by default and machine-readable JSON
with ``--json``. Errors are one clear line on stderr and a non-zero exit code,
never a traceback (set ``METAEVAL_DEBUG=1`` to see one).

The commands live in one module per family (:data:`_COMMAND_MODULES`), each registering its subcommands through
``add_commands(command)``; what they share is in :mod:`metaeval_core.cli.common` (options, loading) and
:mod:`metaeval_core.cli.output` (tables, JSON).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from pathlib import Path
from typing import Callable, Sequence

# Light imports only (standard library and metaeval_core.cli.options, .common, .output): `metaeval --help` builds
# the parser without numpy, scipy or pandas; each command imports what it needs when it runs.
from metaeval_core._missing import missing_dependency_message
from metaeval_core._text import PrintableStream, printable
from metaeval_core.cli.common import (  # noqa: F401 - the names callers import from here
    POOL_HELP, SYSTEMS_HELP, CLIError, add_dataset_args, add_resampling_args, add_selection_args, add_test_args,
    canonical_names, check_resampling_args, chosen_test, data_dir, load, number_list, resample_count, split_list,
    unavailable_message,
)
from metaeval_core.cli.options import ALIASES, HelpFormatter, choice, did_you_mean, flag_message
from metaeval_core.cli.output import (  # noqa: F401 - the names callers import from here
    emit, fit_to_terminal, print_conventions, print_table, say, to_jsonable,
)

# Modules exposing ``add_commands(command)``, in the order of `metaeval --help`; ``command(name, func, help)``
# returns a subparser that already has ``--json``.
_COMMAND_MODULES: tuple[str, ...] = ("metaeval_core.cli.data_commands", "metaeval_core.cli.correlation_commands",
                                     "metaeval_core.cli.analyses", "metaeval_core.cli.practice",
                                     "metaeval_core.cli.simulations", "metaeval_core.cli.judges",
                                     "metaeval_core.cli.examples")

EXIT_USAGE = 2
EXIT_INTERNAL = 1


class OneLineErrorParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr (exit 2), pointing at --help."""

    def error(self, message: str):  # noqa: D401 - argparse API
        import re

        # A mistyped subcommand: the nearest names (argparse lists all of them, without a suggestion).
        wrong = re.match(r"argument COMMAND: invalid choice: '([^']*)' \(choose from (.*)\)$", message)
        if wrong:
            names = re.findall(r"'([^']*)'", wrong.group(2))
            message = (f"unknown command {wrong.group(1)!r}{did_you_mean(wrong.group(1), names)}; "
                       f"commands: {', '.join(names)}")
        # the message quotes what was typed ("unrecognized arguments: ..."): escape it, as every name we print
        self.exit(EXIT_USAGE, f"error: {printable(self.prog, keep_newlines=False)}: "
                              f"{printable(message, keep_newlines=False)} (see --help)\n")


def cmd_app(args: argparse.Namespace) -> None:
    # By name, at call time: the core never imports the dashboard's stack (streamlit, plotly) otherwise.
    try:
        serve = importlib.import_module("metaeval_ui.serve")
    except ImportError as error:
        raise CLIError(f"the dashboard cannot start: {error} (install metaeval with its dependencies: "
                       "pip install metaeval, or bash run.sh app in a checkout)") from None
    raise SystemExit(serve.main(list(args.streamlit_args)))


def version() -> str:
    """The installed distribution's version, else pyproject.toml's (a checkout run with PYTHONPATH)."""
    from importlib import metadata

    try:
        return metadata.version("metaeval")
    except metadata.PackageNotFoundError:
        import re

        pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
        found = re.search(r'^version\s*=\s*"([^"]+)"', pyproject.read_text(encoding="utf-8"), re.M) \
            if pyproject.is_file() else None
        return found.group(1) if found else "unknown"


class _VersionAction(argparse.Action):
    """``--version``: read only when asked (importlib.metadata is not free at startup)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"metaeval {version()}")
        parser.exit(0)


def build_parser(prog: str = "metaeval") -> argparse.ArgumentParser:
    parser = OneLineErrorParser(
        prog=prog, formatter_class=HelpFormatter,
        description="Meta-evaluate automatic evaluation metrics against human judgments.",
        epilog="Start with `metaeval datasets`, then `metaeval correlate --dataset demo --human relevance "
               "--metrics rouge1`; every command has --help and --json. The dashboard: `metaeval app`.",
    )
    parser.add_argument("--version", action=_VersionAction, help="print the version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    app = sub.add_parser("app", help="start the dashboard (http://localhost:8501); Streamlit options may follow",
                         formatter_class=HelpFormatter,
                         description="Start the dashboard. Options after `app` go to Streamlit, e.g. "
                                     "`metaeval app --server.port 8600`.")
    app.add_argument("streamlit_args", nargs=argparse.REMAINDER, help="Streamlit options")
    app.set_defaults(func=cmd_app)

    def command(name: str, func: Callable, help: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help, description=help, formatter_class=HelpFormatter)
        p.add_argument("--json", action="store_true", help="machine-readable JSON on stdout")
        p.set_defaults(func=func)
        return p

    # Each command family registers its subcommands from its own module.
    for module_name in _COMMAND_MODULES:
        module = importlib.import_module(module_name)
        module.add_commands(command)
    for subparser in sub.choices.values():
        _polish(subparser)
    return parser


def _polish(parser: argparse.ArgumentParser) -> None:
    """One place for what every subcommand shares: choices in any case, with their aliases (``--coefficient tau``,
    ``--level summary``) and the nearest names when wrong; one spelling ``--metrics`` (``--metric`` kept as a
    hidden alias of a one-metric option)."""
    # The flags by parameter name, for errors raised by the core in its parameters' names (flag_message).
    parser.set_defaults(cli_flags={a.dest: a.option_strings[0] for a in parser._actions if a.option_strings})
    for action in parser._actions:
        if action.choices and action.type is None and action.option_strings:
            dest = action.dest
            action.type = choice(action.choices, aliases=ALIASES.get(dest), name=action.option_strings[0])
            if len(",".join(action.choices)) > 24:  # a long {a,b,...} would overflow the usage line
                action.metavar = dest.upper()
                action.help = f"{action.help + '; ' if action.help else ''}one of: {', '.join(action.choices)}"
        if action.option_strings == ["--metric"]:
            action.option_strings = ["--metrics", "--metric"]
            parser._option_string_actions["--metrics"] = action
            action.type = _one_metric
            action.metavar = action.metavar or "METRIC"
            action.help = action.help or "a metric id (one)"


def _one_metric(text: str) -> str:
    if "," in text:
        raise argparse.ArgumentTypeError(f"this command takes one metric; got {text!r} (run it once per metric)")
    return text


def main(argv: Sequence[str] | None = None, *, prog: str = "metaeval") -> int:
    parser = build_parser(prog)
    if not (sys.argv[1:] if argv is None else list(argv)):  # bare `metaeval`: the commands, not an error line
        sys.stdout.write(parser.format_help())
        return EXIT_USAGE
    # Streamlit's own options follow `app` (argparse's REMAINDER does not take a leading --option).
    args, extra = parser.parse_known_args(argv)
    if extra and args.command != "app":
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    if args.command == "app":
        args.streamlit_args = [*extra, *args.streamlit_args]
    check_resampling_args(parser, args)
    if args.command == "app":  # Streamlit's own output, not ours
        return _run(args)
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = PrintableStream(sys.stdout), PrintableStream(sys.stderr)  # names are data
    try:
        return _run(args)
    finally:
        sys.stdout, sys.stderr = saved


def _check_dataset_args(args: argparse.Namespace) -> None:
    """--data-dir must be a folder; a built-in dataset id in any case is that dataset (SummEval -> summeval), and
    a name that is neither an id nor a file gets the nearest ids."""
    if getattr(args, "data_dir", None) and args.command != "fetch" and not Path(args.data_dir).is_dir():
        raise CLIError(f"--data-dir {args.data_dir}: no such folder (check the spelling; `metaeval fetch "
                       "--data-dir FOLDER` creates one and downloads into it)")
    for attr in ("dataset", "datasets"):
        value = getattr(args, attr, None)
        if not isinstance(value, str) or not value.strip():
            continue
        from metaeval_core.data.registry import dataset_ids

        ids = dataset_ids()
        by_case = {i.lower(): i for i in ids}
        several = args.command == "fetch" or attr == "datasets"
        names = split_list(value, attr) if several else [value.strip()]
        fixed = []
        for name in names:
            if name in ids or Path(name).exists():
                fixed.append(name)
            elif name.lower() in by_case:
                fixed.append(by_case[name.lower()])
            else:
                raise CLIError(f"--{attr} {name!r} is neither a built-in dataset nor an existing file or folder"
                               f"{did_you_mean(name, ids)}; built-in datasets: {', '.join(ids)} "
                               "(`metaeval datasets` lists them)")
        setattr(args, attr, ",".join(fixed))


def _run(args: argparse.Namespace) -> int:
    try:
        _check_dataset_args(args)
        code = args.func(args)  # None, or a command's own exit code (reproduce: 1 on a real mismatch)
        sys.stdout.flush()
        print_conventions(args)  # commands that print their tables themselves: once, after them
        if code:
            return int(code)
    except BrokenPipeError:  # the reader went away (`... | head`): stop quietly, as other command-line tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (CLIError, ValueError, TypeError, FileNotFoundError, OSError) as error:
        if os.environ.get("METAEVAL_DEBUG"):
            raise
        message = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        if not isinstance(error, CLIError):  # the core names its parameters; say the flags
            message = flag_message(message, getattr(args, "cli_flags", {}))
        print(f"error: {message}", file=sys.stderr)
        return EXIT_USAGE
    except ImportError as error:  # run outside the environment the README sets up
        if os.environ.get("METAEVAL_DEBUG"):
            raise
        print(f"error: {missing_dependency_message(error)}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    except Exception as error:  # noqa: BLE001 - the CLI must never show a traceback to a user
        if os.environ.get("METAEVAL_DEBUG"):
            raise
        print(f"internal error ({type(error).__name__}): {error}; rerun with METAEVAL_DEBUG=1 for details",
              file=sys.stderr)
        return EXIT_INTERNAL
    return 0


def entry() -> None:
    """The ``metaeval`` console command (``pyproject.toml``'s ``[project.scripts]``)."""
    sys.exit(main())
