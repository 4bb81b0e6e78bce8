"""A real DuckDB connection that counts the statements run through it: how a test holds a per-batch cost to a
number of statements that does not grow with the tables a batch touches."""

from __future__ import annotations

from typing import Any

import duckdb


class CountingConnection:
    """Delegates everything to `connection`; `statements` counts execute() and executemany() calls."""

    def __init__(self, connection: duckdb.DuckDBPyConnection) -> None:
        self.connection = connection
        self.statements = 0

    def execute(self, *args: Any, **kwargs: Any) -> duckdb.DuckDBPyConnection:
        self.statements += 1
        return self.connection.execute(*args, **kwargs)

    def executemany(self, *args: Any, **kwargs: Any) -> duckdb.DuckDBPyConnection:
        self.statements += 1
        return self.connection.executemany(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.connection, name)
