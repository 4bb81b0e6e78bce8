"""`uniview refresh --current table` on a DuckDB file, through the CLI: create, maintain reading only the
changes since the watermark, re-present, rebuild, plan, and the switch between view and table."""

from __future__ import annotations

import json

import duckdb
from click.testing import CliRunner
from scenario import FAMILY
from test_current_duckdb import load

from uniview.cli.main import main
from uniview.core.billing import MB
from uniview.core.landing_layout import CDC_COLUMNS
from uniview.core.types import parse_type
from uniview.core.version_description import version_description
from uniview.current.table import WINDOW
from uniview.ops.refresh import RefreshRequest, plan_families
from uniview.planning.plan import GeneratorOptions
from uniview.warehouse.duckdb import DuckDBWarehouse, column_types
from uniview.warehouse.duckdb_current import window_sql
from uniview.warehouse.duckdb_types import duckdb_type
from uniview.warehouse.url import duckdb_url

ROW_GROUP = 122_880  # DuckDB's rows per row group


def cli(path, *args):
    return CliRunner().invoke(main, ["refresh", "--warehouse", duckdb_url(path), "--dataset", "cdc", *args])


def plan_cli(path, *args):
    return CliRunner().invoke(main, ["plan", "--warehouse", duckdb_url(path), "--dataset", "cdc", *args])


def rows(path, relation):
    with duckdb.connect(str(path), read_only=True) as connection:
        return sorted(map(repr, connection.execute(f"SELECT * FROM {relation}").fetchall()))


def tables(path, schema="cdc_unified"):
    with duckdb.connect(str(path), read_only=True) as connection:
        found = connection.execute("SELECT table_name FROM duckdb_tables() WHERE schema_name = ?", [schema]).fetchall()
    return sorted(name for (name,) in found)


def assert_equals_view(path, family=FAMILY):
    view = CliRunner().invoke(
        main,
        [
            "refresh",
            "--warehouse",
            duckdb_url(path),
            "--dataset",
            "cdc",
            "--table",
            family,
            "--current",
            "--target-dataset",
            "cdc_view",
        ],
    )
    assert view.exit_code == 0, view.output
    assert rows(path, f"cdc_unified.{family}_current") == rows(path, f"cdc_view.{family}_current")


def add_version(path, table, columns, rows_sql):
    """A version table of `columns` (BigQuery types), CDC columns appended, filled by `rows_sql`."""
    columns = list(columns) + list(CDC_COLUMNS)
    with duckdb.connect(str(path)) as connection:
        definitions = ", ".join(f'"{c}" {duckdb_type(parse_type(t))}' for c, t in columns)
        connection.execute(f"CREATE TABLE cdc.{table} ({definitions})")
        description = version_description(table.split("_v_")[0], [(c, t) for c, t in columns], ("id",))
        connection.execute(f"COMMENT ON TABLE cdc.{table} IS '" + description.replace("'", "''") + "'")
        connection.execute(f"INSERT INTO cdc.{table} {rows_sql}")


def test_plan_says_create_and_changes_nothing_then_refresh_creates_the_table_equal_to_the_view(tmp_path):
    path = tmp_path / "w.duckdb"
    load(path)
    planned = plan_cli(path, "--table", FAMILY, "--current", "table")
    assert planned.exit_code == 0, planned.output
    assert "customer_current (table): would create it" in planned.output
    assert tables(path) == []
    result = cli(path, "--table", FAMILY, "--current", "table")
    assert result.exit_code == 0, result.output
    assert "customer_current (table): create" in result.output
    assert_equals_view(path)
    again = plan_cli(path, "--table", FAMILY, "--current", "table", "--json")
    document = json.loads(again.stdout)
    assert [(t["name"], t["action"]) for t in document["current_tables"]] == [
        ("cdc_unified.customer_current", "maintain")
    ]
    assert any(statement.startswith("MERGE INTO") for statement in document["current_tables"][0]["statements"])
    (billing,) = document["billing"]
    floors = billing["floor_bytes"]
    # a maintenance reads the unified view (10 MB per version table) and its own state besides
    assert floors["query_unified"] == billing["version_tables"] * 10 * MB
    assert floors["query_current"] == 10 * MB
    assert floors["maintenance"] > floors["query_unified"] and floors["maintenance"] % (10 * MB) == 0
    assert floors["refresh"] > floors["maintenance"]


