"""`uniview demo --source mysql`: MariaDB's binary log through the real CDC stack, on this machine.

MariaDB (binary log in ROW format with the FULL row image; Debian's mariadb-server) with two
source databases -> Debezium's MySQL connector on Kafka Connect (one connector for the server) -> a Kafka
broker -> the Spark sink (`--format debezium`, incremental runs) -> DuckDB -> the Cloud Function under
functions-framework -> `cdc_unified.<table>_unified` and `<table>_current`.  The same steps as
`--source postgres` (uniview/demo/postgres_source.py), in MySQL's dialect.
"""

from __future__ import annotations

from contextlib import ExitStack
from typing import Any, ClassVar

from uniview.demo.postgres_source import DATABASES, TABLE, PostgresDemo

#: the Debezium topics are `<PREFIX>.<database>.<table>`; the schema-change topic `<PREFIX>` is not read
PREFIX = "mariadb"

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
        (
            "ALTER TABLE customer ADD COLUMN email varchar(100)",
            "INSERT INTO customer VALUES (4, 'Dee', 40, 'dee@example.com')",
        ),
        1,
    ),
    (
        "shop1",
        (
            "ALTER TABLE customer MODIFY balance decimal(14,4)",
            "UPDATE customer SET balance = 1234.5678 WHERE id = 1",
        ),
        1,
    ),
)


class MySQLDemo(PostgresDemo):
    """The PostgreSQL demo's stack and steps, with MariaDB and Debezium's MySQL connector as the source."""

    source_name: ClassVar[str] = "MariaDB"
    source_option: ClassVar[str] = "mysql"
    steps: ClassVar[tuple[tuple[str, tuple[str, ...], int], ...]] = STEPS
    topic_prefixes: ClassVar[tuple[str, ...]] = (PREFIX,)
    input_pattern: ClassVar[str] = f"{PREFIX}\\.shop[0-9]+\\..*"

    def _start_source(self, stack: ExitStack) -> str:
        from uniview.local.mariadb import mariadb_server

        self.mariadb = stack.enter_context(mariadb_server(self.run_dir))
        for database in DATABASES:
            self.mariadb.execute(
                f"CREATE DATABASE {database}",
                f"CREATE TABLE {database}.customer (id int PRIMARY KEY, name varchar(100), balance decimal(10,2))",
            )
        return f"127.0.0.1:{self.mariadb.port}"

    def _connectors(self) -> list[dict[str, object]]:
        from uniview.local.kafka import mysql_connector

        server = self.mariadb
        return [
            mysql_connector(
                PREFIX,
                server.host,
                server.port,
                DATABASES,
                server.connector_user,
                server.connector_password,
                self.bootstrap,
            )
        ]

    def _connect(self, database: str) -> Any:  # PyMySQL ships no types
        import pymysql

        return pymysql.connect(unix_socket=str(self.mariadb.socket), user="root", database=database, autocommit=True)

    def _source_table(self, database: str) -> tuple[list[str], list[tuple]]:
        with self._connect(database) as connection, connection.cursor() as cursor:
            cursor.execute(f"SELECT * FROM {TABLE} ORDER BY id")
            columns = [column[0] for column in cursor.description or []]
            return columns, [tuple(row) for row in cursor.fetchall()]

    def _sql(self, database: str, *statements: str) -> None:
        with self._connect(database) as connection, connection.cursor() as cursor:
            for statement in statements:
                cursor.execute(statement)
