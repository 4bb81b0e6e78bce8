"""`uniview demo --source postgres`: a real database through the real CDC stack, on this machine.

PostgreSQL (logical decoding) with two source databases -> Debezium's PostgreSQL connector on
Kafka Connect -> a Kafka broker -> the Spark sink (`--format debezium`, incremental runs) -> DuckDB
-> the Cloud Function under functions-framework -> `cdc_unified.<table>_unified` and `<table>_current`, both
databases in the sink's shared dataset.  After each step of changes (DML, a new column, a type change) it prints
each source table next to its database's rows of `<table>_current`.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import duckdb
from rich.console import Console
from rich.table import Table

from uniview.core.landing_layout import DATABASE, DEFAULT_DATASET
from uniview.demo.pipeline import new_spark_session
from uniview.demo.stages import StageClock
from uniview.warehouse.duckdb_connection import string_literal
from uniview.warehouse.url import duckdb_url

DATABASES = ("shop1", "shop2")
TABLE = "customer"

#: (database, statements, change events they publish), run in order.
STEPS: tuple[tuple[str, tuple[str, ...], int], ...] = (
    (
        "shop1",
        (
            "INSERT INTO customer VALUES (1, 'Ann', 10.50), (2, 'Bob', 20.00), (3, 'Cy', 30.25)",
            "UPDATE customer SET name = 'Bobby' WHERE id = 2",
            "DELETE FROM customer WHERE id = 3",
        ),
        5,
    ),
    ("shop2", ("INSERT INTO customer VALUES (1, 'Other Ann', 99.99)",), 1),
    (
        "shop1",
        ("ALTER TABLE customer ADD COLUMN email text", "INSERT INTO customer VALUES (4, 'Dee', 40, 'dee@example.com')"),
        1,
    ),
    (
        "shop1",
        (
            "ALTER TABLE customer ALTER COLUMN balance TYPE numeric(14,4)",
            "UPDATE customer SET balance = 1234.5678 WHERE id = 1",
        ),
        1,
    ),
)


def current_rows_sql(dataset: str, table: str, columns: Sequence[str], database: str | None = None) -> str:
    """The source table's columns read through `<dataset>_unified.<table>_current` (DuckDB SQL): the rows of
    source `database` in a shared dataset, every row when the dataset is the database's own (None)."""
    tenant = "" if database is None else f" WHERE {DATABASE} = {string_literal(database)}"
    return f"SELECT {', '.join(columns)} FROM {dataset}_unified.{table}_current{tenant} ORDER BY id"


