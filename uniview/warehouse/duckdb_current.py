"""`<table>_current` as a table on DuckDB: the statements of uniview.current.table run in ONE transaction.

The plan's statements are BigQuery SQL.  A select that reads column types the translation must know
(`Statement.typed`: the window over the unified view, the presentation) goes through
uniview.warehouse.duckdb_sql.to_duckdb, like every view body; the others use only portable SQL (and
qualify columns, which to_duckdb reads as struct fields) and are transpiled by sqlglot.

The window (uniview.current.table.BatchWindow: the rows stamped after the watermark, and the exact
ingestion ranges of the sink's batches not applied yet that were stamped before it) is computed first,
in the same transaction, from the facts, the sink's ledger (`main._uniview_batches`, its rows landed
since the newest applied batch less the horizon) and the batches applied, and written into the window's
filter as literals: DuckDB then pushes it into every version table's scan, where the row groups'
min/max statistics skip what was landed before it.  A view named
`<table>_current` (from --current) is dropped in the same transaction the table is created in.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import logging
import os
import re
import signal
from collections.abc import Callable

import duckdb
import sqlglot

from uniview.current.table import (
    KILL_AT,
    WINDOW,
    Action,
    AppliedBatch,
    BatchWindow,
    CurrentTablePlan,
    LedgerBatch,
    Statement,
    batch_window,
    ledger_batch,
    ledger_since,
    parse_description,
    state_prefixes,
)
from uniview.warehouse.base import CurrentTableResult
from uniview.warehouse.duckdb_connection import quote_identifier
from uniview.warehouse.duckdb_sql import TableColumns, quote_string, to_duckdb

logger = logging.getLogger(__name__)
#: The window condition's placeholder in the translated statements: the text stays the same from one
#: refresh to the next (translated once), and the literals written in are what DuckDB pushes into scans.
FLOOR = "_uniview_window_placeholder"
_FLOOR = re.compile(rf"\b{FLOOR}\b")
#: The sink's batch ledger (uniview.sink.landing.LEDGER_TABLE) in the file's main schema.
LEDGER = "_uniview_batches"

_TABLE_SQL = (
    "SELECT table_name, comment FROM duckdb_tables() WHERE database_name = current_database() AND schema_name = ?"
    " AND NOT temporary"
)
_VIEW_SQL = (
    "SELECT count(*) FROM duckdb_views() WHERE database_name = current_database() AND schema_name = ?"
    " AND view_name = ? AND NOT internal AND NOT temporary"
)


def current_table_action(
    connection: duckdb.DuckDBPyConnection, plan: CurrentTablePlan, rebuild: bool = False
) -> Action:
    """What maintaining `plan` would do now (CurrentTablePlan.action), from the catalog."""
    tables = dict(connection.execute(_TABLE_SQL, [plan.dataset]).fetchall())
    state = all(name in tables for name in plan.state_names)
    description = tables.get(plan.table_name) if plan.table_name in tables else None
    return plan.action(description, state, rebuild)


def maintain_current_table(
    connection: duckdb.DuckDBPyConnection,
    plan: CurrentTablePlan,
    column_types: Callable[[duckdb.DuckDBPyConnection], TableColumns],
    rebuild: bool = False,
) -> CurrentTableResult:
    """Run the plan's action in the open transaction of `connection` (the caller commits or rolls back)."""
    connection.execute(f"CREATE SCHEMA IF NOT EXISTS {quote_identifier(plan.dataset)}")
    action = current_table_action(connection, plan, rebuild)
    try:
        changes, databases = _run_action(connection, plan, action, column_types)
    except _Relink as relink:  # nothing was written yet: the window's changes make the table rebuild
        action = "rebuild"
        changes, databases = _run_action(connection, plan, action, column_types, relink.reached + 1)
    _drop_other_states(connection, plan)
    if action in ("create", "rebuild"):
        databases = _count(
            connection,
            f"(SELECT DISTINCT _uniview_db FROM {_duckdb_name(plan.state_table)} WHERE _uniview_db IS NOT NULL)",
        )
    rows = _count(connection, _path(plan.dataset, plan.table_name))
    logger.info("%s %s.%s: %d change(s) read, %d row(s)", action, plan.dataset, plan.table_name, changes, rows)
    return CurrentTableResult(action, changes, databases, rows)


