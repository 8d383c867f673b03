"""'/overview': the Overview (pages/home.py) under the name its title gives it.

app.py registers this file as a hidden alias of the Overview. It is a file of its own, not a second ``st.Page`` of
pages/home.py alone, because a plain ``streamlit run app.py`` looks a server's very first deep link up by file
name in pages/ (before app.py's navigation exists): without ``pages/overview.py`` that first visit of
``/overview`` answers "Page not found" (metaeval_ui/navigation.py; ``python -m metaeval_ui.serve`` avoids it too).
"""

import runpy
from pathlib import Path

runpy.run_path(str(Path(__file__).with_name("home.py")), run_name="__main__")
