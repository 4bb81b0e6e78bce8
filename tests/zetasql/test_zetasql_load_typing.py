"""The ZetaSQL analyzer accepts the load step's typing rendered for BigQuery (uniview.sink.load_dialect): for
every type the sink lands, at the top level and nested, and for a version of many columns, the statement that
types and judges a batch's lines yields each column in its version table's type, and the verdict as text."""

from __future__ import annotations

import base64
import json
import sys
from datetime import UTC, datetime
from decimal import Context, Decimal, localcontext
from pathlib import Path
from typing import Any

import duckdb
import pytest
from analyzer import Catalog
from sqlglot import exp

from uniview.core.types import Array, BQType, Scalar, Struct, parse_type
from uniview.sink.frames import METADATA_FIELDS
from uniview.sink.load_dialect import BIGQUERY
from uniview.sink.load_sql import (
    KEY_COLUMNS,
    bigquery_decisions,
    decisions_json,
    decisions_table,
    envelopes,
    excused_columns,
    key_of,
    routed_lines,
    routing_keys,
    typed_records,
    typed_routes,
)
from uniview.sink.mysql_types import bigquery_type
from uniview.sink.routing import Decision, LandingColumn, RecordKey, RoutingPlan
from uniview.sink.sequence import sequence_of, sequence_sql

sys.path.insert(0, str(Path(__file__).parents[1] / "sink"))
from typing_cases import ENVELOPE_LINES, TYPES, VALUES, VERDICT_DATA, VERDICT_SCHEMA

#: Declared as a source declares them; each lands as its sink mapping: typing_cases.TYPES and three more.
DECLARED = [
    *TYPES,
    "decimal(40,10)",
    "STRUCT<inner STRUCT<t TIMESTAMP, tags ARRAY<STRING>>, `odd key` BYTES>",
    "ARRAY<ARRAY<INT64>>",
]
#: A version of many columns, names that need quoting in a JSONPath included.
MANY = [
    *VERDICT_SCHEMA,
    ("a.b", "varchar(5)"),
    ("select", "json"),
    ("space key", "time"),
]


def catalog() -> Catalog:
    c = Catalog()
    c.add_table("uniview", "staged_lines", [("value", parse_type("STRING"))])
    return c


def _columns(schema: list[tuple[str, str]]) -> list[LandingColumn]:
    return [LandingColumn(name, declared, bigquery_type(declared).bq_type) for name, declared in schema]


def _check(zetasql, columns: list[LandingColumn]) -> None:
    statement = typed_records("`uniview`.`staged_lines`", columns, BIGQUERY)
    result = zetasql.analyze(statement, catalog())
    assert result.error is None, f"{[str(c.bq_type) for c in columns]}: {result.error}\n{statement[:3000]}"
    types = dict(result.columns)
    for j, column in enumerate(columns):
        assert types[f"t{j}"] == column.bq_type.base(), column.name
        assert types[f"r{j}"] == Scalar("STRING")
    assert types["reason"] == Scalar("STRING") and types["detail"] == Scalar("STRING")
    assert types["keys"] == Array(Scalar("STRING"))


@pytest.mark.parametrize("declared", DECLARED)
def test_every_landed_type_is_typed_in_its_column_type(zetasql, declared):
    _check(zetasql, _columns([("c", declared)]))


def test_a_version_of_many_columns_is_typed_and_judged(zetasql):
    _check(zetasql, _columns(MANY))


def test_a_version_without_columns_is_judged(zetasql):
    _check(zetasql, [])


def test_the_rendered_typing_is_bigquerys_not_duckdbs(zetasql):
    """The analyzer is an oracle here: DuckDB's rendering of the same rules is refused."""
    statement = typed_records("`uniview`.`staged_lines`", _columns([("c", "INT64")]))
    assert zetasql.analyze(statement, catalog()).error is not None


# One behaviour: the same odd values and records typed by BigQuery's rendering, run by ZetaSQL's reference
# implementation of GoogleSQL (the semantics of JSON_VALUE, SAFE_CAST, REGEXP_CONTAINS, ... as GoogleSQL
# defines them; the local BigQuery emulator runs BigQuery SQL translated to DuckDB's, so it cannot tell), and
# by DuckDB's load step: the same rows land and the same records are quarantined with the same details.


