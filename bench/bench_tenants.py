"""Sink cost against the number of tables one batch touches: the same 20,000 records over 1, 100 and
1,000 source databases, each landing in its own dataset (the sink's default layout).

    .venv/bin/python -m bench.bench_tenants                           # 1, 100, 1000 databases, 3 rounds
    .venv/bin/python -m bench.bench_tenants --databases 1 1000 --rounds 1

Whole `uniview sink` processes on DuckDB (local[2]), in rounds that run every database count once,
so each figure is compared with the one-database run of the same rounds.  Each run's Spark jobs are
counted from its event log.  The figure is median(T databases) / median(1 database): 1.0 means a
batch costs the same however many version tables it feeds.  A last run with --dataset cdc (one
shared dataset, the tenant as the `_cdc_database` column) is the other layout.
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
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.results_file import write_results  # noqa: E402

RECORDS = 20_000
SCHEMA = [{"name": "id", "type": "bigint(20)"}, {"name": "name", "type": "varchar(64)"},
          {"name": "amount", "type": "decimal(12,2)"}, {"name": "updated_at", "type": "datetime"},
          {"name": "active", "type": "tinyint(1)"}]


def generate(path: Path, databases: int, records: int = RECORDS) -> None:
    """`records` records of one table at one declared schema, spread round-robin over `databases` databases."""
    path.parent.mkdir(parents=True, exist_ok=True)
    schema = json.dumps(SCHEMA)
    with path.open("w", encoding="utf-8") as out:
        for n in range(records):
            data = {"id": n, "name": f"name-{n}", "amount": f"{n % 1000}.50", "updated_at": "2024-05-01 10:00:00",
                    "active": n % 2}
            out.write(json.dumps({"data": data, "metadata": {
                "ingestion_method": "BINLOG", "database_name": f"tenant{n % databases:05d}", "table_name": "customer",
                "schema": json.loads(schema), "operation": "INSERT", "position": f"mysql-bin.000001:{n}",
                "timestamp": "2024-05-01T10:00:00Z"}}) + "\n")


def spark_jobs(event_log: Path) -> int:
    """Spark jobs the run started, from its event log."""
    jobs = 0
    for log in event_log.glob("*"):
        with log.open(encoding="utf-8") as lines:
            jobs += sum('"Event":"SparkListenerJobStart"' in line for line in lines)
    return jobs


def run_sink(workdir: Path, source: Path, dataset: str | None, master: str) -> tuple[float, int]:
    for leftover in ("sink.duckdb", "sink.duckdb.wal"):
        (workdir / leftover).unlink(missing_ok=True)
    events = workdir / "events"
    shutil.rmtree(events, ignore_errors=True)
    events.mkdir()
    command = [sys.executable, "-m", "uniview.sink", "--input", str(source), "--warehouse",
               f"duckdb:///{workdir / 'sink.duckdb'}", "--notify", "none", "--master", master, "--quiet"]
    command += ["--dataset", dataset] if dataset else []
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SPARK_LOCAL_IP": "127.0.0.1",
           "PYSPARK_SUBMIT_ARGS": f"--conf spark.eventLog.enabled=true --conf spark.eventLog.dir={events} pyspark-shell"}
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - started
    if done.returncode != 0 or f"written={RECORDS}" not in done.stdout:
        raise RuntimeError(f"sink failed: {done.stdout[-1000:]} {done.stderr[-2000:]}")
    return elapsed, spark_jobs(events)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--databases", type=int, nargs="+", default=[1, 100, 1000])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--master", default="local[2]")
    args = parser.parse_args(argv)
    counts = sorted(set([1, *args.databases]))
    workdir = Path(tempfile.mkdtemp(prefix="bench-tenants-"))
    seconds: dict[int, list[float]] = {n: [] for n in counts}
    jobs: dict[int, int] = {}
    try:
        for n in counts:
            generate(workdir / f"in-{n}" / "records.json", n)
        for _ in range(args.rounds):
            for n in counts:
                elapsed, jobs[n] = run_sink(workdir, workdir / f"in-{n}", None, args.master)
                seconds[n].append(elapsed)
                print(f"{n:>5} databases: {elapsed:.1f} s, {jobs[n]} Spark jobs", flush=True)
        shared, shared_jobs = run_sink(workdir, workdir / f"in-{counts[-1]}", "cdc", args.master)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    one = statistics.median(seconds[1])
    runs = [{"databases": n, "seconds": round(statistics.median(seconds[n]), 2), "all": [round(s, 2) for s in seconds[n]],
             "ratio_to_one": round(statistics.median(seconds[n]) / one, 2), "spark_jobs": jobs[n]} for n in counts]
    report = {"records": RECORDS, "rounds": args.rounds, "master": args.master, "runs": runs,
              "shared_dataset": {"databases": counts[-1], "seconds": round(shared, 2),
                                 "ratio_to_one": round(shared / one, 2), "spark_jobs": shared_jobs},
              "cpu_count": os.cpu_count(), "python": platform.python_version()}
    for r in runs:
        print(f"{r['databases']:>5} databases, one dataset each: {r['seconds']:.1f} s = {r['ratio_to_one']:.2f}x "
              f"one database; {r['spark_jobs']} Spark jobs")
    print(f"{counts[-1]:>5} databases, one shared dataset: {shared:.1f} s = {shared / one:.2f}x; {shared_jobs} Spark jobs")
    print(f"wrote {write_results('tenants', report)}")
    return report


if __name__ == "__main__":
    main()
