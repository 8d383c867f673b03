"""Reproduce the papers: every published number the built-in data can reproduce, recomputed live and ticked.

The table of published values lives in the core (metaeval_core/analyses/reproduce.py), shared with
``metaeval reproduce`` and tests/core/test_reproduce.py.
"""

import pandas as pd
import streamlit as st

from metaeval_core._paths import shell_command
from metaeval_core.analyses.reproduce import VERDICTS
from metaeval_ui import data, exports, state, widgets
from metaeval_ui.errors import escape_markdown, guard

st.title("Reproduce the papers")
st.markdown(
    "Each row is a number published in one of the five papers metaeval follows, recomputed **now** from the "
    "built-in datasets: ✓ when metaeval's value agrees within the tolerance (for a two-decimal table: it rounds to "
    "the published value), ✗ when it does not, and, for numbers the data cannot reproduce, the reason.")
widgets.sidebar()
# One paper at a time: all of them take ~20 s (WMT23's suite reloads every language pair), the first ~3 s.
papers = data.reproduction_papers()
key = state.prepare("repro_paper", options=[*papers, data.REPRODUCE_ALL], fallback=papers[0])
paper = state.commit("repro_paper", st.selectbox(
    "Paper", [*papers, data.REPRODUCE_ALL], key=key,
    format_func=lambda p: f"All {len(papers)} papers (slow: about 20 s)" if p == data.REPRODUCE_ALL else p,
    help="Each paper's numbers are recomputed when it is picked, and kept for the next visit."))

frame = None
with guard("Could not recompute the published values"), st.spinner("Recomputing the published values…"):
    frame = data.reproduction(data.data_dir_key(), paper)
if frame is None:
    widgets.finish()
    st.stop()

missing = frame[frame["note"].str.startswith("data not available")]
if len(missing):
    ids = ", ".join(sorted(set(missing["dataset"])))
    st.info(  # registry ids and commands: no user text to escape, and the commands keep their code formatting
        f"The data for {ids} is not available here, so {len(missing)} numbers cannot be computed. Point "
        f"METAEVAL_DATA_DIR at a mirror of the datasets (e.g. `METAEVAL_DATA_DIR=/path/to/datasets "
        f"{shell_command('app')}`) or download them on a machine with internet access: "
        f"`{shell_command('fetch --dataset ' + ','.join(dict.fromkeys(missing['dataset'])))}`, each file verified by "
        "its sha256.",
        icon=":material/cloud_off:")
counts = frame["verdict"].value_counts().reindex(VERDICTS, fill_value=0)
ok, differ, unreproducible, not_computed = (int(counts[v]) for v in VERDICTS)
cols = st.columns(4)
cols[0].metric("✓ Reproduced", f"{ok} of {len(frame)}",
               help="Published numbers recomputed from the built-in data and within tolerance, of all listed.")
cols[1].metric("✗ Differ", differ, help="Reproducible from this data, recomputed, and outside the tolerance.")
cols[2].metric("— Not reproducible", unreproducible,  # "… from this data" (help) was cut off at 1280 px
               help="They need data the mirror does not hold: the reason is in each row's 'why not'; the value "
                    "computed on what the data has is shown for comparison, never ticked.")
cols[3].metric("Not computed (data missing)", not_computed)
MARKS = {"reproduced": "✓", "differs": "✗", "not reproducible": "— (see why)", "not computed": "— (not computed)"}


def _shown(value: object) -> str:
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return "—"
    return f"{value:.4f}".rstrip("0").rstrip(".") if isinstance(value, float) else str(value)


view = pd.DataFrame({
    "": frame["verdict"].map(MARKS), "published": frame["published"].map(_shown),
    "metaeval": frame["metaeval"].map(_shown),
    "± tolerance": frame["tolerance"].map(lambda t: f"{t:g}" if t else "exact"), "what": frame["what"],
    "where": frame["table"] + " (" + frame["dataset"] + ")", "why not": frame["note"],
})
# The verdict, the numbers and the tolerance first and narrow, the long texts last; the reasons are written in full
# under each table, not in a column (a cell that long ran past the page at 1600 px and hid behind a scroll bar).
COLUMNS = {"": st.column_config.TextColumn("", width=90), "published": st.column_config.TextColumn(width=80),
           "metaeval": st.column_config.TextColumn(width=80), "± tolerance": st.column_config.TextColumn(width=80),
           "what": st.column_config.TextColumn(width=240), "where": st.column_config.TextColumn(width=200)}
for paper, part in view.groupby(frame["paper"], sort=False):
    st.subheader(escape_markdown(paper))
    st.dataframe(part.drop(columns=["why not"]), hide_index=True, width="stretch", column_config=COLUMNS)
    for reason, rows in part[part["why not"].ne("")].groupby("why not", sort=False):
        st.caption(escape_markdown(f"Why not ({'; '.join(rows['what'])}): {reason}"))
st.caption("Resampled numbers (TACL 2021 intervals and tests) use k = 1,000 and seed 0; their tolerance allows for "
           "resampling noise. Rows marked '— (see why)' are computed on what the data holds and shown for comparison, "
           "never ticked.")
with st.expander("What is not listed, and why"):
    st.markdown(
        "* **SummEval's own correlation tables** (Fabbri et al., Tables 2, 6 and 7): the authors' metric runs with "
        "11, 1 and 6 reference summaries per example, which the mirror does not hold; its metric scores are "
        "SacreROUGE's, so the SacreROUGE table computed from these same files is reproduced instead.\n"
        "* **NAACL 2022 variance reductions, stability curves and decile grids** (Figs. 2-4, 6, App. B): every one "
        "scores systems on the whole test set (11,490 CNN/DailyMail inputs); the judged files hold the 100 judged "
        "inputs only. The closest-pairs values are listed above, computed on the judged inputs, for comparison.\n"
        "* **TACL 2021 simulations** (Table 1, Fig. 3): random by design; the Simulations page reruns them.\n"
        "* **REALSumm and Peyrard figures** read off plots (no printed numbers) are checked as findings in the tests "
        "(tests/core/test_analyses_real.py), not as values.")
exports.table_download(frame, "reproduce-papers", title="Published values reproduced")
widgets.finish()
