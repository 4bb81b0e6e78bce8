"""Plan `<table>_current`: the latest row per (`_cdc_database`, primary key) of a family, deletes left out.

The view reads the family's unified view, so it has its columns and casts.  Rows are ranked by
`_cdc_sequence` (the change's place in its source's log), then `_cdc_timestamp`, `_cdc_ingested_at`,
`_cdc_position`, each descending with NULLs last, and, for changes equal in all of those, a delete
before an update before an insert before a snapshot row: the ordering is total for every change
a source log can produce, so the same data always gives the same rows.  NULL keys are one key.
The primary key comes from the version tables' descriptions (uniview.version_description); every
version must record the same one.
"""

from __future__ import annotations

from collections.abc import Sequence

from uniview import landing_layout as layout
from uniview.errors import PlanError
from uniview.identifiers import identifier, identifier_path, validate_table
from uniview.render import render
from uniview.schema import TableVersion
from uniview.types import Array, BQType, Scalar, Struct

#: Types BigQuery cannot PARTITION BY (https://cloud.google.com/bigquery/docs/reference/standard-sql/window-function-calls).
_UNPARTITIONABLE = ("FLOAT64", "JSON", "GEOGRAPHY")
#: A delete wins a tie, then an update, an insert, a snapshot row.
_OPERATION_RANK = "CASE {operation} WHEN 'DELETE' THEN 0 WHEN 'UPDATE' THEN 1 WHEN 'INSERT' THEN 2 ELSE 3 END"
_ORDER_COLUMNS = (layout.SEQUENCE, layout.TIMESTAMP, layout.INGESTED_AT, layout.POSITION)


def current_view_name(family: str) -> str:
    return f"{family}_current"


def family_primary_key(family: str, versions: Sequence[TableVersion]) -> tuple[str, ...]:
    """The one primary key every version records; PlanError naming the versions that differ."""
    keys: dict[tuple[str, ...] | None, list[str]] = {}
    for version in versions:
        key = tuple(name.lower() for name in version.primary_key) if version.primary_key else None
        keys.setdefault(key, []).append(version.table_name)
    if len(keys) == 1 and None not in keys:
        return next(v.primary_key for v in reversed(versions) if v.primary_key)
    described = "; ".join(
        f"{', '.join(tables)}: {'(' + ', '.join(key) + ')' if key else 'no primary key recorded'}"
        for key, tables in keys.items()
    )
    raise PlanError(
        f"family {family!r}: a current view needs one primary key in every version, and the versions "
        f"differ ({described}); declare metadata.primary_key (or send the Kafka message key) for "
        f"every version, or leave --current off"
    )


def current_view_body(
    family: str, target_dataset: str, unified_view: str, columns: dict[str, BQType], primary_key: Sequence[str]
) -> str:
    """The SELECT of `<family>_current` over `target_dataset.unified_view`, whose columns (name -> type) are given."""
    validate_table(current_view_name(family), "view")
    spelled = {name.lower(): name for name in columns}
    required = [layout.DATABASE, layout.OPERATION, *_ORDER_COLUMNS]
    missing = [name for name in required if name not in spelled]
    if missing:
        raise PlanError(
            f"family {family!r}: a current view needs the CDC columns {', '.join(missing)}, which no "
            "version has; run `uniview migrate-landing` on tables landed by an older uniview"
        )
    key = [_key_column(family, spelled, columns, name) for name in primary_key]
    order = [f"{identifier(name)} DESC NULLS LAST" for name in _ORDER_COLUMNS]
    order.append(_OPERATION_RANK.format(operation=identifier(layout.OPERATION)))
    return render(
        "current_view.sql.j2",
        unified=identifier_path(target_dataset, unified_view),
        partition=[identifier(layout.DATABASE), *key],
        order=order,
        operation=identifier(layout.OPERATION),
    )


def _key_column(family: str, spelled: dict[str, str], columns: dict[str, BQType], name: str) -> str:
    if name.lower() not in spelled:
        raise PlanError(f"family {family!r}: primary key column {name!r} is in no version")
    column = spelled[name.lower()]
    bq_type = columns[column]
    if isinstance(bq_type, (Array, Struct)) or (isinstance(bq_type, Scalar) and bq_type.name in _UNPARTITIONABLE):
        raise PlanError(
            f"family {family!r}: primary key column {column!r} is {bq_type}, which BigQuery cannot "
            "partition by; a current view needs keys of other types"
        )
    return identifier(column)