#: ZetaSQL's reference implementation has no geography functions ("Unsupported built-in function:
#: st_geogfromtext"), so GEOGRAPHY is only analyzed above.
EVALUATED_TYPES = [declared for declared in TYPES if declared != "GEOGRAPHY"]


def evaluate(zetasql, sql: str) -> list[list[str | None]]:
    """Run a query with ZetaSQL's reference implementation (GoogleSQL's semantics, BigQuery's language
    options); each row's cells as text, NULL as None (the query casts what it selects to STRING)."""
    stubs = zetasql.stubs
    options = stubs.options.AnalyzerOptionsProto(language_options=zetasql.language, default_timezone="UTC")
    request = stubs.service.EvaluateQueryRequest(
        sql=sql, options=options, simple_catalog=zetasql._catalog_proto(Catalog())
    )
    response = zetasql.client.EvaluateQuery(request)
    return [
        [cell.string_value if cell.WhichOneof("value") else None for cell in row.cell]
        for row in response.content.table_data.row
    ]


def _lines(values: dict[str, str | None], operations: dict[str, str | None] | None = None) -> dict[str, str]:
    """{position: line} with `values[position]` as the data (None: no data) and `operations[position]` as its
    metadata.operation (none when not given)."""
    lines = {}
    for position, data in values.items():
        metadata: dict[str, str] = {"position": position}
        operation = (operations or {}).get(position)
        if operation is not None:
            metadata["operation"] = operation
        lines[position] = (
            json.dumps({"metadata": metadata})
            if data is None
            else '{"data": %s, "metadata": %s}' % (data, json.dumps(metadata))
        )
    return lines


def bigquery_outcome(
    zetasql, lines: dict[str, str], columns: list[LandingColumn], key: tuple[str, ...] | None = None
) -> dict:
    """{position: (reason, detail, value)} as BigQuery's rendering types `lines` (value: t0 canonical); with a
    primary `key`, (reason, detail, value, unfit): the columns a DELETE landed NULL (None when none may be)."""
    literals = ", ".join("'" + line.replace("\\", "\\\\").replace("'", "\\'") + "'" for line in lines.values())
    value = "TO_JSON_STRING(t0)" if columns else "NULL"
    unfit = "TO_JSON_STRING(unfit)" if excused_columns(columns, key) else "NULL"
    typed = typed_records(f"UNNEST([{literals}]) AS value", columns, BIGQUERY, key)
    rows = evaluate(
        zetasql, f"SELECT JSON_VALUE(value, '$.metadata.position'), reason, detail, {value}, {unfit} FROM ({typed})"
    )
    return {
        position: (
            reason,
            detail,
            None
            if reason or text is None
            else canonical(json.loads(text, parse_float=Decimal), columns[0].bq_type, parsed=True),
            *(() if key is None else (None if names is None else json.loads(names),)),
        )
        for position, reason, detail, text, names in rows
    }


def duckdb_outcome(lines: dict[str, str], columns: list[LandingColumn], key: tuple[str, ...] | None = None) -> dict:
    """{position: (reason, detail, value)} as DuckDB's load step types `lines`; with a primary `key`, (reason,
    detail, value, unfit) as bigquery_outcome gives them."""
    connection = duckdb.connect()
    connection.execute("SET TimeZone = 'UTC'")
    value = "t0" if columns else "NULL"
    unfit = "unfit" if excused_columns(columns, key) else "NULL"
    rows = connection.execute(
        f"SELECT value ->> '$.metadata.position', reason, detail, {value}, {unfit} "
        f"FROM ({typed_records('(SELECT unnest(?) AS value)', columns, key=key)})",
        [list(lines.values())],
    ).fetchall()
    return {
        position: (
            reason,
            detail,
            None if reason or landed is None else canonical(landed, columns[0].bq_type),
            *(() if key is None else (names,)),
        )
        for position, reason, detail, landed, names in rows
    }


