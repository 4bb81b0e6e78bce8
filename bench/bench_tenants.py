"""Sink cost against the number of tables one batch touches: the same 20,000 records over 1, 100 and
1,000 source databases, each landing in its own dataset (`--dataset-per-database`).

    .venv/bin/python -m bench.bench_tenants                           # 1, 100, 1000 databases, 3 rounds
    .venv/bin/python -m bench.bench_tenants --databases 1 1000 --rounds 1

Whole `uniview sink` processes on DuckDB (local[2]), in rounds that run every database count once, and the
largest count into one shared dataset (--dataset cdc, the tenant as the `_cdc_database` column: the sink's
default layout), in an order that alternates from round to round.  Each run's Spark jobs are counted from its
event log.  The figure is the median over the rounds of T(databases) / T(1 database) in the same round: 1.0
means a batch costs the same however many version tables it feeds.  Then the same into the local
BigQuery emulator with the real spark-bigquery-connector (`--emulator-databases`, default 1 and 100;
a fresh emulator per run, so every run creates its tables; needs scripts/setup-bigquery-connector.sh).
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
from uniview.local.bigquery_connector import ConnectorEmulator, connector_emulator  # noqa: E402

RECORDS = 20_000
SCHEMA = [
    {"name": "id", "type": "bigint(20)"},
    {"name": "name", "type": "varchar(64)"},
    {"name": "amount", "type": "decimal(12,2)"},
    {"name": "updated_at", "type": "datetime"},
    {"name": "active", "type": "tinyint(1)"},
]


def generate(path: Path, databases: int, records: int = RECORDS) -> None:
    """`records` records of one table at one declared schema, spread round-robin over `databases` databases."""
    path.parent.mkdir(parents=True, exist_ok=True)
    schema = json.dumps(SCHEMA)
    with path.open("w", encoding="utf-8") as out:
        for n in range(records):
            data = {
                "id": n,
                "name": f"name-{n}",
                "amount": f"{n % 1000}.50",
                "updated_at": "2024-05-01 10:00:00",
                "active": n % 2,
            }
            out.write(
                json.dumps(
                    {
                        "data": data,
                        "metadata": {
                            "ingestion_method": "BINLOG",
                            "database_name": f"tenant{n % databases:05d}",
                            "table_name": "customer",
                            "schema": json.loads(schema),
                            "operation": "INSERT",
                            "position": f"mysql-bin.000001:{n}",
                            "timestamp": "2024-05-01T10:00:00Z",
                        },
                    }
                )
                + "\n"
            )


def spark_jobs(event_log: Path) -> int:
    """Spark jobs the run started, from its event log."""
    jobs = 0
    for log in event_log.glob("*"):
        with log.open(encoding="utf-8") as lines:
            jobs += sum('"Event":"SparkListenerJobStart"' in line for line in lines)
    return jobs


def run_sink(
    workdir: Path, source: Path, dataset: str | None, master: str, bigquery: ConnectorEmulator | None = None
) -> tuple[float, int]:
    """One whole `uniview sink` process into a fresh DuckDB file, or into the emulator, landing in `dataset`, or
    (None) one dataset per source database; (seconds, Spark jobs)."""
    for leftover in ("sink.duckdb", "sink.duckdb.wal"):
        (workdir / leftover).unlink(missing_ok=True)
    events = workdir / "events"
    shutil.rmtree(events, ignore_errors=True)
    events.mkdir()
    warehouse = "bigquery://test-project" if bigquery else f"duckdb:///{workdir / 'sink.duckdb'}"
    command = [
        sys.executable,
        "-m",
        "uniview.sink",
        "--input",
        str(source),
        "--warehouse",
        warehouse,
        "--notify",
        "none",
        "--master",
        master,
        "--quiet",
    ]
    command += ["--dataset", dataset] if dataset else ["--dataset-per-database"]
    submit = f"--conf spark.eventLog.enabled=true --conf spark.eventLog.dir={events}"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SPARK_LOCAL_IP": "127.0.0.1"}
    if bigquery:
        env["BIGQUERY_EMULATOR_HOST"] = bigquery.host
        submit += f' --driver-java-options "{bigquery.java_options}"'
        command += [item for key, value in bigquery.options.items() for item in ("--bigquery-option", f"{key}={value}")]
    env["PYSPARK_SUBMIT_ARGS"] = f"{submit} pyspark-shell"
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - started
    if done.returncode != 0 or f"written={RECORDS}" not in done.stdout:
        raise RuntimeError(f"sink failed: {done.stdout[-1000:]} {done.stderr[-2000:]}")
    return elapsed, spark_jobs(events)


def measure(workdir: Path, counts: list[int], rounds: int, master: str, on_emulator: bool) -> dict[int | str, list]:
    """{databases: [(seconds, Spark jobs), ...]} over `rounds` rounds, each running every count once (on DuckDB, the
    largest count into one shared dataset too, under the key SHARED), in an order that alternates from round to
    round, so each round's runs see about the same machine."""
    layouts: list[int | str] = [*counts, *([] if on_emulator else [SHARED])]
    found: dict[int | str, list] = {layout: [] for layout in layouts}
    where = "emulator" if on_emulator else "DuckDB"
    for round_number in range(rounds):
        for layout in layouts if round_number % 2 == 0 else reversed(layouts):
            n = max(counts) if layout == SHARED else int(layout)
            dataset = "cdc" if layout == SHARED else None
            if on_emulator:
                with connector_emulator(Path(tempfile.mkdtemp(dir=workdir))) as bigquery:
                    found[layout].append(run_sink(workdir, workdir / f"in-{n}", dataset, master, bigquery))
            else:
                found[layout].append(run_sink(workdir, workdir / f"in-{n}", dataset, master))
            shown = f"{n:>5} databases{', one shared dataset' if layout == SHARED else ''}"
            print(f"{shown}, {where}: {found[layout][-1][0]:.1f} s, {found[layout][-1][1]} Spark jobs", flush=True)
    return found


