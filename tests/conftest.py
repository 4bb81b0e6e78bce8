"""Hooks of the whole run.  Folders whose tests start JVMs, emulators or a broker run first, so that in a
parallel run (pytest-xdist, as scripts/test.sh runs the suite) the many quick files fill in at the end
instead of one long file running alone.  Each test process reports how many statements its ZetaSQL
analyzer checked (tests/zetasql/conftest.py), and the run's summary gives their sum."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "zetasql"))

from analyzer import STATEMENTS_REPORTED  # noqa: E402

_reported: list[int] = []
#: Test folders, longest first (by their time in a whole run); the others follow in their own order.
SLOW_FOLDERS = ("kafka", "sink", "bigquery", "consolidation", "terraform")


def pytest_collection_modifyitems(items):
    def folder_rank(item) -> int:
        parts = Path(str(item.path)).relative_to(Path(__file__).parent).parts
        return SLOW_FOLDERS.index(parts[0]) if len(parts) > 1 and parts[0] in SLOW_FOLDERS else len(SLOW_FOLDERS)

    items.sort(key=folder_rank)  # stable: each file's tests stay together and in order


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    _reported.append(getattr(node, "workeroutput", {}).get(STATEMENTS_REPORTED, 0))


def pytest_terminal_summary(terminalreporter):
    if sum(_reported):
        terminalreporter.write_line(f"ZetaSQL analyzer: {sum(_reported)} statements analyzed "
                                    f"(in {len(_reported)} test processes)")
