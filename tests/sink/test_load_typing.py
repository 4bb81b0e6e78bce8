"""The load step's SQL typing (uniview.sink.load_typing) against Spark's typing, and the sink's DuckDB landing.

Every value of VALUES declared as every type of TYPES, one record each, is typed three ways: by Spark
(the staged frames BigQuery's landing writes), by the SQL rules alone, and by the sink landing DuckDB
(which types with the SQL in its load step).  For each record they must agree on whether it fits and,
when it does, on the value landed.  The few cases where Spark and the SQL are known to differ are
listed in DIFFERENCES with the reason, and the test checks they still differ, so the list stays true.
"""

from __future__ import annotations

import json

import duckdb
import pytest
from sink_support import query, record, write_ndjson
from typing_cases import TYPES, VALUES, VERDICT_DATA, VERDICT_SCHEMA

from uniview.landing_layout import QUARANTINE_TABLE
from uniview.sink.frames import parse_envelopes
from uniview.sink.job import SinkOptions, run, stage_batch
from uniview.sink.landing import BatchKey
from uniview.sink.load_sql import typed_records
from uniview.sink.mysql_types import bigquery_type
from uniview.sink.routing import LandingColumn
from uniview.warehouse.duckdb_types import duckdb_type
from uniview.warehouse.url import duckdb_url

_EXPONENT_TEXT = (
    "99999999.995",
    "12345678901234567.125",
    "123456789012345678901234567890.0123456789",
    '[{"d": "2024-01-01", "n": 123456789012345678.25}]',
)
#: (type, value) pairs where Spark's typing and the SQL rules land different things, and why.
DIFFERENCES = {
    # A JSON number's text: Spark writes Java's (9.9999999995E7, 1.2345678901234568E17), DuckDB the shortest
    # decimal (99999999.995, 123456789012345680.0).  Text columns land the number as that text; a BIGNUMERIC
    # wider than 38 digits is read from it, so Spark quarantines what Java writes with an exponent.
    **{(declared, value): "number text" for declared in ("STRING", "JSON", "GEOGRAPHY") for value in _EXPONENT_TEXT},
    **{
        (declared, value): "number text"
        for declared in ("BIGNUMERIC", "BIGNUMERIC(48, 10)")
        for value in _EXPONENT_TEXT[:2]
    },
    # Nested values follow the rules of top-level columns in SQL, so a string of digits is an INT64 there too;
    # Spark's JSON parser reads only numbers into a nested INT64.
    ("STRUCT<a INT64, b STRING>", '{"a": "1"}'): "nested rules",
    ("ARRAY<INT64>", '[1, "2"]'): "nested rules",
    # BigQuery's arrays cannot hold NULL: Spark's typing, which lands BigQuery's rows, holds such a value a misfit
    # (the record is quarantined, never landed without the element); DuckDB's arrays hold NULL, so it lands.
    ("ARRAY<INT64>", "[1, null]"): "null element",
}


#: Records whose detail differs, and why: the columns read from the line are read together by Spark, so
#: when one does not fit it names all of them that have a value; the SQL names the one that does not fit.
VERDICT_DIFFERENCES = {'{"item": {"qty": 1.5}, "n": 12.5}', '{"n": 1.5, "m": "x"}'}


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
    """One sink run over VALUES as each of TYPES and over VERDICT_DATA, and the same lines typed by Spark:
    ({position: outcome} of the sink, of Spark, {position: line}, {position: case})."""
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
    return sink_outcome(warehouse, cases), spark_outcome(spark, root, cases), lines, cases


def spark_outcome(spark, root, cases: dict) -> dict:
    """{position: (reason, detail, value as text)} as Spark types each record: its staged frames, loaded
    into DuckDB with the landing types, as BigQuery's landing writes them."""
    lines = spark.read.text(str(root / "in")).selectExpr("value", "_metadata.file_path AS source_file")
    options = SinkOptions(input="unused", warehouse="bigquery://unused", dataset="cdc")
    batch, _ = stage_batch(spark, parse_envelopes(lines), BatchKey("s", 0), options, lambda tables: {}, notify=False)
    connection = duckdb.connect()
    connection.execute("SET TimeZone = 'UTC'")
    outcome = {}
    for number, chunk in enumerate(batch.chunks):
        chunk.frame.write.parquet(str(root / f"chunk-{number}"))
        staged = f"read_parquet('{root}/chunk-{number}/*.parquet')"
        for position, reason, detail in connection.execute(
            f"SELECT _cdc_position, _reason, _detail FROM {staged} WHERE _reason IS NOT NULL"
        ).fetchall():
            outcome[position] = (reason, detail, None)
        for index in chunk.routes:
            route = batch.routes[index]
            value = (
                f"CAST(CAST({batch.typed_field(index, 0)} AS {duckdb_type(route.columns[0].bq_type)}) AS VARCHAR)"
                if route.table.startswith("t")
                else "NULL"
            )
            for position, text in connection.execute(
                f"SELECT _cdc_position, {value} FROM {staged} WHERE _route = {index} AND _reason IS NULL"
            ).fetchall():
                outcome[position] = (None, None, text)
    assert set(outcome) == set(cases)
    return outcome


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


def _differing(spark_typed: dict, sql_typed: dict, cases: dict) -> dict:
    """{case: (Spark's outcome, the SQL's)} for the records the two type differently."""
    return {
        cases[position]: (spark_typed[position], outcome)
        for position, outcome in sql_typed.items()
        if spark_typed[position] != outcome
    }


def test_sql_typing_lands_what_spark_lands(sink_run):
    _, spark_typed, lines, cases = sink_run
    differing = _differing(spark_typed, _sql_typing(lines, cases), cases)
    assert {case: pair for case, pair in differing.items() if case not in DIFFERENCES} == {}
    assert set(DIFFERENCES) <= set(differing)


def test_sql_verdicts_are_sparks_reasons_and_details(sink_run):
    _, spark_typed, lines, cases = sink_run
    judged = _sql_verdicts(lines, cases)
    differing = _differing(spark_typed, judged, cases)
    assert {data: pair for data, pair in differing.items() if data not in VERDICT_DIFFERENCES} == {}
    assert set(differing) == VERDICT_DIFFERENCES
    assert sum(reason is None for reason, _, _ in judged.values()) == 2


def test_the_duckdb_landing_lands_and_quarantines_what_the_sql_rules_give(sink_run):
    landed, _, lines, cases = sink_run
    assert landed == {**_sql_typing(lines, cases), **_sql_verdicts(lines, cases)}
