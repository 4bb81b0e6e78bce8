"""ZetaSQL's reference implementation answers a family's views (BigQuery SQL) over the rows its version tables
hold as DuckDB's views of the same family do (tests/zetasql/reference.py): values at the edges of every scalar
type, NULLs, a column of another type in each version (widened), a column only one version has."""

from __future__ import annotations

import duckdb
from reference import duckdb_answers, duckdb_family_differences, family_answers

from uniview.ops.refresh import RefreshRequest, plan_families, refresh
from uniview.planning.plan import GeneratorOptions
from uniview.warehouse import open_warehouse
from uniview.warehouse.url import duckdb_url

VERSIONS = (
    "CREATE TABLE cdc.item_v_a (id BIGINT, n INTEGER, price DECIMAL(12,2), x DOUBLE, label VARCHAR, day DATE, "
    "seen TIMESTAMP, seen_tz TIMESTAMPTZ, clock TIME, raw BLOB, ok BOOLEAN)",
    "INSERT INTO cdc.item_v_a VALUES "
    "(1, -2147483648, 9999999999.99, 'NaN', '', '0001-01-01', '9999-12-31 23:59:59.999999', "
    "'1970-01-01 00:00:00+00', '23:59:59.999999', '\\x00\\xFF'::BLOB, true), "
    "(2, 2147483647, -0.01, 'Infinity', 'Grüße ✓ 😀 ''q'' \\ back', '9999-12-31', '2024-02-29 12:00:00', "
    "'2038-01-19 03:14:08+00', '00:00:00', ''::BLOB, false), "
    "(3, NULL, NULL, -1.7976931348623157e308, NULL, NULL, NULL, NULL, NULL, NULL, NULL)",
    "CREATE TABLE cdc.item_v_b (id BIGINT, n BIGINT, price DECIMAL(38,10), x DOUBLE, label VARCHAR, extra VARCHAR)",
    "INSERT INTO cdc.item_v_b VALUES (4, 9223372036854775807, 1234567890123456789012345678.0123456789, "
    "'-Infinity', 'line\nbreak', 'only here'), (5, -9223372036854775808, 0, 5e-324, NULL, NULL)",
)


def test_zetasql_answers_the_views_as_duckdb_does(zetasql, tmp_path):
    path = tmp_path / "w.duckdb"
    with duckdb.connect(str(path)) as connection:
        connection.execute("CREATE SCHEMA cdc")
        for statement in VERSIONS:
            connection.execute(statement)
    warehouse = open_warehouse(duckdb_url(path))
    request = RefreshRequest("cdc", options=GeneratorOptions(policy="widen"))
    assert not [outcome for outcome in refresh(warehouse, request) if outcome.failed]
    (plan,) = plan_families(warehouse, request)
    warehouse.close()
    with duckdb.connect(str(path), read_only=True) as connection:
        connection.execute("SET TimeZone = 'UTC'")

        def read(sql: str) -> list[tuple]:
            return connection.execute(sql).fetchall()

        answers = family_answers(zetasql, plan, lambda dataset, table: read(f"SELECT * FROM {dataset}.{table}"))
        assert len(answers["cdc_unified.item_unified"][1]) == 5
        assert duckdb_answers(read, answers) == answers


def test_a_family_planned_from_the_warehouse_differs_nowhere(zetasql, tmp_path):
    """`duckdb_family_differences` plans the family from the file itself and finds no view that differs."""
    path = tmp_path / "w.duckdb"
    with duckdb.connect(str(path)) as connection:
        connection.execute("CREATE SCHEMA cdc")
        for statement in VERSIONS:
            connection.execute(statement)
    options = GeneratorOptions(policy="widen")
    warehouse = open_warehouse(duckdb_url(path))
    refresh(warehouse, RefreshRequest("cdc", options=options))
    warehouse.close()
    assert duckdb_family_differences(zetasql, path, "cdc", "item", options) == []
    with duckdb.connect(str(path)) as connection:  # DuckDB's view loses a row
        connection.execute("CREATE SCHEMA scratch")
        connection.execute("CREATE TABLE scratch.kept AS SELECT * FROM cdc_unified.item_unified WHERE id <> 1")
        connection.execute("CREATE OR REPLACE VIEW cdc_unified.item_unified AS SELECT * FROM scratch.kept")
    (different,) = duckdb_family_differences(zetasql, path, "cdc", "item", options)
    assert different[0] == "cdc_unified.item_unified"
