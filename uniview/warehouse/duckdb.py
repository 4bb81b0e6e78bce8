"""The embedded warehouse: one DuckDB file in which a schema stands for a BigQuery dataset.

Version tables are read from the DuckDB catalog and reported with BigQuery types; views are
written from their canonical BigQuery body translated by uniview.warehouse.duckdb_sql, and
carry the body's fingerprint in their comment.  DuckDB lets one process at a time open a file
read-write: the connection is opened on first use and released by close(), and a file locked
by another process is retried for `lock_timeout` seconds before TransientWarehouseError.

The catalog forgets creation order when a file is reopened (table_oid is then assigned in name
order), so the order in which version tables were first seen is kept in `_uniview.created_tables`;
see record_created_tables.
"""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import partial
from itertools import chain, compress, repeat
from operator import itemgetter
from pathlib import Path
from typing import Any, Literal, TypeVar, overload

import duckdb

from uniview.core.errors import ConfigError, NotFoundError, TransientWarehouseError, TypeParseError, WarehouseError
from uniview.core.identifiers import validate_dataset, validate_table
from uniview.core.render import render
from uniview.core.schema import ColumnRecord, TableListing, collector_paused, split_version_table
from uniview.core.types import BQType, parse_type
from uniview.core.version_description import described_primary_key
from uniview.current.table import FACT_ROW, KIND, CurrentTablePlan
from uniview.warehouse import duckdb_current
from uniview.warehouse.base import Applied, CurrentTableResult, ViewChange, Warehouse, fingerprint
from uniview.warehouse.duckdb_connection import first_line, open_connection, quote_identifier, scalar
from uniview.warehouse.duckdb_folds import empty_retired_tables
from uniview.warehouse.duckdb_sql import TRANSLATION_VERSION, TableColumns, quote_string, to_duckdb
from uniview.warehouse.duckdb_types import bigquery_type_from_duckdb, duckdb_type
from uniview.warehouse.url import duckdb_url

__all__ = [
    "DuckDBWarehouse",
    "bigquery_type",
    "column_types",
    "record_created_tables",
    "record_created_tables_of",
    "record_tables_created_in_order",
    "view_comment",
]

logger = logging.getLogger(__name__)
T = TypeVar("T")

#: Schema holding uniview's own bookkeeping in a DuckDB file.
LEDGER_SCHEMA = "_uniview"
LEDGER_TABLE = "created_tables"
#: How long a refresh (the CLI's, the function's) waits for a file another process holds, before
#: TransientWarehouseError: docs/function.md and docs/duckdb.md state it.
DEFAULT_LOCK_TIMEOUT_SECONDS = 20.0
_COMMENT = re.compile(r"uniview:sha256:(?P<digest>[0-9a-f]{64}) duckdb-translation:(?P<version>\d+)")
# A double-quoted name (kept as is), or the type TIMESTAMP without time zone.
_PLAIN_TIMESTAMP = re.compile(r'("(?:[^"]|"")*")|\bTIMESTAMP\b(?! WITH TIME ZONE)')

