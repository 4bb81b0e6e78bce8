"""The BigQuery warehouse: tables created with google-cloud-bigquery, rows written by the
spark-bigquery-connector that Dataproc ships (Storage Write API, `writeMethod=direct`).

Delivery is at least once: there is no batch ledger in BigQuery, so a streaming batch that is
replayed after a crash appends its rows again.  Every row carries `_cdc_position`,
`_cdc_operation` and `_cdc_timestamp` to deduplicate on.  Only BigQueryLanding's methods talk
to BigQuery; the schemas and frames they use are built by the pure functions below.
"""

from __future__ import annotations

from typing import Any, Collection, Mapping, Sequence

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from uniview.errors import NotFoundError, WarehouseError
from uniview.warehouse.url import BIGQUERY, WarehouseURL
from uniview.landing_layout import CDC_COLUMNS
from uniview.sink.frames import QUARANTINE_COLUMNS
from uniview.sink.landing import (
    QUARANTINE_TABLE, BatchCounts, BatchKey, Landing, StagedBatch, known_version, source_schema_comment,
)
from uniview.sink.notify import Notification
from uniview.sink.reasons import SKIPPED
from uniview.sink.pending import PendingStore
from uniview.sink.routing import KnownVersion, VersionRoute
from uniview.sink.spark_types import spark_decimal
from uniview.types import Array, BQType, Scalar, Struct, parse_type

RETRY_DEADLINE = 120.0
DEFAULT_WRITE_OPTIONS = {"writeMethod": "direct"}


def schema_field(name: str, bq_type: BQType, description: str | None = None) -> dict:
    """The tables.insert representation of one column (REPEATED for ARRAY, RECORD for STRUCT)."""
    mode = "NULLABLE"
    if isinstance(bq_type, Array):
        mode, bq_type = "REPEATED", bq_type.element
    field: dict[str, Any] = {"name": name, "mode": mode}
    if isinstance(bq_type, Struct):
        field.update(type="RECORD", fields=[schema_field(f.name, f.type) for f in bq_type.fields])
    elif isinstance(bq_type, Scalar):
        field["type"] = bq_type.name
        if bq_type.name in ("NUMERIC", "BIGNUMERIC") and bq_type.params:
            field["precision"] = str(bq_type.params[0])
            field["scale"] = str(bq_type.params[1] if len(bq_type.params) > 1 else 0)
        elif bq_type.params:
            field["maxLength"] = str(bq_type.params[0])
    if description:
        field["description"] = description
    return field


def version_table_schema(route: VersionRoute) -> list[dict]:
    """The declared columns (described by their source types), then the CDC columns."""
    fields = [schema_field(c.name, c.bq_type, c.declared_type and f"source type: {c.declared_type}") for c in route.columns]
    return fields + [schema_field(name, parse_type(bq)) for name, bq in CDC_COLUMNS]


def quarantine_table_schema() -> list[dict]:
    return [schema_field(name, parse_type(bq)) for name, bq in QUARANTINE_COLUMNS]


def rows_for_table(frame: DataFrame, batch: StagedBatch, index: int) -> DataFrame:
    """The rows of route `index` that fit, with the version table's column names; JSON columns
    carry the connector's `sqlType: JSON` marker."""
    columns = [
        F.col(batch.typed_field(index, j)).alias(c.name, metadata=_sql_type_marker(c.bq_type))
        for j, c in enumerate(batch.routes[index].columns)
    ]
    selected = (F.col("_route") == index) & F.col("_reason").isNull()
    return frame.where(selected).select(*columns, *[name for name, _ in CDC_COLUMNS])


def quarantine_rows(frame: DataFrame) -> DataFrame:
    """The rows with a reason, as quarantine rows plus the `_dataset` whose quarantine they go to."""
    stored = F.col("_reason").isNotNull() & ~F.col("_reason").isin(*sorted(SKIPPED))
    return frame.where(stored).select(*[name for name, _ in QUARANTINE_COLUMNS], "_dataset")


def write_options(project: str, dataset: str, table: str, extra: Mapping[str, str]) -> dict[str, str]:
    """Connector options for appending to `project.dataset.table`; `extra` (--bigquery-option) wins."""
    return {**DEFAULT_WRITE_OPTIONS, **extra, "table": f"{project}.{dataset}.{table}"}


def _sql_type_marker(bq_type: BQType) -> dict[str, str]:
    """The connector's marker for text columns that BigQuery stores as JSON."""
    return {"sqlType": "JSON"} if isinstance(bq_type, Scalar) and bq_type.name == "JSON" else {}


def direct_write_refusals(routes: Sequence[VersionRoute], options: Mapping[str, str]) -> list[str]:
    """Columns the connector's direct write (Storage Write API) refuses, as "dataset.table.column TYPE":
    GEOGRAPHY, and BIGNUMERIC of more than 38 digits (Spark's decimals stop there), both carried as text."""
    if options.get("writeMethod", "").lower() != "direct":
        return []
    return [f"{route.dataset}.{route.table_name}.{column.name} {column.bq_type}" for route in routes
            for column in route.columns if isinstance(column.bq_type, Scalar)
            and (column.bq_type.name == "GEOGRAPHY" or (column.bq_type.name == "BIGNUMERIC" and spark_decimal(column.bq_type) is None))]


