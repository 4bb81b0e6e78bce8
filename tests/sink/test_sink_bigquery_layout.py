"""The sink on the local BigQuery emulator with the real spark-bigquery-connector: the version table it creates is
partitioned by `_cdc_ingested_at` (here by HOUR, --partition-granularity) and clustered by `_cdc_database` and
the primary key, its quarantine by `quarantined_at` (DAY: never finer) and clustered by table and reason, as
tables.get reads them back; a version table an earlier release created unpartitioned still receives its rows."""

from __future__ import annotations

import pytest
from bigquery_limits import check_table_layout
from sink_support import record, version_table, write_ndjson

from uniview.core.landing_layout import QUARANTINE_TABLE
from uniview.local.bigquery_emulator import DEFAULT_PROJECT
from uniview.sink.job import SinkOptions, run

DATASET = "layout"
ORDERS = [("tenant", "varchar(20)"), ("ratio", "double"), ("id", "int(11)"), ("note", "text")]
LEGACY = [("id", "int(11)"), ("name", "varchar(40)")]


def create_unpartitioned(client, table: str, schema: list[tuple[str, str]]) -> None:
    """The version table as a release before partitioning created it: same schema and description, no layout."""
    from google.cloud import bigquery

    from uniview.sink.landing import source_schema_comment
    from uniview.sink.landing_bigquery import table_resource, version_table_schema
    from uniview.sink.mysql_types import bigquery_type
    from uniview.sink.routing import LandingColumn, VersionRoute

    version = version_table(table, schema)[len(table) + 3 :]
    columns = tuple(LandingColumn(name, declared, bigquery_type(declared).bq_type) for name, declared in schema)
    route = VersionRoute(DATASET, table, version, columns, exists=False, primary_key=("id",))
    client.create_dataset(f"{DEFAULT_PROJECT}.{DATASET}", exists_ok=True)
    resource = table_resource(
        DEFAULT_PROJECT, DATASET, route.table_name, version_table_schema(route), source_schema_comment(route), None
    )
    client.create_table(bigquery.Table.from_api_repr(resource))


def layout(client, table: str) -> tuple[dict | None, list | None]:
    properties = client.get_table(f"{DEFAULT_PROJECT}.{DATASET}.{table}")._properties
    check_table_layout(properties)  # the emulator takes layouts BigQuery refuses
    return properties.get("timePartitioning"), (properties.get("clustering") or {}).get("fields")


@pytest.fixture(scope="module")
def landed(spark, connector_stack, tmp_path_factory):
    client, options = connector_stack
    create_unpartitioned(client, "legacy", LEGACY)
    root = tmp_path_factory.mktemp("layout-input")
    orders = [
        record(
            "orders",
            {"tenant": "t1", "ratio": 0.5, "id": i, "note": f"n{i}"},
            ORDERS,
            primary_key=["tenant", "ratio", "id"],
        )
        for i in range(3)
    ]
    legacy = [record("legacy", {"id": i, "name": f"x{i}"}, LEGACY, primary_key=["id"]) for i in range(2)]
    write_ndjson(root / "in" / "a.json", [*orders, *legacy, "not a record"])
    result = run(
        spark,
        SinkOptions(
            input=str(root / "in"),
            warehouse=f"bigquery://{DEFAULT_PROJECT}",
            dataset=DATASET,
            bigquery_options=options,
            partition_granularity="HOUR",
        ),
    )
    return client, result


def test_every_record_lands_in_its_table(landed):
    _, result = landed
    assert dict(result.counts.written) == {
        f"{DATASET}.{version_table('orders', ORDERS)}": 3,
        f"{DATASET}.{version_table('legacy', LEGACY)}": 2,
    }
    assert dict(result.counts.quarantined) == {"unparseable": 1}


