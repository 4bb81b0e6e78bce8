"""The embedded warehouse: Spark stages each batch's lines as Parquet, the driver loads them into DuckDB.

The load step routes, types and judges the lines (uniview.sink.load_sql), so Spark parses nothing.
DuckDB allows one writer per file, so only the driver writes.  One batch is one transaction: routed
against the tables as it sees them, version tables created, rows inserted, quarantine rows inserted,
new tables recorded in `main._uniview_pending_notifications`, and the batch recorded in
`main._uniview_batches`.  A batch already in the ledger is skipped, so a streaming batch replayed
after a crash lands exactly once.  No connection stays open between calls (a refresher may open
the file).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import uuid
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import duckdb
from pyspark.sql import DataFrame

from uniview.core.errors import WarehouseError
from uniview.core.landing_layout import ADDED_BY_SINK, CDC_COLUMNS, PENDING_TABLE, QUARANTINE_TABLE
from uniview.core.types import parse_type
from uniview.sink.frames import QUARANTINE_COLUMNS
from uniview.sink.landing import (
    LEDGER_TABLE,
    BatchCounts,
    BatchKey,
    Landing,
    LineBatch,
    known_version,
    source_schema_comment,
)
from uniview.sink.load_sql import (
    RAW_BYTES,
    RAW_LINE,
    decisions_json,
    decisions_table,
    envelopes,
    first_seen_of,
    key_of,
    route_value_names,
    route_values,
    routed_lines,
    routing_keys,
    typed_routes,
)
from uniview.sink.notify import Notification
from uniview.sink.pending import PendingStore
from uniview.sink.reasons import SKIPPED
from uniview.sink.routing import KnownVersion, VersionRoute, distinct_shapes, redirected, route_shapes
from uniview.warehouse.duckdb import record_tables_created_in_order
from uniview.warehouse.duckdb_connection import open_connection, qualified, scalar
from uniview.warehouse.duckdb_connection import quote_identifier as quote
from uniview.warehouse.duckdb_connection import string_literal as literal
from uniview.warehouse.duckdb_folds import retired_tables
from uniview.warehouse.duckdb_types import bigquery_type_from_duckdb, duckdb_type
from uniview.warehouse.url import duckdb_url

#: The temporary tables of a batch's load (per connection, dropped before commit): its lines' envelopes (each
#: line's JSON read once, by the first statement that reads the staged files), its routing decisions, its lines
#: with their decisions, one route's records typed and judged.
ENVELOPES, DECISIONS, ROUTED, TYPED = "_uniview_envelopes", "_uniview_decisions", "_uniview_routed", "_uniview_typed"
#: The size of the staged files' row groups: DuckDB reads a row group at a time on each thread, so small
#: ones keep the load's working set small (about 300 MB on two threads) and spread it over the threads.
STAGED_ROW_GROUP_BYTES = 4 * 1024 * 1024
#: An empty batch's lines (Spark staged no file).
_NO_LINES = (
    "(SELECT NULL::VARCHAR AS value, NULL::VARCHAR AS source_file, NULL::BLOB AS _bytes, "
    "NULL::VARCHAR AS _original_line LIMIT 0)"
)
#: DuckDB's memory while it loads a batch, unless --load-memory says otherwise (its lines take about 1 KB
#: each in memory, so an unbounded load grows with the batch); past it, the lines spill to disk.  An eighth of
#: the machine's memory, at least 1 GB and at most 2 GB: 1,000,000 lines fit in 2 GB, and their load then takes
#: a sixth less time than with 1 GB, spilling (docs/benchmarks.md).
LOAD_MEMORY_MIN_BYTES, LOAD_MEMORY_MAX_BYTES = 1 << 30, 2 << 30


def load_memory_limit() -> str:
    """The default --load-memory on this machine, as DuckDB reads a size (e.g. `2048MiB`)."""
    try:
        physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # no such sysconf name here: the floor
        physical = 0
    chosen = min(max(physical // 8, LOAD_MEMORY_MIN_BYTES), LOAD_MEMORY_MAX_BYTES)
    return f"{chosen >> 20}MiB"


_LEDGER_DDL = """CREATE TABLE IF NOT EXISTS {table} (
  stream VARCHAR, batch_id BIGINT, read BIGINT, written BIGINT, quarantined BIGINT, counts VARCHAR,
  landed_at TIMESTAMP WITH TIME ZONE, PRIMARY KEY (stream, batch_id))"""
_PENDING_DDL = """CREATE TABLE IF NOT EXISTS {table} (
  dataset VARCHAR, table_name VARCHAR, version VARCHAR, created_at TIMESTAMP WITH TIME ZONE,
  PRIMARY KEY (dataset, table_name, version))"""


def path(catalog: str, schema: str, table: str | None = None) -> str:
    """A fully qualified name: a schema named like the file's catalog would otherwise be ambiguous."""
    return qualified(catalog, schema, table)


