"""`uniview refresh --current table` as the process a cron job or the function runs on DuckDB: it maintains
the table (reading the step just landed, then nothing again) and imports no Spark, Google client, gRPC or
Kafka library, which would cost every maintenance their import time (bench/bench_current_table.py measures
the whole process)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from current_table_history import DATASET, FAMILY, History
from test_current_table_random import assert_table_equals_view, refresh_current

SEED = 20261129
#: Packages a DuckDB maintenance does not need (`google` and `google.cloud` themselves are namespace packages
#: that site-packages' .pth files register at start-up, importing nothing).
HEAVY = (
    *("pyspark", "google.cloud.bigquery", "google.api_core", "google.protobuf", "grpc"),
    *("confluent_kafka", "kafka", "pandas", "pyarrow", "functions_framework"),
)
_RUN = (
    "import atexit, sys\n"
    "atexit.register(lambda: print('imported:', sorted(sys.modules), file=sys.stderr))\n"
    "from uniview.cli.main import main\n"
    "main(sys.argv[1:])\n"
)


def refresh_process(path: Path) -> tuple[str, set[str]]:
    """Run `uniview refresh --current table` in a fresh process: (its stderr, the modules it imported)."""
    command = [
        *(sys.executable, "-c", _RUN, "refresh", "--warehouse", f"duckdb:///{path}"),
        *("--dataset", DATASET, "--table", FAMILY, "--current", "table"),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    imported = re.search(r"imported: \[(.*)\]", done.stderr)
    assert imported is not None, done.stderr
    return done.stderr, {name.strip(" '") for name in imported.group(1).split(",")}


def test_a_maintenance_process_reads_the_step_landed_and_imports_no_spark_or_cloud_library(tmp_path: Path) -> None:
    path = tmp_path / "warehouse.duckdb"
    history = History(path, SEED)
    for _ in range(3):
        history.step()
    refresh_current(path, "table")
    landed = history.step()
    stderr, imported = refresh_process(path)
    found = re.search(r"_current \(table\): (?P<action>[a-z-]+), (?P<read>[0-9,]+) change\(s\) read", stderr)
    assert found is not None, stderr
    assert found["action"] in ("maintain", "re-present", "rebuild")  # a step may add a version
    assert int(found["read"].replace(",", "")) >= landed > 0
    assert {"duckdb", "uniview.warehouse.duckdb_current"} <= imported
    unwanted = sorted(name for name in imported if any(name == h or name.startswith(h + ".") for h in HEAVY))
    assert unwanted == [], unwanted
    refresh_current(path, "view")
    assert_table_equals_view(path, "after the refresh process")
    stderr, _ = refresh_process(path)
    assert re.search(r"_current \(table\): maintain, 0 change\(s\) read", stderr), stderr
