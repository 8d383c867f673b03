"""HANNA (Chhun et al. 2022, 2024): the loader on a small file in its layout, and on the real file an
independent check of the system-level correlations (pandas + scipy straight from the CSV) and the authors'
own notebook outputs."""

from __future__ import annotations

import json
import os
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from metaeval_core.data.dataset import DatasetError
from metaeval_core.data.loaders import LoaderFiles, load_hanna
from metaeval_core.data.registry import dataset_ids, load_dataset, list_datasets
from metaeval_core.stats.correlation import correlate

CRITERIA = {"RE": "Relevance", "CH": "Coherence", "EM": "Empathy", "SU": "Surprise", "EG": "Engagement",
            "CX": "Complexity"}
FILE = "hanna/hanna_metric_scores_llm.csv"


# -- the loader on a generated file in HANNA's layout ---------------------------------------------------------
def _write_small(path: Path, *, break_mean: bool = False, extra: dict | None = None) -> Path:
    rng = np.random.default_rng(1)
    systems = ["Human", "GPT", "HINT"]
    n = 4
    columns: dict[str, list] = {"Model": systems}
    raters = {code: rng.integers(1, 6, size=(3, len(systems), n)) for code in CRITERIA}
    for code, name in CRITERIA.items():
        mean = raters[code].mean(axis=0)
        if break_mean and code == "CH":
            mean = mean + 0.5
        columns[name] = [json.dumps(row.tolist()) for row in mean]
    columns["BLEU Ξ§"] = [json.dumps(rng.random(n).tolist()) for _ in systems]
    columns["SUPERT-PS ¤ε"] = [json.dumps(rng.random(n).tolist()) for _ in systems]
    for k in range(3):
        for code in CRITERIA:
            columns[f"Human {k + 1} {code}"] = [json.dumps(row.tolist()) for row in raters[code][k]]
    for code in CRITERIA:
        columns[f"Human Avg 1 {code}"] = [json.dumps(row.tolist()) for row in raters[code][1:].mean(axis=0)]
    for code in [*CRITERIA, "AVG"]:
        columns[f"ChatGPT {code} 2"] = [json.dumps(rng.random(n).tolist()) for _ in systems]
    columns.update(extra or {})
    pd.DataFrame(columns).to_csv(path, index=False)
    return path


def _files(path: Path) -> LoaderFiles:
    return LoaderFiles(required={FILE: path})


def test_small_file_layout(tmp_path):
    loaded = load_hanna(_files(_write_small(tmp_path / "hanna_metric_scores_llm.csv")))
    ds = loaded.to_dataset("hanna-small")
    assert ds.systems == ("Human", "GPT", "HINT") and ds.inputs == ("0", "1", "2", "3")
    assert ds.human_measures == tuple(CRITERIA.values())
    assert ds.measure("Coherence").annotators.shape == (3, 3, 4)
    assert ds.system_attribute("kind") == ("human-written", "model", "model")
    assert ds.default_systems == "kind=model"
    assert ds.with_default_systems().systems == ("GPT", "HINT")
    # Ids without the authors' glyphs; the column name is still accepted (and kept as attribute 'upstream').
    assert {"BLEU", "SUPERT-PS"} <= set(ds.metric_measures)
    assert not any(glyph in name for name in ds.measures for glyph in "Ξ¤§εΔ")
    bleu, supert = ds.measure("BLEU"), ds.measure("SUPERT-PS")
    assert ds.measure("BLEU Ξ§") is bleu and ds.resolve("SUPERT-PS ¤ε") == "SUPERT-PS" == ds.resolve("supert-ps")
    assert (bleu.display_name, bleu.attributes) == ("BLEU", {"family": "string-based", "reference": "reference-based",
                                                             "upstream": "BLEU Ξ§"})
    assert (supert.display_name, supert.attributes) == ("SUPERT-PS", {"family": "embedding-based",
                                                                       "reference": "reference-free",
                                                                       "upstream": "SUPERT-PS ¤ε"})
    judge = ds.measure("ChatGPT RE 2")
    assert judge.attributes == {"family": "llm-judge", "judge": "ChatGPT", "criterion": "Relevance", "prompt": "2"}
    assert judge.label == "ChatGPT · Relevance (prompt 2)"
    assert ds.measure("ChatGPT AVG 2").attributes["criterion"] == "average"
    assert not any(name.startswith("Human Avg") for name in ds.measures)  # leave-one-out means: derivable
    assert len(ds.measures_with("family", "llm-judge")) == 7


