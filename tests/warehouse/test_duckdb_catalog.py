"""DuckDBWarehouse.read_columns on real DuckDB files: types, discovery, creation order, errors."""

from __future__ import annotations

import duckdb
import pytest
from counting_connection import CountingConnection

from uniview.core.errors import NotFoundError, TypeParseError, WarehouseError
from uniview.core.schema import discover_families
from uniview.core.types import parse_type
from uniview.warehouse import open_warehouse
from uniview.warehouse.duckdb import DuckDBWarehouse, record_created_tables, record_tables_created_in_order
from uniview.warehouse.duckdb_types import duckdb_type


def run_sql(path, *statements):
    with duckdb.connect(str(path)) as connection:
        for statement in statements:
            connection.execute(statement)


def read(path, dataset="cdc", **kwargs):
    with DuckDBWarehouse(path) as warehouse:
        return warehouse.read_columns(dataset, **kwargs)


# BigQuery type -> the DuckDB DDL uniview uses -> the BigQuery type read back from the catalog.
ROUND_TRIPS = [
    ("INT64", "BIGINT", "INT64"),
    ("FLOAT64", "DOUBLE", "FLOAT64"),
    ("NUMERIC", "DECIMAL(38, 9)", "NUMERIC(38, 9)"),
    ("NUMERIC(10, 2)", "DECIMAL(10, 2)", "NUMERIC(10, 2)"),
    ("BIGNUMERIC", "DOUBLE", "FLOAT64"),
    ("BIGNUMERIC(38, 20)", "DECIMAL(38, 20)", "BIGNUMERIC(38, 20)"),
    ("BIGNUMERIC(48, 10)", "DOUBLE", "FLOAT64"),
    ("BOOL", "BOOLEAN", "BOOL"),
    ("STRING", "VARCHAR", "STRING"),
    ("STRING(10)", "VARCHAR", "STRING"),
    ("BYTES", "BLOB", "BYTES"),
    ("DATE", "DATE", "DATE"),
    ("DATETIME", "TIMESTAMP", "DATETIME"),
    ("TIME", "TIME", "TIME"),
    ("TIMESTAMP", "TIMESTAMP WITH TIME ZONE", "TIMESTAMP"),
    ("JSON", "JSON", "JSON"),
    ("GEOGRAPHY", "VARCHAR", "STRING"),
    ("INTERVAL", "INTERVAL", "INTERVAL"),
    ("ARRAY<INT64>", "BIGINT[]", "ARRAY<INT64>"),
    ("ARRAY<DATETIME>", "TIMESTAMP[]", "ARRAY<DATETIME>"),
    (
        "ARRAY<STRUCT<a INT64, b ARRAY<STRING>>>",
        'STRUCT("a" BIGINT, "b" VARCHAR[])[]',
        "ARRAY<STRUCT<a INT64, b ARRAY<STRING>>>",
    ),
    (
        'STRUCT<`select` INT64, `a b` STRING, `é` DATE, `x\\`y` BOOL, `q"r` TIMESTAMP, `TIMESTAMP` DATETIME>',
        'STRUCT("select" BIGINT, "a b" VARCHAR, "é" DATE, "x`y" BOOLEAN, "q""r" TIMESTAMP WITH TIME ZONE, "TIMESTAMP" TIMESTAMP)',
        'STRUCT<select INT64, `a b` STRING, `é` DATE, `x\\`y` BOOL, `q"r` TIMESTAMP, TIMESTAMP DATETIME>',
    ),
    (
        "STRUCT<l1 STRUCT<l2 STRUCT<l3 STRUCT<l4 STRUCT<v INT64>>>>>",
        'STRUCT("l1" STRUCT("l2" STRUCT("l3" STRUCT("l4" STRUCT("v" BIGINT)))))',
        "STRUCT<l1 STRUCT<l2 STRUCT<l3 STRUCT<l4 STRUCT<v INT64>>>>>",
    ),
]


@pytest.mark.parametrize("bigquery, ddl, read_back", ROUND_TRIPS, ids=[r[0] for r in ROUND_TRIPS])
def test_bigquery_type_reads_back_from_the_catalog(catalog_types, bigquery, ddl, read_back):
    assert duckdb_type(parse_type(bigquery)) == ddl
    assert catalog_types[ddl] == read_back
    assert parse_type(catalog_types[ddl]) == parse_type(read_back)


# Column types a DuckDB table may have without uniview having written it.
NATIVE_TYPES = [
    ("INTEGER", "INT64"),
    ("SMALLINT", "INT64"),
    ("UINTEGER", "INT64"),
    ("UBIGINT", "NUMERIC"),
    ("HUGEINT", "BIGNUMERIC"),
    ("FLOAT", "FLOAT64"),
    ("UUID", "STRING"),
    ("TIMESTAMP_NS", "DATETIME"),
    ("TIMESTAMP_MS", "DATETIME"),
    ("TIMESTAMP_S", "DATETIME"),
    ("DECIMAL(18, 3)", "NUMERIC(18, 3)"),
    ("DECIMAL(38, 30)", "BIGNUMERIC(38, 30)"),
]


