"""Every broken file of tests/data/bad_uploads through the dashboard's uploader (AppTest): a readable error that
carries the core's own message and kind, never an exception, and the current dataset is kept."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from metaeval_ui import data
from ui_helpers import new_app


BAD = Path(__file__).resolve().parents[1] / "data" / "bad_uploads"
FILES = sorted(p.name for p in BAD.iterdir() if p.is_file())
MIME = {".csv": "text/csv", ".jsonl": "application/jsonl", ".json": "application/json", ".gz": "application/gzip",
        ".parquet": "application/octet-stream", ".pkl": "application/octet-stream",
        ".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"}
_ESCAPED = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|<>~$:=])")


def expected_kinds() -> dict[str, str]:
    """File name -> UploadError kind, from the core's table in tests/core/test_upload.py (when importable)."""
    try:
        from tests.core.test_upload import CASES
    except ImportError:  # pragma: no cover - the table moved; the core's answer below is the reference anyway
        return {}
    return {spec: kind for _, spec, kind, _, kwargs in CASES if isinstance(spec, str) and not kwargs}


KINDS = expected_kinds()


def unescape(text: str) -> str:
    """Undo metaeval_ui.errors.escape_markdown (the UI escapes user-provided text for Streamlit's markdown)."""
    return _ESCAPED.sub(r"\1", text)


def fresh_app():
    at = new_app().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.fixture(scope="module")
def shared_app(tmp_path_factory):
    """One demo session for the whole corpus: uploads replace each other, like a person retrying. (The uploader
    has no type filter, so .xlsx / .pkl reach the core too and get its 'unknown-format' message.)"""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("METAEVAL_DATA_DIR", str(tmp_path_factory.mktemp("empty-data")))
        patch.setenv("METAEVAL_STORE_DIR", str(tmp_path_factory.mktemp("store")))
        yield fresh_app()


def test_the_corpus_is_covered_by_the_core_table():
    assert len(FILES) >= 40
    missing = set(FILES) - set(KINDS) - {"no_human_measure.csv"}
    assert not missing or not KINDS, f"files without an expected kind in tests/core/test_upload.py: {missing}"


@pytest.mark.parametrize("name", FILES)
def test_a_bad_upload_shows_the_core_message(shared_app, name):
    app = shared_app
    from metaeval_core.data.upload import UploadError, read_user_file

    raw = (BAD / name).read_bytes()
    with pytest.raises(UploadError) as info:
        read_user_file(raw, name=name)
    core = info.value
    if name in KINDS:
        assert core.kind == KINDS[name], (name, core.kind, KINDS[name])
    before = app.sidebar.selectbox(key="w:dataset").value
    app.file_uploader(key="w:upload_file").upload(name, raw, MIME.get(Path(name).suffix, "application/octet-stream"))
    app.run()
    assert not app.exception, [e.value for e in app.exception]
    shown = [unescape(e.value) for e in app.error]
    wanted = str(core).strip().splitlines()[0]
    assert any(wanted in text and f"({core.kind})" in text for text in shown), (wanted, core.kind, shown)
    assert not any("Traceback" in text for text in shown)
    assert app.sidebar.selectbox(key="w:dataset").value == before, "a rejected file must not replace the dataset"
