"""From a real database to a queryable view: PostgreSQL (logical decoding) -> Debezium's PostgreSQL
connector on Kafka Connect -> a real Kafka broker -> `uniview sink --format debezium` -> DuckDB ->
notification -> the Cloud Function under functions-framework -> `<table>_unified` and `<table>_current`.

The test drives the database step by step (DML, ADD COLUMN, a type change to bigint and then
numeric(12,2), a dropped column, a second source database, a transaction over two tables) and after
every step checks, per warehouse and source database, that `<table>_current` equals the source table, and that
the unified view holds every change, each with its source database and its own `_cdc_sequence`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

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
#: Every step runs the sink once per warehouse, a dozen Spark processes in all: 7.5 minutes for the step-by-step
#: test alone on a slow 2-core machine, above the suite's 300 s per test.
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
            run(server, database, "CREATE TABLE customer (id int PRIMARY KEY, name text, score int)",
                "CREATE TABLE orders (id int PRIMARY KEY, customer_id int, total numeric(10,2))")
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
        return [r[0] for r in connection.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = %s ORDER BY ordinal_position",
            [table]).fetchall()]


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

    return Landing("bigquery", ["--warehouse", f"bigquery://{DEFAULT_PROJECT}", *options], environment, read,
                   "ARRAY_AGG")


@pytest.fixture(scope="module")
def stack(postgres, kafka_bootstrap, connector_emulator_env, tmp_path_factory):
    """Debezium publishing both databases, and one sink target + function per warehouse."""
    from uniview.local.kafka import debezium_connect, postgres_connector

    work = tmp_path_factory.mktemp("cdc")
    connectors = [postgres_connector(db, postgres.host, postgres.port, db, "postgres") for db in DATABASES]
    warehouse = work / "warehouse.duckdb"
    views = {"UNIVIEW_POLICY": "widen", "UNIVIEW_CURRENT": "true"}
    landings = [duckdb_landing(warehouse), bigquery_landing(connector_emulator_env)]
    function_envs = [{"UNIVIEW_WAREHOUSE": duckdb_url(warehouse), **views},
                     {"UNIVIEW_WAREHOUSE": f"bigquery://{DEFAULT_PROJECT}",
                      "BIGQUERY_EMULATOR_HOST": connector_emulator_env[0]["BIGQUERY_EMULATOR_HOST"], **views}]
    with ExitStack() as running:
        running.enter_context(debezium_connect(work / "connect", kafka_bootstrap, connectors))
        for landing, environment in zip(landings, function_envs):
            landing.notify = running.enter_context(function_server(work / landing.name, environment)).url
        yield {"bootstrap": kafka_bootstrap, "landings": landings, "work": work, "postgres": postgres}


def wait_for_events(bootstrap, count):
    wait_for_change_events(bootstrap, DATABASES, count)


def land(stack):
    """One incremental run of the sink per warehouse over everything Debezium published so far."""
    for landing in stack["landings"]:
        command = [sys.executable, "-m", "uniview.sink", "--format", "debezium",
                   "--input", f"kafka://{stack['bootstrap']}/?pattern=shop[0-9]+\\.public\\..*",
                   *landing.sink_args, "--stream", "--checkpoint", str(stack["work"] / f"ckpt-{landing.name}"),
                   "--available-now", "--notify", landing.notify, "--master", "local[1]", "--quiet"]
        done = subprocess.run(command, capture_output=True, text=True, timeout=300,
                              env={**os.environ, **landing.sink_env})
        assert done.returncode == 0, (landing.name, done.stderr[-3000:])


def changes_in_view(landing, database, table):
    """(changes, changes with a sequence, distinct sequences, the database column's values) in the unified view."""
    (row,) = landing.read(
        f"SELECT count(*), count(_cdc_sequence), count(DISTINCT _cdc_sequence), "
        f"{landing.distinct_list}(DISTINCT _cdc_database) FROM {database}_unified.{table}_unified")
    return tuple(row[:3]) + (list(row[3]),)


def assert_views_match_sources(stack, events):
    for landing in stack["landings"]:
        for database in DATABASES:
            for table in ("customer", "orders"):
                columns = source_columns(stack["postgres"], database, table)
                if not source_rows(stack["postgres"], database, table) and events.get((database, table), 0) == 0:
                    continue
                expected = normalized(source_rows(stack["postgres"], database, table))
                through_view = landing.read(current_rows_sql(database, table, columns))
                assert normalized(through_view) == expected, (landing.name, database, table)
                changes = events[(database, table)]
                assert changes_in_view(landing, database, table) == (changes, changes, changes, [database]), \
                    (landing.name, database, table)


def step(stack, events, database, table, statements, changes):
    run(stack["postgres"], database, *statements)
    events[(database, table)] = events.get((database, table), 0) + changes
    wait_for_events(stack["bootstrap"], sum(events.values()))
    land(stack)
    assert_views_match_sources(stack, events)


def test_postgres_changes_reach_the_unified_views_step_by_step(stack):
    events: dict = {}
    step(stack, events, "shop1", "customer", [
        "INSERT INTO customer VALUES (1, 'Ann', 10), (2, 'Bob', 20), (3, 'Cy', 30)",
        "UPDATE customer SET name = 'Bobby' WHERE id = 2", "DELETE FROM customer WHERE id = 3"], 5)
    step(stack, events, "shop1", "customer", [
        "ALTER TABLE customer ADD COLUMN email text",
        "INSERT INTO customer VALUES (4, 'Dee', 40, 'dee@example.com')",
        "UPDATE customer SET email = 'ann@example.com' WHERE id = 1"], 2)
    step(stack, events, "shop1", "customer", [
        "ALTER TABLE customer ALTER COLUMN score TYPE bigint", "UPDATE customer SET score = 3000000000 WHERE id = 4"], 1)
    step(stack, events, "shop1", "customer", [
        "ALTER TABLE customer ALTER COLUMN score TYPE numeric(12,2)", "UPDATE customer SET score = 12.34 WHERE id = 2"], 1)
    step(stack, events, "shop1", "customer", [
        "ALTER TABLE customer DROP COLUMN name", "INSERT INTO customer VALUES (5, 50.5, 'eve@example.com')"], 1)
    step(stack, events, "shop2", "customer", [
        "INSERT INTO customer VALUES (1, 'Other Ann', 99)", "UPDATE customer SET score = 100 WHERE id = 1"], 2)
    run(stack["postgres"], "shop2", "BEGIN; INSERT INTO customer VALUES (2, 'Tx', 1); "
                                    "INSERT INTO orders VALUES (1, 2, 19.99); COMMIT")
    events[("shop2", "customer")] += 1
    events[("shop2", "orders")] = 1
    wait_for_events(stack["bootstrap"], sum(events.values()))
    land(stack)
    assert_views_match_sources(stack, events)


def test_the_postgres_demo_shows_views_equal_to_the_source(kafka_bootstrap, tmp_path):
    """`uniview demo --source postgres` starts its own stack and says, after each step, that they agree."""
    done = subprocess.run([sys.executable, "-m", "uniview.cli", "demo", "--source", "postgres", "--workdir",
                           str(tmp_path / "demo")], capture_output=True, text=True, timeout=800)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    agreed = done.stdout.count("customer_current equals the source table")
    assert agreed == 7 and "differ" not in done.stdout