@pytest.mark.parametrize("ddl, read_back", NATIVE_TYPES)
def test_native_duckdb_types_map_to_bigquery(catalog_types, ddl, read_back):
    assert catalog_types[ddl] == read_back


@pytest.fixture(scope="module")
def catalog_types(tmp_path_factory):
    """{DuckDB DDL type: data_type read back}, from one file holding a version table per type."""
    db = tmp_path_factory.mktemp("types") / "types.duckdb"
    ddls = list(dict.fromkeys([ddl for _, ddl, _ in ROUND_TRIPS] + [ddl for ddl, _ in NATIVE_TYPES]))
    run_sql(db, "CREATE SCHEMA cdc", *(f"CREATE TABLE cdc.t{i}_v_1 (x {ddl})" for i, ddl in enumerate(ddls)))
    by_table = {r.table_name: r.data_type for r in read(db)}
    return {ddl: by_table[f"t{i}_v_1"] for i, ddl in enumerate(ddls)}


def test_unmappable_type_names_table_and_column(tmp_path):
    db = tmp_path / "map.duckdb"
    run_sql(db, "CREATE SCHEMA cdc", "CREATE TABLE cdc.orders_v_1 (id BIGINT, attrs MAP(VARCHAR, BIGINT))")
    with pytest.raises(TypeParseError, match=r"orders_v_1\.attrs.*MAP"):
        read(db)


@pytest.fixture
def mixed(tmp_path):
    db = tmp_path / "mixed.duckdb"
    run_sql(
        db,
        "CREATE SCHEMA cdc",
        "CREATE SCHEMA other",
        "CREATE TABLE cdc.customer_v_abc (id BIGINT, name VARCHAR, s STRUCT(a BIGINT))",
        "CREATE TABLE cdc.customer_v_abc_backup (id BIGINT)",
        "CREATE TABLE cdc.customer (id BIGINT)",
        "CREATE TABLE cdc.order_v_1 (total DOUBLE)",
        "CREATE VIEW cdc.customer_v_zz AS SELECT 1 AS id",
        "CREATE TABLE other.customer_v_q (id BIGINT)",
    )
    return db


def test_only_version_tables_of_the_dataset_are_read(mixed):
    records = read(mixed)
    assert sorted((r.table_name, r.column_name, r.ordinal_position, r.data_type) for r in records) == [
        ("customer_v_abc", "id", 1, "INT64"),
        ("customer_v_abc", "name", 2, "STRING"),
        ("customer_v_abc", "s", 3, "STRUCT<a INT64>"),
        ("order_v_1", "total", 1, "FLOAT64"),
    ]
    assert all(not r.is_hidden for r in records)


def test_wide_tables_are_listed_column_by_column_in_ordinal_order(tmp_path):
    """The catalog is read as one row per table whose columns are lists: on tables wide and many enough for
    DuckDB to aggregate on both threads, each table's columns still come in the order DuckDB declares them,
    the same in read_columns and read_table_listings, after columns are added, dropped and renamed."""
    db = tmp_path / "wide.duckdb"
    kinds = ["BIGINT", "VARCHAR", "DOUBLE", "DATE"]
    tables = [f"wide_v_{t:03d}" for t in range(60)]
    run_sql(
        db,
        "CREATE SCHEMA cdc",
        *(
            f"CREATE TABLE cdc.{table} ({', '.join(f'c{c} {kinds[(c + t) % 4]}' for c in range(400))})"
            for t, table in enumerate(tables)
        ),
        "ALTER TABLE cdc.wide_v_007 DROP COLUMN c3",
        "ALTER TABLE cdc.wide_v_007 ADD COLUMN added BOOLEAN",
        "ALTER TABLE cdc.wide_v_007 RENAME COLUMN c0 TO first",
    )
    with duckdb.connect(str(db)) as connection:
        declared = {
            table: [(name, kind) for name, kind, *_ in connection.execute(f"DESCRIBE cdc.{table}").fetchall()]
            for table in tables
        }
    with DuckDBWarehouse(db) as warehouse:
        listings = warehouse.read_table_listings("cdc")
        records = warehouse.read_columns("cdc")
    expected_names = {table: [name for name, _ in columns] for table, columns in declared.items()}
    assert {listing.table_name: list(listing.names) for listing in listings} == expected_names
    by_table: dict[str, list[tuple[int, str]]] = {}
    for record in records:
        by_table.setdefault(record.table_name, []).append((record.ordinal_position, record.column_name))
    assert {table: [name for _, name in sorted(columns)] for table, columns in by_table.items()} == expected_names
    wide_7 = next(listing for listing in listings if listing.table_name == "wide_v_007")
    assert (wide_7.names[0], wide_7.names[-1], wide_7.types[-1]) == ("first", "added", "BOOL")
    assert "c3" not in wide_7.names


