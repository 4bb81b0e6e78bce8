"""The ZetaSQL analyzer's local service, started once for the run on a free port and always stopped."""

from __future__ import annotations

import importlib
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from analyzer import STATEMENTS_REPORTED, Analyzer, install
from reference import running_analyzer

_ANALYZERS: list[Analyzer] = []
#: Statement kinds the `dml` analyzer takes on top of the views' (a script's DML and CREATE TABLE AS).
_SCRIPT_KINDS = (
    "RESOLVED_CREATE_TABLE_AS_SELECT_STMT",
    "RESOLVED_DELETE_STMT",
    "RESOLVED_INSERT_STMT",
    "RESOLVED_MERGE_STMT",
    "RESOLVED_DROP_STMT",
    "RESOLVED_BEGIN_STMT",
    "RESOLVED_COMMIT_STMT",
    "RESOLVED_ASSERT_STMT",
)


@pytest.fixture(scope="session")
def zetasql(tmp_path_factory):
    """An Analyzer connected to a running ZetaSQL local service."""
    if not shutil.which("npm"):
        pytest.skip("the ZetaSQL analyzer is installed with npm, which this machine does not have")
    try:
        install()
    except RuntimeError as error:
        pytest.skip(f"the ZetaSQL analyzer could not be installed: {error}")
    with running_analyzer(tmp_path_factory.mktemp("zetasql")) as analyzer:
        _ANALYZERS.append(analyzer)
        yield analyzer


@pytest.fixture
def dml(zetasql: Analyzer):
    """The analyzer taking a script's statement kinds too, for the test's duration (see scripts.py)."""
    kinds = importlib.import_module("zetasql.resolved_ast.resolved_node_kind_pb2").ResolvedNodeKind
    supported = zetasql.language.supported_statement_kinds
    before = list(supported)
    supported.extend(kinds.Value(kind) for kind in _SCRIPT_KINDS)
    yield zetasql
    del supported[:]
    supported.extend(before)


def _statements() -> int:
    return sum(analyzer.statements for analyzer in _ANALYZERS)


def pytest_sessionfinish(session):
    """In a test process of a parallel run, report the count to the run (tests/conftest.py sums them)."""
    output = getattr(session.config, "workeroutput", None)
    if output is not None:
        output[STATEMENTS_REPORTED] = _statements()


def pytest_terminal_summary(terminalreporter):
    count = _statements()
    if count and not hasattr(terminalreporter.config, "workeroutput"):
        terminalreporter.write_line(f"ZetaSQL analyzer: {count} statements analyzed")
