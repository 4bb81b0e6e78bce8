"""The load step's SQL typing (uniview.sink.load_typing) and the sink's DuckDB landing.

Every value of VALUES declared as every type of TYPES, one record each, and the records of VERDICT_DATA, are
typed by the SQL rules alone and landed by the sink into DuckDB (whose load step types with those rules): for
each record they must agree on whether it fits and, when it does, on the value landed.  BigQuery's landing is
held to DuckDB's by tests/sink/test_sink_warehouses_agree.py.
"""

from __future__ import annotations

import json

import duckdb
import pytest
from sink_support import query, record, write_ndjson
from typing_cases import TYPES, VALUES, VERDICT_DATA, VERDICT_SCHEMA

from uniview.core.landing_layout import QUARANTINE_TABLE
from uniview.sink.job import SinkOptions, run
from uniview.sink.load_sql import typed_records
from uniview.sink.mysql_types import bigquery_type
from uniview.sink.routing import LandingColumn
from uniview.warehouse.duckdb_types import duckdb_type
from uniview.warehouse.url import duckdb_url


def _line(data: str | None, metadata: dict) -> str:
    return (
        json.dumps({"metadata": metadata})
        if data is None
        else '{"data": %s, "metadata": %s}' % (data, json.dumps(metadata))
    )


def _metadata(table: str, schema: list[tuple[str, str]], position: str) -> dict:
    return record(table, None, schema, operation="INSERT", position=position)["metadata"]


@pytest.fixture(scope="module")
def sink_run(spark, tmp_path_factory):
    """One sink run over VALUES as each of TYPES and over VERDICT_DATA: ({position: outcome} of the sink,
    {position: line}, {position: case})."""
    root = tmp_path_factory.mktemp("load-typing")
    lines, cases = {}, {}
    for t, declared in enumerate(TYPES):
        for v, value in enumerate(VALUES):
            position = f"mysql-bin.000001:{t * 1000 + v}"
            lines[position] = _line('{"c": %s}' % value, _metadata(f"t{t}", [("c", declared)], position))
            cases[position] = (declared, value)
    for number, data in enumerate(VERDICT_DATA):
        position = f"mysql-bin.000002:{number}"
        lines[position] = _line(data, _metadata("verdicts", VERDICT_SCHEMA, position))
        cases[position] = data
    write_ndjson(root / "in" / "records.json", lines.values())
    warehouse = root / "w.duckdb"
    result = run(spark, SinkOptions(input=str(root / "in"), warehouse=duckdb_url(warehouse), dataset="cdc"))
    assert result.counts.read == len(lines)
    return sink_outcome(warehouse, cases), lines, cases


def sink_outcome(warehouse, cases: dict) -> dict:
    """{position: (reason, detail, value as text)} as the sink landed or quarantined each record."""
    outcome = {}
    for (table,) in query(
        warehouse,
        f"SELECT table_name FROM duckdb_tables() WHERE schema_name = 'cdc' AND table_name <> '{QUARANTINE_TABLE}'",
    ):
        value = "CAST(c AS VARCHAR)" if table.startswith("t") else "NULL"
        for position, text in query(warehouse, f'SELECT _cdc_position, {value} FROM cdc."{table}"'):
            outcome[position] = (None, None, text)
    for line, reason, detail in query(warehouse, f"SELECT raw_line, reason, detail FROM cdc.{QUARANTINE_TABLE}"):
        outcome[json.loads(line)["metadata"]["position"]] = (reason, detail, None)
    assert set(outcome) == set(cases)
    return outcome


def sql_outcome(lines: dict, schema: list[tuple[str, str]], value_of: str | None = None) -> dict:
    """{position: (reason, detail, value as text)} from the SQL rules over `lines` (one version), in DuckDB,
    as the load step runs them (load_sql.typed_records)."""
    columns = [LandingColumn(name, declared, bigquery_type(declared).bq_type) for name, declared in schema]
    value = "NULL"
    if value_of is not None:
        j = [c.name for c in columns].index(value_of)
        value = f"CAST(CAST(t{j} AS {duckdb_type(columns[j].bq_type)}) AS VARCHAR)"
    connection = duckdb.connect()
    connection.execute("SET TimeZone = 'UTC'")
    rows = connection.execute(
        f"SELECT value ->> '$.metadata.position', reason, detail, {value} "
        f"FROM ({typed_records('(SELECT unnest(?) AS value)', columns)})",
        [list(lines.values())],
    ).fetchall()
    return {position: (reason, detail, None if reason else text) for position, reason, detail, text in rows}


def _sql_typing(lines: dict, cases: dict) -> dict:
    typed = {}
    for declared in TYPES:
        mine = {
            position: line
            for position, line in lines.items()
            if isinstance(cases[position], tuple) and cases[position][0] == declared
        }
        typed.update(sql_outcome(mine, [("c", declared)], "c"))
    return typed


def _sql_verdicts(lines: dict, cases: dict) -> dict:
    return sql_outcome(
        {position: line for position, line in lines.items() if not isinstance(cases[position], tuple)}, VERDICT_SCHEMA
    )


def test_the_duckdb_landing_lands_and_quarantines_what_the_sql_rules_give(sink_run):
    landed, lines, cases = sink_run
    assert landed == {**_sql_typing(lines, cases), **_sql_verdicts(lines, cases)}
