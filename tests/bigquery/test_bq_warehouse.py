"""The BigQuery warehouse against the local BigQuery API emulator: discovery, apply, skip when
unchanged, INFORMATION_SCHEMA lag, stored-view fingerprints, errors."""

from __future__ import annotations

import uuid

import pytest

from uniview.core.errors import NotFoundError, WarehouseError
from uniview.ops.refresh import RefreshRequest, plan_families, refresh
from uniview.planning.plan import GeneratorOptions
from uniview.warehouse.base import Applied, ViewChange, fingerprint
from uniview.warehouse.bigquery import BigQueryWarehouse

pytestmark = pytest.mark.emulator


def view_rows(bq_client, dataset, view, order_by="id"):
    return [dict(row) for row in bq_client.query(f"SELECT * FROM `{dataset}`.`{view}` ORDER BY {order_by}").result()]


def target_views(bq_client, dataset):
    return sorted(t.table_id for t in bq_client.list_tables(dataset) if t.table_type == "VIEW")


@pytest.fixture
def customer(dataset, run_sql):
    """Two versions of `customer` with rows, created one after the other; `orders` and noise beside them."""
    run_sql(
        f"CREATE TABLE `{dataset}`.customer_v_a1 (id INT64, amount NUMERIC(10, 2), tags ARRAY<STRING>, "
        f"s STRUCT<a INT64, b ARRAY<STRING>>, `select` STRING)",
        f"INSERT INTO `{dataset}`.customer_v_a1 (id, amount, tags, `select`) VALUES (1, 1.50, ['x'], 'one')",
        f"CREATE TABLE `{dataset}`.customer_v_b2 (id STRING, amount FLOAT64, email STRING)",
        f"INSERT INTO `{dataset}`.customer_v_b2 (id, amount, email) VALUES ('2', 2.25, 'b@example.com')",
        f"CREATE TABLE `{dataset}`.orders_v_x1 (order_id INT64)",
        f"CREATE TABLE `{dataset}`.customer_backup (id INT64)",
        f"CREATE VIEW `{dataset}`.customer_v_zz AS SELECT 1 AS id",
    )
    return dataset


def test_read_columns_of_one_family_in_creation_order_with_bigquery_types(warehouse, customer):
    records = warehouse.read_columns(customer, ["customer"])
    by_table = {}
    for record in records:
        by_table.setdefault(record.table_name, []).append(record)
    assert sorted(by_table) == ["customer_v_a1", "customer_v_b2"]
    assert [
        (r.column_name, r.data_type) for r in sorted(by_table["customer_v_a1"], key=lambda r: r.ordinal_position)
    ] == [
        ("id", "INT64"),
        ("amount", "NUMERIC"),
        ("tags", "ARRAY<STRING>"),
        ("s", "STRUCT<a INT64, b ARRAY<STRING>>"),
        ("select", "STRING"),
    ]
    assert by_table["customer_v_a1"][0].created < by_table["customer_v_b2"][0].created
    assert not any(r.is_hidden for r in records)


def test_read_columns_of_every_family_skips_views(warehouse, customer):
    tables = {record.table_name for record in warehouse.read_columns(customer)}
    assert {"customer_v_a1", "customer_v_b2", "orders_v_x1", "customer_backup"} <= tables
    assert "customer_v_zz" not in tables


def test_family_names_reach_the_query_only_as_parameters(warehouse, dataset, run_sql):
    family = "order items-2024"
    run_sql(f"CREATE TABLE `{dataset}`.`{family}_v_a1` (id INT64)", f"CREATE TABLE `{dataset}`.`order_v_a1` (id INT64)")
    sql, parameters = warehouse.columns_query(dataset, [family])
    assert family not in sql
    assert [p.values for p in parameters] == [[f"{family}_v_"]]
    assert {r.table_name for r in warehouse.read_columns(dataset, [family])} == {f"{family}_v_a1"}


def test_missing_dataset_is_not_found(warehouse):
    with pytest.raises(NotFoundError, match="cdc_does_not_exist"):
        warehouse.read_columns("cdc_does_not_exist", ["customer"])


def test_refresh_creates_target_dataset_and_view_in_one_job(warehouse, customer, bq_client):
    [outcome] = refresh(warehouse, RefreshRequest(customer, ("customer",)))
    assert outcome.versions == ["customer_v_a1", "customer_v_b2"]
    assert outcome.replaced == [f"{customer}_unified.customer_unified"]
    assert len(outcome.jobs) == 1
    assert bq_client.get_job(outcome.jobs[0]).state == "DONE"
    rows = view_rows(bq_client, f"{customer}_unified", "customer_unified")
    assert [(r["id"], r["email"], r["select"]) for r in rows] == [("1", None, "one"), ("2", "b@example.com", None)]


