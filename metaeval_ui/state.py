"""Session state and URL query-parameter sync of every view-defining choice.

Each choice (dataset, measures, level, coefficient, pool, systems subset, CI and test settings) has a
*permanent* session-state key ``s:<name>`` that survives page switches, and a *widget* key ``w:<name>``
that Streamlit may drop when a widget is not rendered. Widgets are created through :func:`prepare` /
:func:`commit`, so a value chosen on one page is still there on the next.

On the first run of a session the permanent keys are read from the URL (``?dataset=summeval&metric=rouge-1.f1
&metric=rouge-2.f1&level=input``); on every run :func:`sync_url` writes them back, so opening a copied URL
reproduces the view. Values that do not fit the chosen dataset are dropped (and reported) by the widgets.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Sequence

import streamlit as st

_PERM = "s:"
_WIDGET = "w:"
_INIT_FLAG = "_state_initialised"
_NOTES = "_state_notes"


@dataclass(frozen=True)
class Field:
    """One view-defining choice: its URL parameter, value type and default (None: chosen per dataset)."""

    param: str
    kind: str  # 'str' | 'list' | 'int' | 'float' | 'bool'
    default: Any = None


FIELDS: dict[str, Field] = {
    "dataset": Field("dataset", "str"),
    "lp": Field("lp", "str"),  # the language pair of a test set with several (wmt23)
    "draft": Field("draft", "str"),  # the autosaved what-if draft the 'whatif:...' dataset is rebuilt from
    "human": Field("human", "str"),
    "metrics": Field("metric", "list"),
    "level": Field("level", "str", "system"),
    "coefficient": Field("coef", "str", "kendall"),
    "pool": Field("pool", "str", "judged"),
    "systems": Field("systems", "str", ""),
    "all_systems": Field("all_systems", "bool", False),
    "human_translations": Field("human_translations", "bool", False),
    "inputs": Field("inputs", "str", ""),
    "dist_kind": Field("dist", "str", "histogram"),
    "corr_layout": Field("layout", "str", "chosen"),
    # confidence intervals
    "ci_methods": Field("ci", "list", ("boot-both",)),
    "ci_k": Field("ci_k", "int", 1000),
    "ci_conf": Field("conf", "float", 0.95),
    "ci_seed": Field("ci_seed", "int", 0),
    "ci_sort": Field("sort", "str", "estimate"),
    # significance
    "sig_method": Field("test", "str", "default"),
    "sig_family": Field("family", "str", "row"),
    "sig_correction": Field("correction", "str", "bonferroni"),
    "sig_alpha": Field("alpha", "float", 0.05),
    "sig_alternative": Field("alternative", "str", "greater"),
    "sig_k": Field("sig_k", "int", 1000),
    "ov_k": Field("ov_k", "int", 1000),  # the Overview leaderboard's resamples (its lighter-setting button sets it)
    "sig_seed": Field("sig_seed", "int", 0),
    # realistic pairs, ranking stability, judged vs all (NAACL 2022)
    "delta_metric": Field("dmetric", "str"),
    "delta_l": Field("l", "float"),
    "delta_u": Field("u", "float"),
    "delta_ci": Field("dci", "str", "boot-inputs"),
    "delta_k": Field("dk", "int", 1000),
    "delta_seed": Field("dseed", "int", 0),
    "delta_min_pairs": Field("min_pairs", "int", 5),
    "stab_k": Field("stab_k", "int", 200),
    "stab_seed": Field("stab_seed", "int", 0),
    "stab_all": Field("stab_all", "bool", False),
    "repro_paper": Field("paper", "str"),  # Reproduce the papers: one paper's numbers, or 'all'   # every chosen measure, past the first view's time budget
    "pools_k": Field("pools_k", "int", 1000),
    "pools_seed": Field("pools_seed", "int", 0),
    "pools_m": Field("sim_m", "int"),
    # paper analyses (docs/methods.md sec. 7-8) and simulations (sec. 9)
    "f1_k": Field("f1_k", "int", 1000),
    "f1_seed": Field("f1_seed", "int", 0),
    "f1_metric": Field("f1_metric", "str"),
    "f1_only": Field("f1_only", "bool", False),
    "mx_humans": Field("mx_h", "list"),
    "mx_order": Field("order", "str", "given"),
    "ann_coef": Field("ann_coef", "str", "kendall"),
    "hr_baseline": Field("baseline", "str"),
    "hr_bins": Field("bins", "int", 10),
    "hr_norm": Field("norm", "str", "input"),
    "norm_alpha": Field("norm_alpha", "float", 0.05),
    "sim_metric": Field("smetric", "str"),
    "sim_trials": Field("trials", "int", 100),
    "sim_k": Field("sim_k", "int", 200),
    "sim_seed": Field("sim_seed", "int", 0),
    "sim_methods": Field("sim_ci", "list"),
    "sim_tests": Field("sim_test", "list"),
    "sim_ptrials": Field("ptrials", "int", 20),
    "sim_degrade": Field("degrade", "str"),
    # a practitioner's questions (docs/methods.md sec. 10): improvement, planning, influence, significance clusters
    "imp_metric": Field("imetric", "str"),
    "imp_delta": Field("d", "float"),
    "imp_method": Field("imethod", "str", "boot-both"),
    "imp_ties": Field("ties", "str", "half"),
    "imp_k": Field("imp_k", "int", 1000),
    "imp_seed": Field("imp_seed", "int", 0),
    "plan_metric": Field("pmetric", "str"),
    "plan_inputs": Field("sizes", "list"),
    "plan_systems": Field("nsys", "list"),
    "plan_target": Field("target", "str", "both"),
    "plan_width": Field("width", "float", 0.5),
    "plan_power": Field("power", "float", 0.8),
    "plan_versus": Field("versus", "str", ""),
    "plan_noise": Field("noise", "float", 1.0),
    "plan_ci": Field("plan_ci", "str", "boot-both"),
    "plan_trials": Field("plan_trials", "int", 20),
    "plan_k": Field("plan_k", "int", 200),
    "plan_seed": Field("plan_seed", "int", 0),
    "topk_k": Field("topk_k", "int"),  # Top-k systems: the k whose system pairs the examples links open
    "infl_metric": Field("lmetric", "str"),
    "infl_threshold": Field("thr", "float", 0.1),
    "infl_ci": Field("infl_ci", "bool", False),
    "infl_k": Field("infl_k", "int", 500),
    "infl_seed": Field("infl_seed", "int", 0),
    "clu_raw": Field("clu_raw", "bool", False),
    # overall average (docs/methods.md sec. 13)
    "avg_humans": Field("avg_h", "list"),
    "avg_levels": Field("avg_lv", "list", ("system",)),
    "avg_datasets": Field("avg_ds", "list", ()),
    "avg_other": Field("avg_t", "list", ()),
    "avg_rule": Field("avg_rule", "str", "default"),
    "avg_k": Field("avg_k", "int", 1000),
    "avg_seed": Field("avg_seed", "int", 0),
    "avg_suite": Field("suite", "str", "wmt23"),  # on a test set with several language pairs (wmt23)
    "avg_suite_k": Field("suite_k", "int", 0),
    "avg_suite_test": Field("suite_test", "str"),  # None: the suite's (default_suite_test)
    # LLM judges (docs/methods.md sec. 18): the pairwise dataset is the judges pages' own choice
    "j_dataset": Field("jdataset", "str"),
    "j_set": Field("jset", "str", ""),
    "j_stat": Field("jstat", "str", "accuracy"),
    "j_ref": Field("jref", "str", "auto"),
    "j_order": Field("jorder", "str", "original"),
    "j_ties": Field("jties", "str", "three-class"),
    "j_invalid": Field("jinvalid", "str", "wrong"),
    "j_by": Field("jby", "str", "pair_set"),
    "j_alt": Field("jalt", "str", "two-sided"),
    "j_correction": Field("jcorr", "str", "holm"),
    "j_alpha": Field("jalpha", "float", 0.05),
    "j_k": Field("jk", "int", 1000),
    "j_seed": Field("jseed", "int", 0),
    "j_cons_invalid": Field("jcinvalid", "str", "wrong"),
    "j_unit": Field("junit", "str", "words"),
    "j_len_order": Field("jlorder", "str", "average"),
    "j_method": Field("jmethod", "str", "win-rate"),
    "j_coef": Field("jcoef", "str", "kendall"),
    "j_sys_order": Field("jsorder", "str", "original"),
    "j_delta": Field("jdelta", "float", 0.1),
    "j_judge": Field("jjudge", "str"),
    "j_eps": Field("jeps", "str", "experts"),
    # the alt-test on score data (pages/annotators.py): alignment, and the user's word that annotators are persons
    "alt_align": Field("alt_align", "str", "neg-rmse"),
    "alt_persons": Field("alt_persons", "bool", False),
    # the examples panel (docs/methods.md sec. 19): the metric or judge whose items are open, and the item shown
    "ex_metric": Field("ex", "str"),
    "ex_item": Field("ex_item", "str"),
    "ex_human": Field("ex_h", "str"),  # the human dimension the open examples are against, when a page shows several
    "ex_scores": Field("ex_scores", "str"),
    "ex_view": Field("ex_view", "str"),  # a judge's items: 'wrong', 'flips' (position bias) or 'longer' (length bias)  # 'sys': system pairs from the test set's .sys.score files (WMT's suites)
}


def perm_key(name: str) -> str:
    return _PERM + name


def widget_key(name: str) -> str:
    return _WIDGET + name


def parse_param(field: Field, raw: str | list[str]) -> Any:
    """A URL value (one string, or several for repeated keys) as the field's type; ValueError if malformed."""
    values = [raw] if isinstance(raw, str) else list(raw)
    if field.kind == "list":
        out: list[str] = []
        for value in values:
            # Repeated keys (?metric=a&metric=b) or one comma list (?metric=a,b); "" is an explicit empty list.
            out.extend(part for part in value.split(",") if part)
        return out
    value = values[-1] if values else ""
    if field.kind == "int":
        return int(value)
    if field.kind == "float":
        number = float(value)
        if number != number:  # NaN
            raise ValueError("not a number")
        return number
    if field.kind == "bool":
        if value.lower() in ("1", "true", "yes", "on"):
            return True
        if value.lower() in ("0", "false", "no", "off"):
            return False
        raise ValueError("expected true or false")
    return value


