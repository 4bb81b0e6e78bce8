"""Everything around the BigQuery write that can run here: table schemas, the frames handed to the
spark-bigquery-connector, connector options.  (The connector jar itself is not available locally.)"""

from __future__ import annotations

from dataclasses import replace

import pytest
from google.cloud import bigquery

from uniview.core.types import parse_type
from uniview.sink.landing import source_columns_from_comment, source_schema_comment
from uniview.sink.landing_bigquery import (
    quarantine_table_schema,
    schema_field,
    version_table_schema,
    write_options,
)
from uniview.sink.routing import LandingColumn, VersionRoute
from uniview.sink.versioning import SourceColumn
from uniview.warehouse.bigquery_schema import field_type

SCHEMA = [
    ("id", "bigint(20) unsigned"),
    ("amount", "decimal(10,2)"),
    ("doc", "json"),
    ("at", "datetime"),
    ("seen", "timestamp"),
    ("t", "time"),
    ("address", "STRUCT<street STRING, tags ARRAY<STRING>>"),
]


def route():
    from uniview.sink.mysql_types import bigquery_type

    columns = tuple(LandingColumn(name, declared, bigquery_type(declared).bq_type) for name, declared in SCHEMA)
    return VersionRoute("cdc", "orders", "abc123", columns, exists=False)


def test_version_table_schema_is_exact_and_round_trips():
    fields = [bigquery.SchemaField.from_api_repr(f) for f in version_table_schema(route())]
    assert [(f.name, str(field_type(f))) for f in fields] == [
        ("id", "NUMERIC(20, 0)"),
        ("amount", "NUMERIC(10, 2)"),
        ("doc", "JSON"),
        ("at", "DATETIME"),
        ("seen", "TIMESTAMP"),
        ("t", "TIME"),
        ("address", "STRUCT<street STRING, tags ARRAY<STRING>>"),
        ("_cdc_ingestion_method", "STRING"),
        ("_cdc_operation", "STRING"),
        ("_cdc_position", "STRING"),
        ("_cdc_timestamp", "TIMESTAMP"),
        ("_cdc_ingested_at", "TIMESTAMP"),
        ("_cdc_database", "STRING"),
        ("_cdc_sequence", "STRING"),
        ("_cdc_unavailable", "ARRAY<STRING>"),
    ]
    assert fields[1].description == "source type: decimal(10,2)"
    assert all(f.mode == "NULLABLE" for f in fields if f.name not in ("address", "_cdc_unavailable"))
    assert fields[-1].mode == "REPEATED"


def test_schema_field_shapes():
    assert schema_field("tags", parse_type("ARRAY<NUMERIC(5, 1)>")) == {
        "name": "tags",
        "mode": "REPEATED",
        "type": "NUMERIC",
        "precision": "5",
        "scale": "1",
    }
    assert schema_field("s", parse_type("STRING(10)")) == {
        "name": "s",
        "mode": "NULLABLE",
        "type": "STRING",
        "maxLength": "10",
    }
    assert [f["name"] for f in quarantine_table_schema()] == [
        "raw_line",
        "reason",
        "detail",
        "source_file",
        "table_name",
        "table_version",
        "batch",
        "quarantined_at",
        "raw_bytes",
        "raw_size",
        "raw_sha256",
    ]
    assert [f["type"] for f in quarantine_table_schema()][-3:] == ["BYTES", "INT64", "STRING"]


def test_the_table_description_records_the_declared_schema():
    recorded = source_columns_from_comment(source_schema_comment(route()))
    assert recorded == tuple(SourceColumn(name, declared) for name, declared in SCHEMA)
    assert source_columns_from_comment("a table made by hand") is None


