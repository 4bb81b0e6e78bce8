"""The sink's production path (BigQuery, real spark-bigquery-connector) as a ratio to a hand-written Spark
job that lands the same input with one connector write, in the same run.

    .venv/bin/python -m bench.bench_sink_bigquery                          # 20,000 records, 1 pair (~13 minutes)
    .venv/bin/python -m bench.bench_sink_bigquery --records 100000 --pairs 1

Input: bench/bench_sink.py's generator (4 tables x 5 schema versions of 12-22 columns, one malformed
line per 20,000).  One local BigQuery emulator, with its Storage Write port behind the connector's TLS
front, serves every run; each run is a fresh Python process (its own local[2] SparkSession, started
before the clock) writing into its own dataset, in alternating pairs (baseline, sink, baseline, ...):
  baseline: bench/sink_bigquery_baseline_job.py - fixed envelope schema (data as MAP<STRING,STRING>), one
            parse, ONE connector write (writeMethod=direct) into one table; timed around the job
  sink:     uniview.sink.job.Sink.process on the same lines, one batch, timed with its landing opened;
            then a later batch of the same stream (its tables exist) on a smaller input
The emulator is not BigQuery: the sink's seconds in BigQuery requests (api_seconds["request"]: DDL,
queries, the ledger) are shown apart, and "Spark's share" = sink wall time minus them, as a ratio to the
baseline's wall time (goal: <= 1.0x).  Connector writes stay in both sides' time: the baseline pays one
too.  Also counted: Spark jobs per batch (goal: 1) and BigQuery requests per later batch (goal: <= 10).
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
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.bench_sink import generate, schemas  # noqa: E402
from bench.results_file import write_results  # noqa: E402

#: The emulator runs the sink's typing script with its JSON functions in Python, once per value (about 30 ms a
#: line), so a pair of 20,000 records takes about 12 minutes on 2 cores.
DEFAULT_RECORDS = 20_000
DEFAULT_PAIRS = 1
#: Records of the later batch: enough to feed every version table of the first.
DEFAULT_LATER_RECORDS = 2_000
#: The connector options the parent's emulator answers on (JSON), for the measured processes.
OPTIONS_ENV = "UNIVIEW_BENCH_BIGQUERY_OPTIONS"
RUNS = ("baseline", "sink")
#: Where the measured process prints its one JSON line.
RESULT_PREFIX = "bench-result: "


def session(master: str) -> Any:
    """A local session as `uniview sink` starts one, loading the connector and trusting the emulator's TLS front."""
    from pyspark.sql import SparkSession

    from uniview.cli.sink import local_session_settings
    from uniview.local.bigquery_connector import find_connector

    connector = find_connector()
    if connector is None:
        raise SystemExit("bench: the spark-bigquery-connector is not resolved: run scripts/setup-bigquery-connector.sh")
    settings = {**local_session_settings(master), **connector.spark_settings()}
    settings["spark.driver.extraJavaOptions"] = (
        f"{local_session_settings(master)['spark.driver.extraJavaOptions']} "
        f"{connector.spark_settings()['spark.driver.extraJavaOptions']}"
    )
    builder = SparkSession.builder.master(master).appName("bench-sink-bigquery")
    for key, value in settings.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def spark_jobs(spark: Any) -> set[int]:
    return set(spark.sparkContext.statusTracker().getJobIdsForGroup(None))


def one_baseline(spark: Any, source: Path, dataset: str, options: dict[str, str]) -> dict[str, Any]:
    """The hand-written job, timed around the job; its dataset is made before the clock starts."""
    from bench.sink_bigquery_baseline_job import land
    from uniview.local.bigquery_emulator import DEFAULT_PROJECT
    from uniview.warehouse.bigquery import make_client

    client = make_client(DEFAULT_PROJECT)
    client.create_dataset(f"{DEFAULT_PROJECT}.{dataset}")
    table = f"{DEFAULT_PROJECT}.{dataset}.baseline"
    jobs = spark_jobs(spark)
    started = time.perf_counter()
    land(spark, str(source), table, options)
    seconds = time.perf_counter() - started
    rows = client.get_table(table).num_rows
    client.close()
    return {"seconds": seconds, "spark_jobs": len(spark_jobs(spark) - jobs), "rows": rows}


