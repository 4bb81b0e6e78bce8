"""On BigQuery, the key state and `<table>_current` are CLUSTERed by the database and the key, and every
maintenance DELETE of either filters its target with a plain test of each clustering column (of the
leading one, the database, where every row of a database is deleted to be presented again) against the
window (`column IN (SELECT column FROM _uniview_window)`, with `OR column IS NULL` where the column may be
NULL): BigQuery prunes by clustering only on filters on the clustering columns themselves, so a
maintenance then reads the blocks of the changed keys, not the whole table.

The scripts uniview.warehouse.bigquery_current runs are parsed with sqlglot (BigQuery dialect) and each
statement is checked; no BigQuery is needed.  The checker is shown to refuse the former form, a DELETE
whose only filter is the correlated EXISTS over a function of the database column."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

import sqlglot
from sqlglot import exp

from uniview.core.landing_layout import CDC_COLUMNS
from uniview.core.schema import Column, TableVersion
from uniview.core.types import parse_type
from uniview.current.table import AppliedBatch, BatchWindow, CurrentTablePlan
from uniview.planning.plan import GeneratorOptions, plan_family
from uniview.warehouse.bigquery_current import action_script

FAMILY = "orders"
T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def plan_of(key: tuple[str, ...], columns: list[tuple[str, str]]) -> CurrentTablePlan:
    versions = [
        TableVersion(
            f"{FAMILY}_v_{name}",
            FAMILY,
            name,
            number,
            tuple(Column(c, parse_type(t)) for c, t in (*own, *CDC_COLUMNS)),
            key,
        )
        for number, (name, own) in enumerate((("a1", columns), ("b2", [*columns, ("status", "STRING")])))
    ]
    planned = plan_family("cdc", "cdc_unified", versions, GeneratorOptions(current="table")).current_table
    assert planned is not None
    return planned


def scripts(plan: CurrentTablePlan) -> dict[str, list[Any]]:
    """Every script job of the plan, parsed: build, maintain and re-present (with late batches)."""
    window = BatchWindow(T0, ((T0 - dt.timedelta(hours=3), T0 - dt.timedelta(hours=2)),))
    batches = (AppliedBatch("stream", 7, "2026-01-01 00:00:00.000000"),)
    parsed = {}
    for action in ("create", "maintain", "re-present"):
        text = action_script(plan, action, drop_view=action == "create", window=window, batches=batches)
        parsed[action] = [s for s in sqlglot.parse(text, read="bigquery") if s is not None]
    return parsed


def _name(table: Any) -> str:
    return f"{table.db}.{table.name}"


def clustering(statements: list[Any]) -> dict[str, tuple[str, ...]]:
    """{dataset.table: its CLUSTER BY columns} of the permanent tables the statements create."""
    found = {}
    for create in (s for s in statements if isinstance(s, exp.Create) and s.kind == "TABLE"):
        properties = create.args.get("properties")
        if properties and any(isinstance(p, exp.TemporaryProperty) for p in properties.expressions):
            continue
        cluster = create.find(exp.ClusterProperty)
        columns = tuple(c.name for c in cluster.expressions) if cluster else ()
        found[_name(create.this if isinstance(create.this, exp.Table) else create.this.find(exp.Table))] = columns
    return found


def _prunes(test: Any, column: str) -> bool:
    """`test` keeps only rows whose `column` (a plain column, no function around it) is one of a set:
    `column IN (...)`, `column = literal`, or such a test OR `column IS NULL`."""
    test = test.unnest()
    if isinstance(test, exp.Or):
        return all(_prunes(side, column) for side in test.flatten())
    if isinstance(test, exp.In | exp.EQ):
        return isinstance(test.this, exp.Column) and test.this.name == column
    if isinstance(test, exp.Is):
        return isinstance(test.this, exp.Column) and test.this.name == column and isinstance(test.expression, exp.Null)
    return False


def unpruned(statement: Any, clustered: Mapping[str, tuple[str, ...]]) -> list[str]:
    """The clustering columns of a DELETE, MERGE or UPDATE's clustered target that its filter does not test
    so BigQuery can prune by them (empty: every one is)."""
    if not isinstance(statement, exp.Delete | exp.Merge | exp.Update):
        return []
    target = statement.this if isinstance(statement.this, exp.Table) else statement.find(exp.Table)
    columns = clustered.get(_name(target), ())
    if isinstance(statement, exp.Merge):
        condition = statement.args.get("on")
    else:
        where = statement.args.get("where")
        condition = where.this if where is not None else None
    tests = list(condition.flatten()) if isinstance(condition, exp.And) else [condition] if condition else []
    return [column for column in columns if not any(_prunes(test, column) for test in tests)]


def test_the_key_state_and_the_current_table_are_clustered_by_the_database_and_the_key() -> None:
    plan = plan_of(("id", "region"), [("id", "INT64"), ("region", "STRING"), ("amount", "INT64")])
    clustered = clustering(scripts(plan)["create"])
    assert clustered[f"cdc_unified.{plan.state_name}"] == ("_uniview_kind", "_uniview_db", "id", "region")
    assert clustered["cdc_unified.orders_current"] == ("_cdc_database", "id", "region")


def test_every_maintenance_delete_of_a_clustered_table_filters_every_clustering_column() -> None:
    for key, columns in (
        (("id",), [("id", "INT64"), ("amount", "INT64")]),
        (("id", "region"), [("id", "INT64"), ("region", "STRING"), ("amount", "INT64")]),
        (("code",), [("code", "STRING"), ("amount", "FLOAT64")]),
        (("token",), [("token", "BYTES"), ("amount", "INT64")]),
    ):
        plan = plan_of(key, columns)
        parsed = scripts(plan)
        clustered = clustering(parsed["create"])
        for action in ("maintain", "re-present"):
            dml = [s for s in parsed[action] if isinstance(s, exp.Delete | exp.Merge | exp.Update)]
            on_clustered = [s for s in dml if _name(s.this.find(exp.Table) or s.this) in clustered]
            assert len(on_clustered) >= (2 if action == "maintain" else 1), (action, len(on_clustered))
            for statement in on_clustered:
                missing = unpruned(statement, clustered)
                if _of_whole_databases(statement):  # every key of the databases presented again: their blocks
                    leading = clustered[_name(statement.this.find(exp.Table))][0]
                    assert leading not in missing, statement.sql("bigquery")
                else:
                    assert missing == [], statement.sql("bigquery")


def _of_whole_databases(statement: Any) -> bool:
    """The DELETE of every row of the databases presented again (`_uniview_redo`), not of some keys."""
    return any(table.name == "_uniview_redo" for table in statement.find_all(exp.Table))


def test_a_key_that_cannot_be_clustered_leaves_the_database_alone_clustered_and_filtered() -> None:
    plan = plan_of(("token",), [("token", "BYTES"), ("amount", "INT64")])
    parsed = scripts(plan)
    clustered = clustering(parsed["create"])
    assert clustered["cdc_unified.orders_current"] == ("_cdc_database",)
    for statement in parsed["maintain"]:
        assert unpruned(statement, clustered) == [], statement.sql("bigquery")


def test_the_check_refuses_a_delete_filtered_only_by_a_correlated_exists() -> None:
    clustered = {"cdc_unified.orders_current": ("_cdc_database", "id")}
    former = sqlglot.parse_one(
        "DELETE FROM cdc_unified.orders_current AS c WHERE EXISTS (SELECT 1 FROM _uniview_window AS w"
        " WHERE w._uniview_db = IF(c._cdc_database IS NULL, '0', CONCAT('1', c._cdc_database))"
        " AND w.id IS NOT DISTINCT FROM c.id)",
        read="bigquery",
    )
    assert unpruned(former, clustered) == ["_cdc_database", "id"]
    half = sqlglot.parse_one(
        "DELETE FROM cdc_unified.orders_current AS c WHERE (c.id IN (SELECT id FROM _uniview_window) OR c.id > 3)",
        read="bigquery",
    )
    assert unpruned(half, clustered) == ["_cdc_database", "id"]
