"""Consolidation's statements on a DuckDB warehouse: the registry, the consolidated table, the moves.

Each method is one transaction and releases the file afterwards, so that a sink writing the same
file takes its turn between the steps (DuckDB lets one process write a file at a time).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from uniview.core.schema import TableVersion
from uniview.planning.consolidation import (
    DROPPED,
    MOVED,
    FoldPlan,
    FoldRecord,
    consolidated_description,
    folded_primary_key,
    move_select,
)
from uniview.planning.plan import GeneratorOptions
from uniview.warehouse.duckdb import DuckDBWarehouse, column_types
from uniview.warehouse.duckdb_connection import qualified, scalar, string_literal
from uniview.warehouse.duckdb_folds import last_written, mark_many, read_folds, record_planned, row_counts
from uniview.warehouse.duckdb_sql import to_duckdb
from uniview.warehouse.duckdb_types import duckdb_type


class DuckDBFolding:
    """The I/O of `uniview consolidate` on one DuckDB file."""

    def __init__(self, warehouse: DuckDBWarehouse) -> None:
        self.warehouse = warehouse

    def folds(self, dataset: str, family: str | None = None) -> list[FoldRecord]:
        try:
            with self.warehouse.transaction() as connection:
                return read_folds(connection, dataset, family)
        finally:
            self.warehouse.close()

    def last_written(self, dataset: str) -> dict[str, datetime]:
        try:
            with self.warehouse.transaction() as connection:
                return last_written(connection, dataset)
        finally:
            self.warehouse.close()

    def size(self, dataset: str, tables: Sequence[str]) -> tuple[int, int | None]:
        """(rows, bytes) of `tables`; DuckDB keeps no per-table byte count, so bytes are None."""
        return sum(self._row_counts(dataset, tables).values()), None

    def _row_counts(self, dataset: str, tables: Sequence[str]) -> dict[str, int]:
        try:
            with self.warehouse.transaction() as connection:
                return row_counts(connection, dataset, tables)
        finally:
            self.warehouse.close()

    def record(self, plan: FoldPlan, successors: dict[str, str]) -> None:
        """Create the consolidated table (empty, its description recording the folded versions' key, which
        `<table>_current` reads) and a `planned` registry row per version, in one transaction."""
        definitions = ", ".join(f"{qualified(name)} {duckdb_type(bq_type)}" for name, bq_type in plan.table_definition)
        description = consolidated_description(plan.family, folded_primary_key(plan, self.warehouse.read_primary_keys))
        table = qualified(plan.dataset, plan.consolidated_table)
        try:
            with self.warehouse.transaction() as connection:
                connection.execute(f"CREATE TABLE IF NOT EXISTS {table} ({definitions})")
                connection.execute(f"COMMENT ON TABLE {table} IS {string_literal(description)}")
                record_planned(connection, plan.dataset, plan.family, plan.consolidated_table, successors)
        finally:
            self.warehouse.close()

    def move(self, plan: FoldPlan, batch: Sequence[TableVersion], options: GeneratorOptions) -> int:
        """In one transaction, for each version: copy its rows into the consolidated table, delete them,
        mark it `moved`.  The number of rows moved."""
        moved: dict[str, int] = {}
        target = qualified(plan.dataset, plan.consolidated_table)
        try:
            with self.warehouse.transaction() as connection:
                types = column_types(connection)
                for version in batch:
                    select = to_duckdb(move_select(plan, version, options), types)
                    source = qualified(plan.dataset, version.table_name)
                    rows = scalar(connection, f"INSERT INTO {target} {select}")
                    deleted = scalar(connection, f"DELETE FROM {source}")
                    if deleted != rows:
                        raise AssertionError(f"{source}: {rows} rows copied but {deleted} deleted")
                    moved[version.table_name] = rows
                mark_many(connection, plan.dataset, moved, MOVED)
        finally:
            self.warehouse.close()
        return sum(moved.values())

    def holding_rows(self, dataset: str, tables: Sequence[str]) -> set[str]:
        """The `tables` that hold rows."""
        return {table for table, rows in self._row_counts(dataset, tables).items() if rows}

    def settle(self, dataset: str, records: Sequence[FoldRecord], settle: object) -> list[str]:
        """Nothing to settle: one process writes the file at a time, so no sink batch can overlap a
        move, and an empty `moved` table leaves discovery at once."""
        return []

    def drop_folded(self, dataset: str, records: Sequence[FoldRecord]) -> list[str]:
        """Drop each `moved` table of `records` that is still empty, marking it `dropped`."""
        dropped = []
        try:
            with self.warehouse.transaction() as connection:
                for record in [r for r in records if r.state == MOVED]:
                    table = qualified(dataset, record.version_table)
                    if scalar(connection, f"SELECT count(*) FROM {table}") == 0:
                        connection.execute(f"DROP TABLE {table}")
                        dropped.append(record.version_table)
                mark_many(connection, dataset, dict.fromkeys(dropped), DROPPED)
        finally:
            self.warehouse.close()
        return dropped
