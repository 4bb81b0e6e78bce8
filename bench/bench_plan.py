"""Benchmark: `plan` on synthetic families of N versions x 300 columns with 20% conflicting types.

In process: the generator's plan time (median of 3) against the time sqlglot takes to parse the same
SQL, which is what every plan paid before expression shapes were checked once.  From the shell, for
the 900-version family in a DuckDB file: `uniview plan --json` as a whole process (median of 3), next
to a process that only opens the same file and reads its column metadata, measured in the same run.
Usage: python -m bench.bench_plan [--versions 250 500 900] [--columns 300] [--shell-versions 900]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb
import sqlglot

from bench.results_file import write_results
from uniview.plan import GeneratorOptions, plan_family

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from families import synthetic_family

_DUCKDB_TYPES = {
    "INT64": "BIGINT",
    "STRING": "VARCHAR",
    "FLOAT64": "DOUBLE",
    "DATE": "DATE",
    "TIMESTAMP": "TIMESTAMPTZ",
    "NUMERIC": "DECIMAL(38,9)",
    "BOOL": "BOOLEAN",
    "DATETIME": "TIMESTAMP",
}
_READ_METADATA = (
    "import duckdb, sys; c = duckdb.connect(sys.argv[1], read_only=True); "
    'c.execute("SELECT table_name, column_name, column_index, data_type FROM duckdb_columns() '
    "WHERE schema_name = 'cdc'\").fetchall()"
)


def median_seconds(run, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def measure(versions: int, columns: int) -> dict:
    family = synthetic_family(versions, columns)
    # BigQuery's query-time limits are not the generator's work: lift them to time families beyond them.
    options = GeneratorOptions(enforce_query_limits=False)
    plan = plan_family("cdc", "cdc_unified", family, options)
    plan_seconds = median_seconds(lambda: plan_family("cdc", "cdc_unified", family, options))
    parse_seconds = median_seconds(lambda: [sqlglot.parse(view.statement, read="bigquery") for view in plan.views], 1)
    return {
        "versions": versions,
        "columns": columns,
        "views": len(plan.views),
        "sql_chars": sum(len(view.body) for view in plan.views),
        "resolved_bytes": plan.footprint.resolved_bytes,
        "query_resources": plan.footprint.resources,
        "plan_seconds": round(plan_seconds, 3),
        "full_parse_seconds": round(parse_seconds, 3),
        "plan_to_full_parse_ratio": round(plan_seconds / parse_seconds, 3),
    }


def duckdb_family(path: Path, versions: int, columns: int) -> None:
    with duckdb.connect(str(path)) as connection:
        connection.execute("CREATE SCHEMA cdc")
        connection.execute("BEGIN")
        for version in synthetic_family(versions, columns):
            typed = ", ".join(f"{c.name} {_DUCKDB_TYPES[str(c.type)]}" for c in version.columns)
            connection.execute(f"CREATE TABLE cdc.{version.table_name} ({typed})")
        connection.execute("COMMIT")


def measure_shell(versions: int, columns: int) -> dict:
    """`uniview plan --json` from the shell against a process that only reads the same metadata."""
    uniview = str(Path(sys.executable).with_name("uniview"))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "family.duckdb"
        duckdb_family(path, versions, columns)
        plan = [uniview, "plan", "--warehouse", f"duckdb:///{path}", "--dataset", "cdc", "--table", "events", "--json"]
        read = [sys.executable, "-c", _READ_METADATA, str(path)]
        run = lambda command: subprocess.run(command, check=True, stdout=subprocess.DEVNULL)  # noqa: E731
        plan_seconds = median_seconds(lambda: run(plan))
        read_seconds = median_seconds(lambda: run(read))
    return {
        "versions": versions,
        "columns": columns,
        "shell_plan_seconds": round(plan_seconds, 2),
        "shell_metadata_read_seconds": round(read_seconds, 2),
        "shell_plan_to_metadata_read_ratio": round(plan_seconds / read_seconds, 2),
    }


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--versions", type=int, nargs="+", default=[250, 500, 900])
    parser.add_argument("--columns", type=int, default=300)
    parser.add_argument("--shell-versions", type=int, default=900)
    args = parser.parse_args(argv)
    results = [measure(count, args.columns) for count in args.versions]
    print(f"{'versions':>8} {'views':>5} {'SQL chars':>11} {'plan s':>7} {'full parse s':>12} {'ratio':>6}")
    for r in results:
        print(
            f"{r['versions']:>8} {r['views']:>5} {r['sql_chars']:>11,} {r['plan_seconds']:>7} "
            f"{r['full_parse_seconds']:>12} {r['plan_to_full_parse_ratio']:>6}"
        )
    shell = measure_shell(args.shell_versions, args.columns)
    print(
        f"from the shell, {shell['versions']} x {shell['columns']}: uniview plan --json {shell['shell_plan_seconds']} s; "
        f"opening the DuckDB file and reading its metadata alone {shell['shell_metadata_read_seconds']} s"
    )
    write_results("plan", {"families": results, "shell": shell})
    return [*results, shell]


if __name__ == "__main__":
    main()