def catalog_of(connection: duckdb.DuckDBPyConnection) -> str:
    return str(scalar(connection, "SELECT current_database()"))


class DuckDBLanding(Landing):
    """Version tables, quarantine and bookkeeping in the DuckDB file at `path`."""

    def __init__(self, path: str, staging_dir: str | None = None, load_memory: str | None = None) -> None:
        self.path = path
        self._load_memory = load_memory
        self.url = duckdb_url(path)
        self._own_staging = staging_dir is None
        self._staging = Path(staging_dir or tempfile.mkdtemp(prefix="uniview-sink-"))
        self.pending = DuckDBPendingStore(self)
        #: The connection loading a batch, until it begins to commit (what `interrupt` stops).
        self._loading: duckdb.DuckDBPyConnection | None = None
        self._loading_lock = threading.Lock()

    @contextmanager
    def connect(self, read_only: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
        """A fresh connection (UTC session), retried while another process holds the file's lock."""
        Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        connection = open_connection(self.path, read_only=read_only and Path(self.path).exists())
        try:
            yield connection
        finally:
            connection.close()

    def known_versions(self, tables: Collection[tuple[str, str]]) -> Mapping[tuple[str, str], KnownVersion]:
        with self.connect(read_only=True) as connection:
            return _known_versions(connection, tables)

    def landed(self, key: BatchKey) -> BatchCounts | None:
        with self.connect(read_only=True) as connection:
            return _ledger_entry(connection, key)

    def land_lines(self, batch: LineBatch) -> BatchCounts:
        stage = self._staging / uuid.uuid4().hex
        try:
            files = _stage(batch.frame, stage / "lines")
            with self.connect() as connection:
                _bound_memory(connection, stage / "spill", self._load_memory or load_memory_limit())
                self._interruptible(connection)
                try:
                    return _load(connection, batch, files, committing=lambda: self._interruptible(None))
                finally:
                    self._interruptible(None)
        finally:
            shutil.rmtree(stage, ignore_errors=True)

    def interrupt(self) -> None:
        """Stop the batch being loaded, unless it has begun to commit: its transaction rolls back, and `land_lines`
        raises WarehouseError."""
        with self._loading_lock:
            if self._loading is not None:
                self._loading.interrupt()

    def _interruptible(self, connection: duckdb.DuckDBPyConnection | None) -> None:
        with self._loading_lock:
            self._loading = connection

    def close(self) -> None:
        """Remove the staging directory if this landing made it (a given --staging-dir stays)."""
        if self._own_staging:
            shutil.rmtree(self._staging, ignore_errors=True)


def _known_versions(
    connection: duckdb.DuckDBPyConnection, tables: Collection[tuple[str, str]]
) -> Mapping[tuple[str, str], KnownVersion]:
    """Two catalog reads however many tables are asked for.  DuckDB's names are case-insensitive: a table asked
    for is found under any case, its spelling given when it differs (routing.KnownVersion.spelled)."""
    wanted = {(schema.casefold(), table.casefold()): (schema, table) for schema, table in tables}
    found = {
        (schema, table): comment
        for schema, table, comment in connection.execute(
            "SELECT schema_name, table_name, comment FROM duckdb_tables() WHERE database_name = current_database() "
            "AND NOT temporary"
        ).fetchall()
        if (schema.casefold(), table.casefold()) in wanted
    }
    columns: dict[tuple[str, str], list] = {key: [] for key in found}
    for schema, table, name, data_type in connection.execute(
        "SELECT schema_name, table_name, column_name, data_type FROM duckdb_columns() "
        "WHERE database_name = current_database() ORDER BY schema_name, table_name, column_index"
    ).fetchall():
        if (schema, table) in columns:
            columns[(schema, table)].append((name, bigquery_type_from_duckdb(data_type, table=table, column=name)))
    known: dict[tuple[str, str], KnownVersion] = {}
    for (schema, table), comment in found.items():
        asked = wanted[(schema.casefold(), table.casefold())]
        version = known_version(comment, tuple(columns[(schema, table)]))
        known[asked] = version if asked[1] == table else replace(version, spelled=table)
    return known


def _stage(frame: DataFrame, directory: Path) -> str | None:
    """Write `frame` as Parquet; the glob of its files, or None when it wrote none."""
    frame.write.mode("overwrite").option("parquet.block.size", STAGED_ROW_GROUP_BYTES).parquet(str(directory))
    return str(directory / "*.parquet") if any(directory.glob("*.parquet")) else None


def _bound_memory(connection: duckdb.DuckDBPyConnection, spill: Path, limit: str) -> None:
    """Bound the load's memory however large the batch: past `limit`, DuckDB spills the
    lines to `spill` (inside the batch's staging directory, removed with it).  Rows need not keep the
    order they were read in, which lets DuckDB stream them instead of buffering them."""
    connection.execute(f"SET memory_limit = {literal(limit)}")
    connection.execute("SET preserve_insertion_order = false")
    connection.execute(f"SET temp_directory = {literal(str(spill))}")


def _ledger_entry(connection: duckdb.DuckDBPyConnection, key: BatchKey) -> BatchCounts | None:
    exists = scalar(
        connection,
        "SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database() "
        "AND schema_name = 'main' AND table_name = '_uniview_batches'",
    )
    if not exists:
        return None
    row = connection.execute(
        f"SELECT counts FROM {path(catalog_of(connection), 'main', LEDGER_TABLE)} WHERE stream = ? AND batch_id = ?",
        [key.stream, key.batch_id],
    ).fetchone()
    return BatchCounts.from_json(row[0], replayed=True) if row else None


def _load(
    connection: duckdb.DuckDBPyConnection,
    batch: LineBatch,
    files: str | None,
    committing: Callable[[], None] = lambda: None,
) -> BatchCounts:
    """One transaction: everything of the batch, or nothing (and a replayed batch is skipped).  The staged
    lines' envelopes are read once, into a temporary table; their routing keys are routed against the tables
    as this transaction sees them; the lines are then joined to their decisions, into a temporary table, and
    each route's records are typed and judged from it: a batch that feeds a thousand tables costs a thousand
    small statements, not a thousand scans.  `committing` is called just before the commit."""
    connection.execute("BEGIN TRANSACTION")
    try:
        catalog = catalog_of(connection)
        connection.execute(_LEDGER_DDL.format(table=path(catalog, "main", LEDGER_TABLE)))
        connection.execute(_PENDING_DDL.format(table=path(catalog, "main", PENDING_TABLE)))
        previous = _ledger_entry(connection, batch.key)
        if previous is not None:
            connection.execute("ROLLBACK")
            return previous
        counts = _load_lines(connection, catalog, batch, files)
        # DuckDB's current_timestamp is the transaction's start: every row of the batch is stamped with it
        stamped = connection.execute("SELECT current_timestamp").fetchone()
        if stamped is not None and counts.total_written:
            counts.ingested = (stamped[0].isoformat(), stamped[0].isoformat())
        if batch.notify:
            _record_pending(connection, catalog, counts.created)
        connection.execute(
            f"INSERT INTO {path(catalog, 'main', LEDGER_TABLE)} VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                batch.key.stream,
                batch.key.batch_id,
                counts.read,
                counts.total_written,
                counts.total_quarantined,
                counts.to_json(),
                datetime.now(UTC),
            ],
        )
        for table in (TYPED, ROUTED, DECISIONS, ENVELOPES):
            connection.execute(f"DROP TABLE IF EXISTS {table}")
        committing()
        connection.execute("COMMIT")
    except duckdb.Error as error:
        connection.execute("ROLLBACK")
        raise WarehouseError(f"DuckDB: loading batch {batch.key.label} failed, nothing was written: {error}") from None
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    record_tables_created_in_order(connection, [(n.dataset, name) for n in counts.created if (name := n.table_name)])
    return counts


