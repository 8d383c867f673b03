"""Start the dashboard with the expensive work done before the first visitor arrives.

``python -m metaeval_ui.serve [streamlit options]`` is ``streamlit run app.py`` (run.sh uses it) plus two
things a plain ``streamlit run`` cannot do:

* the heavy imports (numpy, scipy.stats, pandas, plotly, the core) and the default dataset are loaded
  in the server process up front, so the first page view does not wait for them (Streamlit imports a
  page's modules, and fills ``st.cache_resource``, in this same process);
* Streamlit is told from the start that ``app.py``'s ``st.navigation`` owns routing, so a deep link
  opened first on a fresh server is routed like any other (see ``metaeval_ui/navigation.py``).
"""

from __future__ import annotations

import sys
from pathlib import Path



def dashboard_dir() -> Path:
    """The folder holding ``app.py``, ``pages/`` and ``.streamlit/config.toml``.

    In a checkout that is the repository root; an installed wheel carries them in ``metaeval_ui/dashboard/``.
    """
    packaged = Path(__file__).resolve().parent / "dashboard"
    return packaged if (packaged / "app.py").is_file() else Path(__file__).resolve().parents[1]


APP = dashboard_dir() / "app.py"


def config_flags(config: Path | None = None) -> list[str]:
    """The dashboard's ``.streamlit/config.toml`` as command-line flags.

    Streamlit reads that file only from the working directory; as flags it applies wherever the command runs
    (an installed ``metaeval app``). Flags the user gives come later on the command line and win.
    """
    import tomllib

    path = config or dashboard_dir() / ".streamlit" / "config.toml"
    if not path.is_file():
        return []
    flags = []
    for section, options in tomllib.loads(path.read_text(encoding="utf-8")).items():
        for key, value in options.items():
            text = str(value).lower() if isinstance(value, bool) else str(value)
            flags.append(f"--{section}.{key}={text}")
    return flags


def warm_up() -> None:
    """Import what every page needs and load the dataset the dashboard opens on."""
    # Outside a running server Streamlit logs that it is in "bare mode" for every cached function it
    # meets; that is expected here, so keep the console quiet during the warm-up.
    import streamlit.logger

    streamlit.logger.set_log_level("error")
    import numpy  # noqa: F401
    import pandas  # noqa: F401
    import plotly.graph_objects  # noqa: F401
    import scipy.stats  # noqa: F401

    import importlib
    import pkgutil

    import metaeval_ui
    from metaeval_ui import data

    # Every ui module (and through them the core modules): a page's first visit then imports nothing.
    for module in pkgutil.walk_packages(metaeval_ui.__path__, prefix="metaeval_ui."):
        if module.name != "metaeval_ui.serve":
            importlib.import_module(module.name)

    # st.cache_resource is process-wide: loading here fills the cache the sessions will read.
    try:
        choices = {c.id: c for c in data.list_choices(data.data_dir_key())}
        default = "summeval" if getattr(choices.get("summeval"), "available", False) else data.DEMO_ID
        data.load_registered(default, data.data_dir_key())
    except Exception as error:  # noqa: BLE001 - a failed warm-up must never stop the server
        print(f"metaeval: warm-up skipped ({type(error).__name__}: {error})", file=sys.stderr)
    finally:
        streamlit.logger.set_log_level("warning")
    # The first element a server process draws asks whether it runs in a REPL (Streamlit's env_util.is_repl:
    # inspect.stack(), whose first module lookup maps the file of every imported module, 0.2-0.4 s after the
    # imports above): that map is built here, so the first visitor's page does not wait for it.
    import inspect

    inspect.getmodule(inspect.currentframe())
    # What the warm-up loaded lives as long as the server: out of the collector's way, a full collection
    # (which otherwise walks every object of the loaded dataset, 45-90 ms, in the middle of a rerun) only
    # looks at what the sessions allocate.
    import gc

    gc.collect()
    gc.freeze()


def main(argv: list[str]) -> int:
    from streamlit.runtime.pages_manager import PagesManager
    from streamlit.web import cli

    warm_up()
    PagesManager.uses_pages_directory = False
    sys.argv = ["streamlit", "run", str(APP), *config_flags(), *argv]
    return cli.main()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
