"""The demo's readable tables: versions, resolved columns with their casts, sample rows, quarantine, timings."""

from __future__ import annotations

import json

import duckdb
from rich.console import Console
from rich.table import Table

from uniview.demo.pipeline import CURRENT_FAMILIES, DATASET, SOURCE_COLUMN, TARGET_DATASET
from uniview.planning.plan import FamilyPlan, UnifiedColumn
from uniview.warehouse.duckdb_connection import scalar

SAMPLE_ROWS_PER_VERSION = 2


def _table(title: str, *headings: str) -> Table:
    table = Table(title=title, title_justify="left", title_style="bold")
    for heading in headings:
        table.add_column(heading, overflow="fold")
    return table


def versions_table(connection: duckdb.DuckDBPyConnection, plans: list[FamilyPlan]) -> Table:
    table = _table("Version tables per family (creation order)", "family", "version table", "columns", "rows")
    for plan in plans:
        for version in plan.versions:
            rows = scalar(connection, f'SELECT count(*) FROM "{DATASET}"."{version.table_name}"')
            table.add_row(plan.family, version.table_name, str(len(version.columns)), str(rows))
        table.add_section()
    return table


def _conversion(column: UnifiedColumn) -> str:
    distinct = list(dict.fromkeys(t.base() for t in column.source_types))
    if distinct == [column.type]:
        return "-"
    if all(t.kind == column.type.kind == "STRUCT" for t in distinct):
        return "STRUCT fields merged; missing fields NULL"
    return " + ".join(map(str, distinct)) + f" -> {column.type}"


def columns_table(plan: FamilyPlan) -> Table:
    table = _table(
        f"{TARGET_DATASET}.{plan.family}_unified: resolved columns", "column", "type", "in versions", "cast applied"
    )
    for column in plan.columns:
        present = sum(1 for v in plan.versions if any(c.name.lower() == column.name.lower() for c in v.columns))
        table.add_row(column.name, str(column.type), f"{present}/{len(plan.versions)}", _conversion(column))
    return table


def _shown(value: object) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, (dict, list)):
        return json.dumps(value, default=str, ensure_ascii=False)
    return str(value)


def sample_table(connection: duckdb.DuckDBPyConnection, plan: FamilyPlan) -> Table:
    """A few rows of every version; the _cdc_ bookkeeping columns are left out for width."""
    names = [c.name for c in plan.columns if not c.name.startswith("_cdc_")] + [SOURCE_COLUMN]
    listed = ", ".join(f'"{name}"' for name in names)
    rows = connection.execute(
        f'SELECT {listed} FROM "{TARGET_DATASET}"."{plan.family}_unified" '
        f'QUALIFY row_number() OVER (PARTITION BY "{SOURCE_COLUMN}" ORDER BY "{SOURCE_COLUMN}") <= {SAMPLE_ROWS_PER_VERSION}'
    ).fetchall()
    created = {version.table_name: index for index, version in enumerate(plan.versions)}
    rows.sort(key=lambda row: (created.get(row[-1], len(created)), _shown(row[0])))
    table = _table(
        f"SELECT ... FROM {TARGET_DATASET}.{plan.family}_unified ({SAMPLE_ROWS_PER_VERSION} rows per version)", *names
    )
    for row in rows:
        table.add_row(*map(_shown, row))
    return table


def history_and_current_tables(connection: duckdb.DuckDBPyConnection, family: str) -> tuple[Table, Table]:
    """Every change of `family` in log order per source database, and `<family>_current` beside it."""
    source = f'"{TARGET_DATASET}"."{family}_unified"'
    shown = ["_cdc_database"] + [
        c
        for (c,) in connection.execute(
            "SELECT column_name FROM duckdb_columns() WHERE schema_name = ? AND table_name = ? ORDER BY column_index",
            [TARGET_DATASET, f"{family}_current"],
        ).fetchall()
        if not c.startswith("_")
    ]
    listed = ", ".join(f'"{c}"' for c in shown)
    history = _table(
        f"SELECT ... FROM {TARGET_DATASET}.{family}_unified ORDER BY _cdc_database, _cdc_sequence (history)",
        *shown,
        "_cdc_operation",
    )
    for row in connection.execute(
        f"SELECT {listed}, _cdc_operation FROM {source} ORDER BY _cdc_database, _cdc_sequence"
    ).fetchall():
        history.add_row(*map(_shown, row))
    current = _table(f"SELECT ... FROM {TARGET_DATASET}.{family}_current (latest row per database and key)", *shown)
    for row in connection.execute(
        f'SELECT {listed} FROM "{TARGET_DATASET}"."{family}_current" ORDER BY _cdc_database, id'
    ).fetchall():
        current.add_row(*map(_shown, row))
    return history, current


def quarantine_table(connection: duckdb.DuckDBPyConnection) -> Table:
    table = _table(f"Quarantine ({DATASET}._uniview_quarantine)", "reason", "records", "example")
    exists = scalar(
        connection,
        "SELECT count(*) FROM duckdb_tables() WHERE schema_name = ? AND table_name = '_uniview_quarantine'",
        [DATASET],
    )
    if exists:
        for reason, count, example in connection.execute(
            f'SELECT reason, count(*), min(left(raw_line, 60)) FROM "{DATASET}"._uniview_quarantine GROUP BY reason ORDER BY reason'
        ).fetchall():
            table.add_row(reason, str(count), example)
    return table


def timings_table(seconds: dict[str, float]) -> Table:
    table = _table("Time per stage", "stage", "seconds")
    for name, value in seconds.items():
        table.add_row(name, f"{value:.1f}")
    table.add_row("[bold]total", f"[bold]{sum(seconds.values()):.1f}")
    return table


def print_report(console: Console, connection: duckdb.DuckDBPyConnection, plans: list[FamilyPlan]) -> None:
    console.print(versions_table(connection, plans))
    for plan in plans:
        console.print(columns_table(plan))
        console.print(sample_table(connection, plan))
        if plan.family in CURRENT_FAMILIES:
            console.print(*history_and_current_tables(connection, plan.family))
    console.print(quarantine_table(connection))
