"""The correlation settings of the correlation-based pages: level, coefficient, input pool, system subset,
and the caption naming the WMT conventions the numbers follow.
"""

from __future__ import annotations

from typing import Sequence

import streamlit as st

from metaeval_core.stats.coefficients import COEFFICIENTS, SYSTEM_ONLY_COEFFICIENTS
from metaeval_core.stats.correlation import LEVELS
from metaeval_core.data.dataset import Dataset
from metaeval_core.data.selection import SelectionText, selection_term
from metaeval_ui import state, text
from metaeval_ui.errors import EXPECTED, escape_markdown, message_of


LEVEL_HELP = {
    "system": "correlation of the per-system mean scores (one point per system)",
    "input": "mean over judged inputs of the per-input correlation across systems (the papers' summary or segment "
             "level)",
    "global": "correlation over every (system, input) cell that has both scores",
}


def conventions_caption(dataset: Dataset, *, human: str | None = None, pool: str | None = None,
                        systems: str = "") -> str | None:
    """The sentence naming the WMT conventions a page's numbers follow (None on data without conventions).

    It is built from the dataset's conventions record and the sidebar's choices, the same objects the numbers
    come from (docs/methods.md sec. 0.6).
    """
    conventions = dataset.conventions
    if conventions is None:
        return None
    with_humans = bool(state.get("human_translations"))
    chosen = None
    if state.get("all_systems"):
        chosen = "every system (Keep every system)"
    elif systems:
        chosen = f"{dataset.default_selection(human_translations=with_humans) or 'WMT'}, then {systems}"
    return conventions.caption(human_translations=with_humans, pool=pool, human=human, systems=chosen)


def correlation_settings(dataset: Dataset, *, coefficients: Sequence[str] = COEFFICIENTS) -> tuple[str, str, str, str]:
    """Level, coefficient, input pool and system subset (shared by the correlation-based pages).

    System-only coefficients (soft pairwise accuracy, docs/methods.md sec. 11.3) are offered at the system level
    only; ``coefficients`` narrows the offer for pages that need a coefficient of two vectors.
    """
    side = st.sidebar
    side.markdown("**Correlation**")
    key = state.prepare("level", options=LEVELS, fallback="system")
    level = state.commit("level", side.radio("Level", LEVELS, key=key, horizontal=True,
                                             help="; ".join(f"{k}: {v}" for k, v in LEVEL_HELP.items())))
    offered = [c for c in coefficients if level == "system" or c not in SYSTEM_ONLY_COEFFICIENTS]
    key = state.prepare("coefficient", options=offered, fallback="kendall")
    coefficient = state.commit("coefficient", side.radio(
        "Coefficient", offered, key=key, horizontal=True,
        help="Kendall = tau-b (ties handled as in scipy). soft-pairwise-accuracy (system level only): agreement of "
             "the metric's and the humans' pairwise permutation p-values (docs/methods.md sec. 11.3)."))
    pool = pool_picker(dataset, applies=level == "system", container=side, where="this level")
    systems = system_subset(dataset, side)
    caption = conventions_caption(dataset, human=state.get("human"), pool=pool, systems=systems)
    if caption:  # the page's numbers follow these conventions: say so above them (docs/methods.md sec. 0.6)
        st.caption(":material/rule: " + escape_markdown(caption))
    return level, coefficient, pool, systems


POOL_HELP = ("judged: each system's inputs the human measure scored (standard); all: every input for the metric's "
             "system means (NAACL 2022; WMT's convention, the default on mt-metrics-eval data). Applies at the "
             "system level; the input and global levels, and human measures, always use judged inputs.")


