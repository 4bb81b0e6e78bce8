"""The odd values and records both typings are checked on: every value of VALUES declared as every type of
TYPES, and the records of a version of several columns whose data lands or is quarantined for each reason.
Shared by the differential tests of the load step's typing (tests/sink/test_load_typing.py, on DuckDB and
Spark) and tests/zetasql/test_zetasql_load_typing.py (BigQuery's rendering, run by ZetaSQL's reference
implementation)."""

from __future__ import annotations

import json

#: Declared as a source declares them (NUMERIC is MySQL's: DECIMAL(10, 0)); each lands as its sink mapping.
TYPES = [
    "INT64",
    "FLOAT64",
    "NUMERIC",
    "NUMERIC(10, 2)",
    "NUMERIC(20, 3)",
    "BIGNUMERIC",
    "BIGNUMERIC(48, 10)",
    "BOOL",
    "STRING",
    "BYTES",
    "DATE",
    "DATETIME",
    "TIMESTAMP",
    "TIME",
    "JSON",
    "GEOGRAPHY",
    "STRUCT<a INT64, b STRING>",
    "ARRAY<INT64>",
    "ARRAY<STRUCT<d DATE, n NUMERIC(20, 2)>>",
]
#: Objects and arrays whose strings hold characters GoogleSQL escapes otherwise than DuckDB writes them.
ESCAPED_CONTROLS = ['{"k": "a\\u001Fb\\u007f\\u2028/", "\\u000B": "\\\\u001F"}', '["x\\u0001", "\\u2029"]']
#: JSON values as written in the record (not re-serialized, so 1.50 stays 1.50).
VALUES = [
    "0",
    "1",
    "5",
    "-7",
    "1.5",
    "1.50",
    "-0.0",
    "1e2",
    "2.5E-3",
    "12.345",
    "99999999.995",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "12345678901234567890",
    "12345678901234567.125",
    "123456789012345678901234567890.0123456789",
    '"12"',
    '"-12"',
    '"1.5"',
    '" 12"',
    '"12 "',
    '"1e3"',
    '"abc"',
    '""',
    '"NaN"',
    '"Infinity"',
    '"-inf"',
    "true",
    "false",
    '"true"',
    '"TRUE"',
    '"False"',
    '"0"',
    '"00"',
    '"01"',
    '"-1"',
    "null",
    '{"a": 1, "b": "x"}',
    "[1, 2]",
    "[]",
    "{}",
    '{"a": "1"}',
    '{"a": 1.5}',
    '{"a": 1, "z": 2}',
    '{"b": null}',
    '[1, "2"]',
    "[1, null]",
    "[1.5]",
    '[{"d": "2024-01-01", "n": 123456789012345678.25}]',
    '[{"d": "2024-13-01"}]',
    '[{"d": "2024-01-01", "x": true}]',
    "[[1]]",
    '"2024-02-29"',
    '"2024-02-30"',
    '"0001-01-01"',
    '"9999-12-31"',
    '"2024-5-1"',
    '"2024-05-01 10:00:00"',
    '"2024-05-01T10:00:00.123456"',
    '"2024-05-01T10:00:00.1234567"',
    '"2024-05-01T10:00:00Z"',
    '"2024-05-01 23:59:60"',
    '"2024-05-01 10:60:00"',
    '"2024-05-01T10:00:00+02:00"',
    '"2024-05-01T10:00:00-0530"',
    '"2024-05-01T24:00:00"',
    '"23:59:59.999999"',
    '"24:00:00"',
    '"7:00:00"',
    '"[1,]"',
    '"[NaN]"',
    '"{\\"a\\": Infinity}"',
    '"\\"NaN\\""',
    '"1e5"',
    '"null"',
    '"  true "',
    '"aGVsbG8="',
    '"aGVsbG8"',
    '"aGVs bG8="',
    '"{\\"k\\": [1, 2]}"',
    '"1, 2"',
    '"POINT(1 2)"',
    '"caf\\u00e9"',
    *ESCAPED_CONTROLS,
]
#: A version of several columns, and the data of its records: each lands, or is quarantined for a reason
#: and detail that the SQL verdict must give too.
VERDICT_SCHEMA = [
    ("id", "int(11)"),
    ("name", "varchar(20)"),
    ("d", "date"),
    ("item", "STRUCT<qty INT64>"),
    ("n", "decimal(20,2)"),
    ("m", "decimal(20,2)"),
]
VERDICT_DATA = [
    None,
    '"x"',
    "[1]",
    "{}",
    '{"id": 1, "name": "a"}',
    '{"id": 1, "id": 2}',
    '{"id": 1, "zz": 2, "aa": 3}',
    '{"ID": 1}',
    '{"id": "x", "d": "2024-13-01", "name": "ok"}',
    '{"zz": 1, "zz": 2}',
    '{"n": 1.5, "m": "x"}',
    '{"item": {"qty": 1.5}, "name": 7}',
    '{"item": {"qty": 1.5}, "n": 12.5}',
]


