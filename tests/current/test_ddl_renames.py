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


@pytest.mark.parametrize(
    ("ddl", "moves"),
    [
        ("RENAME TABLE rn TO rn2", [("rn", "rn2")]),
        ("rename table `t` to `_t_del`, `_t_gho` to `t`", [("t", "_t_del"), ("_t_gho", "t")]),
        ("RENAME TABLE shop1.a TO shop1.b;", [("a", "b")]),
        ("ALTER TABLE a RENAME TO b", [("a", "b")]),
        ("ALTER TABLE a RENAME COLUMN x TO y", []),
        ("CREATE TABLE rename_log (a int)", []),
    ],
)
def test_table_renames_are_read_from_mysql_ddl(ddl, moves):
    from uniview.core.table_renames import moves_in_ddl

    assert moves_in_ddl(ddl) == tuple(moves)


def test_a_swap_moves_each_table_once_and_a_database_renaming_in_another_order_is_refused():
    from uniview.core.errors import PlanError
    from uniview.core.table_renames import family_segments, lineages

    swap = "RENAME TABLE t TO _t_del, _t_gho TO t"
    (lineage,) = lineages([("db1", "0150", swap), ("db1", "0150", swap), ("db2", None, "CREATE TABLE x (a int)")])
    assert lineage.statements == ((("t", "_t_del"), ("_t_gho", "t")),)
    # as Debezium sends it: one event per pair at one position, in any order, and again without a position
    split = [("db1", "0150", "RENAME TABLE _t_gho TO t"), ("db1", "0150", "RENAME TABLE t TO _t_del")]
    (as_sent,) = lineages([*split, *((database, None, ddl) for database, _, ddl in split)])
    assert as_sent.statements == lineage.statements
    # states are done * 2 + before: not swapped yet (0), a change before the swap (2), after it (3)
    segments = {family: dict(found) for family, found in family_segments(lineage, ["t", "_t_gho"]).items()}
    assert {family: {name: s.states for name, s in found.items()} for family, found in segments.items()} == {
        "t": {"t": (0, 3), "_t_gho": (2,)},
        "_t_del": {"t": (2,)},
        "_t_gho": {"_t_gho": (0, 3)},
    }
    back = "RENAME TABLE b TO a"
    with pytest.raises(PlanError, match="database 'db2' renamed them in another order"):
        lineages([("db1", "1", "RENAME TABLE a TO b"), ("db1", "2", back), ("db2", "1", back)])
