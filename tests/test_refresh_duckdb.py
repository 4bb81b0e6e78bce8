"""End to end on a real DuckDB file, through the real CLI: refresh, plan, idempotence, split, bad input."""

from __future__ import annotations

import json

import duckdb
import pytest
from click.testing import CliRunner
from families import mixed_duckdb_tables
from test_plan import assert_golden

from uniview.cli.main import main
from uniview.core.schema import table_listings
from uniview.ops.refresh import RefreshRequest, refresh
from uniview.planning.plan import GeneratorOptions
from uniview.warehouse import open_warehouse
from uniview.warehouse.url import duckdb_url


def run_sql(path, *statements):
    with duckdb.connect(str(path)) as connection:
        for statement in statements:
            connection.execute(statement)


def query(path, sql):
    with duckdb.connect(str(path), read_only=True) as connection:
        connection.execute("SET TimeZone='UTC'")
        return connection.execute(sql).fetchall()


def columns_of(path, schema, view):
    with duckdb.connect(str(path), read_only=True) as connection:
        return [
            (r[0], r[1])
            for r in connection.execute(
                "SELECT column_name, data_type FROM information_schema.columns "
                "WHERE table_schema = ? AND table_name = ? ORDER BY ordinal_position",
                [schema, view],
            ).fetchall()
        ]


