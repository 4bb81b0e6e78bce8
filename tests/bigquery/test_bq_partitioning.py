"""History that prunes: the BigQuery tables the sink and consolidation create are partitioned by
`_cdc_ingested_at` and clustered by `_cdc_database` and the primary key; the quarantine by `quarantined_at`,
clustered by table and reason.  Checked in what the code sends (the tables.insert body, the CREATE TABLE)
and in what the local BigQuery emulator then answers to tables.get, which keeps both settings."""

from __future__ import annotations

from datetime import timedelta

import pytest
from bigquery_limits import check_table_layout
from google.api_core.exceptions import BadRequest

from uniview.core.landing_layout import (
    CDC_COLUMNS,
    MAX_CLUSTERING_COLUMNS,
    QUARANTINE_TABLE,
    TableLayout,
    history_granularity,
    quarantine_layout,
    table_layout,
)
from uniview.core.types import Array, parse_type
from uniview.local.bigquery_emulator import DEFAULT_PROJECT
from uniview.ops.consolidate import ConsolidationRequest, consolidate

CDC = [(name, parse_type(bq_type)) for name, bq_type in CDC_COLUMNS]


def columns(*pairs: tuple[str, str]) -> list:
    return [(name, parse_type(bq_type)) for name, bq_type in pairs] + CDC


# --- the layout rules (pure) ---


def test_version_tables_partition_by_ingestion_time_and_cluster_by_database_then_key():
    layout = table_layout(columns(("tenant", "STRING"), ("id", "INT64"), ("name", "STRING")), ("tenant", "id"))
    assert layout == TableLayout("_cdc_ingested_at", "DAY", ("_cdc_database", "tenant", "id"))
    assert layout.api_resource() == {
        "timePartitioning": {"type": "DAY", "field": "_cdc_ingested_at"},
        "clustering": {"fields": ["_cdc_database", "tenant", "id"]},
    }
    assert (
        layout.ddl()
        == "PARTITION BY TIMESTAMP_TRUNC(`_cdc_ingested_at`, DAY) CLUSTER BY `_cdc_database`, `tenant`, `id`"
    )


def test_key_columns_bigquery_cannot_cluster_by_are_skipped_and_at_most_four_are_kept():
    key_types = {"f": "FLOAT64", "j": "JSON", "b": "BYTES", "t": "TIME", "a": "ARRAY<INT64>", "s": "STRUCT<x INT64>"}
    clusterable = {"n": "NUMERIC", "d": "DATE", "dt": "DATETIME", "ok": "BOOL", "ts": "TIMESTAMP"}
    key = [*key_types, *clusterable]
    layout = table_layout(columns(*key_types.items(), *clusterable.items()), key, "hour")
    assert layout.clustering == ("_cdc_database", "n", "d", "dt") and len(layout.clustering) == MAX_CLUSTERING_COLUMNS
    assert layout.granularity == "HOUR"


def test_the_key_is_spelled_as_the_table_spells_it_and_no_key_clusters_by_database_only():
    assert table_layout(columns(("ID", "INT64")), ("id",)).clustering == ("_cdc_database", "ID")
    assert table_layout(columns(("id", "INT64")), None).clustering == ("_cdc_database",)


def test_a_table_without_a_timestamp_ingestion_column_is_not_partitioned():
    assert table_layout([("id", parse_type("INT64"))], ("id",)) == TableLayout(None, "DAY", ("id",))
    assert table_layout([("id", parse_type("INT64"))], ("id",)).ddl() == "CLUSTER BY `id`"
    assert table_layout([("_cdc_ingested_at", parse_type("STRING"))], None).partition_column is None


def test_history_tables_are_never_partitioned_finer_than_a_day():
    assert [history_granularity(g) for g in ("HOUR", "day", "MONTH", "YEAR")] == ["DAY", "DAY", "MONTH", "YEAR"]
    assert quarantine_layout("HOUR") == TableLayout("quarantined_at", "DAY", ("table_name", "reason"))
    with pytest.raises(ValueError, match="choose one of HOUR, DAY, MONTH, YEAR"):
        table_layout(CDC, None, "WEEK")


