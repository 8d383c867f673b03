"""docs/methods.md: every section the code cites exists, and the document keeps its numbered sections.

Code cites the methods document as ``docs/methods.md sec. N`` or ``docs/methods.md sec. N.M``. The
document's sections are its headings ``## N. Title`` and ``### N.M Title`` (headings inside fenced code
blocks do not count).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "methods.md"

# The citation form; whitespace between the words may also be a line break inside a docstring.
CITATION = re.compile(r"docs/methods\.md\s+sec\.\s+(\d+(?:\.\d+)?)")
SECTION = re.compile(r"^## (\d+)\. \S")
SUBSECTION = re.compile(r"^### (\d+)\.(\d+) \S")
FENCE = re.compile(r"^\s*(```|~~~)")

SOURCE_DIRS = ("metaeval_core", "metaeval_ui", "ui", "pages")
SOURCE_FILES = ("app.py",)
TOP_LEVEL = tuple(str(n) for n in range(18))  # sections 0 to 17


def doc_headings() -> tuple[list[str], list[str], list[str]]:
    """(top-level numbers, subsection numbers "N.M", every '## ' heading text), fenced blocks skipped."""
    sections: list[str] = []
    subsections: list[str] = []
    titles: list[str] = []
    fenced = False
    for line in DOC.read_text(encoding="utf-8").splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            continue
        if line.startswith("## "):
            titles.append(line[3:].strip())
        top = SECTION.match(line)
        if top:
            sections.append(top.group(1))
        sub = SUBSECTION.match(line)
        if sub:
            subsections.append(f"{sub.group(1)}.{sub.group(2)}")
    return sections, subsections, titles


def source_files() -> list[Path]:
    files: list[Path] = []
    for name in SOURCE_DIRS:
        folder = REPO / name
        if folder.is_dir():
            files.extend(sorted(p for p in folder.rglob("*.py") if p.is_file()))
    for name in SOURCE_FILES:
        path = REPO / name
        if path.is_file():
            files.append(path)
    return files


def citations() -> list[tuple[str, int, str]]:
    """Every citation as (file relative to the repository, 1-based line, cited section)."""
    found = []
    for path in source_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        for match in CITATION.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            found.append((path.relative_to(REPO).as_posix(), line, match.group(1)))
    return found


def test_every_cited_section_exists():
    sections, subsections, _ = doc_headings()
    known = set(sections) | set(subsections)
    missing = [f"{file}:{line}: cites docs/methods.md sec. {section}, which the document does not have"
               for file, line, section in citations() if section not in known]
    assert not missing, "\n".join(missing)


def test_document_has_sections_0_to_17_and_references():
    sections, subsections, titles = doc_headings()
    absent = [n for n in TOP_LEVEL if n not in sections]
    assert not absent, f"docs/methods.md lacks top-level section(s) {', '.join(absent)} ('## N. Title')"
    duplicated = sorted({n for n in sections if sections.count(n) > 1}, key=int)
    assert not duplicated, f"docs/methods.md numbers section(s) {', '.join(duplicated)} more than once"
    orphans = [s for s in subsections if s.split(".")[0] not in sections]
    assert not orphans, f"docs/methods.md has subsection(s) {', '.join(orphans)} without their '## N.' section"
    repeated = sorted({s for s in subsections if subsections.count(s) > 1})
    assert not repeated, f"docs/methods.md numbers subsection(s) {', '.join(repeated)} more than once"
    assert "References" in titles, "docs/methods.md lacks its '## References' section"


def test_code_cites_the_document():
    found = citations()
    scanned = ", ".join(p.relative_to(REPO).as_posix() for p in source_files()[:5])
    assert found, f"no 'docs/methods.md sec. N' citation in the scanned sources (e.g. {scanned} ...)"
