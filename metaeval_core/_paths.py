"""Where the project's own files live, in a checkout and in an installed wheel.

In a checkout the registry is ``data/registry.json`` and downloads and saved datasets go to ``data/cache/`` and
``data/user/`` (both git-ignored). An installed wheel carries the registry inside the package (the build copies
it to ``metaeval_core/data/registry.json``) and keeps downloads and saved datasets in the user's cache and data
folders (``$XDG_CACHE_HOME/metaeval``, ``$XDG_DATA_HOME/metaeval``), since site-packages is not for writing.
"""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE_ROOT = Path(__file__).resolve().parent
_CANDIDATE_CHECKOUT = PACKAGE_ROOT.parent


def checkout_root() -> Path | None:
    """The repository this package runs from, or ``None`` when it is installed."""
    if (_CANDIDATE_CHECKOUT / "pyproject.toml").is_file() and (_CANDIDATE_CHECKOUT / "data" / "registry.json").is_file():
        return _CANDIDATE_CHECKOUT
    return None


def registry_path() -> Path:
    packaged = PACKAGE_ROOT / "data" / "registry.json"
    if packaged.is_file():
        return packaged
    return _CANDIDATE_CHECKOUT / "data" / "registry.json"


def _xdg(variable: str, fallback: str) -> Path:
    return Path(os.environ.get(variable) or Path.home() / fallback) / "metaeval"


def default_data_dir() -> Path:
    """Where downloaded human-judgment files go when ``METAEVAL_DATA_DIR`` is unset."""
    root = checkout_root()
    return root / "data" / "cache" if root else _xdg("XDG_CACHE_HOME", ".cache") / "datasets"


def default_store_dir() -> Path:
    """Where saved user datasets go when ``METAEVAL_STORE_DIR`` is unset."""
    root = checkout_root()
    return root / "data" / "user" if root else _xdg("XDG_DATA_HOME", ".local/share") / "user"


def shell_command(arguments: str) -> str:
    """The command a user types to run ``metaeval ARGUMENTS`` where this copy is installed.

    A pip install has the ``metaeval`` command; a checkout has ``bash run.sh app`` for the dashboard and
    ``.venv/bin/metaeval`` (once ``bash run.sh`` has built ``.venv``; else ``bash run.sh cli``) for the rest.
    Never ``python -m metaeval_core``: the system Python lacks the dependencies.
    """
    root = checkout_root()
    if root is None:
        return f"metaeval {arguments}"
    if arguments == "app" or arguments.startswith("app "):
        return f"bash run.sh {arguments}"
    if (root / ".venv" / "bin" / "metaeval").exists():
        return f".venv/bin/metaeval {arguments}"
    return f"bash run.sh cli {arguments}"