def _reach(number: int) -> None:
    """`UNIVIEW_CURRENT_KILL_AT=<n>` makes the process SIGKILL itself before the n-th statement: exactly
    `kill -9` half-way through the transaction (for the tests); one past the last statement: after them all."""
    if os.environ.get(KILL_AT) == str(number):
        os.kill(os.getpid(), signal.SIGKILL)


#: What stands for a typed MERGE's source while the rest of it is translated.
_MERGE_SOURCE = "SELECT * FROM _uniview_merge_source"
#: The statement kinds that create, replace or drop a table.
_CREATES_OR_DROPS = frozenset({"temp", "replace", "drop"})


def duckdb_statement(statement: Statement, table_types: TableColumns, state_hash: str | None = None) -> str:
    """One statement of the plan in DuckDB SQL.  Typed selects are translated once per process and state
    hash (which fixes the types of the columns they read)."""
    table = _duckdb_name(statement.table)
    if statement.kind == "drop":
        return f"DROP TABLE IF EXISTS {table}"
    if statement.kind == "merge":  # DuckDB runs the guard's check as the "assert" before it
        statement = dataclasses.replace(statement, guard=None)
    if statement.kind == "delete" or (statement.kind == "merge" and not statement.typed):
        return _portable(statement.sql)
    assert statement.select is not None
    if statement.kind == "merge":  # the MERGE around a placeholder source, then the source translated in
        head = _portable(dataclasses.replace(statement, select=_MERGE_SOURCE).sql)
        assert head.count(_MERGE_SOURCE) == 1, head
        return head.replace(_MERGE_SOURCE, _typed(statement.select, table_types, state_hash))
    if statement.kind == "assert":  # the count the script stops on (maintain_current_table reads it)
        return _portable(f"SELECT {statement.select}")
    select = _typed(statement.select, table_types, state_hash) if statement.typed else _portable(statement.select)
    if statement.kind == "temp":
        return f"CREATE OR REPLACE TEMP TABLE {table} AS\n{select}"
    if statement.kind == "insert":
        columns = ", ".join(_duckdb_column(column) for column in statement.columns)
        return f"INSERT INTO {table} ({columns})\n{select}"
    comment = f"; COMMENT ON TABLE {table} IS {quote_string(statement.description)}" if statement.description else ""
    return f"CREATE OR REPLACE TABLE {table} AS\n{select}{comment}"


def _portable(sql: str) -> str:
    """A statement of portable SQL (IF, CONCAT of non-NULL texts, IS NOT DISTINCT FROM, window functions) as
    DuckDB reads it: as it is when no name is quoted, no literal escaped and no function is spelled
    otherwise (then both engines read the same text alike), else transpiled (once per process)."""
    if not _NOT_PORTABLE.search(sql):
        return sql
    if sql not in _TRANSPILED:
        if len(_TRANSPILED) >= _TRANSLATED_LIMIT:
            _TRANSPILED.clear()
        _TRANSPILED[sql] = sqlglot.transpile(sql, read="bigquery", write="duckdb")[0]
    return _TRANSPILED[sql]


#: What DuckDB reads otherwise than BigQuery: quoted names, escapes, and the functions written differently.
_NOT_PORTABLE = re.compile(r"`|\\|\b(?:TIMESTAMP_SUB|STRUCT|ANY_VALUE)\(|\bINT64\b")
_TRANSPILED: dict[str, str] = {}


def _typed(select: str, table_types: TableColumns, state_hash: str | None) -> str:
    if state_hash is None:
        return to_duckdb(select, table_types)
    key = (state_hash, select)
    if key not in _TRANSLATED:
        if len(_TRANSLATED) >= _TRANSLATED_LIMIT:
            _TRANSLATED.clear()
        _TRANSLATED[key] = to_duckdb(select, table_types)
    return _TRANSLATED[key]


