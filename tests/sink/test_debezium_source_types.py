"""A `varchar(n)` whose source type the connector propagates (`datatype.propagate.source.type`) is declared
STRING(n): its length is part of the version, so PostgreSQL's `text` -> `varchar(3)`, which cuts the longer
values older rows hold and logs no change for them, is a new version, and `<table>_current` cuts those rows as the
source did (docs/current-state.md#type-changes-that-convert-older-rows).  The version table's description keeps
the declared length where the warehouse's own type does not (DuckDB's VARCHAR)."""

from __future__ import annotations

import json

import pytest

from uniview.core.version_description import described_string_lengths, version_description
from uniview.sink.debezium import convert_event
from uniview.sink.versioning import SourceColumn, compute_version

SOURCE = {"db": "shop", "table": "t", "connector": "postgresql", "ts_ms": 1}


def declared_type(parameters: dict | None) -> str:
    """The type the sink declares for a string field with these Connect schema parameters."""
    field = {"field": "c", "type": "string", "optional": True}
    if parameters is not None:
        field["parameters"] = parameters
    fields = [{"field": "id", "type": "int32"}, field]
    schema = {"type": "struct", "fields": [{"field": "after", "type": "struct", "fields": fields}]}
    event = {"schema": schema, "payload": {"op": "c", "source": SOURCE, "after": {"id": 1, "c": "abc"}}}
    record = json.loads(convert_event(json.dumps(event)) or "null")
    assert record["data"]["c"] == "abc"
    return record["metadata"]["schema"][1]["type"]


def propagated(source_type: str, length: str) -> dict:
    return {
        "__debezium.source.column.type": source_type,
        "__debezium.source.column.length": length,
        "__debezium.source.column.scale": "0",
    }


@pytest.mark.parametrize(
    ("parameters", "declared"),
    [
        (propagated("VARCHAR", "20"), "STRING(20)"),
        (propagated("varchar", "3"), "STRING(3)"),
        (propagated("VARCHAR", "10485760"), "STRING(10485760)"),
        # an unbounded PostgreSQL varchar: the connector's "no length"
        (propagated("VARCHAR", "2147483647"), "STRING"),
        (propagated("TEXT", "2147483647"), "STRING"),
        (propagated("BPCHAR", "5"), "STRING"),
        (propagated("VARCHAR", "0"), "STRING"),
        ({"__debezium.source.column.type": "VARCHAR"}, "STRING"),
        (None, "STRING"),
        ({}, "STRING"),
    ],
)
def test_a_propagated_varchar_declares_its_length(parameters, declared):
    assert declared_type(parameters) == declared


def test_the_length_is_part_of_the_version():
    text, varchar = ([SourceColumn("id", "INT64"), SourceColumn("c", declared)] for declared in ("STRING", "STRING(3)"))
    assert compute_version("t", text) != compute_version("t", varchar)


@pytest.mark.parametrize(
    ("declared", "length"),
    [("STRING(20)", 20), ("varchar(20)", 20), ("VARCHAR ( 7 )", 7), ("character varying(5)", 5)],
)
def test_a_description_keeps_the_declared_length(declared, length):
    description = version_description("t", [("id", "int"), ("c", declared)], ["id"])
    assert described_string_lengths(description) == {"c": length}


@pytest.mark.parametrize("declared", ["STRING", "text", "char(5)", "varchar", "varchar(0)", "NUMERIC(10, 2)"])
def test_no_length_is_read_from_other_types(declared):
    description = version_description("t", [("c", declared)], None)
    assert described_string_lengths(description) == {}


def test_no_length_without_a_description():
    assert described_string_lengths(None) == {}
    assert described_string_lengths("not json") == {}