def cli(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.fixture
def seed(tmp_path):
    path = tmp_path / "seed.duckdb"
    run_sql(
        path,
        "CREATE SCHEMA cdc",
        "CREATE TABLE cdc.customer_v_abc (id BIGINT, first_name VARCHAR, last_name VARCHAR, full_name VARCHAR)",
        "INSERT INTO cdc.customer_v_abc VALUES (1, 'John', 'Doe', 'John Doe'), (2, 'Jane', 'Roe', 'Jane Roe')",
        "CREATE TABLE cdc.customer_v_def (id VARCHAR, first_name VARCHAR, last_name VARCHAR, email VARCHAR)",
        "INSERT INTO cdc.customer_v_def VALUES ('c-3', 'Ann', 'Lee', 'ann@example.com'), ('c-4', 'Bo', 'Ng', NULL)",
    )
    return path


def test_seed_example_gives_all_four_rows_under_one_schema(seed):
    result = cli("refresh", "--warehouse", duckdb_url(seed), "--dataset", "cdc", "--table", "customer")
    assert result.exit_code == 0, result.output
    assert "cdc_unified.customer_unified" in result.output
    assert columns_of(seed, "cdc_unified", "customer_unified") == [
        ("id", "VARCHAR"),
        ("first_name", "VARCHAR"),
        ("last_name", "VARCHAR"),
        ("full_name", "VARCHAR"),
        ("email", "VARCHAR"),
    ]
    rows = query(seed, "SELECT * FROM cdc_unified.customer_unified ORDER BY id")
    assert rows == [
        ("1", "John", "Doe", "John Doe", None),
        ("2", "Jane", "Roe", "Jane Roe", None),
        ("c-3", "Ann", "Lee", None, "ann@example.com"),
        ("c-4", "Bo", "Ng", None, None),
    ]


def test_second_refresh_runs_no_ddl_and_plan_is_byte_identical(seed):
    url = duckdb_url(seed)
    request = RefreshRequest("cdc", ("customer",))
    with open_warehouse(url) as warehouse:
        first = refresh(warehouse, request)
        second = refresh(warehouse, request)
    assert first[0].replaced == ["cdc_unified.customer_unified"]
    assert (second[0].replaced, second[0].dropped, second[0].jobs) == ([], [], [])
    assert "unchanged" in cli("refresh", "--warehouse", url, "--dataset", "cdc", "--all").output
    plans = [cli("plan", "--warehouse", url, "--dataset", "cdc", "--table", "customer").stdout for _ in range(2)]
    assert plans[0] == plans[1] and plans[0].startswith("CREATE OR REPLACE VIEW cdc_unified.customer_unified AS")


def test_new_version_is_picked_up_and_source_column_names_it(seed):
    url = duckdb_url(seed)
    cli("refresh", "--warehouse", url, "--dataset", "cdc", "--all", "--source-column", "_src")
    run_sql(
        seed,
        "CREATE TABLE cdc.customer_v_ghi (id VARCHAR, email VARCHAR, vip BOOLEAN)",
        "INSERT INTO cdc.customer_v_ghi VALUES ('c-5', 'x@example.com', true)",
    )
    cli("refresh", "--warehouse", url, "--dataset", "cdc", "--all", "--source-column", "_src")
    assert query(seed, "SELECT _src, count(*) FROM cdc_unified.customer_unified GROUP BY 1 ORDER BY 1") == [
        ("customer_v_abc", 2),
        ("customer_v_def", 2),
        ("customer_v_ghi", 1),
    ]
    assert query(seed, "SELECT vip FROM cdc_unified.customer_unified WHERE id = 'c-5'") == [(True,)]


def test_plan_json_lists_dependencies_first(tmp_path):
    path = tmp_path / "wide.duckdb"
    statements = ["CREATE SCHEMA s"]
    for index in range(12):
        cols = ", ".join(f"column_number_{c} {'BIGINT' if index % 2 else 'VARCHAR'}" for c in range(20))
        statements += [
            f"CREATE TABLE s.events_v_{index:03d} ({cols})",
            f"INSERT INTO s.events_v_{index:03d} (column_number_0) VALUES ({index})",
        ]
    run_sql(path, *statements)
    args = ["--warehouse", duckdb_url(path), "--dataset", "s", "--table", "events", "--max-view-chars", "4000"]
    planned = json.loads(cli("plan", *args, "--json").stdout)["views"]
    names = [view["name"] for view in planned]
    assert names[-1] == "s_unified.events_unified" and all("_part_" in n for n in names[:-1]) and len(names) > 2
    assert all(len(view["sql"].split(" AS\n", 1)[1]) <= 4000 for view in planned)
    assert cli("refresh", *args).exit_code == 0
    assert query(path, "SELECT count(*), count(DISTINCT column_number_0) FROM s_unified.events_unified") == [(12, 12)]
    # A larger budget needs no parts: the top view is replaced and the parts are dropped.
    parts = list(names[:-1])
    with open_warehouse(duckdb_url(path)) as warehouse:
        (outcome,) = refresh(warehouse, RefreshRequest("s", ("events",)))
    assert outcome.replaced == ["s_unified.events_unified"] and outcome.dropped == sorted(parts)
    views = query(path, "SELECT view_name FROM duckdb_views() WHERE schema_name = 's_unified' ORDER BY 1")
    assert views == [("events_unified",)]
    assert query(path, "SELECT count(*) FROM s_unified.events_unified") == [(12,)]


def test_families_stay_isolated(tmp_path):
    path = tmp_path / "iso.duckdb"
    run_sql(
        path,
        "CREATE SCHEMA cdc",
        "CREATE TABLE cdc.customer_v_abc (id BIGINT)",
        "INSERT INTO cdc.customer_v_abc VALUES (1)",
        "CREATE TABLE cdc.customer_v_v_123 (x VARCHAR)",
        "INSERT INTO cdc.customer_v_v_123 VALUES ('v')",
        "CREATE TABLE cdc.customer_v_abc_backup (id BIGINT)",
        "INSERT INTO cdc.customer_v_abc_backup VALUES (9)",
        "CREATE TABLE cdc.customer_address_v_1 (street VARCHAR)",
    )
    assert cli("refresh", "--warehouse", duckdb_url(path), "--dataset", "cdc", "--all").exit_code == 0
    assert query(path, "SELECT * FROM cdc_unified.customer_unified") == [(1,)]
    assert query(path, "SELECT * FROM cdc_unified.customer_v_unified") == [("v",)]
    assert columns_of(path, "cdc_unified", "customer_address_unified") == [("street", "VARCHAR")]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--dataset", "cdc", "--table", "nobody"], "no version tables for 'nobody'"),
        (["--dataset", "nope", "--all"], "nope"),
        (["--dataset", "cdc; DROP SCHEMA cdc", "--all"], "invalid dataset name"),
        (["--dataset", "cdc", "--table", "customer`; --"], "invalid table name"),
        (["--dataset", "cdc", "--table", "customer", "--target-dataset", "a-b"], "invalid target dataset name"),
        (["--dataset", "cdc", "--table", "customer", "--datetime-timezone", "Moon/Base"], "unknown time zone"),
        (["--dataset", "cdc", "--table", "customer", "--source-column", "email"], "clashes"),
    ],
)
def test_bad_input_is_one_line_and_changes_nothing(seed, args, message):
    result = CliRunner().invoke(main, ["refresh", "--warehouse", duckdb_url(seed), *args])
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("uniview: error:") and message in lines[0], result.stderr
    assert query(seed, "SELECT count(*) FROM duckdb_views() WHERE NOT internal") == [(0,)]


