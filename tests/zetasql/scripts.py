"""A BigQuery script job analyzed statement by statement (with the `dml` fixture of conftest.py): temporary
tables and tables created along the way join the catalog with the columns the analyzer derives for them.  A
script variable (DECLARE name TYPE DEFAULT value) is read by the statements after it as a value of its type; a SET
of one to a system variable (`@@row_count`) must name a declared variable of INT64."""

from __future__ import annotations

import re
from collections.abc import Sequence

import grpc
from analyzer import Analyzer, Catalog

_CREATE_TEMP = re.compile(r"CREATE OR REPLACE TEMP TABLE (\S+) AS\n(.*)", re.S)
_CREATE_TABLE = re.compile(r"CREATE OR REPLACE TABLE `?([\w-]+)`?\.`?(\w+)`?.*? AS\n(.*)", re.S)
_DECLARE = re.compile(r"DECLARE (\w+) (\w+) DEFAULT (.+)", re.S)
_SET = re.compile(r"SET (\w+) = @@row_count")
#: The dataset a script's temporary tables are given in the catalog.
TEMP_DATASET = "_script"


def analyze_script(analyzer: Analyzer, script: str, catalog: Catalog, temporary: Sequence[str]) -> int:
    """Analyze each statement of a script job (its `temporary` tables named as TEMP_DATASET's); the count."""
    named = re.compile(r"\b(" + "|".join(temporary) + r")\b")
    analyzed = 0
    variables: dict[str, str] = {}
    for statement in [s for s in script.split(";\n") if s.strip()]:
        statement = named.sub(rf"{TEMP_DATASET}.\1", statement)
        if declared := _DECLARE.fullmatch(statement):
            name, kind, default = declared.groups()
            assert analyzer.analyze(f"SELECT CAST({default} AS {kind})", catalog).error is None, statement
            variables[name] = kind
            analyzed += 1
            continue
        if assigned := _SET.fullmatch(statement):
            assert variables.get(assigned[1]) == "INT64", f"SET of an undeclared variable: {statement}"
            continue
        for name, kind in variables.items():
            statement = re.sub(rf"\b{name}\b", f"CAST(NULL AS {kind})", statement)
        statement = statement.replace("@watermark", "TIMESTAMP '2026-01-01 00:00:00+00'")
        if statement in ("BEGIN TRANSACTION", "COMMIT TRANSACTION"):
            continue
        temporary_table = _CREATE_TEMP.match(statement)
        created = _CREATE_TABLE.match(statement)
        if temporary_table or created:
            if created:  # the whole CREATE TABLE ... OPTIONS(...) AS, then its SELECT for the columns
                resolve(analyzer, statement, catalog)
            result = analyzer.analyze(created[3] if created else temporary_table[2], catalog)
            if result.error is None:
                dataset, table = (created[1], created[2]) if created else temporary_table[1].split(".", 1)
                catalog.add_table(dataset, table, result.columns)
        elif statement.startswith(("DELETE", "INSERT", "MERGE", "DROP", "ASSERT")):
            resolve(analyzer, statement, catalog)
            analyzed += 1
            continue
        else:
            result = analyzer.analyze(statement, catalog)
        assert result.error is None, f"rejected: {result.error}\n{statement[:3000]}"
        analyzed += 1
    return analyzed


def resolve(analyzer: Analyzer, statement: str, catalog: Catalog) -> None:
    """Resolve a DML or DDL statement; AssertionError with the analyzer's message when it is refused."""
    try:
        analyzer.resolve(statement, catalog)
    except grpc.RpcError as error:
        raise AssertionError(f"rejected: {error.details()}\n{statement[:3000]}") from None
