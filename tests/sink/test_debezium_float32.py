"""A Connect float32 (a MariaDB `float`, a PostgreSQL `real`) lands as the float's exact value: the JSON carries its
shortest decimal, and that decimal read as a double is another number than the one the source holds and shows
once the column is widened to `double` (as MariaDB 10.11 and PostgreSQL 15 do: `3.4e38` becomes
`3.3999999521443642e38`)."""

from __future__ import annotations

import json
import struct

import pytest

from uniview.sink.debezium import convert_event

SOURCE = {"db": "shop", "table": "t", "connector": "postgresql", "ts_ms": 1}


def landed_value(kind: str, value: object) -> object:
    fields = [{"field": "id", "type": "int32"}, {"field": "r", "type": kind, "optional": True}]
    schema = {"type": "struct", "fields": [{"field": "after", "type": "struct", "fields": fields}]}
    event = {"schema": schema, "payload": {"op": "c", "source": SOURCE, "after": {"id": 1, "r": value}}}
    record = json.loads(convert_event(json.dumps(event)) or "null")
    return record["data"]["r"]


@pytest.mark.parametrize("sent", [3.4e38, 1.17549435e-38, 0.1, -2.5, 0, 16777217])
def test_a_float32_lands_as_the_floats_own_value(sent):
    exact = struct.unpack("<f", struct.pack("<f", sent))[0]
    assert landed_value("float", sent) == exact
    assert landed_value("float32", sent) == exact


def test_the_widened_values_the_sources_show():
    assert landed_value("float", 3.4e38) == 3.3999999521443642e38
    assert landed_value("float", 0.1) == 0.10000000149011612


@pytest.mark.parametrize("sent", [None, 1e39, "NaN"])
def test_a_value_no_float32_holds_lands_as_it_was_sent(sent):
    assert landed_value("float", sent) == sent


def test_a_double_lands_as_it_was_sent():
    assert landed_value("double", 3.4e38) == 3.4e38
