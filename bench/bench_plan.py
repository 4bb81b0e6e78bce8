"""Benchmark: `plan` on synthetic families of N versions x 300 columns.

In process, families with 20% of their columns changing type: the generator's plan time (median of 3)
against the time sqlglot takes to parse the same SQL, which is what every plan paid before expression
shapes were checked once.  From the shell, two families of 900 versions in a DuckDB file: the one whose
every column changes type (every version casts each of its 300 columns), and a mixed one (BIGINT, VARCHAR,
DOUBLE, TIMESTAMP, DATE and BOOLEAN columns; in about 20% of the versions one column has another type, BIGINT
<-> VARCHAR, DOUBLE -> DECIMAL(38,9), TIMESTAMP -> TIMESTAMPTZ, DATE -> TIMESTAMP, BOOLEAN -> VARCHAR; about 3%
of the columns missing from each version after the first).  `uniview plan --json` as a whole process against
the plainest read of the same metadata: a process that opens the file and reads `information_schema.columns`
of the dataset, in alternating pairs in the same run; the figure is the median of the pairs' ratios (goal
<= 1.5).  uniview's modules are compiled to bytecode first, as an installed package's are.
Usage: python -m bench.bench_plan [--versions 250 500 900] [--columns 300] [--shell-versions 900] [--pairs 7]
"""

from __future__ import annotations

import argparse
import compileall
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
from uniview.warehouse.duckdb_types import duckdb_type

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from families import all_conflicting_family, mixed_duckdb_tables, synthetic_family

#: The baseline: open the file and read the dataset's column metadata, the plainest way, nothing else.
_READ_METADATA = (
    "import duckdb, sys; c = duckdb.connect(sys.argv[1], read_only=True); rows = c.execute("
    "'SELECT table_name, column_name, data_type FROM information_schema.columns WHERE table_schema = ?', "
    "[sys.argv[2]]).fetchall(); assert rows"
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


def all_conflicting_tables(versions: int, columns: int) -> list[tuple[str, list[tuple[str, str]]]]:
    """The all-conflicting family as (version table, [(column, DuckDB type)])."""
    return [
        (version.table_name, [(c.name, duckdb_type(c.type)) for c in version.columns])
        for version in all_conflicting_family(versions, columns)
    ]


FAMILIES = {"every column changes type": all_conflicting_tables, "mixed": mixed_duckdb_tables}


def duckdb_family(path: Path, tables: list[tuple[str, list[tuple[str, str]]]]) -> None:
    """The version tables in a DuckDB file (schema `cdc`)."""
    with duckdb.connect(str(path)) as connection:
        connection.execute("CREATE SCHEMA cdc")
        connection.execute("BEGIN")
        for table, columns in tables:
            connection.execute(f"CREATE TABLE cdc.{table} ({', '.join(f'{name} {kind}' for name, kind in columns)})")
        connection.execute("COMMIT")


def timed_process(command: list[str]) -> tuple[float, bytes]:
    """Wall seconds of one whole process, and what it printed."""
    started = time.perf_counter()
    done = subprocess.run(command, check=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started, done.stdout


def measure_shell(family: str, versions: int, columns: int, pairs: int) -> dict:
    """`uniview plan --json` from the shell against a process that only reads the same metadata, in pairs
    whose order alternates, so both see the same machine; each is run once first to warm the file cache
    (and let the first plan record the tables' creation order, a write later plans do not repeat)."""
    uniview = str(Path(sys.executable).with_name("uniview"))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "family.duckdb"
        duckdb_family(path, FAMILIES[family](versions, columns))
        plan = [uniview, "plan", "--warehouse", f"duckdb:///{path}", "--dataset", "cdc", "--table", "events", "--json"]
        read = [sys.executable, "-c", _READ_METADATA, str(path), "cdc"]
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
        "family": family,
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
    compileall.compile_dir(Path(__file__).resolve().parents[1] / "uniview", quiet=1)
    shell = [measure_shell(family, args.shell_versions, args.columns, args.pairs) for family in FAMILIES]
    for r in shell:
        print(
            f"from the shell, {r['versions']} x {r['columns']}, {r['family']}: uniview plan --json "
            f"{r['shell_plan_seconds']} s (median of {r['pairs']}); opening the DuckDB file and reading its "
            f"metadata alone {r['shell_metadata_read_seconds']} s; median ratio "
            f"{r['shell_plan_to_metadata_read_ratio']}x (goal <= {SHELL_GOAL}x)"
        )
    write_results("plan", {"families": results, "all_conflicting": conflicting, "shell": shell})
    return [*results, conflicting, *shell]


if __name__ == "__main__":
    main()
