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
