"""The order of a key's changes, one owner for the view and the table: `newest_first_order()` states it as
columns (the reference), `ordering_key()` encodes it as ONE sortable STRING, larger is newer, in byte order on
BigQuery and DuckDB alike (tests/current/test_ordering_key.py holds the two to each other).  Every comparison
of changes in `<table>_current`, view or table, reads the key: a window over a key's changes orders by it, and
per-database facts (the last truncate, when a column went missing, the newest version) are its maxima."""

from __future__ import annotations

from uniview.core import landing_layout as layout
from uniview.core.identifiers import identifier

#: The columns that order a key's changes, most significant first.
ORDER_COLUMNS = (layout.SEQUENCE, layout.TIMESTAMP, layout.INGESTED_AT, layout.POSITION)
#: A delete wins a tie, then an update, an insert, a snapshot row.
OPERATION_RANK = "CASE {operation} WHEN 'DELETE' THEN 0 WHEN 'UPDATE' THEN 1 WHEN 'INSERT' THEN 2 ELSE 3 END"
#: Microseconds from 0001-01-01 to 1970-01-01: a timestamp's microseconds since 0001-01-01 are >= 0 and
#: below 10**18, so 18 digits sort like the timestamps.
_EPOCH_OFFSET_MICROS = 62_135_596_800_000_000
_MICROS_DIGITS = 18
#: The operation's rank in the order, newer larger: a delete wins a tie, then an update, an insert, the rest.
_OPERATION_ORDER = "CASE {operation} WHEN 'DELETE' THEN '3' WHEN 'UPDATE' THEN '2' WHEN 'INSERT' THEN '1' ELSE '0' END"


def newest_first_order() -> list[str]:
    """A key's changes, newest first, as ORDER BY items (the order `ordering_key` encodes)."""
    return [f"{identifier(name)} DESC NULLS LAST" for name in ORDER_COLUMNS] + [
        OPERATION_RANK.format(operation=identifier(layout.OPERATION))
    ]


def oldest_first_order() -> list[str]:
    """A key's changes, oldest first: `newest_first_order` reversed."""
    return [f"{identifier(name)} ASC NULLS FIRST" for name in ORDER_COLUMNS] + [
        OPERATION_RANK.format(operation=identifier(layout.OPERATION)) + " DESC"
    ]


def ordering_key() -> str:
    """One STRING that sorts, in byte order, exactly like `newest_first_order` reversed (larger is
    newer): per component '0' for NULL (the oldest), else '1' and the value: `_cdc_sequence` and
    `_cdc_position` as the hex of their UTF-8 bytes and a '.' (below every hex digit, so a prefix sorts
    first), timestamps as 18 digits of microseconds since 0001-01-01; the operation's rank last.  No key is
    a proper prefix of another (each component is prefix-free), so text appended to keys keeps their order."""
    parts = []
    for name in ORDER_COLUMNS:
        column = identifier(name)
        if name in (layout.TIMESTAMP, layout.INGESTED_AT):
            micros = f"CAST(UNIX_MICROS({column}) + {_EPOCH_OFFSET_MICROS} AS INT64)"
            text = f"LPAD(CAST({micros} AS STRING), {_MICROS_DIGITS}, '0')"
        else:
            text = f"CONCAT(TO_HEX(CAST({column} AS BYTES)), '.')"
        parts.append(f"IF({column} IS NULL, '0', CONCAT('1', {text}))")
    parts.append(_OPERATION_ORDER.format(operation=identifier(layout.OPERATION)))
    return "CONCAT(" + ", ".join(parts) + ")"


def database_key(column: str = identifier(layout.DATABASE)) -> str:
    """The database as a non-NULL key that equals exactly when the databases are equal or both NULL."""
    return f"IF({column} IS NULL, '0', CONCAT('1', {column}))"
