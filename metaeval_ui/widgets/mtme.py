"""Sidebar box: read an mt-metrics-eval test set (a directory on this machine, or a zip of it) as a dataset.

A directory cannot be uploaded through a browser, hence the path box (it reads the server's disk: the
dashboard is meant to run locally) and the zip upload. The dataset joins the session's uploads.
"""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from metaeval_core.data.mtme import MTME_LEVELS, read_mtme, read_mtme_zip

from metaeval_ui import data, state
from metaeval_ui.errors import EXPECTED, message_of, show_error

_ERROR = "_mtme_error"
PATH, LP, LEVEL, ZIP = "w:mtme_path", "w:mtme_lp", "w:mtme_level", "mtme_zip"
LEVEL_HELP = ("seg: systems x segments from the .seg.score files (metaeval's system level is then the mean of the "
              "segment scores); sys: the .sys.score files' own system scores (corpus BLEU, wmt-z, ...) on one "
              "pseudo-input.")


def _read(uploads: dict) -> None:
    """Button callback: read the zip (if one is given) or the directory, and select the dataset."""
    ss = st.session_state
    ss.pop(_ERROR, None)
    path = str(ss.get(PATH, "") or "").strip()
    lp = str(ss.get(LP, "") or "").strip() or None
    level = ss.get(LEVEL) or "seg"
    file = ss.get(state.widget_key(ZIP))
    try:
        if file is not None:
            raw = file.getvalue()
            dataset = read_mtme_zip(raw, lp=lp, level=level, name=file.name)
        elif path:
            dataset = read_mtme(path, lp=lp, level=level)
        else:
            ss[_ERROR] = "give the test set's directory (e.g. …/mt-metrics-eval-v2/wmt22) or a zip of it"
            return
    except EXPECTED as error:
        ss[_ERROR] = message_of(error)
        return
    # The key (and id) is the content's fingerprint, as for uploaded files: the same data, the same dataset.
    key = f"{data.UPLOAD_PREFIX}mtme-{dataset.fingerprint()[:12]}"
    while key not in uploads and len(uploads) >= data.MAX_UPLOADS_PER_SESSION:
        uploads.pop(next(iter(uploads)))
    uploads[key] = replace(dataset, id=key, version="")
    state.put("dataset", key)


def mtme_box(uploads: dict) -> None:
    """The expander with the path box, the zip upload, the language pair and the level."""
    with st.sidebar.expander("mt-metrics-eval test set (WMT)"):
        st.text_input("Test-set directory on this computer", key=PATH,
                      placeholder="~/.mt-metrics-eval/mt-metrics-eval-v2/wmt22",
                      help="A folder in mt-metrics-eval's layout: human-scores/, metric-scores/<lp>/, documents/, …")
        st.file_uploader("…or a zip of it", key=state.widget_key(ZIP), help="Used instead of the directory.")
        st.text_input("Language pair (when there are several)", key=LP, placeholder="en-de")
        st.radio("Scores", MTME_LEVELS, key=LEVEL, horizontal=True, help=LEVEL_HELP)
        st.button("Read the test set", key="mtme_read", on_click=_read, args=(uploads,))
        error = st.session_state.get(_ERROR)
        if error is not None:
            show_error(error, prefix="mt-metrics-eval data not read")