def test_small_file_errors(tmp_path):
    with pytest.raises(DatasetError, match="'Coherence' is not the mean of its raters"):
        load_hanna(_files(_write_small(tmp_path / "a.csv", break_mean=True)))
    with pytest.raises(DatasetError, match=r"column 'Odd ¤§': lists of \[3\] numbers; expected 4"):
        load_hanna(_files(_write_small(tmp_path / "b.csv", extra={"Odd ¤§": ["[1, 2, 3]"] * 3})))
    with pytest.raises(DatasetError, match="line 3, column 'Bad ¤§': expected a list of numbers"):
        load_hanna(_files(_write_small(tmp_path / "c.csv", extra={"Bad ¤§": ["[1, 2, 3, 4]", "oops", "[]"]})))
    # A column without the glyphs still loads, as a metric without a family, and a note says so.
    loaded = load_hanna(_files(_write_small(tmp_path / "d.csv", extra={"Plain": ["[1, 2, 3, 4]"] * 3})))
    assert loaded.measures["Plain"].attributes == {}
    assert any("without the authors' glyphs" in note and "Plain" in note for note in loaded.notes)
    # Two glyph variants of one name keep both (the second under its column name).
    loaded = load_hanna(_files(_write_small(tmp_path / "e.csv", extra={"BLEU ¤§": ["[1, 2, 3, 4]"] * 3})))
    assert {"BLEU", "BLEU ¤§"} <= set(loaded.measures)


def test_registry_entry_matches_the_manifest():
    repo = Path(__file__).resolve().parents[2]
    entry = next(d for d in json.loads((repo / "data/registry.json").read_text(encoding="utf-8"))["datasets"]
                 if d["id"] == "hanna")
    assert "hanna" in dataset_ids() and entry["licence"] == "MIT" and entry["loader"] == "hanna"
    (file,) = entry["files"]
    assert file["sha256"] == "d0ce43f9b5cc12894f8b7bf3f7b4da06d19cdbea2c989dd3f173f2240dfee26d"
    assert file["bytes"] == 3294679
    assert file["url"].startswith("https://raw.githubusercontent.com/dig-team/hanna-benchmark-asg/"
                                  "282f27536a5d05ad4ce14298abcd70c45668fed2/")
    data = os.environ.get("METAEVAL_DATA_DIR")
    mirror = Path(data) / "MANIFEST.json" if data else None
    if mirror is not None and mirror.is_file():
        manifest = {f["path"]: f for f in json.loads(mirror.read_text(encoding="utf-8"))["files"]}
        for key in ("url", "sha256", "bytes"):
            assert file[key] == manifest[file["path"]][key]


# -- the real file --------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def hanna(data_dir):
    if not any(info.id == "hanna" and info.available for info in list_datasets(data_dir=data_dir)):
        pytest.skip("hanna/hanna_metric_scores_llm.csv is not in the data mirror")
    return load_dataset("hanna", data_dir=data_dir)


@pytest.fixture(scope="module")
def raw(data_dir):
    """The CSV read with pandas alone: {column: (systems x 96) array}, indexed by system (no metaeval code)."""
    frame = pd.read_csv(data_dir / FILE, index_col="Model")
    return {c: np.array([json.loads(cell) for cell in frame[c]], dtype=float) for c in frame.columns}, \
        list(frame.index)


