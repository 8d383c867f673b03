"""The command line's choices, aliases and help formatting: standard library only.

``metaeval --help`` builds the whole argparse tree from this module and the subcommand modules' ``add_commands``,
so it must not import numpy, scipy or pandas (tests/core/test_cli_usability.py checks it in a subprocess). The
tuples below mirror the core's ``Literal`` types; a test checks they stay equal to the core's constants.
"""

from __future__ import annotations

import argparse
import difflib
import shutil
from typing import Iterable, Mapping

# The core's option values (metaeval_core.stats.coefficients.COEFFICIENTS, ...): equal by test.
LEVELS: tuple[str, ...] = ("system", "input", "global")
COEFFICIENTS: tuple[str, ...] = ("pearson", "spearman", "kendall", "pairwise-accuracy", "tie-calibrated-accuracy",
                                 "soft-pairwise-accuracy", "pdp")
SYSTEM_ONLY_COEFFICIENTS: tuple[str, ...] = ("soft-pairwise-accuracy",)
POINT_COEFFICIENTS: tuple[str, ...] = tuple(c for c in COEFFICIENTS if c not in SYSTEM_ONLY_COEFFICIENTS)
POOLS: tuple[str, ...] = ("judged", "all")
CI_METHODS: tuple[str, ...] = ("fisher", "boot-systems", "boot-inputs", "boot-both")
MIN_RESAMPLES = 10
MAX_RESAMPLES = 10_000
# metaeval_core.judges
STATISTICS: tuple[str, ...] = ("accuracy", "kappa", "alpha")
ORDER_MODES: tuple[str, ...] = ("original", "swapped", "average", "both")
TIE_CONVENTIONS: tuple[str, ...] = ("three-class", "drop-reference-ties", "drop-any-tie")
INVALID_CONVENTIONS: tuple[str, ...] = ("wrong", "drop", "tie", "as-verdict")
RANKING_METHODS: tuple[str, ...] = ("win-rate", "davidson")
# The orders a judge's verdicts score systems in (metaeval_core.judges.systems.SYSTEM_ORDERS).
SYSTEM_ORDERS: tuple[str, ...] = ("original", "swapped", "average")

# Unambiguous other spellings a user types (the papers' words, short names) -> the option's value.
ALIASES: dict[str, dict[str, str]] = {
    "level": {"summary": "input", "segment": "input", "seg": "input", "item": "input", "sys": "system",
              "corpus": "system", "pooled": "global"},
    "coefficient": {"tau": "kendall", "kendall-tau": "kendall", "kendalltau": "kendall", "r": "pearson",
                    "rho": "spearman", "acc": "pairwise-accuracy", "acc-eq": "tie-calibrated-accuracy",
                    "acc23": "tie-calibrated-accuracy", "spa": "soft-pairwise-accuracy"},
}


def choice(values: Iterable[str], *, aliases: Mapping[str, str] | None = None, name: str = "value"):
    """An argparse ``type`` that accepts a value in any case, an unambiguous alias (``--coefficient tau`` ->
    kendall, ``--level summary`` -> input) and otherwise fails naming the nearest choices."""
    values = tuple(values)
    lookup = {v.lower(): v for v in values}
    alias_lookup = {k.lower(): v for k, v in (aliases or {}).items() if v in values}

    def convert(text: str) -> str:
        key = text.strip().lower().replace("_", "-")
        if key in lookup:
            return lookup[key]
        if key in alias_lookup:
            return alias_lookup[key]
        raise argparse.ArgumentTypeError(
            f"{text!r} is not one of {', '.join(values)}{did_you_mean(text, [*values, *alias_lookup])}")

    convert.__name__ = name  # argparse names the type in its messages
    return convert


