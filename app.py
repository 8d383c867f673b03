"""metaeval dashboard: can I trust this evaluation metric?

Run with ``bash run.sh app`` (or ``streamlit run app.py``). Pages live in ``pages/``; this entry point only
sets up the page and the navigation. Every view-defining choice is mirrored in the URL (see metaeval_ui/state.py).
"""


from pathlib import Path

import streamlit as st

from metaeval_ui import data

# A local file: a Material or emoji page_icon makes the browser fetch the favicon from an outside server.
FAVICON = Path(__file__).resolve().parent / "metaeval_ui" / "assets" / "favicon.png"
if not FAVICON.is_file():  # an installed wheel: the package's own copy
    import metaeval_ui

    FAVICON = Path(metaeval_ui.__file__).resolve().parent / "assets" / "favicon.png"
st.set_page_config(page_title="metaeval — can I trust this metric?", page_icon=str(FAVICON), layout="wide")

PAGES = [  # (file, title, icon, url path)
    ("pages/home.py", "Overview", ":material/home:", "home"),
    ("pages/dataset.py", "Dataset", ":material/table_chart:", "dataset"),
    ("pages/correlations.py", "Correlations", ":material/scatter_plot:", "correlations"),
    ("pages/confidence.py", "Confidence intervals", ":material/straighten:", "confidence"),
    ("pages/significance.py", "Significance", ":material/compare_arrows:", "significance"),
    ("pages/average.py", "Overall average", ":material/functions:", "average"),
    ("pages/pairs.py", "Realistic pairs", ":material/join_inner:", "pairs"),
    ("pages/stability.py", "Ranking stability", ":material/stacked_line_chart:", "stability"),
    ("pages/pools.py", "Judged vs all", ":material/data_thresholding:", "pools"),
    ("pages/topk.py", "Top-k systems", ":material/leaderboard:", "topk"),
    ("pages/pairwise.py", "Pairwise F1", ":material/rule:", "pairwise"),
    ("pages/matrix.py", "Correlation matrix", ":material/grid_on:", "matrix"),
    ("pages/annotators.py", "Annotators", ":material/groups:", "annotators"),
    ("pages/highrange.py", "High-scoring range", ":material/trending_up:", "highrange"),
    ("pages/normality.py", "Normality", ":material/area_chart:", "normality"),
    ("pages/simulations.py", "Simulations", ":material/model_training:", "simulations"),
    ("pages/improvement.py", "Is my improvement real?", ":material/thumb_up:", "improvement"),
    ("pages/planning.py", "How many judgments?", ":material/calculate:", "planning"),
    ("pages/influence.py", "Leave one system out", ":material/person_remove:", "influence"),
    ("pages/whatif.py", "What if…", ":material/science:", "whatif"),
    ("pages/reproduce.py", "Reproduce the papers", ":material/fact_check:", "reproduce"),
    ("pages/judges_leaderboard.py", "Judges leaderboard", ":material/gavel:", "judges"),
    ("pages/judges_bias.py", "Judge biases", ":material/balance:", "judges-bias"),
    ("pages/judges_systems.py", "Systems from verdicts", ":material/emoji_events:", "judges-systems"),
]
# Navigation sections by url path; pages not listed go to the first section.
SECTIONS = {
    "Dataset & correlations": ("home", "dataset", "correlations", "confidence", "significance", "average"),
    "Reliability": ("pairs", "stability", "pools"),
    "Paper analyses": ("reproduce", "topk", "pairwise", "matrix", "annotators", "highrange", "normality",
                       "simulations"),
    "Practitioner's questions": ("improvement", "planning", "influence"),
    "LLM judges": ("judges", "judges-bias", "judges-systems"),
    "Your data": ("whatif",),
}
sections: dict[str, list] = {name: [] for name in SECTIONS}
for k, (file, title, icon, url) in enumerate(PAGES):
    section = next((name for name, urls in SECTIONS.items() if url in urls), next(iter(SECTIONS)))
    # The default page is served at "/" only (Streamlit answers its own url path with "Page not found").
    sections[section].append(st.Page(file, title=title, icon=icon, url_path="" if k == 0 else url, default=(k == 0)))
# So the Overview's url path ("/home") and its name ("/overview", a natural deep link) are hidden aliases of it.
for file, alias in ((PAGES[0][0], PAGES[0][3]), ("pages/overview.py", "overview")):
    sections[next(iter(SECTIONS))].append(st.Page(file, title=PAGES[0][1], icon=PAGES[0][2], url_path=alias,
                                                  visibility="hidden"))
st.navigation({name: pages for name, pages in sections.items() if pages}).run()
