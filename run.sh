#!/usr/bin/env bash
# One entry point for a fresh machine:
#   bash run.sh app    start the dashboard (http://localhost:8501)
#   bash run.sh test   run the whole test suite
#   bash run.sh cli …  the command line (the same as .venv/bin/metaeval …)
# Each creates .venv on first use, installs the pinned requirements into it and then the project itself
# (editable, no dependencies), which puts the `metaeval` command at .venv/bin/metaeval.
#
# Settings (environment variables):
#   PYTHON=/path/to/python3.11   the interpreter that creates .venv (default: python3; needs Python >= 3.11)
#   METAEVAL_VENV=/path/to/venv  use this virtual environment instead of .venv
#   METAEVAL_DATA_DIR=/path      where the human-judgment files are read from (default: data/cache/, where
#                                `metaeval fetch` writes)
set -euo pipefail
cd "$(dirname "$0")"
PY=${PYTHON:-python3}
VENV=${METAEVAL_VENV:-.venv}
MIN_PYTHON="3.11"

die() { echo "run.sh: $*" >&2; exit 2; }

# "3.11.7" when $1 is Python >= 3.11, else "" with the version (or why it could not run) on stderr.
python_ok() {
  "$1" -c 'import sys; v = sys.version_info; print("%d.%d.%d" % v[:3]); sys.exit(0 if v >= (3, 11) else 3)' 2>/dev/null
}

check_python() {
  local interpreter="$1" what="$2" version status=0
  if ! command -v "$interpreter" >/dev/null 2>&1 && [ ! -x "$interpreter" ]; then
    die "$what '$interpreter' not found; metaeval needs Python $MIN_PYTHON or newer: install it, or point PYTHON at one (e.g. PYTHON=python3.12 bash run.sh app)"
  fi
  version=$(python_ok "$interpreter") || status=$?
  if [ "$status" -eq 3 ]; then
    die "$what '$interpreter' is Python $version; metaeval needs Python $MIN_PYTHON or newer: point PYTHON at one (e.g. PYTHON=python3.12 bash run.sh app)${3:-}"
  elif [ "$status" -ne 0 ]; then
    die "$what '$interpreter' does not run; metaeval needs Python $MIN_PYTHON or newer: point PYTHON at one (e.g. PYTHON=python3.12 bash run.sh app)"
  fi
}

ensure_env() {
  local wanted="$1" stamp="$VENV/.installed-$(basename "$1")"
  if [ ! -x "$VENV/bin/python" ]; then
    check_python "$PY" "PYTHON"
    "$PY" -m venv "$VENV"
  else
    check_python "$VENV/bin/python" "the virtual environment's python" " (and delete $VENV to rebuild it)"
  fi
  # Reinstall only when the requirement files changed since the last install.
  local digest
  digest=$(cat requirements*.txt | sha256sum | cut -c1-16)
  if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$digest" ]; then
    "$VENV/bin/python" -m pip install --disable-pip-version-check -q -r "$wanted"
    echo "$digest" > "$stamp"
  fi
  ensure_project
}

# The project itself, editable and without dependencies (the pinned requirements are already in): this gives
# .venv/bin/metaeval. pip builds it in an isolated environment with the build backend pyproject.toml names
# (fetched once from the package index). Skipped while pyproject.toml has no [build-system]; a failure is a
# warning, since `bash run.sh cli …` works without the command.
ensure_project() {
  local stamp="$VENV/.installed-project" digest
  grep -q '^\[build-system\]' pyproject.toml 2>/dev/null || return 0
  digest=$( (cat pyproject.toml; pwd) | sha256sum | cut -c1-16)
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$digest" ] && [ -x "$VENV/bin/metaeval" ]; then
    return 0
  fi
  if "$VENV/bin/python" -m pip install --disable-pip-version-check -q --no-deps -e . >"$VENV/.install-project.log" 2>&1; then
    echo "$digest" > "$stamp"
  else
    echo "run.sh: warning: could not install the metaeval command into $VENV (see $VENV/.install-project.log);" \
         "'bash run.sh cli …' works without it" >&2
  fi
}

cmd=${1:-app}
shift || true
case "$cmd" in
  app)
    if [ "${1:-}" = "--help" ] || [ "${1:-}" = "-h" ]; then  # ours, not Streamlit's 5,000 lines
      cat <<'HELP'
usage: bash run.sh app [STREAMLIT OPTIONS]

Start the metaeval dashboard at http://localhost:8501 (builds .venv on first use).

  --server.port 8600          serve on another port (http://localhost:8600)

Every other `streamlit run` option is passed on (list: .venv/bin/streamlit run --help).
Data: METAEVAL_DATA_DIR=/path/to/datasets bash run.sh app   (default: data/cache/)
HELP
      exit 0
    fi
    ensure_env requirements.txt
    exec "$VENV/bin/python" -m metaeval_ui.serve --server.headless true "$@"
    ;;
  test)
    ensure_env requirements-dev.txt
    exec "$VENV/bin/python" -m pytest "$@"
    ;;
  cli)
    ensure_env requirements.txt
    exec "$VENV/bin/python" -m metaeval_core "$@"
    ;;
  *)
    echo "usage: bash run.sh app|test|cli [args]   (PYTHON=, METAEVAL_VENV=, METAEVAL_DATA_DIR=: see the top of run.sh)" >&2
    exit 2
    ;;
esac