def _load_lines(
    connection: duckdb.DuckDBPyConnection, catalog: str, batch: LineBatch, files: str | None
) -> BatchCounts:
    """Route the batch's lines, write each route's rows and quarantine every line that cannot be written."""
    source = f"read_parquet({literal(files)})" if files else _NO_LINES
    # the envelopes are read once: both the routing keys and the routed lines come from the table
    connection.execute(f"CREATE TEMPORARY TABLE {ENVELOPES} AS {envelopes(source, batch.rewritten)}")
    lines = f"SELECT * FROM {ENVELOPES}"
    keys = {key_of(row): first_seen_of(row) for row in connection.execute(routing_keys(lines)).fetchall()}
    plan = batch.route(keys, lambda tables: _known_versions(connection, tables))
    connection.execute(decisions_table(DECISIONS), [decisions_json(plan)])
    connection.execute(f"CREATE TEMPORARY TABLE {ROUTED} AS {routed_lines(lines, DECISIONS, batch.fallback_dataset)}")
    connection.execute(f"DROP TABLE {ENVELOPES}")
    counts = BatchCounts(read=scalar(connection, f"SELECT count(*) FROM {ROUTED}"))
    schemas = _SchemaCatalog(connection, catalog)
    _load_routes(connection, schemas, batch, plan.routes, counts)
    _load_quarantine(connection, schemas, batch, counts)
    return counts


