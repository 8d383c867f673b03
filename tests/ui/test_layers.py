"""House style: metaeval_core never imports streamlit or plotly; figure builders never import streamlit."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FORBIDDEN_IMPORT = re.compile(r"^\s*(import|from)\s+(streamlit|plotly)\b", re.MULTILINE)


def _check_modules(package: str, forbidden: tuple[str, ...]) -> str:
    code = textwrap.dedent(f"""
        import importlib, pkgutil, sys
        pkg = importlib.import_module({package!r})
        names = [pkg.__name__]
        if hasattr(pkg, "__path__"):
            for info in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + "."):
                names.append(info.name)
        for name in names:
            if name.endswith("__main__"):
                continue
            importlib.import_module(name)
        bad = sorted(m for m in sys.modules if m.split(".")[0] in {forbidden!r})
        print("IMPORTED", len(names))
        print("BAD", ",".join(bad))
    """)
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_core_never_imports_streamlit_or_plotly_at_runtime():
    out = _check_modules("metaeval_core", ("streamlit", "plotly"))
    assert "BAD \n" in out or out.rstrip().endswith("BAD"), out


def test_core_sources_have_no_streamlit_or_plotly_import():
    offenders = [str(p.relative_to(REPO)) for p in (REPO / "metaeval_core").rglob("*.py")
                 if FORBIDDEN_IMPORT.search(p.read_text(encoding="utf-8"))]
    assert offenders == []


def test_pure_ui_modules_never_import_streamlit():
    for module in ("metaeval_ui.figures", "metaeval_ui.tables"):
        out = _check_modules(module, ("streamlit",))
        assert out.rstrip().endswith("BAD"), (module, out)
    for path in [*sorted((REPO / "metaeval_ui" / "figures").glob("*.py")), REPO / "metaeval_ui" / "tables.py"]:
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"^\s*(import|from)\s+streamlit\b", text, re.MULTILINE), path.name


def test_pages_stay_small():
    for page in [REPO / "app.py", *sorted((REPO / "pages").glob("*.py"))]:
        lines = page.read_text(encoding="utf-8").count("\n")
        assert lines <= 160, f"{page.name} has {lines} lines; move logic into metaeval_ui/"


def test_no_unsafe_html_anywhere_in_the_dashboard():
    for path in [REPO / "app.py", *(REPO / "pages").glob("*.py"), *(REPO / "metaeval_ui").rglob("*.py")]:
        assert "unsafe_allow_html=True" not in path.read_text(encoding="utf-8").replace(" ", ""), path.name
