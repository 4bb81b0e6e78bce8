"""From a real database to a queryable view: PostgreSQL (logical decoding) -> Debezium's PostgreSQL
connector on Kafka Connect -> a real Kafka broker -> `uniview sink --format debezium --stream`, running
for the whole test -> DuckDB and the BigQuery emulator (real connector) -> notification -> the Cloud
Function under functions-framework -> `<table>_unified` and `<table>_current`.

The test drives the database step by step (DML, ADD COLUMN, a type change to bigint and then
numeric(12,2), a dropped column, a second source database, a transaction over two tables) and after
every step waits until, per warehouse and source database, `<table>_current` equals the source table and
the unified view holds every change, each with its source database and its own `_cdc_sequence`.  Then
each sink is stopped with Ctrl-C and must exit cleanly, its summary accounting for every change.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pytest

from uniview.demo.postgres_source import current_rows_sql, normalized
from uniview.local.bigquery_emulator import DEFAULT_PROJECT
from uniview.local.function_server import function_server
from uniview.local.kafka import wait_for_change_events
from uniview.warehouse.url import duckdb_url

psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed")
kafka = pytest.importorskip("kafka", reason="kafka-python is not installed")

DATABASES = ("shop1", "shop2")
#: PostgreSQL, Kafka, Kafka Connect, two Spark sinks and two functions on one machine: the module takes minutes
#: on a slow 2-core machine, longer than the suite's 300 s per test.
pytestmark = pytest.mark.timeout(900)


@pytest.fixture(scope="module")
def postgres(tmp_path_factory):
    from uniview.local.postgres import find_bin_dir, postgres_server

    if find_bin_dir() is None or (shutil.which("runuser") is None and __import__("os").geteuid() == 0):
        pytest.skip("PostgreSQL server binaries (initdb, pg_ctl) are not installed")
    with postgres_server(tmp_path_factory.mktemp("pg")) as server:
        with psycopg.connect(server.dsn(), autocommit=True) as connection:
            for database in DATABASES:
                connection.execute(f"CREATE DATABASE {database}")
        for database in DATABASES:
            run(
                server,
                database,
                "CREATE TABLE customer (id int PRIMARY KEY, name text, score int)",
                "CREATE TABLE orders (id int PRIMARY KEY, customer_id int, total numeric(10,2))",
            )
        yield server


def run(server, database, *statements):
    with psycopg.connect(server.dsn(database), autocommit=True) as connection:
        for statement in statements:
            connection.execute(statement)


def source_rows(server, database, table):
    with psycopg.connect(server.dsn(database)) as connection:
        return [tuple(row) for row in connection.execute(f"SELECT * FROM {table} ORDER BY id").fetchall()]


def source_columns(server, database, table):
    with psycopg.connect(server.dsn(database)) as connection:
        return [
            r[0]
            for r in connection.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = %s ORDER BY ordinal_position",
                [table],
            ).fetchall()
        ]


@dataclass
class Landing:
    """One warehouse the changes land in: the sink's arguments and environment, and how to read it back."""

    name: str
    sink_args: list[str]
    sink_env: dict[str, str]
    read: Callable[[str], list[tuple]]
    distinct_list: str  # the aggregate that lists distinct values: DuckDB `list`, BigQuery `ARRAY_AGG`
    notify: str = ""


def duckdb_landing(warehouse: Path) -> Landing:
    def read(sql: str) -> list[tuple]:
        for _ in range(100):  # the function refreshes the views right after the sink's announcement
            try:
                with duckdb.connect(str(warehouse), read_only=True) as connection:
                    return [tuple(row) for row in connection.execute(sql).fetchall()]
            except duckdb.Error:
                time.sleep(0.2)
        raise AssertionError(f"could not read: {sql}")

    return Landing("duckdb", ["--warehouse", duckdb_url(warehouse)], {}, read, "list")


def bigquery_landing(connector_emulator_env) -> Landing:
    environment, options, client = connector_emulator_env

    def read(sql: str) -> list[tuple]:
        return [tuple(row.values()) for row in client.query(sql).result()]

    return Landing(
        "bigquery", ["--warehouse", f"bigquery://{DEFAULT_PROJECT}", *options], environment, read, "ARRAY_AGG"
    )


