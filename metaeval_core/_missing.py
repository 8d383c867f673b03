"""A missing dependency on the command line: one line and exit code 2, not a traceback.

Imports nothing outside the standard library, so it works when numpy, scipy or pandas are absent (e.g.
``python -m metaeval_core`` run with an interpreter other than the project's environment).
"""

from __future__ import annotations

import sys
from pathlib import Path


def missing_dependency_message(error: ImportError) -> str:
    """One line: which package is missing and the two ways to get a working environment."""
    name = getattr(error, "name", None) or str(error)
    return (f"a required package is missing ({name!r} cannot be imported by {sys.executable}): use the project's "
            "environment (`bash run.sh cli ...`, or `.venv/bin/metaeval ...` once `bash run.sh` has set it up), "
            "or install the requirements: pip install -r requirements.txt")


def exit_when_run_as_a_command(error: ImportError) -> None:
    """Print the one-line message and exit with 2 when the package is being run as ``python -m metaeval_core``
    or the ``metaeval`` command; otherwise (an import from Python) return, so the caller re-raises."""
    import os

    argv = getattr(sys, "argv", None) or [""]
    # While `python -m` locates the module, sys.argv[0] is "-m" (Python documentation, "-m").
    if (argv[0] == "-m" or Path(argv[0]).name == "metaeval") and not os.environ.get("METAEVAL_DEBUG"):
        print(f"error: {missing_dependency_message(error)}", file=sys.stderr)
        raise SystemExit(2)
