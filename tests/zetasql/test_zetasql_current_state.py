"""The ZetaSQL analyzer accepts `<table>_current` in every shape the latest-state rules give it: values carried
over unavailable changes, columns dropped, added and added back with declared defaults of every scalar type
(cast to a unified type that differs), and a family read through declared renames."""

from __future__ import annotations

import json
import re
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from checks import check_family
from test_zetasql_load_typing import evaluate

sys.path.insert(0, str(Path(__file__).parents[1] / "sink"))
sys.path.insert(0, str(Path(__file__).parents[1] / "current"))
import test_current_state as current_state
import test_dropped_and_added as dropped_and_added
import test_unavailable_values as unavailable_values
from postgres_changes import current, land, refresh
from sink_support import query

from uniview.core.identifiers import identifier_path, string_literal
from uniview.core.landing_layout import CDC_COLUMNS
from uniview.core.renames import Rename, apply_renames
from uniview.core.schema import Column, TableVersion
from uniview.core.types import Array, BQType, parse_type
from uniview.ops.refresh import RefreshRequest, plan_families
from uniview.planning.plan import GeneratorOptions, plan_family
from uniview.warehouse.duckdb import DuckDBWarehouse

DEFAULTS = {
    "s": ("STRING", "open"),
    "i": ("INT64", 7),
    "f": ("FLOAT64", 1.5),
    "n": ("NUMERIC", "12.50"),
    "b": ("BOOL", True),
    "d": ("DATE", "2024-01-31"),
    "dt": ("DATETIME", "2024-01-31 10:00:00"),
    "t": ("TIME", "10:00:00"),
    "ts": ("TIMESTAMP", "2024-01-31 10:00:00+00:00"),
    "j": ("JSON", '{"a": 1}'),
    "y": ("BYTES", "AP8Q"),
}


def version(number: int, columns: list[tuple[str, str]], defaults: dict | None = None, not_null=()) -> TableVersion:
    every = [*columns, *CDC_COLUMNS]
    return TableVersion(
        f"t_v_{number}",
        "t",
        str(number),
        number,
        tuple(Column(name, parse_type(bq_type)) for name, bq_type in every),
        primary_key=("id",),
        defaults=tuple((name, json.dumps(value)) for name, value in (defaults or {}).items()),
        not_null=tuple(not_null),
    )


def test_columns_added_with_defaults_of_every_type_dropped_and_added_back(zetasql):
    base = [("id", "INT64"), ("doc", "STRING"), ("tags", "ARRAY<STRING>"), ("st", "STRUCT<a INT64>")]
    added = [(name, bq_type) for name, (bq_type, _) in DEFAULTS.items()]
    versions = [
        version(1, base),
        # u NOT NULL without a default the stream carried (DEFAULT now()): unknown in the rows older than it
        version(2, base + added + [("u", "INT64")], {name: value for name, (_, value) in DEFAULTS.items()}, ("u",)),
        version(3, base[:1] + added),  # doc, tags, st and u dropped
        # all text, restated with other defaults or none: the older rows keep those the columns were added with
        version(4, base + [(name, "STRING") for name, _ in added], {"s": "x", "i": "7"}, ("f", "n")),
    ]
    planned = plan_family("cdc", "cdc_unified", versions, GeneratorOptions(current=True))
    assert planned.current is not None
    body = planned.current.body
    assert (
        "CASE _uniview_newest WHEN 1 THEN" in body
        and "ARRAY_CONCAT(_cdc_unavailable, SPLIT(" in body
        and "LAST_VALUE(IF('doc' IN UNNEST(_cdc_unavailable), NULL, STRUCT(doc AS v))" in body
    )
    check_family(zetasql, planned)


def test_a_family_read_through_renames(zetasql):
    versions = [
        version(1, [("id", "INT64"), ("memo", "STRING")]),
        version(2, [("id", "INT64"), ("note", "STRING")]),
        version(3, [("id", "INT64"), ("note", "INT64"), ("memo", "DATE")]),
    ]
    renamed = apply_renames(versions, [Rename("t", "memo", "note")])
    assert [c.stored for c in renamed[0].columns[:2]] == [None, "memo"]
    planned = plan_family("cdc", "cdc_unified", renamed, GeneratorOptions(current=True))
    assert "memo AS note" in planned.top_view.body
    check_family(zetasql, planned)