_META = {
    "database_name": "shop",
    "table_name": "customer",
    "table_version": "v1",
    "operation": "INSERT",
    "position": "mysql-bin.000003:1234",
    "timestamp": "2024-05-01T10:00:00Z",
    "schema": [{"name": "id", "type": "int"}],
}


def _line(**changes) -> str:
    return json.dumps({"data": {"id": 1}, "metadata": {**_META, **changes}})


#: Schema-change records of no table (operation DDL, no table_name), as the Debezium conversion makes them of the
#: snapshot's `SET character_set_server=...`: skipped (schema_change_without_table), stored nowhere.
SCHEMA_CHANGES_WITHOUT_TABLE = [
    '{"data": {"ddl": "SET character_set_server=utf8mb4"}, "metadata": {"operation": "DDL", "position": "b.1:4:0"}}',
    '{"data": {"ddl": "SET collation_server=utf8mb4_bin"}, "metadata": {"operation": "DDL", "table_name": null}}',
]

#: Lines whose top level or metadata names a key twice: quarantined as duplicate_key on both warehouses (which of
#: the two values was meant is unknowable), their raw_line and raw_bytes the line as read.
REPEATED_KEYS = [
    _line().replace('"data": {"id": 1}', '"data": {"id": 1}, "data": {"id": 2}'),
    _line().replace('"data": {"id": 1}', '"data": {"id": 1}, "data": null'),
    _line().replace('"table_name": "customer"', '"table_name": "customer", "table_name": "order"'),
    _line().replace('"operation": "INSERT"', '"operation": "INSERT", "operation": "INSERT"'),
    '{"metadata": {"table_name": "t"}, "data": {"id": 1}, "metadata": {"table_name": "u"}}',
    '{"metadata": {"table_name": "t", "t\\u0061ble_name": "u"}, "data": {}}',  # one key, one of them escaped
    '{"metadata": {}, "metadata": null}',
]
#: Lines where the same name appears twice but at different places (no object names a key twice): not
#: duplicate_key.
NOT_REPEATED_KEYS = [
    _line().replace('"data": {"id": 1}', '"data": {"data": 1, "id": 1}'),
    _line().replace('"data": {"id": 1}', '"data": {"id": 1}, "table_name": "customer"'),
    _line().replace('"data": {"id": 1}', '"data": {"id": 1, "s": "\\"data\\": 1"}'),
]

#: A version of a JSON column and a STRING column, and its lines past the limits of BigQuery's JSON type
#: (uniview.sink.json_limits): {line: its reason}.  A line nested deeper than 500 levels, or holding a number beyond
#: a double, is quarantined before its JSON is read; a JSON column's string whose JSON text is past them does not fit.
LIMITS_SCHEMA = [{"name": "id", "type": "int"}, {"name": "doc", "type": "json"}, {"name": "s", "type": "text"}]


def _limits_line(number: int, column: str, value: str) -> str:
    """A line of the version of LIMITS_SCHEMA whose `column` is `value` (a JSON text, written as it is)."""
    metadata = {**_META, "table_name": "limits", "schema": LIMITS_SCHEMA, "position": f"mysql-bin.000004:{number}"}
    return '{"data": {"id": %d, "%s": %s}, "metadata": %s}' % (number, column, value, json.dumps(metadata))


