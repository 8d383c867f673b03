"""The architecture of docs/architecture.md, checked: the import contracts of pyproject.toml (import-linter: the
dashboard above the core, the core's floors, no import cycle, no streamlit or plotly in the core) and package faces
that only re-export."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
# What a package face may hold besides imports, its docstring and __all__: the PEP 562 hooks of a lazy face
# (metaeval_core/__init__.py) and their tables.
LAZY_FACE = {"_EXPORTS", "_SUBPACKAGES", "__getattr__", "__dir__", "__all__"}


def _lint_imports() -> Path:
    script = Path(sys.executable).parent / "lint-imports"
    if not script.is_file():
        pytest.fail("import-linter is not installed in this environment: pip install -r requirements-dev.txt "
                    "(bash run.sh test does)")
    return script


def test_the_import_contracts_hold():
    """Every contract of [tool.importlinter] in pyproject.toml is kept; the linter's report says which import
    breaks one and how to remove the cycle."""
    done = subprocess.run([str(_lint_imports()), "--no-cache"], cwd=REPO, capture_output=True, text=True,
                          timeout=300)
    report = done.stdout + done.stderr
    assert done.returncode == 0, report
    assert "0 broken" in report, report


def test_every_package_face_only_re_exports():
    offenders = []
    for path in sorted([*REPO.glob("metaeval_core/**/__init__.py"), *REPO.glob("metaeval_ui/**/__init__.py")]):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            if isinstance(node, ast.Expr) and isinstance(getattr(node.value, "value", None), str):
                continue  # the docstring
            names = {t.id for t in getattr(node, "targets", [getattr(node, "target", None)]) if isinstance(t, ast.Name)}
            names |= {node.name} if isinstance(node, (ast.FunctionDef, ast.ClassDef)) else set()
            if not names or not names <= LAZY_FACE:
                offenders.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert offenders == [], "define these in a named submodule and re-export them: " + ", ".join(offenders)


def test_every_class_name_is_unique():
    """One name, one idea: two classes of the same name (three ``Conventions``, two ``ChanceBaseline`` before issue
    32) make a reader guess which one a function returns."""
    where: dict[str, list[str]] = {}
    for path in sorted([*REPO.glob("metaeval_core/**/*.py"), *REPO.glob("metaeval_ui/**/*.py")]):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ClassDef):
                where.setdefault(node.name, []).append(str(path.relative_to(REPO)))
    assert {name: paths for name, paths in where.items() if len(paths) > 1} == {}


def test_options_reach_the_core_by_name():
    """Options travel as frozen values whose fields are passed by name (``rng=res.seed``), never spread from a
    helper (``**res.kwargs()``), which no reader can follow."""
    spread = re.compile(r"\*\*\s*[A-Za-z_][A-Za-z0-9_.]*\.kwargs\(\)|\*\*_opts\(")
    offenders = [f"{path.relative_to(REPO)}:{k}" for path in sorted([*REPO.glob("metaeval_ui/**/*.py"),
                                                                       *REPO.glob("pages/*.py")])
                 for k, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if spread.search(line)]
    assert offenders == []


def test_the_registry_knows_the_pairwise_loaders_the_judges_define():
    """The registry checks pairwise loader names without importing the judges floor: the two lists agree."""
    from metaeval_core.data.registry import PAIRWISE_LOADER_NAMES
    from metaeval_core.judges.loaders import PAIRWISE_LOADERS

    assert set(PAIRWISE_LOADER_NAMES) == set(PAIRWISE_LOADERS)
