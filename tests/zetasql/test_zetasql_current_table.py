"""Every statement BigQuery runs to keep `<table>_current` as a table (uniview.warehouse.bigquery_current's
script jobs: build, maintain, re-present) is accepted by the ZetaSQL analyzer, statement by statement, with
the temporary tables' and the state tables' columns as the analyzer derives them; every script also fits
BigQuery's job rules (tests/bigquery_limits.py: no DDL on a permanent table inside the transaction).

The family is the random history's (tests/current/current_table_history.py) with a version more whose
column is STRING where the others have INT64, and keys, carried values, defaults and NOT NULL columns."""

from __future__ import annotations

import importlib
import json
import re
import sys
from pathlib import Path

import grpc
import pytest
from analyzer import Analyzer, Catalog
from checks import catalog_of, check_family

sys.path.insert(0, str(Path(__file__).parents[1]))
sys.path.insert(0, str(Path(__file__).parents[1] / "current"))

from bigquery_limits import LimitEnforcer
from current_table_history import FAMILY, VERSIONS

from uniview.current_table import TEMPORARY
from uniview.current_view import VERSION_COLUMN
from uniview.landing_layout import CDC_COLUMNS
from uniview.plan import GeneratorOptions, plan_family
from uniview.schema import Column, TableVersion
from uniview.types import parse_type
from uniview.warehouse.bigquery_current import FLOOR_VARIABLE, action_script

#: Statement kinds the analyzer takes here on top of the views' (the script's DML and CREATE TABLE AS).
_KINDS = (
    "RESOLVED_CREATE_TABLE_AS_SELECT_STMT",
    "RESOLVED_DELETE_STMT",
    "RESOLVED_INSERT_STMT",
    "RESOLVED_DROP_STMT",
    "RESOLVED_BEGIN_STMT",
    "RESOLVED_COMMIT_STMT",
)
_TEMPORARY = re.compile(r"\b(" + "|".join(TEMPORARY) + r")\b")
_CREATE_TEMP = re.compile(r"CREATE OR REPLACE TEMP TABLE (\S+) AS\n(.*)", re.S)
_CREATE_TABLE = re.compile(r"CREATE OR REPLACE TABLE `?([\w-]+)`?\.`?(\w+)`?.*? AS\n(.*)", re.S)
_DECLARE = re.compile(rf"DECLARE {FLOOR_VARIABLE} TIMESTAMP DEFAULT \((.*)\)$", re.S)
TEMP_DATASET = "_script"


def versions() -> list[TableVersion]:
    found = []
    for number, version in enumerate(VERSIONS):
        columns = tuple(Column(name, parse_type(t)) for name, t in (*version.columns, *CDC_COLUMNS))
        defaults = tuple((name, json.dumps(value)) for name, value in version.defaults.items())
        found.append(
            TableVersion(version.table, FAMILY, version.name, number, columns, ("id",), defaults, version.not_null)
        )
    retyped = [("id", "INT64"), ("name", "STRING"), ("score", "STRING"), *CDC_COLUMNS]
    columns = tuple(Column(name, parse_type(t)) for name, t in retyped)
    found.append(TableVersion(f"{FAMILY}_v_e5", FAMILY, "e5", len(found), columns, ("id",)))
    return found


@pytest.fixture
def dml(zetasql: Analyzer):
    """The analyzer taking the script's statement kinds too, for the test's duration."""
    kinds = importlib.import_module("zetasql.resolved_ast.resolved_node_kind_pb2").ResolvedNodeKind
    supported = zetasql.language.supported_statement_kinds
    before = list(supported)
    supported.extend(kinds.Value(kind) for kind in _KINDS)
    yield zetasql
    del supported[:]
    supported.extend(before)


def analyze_script(analyzer: Analyzer, script: str, catalog: Catalog) -> int:
    """Analyze each statement of a script job; temporary tables and created tables join the catalog."""
    analyzed = 0
    for statement in [s for s in script.split(";\n") if s.strip()]:
        statement = _TEMPORARY.sub(rf"{TEMP_DATASET}.\1", statement)
        declared = _DECLARE.match(statement)
        statement = statement.replace(FLOOR_VARIABLE, "TIMESTAMP '2026-01-01 00:00:00+00'")
        if statement in ("BEGIN TRANSACTION", "COMMIT TRANSACTION"):
            continue
        temporary = _CREATE_TEMP.match(statement)
        created = _CREATE_TABLE.match(statement)
        if declared:
            result = analyzer.analyze(f"SELECT ({declared[1]})", catalog)
        elif temporary or created:
            if created:  # the whole CREATE TABLE ... OPTIONS(...) AS, then its SELECT for the columns
                _resolve(analyzer, statement, catalog)
            result = analyzer.analyze(created[3] if created else temporary[2], catalog)
            if result.error is None:
                dataset, table = (created[1], created[2]) if created else temporary[1].split(".", 1)
                catalog.add_table(dataset, table, result.columns)
        elif statement.startswith(("DELETE", "INSERT", "DROP")):
            _resolve(analyzer, statement, catalog)
            analyzed += 1
            continue
        else:
            result = analyzer.analyze(statement, catalog)
        assert result.error is None, f"rejected: {result.error}\n{statement[:3000]}"
        analyzed += 1
    return analyzed


def _resolve(analyzer: Analyzer, statement: str, catalog: Catalog) -> None:
    try:
        analyzer.resolve(statement, catalog)
    except grpc.RpcError as error:
        raise AssertionError(f"rejected: {error.details()}\n{statement[:3000]}") from None


def test_every_statement_of_every_script_is_accepted_and_fits_the_job_rules(dml):
    planned = plan_family("cdc", "cdc_unified", versions(), GeneratorOptions(current="table"))
    current = planned.current_table
    assert current is not None and current.carried and current.rules.gone
    catalog = catalog_of(planned)
    check_family(dml, planned, source_column=VERSION_COLUMN, catalog=catalog)
    enforcer = LimitEnforcer()
    analyzed = 0
    for action in ("create", "maintain", "re-present", "rebuild"):
        script = action_script(current, action, drop_view=action == "create")
        enforcer.check_job(script)
        inside = script.split("BEGIN TRANSACTION;\n")[-1].split("COMMIT TRANSACTION;\n")[0]
        if action in ("maintain", "re-present"):
            assert "DELETE FROM" in inside and "CREATE OR REPLACE TABLE" not in inside
        analyzed += analyze_script(dml, script, catalog)
    assert analyzed > 20


def test_the_job_rules_refuse_a_permanent_table_made_inside_the_transaction():
    planned = plan_family("cdc", "cdc_unified", versions(), GeneratorOptions(current="table"))
    build = action_script(planned.current_table, "create")
    wrapped = build.replace("CREATE OR REPLACE TEMP", "BEGIN TRANSACTION;\nCREATE OR REPLACE TEMP", 1)
    wrapped = wrapped.replace("SELECT (SELECT COUNT(*)", "COMMIT TRANSACTION;\nSELECT (SELECT COUNT(*)", 1)
    with pytest.raises(Exception, match="DDL statements are not supported in a transaction"):
        LimitEnforcer().check_job(wrapped)
