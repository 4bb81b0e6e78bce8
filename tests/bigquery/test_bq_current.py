"""`<table>_current` on the BigQuery API emulator: the same history as the DuckDB test, the same rows;
primary keys read from the tables' descriptions through INFORMATION_SCHEMA.TABLE_OPTIONS."""

from __future__ import annotations

import sys
from pathlib import Path

from google.cloud import bigquery

sys.path.insert(0, str(Path(__file__).parents[1] / "current"))

from scenario import EXPECTED, FAMILY, rows, tables

from uniview.plan import GeneratorOptions
from uniview.refresh import RefreshRequest, refresh


def field(name, bq_type):
    if bq_type.startswith("ARRAY<"):
        return bigquery.SchemaField(name, bq_type[6:-1], mode="REPEATED")
    return bigquery.SchemaField(name, bq_type)


def load(client, dataset, only=None):
    for name, (columns, description) in tables().items():
        if only and name not in only:
            continue
        table = bigquery.Table(f"{client.project}.{dataset}.{name}", schema=[field(c, t) for c, t in columns])
        table.description = description
        client.create_table(table)
        errors = client.insert_rows_json(
            table, [{c: v for c, v in row.items() if v is not None} for row in rows()[name]]
        )
        assert errors == []


def current_rows(client, dataset):
    found = client.query(f"SELECT _cdc_database, id, name FROM `{dataset}_unified`.{FAMILY}_current").result()
    return sorted([tuple(row.values()) for row in found], key=repr)


def test_current_view_on_the_emulator_returns_exactly_the_latest_rows(bq_client, dataset, limited_warehouse):
    load(bq_client, dataset)
    request = RefreshRequest(dataset, (FAMILY,), options=GeneratorOptions(current=True))
    [outcome] = refresh(limited_warehouse, request)
    assert outcome.error is None and f"{dataset}_unified.{FAMILY}_current" in outcome.replaced
    assert current_rows(bq_client, dataset) == EXPECTED
    [again] = refresh(limited_warehouse, request)
    assert again.error is None and not again.changed


def test_primary_keys_come_from_the_descriptions(bq_client, dataset, warehouse):
    load(bq_client, dataset, only={"customer_v_a1"})
    keys = warehouse.read_primary_keys(dataset, ["customer_v_a1"])
    assert keys == {"customer_v_a1": ("id",)}
