"""A DELETE lands whatever its before image holds outside the key: a row is landed, an UPDATE sets a value BigQuery
cannot hold (MariaDB's TIME '24:00:01', PostgreSQL's date '10000-01-01') and is quarantined, then the row is
deleted, and the DELETE's before image carries the same value.  The DELETE lands, with that column NULL and named in
its `_cdc_unavailable`, so `<table>_current` no longer shows the row; a DELETE whose key does not fit is still
quarantined.  From uniview's envelope and from Debezium's change events (whose converter leaves such a value as it
came), through the real sink into DuckDB; BigQuery's rendering of the same typing is held to DuckDB's by
tests/zetasql/test_zetasql_load_typing.py and tests/sink/test_sink_bigquery_typing.py."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest
from postgres_changes import MODES, current, envelope_schema, refresh
from sink_support import query, record, write_ndjson
from test_ddl_renames import kcat

from uniview.sink.job import SinkOptions, run
from uniview.warehouse.url import duckdb_url

SCHEMA = [("id", "int(11)"), ("t", "time"), ("d", "date"), ("name", "varchar(20)")]
#: (operation, row) in log order: rows 1 and 2 are updated to a value BigQuery cannot hold, then deleted; row 3
#: stays; a DELETE whose key does not fit is quarantined.
CHANGES: list[tuple[str, dict]] = [
    ("INSERT", {"id": 1, "t": "10:00:00", "d": "2024-01-01", "name": "a"}),
    ("INSERT", {"id": 2, "t": "11:00:00", "d": "2024-01-02", "name": "b"}),
    ("INSERT", {"id": 3, "t": "12:00:00", "d": "2024-01-03", "name": "c"}),
    ("UPDATE", {"id": 1, "t": "24:00:01", "d": "2024-01-01", "name": "a2"}),
    ("UPDATE", {"id": 2, "t": "11:00:00", "d": "10000-01-01", "name": "b2"}),
    ("DELETE", {"id": 1, "t": "24:00:01", "d": "2024-01-01", "name": "a2"}),
    ("DELETE", {"id": 2, "t": "11:00:00", "d": "10000-01-01", "name": "b2"}),
    ("DELETE", {"id": "x", "t": "24:00:01", "d": "2024-01-01", "name": "x"}),
]
#: Debezium's operation letters, and its value of each column (TIME as MicroTime, DATE as days since the epoch).
_OPS = {"INSERT": "c", "UPDATE": "u", "DELETE": "d"}
_EPOCH_DAYS = {"2024-01-01": 19723, "2024-01-02": 19724, "2024-01-03": 19725, "10000-01-01": 2932897}
_MICROS = {"10:00:00": 36_000_000_000, "11:00:00": 39_600_000_000, "12:00:00": 43_200_000_000}


def envelope_lines() -> list[dict]:
    return [
        record(
            "customer",
            row,
            SCHEMA,
            operation=operation,
            position=f"mysql-bin.000001:{100 + number}",
            timestamp="2024-05-01T10:00:00Z",
            primary_key=["id"],
        )
        for number, (operation, row) in enumerate(CHANGES)
    ]


def debezium_event(number: int, operation: str, row: dict) -> tuple[str, dict]:
    """(a MariaDB connector's change event, its message key) for one change (an id "x" is sent as it is)."""
    values = {
        "id": row["id"],
        "t": _MICROS.get(row["t"], 86_401_000_000),  # MariaDB's TIME '24:00:01'
        "d": _EPOCH_DAYS[row["d"]],
        "name": row["name"],
    }
    fields = [
        {"field": "id", "type": "int32"},
        {"field": "t", "type": "int64", "optional": True, "name": "io.debezium.time.MicroTime"},
        {"field": "d", "type": "int32", "optional": True, "name": "io.debezium.time.Date"},
        {"field": "name", "type": "string", "optional": True},
    ]
    schema = envelope_schema("shop.shop.customer.Value", fields)
    source = {
        "connector": "mysql",
        "db": "shop",
        "table": "customer",
        "file": "mysql-bin.000001",
        "pos": 100 + number,
        "row": 0,
        "ts_ms": 1_714_557_600_000 + number,
    }
    deleted = operation == "DELETE"
    payload = {"before": values if deleted else None, "after": None if deleted else values, "source": source}
    payload["op"] = _OPS[operation]
    key = {"schema": {"type": "struct", "fields": [fields[0]]}, "payload": {"id": row["id"]}}
    return json.dumps({"schema": schema, "payload": payload}), key


def debezium_lines() -> list[str]:
    return [kcat(number, *debezium_event(number, operation, row)) for number, (operation, row) in enumerate(CHANGES)]


def land(spark, directory: Path, lines: Sequence[dict | str], record_format: str) -> tuple[Path, object, str]:
    write_ndjson(directory / "in" / "changes.json", lines)
    warehouse = directory / "w.duckdb"
    options = SinkOptions(
        input=str(directory / "in"), warehouse=duckdb_url(warehouse), dataset="cdc", format=record_format
    )
    result = run(spark, options)
    for mode in MODES:
        refresh(warehouse, mode)
    return warehouse, result, record_format


@pytest.fixture(scope="module", params=["uniview", "debezium"])
def landed(request, spark, tmp_path_factory):
    lines = envelope_lines() if request.param == "uniview" else debezium_lines()
    return land(spark, tmp_path_factory.mktemp(request.param), lines, request.param)


def test_the_deletes_land_and_only_the_updates_and_the_unfit_key_are_quarantined(landed):
    warehouse, result, record_format = landed
    assert result.counts.total_written == 5 and dict(result.counts.quarantined) == {"type_mismatch": 3}
    details = {detail for (detail,) in query(warehouse, "SELECT detail FROM cdc._uniview_quarantine")}
    declared = dict(SCHEMA) if record_format == "uniview" else {"id": "INT64", "t": "TIME", "d": "DATE"}
    assert details == {
        f"values that do not fit: {labels}"
        for labels in (f"t ({declared['t']})", f"d ({declared['d']})", f"id ({declared['id']}), t ({declared['t']})")
    }


@pytest.mark.parametrize("mode", MODES)
def test_current_no_longer_shows_a_deleted_row_whatever_its_before_image_held(landed, mode):
    warehouse, *_ = landed
    assert current(warehouse, mode, "id, name") == [("3", "c")]


def test_the_unified_view_holds_each_delete_with_its_unfit_column_null_and_named(landed):
    warehouse, *_ = landed
    rows = query(
        warehouse,
        "SELECT CAST(id AS VARCHAR), CAST(t AS VARCHAR), CAST(d AS VARCHAR), name, _cdc_unavailable "
        "FROM cdc_view.customer_unified WHERE _cdc_operation = 'DELETE' ORDER BY id",
    )
    assert rows == [("1", None, "2024-01-01", "a2", ["t"]), ("2", "11:00:00", None, "b2", ["d"])]
