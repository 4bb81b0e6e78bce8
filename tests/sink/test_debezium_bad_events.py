"""Debezium events that no connector writes never raise in the conversion: a UDF that raises fails the whole
Spark job, so one such message would stop a stream for good.  Each is converted, or read as it is and
quarantined by the sink with the usual accounting."""

from __future__ import annotations

import json

import duckdb
import pytest

from uniview.sink import reasons
from uniview.sink.debezium import REPEATED_KEY_LINE, convert_event
from uniview.sink.load_sql import envelopes

SCHEMA = {
    "type": "struct",
    "fields": [{"field": "after", "type": "struct", "fields": [{"field": "id", "type": "int32"}]}],
}
SOURCE = {"db": "shop", "table": "t", "connector": "postgresql", "ts_ms": 1}


def event(**changes: object) -> dict:
    payload = {"op": "c", "source": SOURCE, "after": {"id": 1}}
    whole = {"schema": SCHEMA, "payload": payload}
    for key, value in changes.items():
        (payload if key in payload else whole)[key] = value
    return whole


def test_a_schema_that_is_not_an_object_is_no_schema():
    converted = json.loads(convert_event(json.dumps(event(schema=5))))
    assert converted["data"] == {"id": 1} and "schema" not in converted["metadata"]  # missing_schema


@pytest.mark.parametrize("depth", [999, 1_001, 5_000, 100_000])
def test_an_event_nested_thousands_of_levels_deep_is_read_as_it_is(depth):
    text = json.dumps(event()).replace('{"id": 1}', '{"id": ' + "[" * depth + "]" * depth + "}")
    assert convert_event(text) in (text, None) or json.loads(convert_event(text))["data"]  # never raises
    assert convert_event(text) == text or depth < 1_000


def test_a_value_schema_nested_thousands_of_levels_deep_is_no_schema():
    deep = '{"field": "id", "type": "struct", "fields": [' * 990 + '{"field": "id", "type": "int32"}' + "]}" * 990
    text = json.dumps(event(schema={"fields": [{"field": "after", "type": "struct", "fields": ["SCHEMA"]}]}))
    text = text.replace('"SCHEMA"', deep)
    converted = convert_event(text)
    assert converted == text or "schema" not in json.loads(converted)["metadata"]


#: An event naming a key twice, wherever: (the text named once, the text naming it twice).
REPEATED = {
    "payload": ('"op": "c"', '"op": "c", "op": "d"'),
    "after": ('"id": 1}', '"id": 1, "id": 2}'),
    "source": ('"table": "t"', '"table": "t", "table": "u"'),
    "schema": ('"type": "int32"', '"type": "int32", "type": "string"'),
    "top level": ('"payload": {', '"schema": null, "payload": {'),
}


@pytest.mark.parametrize("where", REPEATED)
def test_an_event_naming_a_key_twice_is_quarantined_as_duplicate_key(where):
    """Which value was meant is unknowable: the event is not converted but becomes a line the sink quarantines as
    duplicate_key (its raw_line the event as read), never missing_metadata."""
    once, twice = REPEATED[where]
    text = json.dumps(event()).replace(once, twice, 1)
    assert text != json.dumps(event()) and "metadata" in json.loads(convert_event(json.dumps(event())))
    converted = convert_event(text)
    assert converted == REPEATED_KEY_LINE
    assert envelope_reasons([converted]) == [(reasons.DUPLICATE_KEY, reasons.DUPLICATE_KEY_DETAIL)]


def test_an_event_with_a_before_naming_a_key_twice_is_quarantined_as_duplicate_key():
    text = json.dumps(event(op="d", before={"id": 1}, after=None)).replace('"id": 1}', '"id": 1, "id": 1}')
    assert convert_event(text) == REPEATED_KEY_LINE


def test_a_uniview_record_naming_a_key_twice_is_left_to_the_sink_rules():
    """A uniview record among the events keeps its own reasons: invalid_data for a key twice in its data."""
    text = '{"metadata": {"table_name": "t"}, "data": {"id": 1, "id": 2}}'
    assert convert_event(text) == text


def envelope_reasons(lines: list[str]) -> list[tuple[str | None, str | None]]:
    """(reason, detail) of each line as DuckDB's load step reads its envelope."""
    source = "(SELECT unnest(?) AS value, 'file' AS source_file, NULL::BLOB AS _bytes)"
    connection = duckdb.connect()
    return connection.execute(f"SELECT _reason, _detail FROM ({envelopes(source, False)})", [lines]).fetchall()


@pytest.mark.parametrize("name", [5, None, "", ["id"], {"a": 1}])
def test_a_field_name_that_is_not_a_text_is_no_schema(name):
    schema = json.loads(json.dumps(SCHEMA))
    schema["fields"][0]["fields"][0]["field"] = name
    converted = json.loads(convert_event(json.dumps(event(schema=schema))))
    assert "schema" not in converted["metadata"]


@pytest.mark.parametrize(
    "field, value",
    [
        ("source", {"db": "shop", "table": "t", "ts_ms": 10**30}),
        ("source", {"db": "shop", "table": "t", "lsn": [[[]]]}),
        ("after", 5),
        ("after", ["id"]),
        ("op", {"c": 1}),
        ("payload", "text"),
        ("schema", [SCHEMA]),
    ],
)
def test_wrong_json_types_never_raise(field, value):
    text = json.dumps(event(**{field: value}))
    converted = convert_event(text)
    assert converted == text or isinstance(json.loads(converted), dict)


def test_a_lone_surrogate_stays_escaped_as_it_came():
    text = json.dumps(event(after={"id": "\ud800"}))
    converted = convert_event(text)
    converted.encode("utf-8")  # Spark's UDF result must be UTF-8
    assert json.loads(converted)["data"] == {"id": "\ud800"}


@pytest.mark.parametrize("key", ["[" * 5_000, '{"id": 1, "id": 2}', "5", '{"schema": {"fields": 5}, "payload": {}}'])
def test_any_message_key_is_read_or_ignored(key):
    converted = json.loads(convert_event(json.dumps(event()), key))
    assert converted["data"] == {"id": 1}


@pytest.mark.parametrize(
    "micros, landed",
    [
        (0, "00:00:00.000000"),
        (86_399_999_999, "23:59:59.999999"),
        (86_400_000_000, 86_400_000_000),  # PostgreSQL's time '24:00:00'
        (86_401_000_000, 86_401_000_000),  # MariaDB's TIME '24:00:01', once landed as 00:00:01
        (-3_600_000_000, -3_600_000_000),  # MariaDB's TIME '-01:00:00'
        (3_020_399_000_000, 3_020_399_000_000),  # MariaDB's TIME '838:59:59'
    ],
)
def test_a_duration_outside_a_day_is_no_time_of_day_and_is_never_wrapped(micros, landed):
    """A TIME column's value outside 00:00:00..23:59:59.999999 stays the number it came as, which the typing
    step quarantines as type_mismatch (docs/sink.md: a TIME is "HH:MM:SS[.ffffff]"); it is never taken modulo a
    day."""
    schema = {
        "type": "struct",
        "fields": [
            {
                "field": "after",
                "type": "struct",
                "fields": [
                    {"field": "id", "type": "int32"},
                    {"field": "t", "type": "int64", "optional": True, "name": "io.debezium.time.MicroTime"},
                ],
            }
        ],
    }
    converted = json.loads(convert_event(json.dumps(event(schema=schema, after={"id": 1, "t": micros}))))
    assert converted["data"]["t"] == landed
    assert {"name": "t", "type": "TIME"} in converted["metadata"]["schema"]