def canonical(value: Any, bq_type: BQType, parsed: bool = False) -> Any:
    """A landed value in one form for both warehouses: DuckDB's Python value, or (`parsed`) BigQuery's
    TO_JSON_STRING read back."""
    if value is None:
        return None
    if isinstance(bq_type, Struct):
        return {item.name: canonical(value.get(item.name), item.type, parsed) for item in bq_type.fields}
    if isinstance(bq_type, Array):
        return [canonical(element, bq_type.element, parsed) for element in value]
    name = bq_type.name
    if name in ("INT64", "NUMERIC", "BIGNUMERIC"):
        return _exact(value)
    if name == "FLOAT64":
        number = float(value)
        return "NaN" if number != number else number
    if name == "BYTES":
        return value if parsed else base64.b64encode(value).decode()
    if name in ("DATETIME", "TIMESTAMP"):
        moment = datetime.fromisoformat(value) if parsed else value
        return (moment.astimezone(UTC) if name == "TIMESTAMP" else moment).isoformat()
    if name == "JSON":
        return _numbers(value if parsed else json.loads(value, parse_float=Decimal))
    return str(value)


def _exact(number: Any) -> Decimal:
    """A number as an exact decimal, trailing zeros dropped (with every digit: Decimal's context keeps 28)."""
    with localcontext(Context(prec=100)):
        return Decimal(str(number)).normalize()


def _numbers(document: Any) -> Any:
    """A JSON document with every number as an exact decimal."""
    if isinstance(document, dict):
        return {key: _numbers(item) for key, item in document.items()}
    if isinstance(document, list):
        return [_numbers(item) for item in document]
    if isinstance(document, (int, float, Decimal)) and not isinstance(document, bool):
        return _exact(document)
    return document


def _differing(declared_cases: dict[str, tuple], bigquery: dict, duck: dict) -> dict:
    return {
        case: (bigquery[position], duck[position])
        for position, case in declared_cases.items()
        if bigquery[position] != duck[position]
    }


def test_bigquery_types_every_value_as_duckdb_does(zetasql):
    differing = {}
    for t, declared in enumerate(EVALUATED_TYPES):
        cases = {f"{t}:{v}": (declared, value) for v, value in enumerate(VALUES)}
        lines = _lines({position: '{"c": %s}' % value for position, (_, value) in cases.items()})
        columns = [LandingColumn("c", declared, bigquery_type(declared).bq_type)]
        differing.update(_differing(cases, bigquery_outcome(zetasql, lines, columns), duckdb_outcome(lines, columns)))
    assert {case: pair for case, pair in differing.items() if case not in BIGQUERY_DIFFERENCES} == {}
    assert set(BIGQUERY_DIFFERENCES) <= set(differing)


def test_bigquery_judges_every_record_as_duckdb_does(zetasql):
    cases = {f"v:{number}": data for number, data in enumerate(VERDICT_DATA)}
    lines = _lines(cases)
    columns = [LandingColumn(name, declared, bigquery_type(declared).bq_type) for name, declared in VERDICT_SCHEMA]
    bigquery = {position: outcome[:2] for position, outcome in bigquery_outcome(zetasql, lines, columns).items()}
    duck = {position: outcome[:2] for position, outcome in duckdb_outcome(lines, columns).items()}
    assert bigquery == duck
    assert sum(reason is None for reason, _ in duck.values()) == 2


#: JSON numbers whose text DuckDB writes otherwise than they are written: its JSON functions give a number's text
#: through a double (1.50 reads "1.5", 1e2 "100.0", 12345678901234567.125 "12345678901234568.0"), where GoogleSQL's
#: JSON functions over a STRING give the number as written.  Every difference below is this one, and it is
#: DuckDB's, not BigQuery's: a column landed from its text (STRING; a BIGNUMERIC wider than 38 digits, whose
#: DOUBLE on DuckDB holds fewer digits) lands the text each warehouse reads.  A BIGNUMERIC's `1e2` and `2.5E-3`
#: land alike (100 and 0.0025): its guard reads a number written with an exponent (seed 9764).
_NUMBER_TEXT = ("1.50", "12345678901234567.125", "123456789012345678901234567890.0123456789", "1e2", "2.5E-3")
BIGQUERY_DIFFERENCES = {
    **{("STRING", value): "number text" for value in _NUMBER_TEXT},
    ("STRING", '[{"d": "2024-01-01", "n": 123456789012345678.25}]'): "number text",
    **{
        (declared, value): "number text"
        for declared in ("BIGNUMERIC", "BIGNUMERIC(48, 10)")
        for value in _NUMBER_TEXT[1:3]
    },
    # BigQuery's: its arrays cannot hold NULL, so an array with a JSON null element does not fit there (DuckDB's
    # arrays hold it).
    ("ARRAY<INT64>", "[1, null]"): "null element",
}


