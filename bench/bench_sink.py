"""Sink throughput as a ratio to a hand-written Spark job that parses the same input, in the same run.

    .venv/bin/python bench/bench_sink.py                          # 400,000 and 1,000,000 records, 3 pairs each
    .venv/bin/python bench/bench_sink.py --records 400000 --pairs 5
    .venv/bin/python bench/bench_sink.py --records 400000 --tables 20 --versions-per-table 10   # 200 versions
    .venv/bin/python bench/bench_sink.py --records 4000000 --pairs 1                           # scale

Input: CDC records in uniview's envelope over 4 tables x 5 schema versions of 12-22 columns, each
record declaring its schema and version, one malformed line per 20,000.  Whole processes are timed,
each starting its own local[2] SparkSession, in pairs whose order alternates (baseline, sink, sink, baseline, ...):
  baseline: bench/sink_baseline_job.py - fixed envelope schema (data as MAP<STRING,STRING>), one
            parse, Parquet partitioned by table and version
  sink:     uniview sink --input ... --warehouse duckdb:///... --dataset shop --notify none
The figure is the median of the pairs' ratios baseline / sink (each pair sees the same machine): 1.0 means as
fast as the hand-written job.
A plain text copy (read.text -> write.parquet, parses nothing) is timed once as context.  Each run's
peak memory is that of its whole process tree (the Python driver and Spark's local JVM, which holds the
executors), the largest over the pairs.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.results_file import write_results  # noqa: E402

TYPES = [
    "int(11)",
    "bigint(20)",
    "varchar(255)",
    "decimal(12,2)",
    "datetime",
    "timestamp",
    "tinyint(1)",
    "double",
    "json",
    "date",
]
TABLES = ("customer", "orders", "events", "shipments")
VERSIONS_PER_TABLE = 5
MIB = 1024 * 1024
DEFAULT_RECORDS = [400_000, 1_000_000]


def schemas(
    tables: int = len(TABLES), versions: int = VERSIONS_PER_TABLE
) -> list[tuple[str, str, list[tuple[str, str]]]]:
    """(table, version, columns): `tables` x `versions` (default 4 x 5), 12-22 columns each, types rotating."""
    names = TABLES[:tables] + tuple(f"table{n:02d}" for n in range(len(TABLES), tables))
    found = []
    for t, table in enumerate(names):
        for v in range(versions):
            width = 12 + (t * versions + v) % 11
            columns = [("id", "bigint(20)")] + [(f"c{i}", TYPES[(i + v) % len(TYPES)]) for i in range(1, width)]
            found.append((table, f"v{v + 1}", columns))
    return found


def value(declared: str, n: int) -> object:
    return {
        "int(11)": n % 100_000,
        "bigint(20)": n,
        "varchar(255)": f"text-{n % 997}",
        "decimal(12,2)": f"{n % 9999}.25",
        "datetime": f"2024-05-{1 + n % 28:02d} {n % 24:02d}:{n % 60:02d}:00",
        "date": f"2024-05-{1 + n % 28:02d}",
        "timestamp": f"2024-05-{1 + n % 28:02d}T{n % 24:02d}:00:00Z",
        "tinyint(1)": n % 2,
        "double": n / 7,
        "json": {"n": n % 10, "tags": ["x"]},
    }[declared]


def generate(
    directory: Path,
    records: int,
    files: int = 8,
    tables: int = len(TABLES),
    versions_per_table: int = VERSIONS_PER_TABLE,
) -> int:
    """Write `records` records round-robin over the versions into `files` NDJSON files; returns lines."""
    versions = schemas(tables, versions_per_table)
    declared = [json.dumps([{"name": n, "type": t} for n, t in columns]) for _, _, columns in versions]
    directory.mkdir(parents=True, exist_ok=True)
    lines = 0
    with ExitStack() as stack:
        handles = [
            stack.enter_context(open(directory / f"part-{i:03d}.json", "w", encoding="utf-8")) for i in range(files)
        ]
        for n in range(records):
            index = n % len(versions)
            table, version, columns = versions[index]
            data = json.dumps({name: value(kind, n) for name, kind in columns})
            handles[n % files].write(
                f'{{"data": {data}, "metadata": {{"ingestion_method": "BINLOG", "database_name": "shop", '
                f'"table_name": "{table}", "table_version": "{version}", "schema": {declared[index]}, '
                f'"operation": "INSERT", "position": "mysql-bin.000001:{n}", "timestamp": "2024-05-01T10:00:00Z"}}}}\n'
            )
            lines += 1
            if n % 20_000 == 19_999:
                handles[n % files].write("not a record\n")
                lines += 1
    return lines


def timed(command: list[str], env: dict[str, str]) -> tuple[float, int]:
    """(wall seconds, peak resident memory in bytes of the process and its descendants together: the
    Python driver and Spark's JVM, sampled every 0.2 s)."""
    with tempfile.TemporaryFile("w+") as errors:
        started = time.perf_counter()
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=errors, text=True, env=env)
        peak = 0
        while process.poll() is None:
            peak = max(peak, tree_rss(process.pid))
            time.sleep(0.2)
        elapsed = time.perf_counter() - started
        if process.returncode != 0:
            errors.seek(0)
            raise RuntimeError(f"{command[:4]} failed: {errors.read()[-2000:]}")
    return elapsed, peak