def test_columns_the_catalog_lists_out_of_order_are_put_in_order():
    """An aggregation on several threads may fill a table's lists in any order of its columns: positions,
    names and types are reordered together."""
    from uniview.warehouse.duckdb import _table_listings

    rows = [("orders_v_1", 7, [3, 1, 2], ["c", "a", "b"], ["DATE", "BIGINT", "VARCHAR"])]
    (listing,) = _table_listings(rows, {"orders_v_1": 1.0})
    assert (list(listing.names), list(listing.types)) == (["a", "b", "c"], ["INT64", "STRING", "DATE"])


def test_families_filter(mixed):
    assert {r.table_name for r in read(mixed, families=["order"])} == {"order_v_1"}
    assert read(mixed, families=["nothing"]) == []


def test_required_tables(mixed):
    assert {r.table_name for r in read(mixed, required_tables=["order_v_1"])} == {"customer_v_abc", "order_v_1"}
    with pytest.raises(NotFoundError, match="order_v_2"):
        read(mixed, required_tables=["order_v_2"])
    with pytest.raises(NotFoundError, match="order_v_1"):
        read(mixed, families=["customer"], required_tables=["order_v_1"])


def test_missing_dataset(mixed):
    with pytest.raises(NotFoundError, match=r"dataset 'nope' not found in duckdb:///"):
        read(mixed, "nope")


def test_missing_file_is_a_missing_dataset_and_is_not_created(tmp_path):
    db = tmp_path / "absent.duckdb"
    with pytest.raises(NotFoundError, match="dataset 'cdc' not found"):
        read(db)
    with DuckDBWarehouse(db) as warehouse:
        assert warehouse.read_view_fingerprints("cdc_unified", "") == {}
    assert not db.exists()


def test_missing_parent_directory(tmp_path):
    with pytest.raises(WarehouseError, match=r"directory .*no_such_dir does not exist"):
        read(tmp_path / "no_such_dir" / "x.duckdb")


def test_file_that_is_not_duckdb(tmp_path):
    db = tmp_path / "notes.duckdb"
    db.write_text("just some text, not a database\n" * 50)
    with pytest.raises(WarehouseError, match="not a valid DuckDB database file") as raised:
        read(db)
    assert "\n" not in str(raised.value)


def test_directory_instead_of_file(tmp_path):
    with pytest.raises(WarehouseError, match="cannot open"):
        read(tmp_path)


def test_open_warehouse_url_forms(tmp_path, monkeypatch):
    run_sql(tmp_path / "rel.duckdb", "CREATE SCHEMA cdc", "CREATE TABLE cdc.t_v_1 (x BIGINT)")
    monkeypatch.chdir(tmp_path)
    with open_warehouse("duckdb:///rel.duckdb") as warehouse:
        assert warehouse.url == "duckdb:///rel.duckdb"
        assert [r.table_name for r in warehouse.read_columns("cdc")] == ["t_v_1"]
    with open_warehouse(f"duckdb:///{tmp_path}/rel.duckdb") as warehouse:
        assert warehouse.url == f"duckdb:///{tmp_path}/rel.duckdb"
        assert [r.table_name for r in warehouse.read_columns("cdc")] == ["t_v_1"]


# ---------------------------------------------------------------- creation order


def version_order(path):
    return [v.table_name for v in discover_families(read(path))["customer"]]


def test_table_oid_follows_creation_only_until_the_file_is_reopened(tmp_path):
    """Why creation order is kept in a ledger: a reopened file numbers tables by name."""
    db = tmp_path / "oid.duckdb"
    order_sql = "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'cdc' ORDER BY table_oid"
    with duckdb.connect(str(db)) as connection:
        connection.execute("CREATE SCHEMA cdc")
        connection.execute("CREATE TABLE cdc.customer_v_zz (id BIGINT)")
        connection.execute("CREATE TABLE cdc.customer_v_aa (id BIGINT)")
        assert [n for (n,) in connection.execute(order_sql).fetchall()] == ["customer_v_zz", "customer_v_aa"]
    with duckdb.connect(str(db)) as connection:
        assert [n for (n,) in connection.execute(order_sql).fetchall()] == ["customer_v_aa", "customer_v_zz"]


