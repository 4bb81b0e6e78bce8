"""The on-demand bill of the SQL uniview renders for BigQuery (uniview.core.billing).

BigQuery bills each statement of a script on its own: at least 10 MB per table it references and 10 MB in
all, views expanded to their tables.  The emulator bills nothing, so the rule is checked on the rendered
SQL: first on statements whose answer is written out by hand, then on the scripts uniview runs.
"""

from __future__ import annotations

import pytest

from uniview.core.billing import MB, bill_script, on_demand_usd, view_tables
from uniview.core.landing_layout import CDC_COLUMNS
from uniview.core.schema import Column, TableVersion
from uniview.core.types import parse_type
from uniview.planning.consolidation import fold_plan, next_consolidated_table
from uniview.planning.plan import GeneratorOptions, plan_family
from uniview.sink.bigquery_promotion import Insert, part_script, step_recorded_once
from uniview.sink.landing import BatchKey
from uniview.warehouse.bigquery_consolidation import move_script
from uniview.warehouse.bigquery_current import action_script
from uniview.warehouse.bigquery_folds import folded_guard
from uniview.warehouse.bigquery_views import version_tables_statement

VIEWS = {"d.v": ("d.a", "d.w"), "d.w": ("d.b", "d.c")}

#: (statement, the tables it references, MB billed with d.a 25 MB and d.t 1 GB large)
CASES = [
    ("SELECT 1", (), 0),
    ("SELECT x FROM d.a", ("d.a",), 25),
    ("SELECT x FROM `p.d.a` JOIN d.b USING (k)", ("d.a", "d.b"), 35),
    ("SELECT x FROM d.b AS one JOIN d.b AS two USING (k)", ("d.b",), 10),
    ("SELECT x FROM d.v", ("d.a", "d.b", "d.c"), 45),
    ("WITH d AS (SELECT 1 AS x) SELECT x FROM d", (), 0),
    ("WITH c AS (SELECT x FROM d.b) SELECT x FROM c", ("d.b",), 10),
    ("CREATE TEMP TABLE tmp AS SELECT x FROM d.b", ("d.b",), 10),
    ("SELECT x FROM tmp", ("tmp",), 10),
    ("INSERT INTO d.t (x) VALUES (1)", ("d.t",), 10),
    ("INSERT INTO d.t (x) SELECT x FROM d.b", ("d.t", "d.b"), 20),
    ("DELETE FROM d.t WHERE x IN (SELECT x FROM d.b)", ("d.t", "d.b"), 1034),
    ("UPDATE d.t SET x = 1 WHERE TRUE", ("d.t",), 1024),
    ("MERGE d.t USING d.b AS s ON t.x = s.x WHEN NOT MATCHED THEN INSERT (x) VALUES (s.x)", ("d.t", "d.b"), 20),
    ("MERGE d.t USING d.b AS s ON t.x = s.x WHEN MATCHED THEN DELETE", ("d.t", "d.b"), 1034),
    ("CREATE OR REPLACE VIEW d.v2 AS SELECT x FROM d.t", (), 0),
    ("DROP TABLE IF EXISTS d.t", (), 0),
    ("TRUNCATE TABLE d.t", (), 0),
    ("BEGIN TRANSACTION", (), 0),
    ("IF EXISTS (SELECT 1 FROM d.b) THEN INSERT INTO d.t (x) VALUES (1); END IF", None, 20),
]


@pytest.mark.parametrize(("sql", "tables", "billed_mb"), CASES)
def test_one_statement_is_billed_by_the_tables_it_references(sql, tables, billed_mb):
    bill = bill_script(sql, VIEWS, {"d.a": 25 * MB, "d.t": 1024 * MB})
    if tables is not None:
        assert bill.statements[0].tables == tables
    assert bill.billed_bytes == billed_mb * MB
    assert bill.floor_bytes == 10 * MB * bill.table_references


