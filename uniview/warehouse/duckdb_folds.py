"""The consolidation registry and its statements in a DuckDB file (docs/consolidation.md).

`main._uniview_folds` holds one row per folded version.  The warehouse's discovery leaves out
versions that are `moved` or `dropped`; the sink lands a retired version's rows under its
successor.  Every function takes an open connection; the caller owns transactions.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime

import duckdb

from uniview.planning.consolidation import PLANNED, REDIRECTED_STATES, FoldRecord
from uniview.warehouse.duckdb_connection import qualified, scalar, string_literal

FOLDS_TABLE = "_uniview_folds"
#: The sink's batch ledger (uniview.sink.landing.LEDGER_TABLE), read for each table's last write.
BATCH_LEDGER = "_uniview_batches"

_FOLDS_DDL = """CREATE TABLE IF NOT EXISTS {table} (
  dataset VARCHAR, family VARCHAR, version_table VARCHAR, consolidated_table VARCHAR, successor_table VARCHAR,
  state VARCHAR, rows_moved BIGINT, recorded_at TIMESTAMP WITH TIME ZONE, PRIMARY KEY (dataset, version_table))"""


def _table(connection: duckdb.DuckDBPyConnection, name: str) -> str:
    return qualified(scalar(connection, "SELECT current_database()"), "main", name)


def _exists(connection: duckdb.DuckDBPyConnection, name: str) -> bool:
    return (
        scalar(
            connection,
            "SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database() "
            "AND schema_name = 'main' AND table_name = ?",
            [name],
        )
        > 0
    )


def ensure_registry(connection: duckdb.DuckDBPyConnection) -> None:
    connection.execute(_FOLDS_DDL.format(table=_table(connection, FOLDS_TABLE)))


def read_folds(connection: duckdb.DuckDBPyConnection, dataset: str, family: str | None = None) -> list[FoldRecord]:
    """The registry rows of `dataset` (of `family` only, when given)."""
    if not _exists(connection, FOLDS_TABLE):
        return []
    rows = connection.execute(
        f"SELECT dataset, family, version_table, consolidated_table, successor_table, state, rows_moved, recorded_at "
        f"FROM {_table(connection, FOLDS_TABLE)} WHERE dataset = ? AND (? IS NULL OR family = ?) "
        "ORDER BY recorded_at, version_table",
        [dataset, family, family],
    ).fetchall()
    return [FoldRecord(*row) for row in rows]


def retired_tables(connection: duckdb.DuckDBPyConnection, datasets: Iterable[str]) -> dict[tuple[str, str], str]:
    """{(dataset, retired version table): its successor table} for `datasets`."""
    wanted = sorted(set(datasets))
    if not wanted or not _exists(connection, FOLDS_TABLE):
        return {}
    rows = connection.execute(
        f"SELECT dataset, version_table, successor_table FROM {_table(connection, FOLDS_TABLE)} "
        f"WHERE dataset IN (SELECT unnest(?)) AND state IN ({', '.join(map(string_literal, REDIRECTED_STATES))})",
        [wanted],
    ).fetchall()
    return {(dataset, table): successor for dataset, table, successor in rows}


def row_counts(connection: duckdb.DuckDBPyConnection, dataset: str, tables: Iterable[str]) -> dict[str, int]:
    """{table: rows} for the `tables` of `dataset`, in one query."""
    counts = " UNION ALL ".join(
        f"SELECT {string_literal(table)}, count(*) FROM {qualified(dataset, table)}" for table in tables
    )
    return dict(connection.execute(counts).fetchall()) if counts else {}


def empty_retired_tables(connection: duckdb.DuckDBPyConnection, dataset: str) -> set[str]:
    """The retired version tables of `dataset` that hold no row: the ones discovery leaves out.  A
    retired table that holds rows again (written by something other than uniview's sink) stays in
    the view until consolidation folds it again."""
    retired = sorted(table for (_, table) in retired_tables(connection, [dataset]))
    if not retired:
        return set()
    present = {
        row[0]
        for row in connection.execute(
            "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() AND schema_name = ?",
            [dataset],
        ).fetchall()
    }
    rows = row_counts(connection, dataset, [table for table in retired if table in present])
    return {table for table in retired if not rows.get(table)}


def last_written(connection: duckdb.DuckDBPyConnection, dataset: str) -> dict[str, datetime]:
    """{version table: when the sink's ledger last wrote to it} for tables of `dataset`."""
    if not _exists(connection, BATCH_LEDGER):
        return {}
    rows = connection.execute(
        f"SELECT key, max(landed_at) FROM (SELECT unnest(json_keys(counts, '$.written')) AS key, landed_at "
        f"FROM {_table(connection, BATCH_LEDGER)}) WHERE starts_with(key, ?) GROUP BY key",
        [dataset + "."],
    ).fetchall()
    return {key[len(dataset) + 1 :]: landed for key, landed in rows}


def record_planned(
    connection: duckdb.DuckDBPyConnection,
    dataset: str,
    family: str,
    consolidated_table: str,
    successors: dict[str, str],
) -> None:
    """A `planned` row per version table to fold (`successors`: version table -> successor table), in one
    statement: the tables and their successors go as two lists, unnested side by side."""
    ensure_registry(connection)
    connection.execute(  # a folded table that held rows again is planned again
        f"INSERT OR REPLACE INTO {_table(connection, FOLDS_TABLE)} "
        "SELECT ?, ?, unnest(CAST(? AS VARCHAR[])), ?, unnest(CAST(? AS VARCHAR[])), ?, NULL, ?",
        [dataset, family, list(successors), consolidated_table, list(successors.values()), PLANNED, datetime.now(UTC)],
    )


def mark_many(
    connection: duckdb.DuckDBPyConnection, dataset: str, rows_moved: Mapping[str, int | None], state: str
) -> None:
    """Set `state` on each version table of `rows_moved` (and its rows moved, where not None), in one statement."""
    connection.execute(
        f"UPDATE {_table(connection, FOLDS_TABLE)} AS folds SET state = ?, "
        "rows_moved = coalesce(marked.moved, folds.rows_moved), recorded_at = ? "
        "FROM (SELECT unnest(CAST(? AS VARCHAR[])) AS version_table, unnest(CAST(? AS BIGINT[])) AS moved) AS marked "
        "WHERE folds.dataset = ? AND folds.version_table = marked.version_table",
        [state, datetime.now(UTC), list(rows_moved), list(rows_moved.values()), dataset],
    )
