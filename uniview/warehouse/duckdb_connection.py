"""DuckDB access in one place, for the warehouse and the sink's landing: quoting, literals, and opening
a file with a UTC session, retried while another process holds the file's lock.

DuckDB allows one writing process per file, so a refresher and a sink take turns: `open_connection`
waits with exponential backoff (50 ms doubling to 1 s) for at least `lock_timeout` seconds, then
raises TransientWarehouseError naming the process that holds the lock.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import duckdb

from uniview.core.errors import TransientWarehouseError, WarehouseError

#: How long the sink's landing waits for a file's lock (a refresh waits
#: uniview.warehouse.duckdb.DEFAULT_LOCK_TIMEOUT_SECONDS).
LANDING_LOCK_TIMEOUT_SECONDS = 120.0
_LOCK_HOLDER = re.compile(r"PID (\d+)")


def quote_identifier(name: str) -> str:
    """A DuckDB double-quoted identifier."""
    return '"' + name.replace('"', '""') + '"'


def qualified(*parts: str | None) -> str:
    """catalog.schema.table, each part quoted (a schema named like the file's catalog needs the catalog)."""
    return ".".join(quote_identifier(part) for part in parts if part is not None)


def string_literal(value: str) -> str:
    """A DuckDB string literal (a backslash is an ordinary character in DuckDB strings)."""
    return "'" + value.replace("'", "''") + "'"


def scalar(connection: duckdb.DuckDBPyConnection, sql: str, parameters: object = None) -> Any:
    """The first value of the one row `sql` answers: an aggregate, or the count a DML statement reports."""
    row = connection.execute(sql, parameters).fetchone()
    if row is None:
        raise WarehouseError(f"DuckDB answered no row to: {sql[:200]}")
    return row[0]


def is_lock_error(error: BaseException) -> bool:
    text = str(error)
    return "Could not set lock" in text or "Conflicting lock" in text


def open_connection(
    path: str | Path, *, read_only: bool = False, lock_timeout: float = LANDING_LOCK_TIMEOUT_SECONDS
) -> duckdb.DuckDBPyConnection:
    """A connection to the DuckDB file at `path` with TimeZone UTC; waits while another process writes."""
    url = f"duckdb:///{path}"
    connection = _connect_waiting(str(path), read_only, lock_timeout, url)
    try:
        connection.execute("SET TimeZone = 'UTC'")
    except duckdb.Error as error:
        connection.close()
        raise WarehouseError(f"cannot use {url}: {first_line(error)}") from None
    return connection


def _connect_waiting(path: str, read_only: bool, lock_timeout: float, url: str) -> duckdb.DuckDBPyConnection:
    deadline = time.monotonic() + lock_timeout
    delay = 0.05
    while True:
        try:
            return duckdb.connect(path, read_only=read_only)
        except duckdb.Error as error:
            if not is_lock_error(error):
                raise WarehouseError(f"cannot open {url}: {first_line(error)}") from None
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                holder = _LOCK_HOLDER.search(str(error))
                who = f"process {holder.group(1)}" if holder else "another process"
                raise TransientWarehouseError(
                    f"{url} is locked by {who}; gave up after waiting {lock_timeout:g} s "
                    "(DuckDB allows one writer process per file)"
                ) from None
            time.sleep(min(delay, remaining))
            delay = min(delay * 2, 1.0)


def first_line(error: BaseException) -> str:
    """The first line of an error (DuckDB appends the statement text on later lines)."""
    lines = str(error).strip().splitlines()
    return lines[0].strip() if lines else type(error).__name__