def tree_rss(pid: int) -> int:
    """Resident bytes of `pid` and all its descendants now (Linux /proc; 0 where it is not readable)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        own = next((int(line.split()[1]) * 1024 for line in status.splitlines() if line.startswith("VmRSS:")), 0)
        children = [
            int(child)
            for task in Path(f"/proc/{pid}/task").iterdir()
            for child in (task / "children").read_text().split()
        ]
    except OSError:
        return 0
    return own + sum(tree_rss(child) for child in children)


def commands(workdir: Path, source: Path, master: str) -> dict[str, list[str]]:
    python = sys.executable
    warehouse = workdir / "sink.duckdb"
    return {
        "baseline": [
            python,
            str(ROOT / "bench" / "sink_baseline_job.py"),
            str(source),
            str(workdir / "baseline-out"),
            master,
        ],
        "sink": [
            python,
            "-m",
            "uniview.sink",
            "--input",
            str(source),
            "--warehouse",
            f"duckdb:///{warehouse}",
            "--dataset",
            "shop",
            "--notify",
            "none",
            "--master",
            master,
            "--quiet",
            "--staging-dir",
            str(workdir / "staging"),
        ],
        "text copy": [
            python,
            "-c",
            "import sys; from pyspark.sql import SparkSession; "
            f"s = SparkSession.builder.master('{master}').getOrCreate(); "
            f"s.read.text(sys.argv[1]).write.mode('overwrite').parquet(sys.argv[2])",
            str(source),
            str(workdir / "copy-out"),
        ],
    }


#: What each command writes into the work directory, removed before it runs again.
OUTPUTS = {
    "baseline": ("baseline-out",),
    "sink": ("sink.duckdb", "sink.duckdb.wal", "staging"),
    "text copy": ("copy-out",),
}


def clean(workdir: Path, names=tuple(OUTPUTS)) -> None:
    for output in (workdir / path for name in names for path in OUTPUTS[name]):
        if output.is_dir():
            shutil.rmtree(output)
        else:
            output.unlink(missing_ok=True)


def measure(workdir: Path, records: int, pairs: int, master: str, tables: int, versions: int) -> dict:
    source = workdir / f"input-{records}"
    lines = generate(source, records, tables=tables, versions_per_table=versions)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SPARK_LOCAL_IP": "127.0.0.1"}
    run = commands(workdir, source, master)
    names = ("baseline", "sink")
    seconds: dict[str, list[float]] = {name: [] for name in names}
    memory: dict[str, list[int]] = {name: [] for name in names}
    for pair in range(pairs):
        for name in names if pair % 2 == 0 else reversed(names):  # the order alternates from pair to pair
            clean(workdir, [name])
            elapsed, peak = timed(run[name], env)
            seconds[name].append(elapsed)
            memory[name].append(peak)
        print(
            f"{records:,} records: "
            + ", ".join(f"{name} {seconds[name][-1]:.1f}s" for name in names)
            + f" (peak memory {memory['baseline'][-1] / MIB:,.0f} / {memory['sink'][-1] / MIB:,.0f} MiB)",
            flush=True,
        )
    clean(workdir)
    copy, _ = timed(run["text copy"], env)
    baseline, sink = statistics.median(seconds["baseline"]), statistics.median(seconds["sink"])
    ratios = [b / s for b, s in zip(seconds["baseline"], seconds["sink"], strict=True)]
    shutil.rmtree(source, ignore_errors=True)
    return {
        "records": records,
        "lines": lines,
        "pairs": pairs,
        "baseline_seconds": round(baseline, 2),
        "sink_seconds": round(sink, 2),
        "ratio": round(statistics.median(ratios), 3),
        "pair_ratios": [round(r, 3) for r in ratios],
        "text_copy_seconds": round(copy, 2),
        "baseline_peak_mib": round(max(memory["baseline"]) / MIB),
        "sink_peak_mib": round(max(memory["sink"]) / MIB),
        "all": {k: [round(x, 2) for x in v] for k, v in seconds.items()},
    }


def results_name(records: list[int], tables: int = len(TABLES), versions_per_table: int = VERSIONS_PER_TABLE) -> str:
    """The name of the results file of a run on these inputs (bench/results/<name>.json)."""
    name = (
        "sink"
        if (tables, versions_per_table) == (len(TABLES), VERSIONS_PER_TABLE)
        else f"sink-{len(schemas(tables, versions_per_table))}-versions"
    )
    if records != DEFAULT_RECORDS:
        name += "-" + "-".join(str(count) for count in records) + "-records"
    return name


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, nargs="+", default=DEFAULT_RECORDS)
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--tables", type=int, default=len(TABLES))
    parser.add_argument("--versions-per-table", type=int, default=VERSIONS_PER_TABLE)
    args = parser.parse_args(argv)
    workdir = Path(tempfile.mkdtemp(prefix="bench-sink-"))
    try:
        runs = [
            measure(workdir, records, args.pairs, args.master, args.tables, args.versions_per_table)
            for records in args.records
        ]
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    versions = len(schemas(args.tables, args.versions_per_table))
    report = {
        "runs": runs,
        "master": args.master,
        "tables": args.tables,
        "versions": versions,
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
    }
    for r in runs:
        print(
            f"{r['records']:>9,} records: baseline {r['baseline_seconds']:.1f}s, sink {r['sink_seconds']:.1f}s "
            f"-> sink at {r['ratio']:.2f}x the hand-written job (text copy {r['text_copy_seconds']:.1f}s); "
            f"peak memory {r['baseline_peak_mib']:,} / {r['sink_peak_mib']:,} MiB"
        )
    print(f"wrote {write_results(results_name(args.records, args.tables, args.versions_per_table), report)}")
    return report


if __name__ == "__main__":
    main()
