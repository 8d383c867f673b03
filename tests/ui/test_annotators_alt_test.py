"""The alt-test on score data (pages/annotators.py): an uploaded score file with three identified annotators is
tested once the user states they are persons; HANNA, whose annotators are slots, is refused with the reason."""

from __future__ import annotations

import pytest

from tests.core.judges.helpers import annotated_scores_csv
from tests.ui.test_upload import upload
from tests.ui.ui_helpers import assert_clean, new_app


def scores_csv() -> bytes:
    """4 systems x 12 documents (48 items per annotator), 3 named annotators, a metric on their 1-5 scale and
    one drawn at random."""
    return annotated_scores_csv(7, noise=True).encode()


def texts(elements) -> str:
    return " ".join(e.value for e in elements).replace("\\", "")


def test_a_score_upload_with_three_named_annotators(demo_env):
    at = upload(new_app().run(), "annotated.csv", scores_csv())
    assert_clean(at)
    at.switch_page("pages/annotators.py").run()
    assert_clean(at)
    assert at.selectbox(key="w:human").value == "quality"
    at.multiselect(key="w:metrics").set_value(["my-judge", "noise"]).run()
    # the file does not say whether annotator k is one person: refused until the user says so
    assert "not known to be the same people throughout" in texts(at.info)
    at.toggle(key="w:alt_persons").set_value(True).run()
    assert_clean(at)
    summary, per_annotator = at.dataframe[-2].value, at.dataframe[-1].value
    assert list(summary["judge"]) == ["my-judge", "noise"]
    assert len(per_annotator) == 6 and set(per_annotator["items"].astype(int)) == {48}
    assert "stated to be the same people" in texts(at.caption)
    assert "root mean squared difference" in texts(at.caption)
    assert any("at epsilon = 0.20" in m.value for m in at.markdown)
    at.radio(key="w:j_eps").set_value("crowd").run()
    assert any("at epsilon = 0.10" in m.value for m in at.markdown)
    at.radio(key="w:alt_align").set_value("neg-abs").run()
    assert_clean(at)
    assert "mean absolute difference" in texts(at.caption)
    assert at.query_params["alt_persons"] in ("true", "1", "True")


def test_the_demo_has_persons_and_is_tested_without_a_question(demo_env):
    at = new_app({"dataset": "demo"}).run()
    at.switch_page("pages/annotators.py").run()
    assert_clean(at)
    assert not at.get("toggle") or all(t.key != "w:alt_persons" for t in at.toggle)
    per_annotator = at.dataframe[-1].value
    assert set(per_annotator["left out"]) == {"annotator 1", "annotator 2", "annotator 3"}
    assert "stated to be the same people" not in texts(at.caption)


@pytest.mark.realdata
def test_hanna_is_refused_with_the_reason(real_env):
    at = new_app({"dataset": "hanna"}).run()
    if at.sidebar.selectbox(key="w:dataset").value != "hanna":
        pytest.skip("hanna is not available in this data mirror")
    at.switch_page("pages/annotators.py").run()
    assert_clean(at)
    assert "positions filled by different people" in texts(at.info)
    assert not any(t.key == "w:alt_persons" for t in at.toggle)
