"""The generator's real output, refreshed into a DuckDB file and queried: every conversion kind at once."""

from __future__ import annotations

import math
from datetime import datetime

import duckdb
import pytest

from uniview.ops.refresh import GeneratorOptions, RefreshRequest, refresh
from uniview.warehouse.duckdb import DuckDBWarehouse

V1 = (
    "CREATE TABLE cdc.events_v_1 (id BIGINT, amount DECIMAL(38, 9), price DOUBLE, payload BLOB, tags BIGINT[],"
    " info STRUCT(a BIGINT, b VARCHAR), items STRUCT(sku VARCHAR, qty BIGINT)[], seen TIMESTAMP, meta JSON)"
)
V1_ROW = (
    "INSERT INTO cdc.events_v_1 VALUES (7, 1.50, 'nan', '\\xFFok'::BLOB, [1, 2], {'a': 1, 'b': 'x'},"
    " [{'sku': 'k', 'qty': 2}], '2024-05-01 10:00:00', '{\"k\": [1, 2]}')"
)
V2 = (
    "CREATE TABLE cdc.events_v_2 (id VARCHAR, amount VARCHAR, price DOUBLE, payload VARCHAR, tags VARCHAR[],"
    " info STRUCT(a VARCHAR, c BOOLEAN), items STRUCT(sku VARCHAR, qty DOUBLE)[], seen TIMESTAMPTZ, meta VARCHAR)"
)
V2_ROW = (
    "INSERT INTO cdc.events_v_2 VALUES ('e-2', '3.25', 1.0, 'text', ['x'], {'a': 'q', 'c': true},"
    " [{'sku': 'z', 'qty': 0.5}], '2024-05-01 10:00:00+00', 'plain')"
)
OPTIONS = GeneratorOptions(datetime_timezone="Europe/Paris", source_column="_src")


def run_sql(path, *statements):
    with duckdb.connect(str(path)) as connection:
        for statement in statements:
            connection.execute(statement)


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "events.duckdb"
    run_sql(path, "CREATE SCHEMA cdc", V1, V1_ROW)
    with DuckDBWarehouse(path) as warehouse:
        warehouse.read_columns("cdc")  # records events_v_1 as the first version
    run_sql(path, V2, V2_ROW)
    return path


def refresh_events(path):
    with DuckDBWarehouse(path) as warehouse:
        return refresh(warehouse, RefreshRequest("cdc", ("events",), options=OPTIONS))


def test_every_conversion_kind_reads_as_bigquery_would(db):
    [outcome] = refresh_events(db)
    assert outcome.versions == ["events_v_1", "events_v_2"]
    with duckdb.connect(str(db)) as connection:
        connection.execute("SET TimeZone = 'UTC'")
        columns = connection.execute(
            "SELECT column_name, data_type FROM duckdb_columns() WHERE table_name = 'events_unified'"
        ).fetchall()
        rows = connection.execute("SELECT * FROM cdc_unified.events_unified ORDER BY _src").fetchall()
    assert columns == [
        ("id", "VARCHAR"),
        ("amount", "VARCHAR"),
        ("price", "DOUBLE"),
        ("payload", "VARCHAR"),
        ("tags", "VARCHAR[]"),
        ("info", "STRUCT(a VARCHAR, b VARCHAR, c BOOLEAN)"),
        ("items", "STRUCT(sku VARCHAR, qty VARCHAR)[]"),
        ("seen", "TIMESTAMP WITH TIME ZONE"),
        ("meta", "VARCHAR"),
        ("_src", "VARCHAR"),
    ]
    first, second = rows
    assert math.isnan(first[2])
    assert first[:2] + first[3:8] + first[8:] == (
        "7",
        "1.5",
        "\ufffdok",
        ["1", "2"],
        {"a": "1", "b": "x", "c": None},
        [{"sku": "k", "qty": "2"}],
        datetime.fromisoformat("2024-05-01 08:00:00+00:00"),
        '{"k":[1,2]}',
        "events_v_1",
    )
    assert second == (
        "e-2",
        "3.25",
        1.0,
        "text",
        ["x"],
        {"a": "q", "b": None, "c": True},
        [{"sku": "z", "qty": "0.5"}],
        datetime.fromisoformat("2024-05-01 10:00:00+00:00"),
        "plain",
        "events_v_2",
    )


def test_second_refresh_changes_nothing_and_an_older_translation_is_replaced(db):
    refresh_events(db)
    [again] = refresh_events(db)
    assert not again.changed
    run_sql(db, "COMMENT ON VIEW cdc_unified.events_unified IS 'uniview:sha256:" + "0" * 64 + " duckdb-translation:0'")
    [replaced] = refresh_events(db)
    assert replaced.replaced == ["cdc_unified.events_unified"]
