#!/usr/bin/env bash
# Install MariaDB's server (Debian's mariadb-server, 10.11 on bookworm) for the MySQL/MariaDB change
# data capture tests and `uniview demo --source mysql`.  Idempotent: does nothing when mariadbd and
# mariadb-install-db are already on the machine.  The package's own service is not used: the tests
# start their own server with its own data folder (uniview/local/mariadb.py).
set -euo pipefail
source "$(dirname "$0")/apt-install.sh"

have_server() { command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ]; }

if have_server && command -v mariadb-install-db >/dev/null 2>&1; then
  exit 0
fi
# Without apt-get or root, say so and go on: the MariaDB tests then skip, naming this script.
apt_privileges mariadbd || exit 0
# the package's service must not start (there is no init here, and the tests run their own server)
if command -v apt-get >/dev/null 2>&1 && [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' | $APT_SUDO tee /usr/sbin/policy-rc.d >/dev/null
  $APT_SUDO chmod +x /usr/sbin/policy-rc.d
  trap '$APT_SUDO rm -f /usr/sbin/policy-rc.d' EXIT
fi
apt_install mariadbd mariadb-server mariadb-client || exit 0
have_server || { echo "error: mariadb-server installed but mariadbd is not found" >&2; exit 1; }
