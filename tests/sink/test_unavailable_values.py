"""Values the source did not send (Debezium's unavailable-value placeholder) land NULL, named in `_cdc_unavailable`:
in every form the connector sends the placeholder, for a configured placeholder too, and from uniview's own
envelope (metadata.unavailable); a table landed before the column existed gets it from the sink."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import duckdb
import pytest
from postgres_changes import MODES, change, current, land, refresh
from sink_support import query, record, write_ndjson

from uniview.sink.debezium import UNAVAILABLE_PLACEHOLDER, convert_event
from uniview.sink.job import SinkOptions, run
from uniview.warehouse.url import duckdb_url

EVENTS = json.loads((Path(__file__).parents[1] / "kafka" / "debezium_postgres_events.json").read_text())
SCHEMA = [("id", "INT64"), ("doc", "STRING")]


def update_with(values: dict) -> str:
    """The real UPDATE event of the PostgreSQL connector with some `after` values replaced."""
    event = json.loads(EVENTS[1]["value"])
    event["payload"]["after"].update(values)
    return json.dumps(event)


def converted(values: dict, placeholder: str | None = None) -> dict:
    return json.loads(convert_event(update_with(values), None, placeholder))


def test_every_form_of_the_default_placeholder_lands_null_and_is_named():
    raw = UNAVAILABLE_PLACEHOLDER.encode()
    out = converted(
        {
            "name": UNAVAILABLE_PLACEHOLDER,  # text
            "doc": UNAVAILABLE_PLACEHOLDER,  # jsonb (io.debezium.data.Json)
            "photo": base64.b64encode(raw).decode(),  # bytea: the placeholder's bytes, base64 in JSON
            "tags": [UNAVAILABLE_PLACEHOLDER],  # text[]
        }
    )
    assert out["metadata"]["unavailable"] == ["name", "doc", "photo", "tags"]
    assert [out["data"][name] for name in ("name", "doc", "photo", "tags")] == [None] * 4
    assert out["data"]["id"] is not None and out["data"]["feeling"] is not None


def test_a_value_merely_containing_the_placeholder_is_data():
    out = converted({"name": "x" + UNAVAILABLE_PLACEHOLDER, "tags": [UNAVAILABLE_PLACEHOLDER, "b"]})
    assert "unavailable" not in out["metadata"]
    assert out["data"]["name"] == "x" + UNAVAILABLE_PLACEHOLDER and out["data"]["tags"] == [
        UNAVAILABLE_PLACEHOLDER,
        "b",
    ]


@pytest.mark.parametrize("setting", ["<toasted>", "hex:3c746f61737465643e"])
def test_a_configured_placeholder_text_or_hex_replaces_the_default(setting):
    out = converted({"name": "<toasted>", "doc": UNAVAILABLE_PLACEHOLDER}, setting)
    assert out["metadata"]["unavailable"] == ["name"]
    assert out["data"]["name"] is None and out["data"]["doc"] == UNAVAILABLE_PLACEHOLDER  # the default is data now


def test_a_binary_placeholder_is_recognised_in_bytes_columns():
    setting = "hex:00ff10"
    out = converted({"photo": base64.b64encode(bytes.fromhex("00ff10")).decode(), "name": "n"}, setting)
    assert out["metadata"]["unavailable"] == ["photo"] and out["data"]["photo"] is None


@pytest.fixture(scope="module")
def landed(spark, tmp_path_factory):
    root = tmp_path_factory.mktemp("unavailable")
    warehouse = root / "w.duckdb"
    # a version table landed before `_cdc_unavailable` existed: the sink adds the column itself
    write_ndjson(root / "old" / "a.json", [record("t", {"id": 1, "doc": "big"}, SCHEMA, position="1")])
    run(spark, SinkOptions(input=str(root / "old"), warehouse=duckdb_url(warehouse), dataset="cdc"))
    [table] = [name for (name,) in query(warehouse, "SELECT table_name FROM duckdb_tables() WHERE schema_name='cdc'")]
    with duckdb.connect(str(warehouse)) as connection:
        connection.execute(f"ALTER TABLE cdc.{table} DROP COLUMN _cdc_unavailable")
    lines = [
        record("t", {"id": 1, "doc": None}, SCHEMA, position="2", unavailable=["doc"]),
        record("t", {"id": 1, "doc": None}, SCHEMA, position="3", unavailable=[]),
        record("t", {"id": 2, "doc": "x"}, SCHEMA, position="4", unavailable=["doc", 1]),
        record("t", {"id": 3, "doc": "x"}, SCHEMA, position="5", unavailable="doc"),
    ]
    write_ndjson(root / "new" / "b.json", lines)
    result = run(spark, SinkOptions(input=str(root / "new"), warehouse=duckdb_url(warehouse), dataset="cdc"))
    return warehouse, table, result


def test_the_envelope_names_unavailable_columns_and_an_old_table_gets_the_column(landed):
    warehouse, table, _ = landed
    rows = query(warehouse, f"SELECT id, doc, _cdc_unavailable FROM cdc.{table} ORDER BY _cdc_position")
    assert rows == [(1, "big", None), (1, None, ["doc"]), (1, None, [])]


def test_metadata_unavailable_that_is_not_a_list_of_names_is_quarantined(landed):
    warehouse, _, _ = landed
    rows = query(warehouse, "SELECT reason, detail FROM cdc._uniview_quarantine ORDER BY detail")
    assert rows == [
        ("invalid_metadata", 'metadata.unavailable is not a list of column names: ["doc",1]'),
        ("invalid_metadata", "metadata.unavailable is not a list of column names: doc"),
    ]


def test_a_truncate_event_is_a_marker_change_with_every_column_null():
    event = json.loads(EVENTS[1]["value"])
    event["payload"].update({"op": "t", "before": None, "after": None})
    out = json.loads(convert_event(json.dumps(event)))
    assert out["metadata"]["operation"] == "TRUNCATE"
    assert set(out["data"]) == {c["name"] for c in out["metadata"]["schema"]}
    assert set(out["data"].values()) == {None}


#: PostgreSQL: memo is TOASTed, updates that leave it send the placeholder; then RENAME COLUMN memo TO note.
TOASTED_THEN_RENAMED = [
    change(100, "c", {"id": 1, "name": "a", "memo": "big text"}),
    change(110, "u", {"id": 1, "name": "a2", "memo": UNAVAILABLE_PLACEHOLDER}),
    change(120, "c", {"id": 2, "name": "b", "memo": "two"}),
    change(130, "c", {"id": 4, "name": "d", "memo": "four"}),
    change(140, "u", {"id": 4, "name": "d2", "memo": UNAVAILABLE_PLACEHOLDER}),  # its last change is before the rename
    change(200, "u", {"id": 1, "name": "a3", "note": UNAVAILABLE_PLACEHOLDER}),
    change(210, "u", {"id": 2, "name": "b2", "note": UNAVAILABLE_PLACEHOLDER}),
    change(220, "c", {"id": 3, "name": "c", "note": "three"}),
]


@pytest.mark.parametrize("mode", MODES)
def test_a_value_carried_over_unavailable_changes_survives_a_declared_rename(spark, tmp_path, mode):
    warehouse = land(spark, tmp_path, TOASTED_THEN_RENAMED)
    renames = tmp_path / "renames.json"
    renames.write_text(
        json.dumps({"uniview_renames": 1, "renames": [{"table": "customer", "from": "memo", "to": "note"}]})
    )
    refresh(warehouse, mode, "--renames", str(renames))
    assert current(warehouse, mode, "id, name, note") == [
        ("1", "a3", "big text"),
        ("2", "b2", "two"),
        ("3", "c", "three"),
        ("4", "d2", "four"),
    ]