# The envelope: each line's metadata, reason, _cdc_timestamp, _cdc_sequence and _cdc_unavailable, read by
# BigQuery's rendering of load_sql.envelopes and by DuckDB's.

_ENVELOPE_COLUMNS = ["_reason", "_detail", *METADATA_FIELDS]


def _bigquery_envelopes(zetasql, lines: list[str | None]) -> dict:
    literals = ", ".join("NULL" if line is None else _literal(line) for line in lines)
    source = f"(SELECT value, 'file' AS source_file, CAST(NULL AS BYTES) AS _bytes FROM UNNEST([{literals}]) AS value)"
    names = ", ".join(f"`{name}`" for name in _ENVELOPE_COLUMNS)
    rows = evaluate(
        zetasql,
        f"SELECT value, {names}, TO_JSON_STRING(_cdc_unavailable), "
        "FORMAT_TIMESTAMP('%Y-%m-%dT%H:%M:%E6S+00:00', _cdc_timestamp, 'UTC'), _cdc_sequence "
        f"FROM ({envelopes(source, False, BIGQUERY)})",
    )
    return {
        row[0]: _comparable([*row[1:-3], None if row[-3] is None else json.loads(row[-3]), *row[-2:]]) for row in rows
    }


def _duckdb_envelopes(lines: list[str | None]) -> dict:
    connection = duckdb.connect()
    connection.execute("SET TimeZone = 'UTC'")
    source = "(SELECT unnest(?) AS value, 'file' AS source_file, NULL::BLOB AS _bytes)"
    names = ", ".join(f'"{name}"' for name in _ENVELOPE_COLUMNS)
    rows = connection.execute(
        f"SELECT value, {names}, _cdc_unavailable, _cdc_timestamp, _cdc_sequence FROM ({envelopes(source, False)})",
        [lines],
    ).fetchall()
    return {
        row[0]: _comparable(
            [
                *row[1:-2],
                None if row[-2] is None else row[-2].astimezone(UTC).isoformat(timespec="microseconds"),
                row[-1],
            ]
        )
        for row in rows
    }


def _comparable(outcome: list) -> tuple:
    """JSON-valued metadata fields compared as JSON (each warehouse spaces them its own way)."""

    def parsed(value: Any) -> Any:
        try:
            return json.loads(value) if isinstance(value, str) and value[:1] in "[{" else value
        except ValueError:
            return value

    return tuple(parsed(value) for value in outcome)


