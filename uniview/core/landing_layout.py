"""The landing layout: the CDC columns every version table ends with, in order, with their BigQuery types.

The sink writes them, `uniview migrate-landing` adds the ones an older table lacks, and the
current view orders by them.  Version tables created before `_cdc_database` and `_cdc_sequence`
existed lack those two; the sink refuses to append to such a table until it is migrated.  A table
that lacks only `_cdc_unavailable` (created before it existed) gets it from the sink itself before
its next append: the column is NULLable and means "every value of the change was available".

It also owns the physical layout of the BigQuery tables the sink and consolidation create: partitioned by
`_cdc_ingested_at`, clustered by `_cdc_database` and the primary key (table_layout, docs/sink.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from uniview.core.identifiers import quote
from uniview.core.types import BQType, Scalar

#: The dataset the sink lands every record in unless told otherwise: one dataset shared by every source
#: database, each row naming its database in `_cdc_database` (docs/billing.md, "The layout for a fleet").
DEFAULT_DATASET = "cdc"
#: The sink's tables beside the version tables: each dataset's quarantine, and (DuckDB, schema main) the
#: notifications still to send.
QUARANTINE_TABLE = "_uniview_quarantine"
PENDING_TABLE = "_uniview_pending_notifications"

CDC_PREFIX = "_cdc_"
DATABASE = "_cdc_database"
SEQUENCE = "_cdc_sequence"
#: The columns of a change whose values the source did not send (Debezium's unavailable-value
#: placeholder, an unchanged TOASTed value): each lands NULL and is named here (docs/current-state.md).
UNAVAILABLE = "_cdc_unavailable"
OPERATION = "_cdc_operation"
TIMESTAMP = "_cdc_timestamp"
INGESTED_AT = "_cdc_ingested_at"
POSITION = "_cdc_position"
#: The version table a consolidated row came from (docs/consolidation.md); only consolidated tables
#: have it, after their CDC columns, and views leave it out.
SOURCE_TABLE = "_cdc_source_table"

#: CDC metadata columns every version table ends with, and their BigQuery types.
CDC_COLUMNS = (
    ("_cdc_ingestion_method", "STRING"),
    (OPERATION, "STRING"),
    (POSITION, "STRING"),
    (TIMESTAMP, "TIMESTAMP"),
    (INGESTED_AT, "TIMESTAMP"),
    (DATABASE, "STRING"),
    (SEQUENCE, "STRING"),
    (UNAVAILABLE, "ARRAY<STRING>"),
)
#: CDC columns the sink adds to an older version table itself (NULLable, no value to backfill).
ADDED_BY_SINK = (UNAVAILABLE,)


def missing_cdc_columns(column_names: list[str] | tuple[str, ...]) -> list[tuple[str, str]]:
    """The CDC columns (name, BigQuery type) a version table with these columns lacks, in layout order."""
    present = {name.lower() for name in column_names}
    return [(name, bq_type) for name, bq_type in CDC_COLUMNS if name not in present]


def layout_blocking_columns(column_names: list[str] | tuple[str, ...]) -> list[str]:
    """The CDC columns a version table lacks that the sink cannot add itself: it refuses to append until
    `uniview migrate-landing` has added them."""
    return [name for name, _ in missing_cdc_columns(column_names) if name not in ADDED_BY_SINK]


# --- The physical layout of the BigQuery tables the sink and consolidation create (docs/sink.md) ---

#: Version and consolidated tables are partitioned by the time their rows landed: the sink stamps every
#: row with it (`_cdc_timestamp` can be NULL and arrive late), it only grows, and it is the watermark the
#: current table's maintenance reads from, so that reads only the partitions since its watermark.
PARTITION_COLUMN = INGESTED_AT
#: The quarantine's partitioning column, and the columns its readers filter on (docs/bad-records.md).
QUARANTINE_PARTITION_COLUMN = "quarantined_at"
QUARANTINE_CLUSTERING = ("table_name", "reason")
#: BigQuery's time-unit column partitioning granularities, finest first.
GRANULARITIES = ("HOUR", "DAY", "MONTH", "YEAR")
DEFAULT_GRANULARITY = "DAY"
#: BigQuery: at most 4 clustering columns, each top-level, not REPEATED, of one of these types
#: (https://cloud.google.com/bigquery/docs/clustered-tables#limitations).  GEOGRAPHY and RANGE are
#: allowed too, but clustering on them is of little use for equality filters on a key, so they are left out.
MAX_CLUSTERING_COLUMNS = 4
CLUSTERABLE_TYPES = frozenset({"BIGNUMERIC", "BOOL", "DATE", "DATETIME", "INT64", "NUMERIC", "STRING", "TIMESTAMP"})


@dataclass(frozen=True)
class TableLayout:
    """How a table is partitioned (a TIMESTAMP column and a granularity; None: not partitioned) and
    clustered (column names, most selective filter first; empty: not clustered)."""

    partition_column: str | None
    granularity: str
    clustering: tuple[str, ...]

    def api_resource(self) -> dict[str, Any]:
        """The tables.insert fields (timePartitioning, clustering) of this layout."""
        resource: dict[str, Any] = {}
        if self.partition_column:
            resource["timePartitioning"] = {"type": self.granularity, "field": self.partition_column}
        if self.clustering:
            resource["clustering"] = {"fields": list(self.clustering)}
        return resource

    def ddl(self) -> str:
        """The PARTITION BY and CLUSTER BY clauses of a CREATE TABLE ('' when neither applies)."""
        clauses = []
        if self.partition_column:
            clauses.append(f"PARTITION BY TIMESTAMP_TRUNC({quote(self.partition_column)}, {self.granularity})")
        if self.clustering:
            clauses.append("CLUSTER BY " + ", ".join(quote(name) for name in self.clustering))
        return " ".join(clauses)


def check_granularity(granularity: str) -> str:
    """The granularity in capitals; ValueError when BigQuery has no such time-unit partitioning."""
    upper = granularity.upper()
    if upper not in GRANULARITIES:
        raise ValueError(f"invalid partition granularity {granularity!r}: choose one of {', '.join(GRANULARITIES)}")
    return upper


def history_granularity(granularity: str) -> str:
    """The granularity of a table that keeps history for years (consolidated tables, the quarantine):
    never finer than DAY, since BigQuery takes at most 10,000 partitions per table (HOUR: 416 days)
    and one statement writes at most 4,000 of them (a move of a version landed over months)."""
    upper = check_granularity(granularity)
    return upper if GRANULARITIES.index(upper) > GRANULARITIES.index("DAY") else "DAY"


def _clusterable(bq_type: BQType) -> bool:
    return isinstance(bq_type, Scalar) and bq_type.name in CLUSTERABLE_TYPES


def table_layout(
    columns: Sequence[tuple[str, BQType]], primary_key: Sequence[str] | None, granularity: str = DEFAULT_GRANULARITY
) -> TableLayout:
    """The layout of a version or consolidated table with these columns: partitioned by PARTITION_COLUMN
    (when it has it, as TIMESTAMP), clustered by `_cdc_database` then the primary key's columns in key
    order, skipping those BigQuery cannot cluster by (FLOAT64, BYTES, JSON, TIME, ARRAY, STRUCT, ...), at
    most MAX_CLUSTERING_COLUMNS in all."""
    types = {name.lower(): (name, bq_type) for name, bq_type in columns}
    partition = types.get(PARTITION_COLUMN)
    clustering = [DATABASE] if DATABASE in types and _clusterable(types[DATABASE][1]) else []
    for key in primary_key or ():
        name, bq_type = types.get(key.lower(), (key, None))
        if bq_type is not None and _clusterable(bq_type) and len(clustering) < MAX_CLUSTERING_COLUMNS:
            clustering.append(name)
    return TableLayout(
        PARTITION_COLUMN if partition and partition[1] == Scalar("TIMESTAMP") else None,
        check_granularity(granularity),
        tuple(clustering),
    )


def quarantine_layout(granularity: str = DEFAULT_GRANULARITY) -> TableLayout:
    """The quarantine's layout: by the time a record was quarantined, clustered by table and reason."""
    return TableLayout(QUARANTINE_PARTITION_COLUMN, history_granularity(granularity), QUARANTINE_CLUSTERING)
