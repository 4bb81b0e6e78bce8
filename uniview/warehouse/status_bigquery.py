"""`uniview status`'s reads on BigQuery (uniview.warehouse.status_reads): one query job each, the
activity read one per ACTIVITY_TABLES_PER_QUERY version tables."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from uniview.core.errors import NotFoundError
from uniview.core.identifiers import quote_path, string_literal
from uniview.core.landing_layout import QUARANTINE_TABLE
from uniview.warehouse.bigquery import BigQueryWarehouse
from uniview.warehouse.status_reads import (
    DAY,
    WEEK,
    ActivityTable,
    PendingNotification,
    QuarantineCount,
    TableActivity,
    chunks,
)


class BigQueryStatusReads:
    def __init__(self, warehouse: BigQueryWarehouse) -> None:
        self.warehouse = warehouse

    def table_activity(self, dataset: str, tables: Sequence[ActivityTable]) -> dict[str, TableActivity]:
        found: dict[str, TableActivity] = {}
        for chunk in chunks(tables):
            selects = [
                f"SELECT {string_literal(t.name)} AS t, COUNT(*) AS n, MIN(_cdc_ingested_at) AS first, "
                f"MAX(_cdc_ingested_at) AS newest, "
                f"{'ARRAY_AGG(DISTINCT _cdc_database IGNORE NULLS)' if t.has_database else 'ARRAY<STRING>[]'} AS databases "
                f"FROM {quote_path(self.warehouse.project, dataset, t.name)}"
                for t in chunk
            ]
            rows = self.warehouse.run_query(f"read the activity of {dataset}", "\nUNION ALL ".join(selects))
            for row in rows:
                found[row["t"]] = TableActivity(
                    row["n"], row["first"], row["newest"], frozenset(row["databases"] or ())
                )
        return found

    def quarantine_counts(self, dataset: str, now: datetime) -> list[QuarantineCount]:
        table = quote_path(self.warehouse.project, dataset, QUARANTINE_TABLE)
        day, week = (string_literal((now - span).isoformat()) for span in (DAY, WEEK))
        sql = (
            f"SELECT table_name, reason, COUNTIF(quarantined_at >= TIMESTAMP({day})) AS last_day, COUNT(*) AS "
            f"last_week FROM {table} WHERE quarantined_at >= TIMESTAMP({week}) GROUP BY 1, 2 ORDER BY 1, 2"
        )
        try:
            rows = self.warehouse.run_query(f"count the quarantine of {dataset}", sql)
        except NotFoundError:  # no record was ever quarantined in this dataset
            return []
        return [QuarantineCount(r["table_name"], r["reason"], r["last_day"], r["last_week"]) for r in rows]

    def pending_notifications(self, dataset: str) -> list[PendingNotification] | None:
        """The BigQuery sink keeps them under its checkpoint directory, not in the warehouse."""
        return None

    def view_times(self, dataset: str) -> dict[str, datetime]:
        """{view or table: last modified} of `dataset`, from its __TABLES__; a missing dataset is empty."""
        sql = f"SELECT table_id, last_modified_time FROM {quote_path(self.warehouse.project, dataset)}.__TABLES__"
        try:
            rows = self.warehouse.run_query(f"read the modification times of {dataset}", sql)
        except NotFoundError:
            return {}
        return {row["table_id"]: datetime.fromtimestamp(row["last_modified_time"] / 1000, UTC) for row in rows}
