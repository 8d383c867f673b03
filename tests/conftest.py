"""Shared fixtures: the synthetic demo and the real-data directory (skipped cleanly when absent).

The real-data directory is any folder holding built-in datasets' files: the full mirror (``MANIFEST.json``), or a
folder filled by ``metaeval fetch`` (the default ``data/cache/`` included), which may hold only some datasets.
In such a *partial* directory a real-data test that needs a dataset it does not hold is skipped, naming the
dataset and the command that fetches it, instead of failing: before it runs when the test (or a fixture or a
helper of its module it uses) names the dataset id as a string, and when it stops on the dataset being
unavailable or on a file of the data directory that is not there. With every dataset present nothing is skipped, so a failure stays a failure.
"""

from __future__ import annotations

import inspect
import os
import re
from functools import lru_cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _available_ids(directory: Path) -> frozenset[str]:
    from metaeval_core.data.registry import DEMO_ID, list_datasets

    return frozenset(info.id for info in list_datasets(data_dir=directory) if info.available and info.id != DEMO_ID)


def _candidates() -> list[Path]:
    configured = os.environ.get("METAEVAL_DATA_DIR", "").strip()
    if configured:
        return [Path(configured).expanduser()]
    from metaeval_core.data.registry import DEFAULT_DATA_DIR

    return [DEFAULT_DATA_DIR]


def real_data_dir() -> Path | None:
    """The real-data directory: ``METAEVAL_DATA_DIR`` when set, else the default ``data/cache/``; the first that holds the mirror's ``MANIFEST.json`` or the files of at least
    one built-in dataset. ``None`` when there is none."""
    for candidate in _candidates():
        if (candidate / "MANIFEST.json").is_file() or (candidate.is_dir() and _available_ids(candidate)):
            return candidate
    return None


def mirror_dir() -> Path | None:
    """The real-data directory when it is a whole mirror (its ``MANIFEST.json``, or every built-in dataset), else
    None: for the tests that start the dashboard on "the mirror or the demo" (tests/browser)."""
    found = real_data_dir()
    if found is not None and ((found / "MANIFEST.json").is_file() or _partial() is None):
        return found
    return None


@lru_cache(maxsize=1)
def _partial() -> tuple[Path, frozenset[str], frozenset[str]] | None:
    """(directory, available ids, missing ids) when the real-data directory lacks some datasets, else None."""
    from metaeval_core.data.registry import DEMO_ID, dataset_ids

    directory = real_data_dir()
    if directory is None:
        return None
    available = _available_ids(directory)
    missing = frozenset(dataset_ids()) - available - {DEMO_ID}
    return (directory, available, missing) if missing else None


def _fetch_hint(ids) -> str:
    return f"`metaeval fetch --dataset {','.join(sorted(ids))}`"


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The real-data directory; tests that need it skip with a clear reason when it is absent."""
    found = real_data_dir()
    if found is None:
        where = " or ".join(str(c) for c in _candidates())
        pytest.skip(
            f"no real data: {where} holds no built-in dataset; fetch one (e.g. `metaeval fetch --dataset rose`, into "
            "data/cache/) or set METAEVAL_DATA_DIR to a folder holding the files (CI sets it to its mirror)"
        )
    return found


# -- a partial data directory: skip what needs a dataset it does not hold ---------------------------------------
def _named_ids(item: pytest.Item, ids: frozenset[str]) -> set[str]:
    """The dataset ids that the test function, its parameters, the fixtures it uses or the functions of its module
    it calls name as string literals."""
    function = getattr(item, "function", None)
    sources = [function]
    module = getattr(item, "module", None)
    for name in getattr(getattr(function, "__code__", None), "co_names", ()):  # helpers it calls, e.g. open_hanna()
        helper = getattr(module, name, None)
        if inspect.isfunction(helper):
            sources.append(helper)
    infos = getattr(item, "_fixtureinfo", None)
    for defs in (infos.name2fixturedefs.values() if infos else ()):
        sources += [d.func for d in defs]
    text = []
    for func in sources:
        try:
            if Path(inspect.getsourcefile(func) or "").resolve().is_relative_to(REPO / "tests"):
                source = inspect.getsource(func)  # without decorators: a parametrize list names every case
                text.append(source[re.search(r"^\s*(async\s+)?def ", source, re.M).start():])
        except (OSError, TypeError):
            pass
    params = getattr(getattr(item, "callspec", None), "params", {})
    named = {value for value in params.values() if isinstance(value, str) and value in ids}
    joined = "\n".join(text)
    named |= {i for i in ids if re.search(rf"""["']{re.escape(i)}["']""", joined)}
    return named


def _uses_real_data(item: pytest.Item) -> bool:
    return "data_dir" in getattr(item, "fixturenames", ())


def pytest_runtest_setup(item: pytest.Item) -> None:
    partial = _partial()
    if partial is None or not _uses_real_data(item):
        return
    directory, _, missing = partial
    absent = _named_ids(item, missing)
    if absent:
        pytest.skip(f"needs {', '.join(sorted(absent))}, not in the data directory {directory}: {_fetch_hint(absent)}")


def _absent_data(item: pytest.Item, error: BaseException) -> str | None:
    partial = _partial()
    if partial is None or not _uses_real_data(item):
        return None
    directory = partial[0]
    from metaeval_core.data.registry import DatasetUnavailable

    if isinstance(error, DatasetUnavailable):
        return f"needs {error.info.id}, not in the data directory {directory}: {_fetch_hint([error.info.id])}"
    if isinstance(error, FileNotFoundError) and error.filename:
        path = Path(os.fsdecode(error.filename))
        if path.is_absolute() and path.resolve().is_relative_to(directory.resolve()):
            return f"needs {path}, not in the data directory {directory} (it holds only some datasets)"
    return None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item):
    try:
        return (yield)
    except Exception as error:
        reason = _absent_data(item, error)
        if reason is None:
            raise
        pytest.skip(reason)


@pytest.hookimpl(wrapper=True)
def pytest_fixture_setup(fixturedef, request):
    try:
        return (yield)
    except Exception as error:
        reason = _absent_data(request.node, error)
        if reason is None:
            raise
        pytest.skip(reason)


@pytest.fixture(scope="session")
def demo():
    from metaeval_core.data.synthetic import synthetic_dataset

    return synthetic_dataset()
