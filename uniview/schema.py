"""Table versions and families, discovered from a warehouse's column metadata.

A table named `<family>_v_<version>`, where the version is 1-16 lowercase letters and digits,
is one version of `<family>`.  The family part is the longest prefix that fits, so
`customer_v_v_123` belongs to `customer_v`; `customer_v_abc_backup` is no version at all.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from uniview.types import BQType, parse_type

#: The one version syntax: the sink's hash spec, family discovery and the notification all use it.
VERSION_ID = re.compile(r"[a-z0-9]{1,16}")
VERSION_RULE = "1-16 lowercase letters or digits"
VERSION_TABLE = re.compile(r"(?P<family>.+)_v_(?P<version>[a-z0-9]{1,16})", re.DOTALL)


@dataclass(frozen=True)
class ColumnRecord:
    """One row of a warehouse's column metadata (INFORMATION_SCHEMA.COLUMNS or its equivalent).

    `created` orders tables by creation (epoch seconds, or a catalog sequence number).
    `ordinal_position` is None, or `is_hidden` True, for pseudo-columns such as _PARTITIONTIME.
    """

    table_name: str
    column_name: str
    ordinal_position: int | None
    data_type: str
    created: float
    is_hidden: bool = False


@dataclass(frozen=True)
class Column:
    name: str
    type: BQType
    #: The column's name in its table when the views expose it under another (uniview.renames).
    stored: str | None = None


@dataclass(frozen=True)
class TableVersion:
    """One landing table: `<family>_v_<version>` with its typed columns in ordinal order."""

    table_name: str
    family: str
    version: str
    created: float
    columns: tuple[Column, ...]
    #: The primary key the table's description records (None when it records none, or was not read).
    primary_key: tuple[str, ...] | None = None
    #: The declared defaults (column, value as JSON text) and NOT NULL columns its description records
    #: (read with --current only: uniview.current_view shows them for rows older than a column).
    defaults: tuple[tuple[str, str], ...] = ()
    not_null: tuple[str, ...] = ()


def split_version_table(table_name: str) -> tuple[str, str] | None:
    """(family, version) when `table_name` names a version table, else None."""
    match = VERSION_TABLE.fullmatch(table_name)
    return (match["family"], match["version"]) if match else None


def version_table_prefix(family: str) -> str:
    """What every version table of `family` starts with."""
    return f"{family}_v_"


def version_table_name(family: str, version: str) -> str:
    return f"{version_table_prefix(family)}{version}"


def discover_families(
    records: Iterable[ColumnRecord],
    families: Iterable[str] | None = None,
    primary_keys: Mapping[str, tuple[str, ...] | None] | None = None,
) -> dict[str, list[TableVersion]]:
    """Group column records into families of versions ordered by (creation, table name).

    `families`, when given, keeps only those families; `primary_keys` gives each table's recorded key.  Pseudo and hidden columns are left out;
    a table whose every column is hidden is left out too.  Unparseable types raise
    TypeParseError naming the table and column.
    """
    wanted = set(families) if families is not None else None
    # (table, family, version) -> [(ordinal position, record)]
    columns_by_table: dict[tuple[str, str, str], list[tuple[int, ColumnRecord]]] = defaultdict(list)
    kept: dict[str, tuple[str, str] | None] = {}
    for record in records:
        if record.table_name not in kept:
            parts = split_version_table(record.table_name)
            kept[record.table_name] = parts if parts is not None and (wanted is None or parts[0] in wanted) else None
        parts = kept[record.table_name]
        if parts is None or record.is_hidden or record.ordinal_position is None:
            continue
        columns_by_table[(record.table_name, *parts)].append((record.ordinal_position, record))

    result: dict[str, list[TableVersion]] = defaultdict(list)
    for (table_name, family, version), positioned in columns_by_table.items():
        table_records = [record for _, record in sorted(positioned, key=lambda item: item[0])]
        columns = tuple(
            Column(r.column_name, parse_type(r.data_type, table=table_name, column=r.column_name))
            for r in table_records
        )
        created = min(r.created for r in table_records)
        primary_key = (primary_keys or {}).get(table_name)
        result[family].append(TableVersion(table_name, family, version, created, columns, primary_key))
    for versions in result.values():
        versions.sort(key=lambda v: (v.created, v.table_name))
    return dict(sorted(result.items()))
