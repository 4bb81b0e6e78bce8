"""Sink throughput as a ratio to a plain Spark copy of the same input, measured in the same run.

    .venv/bin/python bench/bench_sink.py                  # 1,000,000 records
    .venv/bin/python bench/bench_sink.py --records 200000

Generates NDJSON CDC records over 3 tables x 4 schema versions (plus one malformed line per
10,000), then times, on one local SparkSession:
  baseline: spark.read.text(input).write.parquet(out)
  sink:     the whole sink job (parse, route, type, quarantine) into a fresh DuckDB file
Both are warmed up on a small input first, then run alternately --repeat times; the best time of
each is reported (the machine may be shared).  Prints a table and writes bench/results/sink.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TABLES = {
    "customer": [
        [("id", "int(11)"), ("first_name", "varchar(100)"), ("last_name", "varchar(100)"), ("active", "tinyint(1)")],
        [("id", "int(11)"), ("first_name", "varchar(255)"), ("last_name", "varchar(255)"), ("active", "tinyint(1)")],
        [("id", "bigint(20)"), ("first_name", "varchar(255)"), ("last_name", "varchar(255)"), ("email", "varchar(255)")],
        [("id", "varchar(36)"), ("first_name", "varchar(255)"), ("email", "varchar(255)"), ("created_at", "datetime")],
    ],
    "orders": [
        [("id", "bigint(20)"), ("customer_id", "int(11)"), ("amount", "decimal(10,2)"), ("status", "varchar(20)")],
        [("id", "bigint(20)"), ("customer_id", "int(11)"), ("amount", "decimal(12,2)"), ("status", "varchar(20)")],
        [("id", "bigint(20)"), ("customer_id", "bigint(20)"), ("amount", "decimal(12,2)"), ("status", "varchar(50)"),
         ("created_at", "datetime")],
        [("id", "bigint(20)"), ("customer_id", "bigint(20)"), ("amount", "decimal(12,2)"), ("status", "varchar(50)"),
         ("created_at", "timestamp")],
    ],
    "events": [
        [("id", "bigint(20) unsigned"), ("kind", "varchar(20)"), ("payload", "json")],
        [("id", "bigint(20) unsigned"), ("kind", "varchar(40)"), ("payload", "json")],
        [("id", "bigint(20) unsigned"), ("kind", "varchar(40)"), ("payload", "json"), ("at", "timestamp(6)")],
        [("id", "bigint(20) unsigned"), ("kind", "enum('a','b','c')"), ("payload", "json"), ("at", "timestamp(6)"),
         ("score", "double")],
    ],
}


def value(declared: str, rng: random.Random, n: int) -> object:
    """A JSON value of the declared source type."""
    if declared.startswith(("int", "bigint")):
        return n
    if declared == "tinyint(1)":
        return n % 2
    if declared.startswith("decimal"):
        return round(rng.uniform(1, 9999), 2)
    if declared.startswith("varchar(36)"):
        return f"c-{n:08d}"
    if declared.startswith(("varchar", "enum")):
        return rng.choice(["a", "b", "c"]) if declared.startswith("enum") else f"text-{n % 997}"
    if declared == "datetime":
        return f"2024-05-{1 + n % 28:02d} {n % 24:02d}:{n % 60:02d}:{n % 59:02d}"
    if declared.startswith("timestamp"):
        return f"2024-05-{1 + n % 28:02d}T{n % 24:02d}:{n % 60:02d}:{n % 59:02d}Z"
    if declared == "json":
        return {"n": n, "tags": ["x", "y"]}
    if declared == "double":
        return n / 7
    raise ValueError(declared)


def generate(directory: Path, records: int, files: int = 8, seed: int = 7) -> int:
    """Write `records` records (round-robin over the 12 versions) into `files` NDJSON files; returns lines."""
    rng = random.Random(seed)
    versions = [(table, schema) for table, schemas in TABLES.items() for schema in schemas]
    directory.mkdir(parents=True, exist_ok=True)
    handles = [open(directory / f"binlog-{i:03d}.json", "w", encoding="utf-8") for i in range(files)]
    lines = 0
    try:
        for n in range(records):
            table, schema = versions[n % len(versions)]
            line = json.dumps({"data": {name: value(declared, rng, n) for name, declared in schema}, "metadata": {
                "ingestion_method": "BINLOG", "database_name": "bench", "table_name": table,
                "schema": [{"name": name, "type": declared} for name, declared in schema], "operation": "INSERT",
                "position": f"mysql-bin.000001:{n}", "timestamp": "2024-05-01T10:00:00Z"}})
            handles[n % files].write(line + "\n")
            lines += 1
            if n % 10_000 == 9_999:
                handles[n % files].write("not a record\n")
                lines += 1
    finally:
        for handle in handles:
            handle.close()
    return lines


def time_baseline(spark, source: Path, out: Path) -> float:
    shutil.rmtree(out, ignore_errors=True)
    started = time.perf_counter()
    spark.read.text(str(source)).write.parquet(str(out))
    return time.perf_counter() - started


def time_json_reference(spark, source: Path, out: Path) -> float:
    """A reference point, not the baseline: spark.read.json (schema inference) -> Parquet."""
    shutil.rmtree(out, ignore_errors=True)
    started = time.perf_counter()
    spark.read.json(str(source)).write.parquet(str(out))
    return time.perf_counter() - started


def time_sink(spark, source: Path, warehouse: Path, staging: Path, cache: bool = False):
    from uniview.sink.job import SinkOptions, run

    for path in (warehouse, Path(str(warehouse) + ".wal")):
        if path.exists():
            path.unlink()
    started = time.perf_counter()
    result = run(spark, SinkOptions(input=str(source), warehouse=f"duckdb:///{warehouse}", staging_dir=str(staging),
                                    cache=cache))
    elapsed = time.perf_counter() - started
    assert result.counts.balanced, "read != written + quarantined"
    return elapsed, result


def session(master: str, memory: str):
    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master(master).appName("bench-sink").config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false").config("spark.driver.memory", memory)
             .config("spark.sql.shuffle.partitions", "4").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--driver-memory", default="4g")
    parser.add_argument("--workdir", type=Path, default=None, help="default: a temporary directory, removed after")
    parser.add_argument("--output", type=Path, default=ROOT / "bench" / "results" / "sink.json")
    args = parser.parse_args(argv)

    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="bench-sink-"))
    try:
        started = time.perf_counter()
        lines = generate(workdir / "input", args.records)
        generate(workdir / "warmup", 12_000, files=2)
        input_bytes = sum(p.stat().st_size for p in (workdir / "input").iterdir())
        print(f"generated {lines:,} lines ({input_bytes / 1e6:.0f} MB) in {time.perf_counter() - started:.1f}s", flush=True)
        spark = session(args.master, args.driver_memory)
        time_baseline(spark, workdir / "warmup", workdir / "warm-out")
        time_sink(spark, workdir / "warmup", workdir / "warm.duckdb", workdir / "staging")
        baselines, sinks, references, cached = [], [], [], []
        for _ in range(args.repeat):
            baselines.append(time_baseline(spark, workdir / "input", workdir / "copy-out"))
            references.append(time_json_reference(spark, workdir / "input", workdir / "json-out"))
            seconds, result = time_sink(spark, workdir / "input", workdir / "sink-bench.duckdb", workdir / "staging")
            sinks.append(seconds)
            cached.append(time_sink(spark, workdir / "input", workdir / "sink-cached.duckdb", workdir / "staging", True)[0])
            print(f"baseline {baselines[-1]:.2f}s, sink {sinks[-1]:.2f}s, sink --cache {cached[-1]:.2f}s, "
                  f"read.json {references[-1]:.2f}s", flush=True)
        baseline, sink_seconds, reference = min(baselines), min(sinks), min(references)
        spark.stop()
    finally:
        if args.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)

    report = {
        "records": args.records, "lines": lines, "input_mb": round(input_bytes / 1e6, 1), "master": args.master,
        "versions": sum(len(v) for v in TABLES.values()), "baseline_seconds": round(baseline, 2),
        "sink_seconds": round(sink_seconds, 2), "repeat": args.repeat,
        "all_baseline_seconds": [round(x, 2) for x in baselines], "all_sink_seconds": [round(x, 2) for x in sinks], "baseline_lines_per_second": round(lines / baseline),
        "sink_lines_per_second": round(lines / sink_seconds), "throughput_ratio": round(baseline / sink_seconds, 3),
        "sink_cache_seconds": round(min(cached), 2), "sink_cache_ratio": round(baseline / min(cached), 3),
        "reference_read_json_seconds": round(reference, 2),
        "reference_read_json_ratio": round(baseline / reference, 3),
        "written": result.counts.total_written, "quarantined": result.counts.total_quarantined,
        "cpu_count": os.cpu_count(), "python": platform.python_version(),
    }
    print_table(report)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.output}")
    return report


def print_table(report: dict) -> None:
    rows = [
        ("baseline: read.text -> write.parquet", report["baseline_seconds"], report["baseline_lines_per_second"]),
        ("sink: NDJSON -> 12 version tables (DuckDB)", report["sink_seconds"], report["sink_lines_per_second"]),
        ("sink --cache (parsed batch kept in memory)", report["sink_cache_seconds"],
         round(report["lines"] / report["sink_cache_seconds"])),
        ("reference: read.json (inferred) -> parquet", report["reference_read_json_seconds"],
         round(report["lines"] / report["reference_read_json_seconds"])),
    ]
    print(f"\n{report['lines']:,} lines, {report['input_mb']} MB, {report['versions']} versions, {report['master']}")
    print(f"{'job':<44} {'seconds':>9} {'lines/s':>10}")
    for name, seconds, rate in rows:
        print(f"{name:<44} {seconds:>9.2f} {rate:>10,}")
    print(f"sink throughput = {report['throughput_ratio']:.3f} x baseline; "
          f"read.json reference = {report['reference_read_json_ratio']:.3f} x baseline "
          f"(written {report['written']:,}, quarantined {report['quarantined']:,})\n")


if __name__ == "__main__":
    main()
