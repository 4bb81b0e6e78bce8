"""Ctrl-C and SIGTERM: recorded, not raised, while the sink runs; a second one interrupts; handlers restored;
a batch run interrupted mid-way ends with one error and lands nothing (streams: test_sink_streaming.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import duckdb
import pytest

from uniview.sink.stop_signals import stop_requests
from uniview.warehouse.url import duckdb_url


@pytest.mark.parametrize("number", [signal.SIGINT, signal.SIGTERM])
def test_the_first_signal_is_recorded_and_the_second_interrupts(number):
    before = {n: signal.getsignal(n) for n in (signal.SIGINT, signal.SIGTERM)}
    with stop_requests() as request:
        assert not request
        os.kill(os.getpid(), number)
        assert request and request.signal_name == signal.Signals(number).name
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), number)
    assert {n: signal.getsignal(n) for n in before} == before


def test_off_the_main_thread_no_handler_is_installed():
    seen = []

    def in_thread():
        with stop_requests() as request:
            seen.append((bool(request), signal.getsignal(signal.SIGTERM)))

    thread = threading.Thread(target=in_thread)
    thread.start()
    thread.join()
    assert seen == [(False, signal.getsignal(signal.SIGTERM))]


def test_ctrl_c_during_a_batch_run_cancels_it_with_one_error_and_lands_nothing(tmp_path):
    from bench.bench_sink import generate

    generate(tmp_path / "in", 60_000, files=4)
    warehouse, staging = tmp_path / "w.duckdb", tmp_path / "staging"
    command = [
        sys.executable,
        "-m",
        "uniview.sink",
        "--input",
        str(tmp_path / "in"),
        "--warehouse",
        duckdb_url(warehouse),
        "--dataset",
        "shop",
        "--staging-dir",
        str(staging),
        "--master",
        "local[1]",
        "--quiet",
    ]
    with open(tmp_path / "err.txt", "w") as err:
        sink = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=err, text=True)
    deadline = time.monotonic() + 240
    while not any(path.name == "_temporary" for path in staging.rglob("*")):  # Spark is writing the staged rows
        assert sink.poll() is None and time.monotonic() < deadline, (tmp_path / "err.txt").read_text()[-3000:]
        time.sleep(0.05)
    sink.send_signal(signal.SIGINT)
    out, _ = sink.communicate(timeout=120)
    errors = (tmp_path / "err.txt").read_text()
    assert sink.returncode == 130 and out == "", errors[-3000:]
    # Spark's JVM, a process of its own, may still log its cancelled tasks after this line
    assert [line for line in errors.splitlines() if line.startswith("uniview sink:")] == [
        "uniview sink: error: interrupted by SIGINT: Spark's jobs were cancelled and the batch was not landed"
    ]
    assert "Traceback" not in errors and "reentrant" not in errors, errors[-3000:]
    with duckdb.connect(str(warehouse), read_only=True) as connection:
        assert connection.execute("SELECT schema_name, table_name FROM duckdb_tables()").fetchall() == []


def test_on_request_runs_on_its_own_thread_again_and_again_until_the_block_ends():
    calls = []
    with stop_requests(on_request=lambda: calls.append(threading.current_thread().name)):
        os.kill(os.getpid(), signal.SIGTERM)
        deadline = time.monotonic() + 10
        while len(calls) < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
    after = len(calls)
    time.sleep(0.3)
    assert after >= 3 and len(calls) <= after + 1 and set(calls) == {"uniview-stop"}
