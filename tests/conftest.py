"""Hooks of the whole run.  gRPC's fork handlers are off in test processes (uniview.local.processes).
In a parallel run (pytest-xdist, as scripts/test.sh runs the suite) each test
process reports how many statements its ZetaSQL analyzer checked (tests/zetasql/conftest.py), and the
run's summary gives their sum."""

from __future__ import annotations

import sys
from pathlib import Path

from uniview.local.processes import keep_grpc_fork_handlers_off

keep_grpc_fork_handlers_off()  # a test process keeps gRPC channels open while it starts Spark's gateway

import pytest  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent / "zetasql"))

from analyzer import STATEMENTS_REPORTED  # noqa: E402

_reported: list[int] = []


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    _reported.append(getattr(node, "workeroutput", {}).get(STATEMENTS_REPORTED, 0))


def pytest_terminal_summary(terminalreporter):
    if sum(_reported):
        terminalreporter.write_line(f"ZetaSQL analyzer: {sum(_reported)} statements analyzed "
                                    f"(in {len(_reported)} test processes)")
