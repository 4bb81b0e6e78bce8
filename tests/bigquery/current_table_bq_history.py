"""The random change histories of tests/current/current_table_history.py, landed in BigQuery (the emulator):
the same versions and changes, each version table created with its schema and description and partitioned
by day on `_cdc_ingested_at` as the sink creates them, rows appended with the streaming API."""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path
from typing import Any

from google.cloud import bigquery

sys.path.insert(0, str(Path(__file__).parents[1] / "current"))

from current_table_history import FAMILY, VERSIONS, History, Version

from uniview.core.landing_layout import CDC_COLUMNS
from uniview.core.version_description import version_description

__all__ = ["FAMILY", "BigQueryHistory"]


def schema_field(name: str, bq_type: str) -> bigquery.SchemaField:
    if bq_type.startswith("ARRAY<"):
        return bigquery.SchemaField(name, bq_type[6:-1], mode="REPEATED")
    return bigquery.SchemaField(name, bq_type)


def json_value(value: Any) -> Any:
    if isinstance(value, dt.datetime):
        return value.isoformat()
    return value


class BigQueryHistory(History):
    """A History whose batches land in `dataset` of the BigQuery `client` points at."""

    def __init__(self, client: bigquery.Client, dataset: str, seed: int, keys: int = 8) -> None:
        super().__init__(Path("/nonexistent"), seed, keys)
        self.client = client
        self.dataset = dataset

    def _land(self, batch: list[tuple[str, dict[str, Any]]]) -> None:
        by_table: dict[str, list[dict[str, Any]]] = {}
        for table, row in batch:
            by_table.setdefault(table, []).append(
                {name: json_value(value) for name, value in row.items() if value is not None}
            )
            self.landed.append((table, row))
        for table, rows in by_table.items():
            version = next(v for v in VERSIONS if v.table == table)
            created = self._create_table(version)
            errors = self.client.insert_rows_json(created, rows)
            assert errors == [], errors

    def _create_table(self, version: Version) -> Any:
        reference = f"{self.client.project}.{self.dataset}.{version.table}"
        if version.table in self.created:
            return reference
        columns = list(version.columns) + list(CDC_COLUMNS)
        table = bigquery.Table(reference, schema=[schema_field(name, bq_type) for name, bq_type in columns])
        table.description = version_description(
            FAMILY, [(c, t.lower()) for c, t in version.columns], ("id",), version.defaults, version.not_null
        )
        table.time_partitioning = bigquery.TimePartitioning(
            type_=bigquery.TimePartitioningType.DAY, field="_cdc_ingested_at"
        )
        self.client.create_table(table)
        self.created.add(version.table)
        return reference
