#!/usr/bin/env bash
# Install Debian's headless-capable Chromium for the test that opens `uniview explain --html`'s page and
# checks a screenshot of it (tests/status/test_explain_html.py).  Idempotent: does nothing when chromium
# is already on the machine.  Without apt-get or root it says so and goes on: that test then skips,
# naming this script.
set -euo pipefail

if command -v chromium >/dev/null 2>&1; then
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "warning: chromium is missing and this machine has no apt-get: install Debian's chromium package" >&2
  exit 0
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then
  if ! command -v sudo >/dev/null 2>&1; then
    echo "warning: chromium is missing, and installing it needs root (or sudo)" >&2
    exit 0
  fi
  SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
if ! apt-cache policy chromium 2>/dev/null | grep -q 'Candidate: [0-9]'; then
  $SUDO apt-get update -qq
fi
$SUDO apt-get install -y -qq --no-install-recommends chromium >/dev/null
command -v chromium >/dev/null 2>&1 || { echo "error: chromium installed but not on PATH" >&2; exit 1; }
