#!/usr/bin/env bash
# Install the local BigQuery API emulator (local-bigquery 0.3.2, MIT) into its own Python 3.13
# virtualenv, <repo>/.venv-bqemu by default ($UNIVIEW_BQ_EMULATOR_VENV overrides), with the
# DuckDB extensions it needs pre-installed under <venv>/home so it runs without network.
# Idempotent: a second run with the same pins returns at once.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${UNIVIEW_BQ_EMULATOR_VENV:-$REPO/.venv-bqemu}"
PINS=(
  "local-bigquery==0.3.2"
  "duckdb==1.5.5"
  "duckdb-extensions==1.5.5"
  "duckdb-extension-icu==1.5.5"
  "duckdb-extension-ducklake==1.5.5"
  "duckdb-extension-spatial==1.5.5"
)
MARKER="$VENV/.uniview-emulator-pins"

find_python() {
  if command -v pyenv >/dev/null 2>&1; then
    local candidate
    candidate="$(pyenv root)/versions/3.13.0/bin/python3"
    if [ -x "$candidate" ]; then echo "$candidate"; return 0; fi
  fi
  if command -v python3.13 >/dev/null 2>&1; then command -v python3.13; return 0; fi
  return 1
}

if [ -f "$MARKER" ] && [ "$(cat "$MARKER")" = "${PINS[*]}" ] && [ -x "$VENV/bin/local-bigquery" ]; then
  echo "BigQuery emulator already installed in $VENV"
  exit 0
fi

PYTHON="$(find_python)" || {
  echo "error: the BigQuery emulator needs Python 3.13: install it with pyenv (pyenv install 3.13.0) or put python3.13 on PATH" >&2
  exit 1
}

echo "Installing the BigQuery emulator into $VENV with $PYTHON"
[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "${PINS[@]}"
mkdir -p "$VENV/home"
HOME="$VENV/home" "$VENV/bin/python" -c \
  "import duckdb_extensions as d; [d.import_extension(e) for e in ('icu', 'ducklake', 'spatial')]"
echo "${PINS[*]}" > "$MARKER"
echo "BigQuery emulator ready: $VENV/bin/local-bigquery (run it with HOME=$VENV/home)"
