"""The load step's typing rendered for BigQuery (uniview.sink.load_sql with load_dialect.BIGQUERY), run by the
local BigQuery emulator, against DuckDB's load step: the same odd values and records (typing_cases) land the
same values and are quarantined for the same reasons and details.

The emulator runs BigQuery SQL translated to DuckDB's; its shim gives JSON_VALUE, JSON_QUERY and
JSON_QUERY_ARRAY over text GoogleSQL's semantics (uniview.local.bigquery_emulator_json), without which the
statements of a STRUCT or ARRAY column failed ("Malformed JSON") and a decimal was read through a double.
GEOGRAPHY is left out: BigQuery lands only a geography (SAFE.ST_GEOGFROMTEXT), DuckDB the text."""

from __future__ import annotations

import json
import sys
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from uniview.core.types import Scalar
from uniview.local.bigquery_emulator import (
    DEFAULT_PROJECT,
    emulator_environment,
    emulator_venv_path,
    find_emulator_venv,
)
from uniview.sink.load_dialect import BIGQUERY
from uniview.sink.load_sql import (
    bigquery_decisions,
    decisions_json,
    decisions_table,
    envelopes,
    key_of,
    routed_lines,
    routing_keys,
    typed_records,
    typed_routes,
)
from uniview.sink.mysql_types import bigquery_type
from uniview.sink.routing import LandingColumn

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1] / "zetasql"))
from test_zetasql_load_typing import (
    _ENVELOPE_COLUMNS,
    BIGQUERY_DIFFERENCES,
    DELETE_SCHEMA,
    DELETE_UNAVAILABLE,
    ENVELOPE_DIFFERENCES,
    _columns,
    _comparable,
    _duckdb_envelopes,
    _lines,
    _plan,
    canonical,
    delete_lines,
    duckdb_delete_unavailable,
    duckdb_outcome,
)
from typing_cases import ENVELOPE_LINES, ESCAPED_CONTROLS, TYPES, VALUES, VERDICT_DATA, VERDICT_SCHEMA


@pytest.fixture(scope="module")
def emulator(tmp_path_factory):
    """A plain google-cloud-bigquery client on a running emulator."""
    if find_emulator_venv() is None:
        pytest.skip(
            f"BigQuery emulator not installed in {emulator_venv_path()}: run scripts/setup-bigquery-emulator.sh"
        )
    from google.auth.credentials import AnonymousCredentials
    from google.cloud import bigquery

    with emulator_environment(tmp_path_factory.mktemp("bigquery-typing")) as host:
        client = bigquery.Client(
            project=DEFAULT_PROJECT,
            credentials=AnonymousCredentials(),
            client_options={"api_endpoint": f"http://{host}"},
        )
        yield client
        client.close()


