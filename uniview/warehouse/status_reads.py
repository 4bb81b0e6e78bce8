"""What `uniview status` reads from a warehouse besides the column metadata and the stored views.

Each read is one query whatever the number of families (the activity read: one per
ACTIVITY_TABLES_PER_QUERY version tables on BigQuery, whose queries may reference 1,000 tables):

- the activity of the version tables: rows, first and newest `_cdc_ingested_at`, distinct `_cdc_database`;
- the quarantine of the dataset, counted by family and reason over the last day and week;
- the notifications the sink still holds pending (DuckDB keeps them in the warehouse file; the
  BigQuery sink keeps them in a file under its checkpoint directory, read by the caller);
- when each view of the target dataset last changed (BigQuery's __TABLES__; DuckDB records no time).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

#: A BigQuery query references at most 1,000 tables (uniview.core.limits.MAX_QUERY_RESOURCES): the activity
#: of more version tables is read in one query per this many.
ACTIVITY_TABLES_PER_QUERY = 900
DAY = timedelta(days=1)
WEEK = timedelta(days=7)


@dataclass(frozen=True)
class ActivityTable:
    """A version table to read the activity of, and whether it has the `_cdc_database` column."""

    name: str
    has_database: bool


@dataclass(frozen=True)
class TableActivity:
    rows: int
    first_ingested: datetime | None
    newest_ingested: datetime | None
    #: The distinct `_cdc_database` values of its rows.
    databases: frozenset[str]


@dataclass(frozen=True)
class QuarantineCount:
    """Quarantined records of one family (None: the record named none) for one reason."""

    table: str | None
    reason: str
    last_day: int
    last_week: int


@dataclass(frozen=True)
class PendingNotification:
    table: str | None
    version: str | None
    since: datetime | None


class StatusReads(Protocol):
    def table_activity(self, dataset: str, tables: Sequence[ActivityTable]) -> dict[str, TableActivity]: ...

    def quarantine_counts(self, dataset: str, now: datetime) -> list[QuarantineCount]: ...

    def pending_notifications(self, dataset: str) -> list[PendingNotification] | None:
        """None when this warehouse does not hold them (the caller reads them elsewhere)."""

    def view_times(self, dataset: str) -> dict[str, datetime]: ...


def chunks(tables: Sequence[ActivityTable], size: int = ACTIVITY_TABLES_PER_QUERY) -> list[Sequence[ActivityTable]]:
    return [tables[i : i + size] for i in range(0, len(tables), size)]
