"""The landing layout: the CDC columns every version table ends with, in order, with their BigQuery types.

The sink writes them, `uniview migrate-landing` adds the ones an older table lacks, and the
current view orders by them.  Version tables created before `_cdc_database` and `_cdc_sequence`
existed lack those two; the sink refuses to append to such a table until it is migrated.  A table
that lacks only `_cdc_unavailable` (created before it existed) gets it from the sink itself before
its next append: the column is NULLable and means "every value of the change was available".
"""

from __future__ import annotations

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