def test_a_new_version_with_a_new_column_type_rebuilds_one_with_the_same_columns_re_presents(tmp_path):
    path = tmp_path / "w.duckdb"
    load(path, only={"customer_v_a1"})
    assert cli(path, "--table", FAMILY, "--current", "table").exit_code == 0
    first_state = [name for name in tables(path) if name.startswith("_uniview")]
    load(path, only={"customer_v_b2"})  # id becomes STRING, email appears: the state's shape changes
    rebuilt = cli(path, "--table", FAMILY, "--current", "table")
    assert "customer_current (table): rebuild" in rebuilt.output, rebuilt.output
    assert_equals_view(path)
    second_state = [name for name in tables(path) if name.startswith("_uniview")]
    assert len(second_state) == 1 and not set(first_state) & set(second_state)  # one state table, the old dropped
    add_version(
        path,
        "customer_v_c3",
        [("id", "STRING"), ("name", "STRING"), ("email", "STRING")],
        "VALUES ('1', 'c3', 'e@x', 'BINLOG', 'UPDATE', 'mysql-bin.000009:1', TIMESTAMPTZ '2024-05-02 00:00:00+00',"
        " TIMESTAMPTZ '2024-05-02 00:00:00+00', 'db2', '000000000000000000090000000000000000000100000000000000000000',"
        " NULL)",
    )
    presented = cli(path, "--table", FAMILY, "--current", "table")
    # exactly the new change: nothing before the watermark is read again
    assert "customer_current (table): re-present, 1 change(s) read" in presented.output, presented.output
    assert_equals_view(path)
    assert [name for name in tables(path) if name.startswith("_uniview")] == second_state
    with duckdb.connect(str(path)) as connection:  # another state hash's table, left behind: any refresh drops it
        connection.execute(f"CREATE TABLE cdc_unified._uniview_current_facts_{FAMILY}_{'0' * 12} (x INTEGER)")
    assert (
        "customer_current (table): maintain, 0 change(s) read"  # nothing new: nothing is read again
        in cli(path, "--table", FAMILY, "--current", "table").output
    )
    assert [name for name in tables(path) if name.startswith("_uniview")] == second_state


def test_rebuild_current_gives_the_same_table_and_view_and_table_replace_each_other(tmp_path):
    path = tmp_path / "w.duckdb"
    load(path)
    assert cli(path, "--table", FAMILY, "--current").exit_code == 0  # the view first
    assert cli(path, "--table", FAMILY, "--current", "table").exit_code == 0  # the table replaces it
    built = rows(path, "cdc_unified.customer_current")
    rebuilt = cli(path, "--table", FAMILY, "--current", "table", "--rebuild-current")
    assert "customer_current (table): rebuild" in rebuilt.output
    assert rows(path, "cdc_unified.customer_current") == built
    assert cli(path, "--table", FAMILY, "--current").exit_code == 0  # and the view replaces the table
    assert tables(path) == []
    assert rows(path, "cdc_unified.customer_current") == built
    refused = cli(path, "--table", FAMILY, "--current", "--rebuild-current")
    assert refused.exit_code == 2 and "give --current table" in refused.output


def _history(count, first, hours):
    """`count` changes of 50,000 keys, positions from `first`, landed `hours` after 2025-01-01, one a second."""
    return (
        f"SELECT i % 50000, 'n' || i, 'BINLOG', CASE WHEN i < 50000 THEN 'INSERT' ELSE 'UPDATE' END, 'pos-' || i,"
        f" TIMESTAMPTZ '2025-01-01 00:00:00+00' + to_seconds(i), TIMESTAMPTZ '2025-01-01 00:00:00+00'"
        f" + to_hours({hours}) + to_seconds(i - {first}), 'db1', lpad(CAST(i AS VARCHAR), 20, '0'), NULL"
        f" FROM range({first}, {first + count}) AS r(i)"
    )


