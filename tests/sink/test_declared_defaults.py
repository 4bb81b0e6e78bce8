"""A column's declared default and nullability travel from Debezium's value schema (or metadata.schema) to
the version table's description, where `<table>_current` reads them; neither changes the version."""

from __future__ import annotations

import json
from pathlib import Path

from sink_support import query, record, write_ndjson

from uniview.core.version_description import described_defaults, described_not_null
from uniview.sink.debezium import convert_event
from uniview.sink.job import SinkOptions, run
from uniview.warehouse.url import duckdb_url

EVENTS = json.loads((Path(__file__).parents[1] / "kafka" / "debezium_postgres_events.json").read_text())


def test_debezium_defaults_are_converted_like_values_and_not_null_is_kept():
    event = json.loads(EVENTS[1]["value"])
    after = next(f for f in event["schema"]["fields"] if f["field"] == "after")
    by_name = {f["field"]: f for f in after["fields"]}
    by_name["name"]["default"] = "open"
    by_name["balance"]["default"] = "MDk="  # Connect's base64 two's complement: 0x3039 = 12345, scale 2
    by_name["born"]["default"] = 1  # epoch days
    entries = {e["name"]: e for e in json.loads(convert_event(json.dumps(event)))["metadata"]["schema"]}
    assert entries["name"]["default"] == "open" and entries["born"]["default"] == "1970-01-02"
    assert entries["balance"]["default"] == "123.45"
    assert entries["id"]["nullable"] is False and "nullable" not in entries["name"]
    assert "default" not in entries["id"]


def test_the_description_records_defaults_and_not_null_without_changing_the_version(spark, tmp_path):
    schema = [{"name": "id", "type": "int", "nullable": False}, {"name": "status", "type": "text", "default": "open"}]
    plain = record("t", {"id": 1, "status": "x"}, [("id", "int"), ("status", "text")], position="1")
    declared = record("t", {"id": 2, "status": "y"}, position="2")
    declared["metadata"]["schema"] = schema
    write_ndjson(tmp_path / "in" / "a.json", [declared])
    write_ndjson(tmp_path / "in2" / "b.json", [plain])
    warehouse = tmp_path / "w.duckdb"
    run(spark, SinkOptions(input=str(tmp_path / "in"), warehouse=duckdb_url(warehouse), dataset="cdc"))
    run(spark, SinkOptions(input=str(tmp_path / "in2"), warehouse=duckdb_url(warehouse), dataset="cdc"))
    [(table, comment)] = query(warehouse, "SELECT table_name, comment FROM duckdb_tables() WHERE schema_name = 'cdc'")
    assert described_defaults(comment) == {"status": "open"} and described_not_null(comment) == ("id",)
    assert query(warehouse, f"SELECT id FROM cdc.{table} ORDER BY id") == [(1,), (2,)]