def test_unreachable_warehouse_and_bad_urls_are_one_line(tmp_path):
    for url in (duckdb_url(tmp_path / "missing-dir" / "x.duckdb"), "duckdb://", "postgres://x", "bigquery://"):
        result = CliRunner().invoke(main, ["refresh", "--warehouse", url, "--dataset", "cdc", "--all"])
        assert result.exit_code == 1, (url, result.output)
        assert result.stderr.startswith("uniview: error:") and len(result.stderr.strip().splitlines()) == 1


def test_table_and_all_are_exclusive(seed):
    result = CliRunner().invoke(main, ["plan", "--warehouse", duckdb_url(seed), "--dataset", "cdc"])
    assert result.exit_code == 2 and "either --table NAME" in result.stderr


def test_policy_widen_keeps_numbers_numeric(tmp_path):
    path = tmp_path / "widen.duckdb"
    run_sql(
        path,
        "CREATE SCHEMA cdc",
        "CREATE TABLE cdc.m_v_1 (n INTEGER, d DATE)",
        "INSERT INTO cdc.m_v_1 VALUES (7, DATE '2024-02-29')",
        "CREATE TABLE cdc.m_v_2 (n DOUBLE, d TIMESTAMPTZ)",
        "INSERT INTO cdc.m_v_2 VALUES (1.5, TIMESTAMPTZ '2024-03-01 12:00:00+00')",
    )
    with open_warehouse(duckdb_url(path)) as warehouse:
        refresh(warehouse, RefreshRequest("cdc", ("m",), options=GeneratorOptions(policy="widen")))
    assert columns_of(path, "cdc_unified", "m_unified") == [("n", "DOUBLE"), ("d", "TIMESTAMP WITH TIME ZONE")]
    rows = query(path, "SELECT n, CAST(d AS VARCHAR) FROM cdc_unified.m_unified ORDER BY n")
    assert rows == [(1.5, "2024-03-01 12:00:00+00"), (7.0, "2024-02-29 00:00:00+00")]


@pytest.mark.parametrize("target", [None, "edge"])
def test_a_dataset_named_like_the_duckdb_file_is_a_clear_error(tmp_path, target):
    path = tmp_path / "edge.duckdb"
    with duckdb.connect(str(path)) as connection:
        connection.execute("CREATE SCHEMA edge.cdc; CREATE SCHEMA edge.edge")
        connection.execute("CREATE TABLE edge.cdc.t_v_1 (a INTEGER); CREATE TABLE edge.edge.t_v_1 (a INTEGER)")
    dataset = "edge" if target is None else "cdc"
    extra = [] if target is None else ["--target-dataset", target]
    result = CliRunner().invoke(
        main, ["refresh", "--warehouse", duckdb_url(path), "--dataset", dataset, "--all", *extra]
    )
    assert result.exit_code == 1
    assert "name DuckDB gives the catalog of edge.duckdb" in result.stderr


class LaggingMetadata:
    """A real DuckDB warehouse whose metadata lags for one table: it shows only when asked for by name,
    as BigQuery's INFORMATION_SCHEMA lags right after a table is created while tables.get finds it."""

    def __init__(self, warehouse, lagging_table):
        self.warehouse, self.lagging_table = warehouse, lagging_table

    def read_columns(self, dataset, families=None, required_tables=()):
        records = self.warehouse.read_columns(dataset, families, required_tables)
        if self.lagging_table in required_tables:
            return records
        return [r for r in records if r.table_name != self.lagging_table]

    def read_table_listings(self, dataset, families=None, required_tables=()):
        return table_listings(self.read_columns(dataset, families, required_tables))

    def __getattr__(self, name):
        return getattr(self.warehouse, name)


