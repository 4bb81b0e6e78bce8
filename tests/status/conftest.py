"""The scenario of tests/status/scenario.py in a DuckDB file, built once per module."""

from __future__ import annotations

import sys
from pathlib import Path

import duckdb
import pytest

sys.path.insert(0, str(Path(__file__).parent))

from scenario import FAMILIES, PENDING, QUARANTINE, Table, over_limit_tables

from uniview.landing_layout import CDC_COLUMNS
from uniview.plan import GeneratorOptions
from uniview.refresh import RefreshRequest, refresh
from uniview.types import parse_type
from uniview.warehouse import open_warehouse
from uniview.warehouse.duckdb_types import duckdb_type
from uniview.warehouse.url import duckdb_url

DATASET = "cdc"


def create_duckdb(connection: duckdb.DuckDBPyConnection, tables: list[Table]) -> None:
    for table in tables:
        columns = [*table.columns, *CDC_COLUMNS]
        definitions = ", ".join(f'"{name}" {duckdb_type(parse_type(bq))}' for name, bq in columns)
        connection.execute(f'CREATE TABLE {DATASET}."{table.name}" ({definitions})')
        for database, ingested in table.rows:
            connection.execute(
                f'INSERT INTO {DATASET}."{table.name}" ("_cdc_database", "_cdc_ingested_at") VALUES (?, ?)',
                [database, ingested],
            )


def land_bookkeeping(path: Path) -> None:
    """The quarantine and the pending notifications, through the DuckDB landing's own DDL and store."""
    pytest.importorskip("pyspark", reason="the sink's landing needs pyspark (uniview[spark])")
    from uniview.sink.landing_duckdb import DuckDBLanding, _ensure_quarantine, catalog_of
    from uniview.sink.landing_duckdb import path as qualified
    from uniview.sink.notify import Notification

    landing = DuckDBLanding(str(path))
    with landing.connect() as connection:
        catalog = catalog_of(connection)
        _ensure_quarantine(connection, catalog, DATASET)
        for table, reason, when in QUARANTINE:
            connection.execute(
                f"INSERT INTO {qualified(catalog, DATASET, '_uniview_quarantine')} (raw_line, reason, table_name, "
                "quarantined_at) VALUES ('{}', ?, ?, ?)",
                [reason, table, when],
            )
    landing.pending.add([Notification(DATASET, table, version) for table, version, _ in PENDING])
    with landing.connect() as connection:
        for table, version, since in PENDING:
            connection.execute(
                f"UPDATE {qualified(catalog, 'main', '_uniview_pending_notifications')} SET created_at = ? "
                "WHERE table_name = ? AND version = ?",
                [since, table, version],
            )


@pytest.fixture(scope="module")
def warehouse_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("status") / "warehouse.duckdb"
    with duckdb.connect(str(path)) as connection:
        connection.execute("SET TimeZone = 'UTC'")
        connection.execute(f"CREATE SCHEMA {DATASET}")
        create_duckdb(connection, [t for before, _ in FAMILIES.values() for t in before])
        create_duckdb(connection, over_limit_tables())
    with open_warehouse(duckdb_url(path)) as warehouse:
        outcomes = refresh(warehouse, RefreshRequest(DATASET, tuple(FAMILIES), options=GeneratorOptions()))
    assert not [o for o in outcomes if o.failed], outcomes
    with duckdb.connect(str(path)) as connection:
        connection.execute("SET TimeZone = 'UTC'")
        create_duckdb(connection, [t for _, after in FAMILIES.values() for t in after])
    land_bookkeeping(path)
    return path
