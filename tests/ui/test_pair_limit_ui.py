"""More systems than the pair-analysis limit (METAEVAL_MAX_PAIR_SYSTEMS): the Overview and the Realistic pairs page
say so in one sentence naming the limit, never build the n(n-1)/2 pairs, never show a traceback."""

from __future__ import annotations

import numpy as np

from ui_helpers import new_app


def many_systems_csv(n_systems=30, n_inputs=2, seed=5) -> bytes:
    rng = np.random.default_rng(seed)
    lines = ["system,input,human.overall,metric.a"]
    for i in range(n_systems):
        for j in range(n_inputs):
            lines.append(f"sys{i},doc{j},{rng.normal():.3f},{rng.normal():.3f}")
    return ("\n".join(lines) + "\n").encode()


def shown(at) -> str:
    return " ".join(str(e.value) for e in [*at.error, *at.warning, *at.info, *at.markdown, *at.caption])


def test_pages_name_the_pair_system_limit(demo_env, monkeypatch):
    monkeypatch.setenv("METAEVAL_MAX_PAIR_SYSTEMS", "20")
    at = new_app().run()
    at.file_uploader(key="w:upload_file").upload("many.csv", many_systems_csv(), "text/csv")
    at.run()
    assert not at.exception
    assert {m.label: m.value for m in at.metric}["systems"] == "30"
    assert "accept at most 20 systems (METAEVAL_MAX_PAIR_SYSTEMS)" in shown(at).replace("\\", "")
    at.switch_page("pages/pairs.py").run()
    assert not at.exception
    assert "accept at most 20 systems (METAEVAL_MAX_PAIR_SYSTEMS)" in shown(at).replace("\\", "")
