"""Rater x rater agreement and the judges' macro precision/recall/F1 against sklearn and the krippendorff package."""

from __future__ import annotations

import json

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score, precision_recall_fscore_support

from metaeval_core.cli.main import main
from metaeval_core.judges import INVALID, MISSING, TIE, majority_verdict
from metaeval_core.judges.raters import classification_scores, rater_agreement
from tests.core.judges.helpers import loaded, random_data


def _pairs(x, y, invalid):
    keep = (x != MISSING) & (y != MISSING)
    x, y = x[keep].astype(int), y[keep].astype(int)
    if invalid == "drop":
        ok = (x != INVALID) & (y != INVALID)
        return x[ok], y[ok]
    if invalid == "tie":
        return np.where(x == INVALID, TIE, x), np.where(y == INVALID, TIE, y)
    if invalid == "wrong":
        return x, np.where(y == INVALID, 9, y)  # an invalid verdict matches nothing
    return x, y


@pytest.mark.parametrize("invalid", ["drop", "wrong", "tie", "as-verdict"])
def test_matrix_matches_sklearn_and_krippendorff(invalid):
    data = random_data(81, n=70, p_invalid=0.15, p_missing=0.1)
    result = rater_agreement(data, invalid=invalid)
    assert result.raters[:3] == ("h1", "h2", "h3") and result.kinds[-1] == "judge"
    for i, a in enumerate(result.raters):
        for j, b in enumerate(result.raters):
            if i == j:
                continue
            x, y = _pairs(data.verdicts[:, data.rater_index(a), 0], data.verdicts[:, data.rater_index(b), 0], invalid)
            assert result.n_common[i, j] == x.size
            assert result.accuracy[i, j] == pytest.approx(np.mean(x == y))
            assert result.kappa[i, j] == pytest.approx(cohen_kappa_score(x, y))
            expected = krippendorff.alpha(reliability_data=np.array([x, y], dtype=float),
                                          level_of_measurement="nominal")
            assert result.alpha[i, j] == pytest.approx(expected)
    np.testing.assert_allclose(result.kappa, result.kappa.T)


@pytest.mark.parametrize("invalid", ["wrong", "drop", "tie"])
def test_macro_scores_match_sklearn(invalid):
    data = random_data(82, n=90, p_invalid=0.1)
    ref = majority_verdict(data.verdicts[:, :3, 0])
    for row in classification_scores(data, invalid=invalid):
        v = data.verdicts[:, data.rater_index(row.judge), 0].astype(int)
        keep = (v != MISSING) & (ref != MISSING)
        x, y = v[keep], ref[keep].astype(int)
        if invalid == "drop":
            x, y = x[x != INVALID], y[x != INVALID]
        if invalid == "tie":
            x = np.where(x == INVALID, TIE, x)
        p, r, f, _ = precision_recall_fscore_support(y, x, average="macro", zero_division=0)
        assert (row.macro_precision, row.macro_recall, row.macro_f1) == pytest.approx((p, r, f))
        assert row.n_items == x.size and row.accuracy == pytest.approx(np.mean(x == y))


@pytest.mark.realdata
def test_pandalm_annotator_kappas_and_the_cli_view(data_dir, capsys):
    data = loaded(data_dir, "pandalm")
    result = rater_agreement(data)
    k = result.kappa
    assert (round(k[0, 1], 3), round(k[0, 2], 3), round(k[1, 2], 3)) == (0.852, 0.879, 0.862)  # PandaLM's figures
    panda = next(c for c in classification_scores(data) if c.judge == "PandaLM-7B")
    assert (round(100 * panda.accuracy, 2), round(100 * panda.macro_f1, 2)) == (66.77, 57.43)
    code = main(["judges", "--dataset", "pandalm", "--data-dir", str(data_dir), "--view", "agreement", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    block, = json.loads(out)
    pair = next(p for p in block["pairs"] if (p["rater"], p["other"]) == ("annotator1", "annotator2"))
    assert round(pair["kappa"], 3) == 0.852 and pair["n_common"] == 999
    assert {c["judge"] for c in block["classification"]} == {"GPT-3.5-turbo", "PandaLM-7B"}