def test_maintenance_reads_only_the_changes_since_the_watermark(tmp_path):
    path = tmp_path / "w.duckdb"
    history = 150_000  # two row groups: the older one is never read again
    with duckdb.connect(str(path)) as connection:
        connection.execute("CREATE SCHEMA cdc")
    add_version(path, "big_v_a1", [("id", "INT64"), ("name", "STRING")], _history(history, 0, 0))
    assert cli(path, "--table", "big", "--current", "table").exit_code == 0
    with duckdb.connect(str(path)) as connection:  # 1,000 changes landed a day later
        connection.execute(f"INSERT INTO cdc.big_v_a1 {_history(1000, history, 24 * 10)}")
        floor = "(SELECT max(_cdc_ingested_at) FROM cdc.big_v_a1 WHERE _cdc_ingested_at < TIMESTAMPTZ '2025-01-06')"
        (expected,) = connection.execute(
            f"SELECT count(*) FROM cdc.big_v_a1 WHERE _cdc_ingested_at > {floor}"
        ).fetchone()
    assert expected == 1000  # exactly the changes since the watermark: nothing is read again
    scanned = _window_scan(path)  # the window the refresh will read: not the older row group
    assert expected <= scanned["total_rows_scanned"] <= ROW_GROUP < history
    assert scanned["total_row_groups_scanned"] < scanned["total_row_groups_to_scan"]
    result = cli(path, "--table", "big", "--current", "table")
    assert "customer_current" not in result.output
    assert f"big_current (table): maintain, {expected:,} change(s) read, 50,000 row(s)" in result.output
    assert_equals_view(path, "big")


def _window_scan(path):
    """The profile of the window's select as the next refresh would run it: rows and row groups read."""
    with DuckDBWarehouse(path) as warehouse:
        request = RefreshRequest("cdc", ("big",), options=GeneratorOptions(current="table"))
        plan = plan_families(warehouse, request)[0].current_table
        connection = warehouse._connect(create=False)
        select = window_sql(connection, plan, column_types(connection))
        connection.execute("SET enable_profiling='no_output'")
        connection.execute(f"SELECT _uniview_order FROM ({select}) AS {WINDOW}").fetchall()
        profile = json.loads(connection.get_profiling_information(format="json"))
        connection.execute("PRAGMA disable_profiling")
    return profile["query"]


def _change(key, value, position, minute):
    return (
        f"({key}, '{value}', 'BINLOG', 'UPDATE', 'mysql-bin.000001:{position}', TIMESTAMPTZ '2024-05-01 10:00:00+00',"
        f" TIMESTAMPTZ '2024-05-01 00:00:00+00' + to_minutes({minute}), 'db1',"
        f" lpad('1', 20, '0') || lpad('{position}', 20, '0') || lpad('0', 20, '0'), NULL)"
    )


def test_names_that_need_quoting_are_kept_alike(tmp_path):
    """A column named by a reserved word is quoted: the statements are then transpiled for DuckDB."""
    path = tmp_path / "w.duckdb"
    with duckdb.connect(str(path)) as connection:
        connection.execute("CREATE SCHEMA cdc")
    add_version(
        path,
        "odd_v_a1",
        [("id", "INT64"), ("order", "STRING")],
        "VALUES " + ", ".join([_change(1, "a", 1, 0), _change(2, "b", 2, 0)]),
    )
    assert cli(path, "--table", "odd", "--current", "table").exit_code == 0
    with duckdb.connect(str(path)) as connection:
        connection.execute(f"INSERT INTO cdc.odd_v_a1 VALUES {_change(1, 'c', 3, 600)}")
    result = cli(path, "--table", "odd", "--current", "table")
    assert "odd_current (table): maintain, 1 change(s) read, 2 row(s)" in result.output, result.output
    assert_equals_view(path, "odd")
    assert [
        value
        for (value,) in duckdb.connect(str(path), read_only=True)
        .execute('SELECT "order" FROM cdc_unified.odd_current ORDER BY id')
        .fetchall()
    ] == ["c", "b"]