def test_the_limits_the_emulator_does_not_enforce_are_checked():
    """What check_table_layout refuses, as BigQuery does; the layouts above pass it."""
    schema = {"fields": [{"name": n, "type": t, "mode": "NULLABLE"} for n, t in [("a", "STRING"), ("f", "FLOAT64")]]}
    schema["fields"] += [{"name": "ts", "type": "TIMESTAMP"}, {"name": "d", "type": "DATE"}]
    schema["fields"] += [{"name": "r", "type": "STRING", "mode": "REPEATED"}]
    refused = [
        {"clustering": {"fields": ["f"]}},
        {"clustering": {"fields": ["r"]}},
        {"clustering": {"fields": ["a", "ts", "d", "a", "ts"]}},
        {"clustering": {"fields": ["missing"]}},
        {"timePartitioning": {"type": "DAY", "field": "a"}},
        {"timePartitioning": {"type": "HOUR", "field": "d"}},
    ]
    for layout in refused:
        with pytest.raises(BadRequest):
            check_table_layout({"schema": schema, **layout})
    check_table_layout({"schema": schema, "timePartitioning": {"type": "HOUR", "field": "ts"}})
    version = columns(("ratio", "FLOAT64"), ("id", "INT64"), ("k", "STRING"), ("d", "DATE"), ("n", "NUMERIC"))
    layout = table_layout(version, ("ratio", "id", "k", "d", "n"), "HOUR")
    fields = [
        {"name": n, "type": t.element.sql(), "mode": "REPEATED"}
        if isinstance(t, Array)
        else {"name": n, "type": t.sql(), "mode": "NULLABLE"}
        for n, t in version
    ]
    check_table_layout({"schema": {"fields": fields}, **layout.api_resource()})


# --- on the emulator ---


def metadata(bq_client, dataset: str, table: str) -> tuple[dict | None, list | None]:
    """(timePartitioning, clustering fields) as tables.get answers them."""
    got = bq_client.get_table(f"{DEFAULT_PROJECT}.{dataset}.{table}")
    check_table_layout(got.to_api_repr())  # the emulator takes layouts BigQuery refuses
    clustering = got._properties.get("clustering")
    return got._properties.get("timePartitioning"), clustering and clustering["fields"]


def route(dataset: str, version: str, key: tuple[str, ...] | None, *pairs: tuple[str, str, str]):
    from uniview.sink.routing import LandingColumn, VersionRoute

    landed = tuple(LandingColumn(name, declared, parse_type(bq_type)) for name, declared, bq_type in pairs)
    return VersionRoute(dataset, "orders", version, landed, exists=False, primary_key=key)


@pytest.fixture
def landing(bq_emulator_host, monkeypatch):
    """A BigQueryLanding on the emulator creating tables partitioned by MONTH; every tables.insert body kept."""
    pytest.importorskip("pyspark", reason="the sink's BigQuery landing imports pyspark")
    from uniview.sink.landing_bigquery import BigQueryLanding
    from uniview.sink.pending import MemoryPendingStore

    opened = BigQueryLanding(DEFAULT_PROJECT, MemoryPendingStore(), partition_granularity="month")
    sent: list[dict] = []
    create = opened._client.create_table
    monkeypatch.setattr(
        opened._client, "create_table", lambda table, **kw: (sent.append(table.to_api_repr()), create(table, **kw))[1]
    )
    opened.sent = sent
    yield opened
    opened.close()


def test_the_sink_creates_version_tables_and_the_quarantine_partitioned_and_clustered(landing, bq_client, dataset):
    key_route = route(dataset, "a1", ("Ratio", "id"), ("id", "int", "INT64"), ("Ratio", "double", "FLOAT64"))
    assert landing.create_version_table(key_route) and landing.create_quarantine_table(dataset)
    assert landing.create_version_table(route(dataset, "b2", None, ("id", "int", "INT64")))

    version_layout = {"timePartitioning": {"type": "MONTH", "field": "_cdc_ingested_at"}}
    sent = {body["tableReference"]["tableId"]: body for body in landing.sent}
    for body in landing.sent:
        check_table_layout(body)
    assert sent["orders_v_a1"]["timePartitioning"] == version_layout["timePartitioning"]
    assert sent["orders_v_a1"]["clustering"] == {"fields": ["_cdc_database", "id"]}  # FLOAT64 Ratio skipped
    assert metadata(bq_client, dataset, "orders_v_a1") == (version_layout["timePartitioning"], ["_cdc_database", "id"])
    assert metadata(bq_client, dataset, "orders_v_b2") == (version_layout["timePartitioning"], ["_cdc_database"])
    assert metadata(bq_client, dataset, QUARANTINE_TABLE) == (
        {"type": "MONTH", "field": "quarantined_at"},
        ["table_name", "reason"],
    )
    # the schema and description are sent as before
    assert [f["name"] for f in sent["orders_v_a1"]["schema"]["fields"]][:2] == ["id", "Ratio"]
    assert "Ratio" in bq_client.get_table(f"{DEFAULT_PROJECT}.{dataset}.orders_v_a1").description