def one_sink(spark: Any, sources: list[Path], dataset: str, options: dict[str, str]) -> dict[str, Any]:
    """The real sink, one batch per source of the same stream (the first creates the tables); per batch:
    wall seconds, Spark jobs, BigQuery requests and their seconds, connector writes and their seconds."""
    from uniview.local.bigquery_emulator import DEFAULT_PROJECT
    from uniview.sink.job import SESSION_SETTINGS, Sink, SinkOptions, open_landing
    from uniview.sink.landing import BatchKey
    from uniview.sink.notify import NoNotifier

    for key, value in SESSION_SETTINGS.items():
        spark.conf.set(key, value)
    sink_options = SinkOptions(
        input=str(sources[0]),
        warehouse=f"bigquery://{DEFAULT_PROJECT}",
        dataset=dataset,
        bigquery_options=tuple(options.items()),
    )
    batches = []
    started = time.perf_counter()
    landing: Any = open_landing(spark, sink_options)
    try:
        sink = Sink(spark, sink_options, landing, NoNotifier())
        for batch_id, source in enumerate(sources):
            jobs, calls, spent = spark_jobs(spark), dict(landing.api_calls), dict(landing.api_seconds)
            lines = spark.read.text(str(source)).selectExpr(
                "value", "CAST(NULL AS STRING) AS key", "_metadata.file_path AS source_file"
            )
            counts = sink.process(lines, BatchKey(f"bench-{dataset}", batch_id))
            batches.append(
                {
                    "seconds": time.perf_counter() - started,
                    "spark_jobs": len(spark_jobs(spark) - jobs),
                    **{
                        f"{kind.replace(' ', '_')}s": landing.api_calls.get(kind, 0) - calls.get(kind, 0)
                        for kind in ("request", "connector write")
                    },
                    **{
                        f"{kind.replace(' ', '_')}_seconds": landing.api_seconds.get(kind, 0.0) - spent.get(kind, 0.0)
                        for kind in ("request", "connector write")
                    },
                    "read": counts.read,
                    "written": counts.total_written,
                    "quarantined": counts.total_quarantined,
                }
            )
            started = time.perf_counter()
    finally:
        landing.close()
    return {**batches[0], "later": batches[1:]}


def measured_process(argv: list[str]) -> None:
    """`--one baseline|sink`: one measured run in this fresh process; prints one JSON line."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--one", choices=RUNS, required=True)
    parser.add_argument("--input", type=Path, nargs="+", required=True)
    parser.add_argument("--dataset", required=True)
    parser.add_argument("--master", default="local[2]")
    args = parser.parse_args(argv)
    options = json.loads(os.environ[OPTIONS_ENV])
    spark = session(args.master)
    try:
        if args.one == "baseline":
            result = one_baseline(spark, args.input[0], args.dataset, options)
        else:
            result = one_sink(spark, args.input, args.dataset, options)
    finally:
        spark.stop()
    print(RESULT_PREFIX + json.dumps(result), flush=True)


def result_line(stdout: str) -> dict[str, Any]:
    """The JSON a measured process printed (the last line with RESULT_PREFIX); ValueError when there is none."""
    found = [line[len(RESULT_PREFIX) :] for line in stdout.splitlines() if line.startswith(RESULT_PREFIX)]
    if not found:
        raise ValueError("the measured process printed no result")
    return json.loads(found[-1])


def run_one(name: str, inputs: list[Path], master: str, env: dict[str, str]) -> dict[str, Any]:
    dataset = f"bench_{name}_{uuid.uuid4().hex[:8]}"
    command = [sys.executable, "-m", "bench.bench_sink_bigquery", "--one", name, "--dataset", dataset]
    command += ["--master", master, "--input", *map(str, inputs if name == "sink" else inputs[:1])]
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT)
    if done.returncode != 0:
        raise RuntimeError(f"the {name} run failed: {done.stdout[-1000:]} {done.stderr[-3000:]}")
    return result_line(done.stdout)


def summary(baselines: list[dict[str, Any]], sinks: list[dict[str, Any]]) -> dict[str, Any]:
    """Medians over the pairs and the ratios the issue sets goals for (pure: the runs' JSON in, figures out)."""
    baseline = statistics.median(run["seconds"] for run in baselines)
    sink = statistics.median(run["seconds"] for run in sinks)
    requests = statistics.median(run["request_seconds"] for run in sinks)
    spark_share = statistics.median(run["seconds"] - run["request_seconds"] for run in sinks)
    later = [batch for run in sinks for batch in run["later"]]
    return {
        "baseline_seconds": round(baseline, 2),
        "sink_seconds": round(sink, 2),
        "sink_request_seconds": round(requests, 2),
        "sink_connector_write_seconds": round(statistics.median(r["connector_write_seconds"] for r in sinks), 2),
        "sink_spark_seconds": round(spark_share, 2),
        #: Spark's share less the connector writes too: its work outside every call to BigQuery (context only: the
        #: baseline's one write cannot be told apart from its parse, both run in its one Spark job).
        "sink_outside_calls_seconds": round(
            statistics.median(r["seconds"] - r["request_seconds"] - r["connector_write_seconds"] for r in sinks), 2
        ),
        "spark_share_ratio": round(spark_share / baseline, 3),
        "wall_ratio": round(sink / baseline, 3),
        "baseline_spark_jobs": max(run["spark_jobs"] for run in baselines),
        "first_batch_spark_jobs": max(run["spark_jobs"] for run in sinks),
        "first_batch_requests": max(run["requests"] for run in sinks),
        "first_batch_connector_writes": max(run["connector_writes"] for run in sinks),
        "later_batch_spark_jobs": max((batch["spark_jobs"] for batch in later), default=None),
        "later_batch_requests": max((batch["requests"] for batch in later), default=None),
        "later_batch_connector_writes": max((batch["connector_writes"] for batch in later), default=None),
        "later_batch_seconds": round(statistics.median(b["seconds"] for b in later), 2) if later else None,
    }


def measure(workdir: Path, records: int, later_records: int, pairs: int, master: str) -> dict[str, Any]:
    from uniview.local.bigquery_connector import connector_emulator

    inputs = [workdir / f"input-{records}", workdir / f"later-{later_records}"]
    lines = generate(inputs[0], records)
    generate(inputs[1], later_records, files=2)
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in RUNS}
    with connector_emulator(workdir / "emulator") as emulator:
        env = {
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "SPARK_LOCAL_IP": "127.0.0.1",
            "BIGQUERY_EMULATOR_HOST": emulator.host,
            OPTIONS_ENV: json.dumps(emulator.options),
        }
        for _ in range(pairs):
            for name in RUNS:
                runs[name].append(run_one(name, inputs, master, env))
            base, sink = runs["baseline"][-1], runs["sink"][-1]
            print(
                f"{records:,} records: baseline {base['seconds']:.1f}s ({base['spark_jobs']} Spark jobs); "
                f"sink {sink['seconds']:.1f}s, of which {sink['request_seconds']:.1f}s in {sink['requests']} "
                f"requests, {sink['connector_write_seconds']:.1f}s in {sink['connector_writes']} connector writes, "
                f"{sink['spark_jobs']} Spark jobs; later batch: "
                + ", ".join(f"{b['spark_jobs']} Spark jobs, {b['requests']} requests" for b in sink["later"]),
                flush=True,
            )
    check_accounts(runs, lines)
    return {
        "records": records,
        "lines": lines,
        "later_records": later_records,
        "pairs": pairs,
        **summary(runs["baseline"], runs["sink"]),
        "all": runs,
    }