def format_param(field: Field, value: Any) -> str | list[str]:
    if field.kind == "list":
        items = [str(v) for v in value]
        return items if items else ""
    if field.kind == "bool":
        return "true" if value else "false"
    if field.kind == "float":
        return f"{float(value):g}"
    return str(value)


# A one-shot URL marker added by an in-app link (:func:`link_params`): the page it opens adopts the link's choices
# although the session has already read its URL once; :func:`sync_url` drops it with the next write.
LINK = "link"


def link_params(**changes: Any) -> dict[str, Any]:
    """Query parameters for an ``st.page_link`` that opens another page on a view: the session's choices with
    ``changes`` (field name -> value; None drops the field), plus the marker that makes the page adopt them.

    The same parameters, without the marker, are the page's shareable URL (it reopens the same view)."""
    choices = current()
    for name, value in changes.items():
        if name not in FIELDS:
            raise ValueError(f"changes must name fields of metaeval_ui.state.FIELDS; got {name!r}")
        if value is None:
            choices.pop(name, None)
        else:
            choices[name] = value
    return {**url_params(choices), LINK: "1"}


def _adopt_link(params: Any) -> None:
    """The choices of an in-app link replace the session's (fields the link leaves out are unset), once."""
    ss = st.session_state
    notes: list[str] = []
    for name, field in FIELDS.items():
        if field.param not in params:
            ss.pop(perm_key(name), None)
            ss.pop(widget_key(name), None)
            continue
        raw = params.get_all(field.param) if hasattr(params, "get_all") else params[field.param]
        try:
            put(name, parse_param(field, raw))
        except ValueError:
            notes.append(f"ignored URL parameter {field.param}={raw!r}: expected a {field.kind}")
    ss.setdefault(_NOTES, []).extend(notes)
    try:
        del params[LINK]
    except (KeyError, TypeError):
        pass


