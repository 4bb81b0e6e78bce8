"""Debezium events that no connector writes never raise in the conversion: a UDF that raises fails the whole
Spark job, so one such message would stop a stream for good.  Each is converted, or read as it is and
quarantined by the sink with the usual accounting."""

from __future__ import annotations

import json

import pytest

from uniview.sink.debezium import convert_event

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


def test_an_event_naming_a_key_twice_is_read_as_it_is():
    text = json.dumps(event()).replace('"op": "c"', '"op": "c", "op": "d"')
    assert convert_event(text) == text


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
