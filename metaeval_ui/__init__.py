"""The dashboard's Streamlit-aware layer (state, cached data access, widgets, errors) and pure figure builders.

``metaeval_ui.figures`` and ``metaeval_ui.tables`` never import streamlit; the rest is the thin layer between the pages and
``metaeval_core``, which itself never imports streamlit or plotly.
"""
