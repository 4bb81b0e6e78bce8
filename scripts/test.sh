#!/usr/bin/env bash
# Install everything the tests need (project venv, BigQuery API emulator venv, checkov venv,
# the Kafka stack, MariaDB's server, ZetaSQL, the BigQuery connector, the stand-in Terraform providers,
# Chromium, the class-data-sharing archive of Spark's driver)
# and run every test.  Extra arguments go to pytest.  Safe to run again: installs are idempotent.
# Tests run in $UNIVIEW_TEST_WORKERS processes (default 3), each test file whole in one of them: a file's
# fixtures are set up once, and each process starts its own servers (emulators, broker) on free ports.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e '.[dev]'

bash scripts/setup-bigquery-emulator.sh
bash scripts/setup-checkov.sh
bash scripts/setup-kafka-stack.sh >/dev/null
bash scripts/setup-mariadb.sh
bash scripts/setup-zetasql.sh >/dev/null
bash scripts/setup-bigquery-connector.sh >/dev/null
bash scripts/setup-terraform-standin.sh >/dev/null
bash scripts/setup-chromium.sh
bash scripts/setup-spark-archive.sh >/dev/null || echo "warning: Spark starts without its class archive" >&2

exec .venv/bin/python -m pytest -p no:cacheprovider -n "${UNIVIEW_TEST_WORKERS:-3}" --dist loadfile "$@"