class _Relink(Exception):
    """The window holds changes a key change makes the table rebuild for (the plan's "assert" statement, the
    `reached`-th statement of the refresh)."""

    def __init__(self, reached: int) -> None:
        super().__init__(f"a key change to follow (statement {reached})")
        self.reached = reached


def _run_action(
    connection: duckdb.DuckDBPyConnection,
    plan: CurrentTablePlan,
    action: Action,
    column_types: Callable[[duckdb.DuckDBPyConnection], TableColumns],
    first: int = 1,
) -> tuple[int, int]:
    """Run the statements of `action`, numbered from `first` (UNIVIEW_CURRENT_KILL_AT counts every statement of
    the refresh, and one past the last is the point after them, before the commit): (changes read, databases presented
    again); _Relink before any write but the new rows' (a rebuild replaces the state they were written to)."""
    if action in ("create", "rebuild"):
        _drop_view(connection, plan)
    building = action in ("create", "rebuild")
    window, batches = (None, _build_batches(connection, plan)) if building else pending_window(connection, plan)
    changes = databases = 0
    table_types = column_types(connection)  # one catalog read per schema, only if a statement is translated
    reads = None if window is None else window.reads
    statements = plan.statements(action, None if window is None else FLOOR, batches, reads)
    for number, statement in enumerate(statements, first):
        _reach(number)
        if action == "maintain" and statement.kind == "merge" and statement.table == plan.table:
            databases = _counted(connection, _typed(plan.databases_presented(action), table_types, plan.state_hash))
        sql = duckdb_statement(statement, table_types, plan.state_hash)
        found = connection.execute(sql if window is None else with_floor(sql, window))
        if statement.kind == "assert" and found.fetchone() != (0,):
            raise _Relink(number)
        if statement.kind in _CREATES_OR_DROPS:  # the catalog changed: read it again when next asked
            table_types = column_types(connection)
        if statement.kind == "temp" and statement.table == WINDOW:
            changes = _count(connection, WINDOW)
        elif statement.kind == "insert" and statement.table == plan.state_table:  # the new rows: INSERT's count
            (changes,) = found.fetchone() or (0,)
    if action == "re-present":
        databases = _counted(connection, plan.databases_presented(action))
    _reach(first + len(statements))
    return changes, databases


_TRANSLATED: dict[tuple[str, str], str] = {}
_TRANSLATED_LIMIT = 256


def pending_window(
    connection: duckdb.DuckDBPyConnection, plan: CurrentTablePlan
) -> tuple[BatchWindow, tuple[AppliedBatch, ...]]:
    """The window of the next maintenance and the ledger's batches it applies (uniview.current.table.batch_window)."""
    newest = connection.execute(_portable(plan.floor_select)).fetchone()
    watermark = None if newest is None or newest[0] is None else newest[0].astimezone(dt.UTC)
    applied = [AppliedBatch(*row) for row in connection.execute(_portable(plan.applied_select)).fetchall()]
    mark = max((batch.landed_at for batch in applied), default=None)
    return batch_window(watermark, ledger_batches(connection, plan, ledger_since(mark)), applied)


def ledger_batches(
    connection: duckdb.DuckDBPyConnection, plan: CurrentTablePlan, since: dt.datetime | None
) -> list[LedgerBatch]:
    """The ledger's batches landed after `since` (None: all) that wrote rows to the family."""
    if not _has_ledger(connection):
        return []
    rows = connection.execute(
        f"SELECT stream, batch_id, counts, landed_at, NULL FROM main.{LEDGER} WHERE ?::TIMESTAMPTZ IS NULL OR landed_at > ?",
        [since, since],
    ).fetchall()
    found = (ledger_batch(row, plan.family, plan.source_dataset) for row in rows)
    return [batch for batch in found if batch is not None]


