"""The reference of ``benchmarks/bench_ui.py``'s deep-link case: Streamlit with one empty plotly chart.

Opened first in a fresh browser, it costs what any Streamlit page with a chart costs before its own content:
Streamlit's scripts, the session, and plotly.js (fetched, compiled and evaluated when the first chart appears).
"""

import plotly.graph_objects as go
import streamlit as st

st.plotly_chart(go.Figure(layout={"title": {"text": "reference"}}), theme=None)