def test_the_families_of_a_swap_read_through_the_renames_table(zetasql):
    """gh-ost's swap: each version table's changes chosen by a join to `_uniview_ddl`, in the view and the current
    table alike, SQL BigQuery's analyzer accepts."""
    from checks import catalog_of

    from uniview.core.table_renames import lineages
    from uniview.current.view import VERSION_COLUMN
    from uniview.planning.renamed_families import renamed_families

    ghost = replace(version(2, [("id", "INT64"), ("v", "STRING"), ("extra", "INT64")]), table_name="_t_gho_v_2")
    families = {"t": [version(1, [("id", "INT64"), ("v", "STRING")])], "_t_gho": [replace(ghost, family="_t_gho")]}
    found = lineages([("shop1", "150", "RENAME TABLE t TO _t_del, _t_gho TO t")])
    renamed = renamed_families(families, found, ["_uniview_ddl_v_d1"])
    assert sorted(renamed) == ["_t_del", "_t_gho", "t"]
    for mode in ("view", "table"):
        planned = plan_family("cdc", "cdc_unified", renamed["t"], GeneratorOptions(current=mode))
        assert "_uniview_renames._uniview_done" in planned.top_view.body
        catalog = catalog_of(planned)
        catalog.add_table(
            "cdc", "_uniview_ddl_v_d1", [(n, parse_type(t)) for n, t in [("ddl", "STRING"), *CDC_COLUMNS]]
        )
        check_family(zetasql, planned, VERSION_COLUMN, catalog)


# --- ZetaSQL's evaluator runs the BigQuery SQL of the views over the rows the sink landed in DuckDB --------------
# (the SparkSession, `spark`, is the test process's: tests/conftest.py)


def bigquery_literal(value: Any, bq_type: BQType) -> str:
    """`value` (as DuckDB returns it) as a BigQuery literal of `bq_type`."""
    if value is None:
        return f"CAST(NULL AS {bq_type})"
    if isinstance(bq_type, Array):
        return f"{bq_type}[{', '.join(bigquery_literal(v, bq_type.element) for v in value)}]"
    name = str(bq_type)
    if name == "STRING":
        return string_literal(value)
    if name == "INT64":
        return f"CAST({int(value)} AS INT64)"
    if name == "TIMESTAMP":
        return f"TIMESTAMP {string_literal(value.isoformat())}"
    raise AssertionError(f"no literal for {bq_type} in this test")


def landed_rows(warehouse: Path, version: TableVersion) -> str:
    """A subquery of the rows of `version`'s table as landed, its columns as the table names them."""
    columns = [(column.stored or column.name, column.type.base()) for column in version.columns]
    rows = query(warehouse, f"SELECT {', '.join(c for c, _ in columns)} FROM cdc.{version.table_name}")
    struct = f"STRUCT<{', '.join(f'{c} {t}' for c, t in columns)}>"
    values = [
        f"STRUCT({', '.join(f'{bigquery_literal(v, t)} AS {c}' for v, (c, t) in zip(row, columns, strict=True))})"
        for row in rows
    ]
    return f"(SELECT * FROM UNNEST(ARRAY<{struct}>[{', '.join(values)}]))"


def evaluated_current(
    zetasql, warehouse: Path, columns: str, renames: tuple[Rename, ...] = (), table: str = "customer"
) -> list[tuple]:
    """`<table>_current` as ZetaSQL's evaluator computes its BigQuery SQL (the unified view's and the current
    view's) over the landed rows: `columns` as text, sorted."""
    request = RefreshRequest("cdc", (table,), "cdc_zeta", GeneratorOptions(current="view", renames=renames))
    with DuckDBWarehouse(warehouse) as read:
        [plan] = plan_families(read, request)
    relations = {identifier_path("cdc", v.table_name): landed_rows(warehouse, v) for v in plan.versions}
    sql = ""
    for view in plan.all_views:  # each view reads the ones before it, and the version tables
        sql = view.body
        for name in sorted(relations, key=len, reverse=True):
            sql = re.sub(rf"{re.escape(name)}\b", lambda _, n=name: relations[n], sql)
        relations[identifier_path(view.dataset, view.name)] = f"({sql})"
    selected = ", ".join(f"CAST({c.strip()} AS STRING)" for c in columns.split(","))
    rows = evaluate(zetasql, f"SELECT {selected} FROM ({sql})")
    return sorted((tuple(row) for row in rows), key=lambda row: [(v is None, v or "") for v in row])


