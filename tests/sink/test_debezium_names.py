"""Non-ASCII identifiers as the source spells them: Debezium's PostgreSQL connector sends each UTF-8 byte of such
a name as one character sign-extended to U+FF80..U+FFFF (pinned live by tests/kafka/test_debezium_connector_
behaviour.py); the sink repairs exactly those names, and leaves every other name as sent."""

from __future__ import annotations

import json

from hypothesis import given, seed, settings
from hypothesis import strategies as st

from uniview.sink.debezium import convert_event
from uniview.sink.debezium_names import repaired_name


def mangled(name: str) -> str:
    """`name` as the connector sends it: each byte of its UTF-8 as one character, sign-extended."""
    return "".join(chr(b) if b < 0x80 else chr(0xFF00 | b) for b in name.encode("utf-8"))


def test_the_names_the_connector_mangles_are_repaired_and_others_stay_as_sent():
    assert mangled("größe") == "grￃﾶￃﾟe"
    assert repaired_name("grￃﾶￃﾟe") == "größe"
    for name in ("größe", "CamelCase", "with space", "名前", "ﾀﾞ", "ￃ", "aￃb"):
        assert repaired_name(name) == name


@seed(61)
@settings(max_examples=40, deadline=None)
@given(st.text(min_size=1, max_size=12))
def test_every_mangled_name_is_repaired_exactly(name):
    assert repaired_name(mangled(name)) == name


def test_an_event_of_a_mangled_table_and_columns_lands_under_the_names_the_source_spells():
    column = mangled("größe")
    fields = [{"field": "id", "type": "int32", "optional": False}, {"field": column, "type": "int32"}]
    event = {
        "schema": {"type": "struct", "fields": [{"field": "after", "type": "struct", "fields": fields}]},
        "payload": {
            "op": "c",
            "source": {"db": "shop", "table": mangled("maße"), "connector": "postgresql", "ts_ms": 1},
            "after": {"id": 1, column: 42},
        },
    }
    key = json.dumps({"schema": {"fields": [{"field": mangled("schlüssel")}]}, "payload": {}})
    record = json.loads(convert_event(json.dumps(event), key))
    assert record["data"] == {"id": 1, "größe": 42}
    assert [entry["name"] for entry in record["metadata"]["schema"]] == ["id", "größe"]
    assert (record["metadata"]["table_name"], record["metadata"]["primary_key"]) == ("maße", ["schlüssel"])