def test_a_table_that_exists_unpartitioned_is_left_as_it_is(landing, bq_client, run_sql, dataset):
    cdc = ", ".join(f"{name} {bq_type}" for name, bq_type in CDC_COLUMNS)
    run_sql(f"CREATE TABLE `{dataset}.orders_v_c3` (id INT64, {cdc})")
    assert not landing.create_version_table(route(dataset, "c3", ("id",), ("id", "int", "INT64")))
    assert landing.sent == [] and metadata(bq_client, dataset, "orders_v_c3") == (None, None)


def test_the_unified_view_reads_unpartitioned_and_partitioned_versions_alike(landing, warehouse, bq_client, dataset):
    """A family whose older version an earlier release created unpartitioned and whose newer one is partitioned:
    filters on the partition and clustering columns written against the view return the rows of both."""
    from uniview.ops.refresh import RefreshRequest, refresh

    old = route(dataset, "b1", ("id",), ("id", "int", "INT64"), ("amount", "decimal(10,2)", "NUMERIC(10, 2)"))
    create_unpartitioned(landing, bq_client, dataset, old)
    new = route(dataset, "c2", ("id",), ("id", "int", "INT64"), ("amount", "varchar(9)", "STRING"))
    landing.create_version_table(new)
    bq_client.query(
        f"INSERT INTO `{dataset}.{new.table_name}` (id, amount, _cdc_database, _cdc_ingested_at) VALUES "
        "(4, 'x', 'shop', TIMESTAMP '2026-03-05 00:00:00+00'), (5, 'y', 'shop', TIMESTAMP '2025-12-01 00:00:00+00')"
    ).result()
    assert metadata(bq_client, dataset, old.table_name)[0] is None
    assert metadata(bq_client, dataset, new.table_name)[0] == {"type": "MONTH", "field": "_cdc_ingested_at"}
    (outcome,) = refresh(warehouse, RefreshRequest(dataset=dataset, tables=("orders",)))
    assert not outcome.failed
    rows = bq_client.query(
        f"SELECT id FROM `{dataset}_unified.orders_unified` WHERE _cdc_ingested_at >= TIMESTAMP '2026-01-01' "
        "AND _cdc_database = 'shop' AND id > 0 ORDER BY id"
    ).result()
    assert [row[0] for row in rows] == [1, 2, 4]  # 3: no landing time, database 'other'; 5: landed before


def test_consolidation_creates_its_table_partitioned_and_clustered_by_the_recorded_key(
    landing, warehouse, bq_client, run_sql, dataset
):
    """Version tables made by the sink (their descriptions record the key), folded: the consolidated table
    takes their clustering (the key read back from the descriptions) and is partitioned by DAY."""
    for index, amount in enumerate(["INT64", "STRING", "INT64"]):
        version = f"{index:09x}"
        landing.create_version_table(
            route(
                dataset,
                version,
                ("tenant", "id"),
                ("tenant", "varchar", "STRING"),
                ("id", "int", "INT64"),
                ("amount", "x", amount),
            )
        )
        value = str(index) if amount == "INT64" else f"'{index}'"
        run_sql(
            f"INSERT INTO `{dataset}.orders_v_{version}` (tenant, id, amount, _cdc_ingested_at, _cdc_database) "
            f"VALUES ('t', {index}, {value}, TIMESTAMP '2026-0{index + 1}-15 10:00:00+00', 'shop')"
        )
    request = ConsolidationRequest(dataset, ("orders",), timedelta(0), 2, True, settle=timedelta(0))
    (done,) = consolidate(warehouse, request)
    assert done.applied and done.moved_rows == 2
    assert metadata(bq_client, dataset, done.plan.consolidated_table) == (
        {"type": "DAY", "field": "_cdc_ingested_at"},
        ["_cdc_database", "tenant", "id"],
    )
    moved = bq_client.query(
        f"SELECT id FROM `{dataset}.{done.plan.consolidated_table}` "
        "WHERE _cdc_ingested_at >= TIMESTAMP '2026-02-01' AND _cdc_database = 'shop'"
    ).result()
    assert [row[0] for row in moved] == [1]