def init(query_params: Any = None) -> None:
    """Read the URL into the permanent keys once per session (the first run), and again when an in-app link
    (:func:`link_params`) opened this page."""
    ss = st.session_state
    if ss.get(_INIT_FLAG):
        params = st.query_params if query_params is None else query_params
        if LINK in params:
            _adopt_link(params)
        return
    params = st.query_params if query_params is None else query_params
    notes: list[str] = []
    for name, field in FIELDS.items():
        if field.param not in params:
            continue
        raw = params.get_all(field.param) if hasattr(params, "get_all") else params[field.param]
        try:
            ss[perm_key(name)] = parse_param(field, raw)
        except ValueError:
            notes.append(f"ignored URL parameter {field.param}={raw!r}: expected a {field.kind}")
    ss[_NOTES] = notes
    ss[_INIT_FLAG] = True
    if LINK in params:  # a copied link that still holds the marker: already read whole above
        try:
            del params[LINK]
        except (KeyError, TypeError):
            pass


def notes() -> list[str]:
    """Problems found in the URL or in restored choices, for display (and then forgotten)."""
    return list(st.session_state.get(_NOTES, []))


def add_note(text: str) -> None:
    st.session_state.setdefault(_NOTES, []).append(text)


def clear_notes() -> None:
    st.session_state[_NOTES] = []