@pytest.mark.realdata
def test_shape_and_measures(hanna, raw):
    columns, systems = raw
    assert hanna.systems == tuple(systems) and hanna.n_systems == 11 and hanna.n_inputs == 96
    assert hanna.human_measures == tuple(CRITERIA.values())
    automatic = [m for m in hanna.metric_measures if "family" in hanna.measure(m).attributes
                 and hanna.measure(m).attributes["family"] != "llm-judge"]
    assert len(automatic) == 72
    judges = hanna.measures_with("family", "llm-judge")
    assert len(judges) == 5 * 7 * 4
    assert {hanna.measure(j).attributes["judge"] for j in judges} == {
        "Beluga-13B", "OrcaPlatypus", "Mistral-7B", "Llama-13B", "ChatGPT"}
    assert hanna.display_name("BERTScore F1 Ξε") == "BERTScore F1" == hanna.resolve("BERTScore F1 Ξε")
    assert not any(glyph in name for name in hanna.measures for glyph in "Ξ¤§εΔ")
    # Stories from prompts; rater k is a position, not a person (issue 24).
    assert (hanna.task, hanna.vocabulary.outputs, hanna.vocabulary.inputs) == ("story-generation", "stories", "prompts")
    assert hanna.annotators_are("Relevance") == "positions"
    for code, criterion in CRITERIA.items():
        annotators = hanna.measure(criterion).annotators
        for k in range(3):
            np.testing.assert_array_equal(annotators[k], columns[f"Human {k + 1} {code}"])
        np.testing.assert_allclose(hanna.measure(criterion).scores, columns[criterion], rtol=0, atol=1e-12)
    np.testing.assert_array_equal(hanna.measure("ChatGPT AVG 4").scores, columns["ChatGPT AVG 4"])
    assert hanna.with_default_systems().systems == tuple(s for s in systems if s != "Human")


# (metric column, criterion): string-, embedding-, model-based, reference-free and LLM judges.
PAIRS = [
    ("BLEU Ξ§", "Relevance"),
    ("BERTScore F1 Ξε", "Coherence"),
    ("BARTScore-SH ΞΔ", "Engagement"),
    ("SUPERT-PS ¤ε", "Complexity"),
    ("Repetition-1 ¤§", "Surprise"),
    ("ChatGPT RE 1", "Relevance"),
    ("Beluga-13B AVG 1", "Empathy"),
    ("Llama-13B CH 3", "Coherence"),
]
SCIPY = {"pearson": stats.pearsonr, "spearman": stats.spearmanr, "kendall": stats.kendalltau}


def independent_system_level(raw, metric: str, criterion: str, coefficient: str, *, with_human: bool) -> float:
    """System means over the 96 prompts straight from the CSV, correlated by scipy.

    The human side is exact: each system's criterion mean is the integer sum of its three raters' 1-5 scores
    over 3 x 96 ratings, a fraction whose float is the same for equal fractions, so exact ties stay ties.
    """
    columns, systems = raw
    keep = [k for k, s in enumerate(systems) if with_human or s != "Human"]
    x = rational_system_means(columns[metric][keep])
    code = next(c for c, name in CRITERIA.items() if name == criterion)
    sums = sum(columns[f"Human {k} {code}"][keep] for k in (1, 2, 3)).sum(axis=1)
    y = np.array([float(Fraction(int(total), 3 * 96)) for total in sums])
    return float(SCIPY[coefficient](x, y)[0])


def rational_cells(matrix: np.ndarray) -> list[list[Fraction]] | None:
    """Each cell as a rational with denominator <= 60 (an LLM judge's mean of integer ratings) up to a few units
    in the last place (OrcaPlatypus RE 3 holds 8/5 as 1.5999999999999999), or None when a cell is not one."""
    cells = [[Fraction(v).limit_denominator(60) for v in row] for row in matrix]
    if all(abs(Fraction(v) - c) <= 4 * np.spacing(abs(v)) for row, values in zip(cells, matrix)
           for c, v in zip(row, values)):
        return cells
    return None


def rational_system_means(matrix: np.ndarray) -> np.ndarray:
    """Row means, exact when every cell is rational (:func:`rational_cells`), else the float means."""
    cells = rational_cells(matrix)
    if cells is None:
        return matrix.mean(axis=1)
    return np.array([float(sum(row, Fraction(0)) / len(row)) for row in cells])


