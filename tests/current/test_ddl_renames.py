"""Renames read from the source's DDL: a MySQL/MariaDB schema-change event whose DDL renames a column lands
in the control table `_uniview_ddl`, and the generator reads the renamed column's old versions under
the new name, with no view for the control table itself."""

from __future__ import annotations

import json

import pytest

from uniview.core.ddl_generated import generated_in_ddl
from uniview.core.ddl_renames import DDL_TABLE, ordered_renames, renames_in_ddl
from uniview.core.renames import Rename
from uniview.sink.debezium import convert_event


@pytest.mark.parametrize(
    ("ddl", "renames"),
    [
        ("ALTER TABLE customer RENAME COLUMN memo TO note", [("customer", "memo", "note")]),
        ("alter table `customer` change column `memo` `note` text not null", [("customer", "memo", "note")]),
        ("ALTER TABLE shop1.customer CHANGE memo note varchar(10), ADD COLUMN x int", [("customer", "memo", "note")]),
        ("ALTER TABLE t RENAME COLUMN a TO b, RENAME COLUMN c TO d", [("t", "a", "b"), ("t", "c", "d")]),
        ("ALTER TABLE t CHANGE a A int", []),  # MySQL's names are case-insensitive: no rename
        ("ALTER TABLE t MODIFY a bigint", []),
        ("ALTER TABLE t RENAME TO u", []),
        ("RENAME TABLE a TO b", []),
        ("CREATE TABLE t (a int)", []),
        ("not SQL ((( rename", []),
    ],
)
def test_renames_are_read_from_mysql_ddl(ddl, renames):
    assert renames_in_ddl(ddl) == [Rename(*r) for r in renames]


def test_renames_apply_in_the_log_order():
    rows = [
        ("shop1", "0002", "ALTER TABLE t RENAME COLUMN b TO a"),
        ("shop1", "0001", "ALTER TABLE t RENAME COLUMN a TO b"),
        ("shop1", None, "ALTER TABLE t RENAME COLUMN x TO y"),
    ]
    assert ordered_renames(rows) == (Rename("t", "x", "y"), Rename("t", "a", "b"), Rename("t", "b", "a"))


@pytest.mark.parametrize(
    ("ddl", "generated"),
    [
        ("ALTER TABLE orders ADD COLUMN doubled int AS (total * 2) STORED", [("orders", "doubled")]),
        ("alter table `orders` add `tag` varchar(9) as (concat(a, b)) persistent", [("orders", "tag")]),
        ("ALTER TABLE o ADD x int GENERATED ALWAYS AS (a + 1) VIRTUAL, ADD y int", [("o", "x")]),
        ("ALTER TABLE o ADD COLUMN persistent int, RENAME COLUMN a TO b", []),
        ("CREATE TABLE o (a int, b int AS (a + 1) STORED)", []),  # no row is older than a column it creates
        ("ALTER TABLE o ADD COLUMN b int", []),
    ],
)
def test_generated_columns_added_to_existing_tables_are_read_from_mysql_ddl(ddl, generated):
    assert generated_in_ddl(ddl) == generated


def source(pos: int, table: str | None = "customer") -> dict:
    return {
        "connector": "mysql",
        "db": "shop1",
        "table": table,
        "file": "mysql-bin.000001",
        "pos": pos,
        "row": 0,
        "ts_ms": 1_714_557_600_000 + pos,
    }


def row_event(pos: int, op: str, row: dict) -> str:
    fields = [{"field": name, "type": "int32" if name == "id" else "string", "optional": name != "id"} for name in row]
    schema = {
        "type": "struct",
        "fields": [
            {"field": "before", "type": "struct", "optional": True, "fields": fields},
            {"field": "after", "type": "struct", "optional": True, "fields": fields},
            {"field": "op", "type": "string"},
        ],
    }
    payload = {"before": None, "after": row, "op": op, "source": source(pos)}
    return json.dumps({"schema": schema, "payload": payload})


def ddl_event(pos: int, ddl: str) -> str:
    payload = {"source": source(pos, None), "databaseName": "shop1", "schemaName": None, "ddl": ddl, "tableChanges": []}
    return json.dumps(
        {"schema": {"type": "struct", "name": "io.debezium.connector.mysql.SchemaChangeValue"}, "payload": payload}
    )


def kcat(offset: int, value: str, key: dict | None) -> str:
    return json.dumps(
        {"topic": "t", "partition": 0, "offset": offset, "key": json.dumps(key) if key else None, "payload": value}
    )


def test_every_schema_change_event_is_a_record_of_the_control_table():
    record = json.loads(convert_event(ddl_event(50, "ALTER TABLE customer RENAME COLUMN memo TO note")))
    assert record["data"] == {"ddl": "ALTER TABLE customer RENAME COLUMN memo TO note"}
    metadata = record["metadata"]
    assert (metadata["table_name"], metadata["database_name"], metadata["position"]) == (
        DDL_TABLE,
        "shop1",
        "mysql-bin.000001:50:0",
    )
    other = json.loads(convert_event(ddl_event(60, "ALTER TABLE customer ADD COLUMN x int")))  # every DDL lands
    assert other["metadata"]["table_name"] == DDL_TABLE and other["data"] == {
        "ddl": "ALTER TABLE customer ADD COLUMN x int"
    }
    not_an_event = json.dumps({"payload": {"ddl": "ALTER TABLE t RENAME COLUMN a TO b", "source": "x"}, "schema": {}})
    assert convert_event(not_an_event) == not_an_event