def test_a_table_created_later_sorts_later_even_if_its_name_sorts_first(tmp_path):
    db = tmp_path / "order.duckdb"
    run_sql(db, "CREATE SCHEMA cdc", "CREATE TABLE cdc.customer_v_zz (id BIGINT)")
    assert version_order(db) == ["customer_v_zz"]
    run_sql(db, "CREATE TABLE cdc.customer_v_aa (id BIGINT, email VARCHAR)")
    assert version_order(db) == ["customer_v_zz", "customer_v_aa"]
    created = {r.table_name: r.created for r in read(db)}
    assert created["customer_v_zz"] < created["customer_v_aa"]


def test_tables_created_in_the_readers_own_session_keep_creation_order(tmp_path):
    db = tmp_path / "session.duckdb"
    with duckdb.connect(str(db)) as creator:
        creator.execute("CREATE SCHEMA cdc")
        creator.execute("CREATE TABLE cdc.customer_v_zz (id BIGINT)")
        creator.execute("CREATE TABLE cdc.customer_v_aa (id BIGINT)")
        assert version_order(db) == ["customer_v_zz", "customer_v_aa"]


def test_creator_can_record_order_before_closing_the_file(tmp_path):
    db = tmp_path / "recorded.duckdb"
    with duckdb.connect(str(db)) as creator:
        creator.execute("CREATE SCHEMA cdc")
        creator.execute("CREATE TABLE cdc.customer_v_zz (id BIGINT)")
        creator.execute("CREATE TABLE cdc.customer_v_aa (id BIGINT)")
        creator.execute("CREATE TABLE cdc.customer_v_mm (id BIGINT)")
        assert record_created_tables(creator, "cdc") == {"customer_v_zz": 1, "customer_v_aa": 2, "customer_v_mm": 3}
    assert version_order(db) == ["customer_v_zz", "customer_v_aa", "customer_v_mm"]


def test_a_batch_of_tables_in_a_thousand_datasets_is_recorded_in_a_few_statements():
    """The creation ledger of a batch that created two tables in each of 1,000 tenant datasets: each dataset's tables
    ranked in the order they were created, in as many statements as for one table, not one per table."""
    created = [(f"tenant{n:04d}", table) for n in range(1000) for table in ("customer_v_b", "customer_v_a")]
    with duckdb.connect() as connection:
        connection.execute("BEGIN")
        for dataset, table in created:
            connection.execute(f"CREATE SCHEMA IF NOT EXISTS {dataset}")
            connection.execute(f"CREATE TABLE {dataset}.{table} (id BIGINT)")
        connection.execute("COMMIT")
        counting = CountingConnection(connection)
        record_tables_created_in_order(counting, created)
        ranked = connection.execute("SELECT dataset, table_name FROM _uniview.created_tables ORDER BY seq").fetchall()
    assert sorted(ranked) == sorted(created)
    assert all(ranked.index((d, "customer_v_b")) < ranked.index((d, "customer_v_a")) for d, _ in created[:20])
    assert counting.statements <= 10


def test_unrecorded_tables_from_a_closed_session_fall_back_to_name_order(tmp_path):
    db = tmp_path / "unrecorded.duckdb"
    run_sql(
        db,
        "CREATE SCHEMA cdc",
        "CREATE TABLE cdc.customer_v_zz (id BIGINT)",
        "CREATE TABLE cdc.customer_v_aa (id BIGINT)",
    )
    assert version_order(db) == ["customer_v_aa", "customer_v_zz"]


def test_a_dropped_and_recreated_table_counts_as_new(tmp_path):
    db = tmp_path / "recreated.duckdb"
    run_sql(db, "CREATE SCHEMA cdc", "CREATE TABLE cdc.customer_v_aa (id BIGINT)")
    assert version_order(db) == ["customer_v_aa"]
    run_sql(db, "CREATE TABLE cdc.customer_v_bb (id BIGINT)")
    assert version_order(db) == ["customer_v_aa", "customer_v_bb"]
    run_sql(db, "DROP TABLE cdc.customer_v_aa")
    assert version_order(db) == ["customer_v_bb"]
    run_sql(db, "CREATE TABLE cdc.customer_v_aa (id BIGINT)")
    assert version_order(db) == ["customer_v_bb", "customer_v_aa"]


def test_ledger_is_not_a_dataset_of_version_tables(tmp_path):
    db = tmp_path / "ledger.duckdb"
    run_sql(db, "CREATE SCHEMA cdc", "CREATE TABLE cdc.customer_v_aa (id BIGINT)")
    read(db)
    with duckdb.connect(str(db)) as connection:
        tables = connection.execute("SELECT schema_name, table_name FROM duckdb_tables() ORDER BY 1, 2").fetchall()
    assert tables == [("_uniview", "created_tables"), ("cdc", "customer_v_aa")]
    assert read(db, "_uniview") == []