def _literal(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n") + "'"


def test_bigquery_envelopes_are_analyzed(zetasql):
    c = catalog()
    c.add_table(
        "uniview",
        "staged",
        [("value", Scalar("STRING")), ("source_file", Scalar("STRING")), ("_bytes", Scalar("BYTES"))],
    )
    result = zetasql.analyze(envelopes("`uniview`.`staged`", False, BIGQUERY), c)
    assert result.error is None, result.error
    types = dict(result.columns)
    assert types["_cdc_timestamp"] == Scalar("TIMESTAMP") and types["_cdc_sequence"] == Scalar("STRING")
    assert types["_cdc_unavailable"] == Array(Scalar("STRING"))
    assert all(types[name] == Scalar("STRING") for name in _ENVELOPE_COLUMNS)


def test_bigquery_reads_every_envelope_as_duckdb_does(zetasql):
    bigquery, duck = _bigquery_envelopes(zetasql, ENVELOPE_LINES), _duckdb_envelopes(ENVELOPE_LINES)
    differing = {line: (bigquery[line], duck[line]) for line in ENVELOPE_LINES if bigquery[line] != duck[line]}
    assert set(differing) == set(ENVELOPE_DIFFERENCES)


#: Lines BigQuery reads otherwise than DuckDB, and why.
ENVELOPE_DIFFERENCES = {
    # NaN and Infinity are not JSON, and BigQuery forces this one: its parser (PARSE_JSON) refuses the line, and
    # its JSON functions read nothing of it (JSON_VALUE gives NULL at every path, that of a plain number too), so
    # it is unparseable there; DuckDB's parser, like Spark's reader, lets them through (a JSON column still
    # refuses them on DuckDB).
    '{"data": {"x": NaN}, "metadata": {"table_name": "t"}}': "NaN",
}


def test_bigquery_sequences_equal_the_reference_on_every_shape(zetasql):
    """_cdc_sequence in BigQuery (REGEXP_EXTRACT takes one group, INT64 is signed: an LSN goes through
    BIGNUMERIC) against sequence.sequence_of, on every shape (tests/sink/test_sink_tenants.py's)."""
    positions = [
        "mysql-bin.000003:1234",
        "mysql-bin.000003:1234:7",
        "binlog.000010:4",
        "23923456",
        "0/16B3748",
        "1/0",
        "FFFFFFFF/FFFFFFFF",
        "mysql-bin.index",
        "",
        "12:ab",
        "123456789012345678901",
        None,
    ]
    literals = ", ".join("NULL" if p is None else _literal(p) for p in positions)
    sequence = sequence_sql(exp.column("p"), BIGQUERY).sql("bigquery")
    rows = evaluate(zetasql, f"SELECT {sequence} FROM UNNEST([{literals}]) AS p WITH OFFSET AS o ORDER BY o")
    assert [row[0] for row in rows] == [sequence_of(p) for p in positions]


# Routing: each line joined to its key's decision (a route, or a rejection), and the routes' records typed.


def _plan(keys: list[RecordKey]) -> RoutingPlan:
    """Decisions for `keys`: every third rejected, the others routed to two routes."""
    plan = RoutingPlan()
    for number, key in enumerate(keys):
        if number % 3 == 2:
            plan.decisions[key] = Decision("cdc", reason="invalid_schema", detail=f"rejected {number}", version="v9")
        else:
            plan.decisions[key] = Decision("cdc" if number % 2 else "other", route=number % 2, version="v1")
    return plan


def test_bigquery_routes_every_line_as_duckdb_does(zetasql):
    connection = duckdb.connect()
    connection.execute("SET TimeZone = 'UTC'")
    source = "(SELECT unnest(?) AS value, 'file' AS source_file, NULL::BLOB AS _bytes)"
    lines = envelopes(source, False)
    keys = [key_of(row) for row in connection.execute(routing_keys(lines), [ENVELOPE_LINES]).fetchall()]
    assert len(keys) > 3
    plan = _plan(keys)
    connection.execute(decisions_table("decisions"), [decisions_json(plan)])
    selected = "value, _dataset, _route, _version, _reason, _detail, _cdc_position, _cdc_sequence, _cdc_database"
    duck = {
        row[0]: row[1:]
        for row in connection.execute(
            f"SELECT {selected} FROM ({routed_lines(lines, 'decisions', 'quarantine')})", [ENVELOPE_LINES]
        ).fetchall()
    }
    literals = ", ".join("NULL" if line is None else _literal(line) for line in ENVELOPE_LINES)
    bigquery_source = (
        f"(SELECT value, 'file' AS source_file, CAST(NULL AS BYTES) AS _bytes FROM UNNEST([{literals}]) AS value)"
    )
    decisions = bigquery_decisions(_literal(decisions_json(plan)))
    routed = routed_lines(envelopes(bigquery_source, False, BIGQUERY), decisions, "quarantine", BIGQUERY)
    rows = evaluate(zetasql, f"SELECT {selected.replace('_route', 'CAST(_route AS STRING)')} FROM ({routed})")
    bigquery = {
        row[0]: tuple(None if cell is None else int(cell) if i == 1 else cell for i, cell in enumerate(row[1:]))
        for row in rows
    }
    differing = {line: (bigquery[line], duck[line]) for line in ENVELOPE_LINES if bigquery[line] != duck[line]}
    assert set(differing) == set(ENVELOPE_DIFFERENCES)
    assert {row[3] for row in duck.values()} >= {None, "invalid_schema", "invalid_metadata", "missing_metadata"}


def test_bigquery_routing_and_typing_statements_are_analyzed(zetasql):
    """The statements of a BigQuery load over a staged table: the routing keys, and each route's records typed."""
    c = catalog()
    staged = [("value", Scalar("STRING")), ("source_file", Scalar("STRING")), ("_bytes", Scalar("BYTES"))]
    c.add_table("uniview", "staged", staged)
    lines = envelopes("`uniview`.`staged`", False, BIGQUERY)
    keys = zetasql.analyze(routing_keys(lines, BIGQUERY), c)
    assert keys.error is None, keys.error
    assert keys.types == [Scalar("STRING")] * len(KEY_COLUMNS) + [Scalar("TIMESTAMP"), Scalar("STRING")]  # first seen
    decisions = bigquery_decisions("'[]'")
    routed = f"({routed_lines(lines, decisions, 'quarantine', BIGQUERY)})"
    columns = _columns(MANY)
    typed = zetasql.analyze(typed_routes(routed, [0, 3], columns, BIGQUERY), c)
    assert typed.error is None, typed.error
    types = dict(typed.columns)
    assert [types[f"t{j}"] for j in range(len(columns))] == [column.bq_type.base() for column in columns]
    assert types["raw_bytes"] == Scalar("BYTES") and types["_cdc_unavailable"] == Array(Scalar("STRING"))


# A DELETE lands its before image: a value outside the primary key that does not fit lands NULL, named in the row's
# _cdc_unavailable, rather than quarantining the delete (MariaDB's TIME past a day, PostgreSQL's year 10000).

#: A version keyed by `id` whose rows' values BigQuery cannot hold.
DELETE_SCHEMA = [("id", "int(11)"), ("t", "time"), ("d", "date"), ("a", "ARRAY<INT64>"), ("doc", "text")]
#: {name: (data, operation)}.
DELETE_RECORDS = {
    "delete": ('{"id": 1, "t": "24:00:01", "d": "10000-01-01", "a": [1, "x"], "doc": "x"}', "DELETE"),
    "delete that fits": ('{"id": 2, "t": "10:00:00", "d": "2024-01-01", "a": [1]}', "DELETE"),
    "update": ('{"id": 1, "t": "24:00:01"}', "UPDATE"),
    "insert": ('{"id": 3, "d": "0000-12-31"}', "INSERT"),
    "snapshot": ('{"id": 3, "a": [1, "x"]}', "SNAPSHOT"),
    "no operation": ('{"id": 3, "t": "-01:00:00"}', None),
    "delete of a key that does not fit": ('{"id": "x", "t": "24:00:01"}', "DELETE"),
}
_MISFIT = "type_mismatch", "values that do not fit: "


def _delete_outcomes(outcome: dict) -> dict:
    """{name: (reason, detail, id, unfit)}, unfit only for a row that lands."""
    cases = list(DELETE_RECORDS)
    return {cases[int(p)]: (*o[:3], o[3] if o[0] is None else "-") for p, o in outcome.items()}


def test_a_delete_lands_its_non_key_values_that_do_not_fit_as_null(zetasql):
    columns = _columns(DELETE_SCHEMA)
    lines = _lines(
        {str(n): data for n, (data, _) in enumerate(DELETE_RECORDS.values())},
        {str(n): operation for n, (_, operation) in enumerate(DELETE_RECORDS.values())},
    )
    for key in (("id",), ("ID",)):  # a key's names are compared without case
        bigquery = _delete_outcomes(bigquery_outcome(zetasql, lines, columns, key))
        assert bigquery == _delete_outcomes(duckdb_outcome(lines, columns, key))
        assert bigquery == {
            "delete": (None, None, Decimal(1), ["t", "d", "a"]),
            "delete that fits": (None, None, Decimal(2), []),
            "update": (*_MISFIT[:1], _MISFIT[1] + "t (time)", None, "-"),
            "insert": (*_MISFIT[:1], _MISFIT[1] + "d (date)", None, "-"),
            "snapshot": (*_MISFIT[:1], _MISFIT[1] + "a (ARRAY<INT64>)", None, "-"),
            "no operation": (*_MISFIT[:1], _MISFIT[1] + "t (time)", None, "-"),
            "delete of a key that does not fit": (*_MISFIT[:1], _MISFIT[1] + "id (int(11)), t (time)", None, "-"),
        }
    # without a declared key (or with one naming no column of the version), a row is known by all its values: a
    # DELETE is judged as every record
    assert excused_columns(columns, ("id",)) == [1, 2, 3, 4] and excused_columns(columns, ("id", "nope")) == []
    keyless = bigquery_outcome(zetasql, lines, columns)
    assert keyless == duckdb_outcome(lines, columns)
    assert keyless["0"][:2] == (_MISFIT[0], _MISFIT[1] + "t (time), d (date), a (ARRAY<INT64>)")
    assert keyless["1"][0] is None


#: {position: (data, operation, metadata.unavailable, what lands)} of records landed through routing
#: (load_sql.typed_routes): what lands is the row's _cdc_unavailable (or its quarantine reason).  The columns of a
#: DELETE that do not fit follow metadata.unavailable's names, each once; a record with none keeps
#: metadata.unavailable as it is.
DELETE_UNAVAILABLE: dict[str, tuple[dict, str, list[str] | None, Any]] = {
    "1": ({"id": 1, "t": "24:00:01"}, "DELETE", ["doc"], ["doc", "t"]),
    "2": ({"id": 2, "t": "24:00:01", "d": "10000-01-01"}, "DELETE", None, ["t", "d"]),
    "3": ({"id": 3, "t": "24:00:01"}, "DELETE", ["t"], ["t"]),
    "4": ({"id": 4, "t": "10:00:00"}, "DELETE", ["doc"], ["doc"]),
    "5": ({"id": 5, "t": "10:00:00"}, "DELETE", None, None),
    "6": ({"id": 6, "t": "10:00:00"}, "INSERT", [], []),
    "7": ({"id": 1, "t": "24:00:01"}, "UPDATE", None, "type_mismatch"),
}


def delete_lines() -> list[str]:
    """The lines of DELETE_UNAVAILABLE, each with its position."""
    lines = []
    for position, (data, operation, unavailable, _) in DELETE_UNAVAILABLE.items():
        metadata = {"table_name": "t", "operation": operation, "position": position}
        lines.append(
            json.dumps(
                {"data": data, "metadata": metadata | ({} if unavailable is None else {"unavailable": unavailable})}
            )
        )
    return lines


def duckdb_delete_unavailable() -> tuple[dict, RoutingPlan]:
    """{position: its _cdc_unavailable, or its reason} as DuckDB's load step routes and types delete_lines() (every
    key to route 0, a version of DELETE_SCHEMA keyed by id), and the plan it routed them by."""
    lines = delete_lines()
    connection = duckdb.connect()
    connection.execute("SET TimeZone = 'UTC'")
    source = envelopes("(SELECT unnest(?) AS value, 'file' AS source_file, NULL::BLOB AS _bytes)", False)
    keys = [key_of(row) for row in connection.execute(routing_keys(source), [lines]).fetchall()]
    plan = RoutingPlan(decisions={k: Decision("cdc", route=0, version="v1") for k in keys})
    connection.execute(decisions_table("decisions"), [decisions_json(plan)])
    routed = f"({routed_lines(source, 'decisions', 'quarantine')})"
    typed = typed_routes(routed, [0], _columns(DELETE_SCHEMA), key=("id",))
    rows = connection.execute(f"SELECT _cdc_position, reason, _cdc_unavailable FROM ({typed})", [lines]).fetchall()
    return {position: reason or unavailable for position, reason, unavailable in rows}, plan


def test_a_delete_names_its_columns_that_do_not_fit_after_metadata_unavailable(zetasql):
    duck, plan = duckdb_delete_unavailable()
    assert duck == {position: case[-1] for position, case in DELETE_UNAVAILABLE.items()}
    literals = ", ".join(map(_literal, delete_lines()))
    source = f"(SELECT value, 'file' AS source_file, CAST(NULL AS BYTES) AS _bytes FROM UNNEST([{literals}]) AS value)"
    decisions = bigquery_decisions(_literal(decisions_json(plan)))
    routed = f"({routed_lines(envelopes(source, False, BIGQUERY), decisions, 'quarantine', BIGQUERY)})"
    typed = typed_routes(routed, [0], _columns(DELETE_SCHEMA), BIGQUERY, ("id",))
    rows = evaluate(zetasql, f"SELECT _cdc_position, reason, TO_JSON_STRING(_cdc_unavailable) FROM ({typed})")
    assert {position: reason or json.loads(unavailable) for position, reason, unavailable in rows} == duck