def get(name: str, default: Any = None) -> Any:
    """The current value of a choice: the permanent key, else ``default``, else the field's default."""
    value = st.session_state.get(perm_key(name))
    if value is None:
        return default if default is not None else FIELDS[name].default
    return value


def is_set(name: str) -> bool:
    return st.session_state.get(perm_key(name)) is not None


def put(name: str, value: Any) -> None:
    """Set a choice (and the widget showing it, if that widget has not been drawn in this run yet)."""
    st.session_state[perm_key(name)] = value
    st.session_state.pop(widget_key(name), None)


def prepare(
    name: str,
    *,
    options: Sequence[Any] | None = None,
    multi: bool = False,
    fallback: Any = None,
    coerce: Any = None,
) -> str:
    """Make the widget key of ``name`` hold a valid value before the widget is drawn; return the key.

    The value comes from the widget key if Streamlit kept it, else from the permanent key (restored
    after a page switch or from the URL), else ``fallback``. With ``options`` the value is checked:
    unknown single values become ``fallback``; unknown list items are dropped (and noted).
    """
    ss = st.session_state
    wkey = widget_key(name)
    value = ss[wkey] if wkey in ss else get(name, fallback)
    if value is None:
        value = fallback
    if coerce is not None and value is not None:
        try:
            value = coerce(value)
        except (TypeError, ValueError):
            value = fallback
    if options is not None:
        allowed = list(options)
        if multi:
            items = list(value or [])
            kept = [v for v in items if v in allowed]
            dropped = [v for v in items if v not in allowed]
            if dropped:
                add_note(f"{FIELDS[name].param}: not in this dataset, dropped: {', '.join(map(str, dropped))}")
            value = kept
        elif value not in allowed:
            if value not in (None, "") and fallback is not None and value != fallback:
                add_note(f"{FIELDS[name].param}={value!s} is not available here; using {fallback!s}")
            value = fallback if fallback in allowed else (allowed[0] if allowed else None)
    elif multi:
        value = list(value or [])
    ss[wkey] = value
    return wkey


def commit(name: str, value: Any) -> Any:
    """Record a widget's value as the choice (call right after drawing the widget)."""
    st.session_state[perm_key(name)] = list(value) if isinstance(value, (list, tuple)) else value
    return value


def current() -> dict[str, Any]:
    """Every choice set in this session (name -> value)."""
    ss = st.session_state
    return {name: ss[perm_key(name)] for name in FIELDS if ss.get(perm_key(name)) is not None}


def url_params(choices: dict[str, Any] | None = None, *, only: Iterable[str] | None = None) -> dict[str, Any]:
    """The query parameters describing ``choices`` (default: the session's), in FIELDS order."""
    choices = current() if choices is None else choices
    wanted = set(only) if only is not None else None
    out: dict[str, Any] = {}
    for name, field in FIELDS.items():
        if name in choices and (wanted is None or name in wanted):
            out[field.param] = format_param(field, choices[name])
    return out


def sync_url(*, only: Iterable[str] | None = None) -> None:
    """Write the session's choices to the URL (only when they differ, to avoid needless messages)."""
    wanted = url_params(only=only)
    present = {key: (st.query_params.get_all(key) if len(st.query_params.get_all(key)) > 1 else st.query_params[key])
               for key in st.query_params}
    normalised = {k: (v if isinstance(v, str) or len(v) != 1 else v[0]) for k, v in wanted.items()}
    if present != normalised:
        st.query_params.from_dict(wanted)