def _build_batches(connection: duckdb.DuckDBPyConnection, plan: CurrentTablePlan) -> tuple[AppliedBatch, ...]:
    """What a build records as applied: the ledger's batches of the family within the horizon of the newest."""
    if not _has_ledger(connection):
        return ()
    (newest,) = connection.execute(f"SELECT max(landed_at) FROM main.{LEDGER}").fetchone() or (None,)
    if newest is None:
        return ()
    since = ledger_since(newest.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M:%S.%f"))
    return tuple(sorted(batch.applied for batch in ledger_batches(connection, plan, since)))


def _has_ledger(connection: duckdb.DuckDBPyConnection) -> bool:
    found = connection.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database() AND schema_name = 'main'"
        " AND table_name = ?",
        [LEDGER],
    ).fetchone()
    return bool(found and found[0])


def with_floor(sql: str, window: BatchWindow) -> str:
    """`sql` with the window's placeholder (FLOOR) written as its condition, TIMESTAMPTZ literals: DuckDB then
    pushes the window's filter into every version table's scan."""
    return _FLOOR.sub(lambda _: window.condition(_timestamptz).replace("`", '"'), sql)


def _timestamptz(moment: dt.datetime) -> str:
    return f"TIMESTAMPTZ {quote_string(moment.astimezone(dt.UTC).strftime('%Y-%m-%d %H:%M:%S.%f+00'))}"


def window_sql(connection: duckdb.DuckDBPyConnection, plan: CurrentTablePlan, table_types: TableColumns) -> str:
    """The DuckDB SELECT of the window the next maintenance reads."""
    window, _ = pending_window(connection, plan)
    select = to_duckdb(plan.window_select(None if window.watermark is None else FLOOR, window.reads), table_types)
    return select if window.watermark is None else with_floor(select, window)


def _drop_view(connection: duckdb.DuckDBPyConnection, plan: CurrentTablePlan) -> None:
    """The current view of the same name, made by --current, gives way to the table."""
    (found,) = connection.execute(_VIEW_SQL, [plan.dataset, plan.table_name]).fetchone() or (0,)
    if found:
        connection.execute(f"DROP VIEW {_path(plan.dataset, plan.table_name)}")


def _drop_other_states(connection: duckdb.DuckDBPyConnection, plan: CurrentTablePlan) -> None:
    """The state tables of the family's earlier state hashes, which nothing reads any more."""
    mine = set(plan.state_names)
    for (name,) in connection.execute(
        _TABLE_SQL.replace("table_name, comment", "table_name"), [plan.dataset]
    ).fetchall():
        if name not in mine and name.startswith(plan.state_prefixes):
            connection.execute(f"DROP TABLE {_path(plan.dataset, name)}")


def drop_current_table(connection: duckdb.DuckDBPyConnection, dataset: str, name: str) -> None:
    """Drop `dataset.name` if it is a current table (its comment records its fingerprints), with its state
    tables: a view of that name (--current) is about to replace it."""
    tables = dict(connection.execute(_TABLE_SQL, [dataset]).fetchall())
    if name not in tables or parse_description(tables[name]) is None:
        return
    connection.execute(f"DROP TABLE {_path(dataset, name)}")
    family = name.removesuffix("_current")
    for other in tables:
        if other.startswith(state_prefixes(family)):
            connection.execute(f"DROP TABLE {_path(dataset, other)}")


def _count(connection: duckdb.DuckDBPyConnection, table: str) -> int:
    return _counted(connection, f"SELECT count(*) FROM {table}")


def _counted(connection: duckdb.DuckDBPyConnection, select: str) -> int:
    found = connection.execute(_portable(select)).fetchone()
    return int(found[0]) if found else 0


def _path(dataset: str, name: str) -> str:
    return f"{quote_identifier(dataset)}.{quote_identifier(name)}"


@functools.lru_cache(maxsize=256)
def _duckdb_name(bigquery_path: str) -> str:
    return sqlglot.exp.to_table(bigquery_path, dialect="bigquery").sql("duckdb")


@functools.lru_cache(maxsize=1024)
def _duckdb_column(bigquery_identifier: str) -> str:
    return sqlglot.parse_one(bigquery_identifier, read="bigquery").sql("duckdb")