# Complexity: BertGeneration and RoBERTa (347/144), GPT and TD-VAE (359/144) have exactly equal means, which
# float sums of the averaged scores would break; metaeval decides them on the integer grid (docs/methods.md
# sec. 15), so these cases must agree too.


@pytest.mark.realdata
@pytest.mark.parametrize("metric, criterion", PAIRS)
@pytest.mark.parametrize("coefficient", sorted(SCIPY))
def test_system_level_correlations_match_an_independent_computation(hanna, raw, metric, criterion, coefficient):
    default = hanna.with_default_systems()
    for dataset, with_human in ((default, False), (hanna, True)):
        ours = correlate(dataset, metric, criterion, level="system", coefficient=coefficient).estimate
        theirs = independent_system_level(raw, metric, criterion, coefficient, with_human=with_human)
        assert ours == pytest.approx(theirs, abs=1e-12), (metric, criterion, coefficient, with_human)
    # Through the public system selection too.
    via_selection = correlate(hanna, metric, criterion, level="system", coefficient=coefficient,
                              systems="kind=model").estimate
    assert via_selection == pytest.approx(
        independent_system_level(raw, metric, criterion, coefficient, with_human=False), abs=1e-12)


@pytest.mark.realdata
def test_authors_notebook_outputs(hanna, raw):
    """data_visualization.ipynb at commit 282f275 prints, for BLEU vs Relevance without the Human row, the
    'overall' (all stories) correlations and the system-level p-values; both are reproduced here."""
    default = hanna.with_default_systems()
    overall = {"pearson": 0.11242776621184697, "spearman": 0.10409436871365678, "kendall": 0.07377866242119939}
    for coefficient, value in overall.items():
        ours = correlate(default, "BLEU Ξ§", "Relevance", level="global", coefficient=coefficient).estimate
        assert ours == pytest.approx(value, abs=1e-12)
    system_p = {"pearson": 0.005571450712541286, "spearman": 0.018573155089460208, "kendall": 0.02860945767195767}
    columns, systems = raw
    keep = [k for k, s in enumerate(systems) if s != "Human"]
    x, y = columns["BLEU Ξ§"][keep].mean(axis=1), columns["Relevance"][keep].mean(axis=1)
    for coefficient, p in system_p.items():
        assert SCIPY[coefficient](x, y)[1] == pytest.approx(p, rel=1e-9)
    # metaeval's Pearson r gives the same p through the t distribution, n = 10 systems.
    r = correlate(default, "BLEU Ξ§", "Relevance", level="system", coefficient="pearson").estimate
    t = r * np.sqrt(8 / (1 - r * r))
    assert 2 * stats.t.sf(abs(t), 8) == pytest.approx(system_p["pearson"], rel=1e-9)
    tau = correlate(default, "BLEU Ξ§", "Relevance", level="system", coefficient="kendall").estimate
    assert tau == pytest.approx(25 / 45, abs=1e-12)  # 35 concordant, 10 discordant pairs of 10 systems


# -- the command line -----------------------------------------------------------------------------------------
def _cli(capsys, *argv) -> object:
    from metaeval_core.cli.main import main

    code = main(list(argv))
    out = capsys.readouterr()
    assert code in (0, None), out.err
    return json.loads(out.out)