class BigQueryLanding(Landing):
    """Version tables and quarantine tables in the datasets of `project`."""

    def __init__(self, project: str, pending: PendingStore, write_extra: Mapping[str, str] | None = None) -> None:
        from uniview.warehouse.bigquery import make_client

        self.project = project
        self.url = str(WarehouseURL(BIGQUERY, project))
        self.pending = pending
        self.write_extra = dict(write_extra or {})
        self._client = make_client(project)
        #: Tables seen to exist, kept for the run: a version table's schema never changes, so later
        #: batches of a stream ask BigQuery only about tables they have not seen yet.
        self._known: dict[tuple[str, str], KnownVersion] = {}
        self._existing: set[tuple[str, str]] = set()

    def known_versions(self, tables: Collection[tuple[str, str]]) -> Mapping[tuple[str, str], KnownVersion]:
        from uniview.warehouse.bigquery_schema import field_type

        known = {table: self._known[table] for table in tables if table in self._known}
        for dataset, table in sorted(set(tables) - set(known)):
            found = self._call(f"get table {dataset}.{table}", lambda: self._client.get_table(f"{self.project}.{dataset}.{table}"),
                               missing_ok=True)
            if found is not None:
                columns = tuple((f.name, field_type(f)) for f in found.schema)
                known[(dataset, table)] = known_version(found.description, columns)
                self._existing.add((dataset, table))
                if not known[(dataset, table)].missing_cdc_columns:   # an older layout is read again once migrated
                    self._known[(dataset, table)] = known[(dataset, table)]
        return known

    def landed(self, key: BatchKey) -> BatchCounts | None:
        return None

    def land(self, batch: StagedBatch) -> BatchCounts:
        refused = direct_write_refusals(batch.routes, {**DEFAULT_WRITE_OPTIONS, **self.write_extra})
        if refused:
            raise WarehouseError(
                f"batch {batch.key.label}: the connector's direct write cannot write {', '.join(refused[:5])}"
                f"{f' and {len(refused) - 5} more' if len(refused) > 5 else ''}; nothing was written. Land such "
                "sources with --bigquery-option writeMethod=indirect --bigquery-option temporaryGcsBucket=BUCKET")
        counts = BatchCounts(read=batch.read)
        for chunk in batch.chunks:
            frame = chunk.frame.persist()
            try:
                self._land_chunk(batch, chunk.routes, frame, counts)
            finally:
                frame.unpersist()
        if batch.notify:
            self.pending.add(counts.created)
        return counts

    def _land_chunk(self, batch: StagedBatch, indexes: list[int], frame: DataFrame, counts: BatchCounts) -> None:
        tally = frame.groupBy("_route", "_reason", "_dataset").count().collect()
        for index in indexes:
            route = batch.routes[index]
            good = sum(row["count"] for row in tally if row["_route"] == index and row["_reason"] is None)
            if not good:
                continue
            if self.create_version_table(route):
                counts.created.append(Notification(route.dataset, route.table, route.version))
            self._append(rows_for_table(frame, batch, index), route.dataset, route.table_name)
            counts.written[f"{route.dataset}.{route.table_name}"] += good
        quarantined = quarantine_rows(frame)
        for dataset in sorted({row["_dataset"] for row in tally if row["_reason"] not in (None, *SKIPPED)}):
            self.create_quarantine_table(dataset)
            self._append(quarantined.where(F.col("_dataset") == dataset).drop("_dataset"), dataset, QUARANTINE_TABLE)
        for row in tally:
            if row["_reason"] is not None:
                counts.count_reason(row["_reason"], row["count"])

    def create_version_table(self, route: VersionRoute) -> bool:
        """Create the route's table (and dataset) with its exact schema if missing; True if it was missing."""
        return self._ensure_table(route.dataset, route.table_name, version_table_schema(route), source_schema_comment(route))

    def create_quarantine_table(self, dataset: str) -> bool:
        return self._ensure_table(dataset, QUARANTINE_TABLE, quarantine_table_schema(), None)

    def _ensure_table(self, dataset: str, table: str, schema: list[dict], description: str | None) -> bool:
        """Create the dataset and table if missing; True when the table did not exist."""
        from google.cloud import bigquery

        table_id = f"{self.project}.{dataset}.{table}"
        if (dataset, table) in self._existing:
            return False
        if self._call(f"get table {dataset}.{table}", lambda: self._client.get_table(table_id), missing_ok=True):
            self._existing.add((dataset, table))
            return False
        self._call(f"create dataset {dataset}", lambda: self._client.create_dataset(f"{self.project}.{dataset}", exists_ok=True))
        definition = bigquery.Table(table_id, schema=[bigquery.SchemaField.from_api_repr(f) for f in schema])
        definition.description = description
        self._call(f"create table {dataset}.{table}", lambda: self._client.create_table(definition, exists_ok=True))
        self._existing.add((dataset, table))
        return True

    def _append(self, frame: DataFrame, dataset: str, table: str) -> None:
        options = write_options(self.project, dataset, table, self.write_extra)
        frame.write.format("bigquery").options(**options).mode("append").save()

    def _call(self, what: str, call: Any, missing_ok: bool = False) -> Any:
        from uniview.warehouse.bigquery_retry import call_with_retry

        try:
            return call_with_retry(what, call, RETRY_DEADLINE)
        except NotFoundError:
            if missing_ok:
                return None
            raise

    def close(self) -> None:
        self._client.close()