def _literal(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def emulator_outcome(client, lines: dict[str, str], columns: list[LandingColumn]) -> dict:
    """{position: (reason, detail, value)} as the emulator runs BigQuery's rendering over `lines`.  A value is
    selected only for a row that lands (BigQuery refuses to return an ARRAY with a NULL element, which a
    quarantined row's may hold), as TO_JSON_STRING but for BYTES (the emulator's gives the bytes, not base64)."""
    typed = typed_records(f"UNNEST([{', '.join(map(_literal, lines.values()))}]) AS value", columns, BIGQUERY)
    bq_type = columns[0].bq_type if columns else None
    as_text = bq_type is not None and bq_type != Scalar("BYTES")
    value = "NULL" if bq_type is None else ("TO_JSON_STRING(t0)" if as_text else "t0")
    rows = client.query(
        f"SELECT JSON_VALUE(value, '$.metadata.position') AS position, reason, detail, "
        f"IF(reason IS NULL, {value}, NULL) AS landed FROM ({typed})"
    ).result()
    outcome = {}
    for row in rows:
        landed = row["landed"]
        if landed is not None and bq_type is not None:
            landed = canonical(json.loads(landed, parse_float=Decimal) if as_text else landed, bq_type, parsed=as_text)
        outcome[row["position"]] = (row["reason"], row["detail"], landed)
    return outcome


#: Where the emulator's landing differs from DuckDB's: where BigQuery's does (DuckDB's text of a JSON number: its
#: functions read a number through a double, GoogleSQL's give it as written; BIGQUERY_DIFFERENCES), and a BIGNUMERIC
#: of 40 digits, which DuckDB lands (its double's text, `1.2345678901234568E+29`) as BigQuery does, and the emulator
#: cannot hold (it keeps BIGNUMERIC in DuckDB's DECIMAL(38)).
_WIDE = "123456789012345678901234567890.0123456789"
EXPECTED = dict(BIGQUERY_DIFFERENCES)


#: The values the emulator is given as SQL literals: not those whose strings escape a control character, whose lines
#: the emulator does not read as JSON when given so (JSON_VALUE of their position is NULL there); the sink's files
#: bring them to it in test_sink_warehouses_agree.py, and ZetaSQL's reference implementation reads them.
EMULATED_VALUES = [value for value in VALUES if value not in ESCAPED_CONTROLS]


def test_the_emulator_types_every_value_as_duckdb_does(emulator):
    differing = {}
    for t, declared in enumerate(TYPES):
        if declared == "GEOGRAPHY":
            continue
        cases = {f"{t}:{v}": (declared, value) for v, value in enumerate(EMULATED_VALUES)}
        lines = _lines({position: '{"c": %s}' % value for position, (_, value) in cases.items()})
        columns = [LandingColumn("c", declared, bigquery_type(declared).bq_type)]
        bigquery, duck = emulator_outcome(emulator, lines, columns), duckdb_outcome(lines, columns)
        differing.update({case: (bigquery[p], duck[p]) for p, case in cases.items() if bigquery[p] != duck[p]})
    unexpected = {case: pair for case, pair in differing.items() if case not in EXPECTED}
    assert unexpected == {}
    assert set(EXPECTED) <= set(differing)
    # a wide decimal's guard reads a number written with an exponent: "1e2" (the emulator) and "100.0" (DuckDB)
    assert ("BIGNUMERIC", "1e2") not in differing and ("BIGNUMERIC(48, 10)", "2.5E-3") not in differing
    emulator_reads, duckdb_reads = differing[("BIGNUMERIC", _WIDE)]
    assert emulator_reads[0] == "type_mismatch" and duckdb_reads[0] is None


def test_the_emulator_judges_every_record_as_duckdb_does(emulator):
    cases = {f"v:{number}": data for number, data in enumerate(VERDICT_DATA)}
    lines = _lines(cases)
    columns = [LandingColumn(name, declared, bigquery_type(declared).bq_type) for name, declared in VERDICT_SCHEMA]
    bigquery = {p: outcome[:2] for p, outcome in emulator_outcome(emulator, lines, columns).items()}
    duck = {p: outcome[:2] for p, outcome in duckdb_outcome(lines, columns).items()}
    assert bigquery == duck
    assert sum(reason is None for reason, _ in duck.values()) == 2


def test_text_that_is_not_json_reads_as_null_and_numbers_as_written(emulator):
    """GoogleSQL's JSON functions over a STRING (ZetaSQL's reference implementation gives these rows)."""
    row = next(
        iter(
            emulator.query(
                """SELECT JSON_QUERY('x', '$') AS q, JSON_VALUE('"x', '$') AS v, JSON_QUERY_ARRAY('[1,', '$') AS a,
                  JSON_VALUE('{"a": 1.50, "a": 2}', '$."a"') AS first, JSON_QUERY('{"a": {"b": 2e3, "b": 1}}', '$.a') AS o,
                  JSON_QUERY_ARRAY('[12345678901234567.125, "s", null]') AS e, JSON_VALUE('{"a": null}', '$.a') AS n"""
            ).result()
        )
    )
    assert (row["q"], row["v"], row["a"]) == (None, None, [])
    assert row["first"] == "1.50" and row["o"] == '{"b":2e3,"b":1}' and row["n"] is None
    assert row["e"] == ["12345678901234567.125", '"s"', "null"]


def _emulator_envelopes(client, lines: list[str | None]) -> dict:
    """{line: its envelope} as the emulator runs BigQuery's rendering (the lines a query parameter; an ARRAY holds
    no NULL, so a NULL line is added to it as a row)."""
    from google.cloud import bigquery

    given = [line for line in lines if line is not None]
    source = (
        "(SELECT value, 'file' AS source_file, CAST(NULL AS BYTES) AS _bytes FROM UNNEST(@lines) AS value"
        " UNION ALL SELECT CAST(NULL AS STRING), 'file', CAST(NULL AS BYTES))"
    )
    names = ", ".join(f"`{name}`" for name in _ENVELOPE_COLUMNS)
    rows = client.query(
        f"SELECT value, {names}, TO_JSON_STRING(_cdc_unavailable) AS unavailable_list, "
        "FORMAT_TIMESTAMP('%Y-%m-%dT%H:%M:%E6S+00:00', _cdc_timestamp, 'UTC') AS stamp, _cdc_sequence "
        f"FROM ({envelopes(source, False, BIGQUERY)})",
        job_config=bigquery.QueryJobConfig(query_parameters=[bigquery.ArrayQueryParameter("lines", "STRING", given)]),
    ).result()
    return {
        row[0]: _comparable([*row[1:-3], None if row[-3] is None else json.loads(row[-3]), *row[-2:]]) for row in rows
    }


def test_the_emulator_reads_every_envelope_as_duckdb_does(emulator):
    emulated, duck = _emulator_envelopes(emulator, ENVELOPE_LINES), _duckdb_envelopes(ENVELOPE_LINES)
    differing = {line: (emulated[line], duck[line]) for line in ENVELOPE_LINES if emulated[line] != duck[line]}
    assert set(differing) == set(ENVELOPE_DIFFERENCES)  # NaN: BigQuery's parser refuses the line
    assert all(emulated[line][0] == "unparseable" for line in ENVELOPE_DIFFERENCES)


def test_the_emulator_routes_and_types_every_line_as_duckdb_does(emulator):
    """A batch's load over staged lines: its routing keys, each line joined to its key's decision (given as one
    query parameter, as decisions_json writes it) and the routes' records typed, on the emulator and on DuckDB."""
    from google.cloud import bigquery

    connection = duckdb.connect()
    connection.execute("SET TimeZone = 'UTC'")
    lines = envelopes("(SELECT unnest(?) AS value, 'file' AS source_file, NULL::BLOB AS _bytes)", False)
    duck_keys = connection.execute(routing_keys(lines), [ENVELOPE_LINES]).fetchall()
    plan = _plan([key_of(row) for row in duck_keys])
    connection.execute(decisions_table("decisions"), [decisions_json(plan)])
    columns = [LandingColumn("id", "int(11)", bigquery_type("int(11)").bq_type)]
    duck_routed = f"({routed_lines(lines, 'decisions', 'quarantine')})"
    selected = "value, _dataset, _route, _version, _reason, _detail, _cdc_position, _cdc_sequence, _cdc_database"
    typed = "_route, t0, reason, detail, raw_line, decode(raw_bytes) AS raw_text, _cdc_operation, _version"
    duck = connection.execute(f"SELECT {selected} FROM {duck_routed}", [ENVELOPE_LINES]).fetchall()
    duck_typed = connection.execute(
        f"SELECT {typed} FROM ({typed_routes(duck_routed, [0, 1], columns)})", [ENVELOPE_LINES]
    ).fetchall()

    given = [line for line in ENVELOPE_LINES if line is not None]
    staged = (
        "(SELECT value, 'file' AS source_file, CAST(NULL AS BYTES) AS _bytes FROM UNNEST(@lines) AS value"
        " UNION ALL SELECT CAST(NULL AS STRING), 'file', CAST(NULL AS BYTES))"
    )
    parameters = [
        bigquery.ArrayQueryParameter("lines", "STRING", given),
        bigquery.ScalarQueryParameter("decisions", "STRING", decisions_json(plan)),
    ]
    config = bigquery.QueryJobConfig(query_parameters=parameters)
    bq_lines = envelopes(staged, False, BIGQUERY)
    keys = emulator.query(routing_keys(bq_lines, BIGQUERY), job_config=config).result()
    assert {tuple(row.values()) for row in keys} == set(duck_keys)
    routed = f"({routed_lines(bq_lines, bigquery_decisions('@decisions'), 'quarantine', BIGQUERY)})"
    emulated = {
        row[0]: tuple(row.values()) for row in emulator.query(f"SELECT {selected} FROM {routed}", config).result()
    }
    differing = {row[0] for row in duck if emulated[row[0]] != row}
    assert differing == set(ENVELOPE_DIFFERENCES)
    assert {row[4] for row in duck} >= {None, "invalid_schema", "invalid_metadata", "missing_metadata"}

    typed_bq = typed.replace("decode(raw_bytes)", "SAFE_CONVERT_BYTES_TO_STRING(raw_bytes)")
    emulated_typed = emulator.query(
        f"SELECT {typed_bq} FROM ({typed_routes(routed, [0, 1], columns, BIGQUERY)})", config
    )
    assert sorted((tuple(row.values()) for row in emulated_typed.result()), key=repr) == sorted(duck_typed, key=repr)
    reasons = {row[2] for row in duck_typed}
    assert reasons >= {None, "invalid_data"} and len(reasons) >= 3, reasons


def test_a_geography_lands_only_when_bigquery_reads_it_as_one(emulator):
    """The choice BigQuery forces: its rendering lands text SAFE.ST_GEOGFROMTEXT reads (as BigQuery writes it),
    and quarantines any other, which DuckDB lands as text."""
    columns = [LandingColumn("c", "GEOGRAPHY", bigquery_type("GEOGRAPHY").bq_type)]
    values = [*EMULATED_VALUES, '"LINESTRING(0 0, 1 1)"', '"POINT(1 2 3 4 5)"']
    lines = _lines({str(number): '{"c": %s}' % value for number, value in enumerate(values)})
    typed = typed_records(f"UNNEST([{', '.join(map(_literal, lines.values()))}]) AS value", columns, BIGQUERY)
    rows = emulator.query(
        f"SELECT JSON_VALUE(value, '$.metadata.position') AS position, reason, "
        f"IF(reason IS NULL, ST_ASTEXT(t0), NULL) AS landed FROM ({typed})"
    ).result()
    emulated = {row["position"]: (row["reason"], row["landed"]) for row in rows}
    duck = duckdb_outcome(lines, columns)
    landed = {values[int(p)]: text for p, (reason, text) in emulated.items() if reason is None and text is not None}
    assert landed == {'"POINT(1 2)"': "POINT(1 2)", '"LINESTRING(0 0, 1 1)"': "LINESTRING(0 0, 1 1)"}
    kept = {p for p, (reason, _) in emulated.items() if reason is None}
    assert {values[int(p)] for p in kept} == {*landed, "null"}
    assert {p for p, outcome in duck.items() if outcome[0] is None} == set(emulated)  # DuckDB lands all as text
    assert {emulated[p][0] for p in set(emulated) - kept} == {"type_mismatch"}


def test_the_emulator_lands_a_delete_whose_non_key_values_do_not_fit_as_duckdb_does(emulator):
    """A DELETE's non-key values that do not fit land NULL, named in `_cdc_unavailable` after metadata.unavailable's
    names (test_zetasql_load_typing.DELETE_UNAVAILABLE), routed and typed on the emulator as on DuckDB."""
    from google.cloud import bigquery

    duck, plan = duckdb_delete_unavailable()
    assert duck == {position: case[-1] for position, case in DELETE_UNAVAILABLE.items()}
    parameters = [
        bigquery.ArrayQueryParameter("lines", "STRING", delete_lines()),
        bigquery.ScalarQueryParameter("decisions", "STRING", decisions_json(plan)),
    ]
    source = "(SELECT value, 'file' AS source_file, CAST(NULL AS BYTES) AS _bytes FROM UNNEST(@lines) AS value)"
    routed = f"({routed_lines(envelopes(source, False, BIGQUERY), bigquery_decisions('@decisions'), 'quarantine', BIGQUERY)})"
    typed = typed_routes(routed, [0], _columns(DELETE_SCHEMA), BIGQUERY, ("id",))
    rows = emulator.query(
        f"SELECT _cdc_position, reason, TO_JSON_STRING(_cdc_unavailable) AS unavailable FROM ({typed})",
        job_config=bigquery.QueryJobConfig(query_parameters=parameters),
    ).result()
    emulated = {row["_cdc_position"]: row["reason"] or json.loads(row["unavailable"]) for row in rows}
    assert emulated == duck
