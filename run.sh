#!/usr/bin/env bash
# One entry point for a fresh machine:
#   bash run.sh app    start the dashboard (http://localhost:8501)
#   bash run.sh test   run the whole test suite
#   bash run.sh cli …  the command line (python -m metaeval_core …)
# Each creates .venv on first use and installs the pinned requirements into it.
set -euo pipefail
cd "$(dirname "$0")"
PY=${PYTHON:-python3}
VENV=.venv

ensure_env() {
  local wanted="$1" stamp="$VENV/.installed-$(basename "$1")"
  if [ ! -x "$VENV/bin/python" ]; then
    "$PY" -m venv "$VENV"
  fi
  # Reinstall only when the requirement files changed since the last install.
  local digest
  digest=$(cat requirements*.txt | sha256sum | cut -c1-16)
  if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$digest" ]; then
    "$VENV/bin/python" -m pip install --disable-pip-version-check -q -r "$wanted"
    echo "$digest" > "$stamp"
  fi
}

# Use the human-judgment mirror beside the repository when no data directory is set.
if [ -z "${METAEVAL_DATA_DIR:-}" ] && [ -f ../shared/datasets/MANIFEST.json ]; then
  export METAEVAL_DATA_DIR="$(cd ../shared/datasets && pwd)"
fi

cmd=${1:-app}
shift || true
case "$cmd" in
  app)
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
    echo "usage: bash run.sh app|test|cli [args]" >&2
    exit 2
    ;;
esac
