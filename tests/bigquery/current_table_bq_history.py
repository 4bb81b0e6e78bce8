"""The random change histories of tests/current/current_table_history.py, landed in BigQuery (the emulator):
the same versions and changes, each version table created with its schema and description and partitioned
by day on `_cdc_ingested_at` as the sink creates them, rows appended with the streaming API; each step
recorded in the sink's ledger (in the dataset itself, as a sink run with --dataset keeps it: `_uniview_batches`,
`_uniview_batch_steps`)
with the tables it wrote to and its exact ingestion range, as the sink records a batch."""

from __future__ import annotations

import datetime as dt
import json
import sys
from pathlib import Path
from typing import Any

from google.cloud import bigquery

sys.path.insert(0, str(Path(__file__).parents[1] / "current"))

from current_table_history import FAMILY, VERSIONS, History, Version

from uniview.core.landing_layout import CDC_COLUMNS
from uniview.core.version_description import version_description

__all__ = ["FAMILY", "BigQueryHistory"]
LEDGER_SCHEMAS = {
    "_uniview_batches": [("stream", "STRING"), ("batch_id", "INT64"), ("counts", "STRING"), ("landed_at", "TIMESTAMP")],
    "_uniview_batch_steps": [
        ("stream", "STRING"),
        ("batch_id", "INT64"),
        ("step", "STRING"),
        ("detail", "STRING"),
        ("at", "TIMESTAMP"),
    ],
}


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
        self.ledger_ready = False

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
        self._record_batch(batch)

    def _record_batch(self, batch: list[tuple[str, dict[str, Any]]]) -> None:
        """The step as a batch of the sink's ledger (stream: the dataset)."""
        control = f"{self.client.project}.{self.dataset}"
        if not self.ledger_ready:
            self.client.create_dataset(control, exists_ok=True)
            for name, schema in LEDGER_SCHEMAS.items():
                fields = [bigquery.SchemaField(column, kind) for column, kind in schema]
                self.client.create_table(bigquery.Table(f"{control}.{name}", schema=fields), exists_ok=True)
            self.ledger_ready = True
        stamps = [row["_cdc_ingested_at"] for _, row in batch]
        written: dict[str, int] = {}
        for table, _ in batch:
            written[f"{self.dataset}.{table}"] = written.get(f"{self.dataset}.{table}", 0) + 1
        counts = {"written": written, "ingested": [min(stamps).isoformat(), max(stamps).isoformat()]} if batch else {}
        landed = dt.datetime.now(dt.UTC).isoformat()
        record = {
            "stream": self.dataset,
            "batch_id": self.step_number,
            "counts": json.dumps(counts),
            "landed_at": landed,
        }
        assert self.client.insert_rows_json(f"{control}._uniview_batches", [record]) == []
        step = {"stream": self.dataset, "batch_id": self.step_number, "step": "plan", "at": landed}
        assert self.client.insert_rows_json(f"{control}._uniview_batch_steps", [step]) == []

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