#: The layout of the largest database count landing in one shared dataset (`--dataset cdc`).
SHARED = "shared"


def summary(found: dict[int | str, list]) -> list[dict]:
    """Each layout's median seconds, and the median over the rounds of its ratio to the one-database run of the
    same round."""
    one = [seconds for seconds, _ in found[1]]
    return [
        {
            "databases": n,
            "seconds": round(statistics.median(s for s, _ in runs), 2),
            "all": [round(s, 2) for s, _ in runs],
            "ratio_to_one": round(statistics.median(s / o for (s, _), o in zip(runs, one, strict=True)), 2),
            "spark_jobs": runs[-1][1],
        }
        for n, runs in found.items()
    ]


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--databases", type=int, nargs="+", default=[1, 100, 1000])
    parser.add_argument(
        "--emulator-databases",
        type=int,
        nargs="*",
        default=[1, 100],
        help="database counts also run into the BigQuery emulator with the real connector (none: skip)",
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--master", default="local[2]")
    args = parser.parse_args(argv)
    counts = sorted({1, *args.databases})
    emulated = sorted({1, *args.emulator_databases}) if args.emulator_databases else []
    workdir = Path(tempfile.mkdtemp(prefix="bench-tenants-"))
    try:
        for n in sorted(set(counts + emulated)):
            generate(workdir / f"in-{n}" / "records.json", n)
        duckdb_layouts = summary(measure(workdir, counts, args.rounds, args.master, False))
        emulator_runs = summary(measure(workdir, emulated, args.rounds, args.master, True)) if emulated else []
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    duckdb_runs = [r for r in duckdb_layouts if r["databases"] != SHARED]
    shared = next(r for r in duckdb_layouts if r["databases"] == SHARED)
    report = {
        "records": RECORDS,
        "rounds": args.rounds,
        "master": args.master,
        "runs": duckdb_runs,
        "shared_dataset": {**shared, "databases": counts[-1]},
        "emulator_runs": emulator_runs,
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
    }
    for where, runs in (("DuckDB", duckdb_runs), ("emulator", emulator_runs)):
        for r in runs:
            print(
                f"{r['databases']:>5} databases, one dataset each, {where}: {r['seconds']:.1f} s = "
                f"{r['ratio_to_one']:.2f}x one database; {r['spark_jobs']} Spark jobs"
            )
    print(
        f"{counts[-1]:>5} databases, one shared dataset, DuckDB: {shared['seconds']:.1f} s = "
        f"{shared['ratio_to_one']:.2f}x; {shared['spark_jobs']} Spark jobs"
    )
    print(f"wrote {write_results('tenants', report)}")
    return report


if __name__ == "__main__":
    main()
