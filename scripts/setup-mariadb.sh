#!/usr/bin/env bash
# Install MariaDB's server (Debian's mariadb-server, 10.11 on bookworm) for the MySQL/MariaDB change
# data capture tests and `uniview demo --source mysql`.  Idempotent: does nothing when mariadbd and
# mariadb-install-db are already on the machine.  The package's own service is not used: the tests
# start their own server with its own data folder (uniview/local/mariadb.py).
set -euo pipefail

have_server() { command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ]; }

if have_server && command -v mariadb-install-db >/dev/null 2>&1; then
  exit 0
fi
# Without apt-get or root, say so and go on: the MariaDB tests then skip, naming this script.
if ! command -v apt-get >/dev/null 2>&1; then
  echo "warning: mariadbd is missing and this machine has no apt-get: install MariaDB 10.11 (mariadb-server)" >&2
  exit 0
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then
  if ! command -v sudo >/dev/null 2>&1; then
    echo "warning: mariadbd is missing, and installing mariadb-server needs root (or sudo)" >&2
    exit 0
  fi
  SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
# the package's service must not start (there is no init here, and the tests run their own server)
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' | $SUDO tee /usr/sbin/policy-rc.d >/dev/null
  $SUDO chmod +x /usr/sbin/policy-rc.d
  trap '$SUDO rm -f /usr/sbin/policy-rc.d' EXIT
fi
if ! apt-cache policy mariadb-server 2>/dev/null | grep -q 'Candidate: [0-9]'; then
  $SUDO apt-get update -qq
fi
$SUDO apt-get install -y -qq --no-install-recommends mariadb-server mariadb-client >/dev/null
have_server || { echo "error: mariadb-server installed but mariadbd is not found" >&2; exit 1; }
