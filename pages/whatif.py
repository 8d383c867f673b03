"""What if…: add scores from a file, edit scores, include/exclude systems and inputs; save to the local store.

The modified dataset becomes the session's current dataset (``whatif:<base id>``, version = its content
fingerprint), so every page recomputes on it; a banner on every page says so and offers a confirmed revert.
Nothing is lost silently: pending cell edits and the modified dataset stay in the session across page
switches, and discarding either needs a confirmation. The sections live in metaeval_ui/whatif_sections.py.
"""

import streamlit as st

from metaeval_ui import state, userdata, widgets
from metaeval_ui import whatif_sections as sections

st.title("What if…")
st.markdown("Start from the current dataset and see what changes: add human judgments or metric scores from a "
            "file, correct scores by hand, leave systems or inputs out. The result becomes the dataset of "
            "**every page** until you revert. Save it to the local store to keep it across restarts.")

ctx = widgets.sidebar()
if ctx is None:
    widgets.finish()
    st.stop()
ds = ctx.dataset
choice_id = str(state.get("dataset") or ds.id)
found = userdata.whatif()
active = found is not None and userdata.is_whatif(ds.id) and found.id == ds.id
st.session_state[sections.CURRENT] = (choice_id, ds)
gen = int(st.session_state.get(sections.GEN, 0))
pending = st.session_state.setdefault(sections.PENDING, {})

can_edit = sections.status(ds, choice_id, found, active)
hint = "Switch to the modified dataset or discard it (above) first."

st.subheader("1. Add scores from a file")
if can_edit:
    sections.merge_section(found.full if active else ds, gen)  # merges apply to the unfiltered dataset
else:
    st.caption(hint)

st.subheader("2. Edit scores")
if can_edit:
    sections.edit_section(ds, gen, pending)
else:
    st.caption(hint)

st.subheader("3. Include or exclude systems and inputs")
if can_edit:
    sections.exclude_section(ds, found, active, gen)
else:
    st.caption(hint)

st.subheader("4. Stored datasets")
sections.store_section(ds, found, active)

widgets.finish()