_SCHEMAS_SQL = "SELECT schema_name FROM duckdb_schemas() WHERE database_name = current_database()"
_ALL_TABLES_SQL = (
    "SELECT schema_name, table_name FROM duckdb_tables() WHERE database_name = current_database()"
    " AND NOT temporary ORDER BY table_oid"
)
#: A row per table of the schema, in the order of the tables' oids: its name, its oid, and its columns' positions,
#: names and DuckDB types, each a list in the same order (one aggregation fills them row by row, though not
#: necessarily in the columns' order: _ordered_columns checks).  Lists per table rather than a row per column: a
#: family of 900 versions of 300 columns is read as 900 rows, not 270,000 tuples grouped in Python.  Temporary
#: tables are in the catalog `temp`, never in the file's, and views are left out by their oids: no join with
#: duckdb_tables(), which builds a row of statistics for each of 900 wide tables (a fifth of the read).
_COLUMNS_SQL = (
    "SELECT table_name, table_oid, list(column_index), list(column_name), list(data_type) FROM duckdb_columns()"
    " WHERE database_name = current_database() AND schema_name = $1 AND table_oid NOT IN"
    " (SELECT view_oid FROM duckdb_views() WHERE database_name = current_database() AND schema_name = $1)"
    " GROUP BY table_name, table_oid ORDER BY table_oid"
)
_TABLE_COMMENTS_SQL = (
    "SELECT table_name, comment FROM duckdb_tables() WHERE database_name = current_database() AND schema_name = ?"
)
#: DuckDB builds a row of duckdb_tables() only for the tables the filter keeps: a prefix read of a schema of 900
#: wide tables costs a twentieth of reading them all.
_PREFIXED_TABLES_SQL = (
    "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() AND schema_name = ?"
    " AND starts_with(table_name, ?)"
)
_VIEWS_SQL = (
    "SELECT view_name, comment FROM duckdb_views() WHERE database_name = current_database()"
    " AND schema_name = ? AND NOT internal AND NOT temporary"
)
_SCHEMA_COLUMNS_SQL = (
    "SELECT table_name, column_name, data_type FROM duckdb_columns() WHERE database_name = current_database()"
    " AND lower(schema_name) = lower(?) ORDER BY table_name, column_index"
)


def view_comment(body: str) -> str:
    """The comment stored on a view created from `body`: its fingerprint and the translation version."""
    return f"uniview:sha256:{fingerprint(body)} duckdb-translation:{TRANSLATION_VERSION}"


def fingerprint_from_comment(comment: str | None) -> str:
    """The fingerprint a view comment records; "" for any other comment or an older translation."""
    match = _COMMENT.fullmatch(comment or "")
    if match is None or int(match["version"]) != TRANSLATION_VERSION:
        return ""
    return match["digest"]


#: Whether a table exists, by schema and name (the current table's state table, whose fact rows record the batches applied).
_APPLIED_TABLE_SQL = (
    "SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database() AND schema_name = ? "
    "AND table_name = ?"
)


