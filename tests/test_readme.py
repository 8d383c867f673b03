"""The first hour of a new user: the README's commands on a copy of the repository with no data folder beside it.

The copy holds the repository's files (tracked and new, as in this checkout; never data) in a fresh temporary
folder. Its ``.venv`` is a new virtual environment that sees this environment's packages through a ``.pth``
file, so ``run.sh`` finds the pinned requirements installed and only installs the project itself (which gives
``.venv/bin/metaeval``). Then, as the README says: ``datasets``, ``describe --dataset demo``, every real dataset
'not available' with the command-line remedies, a ``fetch`` with no server, the dashboard on the demo (its health
endpoint), and a ``fetch`` of one small dataset from a mirror served on 127.0.0.1 (built in a temporary folder
from the real-data mirror's files) into the default ``data/cache/``, after which the dataset is available and
the real-data tests run on it (those are marked slow).

Not slow: every ``console`` block's commands run and their printed output is compared with the README's, every
Python example runs and prints what the ``text`` block after it shows (on real data: skipped without it), and
the Configuration table is one table naming every ``METAEVAL_*`` variable the code reads.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.conftest import mirror_dir
from tests.localhttp import serve, wait_for_health

REPO = Path(__file__).resolve().parents[1]
SMALL = "summeval-naacl2022"  # one 67 kB file
COLUMNS = 100


def _files_of_this_checkout() -> list[str]:
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                            capture_output=True, check=True).stdout.decode().split("\0")
    return [f for f in listed if f and (REPO / f).is_file()]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Path:
    """A copy of the repository in an otherwise empty folder, with a .venv that reuses this one's packages."""
    root = tmp_path_factory.mktemp("newuser") / "metaeval"
    for name in _files_of_this_checkout():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, root / name)
    assert not (root / "data" / "cache").exists() and not (root.parent / "shared").exists()
    base = getattr(sys, "_base_executable", None) or sys.executable
    subprocess.run([base, "-m", "venv", str(root / ".venv")], check=True, timeout=120)
    site = subprocess.run([str(root / ".venv" / "bin" / "python"), "-c",
                           "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    Path(site, "zz_reuse_test_environment.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return root


def _env(**extra: str) -> dict:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("METAEVAL_", "PYTHON", "VIRTUAL_ENV")) and k.lower() not in
           ("http_proxy", "https_proxy", "all_proxy")}
    env.update(NO_PROXY="127.0.0.1,localhost", COLUMNS=str(COLUMNS), PYTHONDONTWRITEBYTECODE="1", **extra)
    return env


def sh(clone: Path, command: str, *, timeout: float = 300, **env: str) -> subprocess.CompletedProcess:
    """Run one README command line (comments stripped) in the clone."""
    argv = shlex.split(command, comments=True)
    return subprocess.run(argv, cwd=clone, capture_output=True, text=True, timeout=timeout, env=_env(**env))