def _load_routes(
    connection: duckdb.DuckDBPyConnection,
    schemas: _SchemaCatalog,
    batch: LineBatch,
    routes: list[VersionRoute],
    counts: BatchCounts,
) -> None:
    """Type the records of each shape of route (one statement for a version that lands in a thousand
    datasets): write those that fit, creating the version tables that are missing from their rows, and
    quarantine the others in their route's dataset.  A shape's writes go as one script, and the schemas
    that exist are read once: a new table costs two statements (its creation and its description)."""
    existing = set(
        connection.execute(
            "SELECT schema_name, table_name FROM duckdb_tables() WHERE database_name = current_database()"
        ).fetchall()
    )
    retired = retired_tables(connection, {route.dataset for route in routes})
    shape_of = route_shapes(routes)
    for shape, columns in enumerate(distinct_shapes(routes)):
        members = [index for index, of in enumerate(shape_of) if of == shape]
        typed = typed_routes(ROUTED, members, columns, key=routes[members[0]].primary_key)
        connection.execute(f"CREATE OR REPLACE TEMPORARY TABLE {TYPED} AS {typed}")
        tallies = connection.execute(f"SELECT _route, reason, count(*) FROM {TYPED} GROUP BY ALL ORDER BY 1").fetchall()
        # a version folded into a consolidated table: its successor
        written = [
            (index, redirected(routes[index], retired), rows) for index, reason, rows in tallies if reason is None
        ]
        _run_script(connection, _write_statements(schemas, written, existing, counts))
        rejected: dict[str, list[int]] = {}
        for index, reason, rows in tallies:
            if reason is not None:
                rejected.setdefault(routes[index].dataset, []).append(index)
                counts.count_reason(reason, rows)
        _ensure_quarantines(connection, schemas, rejected)
        for dataset, indexes in sorted(rejected.items()):
            connection.execute(
                f"INSERT INTO {path(schemas.catalog, dataset, QUARANTINE_TABLE)} "
                f"SELECT {_quarantine_values(batch, 'raw_line', 'raw_bytes', 'reason', 'detail')} FROM {TYPED} "
                f"WHERE reason IS NOT NULL AND _route IN ({', '.join(map(str, sorted(set(indexes))))})"
            )


def _write_statements(
    schemas: _SchemaCatalog,
    written: list[tuple[int, VersionRoute, int]],
    existing: set[tuple[str, str]],
    counts: BatchCounts,
) -> list[str]:
    """The statements that write the typed rows of each (route index, route, rows) of `written`, counted in
    `counts.written`: a missing version table is created from its rows (recorded in `existing` and, in the
    routes' order, `counts.created`), one that exists gains the CDC columns the sink adds itself and is
    appended to.  The appends come last, after every table they may write to exists."""
    statements: list[str] = []
    inserts: list[str] = []
    for index, route, rows in written:
        table = path(schemas.catalog, route.dataset, route.table_name)
        rows_of_route = f"FROM {TYPED} WHERE _route = {index} AND reason IS NULL"
        if (route.dataset, route.table_name) not in existing:
            statements += schemas.create_missing([route.dataset])
            statements += _version_table_ddl(table, route, rows_of_route)
            existing.add((route.dataset, route.table_name))
            counts.created.append(Notification(route.dataset, route.table, route.version))
        else:
            statements += _sink_columns_ddl(table)
            inserts.append(f"INSERT INTO {table} SELECT {route_values(route)} {rows_of_route}")
        counts.written[f"{route.dataset}.{route.table_name}"] += rows
    return statements + inserts