@pytest.fixture(scope="module")
def stack(postgres, kafka_bootstrap, connector_emulator_env, tmp_path_factory):
    """Debezium publishing both databases, and one sink target + function per warehouse."""
    from uniview.local.kafka import debezium_connect, postgres_connector

    work = tmp_path_factory.mktemp("cdc")
    connectors = [postgres_connector(db, postgres.host, postgres.port, db, "postgres") for db in DATABASES]
    warehouse = work / "warehouse.duckdb"
    views = {"UNIVIEW_POLICY": "widen", "UNIVIEW_CURRENT": "true"}
    landings = [duckdb_landing(warehouse), bigquery_landing(connector_emulator_env)]
    function_envs = [
        {"UNIVIEW_WAREHOUSE": duckdb_url(warehouse), **views},
        {
            "UNIVIEW_WAREHOUSE": f"bigquery://{DEFAULT_PROJECT}",
            "BIGQUERY_EMULATOR_HOST": connector_emulator_env[0]["BIGQUERY_EMULATOR_HOST"],
            **views,
        },
    ]
    with ExitStack() as running:
        running.enter_context(debezium_connect(work / "connect", kafka_bootstrap, connectors))
        for landing, environment in zip(landings, function_envs):
            landing.notify = running.enter_context(function_server(work / landing.name, environment)).url
        yield {"bootstrap": kafka_bootstrap, "landings": landings, "work": work, "postgres": postgres}


def wait_for_events(bootstrap, count):
    wait_for_change_events(bootstrap, DATABASES, count)


@dataclass
class StreamingSink:
    """`uniview sink --stream` running until stopped, one micro-batch a second over the Kafka topics."""

    landing: Landing
    process: subprocess.Popen
    log: Path

    def tail(self) -> str:
        return self.log.read_text(errors="replace")[-3000:]


@contextmanager
def streaming_sinks(stack):
    """One long-running sink per warehouse, each with its checkpoint; stopped with Ctrl-C (SIGINT) at the end."""
    sinks = []
    try:
        for landing in stack["landings"]:
            command = [
                sys.executable,
                "-m",
                "uniview.sink",
                "--format",
                "debezium",
                "--input",
                f"kafka://{stack['bootstrap']}/?pattern=shop[0-9]+\\.public\\..*",
                *landing.sink_args,
                "--stream",
                "--checkpoint",
                str(stack["work"] / f"ckpt-{landing.name}"),
                "--trigger-interval",
                "1 second",
                "--notify",
                landing.notify,
                "--master",
                "local[1]",
                "--json",
            ]
            log = stack["work"] / f"sink-{landing.name}.log"
            with open(log, "w") as stderr:
                process = subprocess.Popen(
                    command, stdout=subprocess.PIPE, stderr=stderr, text=True, env={**os.environ, **landing.sink_env}
                )
            sinks.append(StreamingSink(landing, process, log))
        yield sinks
    finally:
        for sink in sinks:
            if sink.process.poll() is None:
                sink.process.send_signal(signal.SIGINT)
        for sink in sinks:
            try:
                sink.process.wait(timeout=120)
            except subprocess.TimeoutExpired:
                sink.process.kill()


def stopped_summary(sink: StreamingSink) -> dict:
    """Stop a running sink as Ctrl-C does; its exit code must be 0 and its summary what it landed."""
    assert sink.process.poll() is None, (sink.landing.name, "the sink stopped by itself", sink.tail())
    sink.process.send_signal(signal.SIGINT)
    out, _ = sink.process.communicate(timeout=120)
    assert sink.process.returncode == 0, (sink.landing.name, sink.tail())
    return json.loads(out)


def changes_in_view(landing, database, table):
    """(changes, changes with a sequence, distinct sequences, the database column's values) in the unified view."""
    (row,) = landing.read(
        f"SELECT count(*), count(_cdc_sequence), count(DISTINCT _cdc_sequence), "
        f"{landing.distinct_list}(DISTINCT _cdc_database) FROM {database}_unified.{table}_unified"
    )
    return tuple(row[:3]) + (list(row[3]),)


def view_mismatches(stack, events) -> list:
    """What differs, per warehouse, source database and table, between the source and the views."""
    mismatches = []
    for landing in stack["landings"]:
        for database in DATABASES:
            for table in ("customer", "orders"):
                columns = source_columns(stack["postgres"], database, table)
                if not source_rows(stack["postgres"], database, table) and events.get((database, table), 0) == 0:
                    continue
                expected = normalized(source_rows(stack["postgres"], database, table))
                try:
                    through_view = normalized(landing.read(current_rows_sql(database, table, columns)))
                    changes = changes_in_view(landing, database, table)
                except Exception as error:  # a view the function has not created or refreshed yet
                    mismatches.append((landing.name, database, table, f"{type(error).__name__}: {error}"[:300]))
                    continue
                if through_view != expected:
                    mismatches.append((landing.name, database, table, "current rows", through_view, expected))
                wanted = events[(database, table)]
                if changes != (wanted, wanted, wanted, [database]):
                    mismatches.append((landing.name, database, table, "changes", changes, wanted))
    return mismatches


