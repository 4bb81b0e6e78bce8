#!/usr/bin/env bash
# checkov (Terraform policy checks) in its own venv, .venv-checkov: its pins must not disturb the project's.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
if [ -x .venv-checkov/bin/checkov ]; then
  exit 0
fi
"$PYTHON" -m venv .venv-checkov
.venv-checkov/bin/python -m pip install --quiet --upgrade pip
.venv-checkov/bin/python -m pip install --quiet 'checkov>=3.2,<4'
