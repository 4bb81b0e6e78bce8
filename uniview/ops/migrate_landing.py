"""`uniview migrate-landing`: bring version tables landed by an older uniview to today's landing layout.

Version tables are never rewritten.  The one change this makes is additive: the CDC columns an
older table lacks (`_cdc_database`, `_cdc_sequence`) are appended as NULLable columns, so the
sink can append to the table again; rows landed before keep NULL there.  A table that has no CDC
column at all was not landed by the sink and is left alone.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from uniview.core.landing_layout import CDC_PREFIX, missing_cdc_columns
from uniview.core.schema import ColumnRecord, split_version_table

Additions = dict[str, list[tuple[str, str]]]


def plan_migration(records: Iterable[ColumnRecord]) -> Additions:
    """{version table: [(column, BigQuery type), ...] to append}, for sink-landed tables that lack some."""
    names: dict[str, list[str]] = defaultdict(list)
    for record in records:
        if split_version_table(record.table_name) and record.ordinal_position is not None:
            names[record.table_name].append(record.column_name)
    additions = {}
    for table, columns in sorted(names.items()):
        landed_by_sink = any(name.lower().startswith(CDC_PREFIX) for name in columns)
        missing = missing_cdc_columns(columns)
        if landed_by_sink and missing:
            additions[table] = missing
    return additions
