"""A DuckLake catalog's tables, views and columns, read once per snapshot of the catalog, for the local BigQuery
emulator's shim (bigquery_emulator_shim): a statement names a table several times (its check, its types, its
ingestion-time column, its destination), and the emulator reads its listing and columns each time.  Pure Python, so
the tests run it too.

DuckLake writes a new snapshot, with a larger id, for every transaction that changes its catalog: a table or view
created, altered or dropped, rows inserted or deleted (which change its record count), by any connection.  Each read
first reads the catalog's latest snapshot id (one small query, several times cheaper than the reads it stands for):
the catalog kept for that id is the answer, else the whole catalog is read again, with its snapshot id, in one query.
An answer derived from the catalog by another read (a table's column types) is kept with it only when the latest
snapshot id is still the catalog's after that read: no commit came between.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Iterable
from typing import Any, TypeVar

Answer = TypeVar("Answer")
#: A table or view as the emulator lists it: name, "TABLE" or "VIEW", the catalog's record count (0 for a view).
Entry = tuple[str, str, int]
#: A row of a catalog's reading: (LISTING, schema, name, kind, rows) or (COLUMN, schema, table, column, nullable).
Row = tuple[int, str, str, str, int]
LISTING, COLUMN = 1, 2


class CatalogSnapshot:
    """A catalog's tables and views per schema, and each table's columns, at one snapshot."""

    def __init__(self, snapshot: int, rows: Iterable[Row]) -> None:
        self.snapshot = snapshot
        self._listing: dict[str, list[Entry]] = {}
        self._columns: dict[tuple[str, str], dict[str, bool]] = {}
        self.derived: dict[Hashable, Any] = {}
        for part, schema, name, detail, number in rows:  # listing rows in name order
            if part == LISTING:
                self._listing.setdefault(schema, []).append((name, detail, number))
            else:
                self._columns.setdefault((schema, name), {})[detail] = bool(number)

    def listing(self, schema: str, name: str | None = None) -> list[Entry]:
        """The schema's tables and views in name order (only `name`, when given)."""
        return [entry for entry in self._listing.get(schema, ()) if name is None or entry[0] == name]

    def columns(self, schema: str, table: str) -> dict[str, bool] | None:
        """Column name -> whether it takes NULL, of a table of the schema; None when there is no such table."""
        found = self._columns.get((schema, table))
        return dict(found) if found else None


class SnapshotMemo:
    """The latest snapshot of each catalog: `latest(catalog)` reads its latest snapshot id (None for a catalog that
    is not DuckLake's), `load(catalog)` its snapshot id and rows, in one query."""

    def __init__(self, latest: Callable[[str], int | None], load: Callable[[str], tuple[int, Iterable[Row]]]) -> None:
        self._latest = latest
        self._load = load
        self._lock = threading.Lock()
        self._kept: dict[str, CatalogSnapshot] = {}

    def catalog(self, catalog: str) -> CatalogSnapshot | None:
        """The catalog as it is now; None for a catalog that is not DuckLake's."""
        latest = self._latest(catalog)
        if latest is None:
            return None
        with self._lock:
            kept = self._kept.get(catalog)
        if kept is not None and kept.snapshot == latest:
            return kept
        loaded = CatalogSnapshot(*self._load(catalog))
        with self._lock:
            kept = self._kept.get(catalog)
            if kept is None or kept.snapshot < loaded.snapshot:  # a slower read of an older snapshot keeps the newer
                self._kept[catalog] = loaded
        return loaded

    def derived(self, catalog: str, state: CatalogSnapshot, key: Hashable, compute: Callable[[], Answer]) -> Answer:
        """`compute()`'s answer at `state`, the catalog as `catalog()` just gave it: kept with it when no commit came
        before the answer was read."""
        with self._lock:
            if key in state.derived:
                return state.derived[key]
        answer = compute()
        if self._latest(catalog) == state.snapshot:
            with self._lock:
                state.derived[key] = answer
        return answer
