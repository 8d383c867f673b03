"""Keep Streamlit in ``st.navigation`` mode even when a session starts on a deep link.

Streamlit assumes an app with a ``pages/`` folder is a "v1" multipage app until the
first ``st.navigation`` call, which only ``app.py`` makes. The very first session of
a fresh server that opens ``/<page>`` directly would therefore run the page script on
its own, without ``app.py``'s page configuration and navigation. The user's card fixes
the folder name ``pages/``, so instead every page leaves that mode here and reruns,
which makes Streamlit execute ``app.py`` and route to the same page.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager
from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

from . import state

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
