"""The scenario of tests/status/status_scenario.py in a DuckDB file, built once per module."""

from __future__ import annotations

import sys
from pathlib import Path

import duckdb
import pytest

sys.path.insert(0, str(Path(__file__).parent))

from status_scenario import DATASET, FAMILIES, PENDING, QUARANTINE, create_duckdb, over_limit_tables

from uniview.ops.refresh import RefreshRequest, refresh
from uniview.planning.plan import GeneratorOptions
from uniview.warehouse import open_warehouse
from uniview.warehouse.url import duckdb_url


def land_bookkeeping(path: Path) -> None:
    """The quarantine and the pending notifications, through the DuckDB landing's own DDL and store."""
    pytest.importorskip("pyspark", reason="the sink's landing needs pyspark (uniview[spark])")
    from uniview.sink.landing_duckdb import DuckDBLanding, _ensure_quarantines, _SchemaCatalog, catalog_of
    from uniview.sink.landing_duckdb import path as qualified
    from uniview.sink.notify import Notification

    landing = DuckDBLanding(str(path))
    with landing.connect() as connection:
        catalog = catalog_of(connection)
        _ensure_quarantines(connection, _SchemaCatalog(connection, catalog), [DATASET])
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
