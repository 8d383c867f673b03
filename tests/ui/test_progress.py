"""Progress text with a time estimate (metaeval_ui.widgets.progress)."""

from metaeval_ui.widgets.progress import eta_text


def test_no_estimate_in_the_first_second_or_at_the_ends():
    assert eta_text(0.5, 0.4, "10 pairs") == "50% of 10 pairs"
    assert eta_text(0.0, 5.0, "10 pairs") == "0% of 10 pairs"
    assert eta_text(1.0, 5.0, "10 pairs") == "100% of 10 pairs"


def test_estimate_scales_the_elapsed_time_and_says_how_to_cancel():
    text = eta_text(0.25, 3.0, "435 pairs")
    assert text.startswith("25% of 435 pairs · about 9 s left")
    assert "Stop" in text
    assert "about 3 min left" in eta_text(0.1, 20.0, "x")


def test_tables_that_would_run_for_minutes_are_refused_with_the_reason():
    import pytest

    from metaeval_ui.data import check_table_size

    wmt = dict(coefficient="kendall", n_resamples=1000)
    check_table_size((15, 2000), 30, level="input", method="perm-both", **wmt)  # the linear path: seconds
    check_table_size((15, 2000), 30, level="system", method="perm-both", **wmt)
    with pytest.raises(ValueError, match=r"435 pairs of 15 systems x 2,000 inputs .* about \d+ min"):
        check_table_size((15, 2000), 30, level="global", method="perm-both", **wmt)


def test_before_the_first_second_the_bar_shows_the_cost_models_estimate():
    assert eta_text(0.0, 0.1, "91 pairs", estimate=40.0) == "0% of 91 pairs · estimated 40 s"
    assert eta_text(0.0, 0.1, "91 pairs", estimate=0.2) == "0% of 91 pairs"
    assert eta_text(0.5, 2.0, "91 pairs", estimate=40.0).startswith("50% of 91 pairs · about 2 s left")


def _counted(monkeypatch):
    from metaeval_core.stats import significance

    calls = []
    original = significance.compare_all_pairs

    def counted(*args, **kwargs):
        if kwargs.get("rng") == 4321:  # this test's tables only (the Overview computes its own on the way)
            calls.append(args[1])
        return original(*args, **kwargs)

    monkeypatch.setattr(significance, "compare_all_pairs", counted)
    return calls


def test_a_stopped_table_stays_stopped_until_run_is_pressed(demo_env, monkeypatch):
    """Stop (its callback marks the running job stopped, then the page reruns): the page says so and offers Run
    instead of starting again; Run computes it. Counted kernel calls, no timing."""
    from metaeval_ui import data
    from metaeval_ui.widgets import progress
    from ui_helpers import assert_clean, new_app

    calls = _counted(monkeypatch)
    at = new_app({"dataset": "demo", "sig_k": "37", "sig_seed": "4321"}).run()
    at.switch_page("pages/significance.py").run()
    assert_clean(at)
    assert len(calls) == 1 and at.dataframe
    job = next(key for key, _ in data._store().items() if key[0] == "pairs" and key[-2:] == (37, 4321))
    # What the Stop button's on_click does while the run is going (AppTest cannot click mid-run).
    at.session_state[progress._flag("sig")] = ("pairs", ("demo", "x"), ("other",))  # another job: no effect
    at.run()
    assert not at.info or not any("Stopped" in i.value for i in at.info)
    data._store()._items.pop(job)  # as if the run had been abandoned before it finished
    at.session_state[progress._flag("sig")] = job
    at.run()
    assert_clean(at)
    assert any(i.value.startswith("Stopped before the end: PERM-BOTH on 10 pairs") for i in at.info)
    assert len(calls) == 1 and not at.dataframe
    at.button(key="sig:run").click().run()
    assert_clean(at)
    assert len(calls) == 2 and at.dataframe


def test_a_running_table_shows_the_stop_button(demo_env, monkeypatch):
    """The Stop button is on the page while the table runs (seen from inside the kernel), and gone after it."""
    from metaeval_core.stats import significance
    from ui_helpers import assert_clean, new_app

    seen = []
    original = significance.compare_all_pairs

    def spy(*args, **kwargs):
        import streamlit as st

        seen.append("sig:stop" in st.session_state)
        return original(*args, **kwargs)

    monkeypatch.setattr(significance, "compare_all_pairs", spy)
    at = new_app({"dataset": "demo", "sig_k": "38", "sig_seed": "4322"}).run()
    at.switch_page("pages/significance.py").run()
    assert_clean(at)
    assert seen == [True]
    assert not [b for b in at.button if b.key == "sig:stop"]


