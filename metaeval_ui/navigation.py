"""Navigation helpers: keep Streamlit in ``st.navigation`` mode, and link to the pages this build registers.

Keep Streamlit in ``st.navigation`` mode even when a session starts on a deep link.

Streamlit assumes an app with a ``pages/`` folder is a "v1" multipage app until the
first ``st.navigation`` call, which only ``app.py`` makes. The very first session of
a fresh server that opens ``/<page>`` directly would therefore run the page script on
its own, without ``app.py``'s page configuration and navigation. The user's card fixes
the folder name ``pages/``, so instead every page leaves that mode here and reruns,
which makes Streamlit execute ``app.py`` and route to the same page.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Sequence

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager
from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

from metaeval_ui import state

ENTRY_POINT = "app.py"


def ensure_navigation_mode() -> None:
    """Rerun through ``app.py`` if this run was started in pages-folder (v1) mode.

    Only the first run of a session can need it (on a server, the mode is left for
    good after that); later runs are never rerun here, so no widget event (a button
    click) is discarded. Streamlit's ``AppTest`` re-enters the mode on every run, which
    is why "first run of the session" is the test and not the mode alone.
    """
    if not PagesManager.uses_pages_directory:
        return
    ctx = get_script_run_ctx()
    if ctx is None or Path(ctx.main_script_path).name != ENTRY_POINT:
        return
    first_run = not st.session_state.get(state._INIT_FLAG, False)
    PagesManager.uses_pages_directory = False
    if first_run:
        st.rerun()


def registered_page(path: str) -> dict | None:
    """The navigation's entry (title, icon, url) for a page file relative to ``app.py``; None if not registered.

    Pages whose core module is missing from this build are not registered, and ``st.page_link`` to them fails.
    """
    ctx = get_script_run_ctx()
    if ctx is None:
        return None
    wanted = os.path.realpath(Path(ctx.main_script_path).parent / path)
    return next((info for info in ctx.pages_manager.get_pages().values()
                 if info.get("script_path") == wanted), None)


# The LLM judges pages, with what each answers (linked from the judges pages and from a score page given a
# pairwise dataset).
JUDGES_PAGES = (("pages/judges_leaderboard.py", "agreement with people, intervals, significance clusters"),
                ("pages/judges_bias.py", "position and length preferences"),
                ("pages/judges_systems.py", "system rankings from verdicts, scores as verdicts"))


def page_links(links: Sequence[tuple[str, str]], container: Any = None) -> None:
    """One ``st.page_link`` per (page file, what it answers), skipping pages this build does not register."""
    box = container or st
    for path, blurb in links:
        info = registered_page(path)
        if info is not None:
            title = info.get("page_name") or Path(path).stem
            box.page_link(path, label=f"**{title}** — {blurb}", icon=info.get("icon") or None)
