"""Benchmark: scanning a unified view in DuckDB, as a ratio to the same rows in one consolidated table.

Builds V versions of R rows each (a type change every other version, a column added per
version), refreshes the unified view, copies the view's rows into one table, then times the
same aggregate over both, alternating, and reports the median ratio view / table.
Usage: python -m bench.bench_scan [--versions 8] [--rows 250000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import duckdb

from bench.results_file import write_results
from uniview.ops.refresh import RefreshRequest, refresh
from uniview.warehouse import open_warehouse
from uniview.warehouse.url import duckdb_url

AGGREGATE = "SELECT count(*), count(DISTINCT id), max(amount), max(created_at), max(length(note)) FROM {source}"


def build(path: Path, versions: int, rows: int) -> None:
    with duckdb.connect(str(path)) as connection:
        connection.execute("CREATE SCHEMA bench")
        for index in range(versions):
            amount = "VARCHAR" if index % 2 else "BIGINT"
            created = "TIMESTAMPTZ" if index % 2 else "TIMESTAMP"
            extra = ", ".join(f"extra_{e} INTEGER" for e in range(index))
            connection.execute(
                f"CREATE TABLE bench.events_v_{index:03d} (id BIGINT, amount {amount}, created_at {created}, note VARCHAR"
                f"{', ' + extra if extra else ''})"
            )
            connection.execute(
                f"INSERT INTO bench.events_v_{index:03d} (id, amount, created_at, note) SELECT i, "
                f"CAST(i * 7 AS {amount}), TIMESTAMP '2024-01-01' + INTERVAL (i) SECOND, 'note ' || i "
                f"FROM range({index * rows}, {(index + 1) * rows}) t(i)"
            )
    with open_warehouse(duckdb_url(path)) as warehouse:
        refresh(warehouse, RefreshRequest("bench", ("events",)))
    with duckdb.connect(str(path)) as connection:
        connection.execute("SET TimeZone='UTC'")
        connection.execute("CREATE TABLE bench.consolidated AS SELECT * FROM bench_unified.events_unified")


def timed(connection: duckdb.DuckDBPyConnection, source: str) -> tuple[float, tuple]:
    started = time.perf_counter()
    result = connection.execute(AGGREGATE.format(source=source)).fetchone()
    return time.perf_counter() - started, result


def measure(versions: int, rows: int, repeats: int) -> dict:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "scan.duckdb"
        build(path, versions, rows)
        with duckdb.connect(str(path), read_only=True) as connection:
            connection.execute("SET TimeZone='UTC'")
            view_times, table_times = [], []
            for _ in range(repeats):
                view_seconds, view_result = timed(connection, "bench_unified.events_unified")
                table_seconds, table_result = timed(connection, "bench.consolidated")
                assert view_result == table_result, (view_result, table_result)
                view_times.append(view_seconds)
                table_times.append(table_seconds)
    view, table = statistics.median(view_times), statistics.median(table_times)
    return {
        "versions": versions,
        "rows": versions * rows,
        "view_seconds": round(view, 4),
        "table_seconds": round(table, 4),
        "view_to_table_ratio": round(view / table, 2),
    }


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--versions", type=int, default=8)
    parser.add_argument("--rows", type=int, default=250_000, help="rows per version")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    result = measure(args.versions, args.rows, args.repeats)
    print(
        f"unified view over {result['versions']} versions, {result['rows']:,} rows: view {result['view_seconds']}s, "
        f"consolidated table {result['table_seconds']}s, ratio {result['view_to_table_ratio']}"
    )
    write_results("scan", result)
    return result


if __name__ == "__main__":
    main()
