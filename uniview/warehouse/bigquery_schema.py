"""Turn BigQuery metadata into ColumnRecords: INFORMATION_SCHEMA rows and `tables.get` schemas.

`tables.get` describes a column as a SchemaField (legacy names INTEGER/FLOAT/BOOLEAN/RECORD,
mode REPEATED for arrays, precision/scale/max_length as separate fields); INFORMATION_SCHEMA
prints the GoogleSQL data_type.  Both end up as the same data_type strings.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from uniview.core.schema import ColumnRecord
from uniview.core.types import Array, BQType, Field, Scalar, Struct, parse_type


def record_from_row(row: Mapping[str, Any]) -> ColumnRecord:
    """One INFORMATION_SCHEMA.COLUMNS row (joined with TABLES.creation_time) as a ColumnRecord.

    Pseudo-columns (is_hidden or is_system_defined YES, or no ordinal position) are kept but
    marked hidden, so discovery leaves them out.
    """
    ordinal = row["ordinal_position"]
    hidden = ordinal is None or "YES" in (row.get("is_hidden"), row.get("is_system_defined"))
    return ColumnRecord(
        table_name=row["table_name"],
        column_name=row["column_name"],
        ordinal_position=None if ordinal is None else int(ordinal),
        data_type=row["data_type"],
        created=_epoch(row["creation_time"]),
        is_hidden=hidden,
    )


def records_from_table(table_name: str, schema: Sequence[Any], created: datetime | None) -> list[ColumnRecord]:
    """The columns of a table fetched with `tables.get` (client.get_table) as ColumnRecords."""
    when = _epoch(created)
    return [
        ColumnRecord(table_name, field.name, position, str(field_type(field)), when)
        for position, field in enumerate(schema, start=1)
    ]


def field_type(field: Any) -> BQType:
    """The GoogleSQL type of one SchemaField: REPEATED -> ARRAY, RECORD -> STRUCT, legacy names mapped."""
    element = _element_type(field)
    return Array(element) if (field.mode or "").upper() == "REPEATED" else element


def _element_type(field: Any) -> BQType:
    name = (field.field_type or "").upper()
    if name in ("RECORD", "STRUCT"):
        return Struct(tuple(Field(sub.name, field_type(sub)) for sub in field.fields))
    if name == "RANGE":
        element = getattr(field, "range_element_type", None)
        return parse_type(f"RANGE<{getattr(element, 'element_type', None) or 'TIMESTAMP'}>", column=field.name)
    parsed = parse_type(field.field_type, column=field.name)
    if isinstance(parsed, Scalar) and not parsed.params:
        return Scalar(parsed.name, _params(parsed.name, field))
    return parsed


def _params(name: str, field: Any) -> tuple[int, ...]:
    if name in ("NUMERIC", "BIGNUMERIC") and field.precision is not None:
        return (int(field.precision), int(field.scale or 0))
    if name in ("STRING", "BYTES") and field.max_length is not None:
        return (int(field.max_length),)
    return ()


def _epoch(value: datetime | float | int | None) -> float:
    if value is None:
        return 0.0
    if isinstance(value, datetime):
        return value.timestamp()
    return float(value)


def table_names(records: Iterable[ColumnRecord]) -> set[str]:
    return {record.table_name for record in records}
