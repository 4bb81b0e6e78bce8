"""Start a local server process, wait for its port, and stop it (and its children) for certain."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from uniview.core.errors import UniviewError

#: The JIT setting of short-lived local JVMs (the Kafka stack, the demo's Spark, the tests' Spark): C1 only.
#: On small inputs C2's compiling costs more CPU than its faster code saves; the sink keeps C2 for real batches.
QUICK_JIT = "-XX:TieredStopAtLevel=1"


def keep_grpc_fork_handlers_off() -> None:
    """Turn gRPC's fork handlers off in this process, unless the environment says otherwise.  Spark's
    gateway JVM is started with fork + exec (pyspark passes a preexec_fn), and once gRPC runs in the
    process (a Pub/Sub client, a channel) its handlers restart its poller in the forked child, which
    can crash the child before it executes Java (grpc/grpc#43055): about 1 launch in 40 here.  uniview's
    child processes never use gRPC.  Effective only before `grpc` is first imported."""
    os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")


def use_this_python_for_spark_workers(context: Any) -> str:
    """Make the Python workers of a local SparkContext run the interpreter uniview runs in, unless the user
    chose one (the PYSPARK_PYTHON variable, or Spark's `spark.pyspark.python` setting); return the one used.

    Spark starts its workers with PYSPARK_PYTHON, else `python3` from PATH: run as `.venv/bin/uniview` without
    activating the venv, that is another interpreter, which cannot import uniview (the Debezium conversion
    runs in the workers).  Under spark-submit (Dataproc), the submitter's setting applies and this is not
    called.  A UDF takes the interpreter when it is defined, so call this before any is."""
    chosen = os.environ.get("PYSPARK_PYTHON") or context.getConf().get("spark.pyspark.python") or sys.executable
    context.pythonExec = chosen
    return chosen


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for_port(port: int, process: subprocess.Popen, timeout: float, log_path: Path) -> None:
    """Return once 127.0.0.1:port accepts connections; raise if the process exits or time runs out."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise UniviewError(f"server exited with code {process.returncode}; see {log_path}")
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise UniviewError(f"server did not open port {port} within {timeout:.0f}s; see {log_path}")


@contextmanager
def running_server(
    command: Sequence[str], port: int, log_path: Path, *, timeout: float = 30.0, env: dict | None = None
) -> Iterator[subprocess.Popen]:
    """Run `command` in its own process group until the block ends; its output goes to `log_path`."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "ab") as log:
        process = subprocess.Popen(
            list(command),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env={**os.environ, **(env or {})},
        )
    try:
        wait_for_port(port, process, timeout, log_path)
        yield process
    finally:
        stop_process_group(process)


def stop_process_group(process: subprocess.Popen, grace: float = 5.0) -> None:
    """SIGTERM the process group, then SIGKILL whatever is left after `grace` seconds."""
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=grace)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        with suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=grace)
