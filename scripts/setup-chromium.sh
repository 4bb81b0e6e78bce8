#!/usr/bin/env bash
# Install Debian's headless-capable Chromium for the tests that open `uniview explain --html`'s page: one
# checks a screenshot of it (tests/status/test_explain.py), one measures where each text is drawn
# (tests/status/test_explain_html.py).  Idempotent: does nothing when chromium is already on the machine.
# Without apt-get or root it says so and goes on: those tests then skip, naming this script.
set -euo pipefail
source "$(dirname "$0")/apt-install.sh"

if command -v chromium >/dev/null 2>&1; then
  exit 0
fi
apt_install chromium chromium || exit 0
command -v chromium >/dev/null 2>&1 || { echo "error: chromium installed but not on PATH" >&2; exit 1; }
