"""Shared code of the consolidation tests: families of many versions in a DuckDB file, and the
content of a family read through its view or straight from its tables, in one snapshot."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import duckdb

from uniview.warehouse.url import duckdb_url

DATASET = "cdc"
VIEWS = "cdc_unified"


def version_columns(index: int) -> list[tuple[str, str]]:
    """Version `index`'s columns: `amount` changes type (INT64 / STRING, unified to STRING), and a
    column that only some versions have."""
    columns = [("id", "BIGINT"), ("name", "VARCHAR"), ("amount", "INTEGER" if index % 2 else "VARCHAR")]
    if index % 3 == 0:
        columns.append((f"extra_{index % 5}", "DOUBLE"))
    return columns


def build_family(path: Path, versions: int, rows: int = 3, family: str = "customer") -> None:
    """`versions` version tables of `family`, `rows` rows each, ids unique across the family."""
    with duckdb.connect(str(path)) as connection:
        connection.execute(f"CREATE SCHEMA IF NOT EXISTS {DATASET}")
        connection.execute("BEGIN")
        for index in range(versions):
            table = f"{DATASET}.{family}_v_{index:09x}"
            columns = version_columns(index)
            connection.execute(f"CREATE TABLE {table} ({', '.join(f'{n} {t}' for n, t in columns)})")
            values = []
            for row in range(rows):
                row_id = index * rows + row
                extra = ", 0.5" if len(columns) == 4 else ""
                values.append(f"({row_id}, 'n{row_id}', {row_id * 7 if index % 2 else repr(str(row_id * 7))}{extra})")
            connection.execute(f"INSERT INTO {table} VALUES {', '.join(values)}")
        connection.execute("COMMIT")


def family_tables(connection: duckdb.DuckDBPyConnection, family: str = "customer") -> list[str]:
    return [
        row[0]
        for row in connection.execute(
            "SELECT table_name FROM duckdb_tables() WHERE schema_name = ? AND starts_with(table_name, ?) "
            "ORDER BY table_name",
            [DATASET, family + "_v_"],
        ).fetchall()
    ]


def table_rows(connection: duckdb.DuckDBPyConnection, table: str) -> list[tuple]:
    """(id, name, amount as text) of every row of one version or consolidated table."""
    return connection.execute(f'SELECT id, name, CAST(amount AS VARCHAR) FROM {DATASET}."{table}"').fetchall()


def landed_content(path: Path, family: str = "customer") -> Counter:
    """Every row in every table of the family, as a multiset."""
    with duckdb.connect(str(path), read_only=True) as connection:
        return Counter(row for table in family_tables(connection, family) for row in table_rows(connection, table))


def view_content(path: Path, family: str = "customer") -> Counter:
    with duckdb.connect(str(path), read_only=True) as connection:
        return Counter(
            connection.execute(f"SELECT id, name, CAST(amount AS VARCHAR) FROM {VIEWS}.{family}_unified").fetchall()
        )


def checksum(content: Counter) -> tuple[int, int]:
    """(rows, an order-independent hash of their content)."""
    return sum(content.values()), hash(frozenset(content.items()))


def uniview(*args: str, env: dict | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    """The `uniview` command in its own process (so it can be killed like a real one)."""
    return subprocess.run(
        [sys.executable, "-m", "uniview.cli.main", *args], capture_output=True, text=True, env=env, timeout=timeout
    )


def consolidate_args(path: Path, *extra: str, table: str = "customer") -> list[str]:
    return ["consolidate", "--warehouse", duckdb_url(path), "--dataset", DATASET, "--table", table, *extra]


def consolidate_json(path: Path, *extra: str, env: dict | None = None) -> dict:
    """The one family's report of `uniview consolidate --json`."""
    completed = uniview(*consolidate_args(path, "--json", *extra), env=env)
    assert completed.returncode == 0, completed.stderr
    (report,) = json.loads(completed.stdout)["families"]
    return report


def refresh_args(path: Path, table: str = "customer") -> list[str]:
    return ["refresh", "--warehouse", duckdb_url(path), "--dataset", DATASET, "--table", table]