def test_a_statement_is_billed_whole_megabytes_and_views_of_views_expand():
    assert view_tables({"d.v": "SELECT x FROM d.a UNION ALL SELECT x FROM d.w"}) == {"d.v": ("d.a", "d.w")}
    bill = bill_script("SELECT x FROM d.a", sizes={"d.a": 11 * MB + 1})
    assert bill.billed_bytes == 12 * MB
    assert on_demand_usd(2**40) == pytest.approx(6.25)


def family(count: int) -> list[TableVersion]:
    columns = tuple(Column(name, parse_type(t)) for name, t in (("id", "INT64"), ("name", "STRING"), *CDC_COLUMNS))
    return [TableVersion(f"orders_v_{n:04d}", "orders", f"{n:04d}", n, columns, ("id",)) for n in range(count)]


@pytest.mark.parametrize("versions", [1, 100, 900])
def test_a_maintenance_references_every_version_table_through_the_unified_view(versions):
    planned = plan_family("cdc", "cdc", family(versions), GeneratorOptions(current="table"))
    assert planned.current_table is not None
    views = view_tables({view.qualified_name: view.body for view in planned.all_views})
    bill = bill_script(action_script(planned.current_table, "maintain"), views)
    reading = [s for s in bill.statements if "cdc.orders_v_0000" in s.tables]
    assert len(reading) == 1
    assert {f"cdc.{version.table_name}" for version in planned.versions} <= set(reading[0].tables)
    others = bill.table_references - versions
    assert others > 0
    assert bill.floor_bytes == (versions + others) * 10 * MB


@pytest.mark.parametrize("current", ["view", "table"])
def test_a_family_and_columns_named_as_only_quoting_allows_are_billed_as_any_other(current):
    """A family named `with space größe`, a column `order`: every statement billed, the queries of its views
    included, names them quoted, and bills what it bills for `orders`."""
    from uniview.ops.billing import family_floors

    def floors(name: str, column: str) -> dict:
        names = (("id", "INT64"), (column, "STRING"), *CDC_COLUMNS)
        columns = tuple(Column(n, parse_type(t)) for n, t in names)
        versions = [TableVersion(f"{name}_v_{n:04d}", name, f"{n:04d}", n, columns, ("id",)) for n in range(3)]
        return family_floors(plan_family("cdc", "cdc", versions, GeneratorOptions(current=current))).as_json()

    assert floors("with space größe", "order") == floors("orders", "name")


def test_a_view_refresh_is_billed_for_its_catalog_read_only():
    bill = bill_script(version_tables_statement("p", "cdc", "orders"))
    assert bill.statements[0].tables == ("cdc.INFORMATION_SCHEMA.TABLES", "cdc.INFORMATION_SCHEMA.TABLE_OPTIONS")
    planned = plan_family("cdc", "cdc", family(3), GeneratorOptions())
    assert bill_script(planned.top_view.statement).floor_bytes == 0


def test_a_sink_part_is_billed_per_statement_of_its_transaction():
    key = BatchKey("stream", 3)
    insert = Insert(("db1", "orders_v_a"), "INSERT INTO `p`.db1.orders_v_a (id) SELECT id FROM `p`.uniview.typed")
    script = part_script("p", "uniview", key, 0, [insert], folded_guard("p", "uniview", {("db1", "orders_v_a")}))
    bill = bill_script(script)
    assert [s.tables for s in bill.statements if s.tables] == [
        ("uniview._uniview_batch_steps",),
        ("uniview._uniview_folds",),
        ("uniview._uniview_batch_steps",),
        ("db1.orders_v_a", "uniview.typed"),
    ]
    recorded = bill_script(step_recorded_once("p", "uniview", key, "plan", "[]"))
    assert recorded.billed_statements == 3


def test_a_consolidation_move_is_billed_per_version_moved():
    versions = family(3)
    plan = fold_plan("cdc", versions, versions[:2], next_consolidated_table("orders", versions), "widen")
    bill = bill_script(move_script("p", "uniview", plan, versions[:2], GeneratorOptions()))
    assert bill.billed_statements == 6
    assert all(plan.consolidated_table in " ".join(s.tables) for s in bill.statements if s.kind == "insert")
