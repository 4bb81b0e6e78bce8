#!/usr/bin/env bash
# Resolve, from Maven Central, the Java parts of the local CDC stack (Kafka, Kafka Connect, Debezium's
# PostgreSQL and MySQL connectors, spark-sql-kafka) into ~/.cache/uniview/kafka-stack/<pins>/
# ($UNIVIEW_CACHE overrides ~/.cache/uniview).  The versions and the resolving are uniview.local.java_stack's,
# the same code `uniview demo` runs from an installed wheel; this script runs it from the checkout.
# Idempotent and safe to run twice at once.  Needs java and mvn.  Prints the cache folder on its last line.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
if [ -z "${PYTHON:-}" ]; then
  PYTHON=python3
  [ -x "$ROOT/.venv/bin/python" ] && PYTHON="$ROOT/.venv/bin/python"
fi
# the module imports only the standard library and uniview itself: the checkout on PYTHONPATH is enough
PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}" exec "$PYTHON" -m uniview.local.java_stack