def pool_picker(dataset: Dataset, *, applies: bool = True, container=None, where: str = "this view") -> str:
    """The metrics' input pool ('judged' or 'all'); disabled, with the reason, on data without unjudged inputs. On
    WMT data the default is the conventions' ``all`` (docs/methods.md sec. 0.6). ``applies``: whether the pool
    changes what the page shows (system-level means); when not, a caption says so for ``where``."""
    box = container or st.sidebar
    # On WMT data 'all' (every segment) is the convention even where every segment has some human score: the
    # judged pool is the chosen human measure's own cells (docs/methods.md sec. 0.2).
    has_pool = dataset.has_unjudged_pool or dataset.conventions is not None
    if not has_pool:
        if state.get("pool") == "all":
            state.add_note("pool=all is not available: this dataset has no unjudged inputs; using judged")
        state.put("pool", "judged")
    fallback = dataset.conventions.pool if dataset.conventions is not None else "judged"
    key = state.prepare("pool", options=("judged", "all"), fallback=fallback)
    pool = state.commit("pool", box.radio("Metric input pool", ("judged", "all"), key=key, horizontal=True,
                                          disabled=not has_pool, help=POOL_HELP))
    if not has_pool:
        box.caption("Pool 'all' is disabled: this dataset has no unjudged inputs with metric scores.")
    elif pool == "all" and not applies:
        box.caption(f"Pool 'all' only changes system-level means; {where} uses judged inputs.")
    return pool


CUSTOM_SYSTEMS = "expression…"


SYSTEMS_EXPRESSION_HELP = ("Comma-separated terms: ATTR=VALUE, system names, all, and !TERM or -TERM to remove "
                           "(e.g. !refA; kind=mt,refB; all,-Online-A). Terms on one attribute are alternatives, on "
                           "different attributes all must hold (docs: methods sec. 0.3).")


# The expression last committed from the selection box: a choice that differs from it came from elsewhere.
_TYPED = "_systems_typed"


def _parsed_selection(dataset: Dataset, text: str) -> tuple[SelectionText, str | None]:
    """``text`` parsed, once, into the value the page, the size guards and the core receive; and why it cannot be
    used on ``dataset`` (malformed, unknown name, keeps nothing), or None. An unusable text gives all systems."""
    if not text:
        return SelectionText(""), None
    try:
        chosen = SelectionText(text)
        dataset.select_systems(chosen)
    except EXPECTED as error:
        return SelectionText(""), message_of(error)
    return chosen, None


def system_subset(dataset: Dataset, container=None) -> SelectionText:
    """The system selection: a preset (``attr=value`` or '' for all systems) or an expression in the selection
    grammar (``!refA``, ``kind=mt,refB``; docs/methods.md sec. 0.3), typed when "expression…" is picked. The text
    comes back parsed (:class:`~metaeval_core.data.selection.SelectionText`): nothing downstream parses it again."""
    box = container or st.sidebar
    presets = [""] + [selection_term(attr, value) for attr, values in dataset.system_attributes.items()
                      for value in dict.fromkeys(values)]
    options = [*presets, CUSTOM_SYSTEMS]
    current = state.get("systems") or ""
    if current and current not in presets:
        error = _parsed_selection(dataset, current)[1]
        if error is not None:
            state.add_note(f"systems={current}: {error}; using all systems")
            state.put("systems", "")
            current = ""
    pick_key, text_key = state.widget_key("systems"), state.widget_key("systems_expr")
    ss = st.session_state
    if current not in presets and current != ss.get(_TYPED):  # set elsewhere (an in-app link): the box shows it
        ss.pop(text_key, None)
    # Written on every run, as state.prepare does: a widget drawn on another page starts from its default.
    pick = ss.get(pick_key)
    ss[pick_key] = pick if pick in options else (current if current in presets else CUSTOM_SYSTEMS)
    ss[text_key] = ss.get(text_key) if ss.get(text_key) is not None else ("" if current in presets else current)
    choice = box.selectbox("Systems", options, key=pick_key, format_func=lambda s: s or "all systems",
                           help="Restrict to systems with a given attribute (e.g. type=abs: abstractive), or pick "
                                f"'{CUSTOM_SYSTEMS}' to type a selection such as !refA.")
    if choice != CUSTOM_SYSTEMS:
        state.commit("systems", choice)
        return SelectionText(choice)  # a preset names one of the dataset's own attribute values
    text = box.text_input("Selection expression", key=text_key, placeholder="!refA", help=SYSTEMS_EXPRESSION_HELP)
    chosen, error = _parsed_selection(dataset, text.strip())
    if error is not None:
        box.error(escape_markdown(f"{error}; using all systems"), icon=":material/error:")
    ss[_TYPED] = state.commit("systems", str(chosen))
    return chosen