# --- moving tables of an earlier release to the layout (uniview migrate-landing --partition) ---


def create_unpartitioned(landing, bq_client, dataset: str, table_route) -> None:
    """The version table as a release before partitioning created it (same schema and description), 3 rows."""
    from google.cloud import bigquery

    from uniview.sink.landing import source_schema_comment
    from uniview.sink.landing_bigquery import table_resource, version_table_schema

    resource = table_resource(
        DEFAULT_PROJECT,
        dataset,
        table_route.table_name,
        version_table_schema(table_route),
        source_schema_comment(table_route),
        None,
    )
    bq_client.create_table(bigquery.Table.from_api_repr(resource))
    bq_client.query(
        f"INSERT INTO `{dataset}.{table_route.table_name}` (id, amount, _cdc_database, _cdc_ingested_at, _cdc_unavailable) "
        "VALUES (1, 1.25, 'shop', TIMESTAMP '2026-01-02 03:00:00+00', ['amount']), "
        "(2, NULL, 'shop', TIMESTAMP '2026-03-02 03:00:00+00', []), (3, 7, 'other', NULL, [])"
    ).result()


def snapshot(bq_client, dataset: str, table: str) -> tuple:
    got = bq_client.get_table(f"{DEFAULT_PROJECT}.{dataset}.{table}")
    rows = bq_client.query(f"SELECT * FROM `{dataset}.{table}` ORDER BY id").result()
    return got.to_api_repr()["schema"], got.description, [tuple(row.values()) for row in rows]


def test_migrate_landing_partition_rewrites_old_tables_under_their_names(
    landing, warehouse, bq_client, run_sql, dataset
):
    from uniview.warehouse.bigquery_relayout import COPY_SUFFIX, migrate_partitioning

    old = route(dataset, "d4", ("id",), ("id", "int", "INT64"), ("amount", "decimal(10,2)", "NUMERIC(10, 2)"))
    create_unpartitioned(landing, bq_client, dataset, old)
    run_sql(
        f"CREATE TABLE `{dataset}.{QUARANTINE_TABLE}` (raw_line STRING, reason STRING, table_name STRING, quarantined_at TIMESTAMP)"
    )
    landing.create_version_table(route(dataset, "e5", ("id",), ("id", "int", "INT64")))  # partitioned already
    before = snapshot(bq_client, dataset, old.table_name)
    printed: list[str] = []

    plan = migrate_partitioning(warehouse, dataset, "DAY", False, printed.append)
    assert [item.table for item in plan] == [QUARANTINE_TABLE, old.table_name]
    assert printed[-1] == "2 table(s) to rewrite; stop the sink, then run again with --apply"
    assert metadata(bq_client, dataset, old.table_name) == (None, None)  # nothing changed without --apply

    migrate_partitioning(warehouse, dataset, "DAY", True, printed.append)
    assert printed[-1] == "rewrote 2 table(s), 3 rows, in the partitioned layout"
    assert metadata(bq_client, dataset, old.table_name) == (
        {"type": "DAY", "field": "_cdc_ingested_at"},
        ["_cdc_database", "id"],  # the key read from the table's description
    )
    assert metadata(bq_client, dataset, QUARANTINE_TABLE) == (
        {"type": "DAY", "field": "quarantined_at"},
        ["table_name", "reason"],
    )
    assert snapshot(bq_client, dataset, old.table_name) == before  # same schema, description and rows
    assert not [t for t in bq_client.list_tables(dataset) if t.table_id.endswith(COPY_SUFFIX)]
    assert migrate_partitioning(warehouse, dataset, "DAY", True, printed.append) == []
    assert printed[-1] == f"every version table and quarantine in {dataset} is partitioned"


