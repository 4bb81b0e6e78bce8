#!/usr/bin/env bash
# Build the class-data-sharing archive of a local Spark driver (uniview.local.class_archive) into
#   ~/.cache/uniview/jvm-archives/spark-driver-<digest of the JDK and Spark's jars>.jsa
# ($UNIVIEW_CACHE overrides ~/.cache/uniview): Spark's JVMs started with it map their classes instead of
# loading them, about a third less CPU per start.  Idempotent; a JVM without it runs as before.
# Prints the archive's path on its last line.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PYTHON=${PYTHON:-python3}
[ -x "$ROOT/.venv/bin/python" ] && PYTHON="$ROOT/.venv/bin/python"
exec "$PYTHON" "$ROOT/scripts/spark_class_archive.py"