class DuckDBWarehouse(Warehouse):
    """A DuckDB file as a warehouse: schemas are datasets; views are translated from BigQuery SQL."""

    def __init__(self, path: str | Path, *, lock_timeout: float = DEFAULT_LOCK_TIMEOUT_SECONDS) -> None:
        self.url = duckdb_url(path)
        self.path = Path(path).absolute()
        self.lock_timeout = lock_timeout
        self._connection: duckdb.DuckDBPyConnection | None = None

    # ------------------------------------------------------------ Warehouse

    def read_columns(
        self,
        dataset: str,
        families: Collection[str] | None = None,
        required_tables: Collection[str] = (),
    ) -> list[ColumnRecord]:
        """Columns of the version tables in schema `dataset`, `created` = first-seen order (see module doc)."""
        with collector_paused():
            rows, created = self._catalog_rows(dataset, families, required_tables)
            records = _column_records(rows, created)
            del rows  # freed before the collector runs again: it then scans the records alone, once
        return records

    def read_table_listings(
        self,
        dataset: str,
        families: Collection[str] | None = None,
        required_tables: Collection[str] = (),
    ) -> list[TableListing]:
        """The columns of read_columns listed table by table straight from the catalog's rows, no record per
        column built on the way (270,000 of them in a family of 900 wide versions)."""
        with collector_paused():
            rows, created = self._catalog_rows(dataset, families, required_tables)
            listings = _table_listings(rows, created)
            del rows
        return listings

    def _catalog_rows(
        self, dataset: str, families: Collection[str] | None, required_tables: Collection[str]
    ) -> tuple[list[tuple[Any, ...]], dict[str, float]]:
        """The catalog's column rows of schema `dataset`, and the creation rank of each table of `families`."""
        self._check_not_catalog_name(dataset)
        connection, schema = self._existing_schema(dataset)
        rows = _guarded(self.url, lambda: connection.execute(_COLUMNS_SQL, [schema]).fetchall())
        # The catalog's tables, which the ledger reads, are these rows, in the order of their oids.
        present = {schema: list(map(_TABLE, rows))}
        order = _guarded(self.url, lambda: record_created_tables_of(connection, [schema], present)[schema])
        for table in _guarded(self.url, lambda: empty_retired_tables(connection, schema)):
            order.pop(table, None)  # folded into a consolidated table and empty: no row to show
        wanted = set(families) if families is not None else None
        self._check_required(schema, order, wanted, required_tables)
        return rows, {table: float(rank) for table, rank in order.items() if _in_families(table, wanted)}

    def _check_not_catalog_name(self, dataset: str) -> None:
        """DuckDB names a file's catalog after the file: a schema of that name is ambiguous in every query."""
        validate_dataset(dataset)
        if dataset.lower() == self.path.stem.lower():
            raise ConfigError(
                f"dataset {dataset!r} has the name DuckDB gives the catalog of {self.path.name}, so every "
                f"reference to it is ambiguous: name the file differently, e.g. {dataset}-warehouse.duckdb"
            )

    def _check_required(
        self, schema: str, order: Mapping[str, int], wanted: set[str] | None, required_tables: Collection[str]
    ) -> None:
        for table in required_tables:
            if table not in order:
                raise NotFoundError(f"version table {schema}.{table} not found in {self.url}")
            if not _in_families(table, wanted):
                raise NotFoundError(f"table {schema}.{table} is not a version of the requested tables in {self.url}")

    def read_primary_keys(self, dataset: str, tables: Collection[str]) -> dict[str, tuple[str, ...] | None]:
        """From the tables' comments, where the sink records them (uniview.core.version_description)."""
        return {table: described_primary_key(text) for table, text in self.read_descriptions(dataset, tables).items()}

    def read_descriptions(self, dataset: str, tables: Collection[str]) -> dict[str, str | None]:
        """The tables' comments, where the sink records their source schema (uniview.core.version_description)."""
        connection, schema = self._existing_schema(dataset)
        rows = _guarded(self.url, lambda: connection.execute(_TABLE_COMMENTS_SQL, [schema]).fetchall())
        comments = dict(rows)
        return {table: comments.get(table) for table in tables}

    def read_ddl_renames(self, dataset: str) -> list[tuple[str | None, str | None, str | None]]:
        """The rows of every version of the control table `_uniview_ddl` in `dataset`."""
        from uniview.core.ddl_renames import DDL_COLUMN, DDL_TABLE
        from uniview.core.schema import version_table_prefix

        found = self._schema(dataset)
        if found is None:
            return []
        connection, schema = found
        prefix = version_table_prefix(DDL_TABLE)
        listed = _guarded(self.url, lambda: connection.execute(_PREFIXED_TABLES_SQL, [schema, prefix]).fetchall())
        tables = [name for (name,) in listed if split_version_table(name) == (DDL_TABLE, name[len(prefix) :])]
        selects = [
            f"SELECT _cdc_database, _cdc_sequence, {quote_identifier(DDL_COLUMN)} "
            f"FROM {quote_identifier(schema)}.{quote_identifier(table)}"
            for table in tables
        ]
        if not selects:
            return []
        rows = _guarded(self.url, lambda: connection.execute(" UNION ALL ".join(selects)).fetchall())
        return [(database, sequence, ddl) for database, sequence, ddl in rows]

    def read_view_fingerprints(self, dataset: str, name_prefix: str) -> dict[str, str]:
        """{view: fingerprint} of the views in `dataset` whose name starts with `name_prefix` (exactly)."""
        found = self._schema(dataset)
        if found is None:
            return {}
        connection, schema = found
        rows = _guarded(self.url, lambda: connection.execute(_VIEWS_SQL, [schema]).fetchall())
        return {name: fingerprint_from_comment(comment) for name, comment in rows if name.startswith(name_prefix)}

    def apply(self, changes: list[ViewChange], recheck: tuple[str, str] | None = None) -> Applied:
        """Create schemas, then create-or-replace or drop each view, in one transaction; then list the
        re-checked family's version tables.

        Runs no jobs.  Any failure rolls everything back and raises WarehouseError naming the view;
        lock contention and write conflicts raise TransientWarehouseError.
        """
        for change in changes:
            self._check_not_catalog_name(change.dataset)
            validate_table(change.name, "view")
        if not changes:
            return Applied([], self._version_tables(recheck))
        connection = self._connect(create=True)
        _guarded(self.url, connection.begin)
        try:
            self._apply_in_transaction(connection, changes)
            _guarded(self.url, connection.commit)
        except BaseException:
            _rollback_quietly(connection)
            raise
        logger.info("applied %d view change(s) to %s", len(changes), self.url)
        return Applied([], self._version_tables(recheck))

    def add_columns(self, dataset: str, additions: dict[str, list[tuple[str, str]]]) -> list[str]:
        """One transaction of ALTER TABLE ... ADD COLUMN; runs no jobs."""
        connection, schema = self._existing_schema(dataset)
        _guarded(self.url, connection.begin)
        try:
            for table, columns in additions.items():
                for name, bq_type in columns:
                    statement = (
                        f"ALTER TABLE {quote_identifier(schema)}.{quote_identifier(table)} ADD COLUMN "
                        f"{quote_identifier(name)} {duckdb_type(parse_type(bq_type))}"
                    )
                    _guarded(self.url, partial(connection.execute, statement))
            _guarded(self.url, connection.commit)
        except BaseException:
            _rollback_quietly(connection)
            raise
        return []

    def _version_tables(self, recheck: tuple[str, str] | None) -> frozenset[str] | None:
        if recheck is None:
            return None
        dataset, family = recheck
        return frozenset(record.table_name for record in self.read_columns(dataset, [family]))

    def _apply_in_transaction(self, connection: duckdb.DuckDBPyConnection, changes: list[ViewChange]) -> None:
        for dataset in dict.fromkeys(change.dataset for change in changes):
            _guarded(self.url, partial(connection.execute, f"CREATE SCHEMA IF NOT EXISTS {quote_identifier(dataset)}"))
        table_types = column_types(connection)
        for change in changes:
            view = f"{quote_identifier(change.dataset)}.{quote_identifier(change.name)}"
            try:
                if not change.is_drop:  # a current view replaces the current table of --current table
                    duckdb_current.drop_current_table(connection, change.dataset, change.name)
                for statement in _statements(view, change, table_types):
                    connection.execute(statement)
            except duckdb.TransactionException as error:
                where = f"{self.url}: view {change.dataset}.{change.name}"
                raise TransientWarehouseError(f"{where}: {first_line(error)}") from None
            except (duckdb.Error, WarehouseError) as error:
                action = "drop" if change.is_drop else "create"
                raise WarehouseError(
                    f"{self.url}: cannot {action} view {change.dataset}.{change.name}: {first_line(error)}"
                ) from None

    def current_table_action(self, plan: CurrentTablePlan, rebuild: bool = False) -> str:
        """What maintain_current_table would do now, read from the catalog (uniview.warehouse.duckdb_current)."""
        connection = self._connect(create=False)
        if connection is None:
            return plan.action(None, False, rebuild)
        return _guarded(self.url, lambda: duckdb_current.current_table_action(connection, plan, rebuild))

    def applied_batch(self, plan: CurrentTablePlan, stream: str, batch_id: int) -> bool:
        connection = self._connect(create=False)
        if connection is None:
            return False

        def read() -> bool:
            listed = connection.execute(_APPLIED_TABLE_SQL, [plan.dataset, plan.state_name]).fetchone()
            if not listed or not listed[0]:
                return False
            sql = f"SELECT count(*) FROM {quote_identifier(plan.dataset)}.{quote_identifier(plan.state_name)} "
            where = f"WHERE {KIND} = '{FACT_ROW}' AND _uniview_stream = ? AND _uniview_batch_id = ?"
            found = connection.execute(sql + where, [stream, batch_id]).fetchone()
            return bool(found and found[0])

        return _guarded(self.url, read)

    def maintain_current_table(self, plan: CurrentTablePlan, rebuild: bool = False) -> CurrentTableResult:
        """Create, rebuild or maintain `<table>_current` as a table in ONE transaction
        (uniview.warehouse.duckdb_current); a failure rolls everything back."""
        self._check_not_catalog_name(plan.dataset)

        def run() -> CurrentTableResult:
            with self.transaction() as connection:
                return duckdb_current.maintain_current_table(connection, plan, column_types, rebuild)

        return _guarded(self.url, run, what="cannot maintain the current table")

    @contextmanager
    def transaction(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """The connection inside one transaction: committed when the block ends, rolled back on error."""
        connection = self._connect(create=True)
        _guarded(self.url, connection.begin)
        try:
            yield connection
            _guarded(self.url, connection.commit)
        except BaseException:
            _rollback_quietly(connection)
            raise

    def close(self) -> None:
        """Close the connection, releasing the file for other processes."""
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    # ------------------------------------------------------------ connection

    def _schema(self, dataset: str) -> tuple[duckdb.DuckDBPyConnection, str] | None:
        """The connection and the schema's name as the catalog spells it; None when the file or the
        schema does not exist (the file is not created)."""
        connection = self._connect(create=False)
        if connection is None:
            return None
        schema = _guarded(self.url, lambda: _schema_name(connection, dataset))
        return None if schema is None else (connection, schema)

    def _existing_schema(self, dataset: str) -> tuple[duckdb.DuckDBPyConnection, str]:
        """_schema, or NotFoundError."""
        found = self._schema(dataset)
        if found is None:
            raise NotFoundError(f"dataset {dataset!r} not found in {self.url}")
        return found

    @overload
    def _connect(self, create: Literal[True]) -> duckdb.DuckDBPyConnection: ...

    @overload
    def _connect(self, create: bool) -> duckdb.DuckDBPyConnection | None: ...

    def _connect(self, create: bool) -> duckdb.DuckDBPyConnection | None:
        """The open connection; None when the file does not exist and `create` is False."""
        if self._connection is not None:
            return self._connection
        if not self.path.parent.is_dir():
            raise WarehouseError(f"cannot open {self.url}: directory {self.path.parent} does not exist")
        if not self.path.exists() and not create:
            return None
        self._connection = self._open_with_retry()
        return self._connection

    def _open_with_retry(self) -> duckdb.DuckDBPyConnection:
        """duckdb.connect, retried with backoff while another process holds the file's lock."""
        return open_connection(self.path, lock_timeout=self.lock_timeout)


def record_created_tables(connection: duckdb.DuckDBPyConnection, dataset: str) -> dict[str, int]:
    """{version table: creation rank} for schema `dataset`, recording tables seen for the first time.

    New tables are ranked after every recorded one, among themselves by table_oid: true
    creation order for tables created by this DuckDB instance, name order for tables that
    were created by another process before this one opened the file.  A process that creates
    version tables can call this (outside a transaction) before closing the file to record
    their exact order.  Records of dropped tables are removed.
    """
    return record_created_tables_of(connection, [dataset])[dataset]


def record_created_tables_of(
    connection: duckdb.DuckDBPyConnection,
    datasets: Collection[str],
    tables: Mapping[str, Sequence[str]] | None = None,
) -> dict[str, dict[str, int]]:
    """record_created_tables for many datasets at once: one catalog read, at most one transaction.
    `tables`, when the caller has read the catalog already: each dataset's tables in table_oid order."""
    wanted = sorted(set(datasets))
    if not wanted:
        return {}
    present: dict[str, list[str]] = {dataset: [] for dataset in wanted}
    listed = _catalog_tables(connection) if tables is None else [(d, t) for d in wanted for t in tables.get(d, ())]
    for schema, name in listed:
        if schema in present and split_version_table(name):
            present[schema].append(name)
    recorded = _recorded_tables(connection, wanted)
    changes = {}
    for dataset in wanted:
        new = [name for name in present[dataset] if name not in recorded[dataset]]
        still_there = set(present[dataset])
        gone = [name for name in recorded[dataset] if name not in still_there]
        if new or gone:
            changes[dataset] = (new, gone)
    if changes:
        _write_ledger(connection, changes)
        recorded = _recorded_tables(connection, wanted)
    return recorded


def record_tables_created_in_order(connection: duckdb.DuckDBPyConnection, created: Sequence[tuple[str, str]]) -> None:
    """record_created_tables_of after a transaction that created the tables `created` ((dataset, table), in the order
    it created them): they are recorded in that order, after the datasets' tables not recorded yet.  The catalog's
    table_oid does not keep it: DuckDB numbers a transaction's new tables in name order when it commits."""
    new = set(created)
    tables: dict[str, list[str]] = {dataset: [] for dataset, _ in created}
    for schema, name in _catalog_tables(connection):  # one pass, however many datasets the batch created tables in
        if schema in tables and (schema, name) not in new:
            tables[schema].append(name)
    for dataset, name in created:
        tables[dataset].append(name)
    record_created_tables_of(connection, tables.keys(), tables)


def _catalog_tables(connection: duckdb.DuckDBPyConnection) -> list[tuple[str, str]]:
    return [(schema, name) for schema, name in connection.execute(_ALL_TABLES_SQL).fetchall()]


def _column_records(rows: list[tuple[Any, ...]], created: Mapping[str, float]) -> list[ColumnRecord]:
    """The columns of the catalog's rows (_COLUMNS_SQL) of the tables in `created` as records with BigQuery
    types, each type mapped once (_TypeTexts), the records built without a Python call per column."""
    tables = _ordered_columns(rows, created)
    texts = _TypeTexts(tables)
    values = chain.from_iterable(
        zip(
            repeat(table),
            names,
            positions,
            map(texts.__getitem__, types),
            repeat(created[table]),
            repeat(False),  # is_hidden: DuckDB has no hidden columns
        )
        for table, positions, names, types in tables
    )
    return list(map(tuple.__new__, repeat(ColumnRecord), values))  # ColumnRecord._make, less its length check


def _table_listings(rows: list[tuple[Any, ...]], created: Mapping[str, float]) -> list[TableListing]:
    """The catalog's rows (_COLUMNS_SQL) of the tables in `created`, each listed in ordinal order with BigQuery
    type texts."""
    tables = _ordered_columns(rows, created)
    texts = _TypeTexts(tables)
    return [
        TableListing(table, created[table], names, list(map(texts.__getitem__, types)))
        for table, _, names, types in tables
    ]


def _ordered_columns(rows: list[tuple[Any, ...]], created: Mapping[str, float]) -> list[tuple[Any, ...]]:
    """(table, positions, names, types) of each of the rows of the tables in `created`, its columns in ordinal
    order (the catalog gives them so: checked, not assumed)."""
    kept = []
    for table, _, positions, names, types in compress(rows, map(created.__contains__, map(_TABLE, rows))):
        if positions != sorted(positions):
            order = sorted(range(len(positions)), key=positions.__getitem__)
            positions, names, types = ([column[i] for i in order] for column in (positions, names, types))
        kept.append((table, positions, names, types))
    return kept


class _TypeTexts(dict[str, str]):
    """The BigQuery type text of each DuckDB type the rows (_ordered_columns) name, mapped when it is first
    looked up: an unsupported type is reported with the first column, in the rows' order, that names it."""

    def __init__(self, rows: list[tuple[Any, ...]]) -> None:
        super().__init__()
        self._rows = rows

    def __missing__(self, data_type: str) -> str:
        table, column = next(
            (table, name)
            for table, _, names, types in self._rows
            for name, named_type in zip(names, types, strict=True)
            if named_type == data_type
        )
        text = self[data_type] = _bigquery_type(table, column, data_type)
        return text


_TABLE = itemgetter(0)


def _recorded_tables(connection: duckdb.DuckDBPyConnection, datasets: list[str]) -> dict[str, dict[str, int]]:
    recorded: dict[str, dict[str, int]] = {dataset: {} for dataset in datasets}
    exists = scalar(
        connection,
        "SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database()"
        " AND schema_name = ? AND table_name = ?",
        [LEDGER_SCHEMA, LEDGER_TABLE],
    )
    if not exists:
        return recorded
    rows = connection.execute(
        f"SELECT dataset, table_name, seq FROM {LEDGER_SCHEMA}.{LEDGER_TABLE} WHERE list_contains(?, dataset)"
        " ORDER BY seq",
        [datasets],
    ).fetchall()
    for dataset, name, seq in rows:
        recorded[dataset][name] = seq
    return recorded


def _write_ledger(connection: duckdb.DuckDBPyConnection, changes: Mapping[str, tuple[list[str], list[str]]]) -> None:
    """Record `changes` ({dataset: (new tables, dropped tables)}) in one transaction."""
    ledger = f"{LEDGER_SCHEMA}.{LEDGER_TABLE}"
    connection.begin()
    try:
        connection.execute(f"CREATE SCHEMA IF NOT EXISTS {LEDGER_SCHEMA}")
        connection.execute(f"CREATE TABLE IF NOT EXISTS {ledger} (dataset VARCHAR, table_name VARCHAR, seq BIGINT)")
        rank = scalar(connection, f"SELECT coalesce(max(seq), 0) FROM {ledger}")
        for dataset, (_, gone) in changes.items():
            for name in gone:
                connection.execute(f"DELETE FROM {ledger} WHERE dataset = ? AND table_name = ?", [dataset, name])
        added = [(dataset, name) for dataset, (new, _) in changes.items() for name in new]
        if added:  # one statement for a batch's thousand new tables, not one each (5 s against 0.2 s)
            datasets, names = (list(column) for column in zip(*added, strict=True))
            ranks = list(range(rank + 1, rank + 1 + len(added)))
            connection.execute(
                f"INSERT INTO {ledger} SELECT unnest($1), unnest($2), unnest($3)", [datasets, names, ranks]
            )
        connection.commit()
    except BaseException:
        _rollback_quietly(connection)
        raise


def _rollback_quietly(connection: duckdb.DuckDBPyConnection) -> None:
    """Roll back the open transaction, if any; the error that led here is the one to report."""
    with contextlib.suppress(duckdb.Error):
        connection.rollback()


def _statements(view: str, change: ViewChange, table_types: TableColumns) -> list[str]:
    if change.body is None:
        return [render("drop_view.sql.j2", view=view)]
    return [
        f"CREATE OR REPLACE VIEW {view} AS\n{to_duckdb(change.body, table_types)}",
        f"COMMENT ON VIEW {view} IS {quote_string(view_comment(change.body))}",
    ]


def column_types(connection: duckdb.DuckDBPyConnection) -> TableColumns:
    """Column types of tables and views, as the translation asks for them: one catalog read per
    schema, types mapped once per table; columns without a BigQuery type are left out."""
    by_schema: dict[str, dict[str, list[tuple[str, str]]]] = {}
    mapped: dict[tuple[str, str], dict[str, BQType] | None] = {}

    def lookup(dataset: str, table: str) -> dict[str, BQType] | None:
        key = (dataset.lower(), table.lower())
        if key not in mapped:
            if key[0] not in by_schema:
                by_schema[key[0]] = _schema_columns(connection, dataset)
            mapped[key] = _mapped_types(by_schema[key[0]].get(key[1], []))
        return mapped[key]

    return lookup


def _schema_columns(connection: duckdb.DuckDBPyConnection, dataset: str) -> dict[str, list[tuple[str, str]]]:
    columns: dict[str, list[tuple[str, str]]] = {}
    for table, column, data_type in connection.execute(_SCHEMA_COLUMNS_SQL, [dataset]).fetchall():
        columns.setdefault(table.lower(), []).append((column, data_type))
    return columns


def _mapped_types(columns: list[tuple[str, str]]) -> dict[str, BQType] | None:
    types: dict[str, BQType] = {}
    for name, data_type in columns:
        try:
            types[name] = bigquery_type(data_type)
        except TypeParseError:
            continue
    return types or None


def _bigquery_type(table: str, column: str, data_type: str) -> str:
    text = _TYPE_TEXT.get(data_type)
    if text is None:
        text = str(bigquery_type(data_type, table=table, column=column))
        if len(_TYPE_TEXT) < _MAPPED_TYPES_LIMIT:
            _TYPE_TEXT[data_type] = text
    return text


_TYPE_TEXT: dict[str, str] = {}


def bigquery_type(data_type: str, *, table: str = "", column: str = "") -> BQType:
    """The BigQuery type of a DuckDB column type (TypeParseError naming table and column)."""
    found = _MAPPED_TYPES.get(data_type)
    if found is None:
        found = _map_duckdb_type(data_type, table, column)
        if len(_MAPPED_TYPES) < _MAPPED_TYPES_LIMIT:
            _MAPPED_TYPES[data_type] = found
    return found


_MAPPED_TYPES: dict[str, BQType] = {}
_MAPPED_TYPES_LIMIT = 10_000


def _map_duckdb_type(data_type: str, table: str, column: str) -> BQType:
    """bigquery_type_from_duckdb, also for DuckDB's plain TIMESTAMP, which sqlglot reads as
    TIMESTAMPNTZ: that one is asked about as TIMESTAMP_NS, the same BigQuery DATETIME."""
    try:
        return bigquery_type_from_duckdb(data_type, table=table, column=column)
    except TypeParseError:
        patched = _PLAIN_TIMESTAMP.sub(lambda match: match.group(1) or "TIMESTAMP_NS", data_type)
        if patched == data_type:
            raise
        try:
            return bigquery_type_from_duckdb(patched, table=table, column=column)
        except TypeParseError:
            pass
        raise


def _schema_name(connection: duckdb.DuckDBPyConnection, dataset: str) -> str | None:
    """The schema's name as the catalog spells it (DuckDB matches names case-insensitively)."""
    names = [name for (name,) in connection.execute(_SCHEMAS_SQL).fetchall()]
    if dataset in names:
        return dataset
    return next((name for name in names if name.lower() == dataset.lower()), None)


def _in_families(table: str, wanted: set[str] | None) -> bool:
    parts = split_version_table(table)
    return parts is not None and (wanted is None or parts[0] in wanted)


def _guarded(url: str, action: Callable[[], T], what: str = "") -> T:
    """Run a catalog read or transaction step; DuckDB errors become uniview's, prefixed with `what`: a write
    conflict is transient, anything else a WarehouseError."""
    where = f"{url}: {what}: " if what else f"{url}: "
    try:
        return action()
    except duckdb.TransactionException as error:
        raise TransientWarehouseError(where + first_line(error)) from None
    except duckdb.Error as error:
        raise WarehouseError(where + first_line(error)) from None