def check_accounts(runs: dict[str, list[dict[str, Any]]], lines: int) -> None:
    """Every measured run handled every input line: the baseline wrote one row per line, the sink's first
    batch read each and wrote or quarantined it."""
    for run in runs["baseline"]:
        if run["rows"] != lines:
            raise RuntimeError(f"the baseline wrote {run['rows']} rows for {lines} lines")
    for run in runs["sink"]:
        if run["read"] != lines or run["written"] + run["quarantined"] != lines:
            raise RuntimeError(f"the sink's first batch does not account for the {lines} lines: {run}")


def print_table(r: dict[str, Any]) -> None:
    rows = [
        ("baseline wall (one connector write)", f"{r['baseline_seconds']:.1f} s", "1.00x"),
        ("sink wall, first batch", f"{r['sink_seconds']:.1f} s", f"{r['wall_ratio']:.2f}x"),
        ("  in BigQuery requests (emulator)", f"{r['sink_request_seconds']:.1f} s", "-"),
        ("  in connector writes", f"{r['sink_connector_write_seconds']:.1f} s", "-"),
        ("  Spark's share (wall - requests)", f"{r['sink_spark_seconds']:.1f} s", f"{r['spark_share_ratio']:.2f}x"),
        ("  outside requests and connector writes", f"{r['sink_outside_calls_seconds']:.1f} s", "-"),
        (
            "Spark jobs: first / later batch (goal 1)",
            f"{r['first_batch_spark_jobs']} / {r['later_batch_spark_jobs']}",
            f"baseline: {r['baseline_spark_jobs']}",
        ),
        (
            "requests: first / later batch (goal later <= 10)",
            f"{r['first_batch_requests']} / {r['later_batch_requests']}",
            "-",
        ),
        ("later batch wall", f"{r['later_batch_seconds']} s", f"{r['later_records']:,} records"),
    ]
    print(f"{r['records']:,} records ({r['lines']:,} lines), median of {r['pairs']} pairs:")
    for label, measured, ratio in rows:
        print(f"  {label:<50} {measured:>14}  {ratio}")


def main(argv: list[str] | None = None) -> dict[str, Any]:
    argv = sys.argv[1:] if argv is None else argv
    if "--one" in argv:
        measured_process(argv)
        return {}
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=DEFAULT_RECORDS)
    parser.add_argument("--later-records", type=int, default=DEFAULT_LATER_RECORDS)
    parser.add_argument("--pairs", type=int, default=DEFAULT_PAIRS)
    parser.add_argument("--master", default="local[2]")
    args = parser.parse_args(argv)
    workdir = Path(tempfile.mkdtemp(prefix="bench-sink-bigquery-"))
    try:
        result = measure(workdir, args.records, args.later_records, args.pairs, args.master)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    report = {
        **result,
        "master": args.master,
        "versions": len(schemas()),
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
    }
    print_table(report)
    print(f"wrote {write_results('sink_bigquery', report)}")  # one file whatever the size: run_all reads it
    return report


if __name__ == "__main__":
    main()
