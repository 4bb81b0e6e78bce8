"""`uniview status`'s reads on a DuckDB warehouse (uniview.warehouse.status_reads): one query each.

Each read is one transaction and releases the file afterwards, so a sink writing the same file
takes its turn between them (DuckDB lets one process write a file at a time).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TypeVar

import duckdb

from uniview.core.landing_layout import PENDING_TABLE, QUARANTINE_TABLE
from uniview.warehouse.duckdb import DuckDBWarehouse
from uniview.warehouse.duckdb_connection import qualified, scalar, string_literal
from uniview.warehouse.status_reads import (
    DAY,
    WEEK,
    ActivityTable,
    PendingNotification,
    QuarantineCount,
    TableActivity,
)

T = TypeVar("T")
_EXISTS = (
    "SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database() AND schema_name = ? "
    "AND table_name = ?"
)


class DuckDBStatusReads:
    def __init__(self, warehouse: DuckDBWarehouse) -> None:
        self.warehouse = warehouse
        #: Statements run, for the bound `uniview status` states (docs/operations-runbook.md).
        self.queries = 0

    def table_activity(self, dataset: str, tables: Sequence[ActivityTable]) -> dict[str, TableActivity]:
        if not tables:
            return {}
        rows_of = " UNION ALL ".join(
            f"SELECT {string_literal(t.name)} AS t, _cdc_ingested_at AS i, "
            f"{'_cdc_database' if t.has_database else 'NULL::VARCHAR'} AS d FROM {qualified(dataset, t.name)}"
            for t in tables
        )
        names = "(VALUES " + ", ".join(f"({string_literal(t.name)})" for t in tables) + ") AS names(t)"
        sql = (  # one aggregate over every table's rows; an empty table gets its row from the names
            f"SELECT names.t, count(r.t), min(r.i), max(r.i), list(DISTINCT r.d) FILTER (WHERE r.d IS NOT NULL) "
            f"FROM {names} LEFT JOIN ({rows_of}) AS r ON r.t = names.t GROUP BY names.t"
        )
        rows = self._read(lambda c: c.execute(sql).fetchall())
        return {
            name: TableActivity(count, first, newest, frozenset(databases or ()))
            for name, count, first, newest, databases in rows
        }

    def quarantine_counts(self, dataset: str, now: datetime) -> list[QuarantineCount]:
        def read(connection: duckdb.DuckDBPyConnection) -> list[tuple]:
            if not scalar(connection, _EXISTS, [dataset, QUARANTINE_TABLE]):
                return []
            return connection.execute(
                f"SELECT table_name, reason, count(*) FILTER (WHERE quarantined_at >= ?), count(*) "
                f"FROM {qualified(dataset, QUARANTINE_TABLE)} WHERE quarantined_at >= ? GROUP BY ALL ORDER BY ALL",
                [now - DAY, now - WEEK],
            ).fetchall()

        return [QuarantineCount(*row) for row in self._read(read)]

    def pending_notifications(self, dataset: str) -> list[PendingNotification] | None:
        def read(connection: duckdb.DuckDBPyConnection) -> list[tuple]:
            if not scalar(connection, _EXISTS, ["main", PENDING_TABLE]):
                return []
            catalog = scalar(connection, "SELECT current_database()")
            return connection.execute(
                f"SELECT table_name, version, created_at FROM {qualified(catalog, 'main', PENDING_TABLE)} "
                "WHERE dataset = ? ORDER BY created_at",
                [dataset],
            ).fetchall()

        return [PendingNotification(*row) for row in self._read(read)]

    def view_times(self, dataset: str) -> dict[str, datetime]:
        """DuckDB's catalog records no time of a view's change."""
        return {}

    def _read(self, read: Callable[[duckdb.DuckDBPyConnection], T]) -> T:
        self.queries += 1
        try:
            with self.warehouse.transaction() as connection:
                return read(connection)
        finally:
            self.warehouse.close()