def wait_until_views_match_sources(stack, sinks, events, timeout=180):
    """Until every view agrees with its source table and holds each change once; fails with the differences."""
    deadline = time.monotonic() + timeout
    while mismatches := view_mismatches(stack, events):
        for sink in sinks:
            assert sink.process.poll() is None, (sink.landing.name, "the sink stopped", sink.tail())
        assert time.monotonic() < deadline, (mismatches, [sink.tail() for sink in sinks])
        time.sleep(1)


def step(stack, sinks, events, database, table, statements, changes):
    run(stack["postgres"], database, *statements)
    events[(database, table)] = events.get((database, table), 0) + changes
    wait_for_events(stack["bootstrap"], sum(events.values()))
    wait_until_views_match_sources(stack, sinks, events)


def test_postgres_changes_reach_the_unified_views_step_by_step(stack):
    events: dict = {}
    with streaming_sinks(stack) as sinks:
        step(
            stack,
            sinks,
            events,
            "shop1",
            "customer",
            [
                "INSERT INTO customer VALUES (1, 'Ann', 10), (2, 'Bob', 20), (3, 'Cy', 30)",
                "UPDATE customer SET name = 'Bobby' WHERE id = 2",
                "DELETE FROM customer WHERE id = 3",
            ],
            5,
        )
        step(
            stack,
            sinks,
            events,
            "shop1",
            "customer",
            [
                "ALTER TABLE customer ADD COLUMN email text",
                "INSERT INTO customer VALUES (4, 'Dee', 40, 'dee@example.com')",
                "UPDATE customer SET email = 'ann@example.com' WHERE id = 1",
            ],
            2,
        )
        step(
            stack,
            sinks,
            events,
            "shop1",
            "customer",
            [
                "ALTER TABLE customer ALTER COLUMN score TYPE bigint",
                "UPDATE customer SET score = 3000000000 WHERE id = 4",
            ],
            1,
        )
        step(
            stack,
            sinks,
            events,
            "shop1",
            "customer",
            [
                "ALTER TABLE customer ALTER COLUMN score TYPE numeric(12,2)",
                "UPDATE customer SET score = 12.34 WHERE id = 2",
            ],
            1,
        )
        step(
            stack,
            sinks,
            events,
            "shop1",
            "customer",
            ["ALTER TABLE customer DROP COLUMN name", "INSERT INTO customer VALUES (5, 50.5, 'eve@example.com')"],
            1,
        )
        step(
            stack,
            sinks,
            events,
            "shop2",
            "customer",
            ["INSERT INTO customer VALUES (1, 'Other Ann', 99)", "UPDATE customer SET score = 100 WHERE id = 1"],
            2,
        )
        run(
            stack["postgres"],
            "shop2",
            "BEGIN; INSERT INTO customer VALUES (2, 'Tx', 1); INSERT INTO orders VALUES (1, 2, 19.99); COMMIT",
        )
        events[("shop2", "customer")] += 1
        events[("shop2", "orders")] = 1
        wait_for_events(stack["bootstrap"], sum(events.values()))
        wait_until_views_match_sources(stack, sinks, events)
        for sink in sinks:
            summary = stopped_summary(sink)
            assert (summary["written"], summary["quarantined"], summary["pending"]) == (sum(events.values()), 0, []), (
                sink.landing.name,
                summary,
            )
            assert summary["read"] == summary["written"] + summary["skipped"], (sink.landing.name, summary)
            assert summary["stopped_by"] == "SIGINT", (sink.landing.name, summary)


def test_the_postgres_demo_shows_views_equal_to_the_source(kafka_bootstrap, tmp_path):
    """`uniview demo --source postgres` starts its own stack and says, after each step, that they agree."""
    done = subprocess.run(
        [sys.executable, "-m", "uniview.cli", "demo", "--source", "postgres", "--workdir", str(tmp_path / "demo")],
        capture_output=True,
        text=True,
        timeout=800,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    agreed = done.stdout.count("customer_current equals the source table")
    assert agreed == 7 and "differ" not in done.stdout
