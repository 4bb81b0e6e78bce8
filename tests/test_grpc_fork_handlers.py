"""Spark's gateway JVM is started with fork + exec while gRPC may already run in the process (the demo's
Pub/Sub clients, a test's channels).  gRPC's fork handlers can kill such a child before it executes
anything (grpc/grpc#43055), so uniview's entry points turn them off (uniview.local.processes)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

FORKS = 300
PROBE = f"""
import {{entry}}
import subprocess
from concurrent import futures

import grpc

server = grpc.server(futures.ThreadPoolExecutor(max_workers=1))
port = server.add_insecure_port("127.0.0.1:0")
server.start()
channel = grpc.insecure_channel(f"127.0.0.1:{{{{port}}}}")
grpc.channel_ready_future(channel).result(timeout=30)
# pyspark's launch_gateway passes a preexec_fn too: Python then forks instead of spawning
children = [subprocess.Popen(["true"], preexec_fn=lambda: None, stderr=subprocess.DEVNULL) for _ in range({FORKS})]
print(sum(child.wait() != 0 for child in children))
"""


@pytest.mark.parametrize("entry", ["uniview.cli.main", "uniview.cli.sink"])
def test_children_forked_beside_a_grpc_channel_all_reach_exec(entry):
    environment = {name: value for name, value in os.environ.items() if name != "GRPC_ENABLE_FORK_SUPPORT"}
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(entry=entry)], env=environment, capture_output=True, text=True, timeout=240
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split()[-1] == "0", f"children that died before exec, of {FORKS}: {done.stdout}"
