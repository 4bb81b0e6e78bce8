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

The emulator's own records are kept here too (bigquery_emulator_records): its jobs (JobRecords), and the resources
of its datasets and tables, read once per write (WriteMemo).
"""

from __future__ import annotations

import contextlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Iterator
from typing import Any, TypeVar

Answer = TypeVar("Answer")
#: A table or view as the emulator lists it: name, "TABLE" or "VIEW", the catalog's record count (0 for a view).
Entry = tuple[str, str, int]
#: A row of a catalog's reading: (LISTING, schema, name, kind, rows), (COLUMN, schema, table, column, nullable) or
#: (SCHEMA, schema, None, None, 0).
Row = tuple[int, str, str | None, str | None, int]
LISTING, COLUMN, SCHEMA = 1, 2, 3


class CatalogSnapshot:
    """A catalog's schemas, its tables and views per schema, and each table's columns, at one snapshot."""

    def __init__(self, snapshot: int, rows: Iterable[Row]) -> None:
        self.snapshot = snapshot
        self._listing: dict[str, list[Entry]] = {}
        self._columns: dict[tuple[str, str], dict[str, bool]] = {}
        self._schemas: set[str] = set()
        self.derived: dict[Hashable, Any] = {}
        for part, schema, name, detail, number in rows:  # listing rows in name order
            if part == SCHEMA:
                self._schemas.add(schema)
            elif part == LISTING:
                self._listing.setdefault(schema, []).append((str(name), str(detail), number))
            else:
                self._columns.setdefault((schema, str(name)), {})[str(detail)] = bool(number)

    def has_schema(self, schema: str) -> bool:
        """Whether the catalog has the schema (of that exact name)."""
        return schema in self._schemas

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
        self._pins = threading.local()

    @contextlib.contextmanager
    def pinned(self) -> Iterator[None]:
        """Within it, this thread's reads of a catalog all give the first one's answer, with no query: one
        statement's translation names its tables several times, and sees one snapshot of each catalog."""
        if getattr(self._pins, "states", None) is not None:  # already pinned further out
            yield
            return
        self._pins.states = {}
        try:
            yield
        finally:
            self._pins.states = None

    def catalog(self, catalog: str) -> CatalogSnapshot | None:
        """The catalog as it is now (as it was at the first read within `pinned()`); None for a catalog that is not
        DuckLake's."""
        pinned: dict[str, CatalogSnapshot] | None = getattr(self._pins, "states", None)
        if pinned is not None and catalog in pinned:
            return pinned[catalog]
        state = self._read(catalog)
        if pinned is not None and state is not None:
            pinned[catalog] = state
        return state

    def _read(self, catalog: str) -> CatalogSnapshot | None:
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


class WriteMemo:
    """Answers kept until the next write: `get(key, compute)` keeps `compute()`'s answer when no write was reported
    (`written()`, called once a write has committed) while it was computed, and `written()` forgets every answer."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._writes = 0
        self._kept: dict[Hashable, Any] = {}

    def get(self, key: Hashable, compute: Callable[[], Answer]) -> Answer:
        with self._lock:
            if key in self._kept:
                return self._kept[key]
            writes = self._writes
        answer = compute()
        with self._lock:
            if self._writes == writes:
                self._kept[key] = answer
        return answer

    def written(self) -> None:
        with self._lock:
            self._writes += 1
            self._kept.clear()


#: A job as the emulator's emulator.jobs table holds it: project, job id, parent job id, state, creation time in
#: milliseconds, the job's resource as JSON text.
JobRow = tuple[str, str, str | None, str, int, str]


class JobRecords:
    """The emulator's jobs, kept in this process: the queries of local_bigquery.jobs.store over a dict."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._rows: dict[tuple[str, str], JobRow] = {}

    def save(self, row: JobRow) -> None:
        """INSERT OR REPLACE by (project, job id)."""
        with self._lock:
            self._rows[row[0], row[1]] = row

    def load(self, project: str, job_id: str) -> str | None:
        """The job's resource, None when there is none."""
        with self._lock:
            row = self._rows.get((project, job_id))
        return None if row is None else row[5]

    def list_(
        self,
        project: str,
        states: list[str] | None = None,
        parent: str | None = None,
        min_creation_time: int | None = None,
        max_creation_time: int | None = None,
    ) -> list[str]:
        """The resources of the project's jobs with `parent` as their parent (None: the jobs that have none), in one
        of `states` (None: any), created within the bounds given (both included), the newest first, then by id."""
        with self._lock:
            rows = [row for (kept, _), row in self._rows.items() if kept == project]
        chosen = [
            row
            for row in rows
            if row[2] == parent
            and (states is None or row[3] in states)
            and (min_creation_time is None or row[4] >= min_creation_time)
            and (max_creation_time is None or row[4] <= max_creation_time)
        ]
        return [row[5] for row in sorted(chosen, key=lambda row: (-row[4], row[1]))]

    def delete(self, project: str, job_id: str) -> None:
        """The job and its children."""
        with self._lock:
            for key, row in list(self._rows.items()):
                if row[0] == project and job_id in (row[1], row[2]):
                    del self._rows[key]

    def rows(self) -> list[JobRow]:
        """Every job kept."""
        with self._lock:
            return list(self._rows.values())


class TranslationMemo:
    """The newest `limit` translations, by key: `get(key)` (None when not kept), `put(key, translation)`."""

    def __init__(self, limit: int = 4096) -> None:
        self._limit = limit
        self._lock = threading.Lock()
        self._kept: OrderedDict[Hashable, Any] = OrderedDict()

    def get(self, key: Hashable) -> Any | None:
        with self._lock:
            found = self._kept.get(key)
            if found is not None:
                self._kept.move_to_end(key)
            return found

    def put(self, key: Hashable, translation: Any) -> None:
        with self._lock:
            self._kept[key] = translation
            self._kept.move_to_end(key)
            while len(self._kept) > self._limit:
                self._kept.popitem(last=False)
