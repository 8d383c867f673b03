"""metaeval_core.wording: the sentences issue 32 lists read true (counts, plurals, ranges, signs, ties)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from metaeval_core import wording


@pytest.mark.parametrize("value, digits, shown", [(-0.0, 3, "0.000"), (-0.0004, 3, "0.000"), (-0.00004, 4, "0.0000"),
                                                  (-0.4, 0, "0"), (-0.6, 0, "-1"), (0.1234, 2, "0.12")])
def test_a_number_is_never_minus_zero(value, digits, shown):
    assert wording.number(value, digits) == shown


def test_a_range_with_negative_bounds_is_bracketed():
    assert wording.bounds(-0.0001, 0.0001) == "[0.000, 0.000]"
    assert wording.bounds(-0.012, 0.034) == "[-0.012, 0.034]"
    assert "-0.000-0.000" not in wording.chance_sentence(
        __import__("pandas").DataFrame({"metrics": [("a",)], "estimate": [-1e-5], "low": [-2e-4], "high": [1e-4],
                                        "n_resamples": [1000]}), symbol="τ")


def test_counts_agree_with_their_noun():
    assert wording.count(1, "new measure") == "1 new measure"
    assert wording.count(16, "system") == "16 systems"
    assert wording.count_of(16, 16, "system", only=True) == "all 16 systems"
    assert wording.count_of(3, 16, "system", only=True) == "only 3 of 16 systems"


@pytest.mark.parametrize("note", ["too many cells.", "too many cells..", "too many cells"])
def test_a_note_ends_with_one_full_stop(note):
    assert wording.sentence(f"No chance row: {note}") == "No chance row: too many cells."
    assert wording.chance_sentence(None, symbol="r", note=note) == "No chance baseline: too many cells."


def _table(pvalue, corrected, family="row", correction="bonferroni", alternative="greater"):
    n = len(pvalue)
    return SimpleNamespace(metrics=tuple("abcdefgh"[:n]), pvalue=np.array(pvalue, float),
                           pvalue_corrected=np.array(corrected, float), delta=np.ones((n, n)), alpha=0.05,
                           correction=correction, family=family, alternative=alternative)


def test_not_separated_is_not_called_a_tie():
    nan = np.nan
    table = _table([[nan, 0.003], [0.9, nan]], [[nan, 0.06], [1.0, nan]], family="table")
    text = wording.separation_sentence(table)
    assert "tied" not in text and "not a tie" in text
    assert "p = 0.003" in text and "Bonferroni over 2 tests in all" in text
    # a pair separated after the correction: nothing to say
    assert wording.separation_sentence(_table([[nan, 0.001], [0.9, nan]], [[nan, 0.002], [1.0, nan]])) == ""
    # no small uncorrected p: no "before the correction" clause
    assert "Before" not in wording.separation_sentence(_table([[nan, 0.3], [0.9, nan]], [[nan, 0.6], [1.0, nan]]))
    # no correction at all: no claim about one
    plain = wording.separation_sentence(_table([[nan, 0.3], [0.9, nan]], [[nan, 0.3], [0.9, nan]], correction="none"))
    assert plain.startswith("No test separates these metrics at α = 0.05.")


def test_the_ui_text_module_is_the_core_wording():
    from metaeval_ui import text

    assert text.format_pvalue is wording.format_pvalue and text.pairs_count is wording.pairs_count


def test_a_human_measure_on_every_system_but_few_inputs_is_not_only_n_of_n_systems():
    """Issue 32: 'scores only 16 of 16 systems'. A measure on every system but 20 of 100 judged inputs."""
    from metaeval_core.data.dataset import Dataset, Measure
    from metaeval_core.data.synthetic import synthetic_dataset
    from metaeval_core.data.upload import validation_report
    from metaeval_core.data.whatif import merge_datasets

    demo = synthetic_dataset()
    inputs = [demo.inputs[j] for j in np.flatnonzero(demo.judged)[:20]]
    new = np.random.default_rng(5).integers(1, 6, size=(demo.n_systems, 20)).astype(float)
    extra = Dataset("e", list(demo.systems), inputs, {"human.new": Measure("human.new", "human", new)})
    merged = merge_datasets(demo, extra)
    sparse = [w.message for w in validation_report(merged).warnings if w.kind == "sparse-human-measure"]
    assert sparse and "all 16 systems on only 20 of 100 judged inputs (320 cells)" in sparse[0], sparse
    assert "16 of 16" not in sparse[0]


def test_a_merge_summary_counts_in_agreement():
    from metaeval_core.data.whatif import MergeReport

    report = MergeReport(new_systems=(), new_inputs=("i",), new_measures=("m",), shared_measures=(), filled_cells=1,
                         same_cells=0, n_conflicts=0, conflicts=())
    assert report.summary() == "1 new input, 1 new measure, 1 cell filled"


def test_the_system_level_caption_does_not_call_an_accuracy_a_correlation():
    from metaeval_core.wording import system_level_measure

    assert system_level_measure("kendall") == "correlation across"
    assert "p-values" in system_level_measure("soft-pairwise-accuracy")
    assert "correlation" not in system_level_measure("pairwise-accuracy")
