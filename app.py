"""metaeval dashboard: can I trust this evaluation metric?

Run with ``bash run.sh app`` (or ``streamlit run app.py``). Pages live in ``pages/``; this entry point only
sets up the page and the navigation. Every view-defining choice is mirrored in the URL (see metaeval_ui/state.py).
"""

from pathlib import Path

import streamlit as st

from metaeval_ui import data

st.set_page_config(page_title="metaeval — can I trust this metric?", page_icon=":material/balance:", layout="wide")

HERE = Path(__file__).parent
PAGES = [  # (file, title, icon, url path, needs)
    ("pages/home.py", "Overview", ":material/home:", "overview", True),
    ("pages/dataset.py", "Dataset", ":material/table_chart:", "dataset", True),
    ("pages/correlations.py", "Correlations", ":material/scatter_plot:", "correlations", True),
    ("pages/confidence.py", "Confidence intervals", ":material/straighten:", "confidence", data.has_resampling()),
    ("pages/significance.py", "Significance", ":material/compare_arrows:", "significance", data.has_significance()),
    ("pages/pairs.py", "Realistic pairs", ":material/join_inner:", "pairs", True),
    ("pages/stability.py", "Ranking stability", ":material/stacked_line_chart:", "stability", True),
    ("pages/pools.py", "Judged vs all", ":material/data_thresholding:", "pools", True),
    ("pages/topk.py", "Top-k systems", ":material/leaderboard:", "topk", True),
    ("pages/pairwise.py", "Pairwise F1", ":material/rule:", "pairwise", True),
    ("pages/matrix.py", "Correlation matrix", ":material/grid_on:", "matrix", True),
    ("pages/annotators.py", "Annotators", ":material/groups:", "annotators", True),
    ("pages/highrange.py", "High-scoring range", ":material/trending_up:", "highrange", True),
    ("pages/normality.py", "Normality", ":material/area_chart:", "normality", True),
    ("pages/simulations.py", "Simulations", ":material/model_training:", "simulations", data.has_resampling()
     and data.has_significance()),
    ("pages/improvement.py", "Is my improvement real?", ":material/thumb_up:", "improvement", True),
    ("pages/planning.py", "How many judgments?", ":material/calculate:", "planning", True),
    ("pages/influence.py", "Leave one system out", ":material/person_remove:", "influence", True),
    ("pages/whatif.py", "What if…", ":material/science:", "whatif", True),
]
# Navigation sections by url path; pages not listed go to the first section.
SECTIONS = {
    "Correlations": ("overview", "dataset", "correlations", "confidence", "significance"),
    "Reliability": ("pairs", "stability", "pools"),
    "Paper analyses": ("topk", "pairwise", "matrix", "annotators", "highrange", "normality", "simulations"),
    "Practitioner's questions": ("improvement", "planning", "influence"),
    "Your data": ("whatif",),
}
sections: dict[str, list] = {name: [] for name in SECTIONS}
for k, (file, title, icon, url, ready) in enumerate(PAGES):
    if ready and (HERE / file).is_file():
        section = next((name for name, urls in SECTIONS.items() if url in urls), next(iter(SECTIONS)))
        sections[section].append(st.Page(file, title=title, icon=icon, url_path=url, default=(k == 0)))
st.navigation({name: pages for name, pages in sections.items() if pages}).run()