def test_a_refused_table_offers_its_lighter_resample_count(demo_env, monkeypatch):
    """Over the page's budget: no table, the cost and what fits in one sentence, and a button applying it."""
    from metaeval_core.data.synthetic import synthetic_dataset
    from metaeval_core.stats.significance import estimated_table_seconds
    from metaeval_ui.data import resampled
    from ui_helpers import assert_clean, new_app

    n, m = synthetic_dataset().matrix("human.quality").shape
    full = estimated_table_seconds(n, m, 5, level="system", coefficient="kendall", method="perm-both",
                                   n_resamples=1000)
    monkeypatch.setattr(resampled, "MAX_TABLE_SECONDS", full / 3)  # 200 resamples fit, 500 do not
    at = new_app({"dataset": "demo", "sig_k": "1000", "sig_seed": "4323", "test": "perm-both"}).run()
    at.switch_page("pages/significance.py").run()
    assert_clean(at)
    assert not at.dataframe
    said = [i.value.replace("\\", "") for i in at.info]  # markdown-escaped
    assert any(f"PERM-BOTH on 10 pairs of {n} systems x {m} inputs with 1,000 resamples would take" in i
               and "lighter: n_resamples=200" in i for i in said), said
    monkeypatch.setattr(resampled, "MAX_TABLE_SECONDS", 60.0)  # else its deadline (microseconds) stops the run
    at.button(key="sig_k:lighter").click().run()
    assert_clean(at)
    assert at.number_input(key="w:sig_k").value == 200 and at.dataframe


def test_the_overview_refusal_offers_its_lighter_settings(demo_env, monkeypatch):
    """Issue 33: the Overview's leaderboard table over the page's budget is refused before it starts, with the same
    sentence and lighter-setting buttons as Significance (metaeval_ui.widgets.progress.refused); the resample
    button applies to the Overview's own k (``ov_k``), the metrics button keeps the first metrics that fit."""
    from metaeval_core.data.synthetic import synthetic_dataset
    from metaeval_core.stats.significance import estimated_table_seconds
    from metaeval_ui.data import resampled
    from ui_helpers import assert_clean, new_app

    n, m = synthetic_dataset().matrix("human.quality").shape
    full = estimated_table_seconds(n, m, 5, level="system", coefficient="kendall", method="perm-both",
                                   n_resamples=1000)
    fresh = resampled._ResultStore(96)  # no table left cached by another test
    monkeypatch.setattr(resampled, "_store", lambda: fresh)
    monkeypatch.setattr(resampled, "MAX_TABLE_SECONDS", full / 3)  # 200 resamples fit, 500 do not
    at = new_app({"dataset": "demo", "ov_k": "1000"}).run()
    assert_clean(at)
    said = [i.value.replace("\\", "") for i in at.info]
    assert any(f"PERM-BOTH on 10 pairs of {n} systems x {m} inputs with 1,000 resamples would take" in i
               and "lighter: n_resamples=200" in i for i in said), said
    assert not [e for e in at.error if "leaderboard" in e.value]  # a refusal, said as such, not an error
    assert not [s for s in at.subheader if s.value.startswith("Leaderboard")]
    chosen = list(at.multiselect(key="w:metrics").value)
    monkeypatch.setattr(resampled, "MAX_TABLE_SECONDS", 60.0)  # else its deadline (microseconds) stops the run
    at.button(key="ov_k:lighter").click().run()
    assert_clean(at)
    assert at.query_params.get("ov_k") in (["200"], "200") or at.session_state["_perm:ov_k"] == 200
    assert [s for s in at.subheader if s.value.startswith("Leaderboard")]
    # The metrics button, on a fresh session (the system level's cost is linear in metrics: 3 of 5 fit).
    monkeypatch.setattr(resampled, "MAX_TABLE_SECONDS", full * 0.7)
    at = new_app({"dataset": "demo", "ov_k": "1000"}).run()
    monkeypatch.setattr(resampled, "MAX_TABLE_SECONDS", 60.0)
    at.button(key="ov_k:lighter_metrics").click().run()
    assert_clean(at)
    kept = list(at.multiselect(key="w:metrics").value)
    assert 2 <= len(kept) < len(chosen) and kept == chosen[:len(kept)]
    assert [s for s in at.subheader if s.value.startswith("Leaderboard")]