def test_connector_options():
    assert write_options("p-123456", "cdc", "t_v_1", {}) == {"writeMethod": "direct", "table": "p-123456.cdc.t_v_1"}
    assert write_options("p-123456", "cdc", "t", {"writeMethod": "indirect", "temporaryGcsBucket": "b"}) == {
        "writeMethod": "indirect",
        "temporaryGcsBucket": "b",
        "table": "p-123456.cdc.t",
    }


@pytest.mark.parametrize("bad", ["bigquery://", "bigquery://p/extra"])
def test_bad_bigquery_urls(bad):
    from uniview.core.errors import UniviewError
    from uniview.sink.job import warehouse_location

    with pytest.raises(UniviewError):
        warehouse_location(bad)


@pytest.fixture(scope="module")
def bigquery_landing(tmp_path_factory):
    """A BigQueryLanding on the local BigQuery API emulator (the google-cloud-bigquery half of the path)."""
    from uniview.local.bigquery_emulator import (
        DEFAULT_PROJECT,
        emulator_environment,
        emulator_venv_path,
        find_emulator_venv,
    )
    from uniview.sink.landing_bigquery import BigQueryLanding
    from uniview.sink.pending import MemoryPendingStore

    if find_emulator_venv() is None:
        pytest.skip(
            f"BigQuery emulator not installed in {emulator_venv_path()}: run scripts/setup-bigquery-emulator.sh"
        )
    with emulator_environment(tmp_path_factory.mktemp("bigquery-emulator")):
        landing = BigQueryLanding(DEFAULT_PROJECT, MemoryPendingStore())
        try:
            yield landing
        finally:
            landing.close()


def test_version_tables_are_created_with_the_declared_schema(bigquery_landing):
    version_route = route()
    assert bigquery_landing.known_versions({("cdc", version_route.table_name)}) == {}
    assert bigquery_landing.create_version_table(version_route) is True
    assert bigquery_landing.create_version_table(version_route) is False
    assert bigquery_landing.create_quarantine_table("cdc") is True
    known = bigquery_landing.known_versions({("cdc", version_route.table_name), ("cdc", "absent_v_1")})
    assert list(known) == [("cdc", version_route.table_name)]
    found = known[("cdc", version_route.table_name)]
    assert found.source_columns == tuple(SourceColumn(name, declared) for name, declared in SCHEMA)
    assert [(name, str(bq)) for name, bq in found.table_columns] == [
        ("id", "NUMERIC(20, 0)"),
        ("amount", "NUMERIC(10, 2)"),
        ("doc", "JSON"),
        ("at", "DATETIME"),
        ("seen", "TIMESTAMP"),
        ("t", "TIME"),
        ("address", "STRUCT<street STRING, tags ARRAY<STRING>>"),
    ]


def test_tables_seen_once_are_not_asked_about_again(bigquery_landing, monkeypatch):
    from uniview.sink.landing_bigquery import BigQueryLanding
    from uniview.sink.pending import MemoryPendingStore

    """A stream's later batches cost no metadata call for the version tables it has already seen."""
    version_route = replace(route(), dataset="seen")
    bigquery_landing.create_version_table(version_route)
    client = bigquery_landing._client
    asked = []
    real_get_table = client.get_table
    monkeypatch.setattr(
        client, "get_table", lambda table, **kw: asked.append(str(table)) or real_get_table(table, **kw)
    )
    wanted = {("seen", version_route.table_name), ("seen", "absent_v_1")}
    first = bigquery_landing.known_versions(wanted)
    assert list(first) == [("seen", version_route.table_name)]
    assert bigquery_landing.known_versions(wanted) == first
    assert bigquery_landing.create_version_table(version_route) is False
    absent = f"{bigquery_landing.project}.seen.absent_v_1"
    assert asked == [absent, absent]  # a missing table is asked about each time: another writer may create it
    fresh = BigQueryLanding(bigquery_landing.project, MemoryPendingStore())
    try:  # what the landing remembered of the table it created is what BigQuery says of it
        assert fresh.known_versions(wanted) == first
    finally:
        fresh.close()
