"""The navigation's sections: named for what they hold, never after one page of several."""

from __future__ import annotations

import ast
from pathlib import Path

APP = Path(__file__).resolve().parents[2] / "app.py"


def _literal(name: str):
    for node in ast.parse(APP.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                return ast.literal_eval(node.value)
    raise AssertionError(f"app.py has no literal {name}")


def test_no_section_is_named_after_one_of_its_pages():
    titles = {url: title for _, title, _, url, *_ in _literal("PAGES")}
    sections = _literal("SECTIONS")
    for section, urls in sections.items():
        assert all(url in titles for url in urls), section
        if len(urls) > 1:
            assert section not in {titles[url] for url in urls}, f"section {section!r} is also one of its pages"
    first = next(iter(sections))
    assert first == "Dataset & correlations" and sections[first][:2] == ("home", "dataset")


def test_dataset_picker_labels_fit_the_sidebar_and_keep_the_id():
    """The picker cut "FRANK factuality, XSum [frank-xsum]" to "FRANK factuality, XSum [frank-xs": the id, which
    tells the two FRANK sets apart, was lost. The title gives way instead."""
    from metaeval_core.data.registry import list_datasets
    from metaeval_ui import data, widgets

    for info in list_datasets():
        choice = data.DatasetChoice(info.id, info.title, True)
        label = widgets._label(choice, info.id)
        assert widgets._width(label) <= widgets.PICKER_CHARS, label
        assert label.endswith(f"[{info.id}]") or label == info.id, label
    upload = widgets._label(data.DatasetChoice("upload:f3f8ac5e8ee1", "Uploaded: a_rather_long_file_name.csv"), "x")
    assert widgets._width(upload) <= widgets.PICKER_CHARS and upload.startswith("Uploaded: a_rather")