def test_the_new_version_table_is_partitioned_by_hour_and_clustered_by_database_and_key(landed):
    client, _ = landed
    table = version_table("orders", ORDERS)
    assert layout(client, table) == (
        {"type": "HOUR", "field": "_cdc_ingested_at"},
        ["_cdc_database", "tenant", "id"],  # ratio (FLOAT64) cannot cluster
    )
    rows = client.query(
        f"SELECT id FROM `{DATASET}.{table}` WHERE _cdc_ingested_at >= TIMESTAMP_SUB(CURRENT_TIMESTAMP(), "
        f"INTERVAL 1 DAY) AND _cdc_database = 'shop' AND tenant = 't1' ORDER BY id"
    ).result()
    assert [row[0] for row in rows] == [0, 1, 2]


def test_the_quarantine_is_partitioned_by_day_and_clustered_by_table_and_reason(landed):
    client, _ = landed
    assert layout(client, QUARANTINE_TABLE) == ({"type": "DAY", "field": "quarantined_at"}, ["table_name", "reason"])
    (row,) = client.query(f"SELECT reason FROM `{DATASET}.{QUARANTINE_TABLE}`").result()
    assert row[0] == "unparseable"


def test_an_unpartitioned_table_of_an_earlier_release_keeps_receiving_rows(landed):
    client, _ = landed
    table = version_table("legacy", LEGACY)
    assert layout(client, table) == (None, None)
    rows = client.query(f"SELECT id, name FROM `{DATASET}.{table}` ORDER BY id").result()
    assert [tuple(row.values()) for row in rows] == [(0, "x0"), (1, "x1")]


@pytest.mark.parametrize(
    ("warehouse", "granularity", "error"),
    [
        ("duckdb:///w.duckdb", "DAY", "--partition-granularity is for a BigQuery --warehouse"),
        ("bigquery://test-project", "WEEK", "--partition-granularity: invalid partition granularity 'WEEK'"),
    ],
)
def test_a_granularity_bigquery_has_not_or_a_duckdb_warehouse_is_refused(warehouse, granularity, error):
    from uniview.core.errors import ConfigError

    with pytest.raises(ConfigError, match=error):
        SinkOptions(input="in", warehouse=warehouse, partition_granularity=granularity).validate()
    SinkOptions(input="in", warehouse="bigquery://test-project", partition_granularity="month").validate()


def test_the_fleet_model_predicts_the_jobs_a_small_fleets_batch_runs(spark, connector_stack, tmp_path):
    """bench/fleet.py against the emulator's jobs.list: 20 databases x 5 tables in the shared dataset, every
    table written in one batch, which creates them (one job records its plan); the run's one extra job creates
    the control tables."""
    from bench.fleet import SINK_JOBS_PER_NEW_TABLES, SINK_JOBS_PER_RUN, Fleet, simulate

    client, options = connector_stack
    rows = [
        record(f"item{table}", {"id": 1, "name": "x"}, LEGACY, database=f"fleet{database:02d}")
        for database in range(20)
        for table in range(5)
    ]
    write_ndjson(tmp_path / "in" / "a.json", rows)
    before = {job.job_id for job in client.list_jobs(project=DEFAULT_PROJECT, all_users=True)}
    warehouse = f"bigquery://{DEFAULT_PROJECT}"
    result = run(
        spark, SinkOptions(input=str(tmp_path / "in"), warehouse=warehouse, dataset="fleet", bigquery_options=options)
    )
    assert result.failed == {} and result.counts.total_written == 100
    ran = [job for job in client.list_jobs(project=DEFAULT_PROJECT, all_users=True) if job.job_id not in before]
    predicted = simulate(Fleet(20, 5, 1, 1e9, 60.0, 0.0, "shared"))  # every table changes within the batch
    assert predicted.routes_per_batch == 5
    expected = predicted.sink_jobs_per_minute + SINK_JOBS_PER_NEW_TABLES + SINK_JOBS_PER_RUN
    assert len(ran) == expected == 7, sorted(job.query[:60] for job in ran)
