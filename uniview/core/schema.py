"""Table versions and families, discovered from a warehouse's column metadata.

A table named `<family>_v_<version>`, where the version is 1-16 lowercase letters and digits,
is one version of `<family>`.  The family part is the longest prefix that fits, so
`customer_v_v_123` belongs to `customer_v`; `customer_v_abc_backup` is no version at all.
"""

from __future__ import annotations

import gc
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import compress, groupby
from operator import itemgetter, not_
from typing import NamedTuple, cast

from uniview.core.segments import Segment
from uniview.core.types import BQType, parse_type

#: The one version syntax: the sink's hash spec, family discovery and the notification all use it.
VERSION_ID = re.compile(r"[a-z0-9]{1,16}")
VERSION_RULE = "1-16 lowercase letters or digits"
VERSION_TABLE = re.compile(r"(?P<family>.+)_v_(?P<version>[a-z0-9]{1,16})", re.DOTALL)


class ColumnRecord(NamedTuple):
    """One row of a warehouse's column metadata (INFORMATION_SCHEMA.COLUMNS or its equivalent).

    `created` orders tables by creation (epoch seconds, or a catalog sequence number).
    `ordinal_position` is None, or `is_hidden` True, for pseudo-columns such as _PARTITIONTIME.
    A named tuple, not a dataclass: a family of 900 wide versions reads 270,000 of them, and a tuple
    is built in a fifth of the time.
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
    #: The column's name in its table when the views expose it under another (uniview.core.renames).
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
    #: (read with --current only: uniview.current.view shows them for rows older than a column).
    defaults: tuple[tuple[str, str], ...] = ()
    not_null: tuple[str, ...] = ()
    #: Only the changes a table rename leaves to the family (uniview.core.table_renames); None: every change.
    segment: Segment | None = None


def split_version_table(table_name: str) -> tuple[str, str] | None:
    """(family, version) when `table_name` names a version table, else None."""
    match = VERSION_TABLE.fullmatch(table_name)
    return (match["family"], match["version"]) if match else None


def version_table_prefix(family: str) -> str:
    """What every version table of `family` starts with."""
    return f"{family}_v_"


def version_table_name(family: str, version: str) -> str:
    return f"{version_table_prefix(family)}{version}"


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused while the column records of a large dataset are built:
    hundreds of thousands of tuples, none in a cycle, which it would otherwise rescan as the heap grows."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            # What was built meanwhile moves to the oldest generation unscanned (freezing and thawing moves every
            # object there): re-enabled, the collector would otherwise scan it all at its next young collection
            # (about 0.03 s after a plan of 900 x 300).  A cycle among them is collected with the oldest generation.
            gc.freeze()
            gc.unfreeze()
            gc.enable()


class TableListing(NamedTuple):
    """One table's columns as a warehouse lists them: names and BigQuery type texts in ordinal order, pseudo and
    hidden columns left out.  A warehouse that reads its catalog table by table gives these directly; records
    are grouped into them (table_listings)."""

    table_name: str
    created: float
    names: Sequence[str]
    types: Sequence[str]


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
    with collector_paused():
        return discover_listed_families(table_listings(records), families, primary_keys)


def table_listings(records: Iterable[ColumnRecord]) -> list[TableListing]:
    """The records grouped by table, in ordinal order, without pseudo and hidden columns (a table with no other
    column is left out); a table's `created` is the least of its records'."""
    by_table: dict[str, list[ColumnRecord]] = {}
    for table_name, run in groupby(records, key=_TABLE):  # a warehouse lists a table's columns together
        by_table.setdefault(table_name, []).extend(run)
    listings = []
    for table_name, listed in by_table.items():
        kept = listed
        if any(map(_HIDDEN, listed)) or None in map(_POSITION, listed):
            kept = [r for r in listed if not r.is_hidden and r.ordinal_position is not None]
            if not kept:
                continue
        kept.sort(key=_POSITION)
        created = min(map(_CREATED, kept))
        listings.append(TableListing(table_name, created, list(map(_NAME, kept)), list(map(_TYPE, kept))))
    return listings


def discover_listed_families(
    listings: Iterable[TableListing],
    families: Iterable[str] | None = None,
    primary_keys: Mapping[str, tuple[str, ...] | None] | None = None,
) -> dict[str, list[TableVersion]]:
    """discover_families from tables already listed: the versions of each family, ordered by (creation, table
    name), each with its typed columns."""
    wanted = set(families) if families is not None else None
    keys = primary_keys or {}
    result: dict[str, list[TableVersion]] = defaultdict(list)
    shapes = _Shapes()
    with collector_paused():
        for table_name, created, names, types in listings:
            parts = split_version_table(table_name)
            if parts is None or (wanted is not None and parts[0] not in wanted):
                continue
            family, version = parts
            columns = shapes.columns(table_name, names, types)
            result[family].append(TableVersion(table_name, family, version, created, columns, keys.get(table_name)))
    for versions in result.values():
        versions.sort(key=lambda v: (v.created, v.table_name))
    return dict(sorted(result.items()))


# Fields of a record by position: a record is a tuple, and an item getter reads it without the named
# tuple's property call (a fifth of the time, over the 270,000 records of a wide family).
_FIELD = {name: index for index, name in enumerate(ColumnRecord._fields)}
_TABLE = itemgetter(_FIELD["table_name"])
_POSITION = itemgetter(_FIELD["ordinal_position"])
_HIDDEN = itemgetter(_FIELD["is_hidden"])
_CREATED = itemgetter(_FIELD["created"])
_NAME = itemgetter(_FIELD["column_name"])
_TYPE = itemgetter(_FIELD["data_type"])


class _Shapes:
    """Typed columns per distinct shape: versions of a family repeat the same (name, type) pairs, and
    often the same whole list of them, so each pair becomes a Column once and each list a tuple once
    (identical tuples, the same object: the planner's work per shape is done once too)."""

    def __init__(self) -> None:
        self._shapes: dict[tuple[int, ...], tuple[Column, ...]] = {}  # by the ids of the (kept) Columns
        self._columns: dict[tuple[str, str], Column] = {}

    def columns(self, table_name: str, names: Sequence[str], types: Sequence[str]) -> tuple[Column, ...]:
        # In C: a new list mostly repeats known columns, and zip reuses its pair while the lookup lets go of it.
        known = tuple(map(self._columns.get, zip(names, types, strict=True)))
        if not all(known):  # a Column is always true; `None in known` would call Column.__eq__ on each
            for pair in compress(zip(names, types, strict=True), map(not_, known)):
                self._add_column(table_name, pair)
            known = tuple(map(self._columns.get, zip(names, types, strict=True)))
        columns = cast(tuple[Column, ...], known)
        return self._shapes.setdefault(tuple(map(id, columns)), columns)

    def _add_column(self, table_name: str, pair: tuple[str, str]) -> None:
        if pair not in self._columns:  # a list may name a new pair twice
            name, data_type = pair
            self._columns[pair] = Column(name, parse_type(data_type, table=table_name, column=name))