def test_target_dataset_is_created_in_the_source_location(warehouse, bq_client, run_sql):
    from google.cloud import bigquery

    source = bigquery.Dataset(f"test-project.eu_{uuid.uuid4().hex[:10]}")
    source.location = "EU"
    bq_client.create_dataset(source)
    run_sql(f"CREATE TABLE `{source.dataset_id}`.customer_v_a1 (id INT64)")
    refresh(warehouse, RefreshRequest(source.dataset_id, ("customer",)))
    assert bq_client.get_dataset(f"{source.dataset_id}_unified").location == "EU"


def test_body_ending_in_a_comment_is_applied_whole(warehouse, customer, bq_client):
    body = f"SELECT id FROM `{customer}`.customer_v_a1\n-- a comment on the last line"
    warehouse.apply([ViewChange(f"{customer}_unified", "commented", body)])
    assert [r["id"] for r in view_rows(bq_client, f"{customer}_unified", "commented")] == [1]
    assert warehouse.read_view_fingerprints(f"{customer}_unified", "commented") == {"commented": fingerprint(body)}


def test_second_refresh_runs_no_ddl_job(warehouse, customer):
    refresh(warehouse, RefreshRequest(customer, ("customer",)))
    jobs_before = warehouse.jobs_started
    [outcome] = refresh(warehouse, RefreshRequest(customer, ("customer",)))
    assert not outcome.changed and outcome.jobs == []
    assert warehouse.jobs_started - jobs_before == 1  # the metadata read; stored views come from tables.get


def test_new_version_replaces_the_view(warehouse, customer, run_sql, bq_client):
    refresh(warehouse, RefreshRequest(customer, ("customer",)))
    run_sql(
        f"CREATE TABLE `{customer}`.customer_v_c3 (id INT64, email STRING)",
        f"INSERT INTO `{customer}`.customer_v_c3 VALUES (3, 'c@example.com')",
    )
    [outcome] = refresh(warehouse, RefreshRequest(customer, ("customer",), required_tables=("customer_v_c3",)))
    assert outcome.changed and outcome.versions[-1] == "customer_v_c3"
    assert [r["id"] for r in view_rows(bq_client, f"{customer}_unified", "customer_unified")] == ["1", "2", "3"]


@pytest.mark.parametrize("one_by_one", [16, 0], ids=["tables.get", "information_schema"])
def test_stored_view_fingerprint_matches_the_rendered_body(warehouse, customer, monkeypatch, one_by_one):
    monkeypatch.setattr("uniview.warehouse.bigquery.MAX_VIEWS_READ_ONE_BY_ONE", one_by_one)
    assert warehouse.read_view_fingerprints(f"{customer}_unified", "") == {}
    [plan] = plan_families(warehouse, RefreshRequest(customer, ("customer",)))
    refresh(warehouse, RefreshRequest(customer, ("customer",)))
    assert warehouse.read_view_fingerprints(f"{customer}_unified", "customer_unified") == {
        "customer_unified": fingerprint(plan.top_view.body)
    }
    assert warehouse.read_view_fingerprints(f"{customer}_unified", "orders") == {}


@pytest.mark.parametrize("keep_description", [False, True])
def test_view_edited_by_hand_is_replaced(warehouse, customer, run_sql, bq_client, keep_description):
    refresh(warehouse, RefreshRequest(customer, ("customer",)))
    view = bq_client.get_table(f"{customer}_unified.customer_unified")
    options = f"OPTIONS(description='{view.description}') " if keep_description else ""
    run_sql(f"CREATE OR REPLACE VIEW `{customer}_unified`.customer_unified {options}AS SELECT 'edited' AS id")
    [outcome] = refresh(warehouse, RefreshRequest(customer, ("customer",)))
    assert outcome.changed
    assert [r["id"] for r in view_rows(bq_client, f"{customer}_unified", "customer_unified")] == ["1", "2"]


def test_stale_part_views_are_dropped_in_the_same_job(warehouse, dataset, run_sql, bq_client):
    columns = ", ".join(f"a_rather_long_column_name_number_{i} STRING" for i in range(8))
    run_sql(*(f"CREATE TABLE `{dataset}`.wide_v_{v} (id INT64, {columns})" for v in ("a1", "b2", "c3")))
    narrow = RefreshRequest(dataset, ("wide",), options=GeneratorOptions(max_view_chars=1000))
    [plan] = plan_families(warehouse, narrow)
    parts = sorted(view.name for view in plan.views[:-1])
    assert len(parts) >= 2
    [split] = refresh(warehouse, narrow)
    assert len(split.replaced) == len(parts) + 1 and len(split.jobs) == 1
    assert bq_client.get_job(split.jobs[0]).statement_type == "SCRIPT"  # every view in one job
    assert target_views(bq_client, f"{dataset}_unified") == sorted(["wide_unified", *parts])
    [merged] = refresh(warehouse, RefreshRequest(dataset, ("wide",)))
    assert len(merged.jobs) == 1 and sorted(merged.dropped) == [f"{dataset}_unified.{p}" for p in parts]
    assert target_views(bq_client, f"{dataset}_unified") == ["wide_unified"]