def _load_quarantine(
    connection: duckdb.DuckDBPyConnection, schemas: _SchemaCatalog, batch: LineBatch, counts: BatchCounts
) -> None:
    """Quarantine the lines rejected before typing (their envelope, their routing, their metadata), each in
    its dataset's quarantine table; tombstones are counted, not stored."""
    by_dataset = connection.execute(
        f"SELECT _dataset, _reason, count(*) FROM {ROUTED} WHERE _reason IS NOT NULL GROUP BY 1, 2"
    ).fetchall()
    kept = " AND ".join(f"_reason <> {literal(reason)}" for reason in sorted(SKIPPED))
    quarantined = sorted({row[0] for row in by_dataset if row[1] not in SKIPPED})
    _ensure_quarantines(connection, schemas, quarantined)
    for dataset in quarantined:
        connection.execute(
            f"INSERT INTO {path(schemas.catalog, dataset, QUARANTINE_TABLE)} "
            f"SELECT {_quarantine_values(batch, RAW_LINE, RAW_BYTES, '_reason', '_detail')} FROM {ROUTED} "
            f"WHERE _reason IS NOT NULL AND {kept} AND _dataset = ?",
            [dataset],
        )
    for _, reason, rows in by_dataset:
        counts.count_reason(reason, rows)


def _quarantine_values(batch: LineBatch, raw_line: str, raw_bytes: str, reason: str, detail: str) -> str:
    """The select list of a quarantine row (QUARANTINE_COLUMNS' order) from a ROUTED or TYPED row.  DuckDB keeps
    a line of any size (up to its 4 GB per value, past Spark's 2 GB per line)."""
    return (
        f"{raw_line}, {reason}, {detail}, source_file, table_name, _version, {literal(batch.key.label)}, "
        f"current_timestamp, {raw_bytes}, octet_length({raw_bytes}), sha256({raw_bytes})"
    )


class _SchemaCatalog:
    """The schemas of the file as a batch's transaction sees them: read once, so a dataset's schema is created
    by the first statement that needs it, and no statement asks for one that exists; and the datasets whose
    quarantine table the batch has ensured (`_ensure_quarantines`)."""

    def __init__(self, connection: duckdb.DuckDBPyConnection, catalog: str) -> None:
        self.catalog = catalog
        self.quarantines: set[str] = set()
        self._present = {
            name.casefold()
            for (name,) in connection.execute(
                "SELECT schema_name FROM duckdb_schemas() WHERE database_name = current_database()"
            ).fetchall()
        }

    def create_missing(self, datasets: Iterable[str]) -> list[str]:
        """The statements that create those of `datasets` whose schema is missing (DuckDB's names are
        case-insensitive); they count as present from then on."""
        statements = []
        for dataset in datasets:
            if dataset.casefold() not in self._present:
                self._present.add(dataset.casefold())
                statements.append(f"CREATE SCHEMA IF NOT EXISTS {path(self.catalog, dataset)}")
        return statements


def _run_script(connection: duckdb.DuckDBPyConnection, statements: list[str]) -> None:
    """Run `statements` in one call (DuckDB runs a script's statements in order, in the open transaction)."""
    if statements:
        connection.execute(";\n".join(statements))


def _version_table_ddl(table: str, route: VersionRoute, rows: str) -> list[str]:
    """Create the version table `table` holding `rows` (a FROM clause of typed_routes' columns): declared
    types, then the CDC columns, described by its source schema.  One statement creates and fills it."""
    columns = [(quote(c.name), c.bq_type) for c in route.columns] + [(n, parse_type(bq)) for n, bq in CDC_COLUMNS]
    select = ", ".join(
        f"CAST({value} AS {duckdb_type(bq_type)}) AS {name}"
        for value, (name, bq_type) in zip(route_value_names(route), columns, strict=True)
    )
    return [
        f"CREATE TABLE {table} AS SELECT {select} {rows}",
        f"COMMENT ON TABLE {table} IS {literal(source_schema_comment(route))}",
    ]