def test_the_recheck_keeps_a_required_version_that_metadata_does_not_list_yet(seed):
    with open_warehouse(duckdb_url(seed)) as warehouse:
        lagging = LaggingMetadata(warehouse, "customer_v_def")
        (outcome,) = refresh(lagging, RefreshRequest("cdc", ("customer",), required_tables=("customer_v_def",)))
    assert outcome.versions == ["customer_v_abc", "customer_v_def"] and outcome.rounds == 1
    assert query(seed, "SELECT count(*) FROM cdc_unified.customer_unified") == [(4,)]


def test_all_isolates_a_family_that_cannot_be_built(tmp_path):
    path = tmp_path / "mixed.duckdb"
    wide = ", ".join(f"column_with_a_long_name_{i} VARCHAR" for i in range(80))
    run_sql(
        path,
        "CREATE SCHEMA cdc",
        "CREATE TABLE cdc.alpha_v_1 (id BIGINT)",
        f"CREATE TABLE cdc.wide_v_1 ({wide})",
        "CREATE TABLE cdc.zulu_v_1 (id BIGINT)",
        "INSERT INTO cdc.alpha_v_1 VALUES (1)",
        "INSERT INTO cdc.zulu_v_1 VALUES (2)",
    )
    result = cli("refresh", "--warehouse", duckdb_url(path), "--dataset", "cdc", "--all", "--max-view-chars", "1000")
    assert result.exit_code == 1
    errors = [line for line in result.stderr.splitlines() if line.startswith("uniview: error:")]
    assert len(errors) == 1 and errors[0].startswith("uniview: error: wide: version table 'wide_v_1' alone needs")
    assert query(
        path, "SELECT * FROM cdc_unified.alpha_unified UNION ALL SELECT * FROM cdc_unified.zulu_unified ORDER BY 1"
    ) == [(1,), (2,)]
    planned = cli(
        "plan", "--warehouse", duckdb_url(path), "--dataset", "cdc", "--all", "--max-view-chars", "1000", "--json"
    )
    assert planned.exit_code == 1 and "uniview: error: wide:" in planned.stderr
    assert [v["name"] for v in json.loads(planned.stdout)["views"]] == [
        "cdc_unified.alpha_unified",
        "cdc_unified.zulu_unified",
    ]


def test_a_column_named_like_its_version_table_keeps_its_values(tmp_path):
    path = tmp_path / "alias.duckdb"
    run_sql(
        path,
        "CREATE SCHEMA cdc",
        "CREATE TABLE cdc.orders_v_1 (id BIGINT, orders_v_1 BIGINT)",
        "INSERT INTO cdc.orders_v_1 VALUES (1, 42)",
    )
    assert cli("refresh", "--warehouse", duckdb_url(path), "--dataset", "cdc", "--table", "orders").exit_code == 0
    assert query(path, "SELECT id, orders_v_1 FROM cdc_unified.orders_unified") == [(1, 42)]


@pytest.mark.parametrize(
    ("golden", "options"),
    [("mixed_family_plan.json", []), ("mixed_family_plan_parts.json", ["--max-view-chars", "6000"])],
)
def test_plan_json_of_a_mixed_family_is_unchanged(tmp_path, golden, options):
    """`uniview plan --json` byte for byte on a family whose versions differ in types and missing columns, read
    from a DuckDB file: reading, discovery and planning are made faster, never different."""
    path = tmp_path / "mixed.duckdb"
    tables = mixed_duckdb_tables(40, 16, seed=7)
    run_sql(
        path,
        "CREATE SCHEMA cdc",
        *(f"CREATE TABLE cdc.{table} ({', '.join(f'{c} {t}' for c, t in columns)})" for table, columns in tables),
    )
    planned = cli("plan", "--warehouse", duckdb_url(path), "--dataset", "cdc", "--table", "events", "--json", *options)
    assert planned.exit_code == 0, planned.output
    assert_golden(golden, planned.stdout)