@dataclass
class PostgresDemo:
    """The running stack: the database server, Kafka, the function, a Spark session, the work folder.

    What depends on the database server is in the methods below `_start_source`; `uniview demo --source mysql`
    (uniview/demo/mysql_source.py) overrides them.
    """

    workdir: Path
    console: Console
    source_name: ClassVar[str] = "PostgreSQL"
    source_option: ClassVar[str] = "postgres"  # `uniview demo --source postgres`
    steps: ClassVar[tuple[tuple[str, tuple[str, ...], int], ...]] = STEPS
    #: the first part of the Debezium topics (one connector per database here) and the sink's topic pattern
    topic_prefixes: ClassVar[tuple[str, ...]] = DATABASES
    input_pattern: ClassVar[str] = "shop[0-9]+\\.public\\..*"

    @property
    def warehouse(self) -> Path:
        return self.workdir / f"uniview-{self.source_option}-demo.duckdb"

    @property
    def run_dir(self) -> Path:
        """This run's disposable state: Kafka's data, Kafka Connect's offsets, the sink's checkpoint, the logs."""
        return self.workdir / f"{self.source_option}-run"

    def _clear_previous_run(self) -> None:
        """Start from nothing: a run's state only makes sense with the servers it ran with, which are gone."""
        import shutil

        shutil.rmtree(self.run_dir, ignore_errors=True)
        for leftover in (self.warehouse, self.warehouse.with_suffix(".duckdb.wal")):
            leftover.unlink(missing_ok=True)
        self.run_dir.mkdir(parents=True)

    def run(self) -> dict[str, float]:
        clock = StageClock(self.console)
        with ExitStack() as stack:
            with clock.stage(f"1. Start {self.source_name}, Kafka, Debezium, the function and Spark"):
                self._start(stack)
            for number, (database, statements, _) in enumerate(self.steps, start=2):
                with clock.stage(f"{number}. {database}: " + "; ".join(statements)[:110]):
                    self._step(database, statements, number - 1)
        return clock.seconds

    def _start(self, stack: ExitStack) -> None:
        """Start the servers side by side where one does not need the other: the source server beside the Kafka
        broker, then Kafka Connect (until its connectors' snapshots end) beside the function and Spark."""
        from concurrent.futures import ThreadPoolExecutor

        from uniview.local.function_server import function_server
        from uniview.local.java_stack import spark_kafka_jars
        from uniview.local.kafka import kafka_broker

        self._clear_previous_run()
        with ThreadPoolExecutor(max_workers=1) as pool:
            source = pool.submit(self._start_source, stack)
            self.bootstrap = stack.enter_context(kafka_broker(self.run_dir))
            address = source.result()
        with ThreadPoolExecutor(max_workers=1) as pool:
            connect = pool.submit(self._start_capture, stack)
            env = {
                "UNIVIEW_WAREHOUSE": duckdb_url(self.warehouse),
                "UNIVIEW_POLICY": "widen",
                "UNIVIEW_CURRENT": "true",
            }
            self.function = stack.enter_context(function_server(self.run_dir, env))
            self.spark = new_spark_session(spark_kafka_jars())
            stack.callback(self.spark.stop)
            snapshotted = connect.result()
        self.console.print(
            f"{self.source_name} {address}, Kafka {self.bootstrap}, "
            f"function {self.function.url}, warehouse {self.warehouse}"
        )
        self.console.print(f"Debezium's initial snapshot ended (connector {', '.join(snapshotted)})")

    def _start_capture(self, stack: ExitStack) -> list[str]:
        """Run Kafka Connect with the connectors, until their initial snapshots have ended (a change made while a
        snapshot reads may be read by it and streamed again, so the steps' statements run after it); their names."""
        from uniview.local.kafka import debezium_connect, wait_for_snapshots, with_snapshot_notifications

        connectors = [with_snapshot_notifications(connector) for connector in self._connectors()]
        stack.enter_context(debezium_connect(self.run_dir, self.bootstrap, connectors))
        names = [str(connector["name"]) for connector in connectors]
        wait_for_snapshots(self.bootstrap, names)
        return names

    def _start_source(self, stack: ExitStack) -> str:
        """Start the database server with DATABASES, each with an empty `customer`; its address."""
        import psycopg

        from uniview.local.postgres import postgres_server

        self.postgres = stack.enter_context(postgres_server(self.run_dir))
        with psycopg.connect(self.postgres.dsn(), autocommit=True) as connection:
            for database in DATABASES:
                connection.execute(f"CREATE DATABASE {database}")
        for database in DATABASES:
            self._sql(database, "CREATE TABLE customer (id int PRIMARY KEY, name text, balance numeric(10,2))")
        return f"127.0.0.1:{self.postgres.port}"

    def _connectors(self) -> list[dict[str, object]]:
        from uniview.local.postgres_publication import captured_connector

        return [captured_connector(self.postgres, db, db) for db in DATABASES]

    def _source_table(self, database: str) -> tuple[list[str], list[tuple]]:
        """(column names, rows) of `SELECT *` on the source table, in key order."""
        import psycopg

        with psycopg.connect(self.postgres.dsn(database)) as connection:
            cursor = connection.execute(f"SELECT * FROM {TABLE} ORDER BY id")
            return [column.name for column in cursor.description or []], [tuple(row) for row in cursor.fetchall()]

    def _sql(self, database: str, *statements: str) -> None:
        import psycopg

        with psycopg.connect(self.postgres.dsn(database), autocommit=True) as connection:
            for statement in statements:
                connection.execute(statement)

    def _step(self, database: str, statements: Sequence[str], done: int) -> None:
        from uniview.local.kafka import wait_for_change_events
        from uniview.sink.job import SinkOptions, run

        self._sql(database, *statements)
        wait_for_change_events(self.bootstrap, self.topic_prefixes, sum(events for _, _, events in self.steps[:done]))
        options = SinkOptions(
            input=f"kafka://{self.bootstrap}/?pattern={self.input_pattern}",
            warehouse=duckdb_url(self.warehouse),
            format="debezium",
            stream=True,
            checkpoint=str(self.run_dir / "checkpoint"),
            available_now=True,
            notify=self.function.url,
        )
        result = run(self.spark, options)
        if result.stopped_by:  # Ctrl-C stopped the stream cleanly; the demo ends there
            raise KeyboardInterrupt
        self.console.print(
            f"sink: read {result.counts.read} = written {result.counts.total_written} + "
            f"quarantined {result.counts.total_quarantined} + skipped {result.counts.total_skipped}; {len(result.sent)} new version(s) announced"
        )
        for shown in DATABASES:
            self._compare(shown)

    def _compare(self, database: str) -> None:
        columns, source = self._source_table(database)
        if not source:
            return
        with duckdb.connect(str(self.warehouse), read_only=True) as connection:
            through_view = [
                tuple(row)
                for row in connection.execute(current_rows_sql(DEFAULT_DATASET, TABLE, columns, database)).fetchall()
            ]
        table = Table(
            title=f"{database}.{TABLE} in {self.source_name}  |  {DEFAULT_DATASET}_unified.{TABLE}_current "
            f"of {database}",
            title_justify="left",
        )
        for column in columns:
            table.add_column(f"source {column}")
        for column in columns:
            table.add_column(f"view {column}", style="cyan")
        for index in range(max(len(source), len(through_view))):
            left = source[index] if index < len(source) else ("",) * len(columns)
            right = through_view[index] if index < len(through_view) else ("",) * len(columns)
            table.add_row(*map(str, left), *map(str, right))
        self.console.print(table)
        same = normalized(source) == normalized(through_view)
        self.console.print(
            f"[green]{TABLE}_current equals the source table[/green]"
            if same
            else f"[red]{TABLE}_current differs from the source table[/red]"
        )


def normalized(rows: Sequence[tuple]) -> list[tuple]:
    """Rows with every number as a Decimal, so 10.5 (NUMERIC(10,2)) equals 10.500000000 (widened NUMERIC)."""
    from decimal import Decimal

    return [
        tuple(Decimal(str(v)) if isinstance(v, (Decimal, float, int)) and not isinstance(v, bool) else v for v in row)
        for row in rows
    ]
