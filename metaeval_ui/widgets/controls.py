"""Small controls shared by the resampling pages: the number of resamples and the seed.
"""

from __future__ import annotations

import streamlit as st

from metaeval_ui import data, state


def _clamp_int(low: int, high: int):
    def coerce(value):
        return int(min(max(int(value), low), high))
    return coerce


def resamples_and_seed(k_name: str, seed_name: str, *, container=None, disabled: bool = False,
                       low: int = 10) -> tuple[int, int]:
    """Number of resamples (``low`` to data.MAX_RESAMPLES, with the reason) and the random seed."""
    box = container or st
    cap = data.MAX_RESAMPLES
    wanted = state.get(k_name)
    if wanted is not None and int(wanted) > cap:
        state.add_note(f"{state.FIELDS[k_name].param}={wanted}: capped at {cap:,} resamples")
    key = state.prepare(k_name, fallback=1000, coerce=_clamp_int(low, cap))
    k = state.commit(k_name, int(box.number_input(
        "Resamples (k)", min_value=low, max_value=cap, step=100, key=key, disabled=disabled,
        help=f"At most {cap:,}: the percentile bounds and p-values move by well under 0.01 beyond that, while "
             "the time grows linearly (global-level resampling of 1,000 takes seconds per metric).")))
    key = state.prepare(seed_name, fallback=0, coerce=_clamp_int(0, 2**32 - 1))
    seed = state.commit(seed_name, int(box.number_input(
        "Seed", min_value=0, max_value=2**32 - 1, step=1, key=key, disabled=disabled,
        help="Same seed, same result (whatever the batch size).")))
    return k, seed


def upper(value: str) -> str:
    """Method names as the papers write them (boot-both -> BOOT-BOTH)."""
    return str(value).upper()
