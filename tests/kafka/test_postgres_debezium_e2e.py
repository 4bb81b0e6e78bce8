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

import shutil
import subprocess
import sys

import pytest
from cdc_e2e_support import CdcSource, assert_stopped_cleanly, running_stack, step, streaming_sinks

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


def postgres_source(server) -> CdcSource:
    return CdcSource(
        databases=DATABASES,
        tables=("customer", "orders"),
        topic_prefixes=DATABASES,
        input_pattern="shop[0-9]+\\.public\\..*",
        run=lambda database, *statements: run(server, database, *statements),
        rows=lambda database, table: source_rows(server, database, table),
        columns=lambda database, table: source_columns(server, database, table),
    )


@pytest.fixture(scope="module")
def stack(postgres, kafka_bootstrap, connector_emulator_env, tmp_path_factory):
    """Debezium publishing both databases, and one sink target + function per warehouse."""
    from uniview.local.kafka import debezium_connect, postgres_connector

    connectors = [postgres_connector(db, postgres.host, postgres.port, db, "postgres") for db in DATABASES]
    with running_stack(
        postgres_source(postgres),
        kafka_bootstrap,
        connector_emulator_env,
        tmp_path_factory.mktemp("cdc"),
        lambda folder: debezium_connect(folder, kafka_bootstrap, connectors),
    ) as running:
        yield running


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
        step(
            stack,
            sinks,
            events,
            "shop2",
            {"customer": 1, "orders": 1},
            ["BEGIN; INSERT INTO customer VALUES (2, 'Tx', 1); INSERT INTO orders VALUES (1, 2, 19.99); COMMIT"],
        )
        assert_stopped_cleanly(sinks, events)


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