def test_a_rewrite_cut_short_is_finished_by_the_next_run(landing, warehouse, bq_client, dataset):
    from google.cloud import bigquery

    from uniview.warehouse.bigquery_relayout import COPY_SUFFIX, BigQueryRelayout, copy_resource, migrate_partitioning

    cut_after_drop = route(dataset, "f6", ("id",), ("id", "int", "INT64"), ("amount", "int", "INT64"))
    cut_after_copy = route(dataset, "a7", ("id",), ("id", "int", "INT64"), ("amount", "int", "INT64"))
    for made in (cut_after_drop, cut_after_copy):
        create_unpartitioned(landing, bq_client, dataset, made)
    expected = snapshot(bq_client, dataset, cut_after_drop.table_name)
    relayout = BigQueryRelayout(warehouse)
    for item in relayout.plan(dataset, "DAY"):  # both copied; the first also dropped, not renamed yet
        original = bq_client.get_table(f"{DEFAULT_PROJECT}.{dataset}.{item.table}")
        bq_client.create_table(bigquery.Table.from_api_repr(copy_resource(original, item.layout)))
        bq_client.query(
            f"INSERT INTO `{dataset}.{item.table}{COPY_SUFFIX}` SELECT * FROM `{dataset}.{item.table}`"
        ).result()
        if item.table == cut_after_drop.table_name:
            bq_client.delete_table(original)

    plan = migrate_partitioning(warehouse, dataset, "DAY", True, lambda line: None)
    assert [(item.table, item.resume) for item in plan] == [
        (cut_after_drop.table_name, True),
        (cut_after_copy.table_name, False),
    ]
    for made in (cut_after_drop, cut_after_copy):
        assert metadata(bq_client, dataset, made.table_name)[0] == {"type": "DAY", "field": "_cdc_ingested_at"}
        assert snapshot(bq_client, dataset, made.table_name)[2] == expected[2]
    assert sorted(t.table_id for t in bq_client.list_tables(dataset)) == sorted(
        [cut_after_drop.table_name, cut_after_copy.table_name]
    )


def test_only_the_sinks_unpartitioned_tables_are_rewritten():
    from google.cloud import bigquery

    from uniview.warehouse.bigquery_relayout import target_layout

    def table(name: str, *fields: tuple[str, str], partitioned: bool = False):
        made = bigquery.Table(f"p.d.{name}", schema=[bigquery.SchemaField(n, t) for n, t in fields])
        if partitioned:
            made.time_partitioning = bigquery.TimePartitioning(field="_cdc_ingested_at")
        return made

    cdc = [(name, bq_type) for name, bq_type in CDC_COLUMNS if "ARRAY" not in bq_type]
    assert target_layout(table("t_v_1", ("id", "INT64"), *cdc), "DAY") == TableLayout(
        "_cdc_ingested_at", "DAY", ("_cdc_database",)
    )
    assert target_layout(table("t_v_1", ("id", "INT64"), *cdc, partitioned=True), "DAY") is None
    assert target_layout(table("t_v_1", ("id", "INT64")), "DAY") is None  # not landed by the sink
    assert target_layout(table("t_v_1", ("id", "INT64"), ("_cdc_operation", "STRING")), "DAY") is None  # migrate first
    assert target_layout(table("notes", ("id", "INT64"), *cdc), "DAY") is None  # not a version table
    assert target_layout(table(QUARANTINE_TABLE, ("quarantined_at", "TIMESTAMP")), "HOUR") == quarantine_layout("DAY")
    assert target_layout(table(QUARANTINE_TABLE, ("reason", "STRING")), "DAY") is None


def test_migrate_landing_partition_is_for_bigquery(tmp_path):
    from click.testing import CliRunner

    from uniview.cli.main import main

    result = CliRunner().invoke(
        main,
        ["migrate-landing", "--warehouse", f"duckdb:///{tmp_path}/w.duckdb", "--dataset", "cdc", "--partition"],
    )
    assert result.exit_code == 1
    assert "--partition is for a BigQuery --warehouse" in result.output
