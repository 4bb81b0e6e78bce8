"""Where a test run spends its time: each test process adds up its tests' durations (setup, call and teardown)
per test file, and with UNIVIEW_DURATIONS_FILE set the run writes them, with each process's wall time and the
run's, as JSON. `scripts/test_durations.py` turns that file into the table of docs/testing.md.

Registered by tests/conftest.py; in a parallel run (pytest-xdist) each test process sends its figures to the
controlling process, which writes the file once."""

from __future__ import annotations

import json
import os
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

#: The environment variable naming the JSON file a run writes its durations to.
DURATIONS_FILE = "UNIVIEW_DURATIONS_FILE"
_KEY = "uniview_durations"


class DurationsRecorder:
    """Adds up durations per test file in this process, and (in the controlling process) per test process."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.started = time.time()
        self.files: dict[str, float] = defaultdict(float)
        self.tests: dict[str, int] = defaultdict(int)
        self.processes: dict[str, dict[str, Any]] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        path = report.nodeid.split("::", 1)[0]
        self.files[path] += report.duration
        if report.when == "call" or (report.when == "setup" and report.skipped):
            self.tests[path] += 1

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        mine = {"wall": time.time() - self.started, "files": dict(self.files), "tests": dict(self.tests)}
        workeroutput = getattr(session.config, "workeroutput", None)
        if workeroutput is not None:  # a test process of a parallel run: the controller writes the file
            workeroutput[_KEY] = json.dumps(mine)
            return
        if not self.processes:
            self.processes["main"] = mine
        self._write(time.time() - self.started)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        figures = getattr(node, "workeroutput", {}).get(_KEY)
        if figures:
            self.processes[node.gateway.id] = json.loads(figures)

    def _write(self, wall: float) -> None:
        target = os.environ.get(DURATIONS_FILE)
        if target:
            record = {"wall": wall, "processes": self.processes}
            Path(target).write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")


def register(config: pytest.Config) -> None:
    config.pluginmanager.register(DurationsRecorder(config), "uniview-durations")