PAST_JSON_LIMITS = {
    _limits_line(1, "doc", "[" * 1000 + "]" * 1000): "json_too_deep",
    _limits_line(2, "doc", "1e999"): "json_number_out_of_range",
    _limits_line(3, "s", "-1e999"): "json_number_out_of_range",
    _limits_line(4, "doc", '{"a": [1, -1e999]}'): "json_number_out_of_range",
    _limits_line(5, "doc", '"-1e999"'): "type_mismatch",
    _limits_line(6, "doc", json.dumps("[" * 501 + "]" * 501)): "type_mismatch",
    # a number past a double wherever a number begins: after "[", after "," and blanks, 310 digits with no exponent
    # after ": ", 216 digits before a two-digit exponent
    _limits_line(7, "doc", "[-1e999]"): "json_number_out_of_range",
    _limits_line(8, "doc", "[1, \t2.5E+400]"): "json_number_out_of_range",
    _limits_line(9, "doc", "9" * 310): "json_number_out_of_range",
    _limits_line(10, "doc", '{"a": 1%se99}' % ("0" * 215)): "json_number_out_of_range",
}
#: A line of the same version 500 levels deep, which lands (left out of ENVELOPE_LINES: the reference implementation
#: of GoogleSQL reads the keys of so deep a line slowly).
AT_DEPTH_LIMIT = _limits_line(11, "doc", "[" * 498 + "]" * 498)
#: Lines of the same version within the limits, which land: a string of JSON text 500 levels deep, the largest
#: double, an object with characters GoogleSQL escapes otherwise than DuckDB writes them.
WITHIN_JSON_LIMITS = [
    _limits_line(12, "doc", json.dumps("[" * 500 + "]" * 500)),
    _limits_line(13, "doc", "-1.7976931348623157e308"),
    _limits_line(15, "doc", "[12345678901234567890123456789, 1e300, -2.5E-999]"),
    _limits_line(14, "s", '{"k": "a\\u001Fb\\u007f\\u2028/", "n": [true, "\\\\u001F"]}'),
]

#: Odd lines of every kind, read by each envelope reading (tests/sink/test_load_envelopes.py).
ENVELOPE_LINES = [
    *SCHEMA_CHANGES_WITHOUT_TABLE,
    '{"data": {"ddl": "SET x=1"}, "metadata": {"operation": "DDL", "table_name": ""}}',  # names a table: ""
    _line(operation="DDL"),
    _line(),
    None,
    "",
    "   ",
    "not json",
    "[1, 2]",
    '"a string"',
    "42",
    "null",
    "{}",
    '{"data": {"id": 1}}',
    '{"metadata": null}',
    '{"metadata": "shop"}',
    '{"metadata": [1]}',
    '{"metadata": 7}',
    '{"metadata": {}}',
    '{"metadata": {"table_name": "t"}}',
    '{"data": 1, "metadata": {"table_name": "t"}}',
    '{"data": {"id": 1}, "metadata": {"table_name": "t"}} trailing',
    '{"data": {"id": 1,}, "metadata": {"table_name": "t"}}',
    '{"data": {"x": NaN}, "metadata": {"table_name": "t"}}',
    "{'metadata': {'table_name': 't'}}",
    '{"data": {"s": "a,}"}, "metadata": {"table_name": "t", "schema": [1,\n]}}',
    '{"data": {"s": "a, ]"}, "metadata": {}}',
    _line(table_version=3),
    _line(table_name={"a": 1}),
    _line(primary_key=["id"]),
    _line(primary_key="id"),
    _line(timestamp="2024-05-01 10:00:00"),
    _line(timestamp="2024-05-01T10:00:00.123456789+02:00"),
    _line(timestamp="2024-05-01T10:00:00-0530"),
    _line(timestamp="2024-13-01 10:00:00"),
    _line(timestamp="yesterday"),
    _line(timestamp=1714557600),
    _line(timestamp=None),
    _line(position="0/16B3748"),
    _line(position="23923456"),
    _line(position="mysql-bin.000010:4:2"),
    _line(position="nowhere"),
    _line(position=None),
    _line(schema="not a list"),
    _line(unavailable=["doc", "memo"]),
    _line(unavailable=[]),
    _line(unavailable=["doc", 1]),
    _line(unavailable=[None]),
    _line(unavailable="doc"),
    _line(unavailable={"doc": True}),
    _line(unavailable=None),
    '{"metadata": {"table_name": "caf\\u00e9", "database_name": "a\\"b"}, "data": {}}',
    *REPEATED_KEYS,
    *NOT_REPEATED_KEYS,
    *PAST_JSON_LIMITS,
    *WITHIN_JSON_LIMITS,
]
