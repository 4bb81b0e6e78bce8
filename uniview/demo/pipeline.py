"""The demo's moving parts: the work folder, the local servers, the Spark sink, waiting for views.

New versions travel as in production: the sink announces each new version table on Pub/Sub
(the emulator, when installed; otherwise it posts the same push body straight to the function
over HTTP), and the function, served by functions-framework, refreshes the unified views in
the DuckDB file the sink wrote.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb

from uniview.core.errors import UniviewError
from uniview.core.landing_layout import DEFAULT_DATASET
from uniview.core.schema import split_version_table
from uniview.local.class_archive import spark_archive_options
from uniview.local.function_server import function_server
from uniview.local.processes import QUICK_JIT, use_this_python_for_spark_workers
from uniview.local.pubsub_emulator import find_emulator_jar, pubsub_emulator
from uniview.warehouse.duckdb_connection import scalar
from uniview.warehouse.url import duckdb_url

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: The sink's own default: every source database's rows in one dataset, the tenant in `_cdc_database`.
DATASET = DEFAULT_DATASET
TARGET_DATASET = f"{DATASET}_unified"
SOURCE_COLUMN = "_uniview_source"
PROJECT = "uniview-demo"
TOPIC = "uniview-table-created"
#: Families whose records carry a primary key, so the function also keeps `<family>_current`.
CURRENT_FAMILIES = ("accounts",)


@dataclass(frozen=True)
class DemoPaths:
    """Where the demo keeps its input, its warehouse and the servers' logs."""

    workdir: Path

    @property
    def input_dir(self) -> Path:
        return self.workdir / "input"

    @property
    def debezium_dir(self) -> Path:
        return self.workdir / "input-debezium"

    @property
    def warehouse_file(self) -> Path:
        return self.workdir / "uniview-demo.duckdb"

    @property
    def logs(self) -> Path:
        return self.workdir / "logs"

    @property
    def warehouse_url(self) -> str:
        return duckdb_url(self.warehouse_file)

    def reset(self) -> None:
        """Start from nothing: the previous run's input, warehouse and logs are removed."""
        for folder in (self.input_dir, self.debezium_dir, self.logs, self.workdir / "staging"):
            shutil.rmtree(folder, ignore_errors=True)
        for leftover in (self.warehouse_file, self.warehouse_file.with_suffix(".duckdb.wal")):
            leftover.unlink(missing_ok=True)
        self.logs.mkdir(parents=True, exist_ok=True)


@dataclass(frozen=True)
class Channel:
    """How the sink announces new versions, and to whom: `notify` is the sink's --notify value."""

    notify: str
    description: str
    function_log: Path


@contextmanager
def announcement_channel(paths: DemoPaths) -> Iterator[Channel]:
    """Serve the function; route announcements through the Pub/Sub emulator when it is installed."""
    env = {"UNIVIEW_WAREHOUSE": paths.warehouse_url, "UNIVIEW_SOURCE_COLUMN": SOURCE_COLUMN, "UNIVIEW_CURRENT": "true"}
    with ExitStack() as stack:
        function = stack.enter_context(function_server(paths.logs, env))
        if find_emulator_jar() is None:
            yield Channel(
                function.url,
                f"HTTP push to the function at {function.url} (no Pub/Sub emulator installed)",
                function.log_path,
            )
            return
        host = stack.enter_context(pubsub_emulator(paths.logs))
        stack.enter_context(_environment("PUBSUB_EMULATOR_HOST", host))
        _subscribe_function(function.url)
        yield Channel(
            f"pubsub://{PROJECT}/{TOPIC}",
            f"Pub/Sub emulator {host}: topic {TOPIC} -> push subscription -> function {function.url}",
            function.log_path,
        )


@contextmanager
def _environment(name: str, value: str) -> Iterator[None]:
    previous = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = previous


def _subscribe_function(function_url: str) -> None:
    import google.cloud.pubsub_v1 as pubsub_v1

    topic = f"projects/{PROJECT}/topics/{TOPIC}"
    pubsub_v1.PublisherClient().create_topic(name=topic)
    with pubsub_v1.SubscriberClient() as subscriber:
        subscriber.create_subscription(
            name=f"projects/{PROJECT}/subscriptions/uniview-function",
            topic=topic,
            push_config={"push_endpoint": function_url},
            ack_deadline_seconds=60,
        )


def new_spark_session(jars: Sequence[str] = ()) -> SparkSession:
    from pyspark.sql import SparkSession

    from uniview.sink.job import JVM_OPTIONS

    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    quiet_logging = f"-Dlog4j2.configurationFile={Path(__file__).with_name('log4j2.properties').as_uri()}"
    # Spark's classes are mapped from the archive scripts/setup-spark-archive.sh builds, when it is there
    java_options = f"{quiet_logging} {JVM_OPTIONS} {QUICK_JIT} {spark_archive_options()}".strip()
    spark = (
        SparkSession.builder.appName("uniview-demo")
        .master("local[2]")
        # a few hundred records: with QUICK_JIT the whole demo took 28.5 s instead of 33.5 s (median of 5 runs)
        .config("spark.driver.extraJavaOptions", java_options)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.memory", "2g")
        .config("spark.jars", ",".join(jars))
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    use_this_python_for_spark_workers(spark.sparkContext)
    return spark


def version_tables(connection: duckdb.DuckDBPyConnection) -> dict[str, list[str]]:
    """{family: [version table, ...]} of the demo dataset."""
    rows = connection.execute(
        "SELECT table_name FROM duckdb_tables() WHERE schema_name = ? ORDER BY table_name", [DATASET]
    ).fetchall()
    families: dict[str, list[str]] = {}
    for (table,) in rows:
        parts = split_version_table(table)
        if parts:
            families.setdefault(parts[0], []).append(table)
    return families


def _covered(connection: duckdb.DuckDBPyConnection, family: str, tables: list[str]) -> bool:
    views = {
        row[0]
        for row in connection.execute(
            "SELECT view_name FROM duckdb_views() WHERE schema_name = ?", [TARGET_DATASET]
        ).fetchall()
    }
    if f"{family}_unified" not in views or (family in CURRENT_FAMILIES and f"{family}_current" not in views):
        return False
    sources = connection.execute(
        f'SELECT DISTINCT "{SOURCE_COLUMN}" FROM "{TARGET_DATASET}"."{family}_unified"'
    ).fetchall()
    return {row[0] for row in sources} >= {t for t in tables if _has_rows(connection, t)}


def _has_rows(connection: duckdb.DuckDBPyConnection, table: str) -> bool:
    return bool(scalar(connection, f'SELECT count(*) > 0 FROM "{DATASET}"."{table}"'))


def wait_for_views(paths: DemoPaths, timeout: float = 60.0) -> dict[str, list[str]]:
    """Poll (read-only) until every family's view reads every version; the function writes meanwhile."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with duckdb.connect(str(paths.warehouse_file), read_only=True) as connection:
                families = version_tables(connection)
                if families and all(_covered(connection, f, t) for f, t in families.items()):
                    return families
        except duckdb.Error:
            pass  # the function holds the file while it refreshes; look again shortly
        if time.monotonic() > deadline:
            raise UniviewError(
                f"the unified views did not cover every version within {timeout:.0f}s; "
                f"see the function's log in {paths.logs}"
            )
        time.sleep(0.3)