def readme_commands(section: str) -> list[str]:
    """The command lines of the README section's bash blocks (continuation lines joined)."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    body = re.split(r"^#+ ", text.split(f"\n## {section}\n", 1)[1], flags=re.M)[0]
    lines = []
    for block in re.findall(r"```bash\n(.*?)```", body, flags=re.S):
        lines += [line.strip() for line in block.replace("\\\n", " ").splitlines() if line.strip()]
    return lines


def _quick(prefix: str) -> str:
    (command,) = [c for c in readme_commands("Quick start") if c.startswith(prefix)]
    return command


def test_readme_examples_use_the_command_that_works_after_the_set_up():
    commands = readme_commands("Quick start") + readme_commands("Command line")
    assert not [c for c in commands if "python -m metaeval_core" in c or c.startswith("python ")]
    from metaeval_core.cli.main import build_parser

    known = next(a for a in build_parser()._actions if a.dest == "command").choices
    for command in commands:
        if command.startswith(".venv/bin/metaeval "):
            assert shlex.split(command, comments=True)[1] in known, command


@pytest.mark.slow
def test_a_bare_clone_follows_the_readme(clone):
    # The set-up: run.sh creates nothing new here but installs the project, which gives the `metaeval` command.
    setup = sh(clone, "bash run.sh cli datasets")
    assert setup.returncode == 0, setup.stderr
    metaeval = clone / ".venv" / "bin" / "metaeval"
    log = clone / ".venv" / ".install-project.log"
    assert metaeval.is_file(), f"no .venv/bin/metaeval: {setup.stderr} {log.read_text() if log.exists() else ''}"

    listing = sh(clone, _quick(".venv/bin/metaeval datasets"))
    assert listing.returncode == 0, listing.stderr
    assert max(len(line) for line in listing.stdout.splitlines()) <= COLUMNS, listing.stdout
    assert re.search(r"^demo +available", listing.stdout, re.M)
    assert f"data directory: {clone / 'data' / 'cache'}" in listing.stdout

    demo = sh(clone, _quick(".venv/bin/metaeval describe --dataset demo"))
    assert demo.returncode == 0 and "systems: 16; inputs: 2100 (100 judged, 2000 unjudged)" in demo.stdout

    registry = json.loads((clone / "data" / "registry.json").read_text())
    for dataset_id in [d["id"] for d in registry["datasets"] if d["files"]]:
        missing = sh(clone, f".venv/bin/metaeval describe --dataset {dataset_id}")
        assert missing.returncode == 2 and missing.stdout == "" and len(missing.stderr.splitlines()) == 1
        assert missing.stderr.startswith(f"error: dataset {dataset_id!r} is not available: ")
        for remedy in (f"`metaeval fetch --dataset {dataset_id}`", "--download", "METAEVAL_DATA_DIR"):
            assert remedy in missing.stderr, missing.stderr
        assert "fetch_dataset" not in missing.stderr

    offline = sh(clone, _quick(".venv/bin/metaeval fetch --dataset"),
                 METAEVAL_DATA_BASE_URL=f"http://127.0.0.1:{_free_port()}")
    assert offline.returncode == 2 and len(offline.stderr.splitlines()) == 1, offline.stderr
    assert offline.stderr.rstrip().endswith("failed: connection refused")
    assert not (clone / "data" / "cache").exists()


@pytest.mark.slow
def test_the_dashboard_starts_on_the_demo_in_a_bare_clone(clone):
    port = _free_port()
    with open(clone.parent / "app.log", "w") as log:
        server = subprocess.Popen(["bash", "run.sh", "app", "--server.port", str(port), "--server.address",
                                   "127.0.0.1"], cwd=clone, env=_env(), stdout=log, stderr=subprocess.STDOUT,
                                  start_new_session=True)
    try:
        answer = wait_for_health(port, lambda: server.poll() is None)
        assert answer == "ok", (clone.parent / "app.log").read_text()[-2000:]
        assert not (clone / "data" / "cache").exists()  # opening on the demo downloads nothing
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(timeout=20)


@pytest.fixture
def local_mirror(tmp_path):
    """One small dataset's files, copied from the real-data mirror (per its MANIFEST.json) and served on
    127.0.0.1 until the test ends."""
    source = mirror_dir()
    if source is None or not (source / "MANIFEST.json").is_file():
        pytest.skip("needs the real-data mirror (MANIFEST.json) to serve a dataset from: set METAEVAL_DATA_DIR")
    manifest = {f["path"]: f for f in json.loads((source / "MANIFEST.json").read_text())["files"]}
    registry = {d["id"]: d for d in json.loads((REPO / "data" / "registry.json").read_text())["datasets"]}
    served = tmp_path / "served"
    for file in registry[SMALL]["files"]:
        assert manifest[file["path"]]["sha256"] == file["sha256"]
        (served / file["path"]).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source / file["path"], served / file["path"])
    with serve(served) as base:
        yield base


@pytest.mark.slow
def test_fetch_from_a_local_mirror_into_the_default_folder_then_the_real_data_tests_run(clone, local_mirror):
    fetch = _quick(".venv/bin/metaeval fetch --dataset").replace("--dataset summeval", f"--dataset {SMALL}")
    fetched = sh(clone, fetch, METAEVAL_DATA_BASE_URL=local_mirror)
    assert fetched.returncode == 0, fetched.stderr
    assert fetched.stdout.count(" ok") == 1 and fetched.stderr == ""
    cache = clone / "data" / "cache"
    assert sorted(p.relative_to(cache).as_posix() for p in cache.rglob("*") if p.is_file()) == [
        "summeval/deutsch2022_reexamining/judged/metrics.jsonl.gz"]

    listing = {row["id"]: row for row in json.loads(sh(clone, ".venv/bin/metaeval datasets --json").stdout)}
    assert listing[SMALL]["available"] and listing[SMALL]["systems"] == 16
    assert not listing["summeval"]["available"]
    described = sh(clone, f".venv/bin/metaeval describe --dataset {SMALL}")
    assert described.returncode == 0 and "systems: 16" in described.stdout

    # The real-data tests accept the folder `fetch` filled (no MANIFEST.json): those on the fetched dataset run,
    # those on others skip, naming the dataset to fetch.
    run = sh(clone, "bash run.sh test -p no:cacheprovider -q -rs tests/core/test_loaders.py tests/core/test_registry.py"
                    " -k 'naacl2022 or verify_files_on_the_mirror'", timeout=600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    passed = int(re.search(r"(\d+) passed", run.stdout).group(1))
    assert passed >= 3, run.stdout[-3000:]
    assert "no real data" not in run.stdout
    assert "needs summeval, not in the data directory" in run.stdout
    assert "`metaeval fetch --dataset summeval`" in run.stdout


# -- the README's examples print what it shows -------------------------------------------------------------
def _readme() -> str:
    return (REPO / "README.md").read_text(encoding="utf-8")


def console_examples() -> list[tuple[str, list[str]]]:
    """(command, the output lines shown under it) for every `$ metaeval ...` line of the console blocks."""
    examples = []
    for block in re.findall(r"```console\n(.*?)```", _readme(), flags=re.S):
        for chunk in re.split(r"^(?=\$ )", block, flags=re.M):
            if chunk.startswith("$ "):
                command, *output = chunk.rstrip("\n").split("\n")
                examples.append((command[2:], output))
    return examples


def test_the_readme_has_console_examples_with_output():
    assert sum(1 for _, output in console_examples() if output) >= 2


@pytest.mark.parametrize("command, shown", console_examples(), ids=[c for c, _ in console_examples()])
def test_every_readme_command_prints_what_the_readme_shows(command, shown, capsys, monkeypatch, tmp_path):
    from metaeval_core.cli.main import main

    argv = shlex.split(command, comments=True)
    assert argv[0] == "metaeval"
    monkeypatch.setenv("COLUMNS", str(COLUMNS))
    monkeypatch.chdir(tmp_path)
    # The own-data example's file: long layout, as the README describes it.
    rows = ["system,input,measure,score"] + [f"s{i},{j},{m},{(i * 7 + j * 3 + k * 5) % 11}" for i in range(4)
                                             for j in range(6) for k, m in enumerate(("human.quality", "bleu",
                                                                                      "comet"))]
    (tmp_path / "my_scores.csv").write_text("\n".join(rows) + "\n")
    code = main(argv[1:])
    out, err = capsys.readouterr()
    assert code == 0, err
    if shown:  # compared line by line, exactly
        assert out.rstrip("\n").split("\n") == shown


def python_examples() -> list[tuple[str, str]]:
    """(code, the printed output shown in the text block right after it)."""
    return re.findall(r"```python\n(.*?)```\n\n```text\n(.*?)```", _readme(), flags=re.S)


def test_the_readme_has_python_examples_with_output():
    assert len(python_examples()) >= 2


@pytest.mark.realdata
@pytest.mark.parametrize("code, shown", python_examples(), ids=["scores", "judges"])
def test_every_python_example_prints_what_the_readme_shows(code, shown, capsys, monkeypatch):
    from tests.conftest import real_data_dir

    directory = real_data_dir()
    if directory is None:
        pytest.skip("needs the real-data mirror (METAEVAL_DATA_DIR) for SummEval and LLMBar")
    monkeypatch.setenv("METAEVAL_DATA_DIR", str(directory))
    exec(compile(code, "README.md", "exec"), {})
    assert capsys.readouterr().out == shown


def test_the_configuration_table_is_one_table_naming_every_variable():
    text = _readme()
    body = text.split("\n## Configuration\n", 1)[1].split("\n## ", 1)[0].strip("\n").split("\n")
    table = [i for i, line in enumerate(body) if line.startswith("|")]
    assert table == list(range(table[0], table[-1] + 1)), "a paragraph breaks the Configuration table"
    named = set(re.findall(r"`(METAEVAL_[A-Z_]+)`", "\n".join(body[i] for i in table)))
    read = set()
    for path in [*(REPO / "metaeval_core").rglob("*.py"), *(REPO / "metaeval_ui").rglob("*.py")]:
        read |= set(re.findall(r"[\"'](METAEVAL_[A-Z_]+)[\"']", path.read_text(encoding="utf-8")))
    assert read - named == set()


def test_the_readme_is_what_a_user_needs():
    """Reference material lives in docs/ (linked), not in the README: no benchmark tables, under 260 lines."""
    text = _readme()
    assert len(text.splitlines()) < 260 and "## Speed" not in text
    for doc in ("docs/methods.md", "docs/data.md", "docs/cli.md", "docs/speed.md", "docs/architecture.md"):
        assert f"]({doc})" in text and (REPO / doc).is_file()
    for dataset in ("wmt22-zhen", "pandalm", "llmbar", "hanna"):
        assert f"`{dataset}`" in text


def test_the_readme_lists_every_page_and_every_command():
    """The dashboard table names every page of app.py, the command table every subcommand (issue 22: the README
    lists what exists, LLM judges pages and commands included)."""
    from metaeval_core.cli.main import build_parser

    text = _readme()
    pages = text.split("\n## The dashboard\n", 1)[1].split("\n## ", 1)[0]
    titles = re.findall(r'\("pages/[a-z_]+\.py", "([^"]+)", ":material', (REPO / "app.py").read_text(encoding="utf-8"))
    assert titles and [t for t in titles if t not in pages] == []
    commands = text.split("\n## Command line\n", 1)[1].split("\n## ", 1)[0]
    known = next(a for a in build_parser()._actions if a.dest == "command").choices
    assert [c for c in known if f"`{c}`" not in commands] == []