@pytest.mark.realdata
def test_cli_default_subset_and_all_systems(hanna, data_dir, capsys):
    base = ("correlate", "--dataset", "hanna", "--data-dir", str(data_dir), "--metrics", "BLEU Ξ§,ChatGPT RE 1",
            "--human", "Relevance", "--json")
    default = _cli(capsys, *base)
    assert [row["n"] for row in default] == [10, 10]
    assert default[0]["estimate"] == pytest.approx(25 / 45)
    every = _cli(capsys, *base, "--all-systems")
    assert [row["n"] for row in every] == [11, 11]
    # An explicit selection is made among all systems (here: the same 10).
    chosen = _cli(capsys, *base, "--systems", "kind=model")
    assert [row["estimate"] for row in chosen] == [row["estimate"] for row in default]
    info = _cli(capsys, "describe", "--dataset", "hanna", "--data-dir", str(data_dir), "--json")
    assert info["n_systems"] == 10 and info["default_systems"] == "kind=model"
    bleu = next(m for m in info["measures"] if m["measure"] == "BLEU")
    assert (bleu["label"], bleu["family"]) == ("BLEU", "string-based")
    # Clean names, any case, are accepted and the table shows the ids (issue 24: `--metrics BLEU` failed).
    clean = _cli(capsys, "correlate", "--dataset", "hanna", "--data-dir", str(data_dir), "--metrics",
                 "bleu,Beluga-13B · Relevance (prompt 1)", "--human", "relevance", "--json")
    assert [(row["metric"], row["human"]) for row in clean] == [("BLEU", "Relevance"), ("Beluga-13B RE 1", "Relevance")]
    assert clean[0]["estimate"] == pytest.approx(25 / 45)
    listed = _cli(capsys, "datasets", "--data-dir", str(data_dir), "--json")
    assert any(row["id"] == "hanna" and row["available"] for row in listed)


@pytest.mark.realdata
def test_cli_unknown_name_is_short_with_a_suggestion(hanna, data_dir, capsys):
    from metaeval_core.cli.main import main

    code = main(["correlate", "--dataset", "hanna", "--data-dir", str(data_dir), "--metrics", "BLUE", "--human",
                 "Relevance"])
    err = capsys.readouterr().err
    assert code not in (0, None)
    assert "did you mean 'BLEU'?" in err and len(err) < 300, err  # was a 4,000-character list


@pytest.mark.realdata
def test_every_metric_correlates_at_every_level(hanna):
    ds = hanna.with_default_systems()
    for metric in ds.metric_measures:
        for level, coefficient in (("system", "kendall"), ("input", "kendall"), ("global", "pearson")):
            result = correlate(ds, metric, "Engagement", level=level, coefficient=coefficient)
            assert result.n > 0 and np.isfinite(result.estimate), (metric, level)


RATIONAL_JUDGES = 122  # of 140 judge columns, every cell is a rational with denominator <= 60


@pytest.mark.slow
@pytest.mark.realdata
def test_llm_judges_exact_ties(hanna, raw):
    """LLM judges' scores are means of integer ratings: system means equal as rationals are tied (issue 24).

    In 20 judge columns two systems' means are equal as rationals; numpy's float means split the tie in 9 of
    them (other summation orders in others). Every judge's system-level Kendall tau against its criterion and
    another equals scipy's on the exact means of both sides."""
    default = hanna.with_default_systems()
    columns, systems = raw
    keep = [k for k, s in enumerate(systems) if s != "Human"]
    split = rational = tied = 0
    for judge in default.measures_with("family", "llm-judge"):
        if rational_cells(columns[judge][keep]) is None:
            continue  # e.g. Llama-13B EM 1 holds 3.9806666666666666: no grid, floats as they are
        rational += 1
        exact = rational_system_means(columns[judge][keep])
        floats = columns[judge][keep].mean(axis=1)
        split += any(exact[a] == exact[b] and floats[a] != floats[b] for a in range(10) for b in range(a))
        tied += any(exact[a] == exact[b] for a in range(10) for b in range(a))
        # Against the criterion the judge rates (its average: Relevance), and a second one in turn.
        rated = hanna.measure(judge).attributes["criterion"]
        other = list(CRITERIA.values())[rational % len(CRITERIA)]
        for criterion in {rated if rated in CRITERIA.values() else "Relevance", other}:
            ours = correlate(default, judge, criterion, level="system", coefficient="kendall").estimate
            theirs = independent_system_level(raw, judge, criterion, "kendall", with_human=False)
            assert ours == pytest.approx(theirs, abs=1e-12), (judge, criterion)
    assert (rational, tied, split) == (RATIONAL_JUDGES, 20, 9)
    tau = correlate(default, "ChatGPT SU 3", "Complexity", level="system", coefficient="kendall").estimate
    assert tau == pytest.approx(0.37649664426800933, abs=1e-12)  # float means of the judge: 0.2697