def _sink_columns_ddl(table: str) -> list[str]:
    """Add the CDC columns an older version table lacks that the sink adds itself (landing_layout.ADDED_BY_SINK)."""
    return [
        f"ALTER TABLE {table} ADD COLUMN IF NOT EXISTS {name} {duckdb_type(parse_type(bq_type))}"
        for name, bq_type in CDC_COLUMNS
        if name in ADDED_BY_SINK
    ]


def _ensure_quarantines(
    connection: duckdb.DuckDBPyConnection, schemas: _SchemaCatalog, datasets: Collection[str]
) -> None:
    """Give each of `datasets` its quarantine table, and a quarantine made by an earlier release the columns
    added since: one catalog read and one script, however many datasets, and none for a dataset whose
    quarantine the batch has ensured already."""
    datasets = [dataset for dataset in datasets if dataset.casefold() not in schemas.quarantines]
    if not datasets:
        return
    schemas.quarantines.update(dataset.casefold() for dataset in datasets)
    definitions = ", ".join(f"{name} {duckdb_type(parse_type(bq))}" for name, bq in QUARANTINE_COLUMNS)
    present: dict[str, set[str]] = {}
    for schema, name in connection.execute(
        "SELECT schema_name, column_name FROM duckdb_columns() WHERE database_name = ? AND table_name = ?",
        [schemas.catalog, QUARANTINE_TABLE],
    ).fetchall():
        present.setdefault(schema.casefold(), set()).add(name)
    statements = schemas.create_missing(datasets)
    for dataset in datasets:
        table = path(schemas.catalog, dataset, QUARANTINE_TABLE)
        columns = present.get(dataset.casefold())
        if columns is None:
            statements.append(f"CREATE TABLE IF NOT EXISTS {table} ({definitions})")
            continue
        statements += [
            f"ALTER TABLE {table} ADD COLUMN {name} {duckdb_type(parse_type(bq))}"
            for name, bq in QUARANTINE_COLUMNS
            if name not in columns
        ]
    _run_script(connection, statements)


def _record_pending(connection: duckdb.DuckDBPyConnection, catalog: str, created: Iterable[Notification]) -> None:
    """One statement for the batch's announcements, however many tables it created."""
    rows = [(n.dataset, n.table, n.version) for n in created]
    if rows:
        datasets, tables, versions = (list(column) for column in zip(*rows, strict=True))
        connection.execute(
            f"INSERT INTO {path(catalog, 'main', PENDING_TABLE)} "
            "SELECT unnest($1), unnest($2), unnest($3), $4 ON CONFLICT DO NOTHING",
            [datasets, tables, versions, datetime.now(UTC)],
        )


class DuckDBPendingStore(PendingStore):
    """Pending notifications in the warehouse file itself (each call opens and closes a connection)."""

    def __init__(self, landing: DuckDBLanding) -> None:
        self._landing = landing

    def pending(self) -> list[Notification]:
        with self._landing.connect(read_only=True) as connection:
            exists = scalar(
                connection,
                "SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database() "
                "AND schema_name = 'main' AND table_name = '_uniview_pending_notifications'",
            )
            if not exists:
                return []
            rows = connection.execute(
                f"SELECT dataset, table_name, version FROM {path(catalog_of(connection), 'main', PENDING_TABLE)} "
                "ORDER BY created_at, 1, 2, 3"
            ).fetchall()
        return [Notification(*row) for row in rows]

    def add(self, notifications: Iterable[Notification]) -> None:
        with self._landing.connect() as connection:
            catalog = catalog_of(connection)
            connection.execute(_PENDING_DDL.format(table=path(catalog, "main", PENDING_TABLE)))
            _record_pending(connection, catalog, notifications)

    def remove(self, notification: Notification) -> None:
        with self._landing.connect() as connection:
            connection.execute(
                f"DELETE FROM {path(catalog_of(connection), 'main', PENDING_TABLE)} "
                "WHERE dataset = ? AND table_name = ? AND version = ?",
                [notification.dataset, notification.table, notification.version],
            )
