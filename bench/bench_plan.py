"""Benchmark: `plan` on synthetic families of N versions x 300 columns.

In process, families with 20% of their columns changing type: the generator's plan time (median of 3)
against the time sqlglot takes to parse the same SQL, which is what every plan paid before expression
shapes were checked once.  From the shell, the 900-version family whose every column changes type
(every version casts each of its 300 columns), in a DuckDB file: `uniview plan --json` as a whole
process against a process that only opens the same file and runs the same column-metadata query uniview
runs, in alternating pairs in the same run; the figure is the median of the pairs' ratios (goal <= 1.5).
Usage: python -m bench.bench_plan [--versions 250 500 900] [--columns 300] [--shell-versions 900] [--pairs 7]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb
import sqlglot

from bench.results_file import write_results
from uniview.planning.plan import GeneratorOptions, plan_family
from uniview.warehouse.duckdb import _COLUMNS_SQL
from uniview.warehouse.duckdb_types import duckdb_type

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from families import all_conflicting_family, synthetic_family

#: The baseline: open the file and read its column metadata with uniview's own query, nothing else.
_READ_METADATA = (
    "import duckdb, sys; c = duckdb.connect(sys.argv[1], read_only=True); "
    "rows = c.execute(sys.argv[2], [sys.argv[3]]).fetchall(); assert rows"
)
SHELL_GOAL = 1.5


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


def measure_all_conflicting(versions: int, columns: int) -> dict:
    """The family whose every column changes type, planned in process with every limit enforced."""
    family = all_conflicting_family(versions, columns)
    plan = plan_family("cdc", "cdc_unified", family, GeneratorOptions())
    plan_seconds = median_seconds(lambda: plan_family("cdc", "cdc_unified", family, GeneratorOptions()))
    return {
        "versions": versions,
        "columns": columns,
        "views": len(plan.views),
        "widest_view_chars": max(plan.footprint.view_chars),
        "resolved_bytes": plan.footprint.resolved_bytes,
        "query_resources": plan.footprint.resources,
        "plan_seconds": round(plan_seconds, 3),
    }


def duckdb_family(path: Path, versions: int, columns: int) -> None:
    """The all-conflicting family as version tables of a DuckDB file (schema `cdc`)."""
    with duckdb.connect(str(path)) as connection:
        connection.execute("CREATE SCHEMA cdc")
        connection.execute("BEGIN")
        for version in all_conflicting_family(versions, columns):
            typed = ", ".join(f"{c.name} {duckdb_type(c.type)}" for c in version.columns)
            connection.execute(f"CREATE TABLE cdc.{version.table_name} ({typed})")
        connection.execute("COMMIT")


def timed_process(command: list[str]) -> tuple[float, bytes]:
    """Wall seconds of one whole process, and what it printed."""
    started = time.perf_counter()
    done = subprocess.run(command, check=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started, done.stdout


def measure_shell(versions: int, columns: int, pairs: int) -> dict:
    """`uniview plan --json` from the shell against a process that only reads the same metadata, in pairs
    whose order alternates, so both see the same machine; each is run once first to warm the file cache
    (and let the first plan record the tables' creation order, a write later plans do not repeat)."""
    uniview = str(Path(sys.executable).with_name("uniview"))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "family.duckdb"
        duckdb_family(path, versions, columns)
        plan = [uniview, "plan", "--warehouse", f"duckdb:///{path}", "--dataset", "cdc", "--table", "events", "--json"]
        read = [sys.executable, "-c", _READ_METADATA, str(path), _COLUMNS_SQL, "cdc"]
        _, output = timed_process(plan)
        views = json.loads(output)["views"]
        assert views, "uniview plan --json planned no view"
        timed_process(read)
        plan_times, read_times = [], []
        for pair in range(pairs):
            order = (plan, read) if pair % 2 else (read, plan)
            times = {tuple(command): timed_process(command)[0] for command in order}
            plan_times.append(times[tuple(plan)])
            read_times.append(times[tuple(read)])
    ratios = [p / r for p, r in zip(plan_times, read_times, strict=True)]
    return {
        "family": "every column changes type",
        "versions": versions,
        "columns": columns,
        "views": len(views),
        "pairs": pairs,
        "shell_plan_times": [round(t, 2) for t in plan_times],
        "shell_metadata_read_times": [round(t, 2) for t in read_times],
        "shell_plan_seconds": round(statistics.median(plan_times), 2),
        "shell_metadata_read_seconds": round(statistics.median(read_times), 2),
        "shell_plan_to_metadata_read_ratio": round(statistics.median(ratios), 2),
        "goal": SHELL_GOAL,
    }


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--versions", type=int, nargs="+", default=[250, 500, 900])
    parser.add_argument("--columns", type=int, default=300)
    parser.add_argument("--shell-versions", type=int, default=900)
    parser.add_argument("--pairs", type=int, default=7)
    args = parser.parse_args(argv)
    results = [measure(count, args.columns) for count in args.versions]
    print(f"{'versions':>8} {'views':>5} {'SQL chars':>11} {'plan s':>7} {'full parse s':>12} {'ratio':>6}")
    for r in results:
        print(
            f"{r['versions']:>8} {r['views']:>5} {r['sql_chars']:>11,} {r['plan_seconds']:>7} "
            f"{r['full_parse_seconds']:>12} {r['plan_to_full_parse_ratio']:>6}"
        )
    conflicting = measure_all_conflicting(args.shell_versions, args.columns)
    print(
        f"every column changing type, {conflicting['versions']} x {conflicting['columns']}: "
        f"{conflicting['resolved_bytes']:,} bytes resolved in {conflicting['views']} views "
        f"(widest {conflicting['widest_view_chars']:,} chars), {conflicting['query_resources']} tables and views "
        f"per query, planned in {conflicting['plan_seconds']} s"
    )
    shell = measure_shell(args.shell_versions, args.columns, args.pairs)
    print(
        f"from the shell, {shell['versions']} x {shell['columns']}, every column changing type: uniview plan --json "
        f"{shell['shell_plan_seconds']} s (median of {shell['pairs']}); opening the DuckDB file and reading its "
        f"metadata alone {shell['shell_metadata_read_seconds']} s; median ratio "
        f"{shell['shell_plan_to_metadata_read_ratio']}x (goal <= {SHELL_GOAL}x)"
    )
    write_results("plan", {"families": results, "all_conflicting": conflicting, "shell": shell})
    return [*results, conflicting, shell]


if __name__ == "__main__":
    main()
