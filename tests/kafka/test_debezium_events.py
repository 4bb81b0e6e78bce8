"""Debezium change events read as uniview records: real events, produced by Debezium 3.0.8's PostgreSQL
connector (pgoutput, PostgreSQL 15, JsonConverter with schemas) from a row holding most PostgreSQL types:
debezium_postgres_events.json holds a snapshot read, an update, a delete and its tombstone, as published."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from uniview.sink.debezium import convert_event, key_columns

EVENTS = json.loads((Path(__file__).parent / "debezium_postgres_events.json").read_text())


def record(index):
    return json.loads(convert_event(EVENTS[index]["value"]))


def test_values_are_converted_exactly():
    data = record(0)["data"]
    assert data["balance"] == "1234.50"  # Decimal(10,2) from base64 two's complement
    assert data["big"] == "123456789012345678901234.5678"  # 28 digits, exact
    assert data["created_at"] == "2024-01-02 03:04:05.123456"  # MicroTimestamp -> DATETIME
    assert data["seen_at"] == "2024-01-02 01:04:05.500000+00:00"  # ZonedTimestamp (+02 in the source) -> UTC
    assert data["born"] == "1999-12-31"  # epoch days -> DATE
    assert data["wake"] == "13:14:15.500000"  # MicroTime -> TIME
    assert data["big_id"] == 9007199254740993 and data["tags"] == ["x", "y"]
    assert json.loads(data["doc"]) == {"a": [1, 2]} and data["photo"] == "AP8Q"


def test_the_schema_comes_from_the_value_schema():
    types = {c["name"]: c["type"] for c in record(0)["metadata"]["schema"]}
    assert types == {
        "id": "INT64",
        "name": "STRING",
        "balance": "NUMERIC(10, 2)",
        "big": "NUMERIC(30, 4)",
        "created_at": "DATETIME",
        "seen_at": "TIMESTAMP",
        "born": "DATE",
        "active": "BOOL",
        "doc": "JSON",
        "photo": "BYTES",
        "uid": "STRING",
        "score": "FLOAT64",
        "small": "INT64",
        "big_id": "INT64",
        "feeling": "STRING",
        "wake": "TIME",
        "tags": "ARRAY<STRING>",
    }


@pytest.mark.parametrize("index, operation", [(0, "SNAPSHOT"), (1, "UPDATE"), (2, "DELETE")])
def test_operations_and_source_metadata(index, operation):
    metadata = record(index)["metadata"]
    assert metadata["operation"] == operation
    assert (metadata["database_name"], metadata["table_name"]) == ("shop1", "customer")
    assert metadata["position"] == str(json.loads(EVENTS[index]["value"])["payload"]["source"]["lsn"])
    assert metadata["ingestion_method"] == "DEBEZIUM_POSTGRESQL"


def test_a_delete_lands_its_before_image():
    assert record(2)["data"]["id"] == 1 and record(1)["data"]["name"] == "Bob"


def test_tombstones_and_other_messages_pass_through_for_the_usual_accounting():
    assert EVENTS[3]["value"] is None and convert_event(None) is None
    assert convert_event("not json") == "not json"
    heartbeat = json.dumps({"schema": {}, "payload": {"ts_ms": 1}})
    assert convert_event(heartbeat) == heartbeat


def test_an_event_without_a_schema_is_not_guessed():
    plain = json.loads(EVENTS[1]["value"])["payload"]
    converted = json.loads(convert_event(json.dumps(plain)))
    assert "schema" not in converted["metadata"]  # the sink quarantines it as missing_schema


@pytest.mark.parametrize(
    "event",
    [
        {"payload": {"op": "c", "after": {"id": 1}, "source": "shop1"}, "schema": {}},
        {"op": ["c"], "after": {"id": 1}},
        {"op": "c", "after": {"id": 1}, "source": [1]},
    ],
)
def test_an_event_debezium_would_not_write_is_read_as_it_is(event):
    # A UDF that raises fails the Spark job: one odd message would stop the stream.
    assert convert_event(json.dumps(event)) == json.dumps(event)


@pytest.mark.parametrize(
    "schema",
    [
        "a schema",
        {"fields": "after"},
        {"fields": ["after"]},
        {"fields": [{"field": "after", "fields": "id"}]},
        {"fields": [{"field": "after", "fields": [{"field": "id", "type": "array", "items": "int32"}]}]},
        {"fields": [{"field": "after", "fields": [{"field": "id", "type": "struct", "fields": ["x"]}]}]},
    ],
)
def test_a_malformed_value_schema_is_no_schema(schema):
    event = {"schema": schema, "payload": {"op": "c", "after": {"id": 1}, "source": {"db": "shop1"}}}
    converted = json.loads(convert_event(json.dumps(event)))
    assert converted["data"] == {"id": 1}
    assert "schema" not in converted["metadata"]  # quarantined as missing_schema, as a schemaless event


def test_a_key_schema_whose_fields_are_not_a_list_gives_no_primary_key():
    assert key_columns(json.dumps({"schema": {"fields": 5}, "payload": {"id": 1}})) is None
    assert key_columns(json.dumps({"schema": {"fields": [{"field": "id"}]}, "payload": {"id": 1}})) == ["id"]


def test_a_timestamp_past_year_9999_stays_a_number_for_the_sink_to_quarantine():
    event = {"op": "c", "after": {"id": 1}, "source": {"db": "shop1", "ts_ms": 10**30}}
    assert json.loads(convert_event(json.dumps(event)))["metadata"]["timestamp"] == str(10**30)
    event["source"]["ts_ms"] = 0
    assert json.loads(convert_event(json.dumps(event)))["metadata"]["timestamp"] == "1970-01-01T00:00:00Z"