class LaggingWarehouse(BigQueryWarehouse):
    """INFORMATION_SCHEMA as it is right after a table was created: some tables not listed yet."""

    def __init__(self, project, hidden, **kwargs):
        super().__init__(project, **kwargs)
        self.hidden = list(hidden)

    def columns_query(self, dataset, families):
        from google.cloud import bigquery

        sql, parameters = super().columns_query(dataset, families)
        hidden = bigquery.ArrayQueryParameter("hidden", "STRING", self.hidden)
        return f"SELECT * FROM ({sql}) WHERE table_name NOT IN UNNEST(@hidden)", [*parameters, hidden]


def test_required_table_missing_from_information_schema_is_read_with_tables_get(customer, run_sql, bq_client):
    run_sql(
        f"CREATE TABLE `{customer}`.customer_v_c3 (id INT64, amount NUMERIC(12, 3), "
        f"s ARRAY<STRUCT<a BOOL, b FLOAT64>>, t TIMESTAMP)",
        f"INSERT INTO `{customer}`.customer_v_c3 (id) VALUES (3)",
    )
    with LaggingWarehouse("test-project", ["customer_v_c3"], retry_deadline=30) as lagging:
        assert "customer_v_c3" not in {r.table_name for r in lagging.read_columns(customer, ["customer"])}
        records = [
            r
            for r in lagging.read_columns(customer, ["customer"], ["customer_v_c3"])
            if r.table_name == "customer_v_c3"
        ]
        assert [(r.column_name, r.ordinal_position, r.data_type) for r in records] == [
            ("id", 1, "INT64"),
            ("amount", 2, "NUMERIC(12, 3)"),
            ("s", 3, "ARRAY<STRUCT<a BOOL, b FLOAT64>>"),
            ("t", 4, "TIMESTAMP"),
        ]
        assert records[0].created >= bq_client.get_table(f"{customer}.customer_v_b2").created.timestamp()
        [outcome] = refresh(lagging, RefreshRequest(customer, ("customer",), required_tables=("customer_v_c3",)))
    assert outcome.versions == ["customer_v_a1", "customer_v_b2", "customer_v_c3"]
    assert [r["id"] for r in view_rows(bq_client, f"{customer}_unified", "customer_unified")] == ["1", "2", "3"]


def test_required_table_that_does_not_exist_is_not_found(warehouse, customer):
    with pytest.raises(NotFoundError, match="customer_v_nope"):
        warehouse.read_columns(customer, ["customer"], ["customer_v_nope"])
    with pytest.raises(NotFoundError, match="customer_v_zz"):  # a view, not a version table
        warehouse.read_columns(customer, ["customer"], ["customer_v_zz"])


def test_refused_statement_is_a_warehouse_error_with_bigquery_message(warehouse, customer, bq_client):
    bad = ViewChange(
        f"{customer}_unified", "customer_unified", f"SELECT no_such_column FROM `{customer}`.customer_v_a1"
    )
    with pytest.raises(WarehouseError, match="no_such_column") as raised:
        warehouse.apply([bad])
    assert type(raised.value) is WarehouseError
    assert warehouse.apply([]) == Applied([], None)


def test_concurrent_applies_to_one_view_all_succeed(warehouse, customer):
    from concurrent.futures import ThreadPoolExecutor

    body = f"SELECT id FROM `{customer}`.customer_v_a1"
    changes = [[ViewChange(f"{customer}_unified", "customer_unified", f"{body} WHERE id > {n}")] for n in range(12)]
    with ThreadPoolExecutor(6) as pool:
        job_ids = list(pool.map(warehouse.apply, changes))
    assert all(len(applied.jobs) == 1 for applied in job_ids)


def test_the_emulator_runs_each_query_on_the_threads_the_run_sets(bq_client):
    """The test run sets UNIVIEW_BQ_EMULATOR_THREADS (tests/conftest.py) and the shim gives the emulator's DuckDB
    that many threads: one, where DuckDB's default would be one per core."""
    import os

    from uniview.local.bigquery_emulator import THREADS_VARIABLE

    (row,) = bq_client.query_and_wait("SELECT current_setting('threads') AS threads")
    assert row["threads"] == int(os.environ[THREADS_VARIABLE]) == 1
