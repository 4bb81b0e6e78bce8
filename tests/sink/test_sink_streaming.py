"""Structured Streaming: kill -9 mid-run and restart (--available-now), nothing lost, nothing twice; a running
stream retries a failed notification while it waits for data, and SIGTERM stops it between batches."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest
from sink_support import Endpoint, query, record, write_ndjson

from uniview.sink.versioning import SourceColumn, compute_version
from uniview.warehouse.url import duckdb_url

FILES = 5
ROWS_PER_FILE = 20
SCHEMAS = {
    "customer": [("id", "int(11)"), ("name", "varchar(20)")],
    "orders": [("id", "bigint(20)"), ("amount", "decimal(10,2)")],
}


def write_input(directory: Path, files: range = range(FILES)) -> None:
    """File k (of `files`) holds ROWS_PER_FILE records of both tables plus one bad line."""
    for k in files:
        rows = []
        for i in range(ROWS_PER_FILE):
            n = k * ROWS_PER_FILE + i
            rows.append(
                record("customer", {"id": n, "name": f"c{n}"}, SCHEMAS["customer"])
                if i % 2
                else record("orders", {"id": n, "amount": n / 4}, SCHEMAS["orders"])
            )
        rows.append(f"broken line {k}")
        write_ndjson(directory / f"part-{k:03d}.json", rows)


def sink_process(
    input_dir: Path, warehouse: Path, checkpoint: Path, log: Path, *until_stopped: str
) -> subprocess.Popen:
    """The sink over `input_dir` with --available-now, or with `until_stopped` options instead, running until stopped."""
    command = [
        sys.executable,
        "-m",
        "uniview.sink",
        "--input",
        str(input_dir),
        "--warehouse",
        duckdb_url(warehouse),
        "--stream",
        "--checkpoint",
        str(checkpoint),
        *(until_stopped or ["--available-now"]),
        "--max-files-per-trigger",
        "1",
        "--master",
        "local[1]",
        "--dataset",
        "cdc",
    ]
    with open(log, "ab") as out:
        return subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)


def landed_batches(warehouse: Path) -> int:
    """Batches in the ledger; -1 while the sink holds the file."""
    try:
        with duckdb.connect(str(warehouse), read_only=True) as connection:
            return connection.execute("SELECT count(*) FROM main._uniview_batches").fetchone()[0]
    except duckdb.Error:
        return -1


def committed_batches(checkpoint: Path) -> int:
    commits = checkpoint / "commits"
    return len([p for p in commits.iterdir() if p.name.isdigit()]) if commits.exists() else 0


def kill_mid_run(process: subprocess.Popen, warehouse: Path, checkpoint: Path, deadline: float) -> str:
    """SIGKILL the sink's process group, preferably between a DuckDB commit and Spark's commit."""
    while time.monotonic() < deadline and process.poll() is None:
        landed, committed = landed_batches(warehouse), committed_batches(checkpoint)
        if landed > committed >= 1:
            os.killpg(process.pid, signal.SIGKILL)
            return "after the warehouse commit, before the checkpoint commit"
        if committed >= 2:
            os.killpg(process.pid, signal.SIGKILL)
            return "during a batch"
        time.sleep(0.05)
    pytest.fail(f"the sink ended or stalled before it could be killed (exit code {process.poll()})")


def test_kill_9_and_restart_lose_and_duplicate_nothing(tmp_path):
    write_input(tmp_path / "in")
    warehouse, checkpoint, log = tmp_path / "w.duckdb", tmp_path / "checkpoint", tmp_path / "sink.log"
    first = sink_process(tmp_path / "in", warehouse, checkpoint, log)
    moment = kill_mid_run(first, warehouse, checkpoint, time.monotonic() + 120)
    first.wait(timeout=30)
    assert first.returncode == -signal.SIGKILL, moment
    assert committed_batches(checkpoint) < FILES, "the run finished before the kill"

    second = sink_process(tmp_path / "in", warehouse, checkpoint, log)
    assert second.wait(timeout=150) == 0, log.read_text()[-3000:]

    assert_every_line_landed_once(warehouse, moment)


def assert_every_line_landed_once(warehouse: Path, context: str) -> None:
    total = FILES * ROWS_PER_FILE
    for table, schema in SCHEMAS.items():
        name = f"{table}_v_{compute_version(table, [SourceColumn(n, t) for n, t in schema])}"
        ids = [row[0] for row in query(warehouse, f"SELECT id FROM cdc.{name} ORDER BY id")]
        expected = [n for n in range(total) if (n % 2 == 1) == (table == "customer")]
        assert ids == expected, context
    assert query(warehouse, "SELECT count(*), count(DISTINCT raw_line) FROM cdc._uniview_quarantine") == [
        (FILES, FILES)
    ]
    # Spark may plan the batches after a restart differently (two files in one), so the ledger is held to
    # its sums: every line read once, in batches recorded once each.
    ((batches, read, written, quarantined),) = query(
        warehouse,
        "SELECT count(DISTINCT batch_id), sum(read), sum(written), sum(quarantined) FROM main._uniview_batches",
    )
    assert (read, written, quarantined) == (total + FILES, total, FILES) and batches <= FILES


def batches_logged(log: Path) -> int:
    return log.read_text(errors="replace").count("INFO uniview.sink.job: batch ")


def wait_for(condition, what: str, process: subprocess.Popen, log: Path, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert process.poll() is None, (
            f"the sink ended (exit code {process.returncode}) before {what}: " + log.read_text()[-3000:]
        )
        assert time.monotonic() < deadline, f"no {what} within {timeout:.0f} s: " + log.read_text()[-3000:]
        time.sleep(0.1)


def test_a_running_stream_retries_notifications_while_idle_and_sigterm_stops_it_between_batches(tmp_path):
    # The first batch announces two new tables and, per family, that rows landed (4 messages): the first two
    # deliveries fail and are retried while the stream is idle.
    endpoint = Endpoint(statuses=[503, 503])
    try:
        write_input(tmp_path / "in", range(1))
        warehouse, checkpoint, log = tmp_path / "w.duckdb", tmp_path / "checkpoint", tmp_path / "sink.log"
        running = sink_process(
            tmp_path / "in", warehouse, checkpoint, log, "--trigger-interval", "1 second", "--notify", endpoint.url
        )
        wait_for(lambda: len(endpoint.bodies) >= 6, "retry of the failed notifications", running, log)
        assert batches_logged(log) == 1, "the retry waited for a batch instead of the trigger interval"
        first = endpoint.data()
        assert sorted(first[4:6]) == sorted(first[:2]) and len(set(first[:6])) == 4
        kinds = sorted(kind for body in set(first[:6]) for kind in json.loads(body) if kind != "dataset")
        assert kinds == ["landed", "landed", "table", "table"]

        write_input(tmp_path / "in", range(1, FILES))
        wait_for(lambda: batches_logged(log) >= 2, "second batch", running, log)
        running.send_signal(signal.SIGTERM)
        assert running.wait(timeout=120) == 0, log.read_text()[-3000:]
        output = log.read_text()
        assert "SIGTERM: stopping the stream after the batch in progress" in output
        assert "reentrant call" not in output, output[-3000:]
        landed = batches_logged(log)
        assert 2 <= landed < FILES and landed_batches(warehouse) == landed == committed_batches(checkpoint)

        assert sink_process(tmp_path / "in", warehouse, checkpoint, log).wait(timeout=150) == 0, log.read_text()[-3000:]
        assert_every_line_landed_once(warehouse, f"stopped after {landed} batches")
        delivered = endpoint.data()
        assert len(delivered) == len(set(delivered)) + 2, "a delivered notification was sent again"
    finally:
        endpoint.close()
