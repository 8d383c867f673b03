"""``st.dataframe`` without the grey "None" Streamlit draws for every missing value (metaeval_ui.tables.without_missing)."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from metaeval_ui.tables import without_missing


def dataframe(frame: pd.DataFrame, *, column_config: dict | None = None, container: Any = None, **kwargs: Any):
    """``st.dataframe(frame, column_config=..., **kwargs)`` with missing cells shown empty and all-missing columns
    left out. Draw every table whose cells can be missing through this."""
    shown, config = without_missing(pd.DataFrame(frame), column_config)
    if "column_order" in kwargs and kwargs["column_order"] is not None:
        kwargs["column_order"] = [c for c in kwargs["column_order"] if c in shown.columns]
    return (container or st).dataframe(shown, column_config=config, **kwargs)
