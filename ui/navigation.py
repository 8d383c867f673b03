"""Keep Streamlit in ``st.navigation`` mode even when a session starts on a deep link.

Streamlit assumes an app with a ``pages/`` folder is a "v1" multipage app until the
first ``st.navigation`` call, which only ``app.py`` makes. The very first session of
a fresh server that opens ``/<page>`` directly would therefore run the page script on
its own, without ``app.py``'s page configuration and navigation. The user's card fixes
the folder name ``pages/``, so instead every page leaves that mode here and reruns,
which makes Streamlit execute ``app.py`` and route to the same page.
"""

from __future__ import annotations

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager


def ensure_navigation_mode() -> None:
    """Rerun through ``app.py`` if this run was started in pages-folder (v1) mode."""
    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        st.rerun()