def did_you_mean(text: str, candidates: Iterable[str], *, n: int = 3) -> str:
    """' (did you mean X?)' with the nearest candidates (difflib, case-insensitive), or ''."""
    candidates = list(dict.fromkeys(candidates))
    folded = {c.lower(): c for c in candidates}
    close = difflib.get_close_matches(str(text).lower(), list(folded), n=n, cutoff=0.6)
    if not close:
        return ""
    return f" (did you mean {' or '.join(repr(folded[c]) for c in close)}?)"


def terminal_width() -> int:
    """The terminal's columns (``COLUMNS`` first, as shutil does), 100 when unknown."""
    return shutil.get_terminal_size((100, 24)).columns


def help_width() -> int:
    """Help pages: the terminal's width, at most 100 columns (long lines are hard to read)."""
    return max(40, min(terminal_width(), 100) - 2)


class HelpFormatter(argparse.HelpFormatter):
    """argparse's formatter at the terminal's width (at most 100 columns), adding '(default: X)' to an option
    whose help does not already give its default."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 28, width: int | None = None):
        super().__init__(prog, indent_increment, max_help_position, width or help_width())

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if ("default" in text or action.default is None or action.default is argparse.SUPPRESS
                or not action.option_strings or isinstance(action.default, bool)):
            return text
        return f"{text} (default: %(default)s)" if text else "default: %(default)s"

    def _format_action_invocation(self, action: argparse.Action) -> str:
        # A hidden alias (--metric beside --metrics) is accepted but not shown.
        shown = [o for o in action.option_strings if o not in HIDDEN_ALIASES or len(action.option_strings) == 1]
        if shown != action.option_strings:
            action = argparse.Action(shown, action.dest, nargs=action.nargs, metavar=action.metavar,
                                     help=action.help, choices=action.choices)
        return super()._format_action_invocation(action)


HIDDEN_ALIASES = frozenset({"--metric"})


# -- errors in the command line's words -------------------------------------------------------------------
# Core parameters that are not spelled as their flag (rng is --seed) or that an environment variable also sets.
_PARAMETER_FLAGS = {"rng": "--seed", "method": "--ci", "n_trials": "--trials"}
_ENVIRONMENT = {"base_url": "METAEVAL_DATA_BASE_URL", "data_dir": "METAEVAL_DATA_DIR"}


def flag_message(message: str, flags: Mapping[str, str]) -> str:
    """A core error message (parameter names of the Python API: ``confidence_level``, ``human_measures=[...]``)
    in the command's words: the flag, the environment variable that also sets it, and the fix where one is known.

    ``flags`` maps the running command's argparse ``dest`` names to their option strings."""
    import re

    def flag(name: str) -> str | None:
        return flags.get(name) or (_PARAMETER_FLAGS.get(name) if _PARAMETER_FLAGS.get(name) in flags.values()
                                   else None)

    def replace(match: re.Match) -> str:
        name = match.group(1)
        option = flag(name)
        env = _ENVIRONMENT.get(name)
        if option and env:
            return f"{option} (or {env})"
        return option or (env if env else match.group(0))

    # name=[...] (the Python call's spelling) and snake_case identifiers anywhere; a one-word parameter only
    # where the message starts with it ('alpha must ...'), since words such as 'level' are also English.
    text = re.sub(r"\b([a-z]+(?:_[a-z]+)+)=\[\.\.\.\]", lambda m: f"{flag(m.group(1)) or m.group(1)} NAME[,NAME...]"
                  if flag(m.group(1)) else m.group(0), message)
    text = re.sub(r"\b([a-z]+(?:_[a-z]+)+)\b", replace, text)
    text = re.sub(r"^([a-z]+)\b(?= must| should| is not| needs|:)", replace, text)
    text = text.replace(" URL or None;", " URL;")  # None is the Python default, not something to type
    got = re.search(r"confidence.level.*must lie strictly between 0 and 1; got ([0-9.]+)", message)
    if got and 1 < float(got.group(1)) < 100:
        text += f" (a fraction: use {float(got.group(1)) / 100:g} for {float(got.group(1)):g}%)"
    return text
