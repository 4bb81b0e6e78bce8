"""Benchmark: the Cloud Function on the local BigQuery emulator.

Reports, in one run:
- BigQuery query jobs per event, for an event that changes the view (a new version) and for
  one that leaves it unchanged (the same event again), counted by the warehouse;
- the function's cold import time (a fresh `python -c "import main"` with functions/ on
  sys.path, median of several runs) as a ratio to a fresh `import google.cloud.bigquery`,
  alternating the two; the bare interpreter start is reported too;
- end-to-end latency per event (HTTP POST to functions-framework until the response), median,
  changed and unchanged.
Usage: python -m bench.bench_function [--events 5] [--imports 7]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import requests

from bench.results_file import write_results
from uniview.cloudfn.config import load_config
from uniview.cloudfn.events import cloud_event, notification, push_body
from uniview.cloudfn.handler import handle_cloud_event
from uniview.local.bigquery_emulator import DEFAULT_PROJECT, bigquery_emulator, find_emulator_venv
from uniview.local.function_server import function_server
from uniview.warehouse.bigquery import BigQueryWarehouse

DATASET = "bench"
FAMILY = "events"
IMPORTS = {
    "function": "import uniview.cloudfn.entry",
    "bigquery": "import google.cloud.bigquery",
    "interpreter": "pass",
}


def create_version(warehouse: BigQueryWarehouse, index: int) -> str:
    version = f"v{index:03d}"
    columns = ", ".join(f"c{c}_{index} STRING" for c in range(10))
    warehouse.client.query(f"CREATE TABLE `{DATASET}`.{FAMILY}_v_{version} (id INT64, {columns})").result()
    return version


def jobs_per_event(warehouse: BigQueryWarehouse, events: int, first_index: int) -> dict:
    """Query jobs for an event that changes the view and for the same event again, handled in-process."""
    config = load_config({"UNIVIEW_WAREHOUSE": f"bigquery://{DEFAULT_PROJECT}"})
    jobs: dict[str, list[int]] = {"changed": [], "unchanged": [], "ddl_changed": [], "ddl_unchanged": []}
    for index in range(first_index, first_index + events):
        version = create_version(warehouse, index)
        for kind in ("changed", "unchanged"):
            before = warehouse.jobs_started
            event = cloud_event(notification(DATASET, FAMILY, version), f"jobs-{index}-{kind}")
            result = handle_cloud_event(event, config=config, warehouse=warehouse)
            if result.status != ("refreshed" if kind == "changed" else "unchanged"):
                raise RuntimeError(f"unexpected outcome for a {kind} event: {result}")
            jobs[kind].append(warehouse.jobs_started - before)
            jobs[f"ddl_{kind}"].append(sum(len(outcome.jobs) for outcome in result.outcomes))
    return {
        "jobs_changed_event": statistics.median(jobs["changed"]),
        "jobs_unchanged_event": statistics.median(jobs["unchanged"]),
        "ddl_jobs_changed_event": statistics.median(jobs["ddl_changed"]),
        "ddl_jobs_unchanged_event": statistics.median(jobs["ddl_unchanged"]),
    }


def event_latency(url: str, warehouse: BigQueryWarehouse, events: int, first_index: int) -> dict:
    """Median seconds from POST to response through functions-framework, changed and unchanged."""
    changed, unchanged = [], []
    for index in range(first_index, first_index + events):
        version = create_version(warehouse, index)
        for sink in (changed, unchanged):
            body = push_body(notification(DATASET, FAMILY, version), f"latency-{index}-{len(sink)}")
            started = time.perf_counter()
            response = requests.post(url, json=body, timeout=300)
            sink.append(time.perf_counter() - started)
            response.raise_for_status()
    return {
        "latency_changed_s": round(statistics.median(changed), 3),
        "latency_unchanged_s": round(statistics.median(unchanged), 3),
    }


def import_times(runs: int) -> dict:
    """Median wall time of fresh interpreters importing the function, BigQuery's client, nothing."""
    samples: dict[str, list[float]] = {name: [] for name in IMPORTS}
    for _ in range(runs):
        for name, code in IMPORTS.items():
            started = time.perf_counter()
            command = [sys.executable, "-c", code]
            subprocess.run(command, check=True, cwd=tempfile.gettempdir())
            samples[name].append(time.perf_counter() - started)
    medians = {name: statistics.median(values) for name, values in samples.items()}
    bare = medians["interpreter"]
    return {
        "import_function_s": round(medians["function"], 3),
        "import_bigquery_s": round(medians["bigquery"], 3),
        "interpreter_start_s": round(bare, 3),
        "import_ratio_function_to_bigquery": round(medians["function"] / medians["bigquery"], 2),
        "import_ratio_net_of_interpreter": round((medians["function"] - bare) / (medians["bigquery"] - bare), 2),
    }


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=5)
    parser.add_argument("--imports", type=int, default=7)
    args = parser.parse_args(argv)
    if find_emulator_venv() is None:
        sys.exit("the BigQuery emulator is not installed: run scripts/setup-bigquery-emulator.sh")
    results: dict = {"events": args.events, "import_runs": args.imports}
    results.update(import_times(args.imports))
    with tempfile.TemporaryDirectory() as folder, bigquery_emulator(Path(folder)) as host:
        os.environ["BIGQUERY_EMULATOR_HOST"] = host
        with BigQueryWarehouse(DEFAULT_PROJECT) as warehouse:
            warehouse.client.query(f"CREATE SCHEMA `{DATASET}`").result()
            results.update(jobs_per_event(warehouse, args.events, 0))
            environment = {"UNIVIEW_WAREHOUSE": f"bigquery://{DEFAULT_PROJECT}", "BIGQUERY_EMULATOR_HOST": host}
            with function_server(Path(folder), environment) as served:
                results.update(event_latency(served.url, warehouse, args.events, args.events))
    report(results)
    write_results("function", results)
    return results


def report(results: dict) -> None:
    rows = [
        ("query jobs per event, view changed", results["jobs_changed_event"]),
        ("query jobs per event, view unchanged", results["jobs_unchanged_event"]),
        (
            "of which DDL jobs, changed / unchanged",
            f"{results['ddl_jobs_changed_event']} / {results['ddl_jobs_unchanged_event']}",
        ),
        ("end-to-end latency, view changed (s, median)", results["latency_changed_s"]),
        ("end-to-end latency, view unchanged (s, median)", results["latency_unchanged_s"]),
        ("cold `import main` (s, median)", results["import_function_s"]),
        ("cold `import google.cloud.bigquery` (s, median)", results["import_bigquery_s"]),
        ("bare interpreter start (s, median)", results["interpreter_start_s"]),
        ("import ratio function / bigquery", results["import_ratio_function_to_bigquery"]),
        ("import ratio, interpreter start subtracted", results["import_ratio_net_of_interpreter"]),
    ]
    width = max(len(label) for label, _ in rows)
    for label, value in rows:
        print(f"{label:<{width}}  {value}")


if __name__ == "__main__":
    main()
