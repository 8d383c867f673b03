"""Progress bars with the remaining time, and a Stop button, for long computations (issues 16 and 33).

A computation runs inside the page script. Pressing Stop reruns the page, which abandons the run at its next
progress report, and marks that computation stopped: the rerun says so and offers Run instead of starting it
again. Changing any setting starts the new computation as usual (the app menu's Stop ends a run too).
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from typing import Callable, Hashable, Iterator, Sequence

import streamlit as st

# Below this much elapsed time the estimate is mostly noise, and the run is nearly done anyway.
_ESTIMATE_AFTER_S = 1.0


def _seconds(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.0f} min"


def eta_text(fraction: float, elapsed: float, what: str, *, estimate: float | None = None) -> str:
    """'40% of 435 pairs · about 3 s left (press Stop to cancel)'; before the first second, the cost model's
    ``estimate`` of the whole run when given ('estimated 40 s')."""
    fraction = min(max(fraction, 0.0), 1.0)
    text = f"{fraction:.0%} of {what}"
    if fraction >= 1.0:
        return text
    if elapsed < _ESTIMATE_AFTER_S or fraction <= 0.0:
        return text if estimate is None or estimate < _ESTIMATE_AFTER_S else f"{text} · estimated {_seconds(estimate)}"
    left = elapsed * (1.0 - fraction) / fraction
    return f"{text} · about {_seconds(left)} left (press Stop to cancel)"


def progress_callback(bar, what: str, *, estimate: float | None = None) -> Callable[[float], None]:
    """A ``progress(fraction)`` callback updating a ``st.progress`` bar with :func:`eta_text`."""
    start = time.perf_counter()

    def update(fraction: float) -> None:
        bar.progress(min(max(float(fraction), 0.0), 1.0),
                     text=eta_text(fraction, time.perf_counter() - start, what, estimate=estimate))

    return update


STOPPING_NOTE = ("Sequential stopping (Besag-Clifford, docs/methods.md sec. 16.2): a pair stopped once it could not be "
                 "significant at alpha = 0.05 (its p-value is h / l after l resamples, 'defined resamples' below); "
                 "the decisions at that alpha are those of the full run.")


def decided_table(dataset, key: tuple, *, name: str, k_name: str):
    """The all-pairs table of ``key`` (``metaeval_ui.data.pairwise_key``) as its cost decision allows: cached, or
    run under a bar with a Stop button (with sequential stopping, said, when over the budget but within its
    rule), or None with the refusal's sentence and a button applying its lighter resample count; None too when
    the user stopped it (docs/methods.md sec. 16.5)."""
    from metaeval_ui import data
    from metaeval_ui.errors import escape_markdown

    if data.pairwise_is_cached(key):
        return data.pairwise_uncorrected(dataset, key)
    decision = data.pairwise_decision(dataset, key)
    if refused(decision, k_name=k_name, metrics=key[2]):
        return None
    if decision.action == "early-stop":
        st.caption(escape_markdown(decision.sentence))
    with long_run(name, key, decision.what, estimate=decision.estimated_seconds) as report:
        return None if report is None else data.pairwise_uncorrected(dataset, key, progress=report)


def refused(decision, *, k_name: str, metrics: Sequence[str] = ()) -> bool:
    """Whether ``decision`` (a :class:`~metaeval_core.stats.budget.CostDecision`, or None: nothing to decide) refuses
    its analysis; if so its sentence and :func:`lighter_buttons` are shown (docs/methods.md sec. 16.5)."""
    if decision is None or decision.action != "refuse":
        return False
    lighter_buttons(decision, k_name=k_name, metrics=metrics)
    return True


def lighter_buttons(decision, *, k_name: str, metrics: Sequence[str] = ()) -> None:
    """A refused analysis (:class:`~metaeval_core.stats.budget.CostDecision`): its sentence, a button that applies
    its lighter resample count to the page's ``k_name`` choice (a widget's, or a URL field the page reads), and,
    given the chosen ``metrics``, one that keeps the first of them that fit (the sidebar's picker)."""
    from metaeval_core.wording import _about
    from metaeval_ui.errors import escape_markdown

    st.info(escape_markdown(decision.sentence), icon=":material/hourglass_top:")
    for option in decision.lighter:
        if option.setting == "n_resamples":
            st.button(f"Use {option.value:,} resamples ({_about(option.estimated_seconds)})",
                      key=f"{k_name}:lighter", on_click=_set, args=(k_name, option.value))
        elif option.setting == "n_metrics" and len(metrics) > option.value:
            st.button(f"Keep the first {option.value} metrics ({_about(option.estimated_seconds)})",
                      key=f"{k_name}:lighter_metrics", on_click=_set, args=("metrics", list(metrics[:option.value])))


def _set(name: str, value) -> None:
    from metaeval_ui import state

    state.put(name, value)  # a page reading the choice (the URL field) ...
    st.session_state[state.widget_key(name)] = value  # ... and its widget, if it has one


def _flag(name: str) -> str:
    return f"_stopped:{name}"


def stop(name: str, job: Hashable) -> None:
    """The Stop button's callback: ``job`` (the computation's cache key) is marked stopped for ``name``."""
    st.session_state[_flag(name)] = job


def resume(name: str) -> None:
    """The Run button's callback: the stopped computation may start again."""
    st.session_state.pop(_flag(name), None)


@contextmanager
def long_run(name: str, job: Hashable, what: str, *,
             estimate: float | None = None) -> Iterator[Callable[[float], None] | None]:
    """Around a long computation: yields its progress callback (a bar with the remaining time and a Stop button),
    or None when the user stopped this very ``job`` (the page then says so, offers Run, and should stop).

    ``name`` identifies the page's computation (widget keys ``{name}:stop`` and ``{name}:run``); ``job`` is its
    cache key, so a stopped computation stays stopped until Run is pressed or a setting changes.
    """
    if st.session_state.get(_flag(name)) == job:
        st.info(f"Stopped before the end: {what}. Press Run to compute it, or change a setting.",
                icon=":material/stop_circle:")
        st.button("Run", key=f"{name}:run", on_click=resume, args=(name,), type="primary")
        yield None
        return
    resume(name)  # another job: a stop of an earlier one no longer applies
    bar = st.progress(0.0, text=eta_text(0.0, 0.0, what, estimate=estimate))
    button = st.empty()
    button.button("Stop", key=f"{name}:stop", on_click=stop, args=(name, job), icon=":material/stop_circle:",
                  help="Stop this computation; the page keeps your settings and offers Run.")
    try:
        yield progress_callback(bar, what, estimate=estimate)
    finally:
        bar.empty()
        button.empty()
