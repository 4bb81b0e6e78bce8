"""Shared code of the sink tests: binlog records, NDJSON files, DuckDB reads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable

import duckdb


def record(table: str, data: dict | None, schema: list[tuple[str, str]] | None = None, *, database: str = "shop",
           version: str | None = None, **metadata: object) -> dict:
    """One binlog record as a reader emits it."""
    meta: dict = {"ingestion_method": "BINLOG", "database_name": database, "table_name": table, **metadata}
    if schema is not None:
        meta["schema"] = [{"name": name, "type": declared} for name, declared in schema]
    if version is not None:
        meta["table_version"] = version
    return {"data": data, "metadata": meta}


def write_ndjson(path: Path, lines: Iterable[dict | str]) -> Path:
    """Write records (dicts) and raw lines (strings) as one NDJSON file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "\n".join(line if isinstance(line, str) else json.dumps(line, ensure_ascii=False) for line in lines)
    path.write_text(text + "\n", encoding="utf-8")
    return path


def query(path: Path, sql: str, parameters: list | None = None) -> list[tuple]:
    with duckdb.connect(str(path), read_only=True) as connection:
        connection.execute("SET TimeZone='UTC'")
        return connection.execute(sql, parameters or []).fetchall()


def columns_of(path: Path, dataset: str, table: str) -> list[tuple[str, str]]:
    return [tuple(row) for row in query(
        path, "SELECT column_name, data_type FROM duckdb_columns() WHERE schema_name = ? AND table_name = ? "
        "ORDER BY column_index", [dataset, table])]


def tables_of(path: Path, dataset: str) -> list[str]:
    return [row[0] for row in query(
        path, "SELECT table_name FROM duckdb_tables() WHERE schema_name = ? ORDER BY table_name", [dataset])]