@pytest.mark.parametrize("case", list(dropped_and_added.CASES))
def test_the_evaluated_bigquery_sql_tells_a_column_dropped_and_added_from_a_type_change(zetasql, spark, tmp_path, case):
    changes, expected = dropped_and_added.CASES[case]
    warehouse = land(spark, tmp_path, [*dropped_and_added.BEFORE, *changes])
    refresh(warehouse, "view")
    columns = "_cdc_database, id, qty, name"
    assert evaluated_current(zetasql, warehouse, columns) == current(warehouse, "view", columns) == expected


def test_the_evaluated_bigquery_sql_carries_a_value_through_a_declared_rename(zetasql, spark, tmp_path):
    warehouse = land(spark, tmp_path, unavailable_values.TOASTED_THEN_RENAMED)
    renames = (Rename("customer", "memo", "note"),)
    expected = [("1", "a3", "big text"), ("2", "b2", "two"), ("3", "c", "three"), ("4", "d2", "four")]
    assert evaluated_current(zetasql, warehouse, "id, name, note", renames) == expected


def test_the_evaluated_bigquery_sql_shows_the_default_a_column_was_added_with(zetasql, tmp_path):
    """A type change restating the column without its default (MariaDB's MODIFY), or with another, leaves the
    older rows with the default the column was added with; a DROP and ADD with a new default fills them anew
    (tests/current/test_current_state.py lands the same changes and DuckDB shows the same rows)."""
    warehouse = tmp_path / "w.duckdb"
    current_state.land(
        warehouse, current_state.RESTATED, current_state.RESTATED_CHANGES, defaults=current_state.RESTATED_DEFAULTS
    )
    assert evaluated_current(zetasql, warehouse, "_cdc_database, id, n, tag", table="t") == [
        ("db1", "1", "-5", "x"),
        ("db1", "2", "1", "b"),
        ("db1", "3", "2", "c"),
        ("db3", "1", "9", "x"),
        ("db3", "2", "9", "t"),
        ("db3", "3", "4", "u"),
    ]


def test_the_evaluated_bigquery_sql_never_carries_a_value_from_another_row_of_the_key(zetasql, tmp_path):
    """A create that names a column in `_cdc_unavailable` (a primary-key UPDATE's) sent NULL: the key's rows
    before it (before a TRUNCATE, or a delete that carried the value) are another row's (the same changes as
    tests/current/test_current_state.py's, where DuckDB shows the same rows)."""
    warehouse = tmp_path / "w.duckdb"
    current_state.land(warehouse, {"t_v_a": current_state.V1}, current_state.ANOTHER_ROW_OF_THE_KEY)
    columns = "_cdc_database, id, name, doc, _cdc_unavailable[SAFE_OFFSET(0)]"
    assert evaluated_current(zetasql, warehouse, columns, table="t") == [
        ("db1", "2", "a", None, "doc"),
        ("db2", "4", "b2", None, "doc"),
        ("db3", "5", "c2", "kept", "doc"),
    ]


def test_the_evaluated_bigquery_sql_shows_the_value_a_row_moved_by_key_changes_held(zetasql, tmp_path, monkeypatch):
    """A create at the place of one delete (a primary-key UPDATE) that left a value out shows the old key's row's,
    through chains of key changes, up to the bound (the recursive query GoogleSQL runs; the same changes as
    tests/current/test_current_state.py's, where DuckDB shows the same rows)."""
    warehouse = tmp_path / "w.duckdb"
    current_state.land(warehouse, {"t_v_a": current_state.V1}, current_state.KEY_CHANGES)
    columns = "_cdc_database, id, name, doc, _cdc_unavailable[SAFE_OFFSET(0)]"
    monkeypatch.setattr("uniview.current.view.LINK_DEPTH", 2)  # db1's chain of two is followed, no longer one
    assert evaluated_current(zetasql, warehouse, columns, table="t") == [
        ("db1", "3", "a3", "big", "doc"),
        ("db2", "10", "n", None, "doc"),
        ("db2", "4", "again", "new", None),
        ("db2", "5", "d", "y", "doc"),
        ("db2", "8", "h", None, "doc"),
        ("db3", "12", "r", "r", "doc"),
        ("db3", "3", "q", "q", "doc"),
        ("db4", "3", "w", None, "doc"),
    ]
    monkeypatch.setattr("uniview.current.view.LINK_DEPTH", 1)
    assert ("db1", "3", "a3", None, "doc") in evaluated_current(zetasql, warehouse, columns, table="t")
