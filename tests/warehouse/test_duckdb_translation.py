"""Every expression form uniview emits, translated to DuckDB and executed, against BigQuery's results.

Each case runs twice: with the table's column types (as DuckDBWarehouse.apply translates) and
without (typeof() chooses at bind time); and under two session time zones, since a view's
result must not depend on the reader's TimeZone setting.
"""

from __future__ import annotations

import itertools
from datetime import date, datetime
from decimal import Decimal

import duckdb
import pytest

from uniview.core.errors import WarehouseError
from uniview.core.types import parse_type
from uniview.warehouse.duckdb import column_types
from uniview.warehouse.duckdb_sql import to_duckdb

MODES = ["typed", "typeof"]
ZONES = ["UTC", "Pacific/Chatham"]
_ids = itertools.count(1)
NAN = float("nan")


@pytest.fixture(scope="module")
def con():
    connection = duckdb.connect()
    connection.execute("CREATE SCHEMA cdc")
    yield connection
    connection.close()


def evaluate(con, column_type, literals, expression, mode="typed", zone="UTC"):
    """Rows of `expression` over a table whose column `x` holds `literals`, read through a view.

    TIMESTAMP results are returned as naive UTC datetimes (the instant, whatever the session zone).
    """
    table = f"t_v_{next(_ids)}"
    con.execute(f"CREATE TABLE cdc.{table} (id INTEGER, x {column_type})")
    con.execute(f"INSERT INTO cdc.{table} VALUES " + ", ".join(f"({i}, {v})" for i, v in enumerate(literals)))
    body = f"SELECT `id` AS `id`, {expression} AS `r` FROM `cdc`.`{table}`"
    con.execute(f"CREATE VIEW cdc.{table}_view AS {to_duckdb(body, column_types(con) if mode == 'typed' else None)}")
    result_type = con.execute(
        f"SELECT data_type FROM duckdb_columns() WHERE table_name = '{table}_view' AND column_name = 'r'"
    ).fetchone()[0]
    value = "timezone('UTC', r)" if result_type == "TIMESTAMP WITH TIME ZONE" else "r"
    con.execute(f"SET TimeZone = '{zone}'")
    try:
        return [r for (r,) in con.execute(f"SELECT {value} FROM cdc.{table}_view ORDER BY id").fetchall()]
    finally:
        con.execute("SET TimeZone = 'UTC'")


def same(actual, expected):
    """Equality that treats NaN as equal to NaN."""
    if isinstance(expected, float) and expected != expected:
        return isinstance(actual, float) and actual != actual
    return actual == expected


def check(con, column_type, cases, expression, mode="typed", zone="UTC"):
    literals = [literal for literal, _ in cases]
    actual = evaluate(con, column_type, literals, expression, mode, zone)
    mismatches = [(lit, exp, act) for (lit, exp), act in zip(cases, actual, strict=True) if not same(act, exp)]
    assert not mismatches, mismatches


# ---------------------------------------------------------------- 1. CAST(x AS STRING)

TO_STRING = {
    "INT64": (
        "BIGINT",
        [
            ("0", "0"),
            ("-9223372036854775808", "-9223372036854775808"),
            ("9223372036854775807", "9223372036854775807"),
            ("NULL", None),
        ],
    ),
    "FLOAT64": (
        "DOUBLE",
        [
            ("1.5", "1.5"),
            ("100.0", "100"),
            ("0.1", "0.1"),
            ("1e15", "1e+15"),
            ("123456789.0", "123456789"),
            ("0.30000000000000004", "0.30000000000000004"),
            ("1e-5", "1e-05"),
            ("'-0.0'::DOUBLE", "-0"),
            ("'nan'::DOUBLE", "nan"),
            ("'inf'::DOUBLE", "inf"),
            ("'-inf'::DOUBLE", "-inf"),
            ("1.7976931348623157e308", "1.7976931348623157e+308"),
            ("5e-324", "4.94065645841247e-324"),
            ("123456789012345678", "1.2345678901234568e+17"),
            ("NULL", None),
        ],
    ),
    "FLOAT": ("FLOAT", [("0.1", "0.10000000149011612"), ("1.5", "1.5"), ("'nan'::FLOAT", "nan")]),
    "NUMERIC": (
        "DECIMAL(38, 9)",
        [
            ("1.50", "1.5"),
            ("0", "0"),
            ("-0.5", "-0.5"),
            ("100", "100"),
            ("0.000000001", "0.000000001"),
            ("99999999999999999999999999999.999999999", "99999999999999999999999999999.999999999"),
            ("-99999999999999999999999999999.999999999", "-99999999999999999999999999999.999999999"),
            ("NULL", None),
        ],
    ),
    "NUMERIC(10, 0)": ("DECIMAL(10, 0)", [("100", "100"), ("-10", "-10")]),
    "BIGNUMERIC(38, 20)": (
        "DECIMAL(38, 20)",
        [("12.30", "12.3"), ("0.00000000000000000001", "0.00000000000000000001")],
    ),
    "BIGNUMERIC (HUGEINT)": (
        "HUGEINT",
        [
            ("170141183460469231731687303715884105727", "170141183460469231731687303715884105727"),
            ("-170141183460469231731687303715884105728", "-170141183460469231731687303715884105728"),
        ],
    ),
    "BOOL": ("BOOLEAN", [("true", "true"), ("false", "false"), ("NULL", None)]),
    "DATE": ("DATE", [("'2024-05-01'", "2024-05-01"), ("'0001-01-01'", "0001-01-01"), ("'9999-12-31'", "9999-12-31")]),
    "DATETIME": (
        "TIMESTAMP",
        [
            ("'2024-05-01 10:00:00'", "2024-05-01 10:00:00"),
            ("'2024-05-01 10:00:00.5'", "2024-05-01 10:00:00.500"),
            ("'2024-05-01 10:00:00.12'", "2024-05-01 10:00:00.120"),
            ("'2024-05-01 10:00:00.123456'", "2024-05-01 10:00:00.123456"),
            ("'2024-05-01 10:00:00.000001'", "2024-05-01 10:00:00.000001"),
            ("'0001-01-01 00:00:00'", "0001-01-01 00:00:00"),
            ("'9999-12-31 23:59:59.999999'", "9999-12-31 23:59:59.999999"),
            ("NULL", None),
        ],
    ),
    "DATETIME (TIMESTAMP_NS)": ("TIMESTAMP_NS", [("'2024-05-01 10:00:00.123456789'", "2024-05-01 10:00:00.123457")]),
    "TIMESTAMP": (
        "TIMESTAMPTZ",
        [
            ("'2024-05-01 10:00:00+00'", "2024-05-01 10:00:00+00"),
            ("'2024-05-01 12:00:00.25+02'", "2024-05-01 10:00:00.250+00"),
            ("'0001-01-01 00:00:00+00'", "0001-01-01 00:00:00+00"),
            ("'9999-12-31 23:59:59.999999+00'", "9999-12-31 23:59:59.999999+00"),
            ("NULL", None),
        ],
    ),
    "TIME": (
        "TIME",
        [("'10:00:00'", "10:00:00"), ("'00:00:00.1'", "00:00:00.100"), ("'23:59:59.999999'", "23:59:59.999999")],
    ),
    "INTERVAL": (
        "INTERVAL",
        [
            ("INTERVAL '1 year 2 months 3 days 04:05:06.789'", "1-2 3 4:5:6.789"),
            ("to_months(-14) + to_days(-3) + to_hours(-4)", "-1-2 -3 -4:0:0"),
            ("INTERVAL '0 seconds'", "0-0 0 0:0:0"),
            ("to_hours(36) + to_microseconds(1)", "0-0 0 36:0:0.000001"),
            ("to_microseconds(1500)", "0-0 0 0:0:0.001500"),
            ("to_microseconds(-1000)", "0-0 0 -0:0:0.001"),
            ("NULL", None),
        ],
    ),
}


@pytest.mark.parametrize("zone", ZONES)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("source", list(TO_STRING))
def test_cast_to_string(con, source, mode, zone):
    column_type, cases = TO_STRING[source]
    check(con, column_type, cases, "CAST(`x` AS STRING)", mode, zone)


# ---------------------------------------------------------------- 2. widening casts

WIDENING = [
    (
        "BIGINT",
        "NUMERIC",
        [
            ("9223372036854775807", Decimal("9223372036854775807.000000000")),
            ("-9223372036854775808", Decimal("-9223372036854775808.000000000")),
            ("NULL", None),
        ],
    ),
    ("BIGINT", "BIGNUMERIC", [("9223372036854775807", 9.223372036854776e18), ("-1", -1.0)]),
    ("DECIMAL(38, 9)", "BIGNUMERIC", [("99999999999999999999999999999.999999999", 1e29), ("1.5", 1.5)]),
    ("BIGINT", "FLOAT64", [("-9223372036854775808", -9.223372036854776e18), ("3", 3.0)]),
    (
        "DECIMAL(38, 9)",
        "FLOAT64",
        [
            ("99999999999999999999999999999.999999999", 1e29),
            ("0.1", 0.1),
            ("12345678901234567890.123456789", 1.2345678901234567e19),
        ],
    ),
    ("DOUBLE", "FLOAT64", [("'nan'::DOUBLE", NAN), ("'-inf'::DOUBLE", float("-inf"))]),
    (
        "DATE",
        "DATETIME",
        [
            ("'2024-05-01'", datetime(2024, 5, 1)),
            ("'0001-01-01'", datetime(1, 1, 1)),
            ("'9999-12-31'", datetime(9999, 12, 31)),
        ],
    ),
    ("DATE", "TIMESTAMP", [("'0001-01-01'", datetime(1, 1, 1)), ("'9999-12-31'", datetime(9999, 12, 31))]),
    (
        "TIMESTAMP",
        "TIMESTAMP",
        [
            ("'0001-01-01 00:00:00'", datetime(1, 1, 1)),
            ("'2024-05-01 10:00:00.5'", datetime(2024, 5, 1, 10, 0, 0, 500000)),
            ("'9999-12-31 23:59:59.999999'", datetime(9999, 12, 31, 23, 59, 59, 999999)),
            ("NULL", None),
        ],
    ),
    ("TIMESTAMPTZ", "TIMESTAMP", [("'2024-05-01 10:00:00+02'", datetime(2024, 5, 1, 8, 0))]),
    ("TIMESTAMPTZ", "DATETIME", [("'2024-05-01 10:00:00+02'", datetime(2024, 5, 1, 8, 0))]),
]


@pytest.mark.parametrize("zone", ZONES)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("column_type, target, cases", WIDENING, ids=[f"{c}->{t}" for c, t, _ in WIDENING])
def test_widening_casts(con, column_type, target, cases, mode, zone):
    check(con, column_type, cases, f"CAST(`x` AS {target})", mode, zone)


def test_widening_cast_result_types(con):
    sql = to_duckdb(
        "SELECT CAST(`a` AS NUMERIC) AS `n`, CAST(`a` AS BIGNUMERIC) AS `b`, CAST(`a` AS FLOAT64) AS `f`,"
        " CAST(`d` AS DATETIME) AS `dt`, CAST(`d` AS TIMESTAMP) AS `ts` FROM `cdc`.`widen_v_1`"
    )
    con.execute("CREATE TABLE cdc.widen_v_1 (a BIGINT, d DATE)")
    con.execute(f"CREATE VIEW cdc.widen_view AS {sql}")
    described = con.execute(
        "SELECT column_name, data_type FROM duckdb_columns() WHERE table_name = 'widen_view'"
    ).fetchall()
    assert described == [
        ("n", "DECIMAL(38,9)"),
        ("b", "DOUBLE"),
        ("f", "DOUBLE"),
        ("dt", "TIMESTAMP"),
        ("ts", "TIMESTAMP WITH TIME ZONE"),
    ]


def test_safe_cast_to_a_decimal_keeps_its_precision_and_scale(con):
    """SAFE_CAST to NUMERIC is DuckDB's DECIMAL(38, 9) as CAST's is (sqlglot alone writes DECIMAL, DuckDB's
    DECIMAL(18, 3)), and to a parameterized decimal its own precision and scale, rounding half away from zero."""
    sql = to_duckdb(
        "SELECT SAFE_CAST(`f` AS NUMERIC) AS `n`, SAFE_CAST(`t` AS NUMERIC(12, 2)) AS `p`,"
        " SAFE_CAST(`t` AS BIGNUMERIC(38, 2)) AS `b` FROM `cdc`.`safe_v_1`"
    )
    con.execute("CREATE TABLE cdc.safe_v_1 (f DOUBLE, t VARCHAR)")
    con.execute("INSERT INTO cdc.safe_v_1 VALUES (0.0049999999, '-1.005'), (1e30, 'x')")
    con.execute(f"CREATE VIEW cdc.safe_view AS {sql}")
    described = con.execute("SELECT column_name, data_type FROM duckdb_columns() WHERE table_name = 'safe_view'")
    assert described.fetchall() == [
        ("n", "DECIMAL(38,9)"),
        ("p", "DECIMAL(12,2)"),
        ("b", "DECIMAL(38,2)"),
    ]
    assert con.execute("SELECT * FROM cdc.safe_view").fetchall() == [
        (Decimal("0.005000000"), Decimal("-1.01"), Decimal("-1.01")),  # 0.0049999999 at 9 decimals
        (None, None, None),
    ]


# ---------------------------------------------------------------- 3. typed NULLs

TYPED_NULLS = [
    ("INT64", "BIGINT"),
    ("FLOAT64", "DOUBLE"),
    ("NUMERIC", "DECIMAL(38,9)"),
    ("BIGNUMERIC", "DOUBLE"),
    ("BOOL", "BOOLEAN"),
    ("STRING", "VARCHAR"),
    ("BYTES", "BLOB"),
    ("DATE", "DATE"),
    ("DATETIME", "TIMESTAMP"),
    ("TIME", "TIME"),
    ("TIMESTAMP", "TIMESTAMP WITH TIME ZONE"),
    ("JSON", "JSON"),
    ("GEOGRAPHY", "VARCHAR"),
    ("INTERVAL", "INTERVAL"),
    ("ARRAY<STRING>", "VARCHAR[]"),
    ("STRUCT<`a` INT64, `b c` ARRAY<STRUCT<`x` STRING>>>", 'STRUCT(a BIGINT, "b c" STRUCT(x VARCHAR)[])'),
    (
        'STRUCT<`select` INT64, `from` STRING, `é` DATE, `x\\`y` BOOL, `q"r` ARRAY<TIMESTAMP>>',
        'STRUCT("select" BIGINT, "from" VARCHAR, "é" DATE, "x`y" BOOLEAN, "q""r" TIMESTAMP WITH TIME ZONE[])',
    ),
    (
        "STRUCT<l1 STRUCT<l2 STRUCT<l3 STRUCT<l4 STRUCT<v NUMERIC>>>>>",
        "STRUCT(l1 STRUCT(l2 STRUCT(l3 STRUCT(l4 STRUCT(v DECIMAL(38,9))))))",
    ),
]


@pytest.mark.parametrize("bigquery, duckdb_reported", TYPED_NULLS, ids=[t for t, _ in TYPED_NULLS])
def test_typed_null(con, bigquery, duckdb_reported):
    view = f"null_view_{next(_ids)}"
    con.execute(f"CREATE VIEW cdc.{view} AS {to_duckdb(f'SELECT CAST(NULL AS {bigquery}) AS `n`')}")
    assert con.execute(f"SELECT n FROM cdc.{view}").fetchall() == [(None,)]
    reported = con.execute(f"SELECT data_type FROM duckdb_columns() WHERE table_name = '{view}'").fetchone()[0]
    assert reported == duckdb_reported


def test_range_has_no_duckdb_type():
    with pytest.raises(WarehouseError, match="RANGE<DATE> has no DuckDB equivalent"):
        to_duckdb("SELECT CAST(NULL AS RANGE<DATE>) AS `r`")


# ---------------------------------------------------------------- 4. TO_JSON_STRING

TO_JSON = [
    (
        "STRUCT(a BIGINT, b DOUBLE, c VARCHAR)",
        [
            ("{'a': 1, 'b': 'nan', 'c': 'x\"y'}", '{"a":1,"b":"NaN","c":"x\\"y"}'),
            ("{'a': NULL, 'b': NULL, 'c': NULL}", '{"a":null,"b":null,"c":null}'),
            ("{'a': 9007199254740993, 'b': 'inf', 'c': ''}", '{"a":"9007199254740993","b":"Infinity","c":""}'),
            ("{'a': -9007199254740992, 'b': '-inf', 'c': 'é'}", '{"a":-9007199254740992,"b":"-Infinity","c":"é"}'),
            ("NULL", "null"),
        ],
    ),
    (
        "BIGINT[]",
        [("[1, NULL, 9223372036854775807]", '[1,null,"9223372036854775807"]'), ("[]", "[]"), ("NULL", "null")],
    ),
    ("DOUBLE[]", [("['inf', '-inf', 'nan', 1.0, 0.1, 1e20]", '["Infinity","-Infinity","NaN",1,0.1,1e+20]')]),
    (
        "STRUCT(n DECIMAL(38, 9))[]",
        [
            (
                "[{'n': 1.5}, {'n': 2}, {'n': -99999999999999999999999999999.999999999}]",
                '[{"n":"1.5"},{"n":2},{"n":"-99999999999999999999999999999.999999999"}]',
            ),
            ("[{'n': 9007199254740993}]", '[{"n":"9007199254740993"}]'),
        ],
    ),
    (
        "STRUCT(d DATE, dt TIMESTAMP, ts TIMESTAMPTZ, t TIME, b BOOLEAN)",
        [
            (
                "{'d': '2024-05-01', 'dt': '2024-05-01 10:00:00.5', 'ts': '2024-05-01 12:00:00+02', 't': '10:00:00', 'b': true}",
                '{"d":"2024-05-01","dt":"2024-05-01T10:00:00.500","ts":"2024-05-01T10:00:00Z","t":"10:00:00","b":true}',
            ),
            (
                "{'d': '0001-01-01', 'dt': '9999-12-31 23:59:59.999999', 'ts': '0001-01-01 00:00:00+00', 't': '00:00:00.000001', 'b': false}",
                '{"d":"0001-01-01","dt":"9999-12-31T23:59:59.999999","ts":"0001-01-01T00:00:00Z","t":"00:00:00.000001","b":false}',
            ),
        ],
    ),
    (
        "STRUCT(b BLOB, i INTERVAL)",
        [
            (
                "{'b': '\\xFF\\x00ab'::BLOB, 'i': INTERVAL '1 year 2 months 3 days 04:05:06.789'}",
                '{"b":"/wBhYg==","i":"P1Y2M3DT4H5M6.789S"}',
            ),
            ("{'b': ''::BLOB, 'i': INTERVAL '0 seconds'}", '{"b":"","i":"P0Y"}'),
            ("{'b': NULL, 'i': to_microseconds(-500000)}", '{"b":null,"i":"PT-0.5S"}'),
            ("{'b': NULL, 'i': to_months(-14) + to_hours(-25)}", '{"b":null,"i":"P-1Y-2MT-25H"}'),
        ],
    ),
    (
        "STRUCT(s VARCHAR)",
        [
            (
                "{'s': 'tab' || chr(9) || 'nl' || chr(10) || 'cr' || chr(13) || 'bs' || chr(8) || 'ff' || chr(12)}",
                '{"s":"tab\\tnl\\ncr\\rbs\\bff\\f"}',
            ),
            (
                "{'s': chr(1) || chr(31) || chr(127) || chr(8232) || chr(8233) || '/<>&'}",
                '{"s":"\\u0001\\u001f\x7f\\u2028\\u2029/<>&"}',
            ),
            ("{'s': 'back\\slash \"quoted\" \\u001F'}", '{"s":"back\\\\slash \\"quoted\\" \\\\u001F"}'),
        ],
    ),
    (
        'STRUCT("select" STRUCT("é x" BIGINT, "q""r" VARCHAR)[], "a`b" JSON)',
        [
            (
                "{'select': [{'é x': 1, 'q\"r': 'v'}], 'a`b': '{\"k\": [1,  2], \"m\": null}'::JSON}",
                '{"select":[{"é x":1,"q\\"r":"v"}],"a`b":{"k":[1,2],"m":null}}',
            ),
            ("{'select': [], 'a`b': NULL}", '{"select":[],"a`b":null}'),
        ],
    ),
    ("JSON", [('\'{"a": 1,  "b": [true, null]}\'', '{"a":1,"b":[true,null]}'), ("NULL", "null")]),
    (
        "STRUCT(l1 STRUCT(l2 STRUCT(l3 STRUCT(l4 STRUCT(v DOUBLE)))))",
        [
            ("{'l1': {'l2': {'l3': {'l4': {'v': 'nan'}}}}}", '{"l1":{"l2":{"l3":{"l4":{"v":"NaN"}}}}}'),
            ("{'l1': {'l2': NULL}}", '{"l1":{"l2":null}}'),
        ],
    ),
]


@pytest.mark.parametrize("zone", ZONES)
@pytest.mark.parametrize("column_type, cases", TO_JSON, ids=[c for c, _ in TO_JSON])
def test_to_json_string(con, column_type, cases, zone):
    check(con, column_type, cases, "TO_JSON_STRING(`x`)", "typed", zone)


# Without column types TO_JSON_STRING is DuckDB's JSON text, with NaN and infinities written as BigQuery does.
TO_JSON_UNTYPED = [
    (
        "STRUCT(a BIGINT, b DOUBLE, c VARCHAR)",
        [
            ("{'a': 1, 'b': 'nan', 'c': 'NaN, Infinity'}", '{"a":1,"b":"NaN","c":"NaN, Infinity"}'),
            ("{'a': NULL, 'b': '-inf', 'c': ':NaN,'}", '{"a":null,"b":"-Infinity","c":":NaN,"}'),
            ("NULL", "null"),
        ],
    ),
    ("DOUBLE[]", [("['inf'::DOUBLE, 'nan', 1.5]", '["Infinity","NaN",1.5]'), ("[]", "[]"), ("NULL", "null")]),
    ("JSON", [('\'{"a": 1,  "b": [true, null]}\'', '{"a":1,"b":[true,null]}')]),
]


@pytest.mark.parametrize("column_type, cases", TO_JSON_UNTYPED, ids=[c for c, _ in TO_JSON_UNTYPED])
def test_to_json_string_without_types(con, column_type, cases):
    check(con, column_type, cases, "TO_JSON_STRING(`x`)", "typeof")


# ---------------------------------------------------------------- 5. SAFE_CONVERT_BYTES_TO_STRING

REPLACEMENT = "\ufffd"
BYTES_TO_STRING = [
    ("'abc'::BLOB", "abc"),
    ("''::BLOB", ""),
    ("NULL", None),
    ("'\\x00'::BLOB", "\x00"),
    ("'\\xE2\\x82\\xAC'::BLOB", "€"),
    ("'\\xF0\\x9F\\x98\\x80'::BLOB", "😀"),
    ("'\\xEF\\xBF\\xBE'::BLOB", "\ufffe"),
    ("'\\xF4\\x8F\\xBF\\xBF'::BLOB", "\U0010ffff"),
    ("'\\xFF'::BLOB", REPLACEMENT),
    ("'a\\xFFb'::BLOB", f"a{REPLACEMENT}b"),
    ("'\\xE2\\x82'::BLOB", REPLACEMENT * 2),
    ("'\\xE2\\x82A'::BLOB", REPLACEMENT * 2 + "A"),
    ("'\\xED\\xA0\\x80'::BLOB", REPLACEMENT * 3),
    ("'\\xC0\\x80'::BLOB", REPLACEMENT * 2),
    ("'\\xE0\\x80\\x80'::BLOB", REPLACEMENT * 3),
    ("'\\xF4\\x90\\x80\\x80'::BLOB", REPLACEMENT * 4),
    ("'\\xF5\\x80'::BLOB", REPLACEMENT * 2),
    ("'\\x80\\xBF'::BLOB", REPLACEMENT * 2),
    ("'\\xE2\\x82\\xAC\\xFF\\xF0\\x9F\\x98'::BLOB", "€" + REPLACEMENT * 4),
    ("'ok \\xCE\\xBB \\xCE'::BLOB", f"ok λ {REPLACEMENT}"),
]


@pytest.mark.parametrize("mode", MODES)
def test_safe_convert_bytes_to_string(con, mode):
    check(con, "BLOB", BYTES_TO_STRING, "SAFE_CONVERT_BYTES_TO_STRING(`x`)", mode)


# ---------------------------------------------------------------- 6. DATETIME in a named zone

IN_PARIS = "COALESCE(SAFE.TIMESTAMP(`x`, 'Europe/Paris'), CAST(`x` AS TIMESTAMP))"
ZONED = [
    (
        "TIMESTAMP",
        IN_PARIS,
        [
            ("'2024-05-01 10:00:00'", datetime(2024, 5, 1, 8, 0)),
            ("'2024-01-15 10:00:00.25'", datetime(2024, 1, 15, 9, 0, 0, 250000)),
            ("'2024-03-31 02:30:00'", datetime(2024, 3, 31, 1, 30)),
            ("'2024-10-27 02:30:00'", datetime(2024, 10, 27, 0, 30)),
            ("'2024-10-27 03:30:00'", datetime(2024, 10, 27, 2, 30)),
            ("'2024-10-28 02:30:00'", datetime(2024, 10, 28, 1, 30)),
            ("'0001-01-01 00:00:00'", datetime(1, 1, 1)),
            ("'0001-01-01 00:10:00'", datetime(1, 1, 1, 0, 0, 39)),
            ("'9999-12-31 23:59:59.999999'", datetime(9999, 12, 31, 22, 59, 59, 999999)),
            ("NULL", None),
        ],
    ),
    ("DATE", IN_PARIS, [("'2024-05-01'", datetime(2024, 4, 30, 22, 0)), ("'0001-01-01'", datetime(1, 1, 1))]),
    (
        "TIMESTAMP",
        "COALESCE(SAFE.TIMESTAMP(`x`, 'America/Los_Angeles'), CAST(`x` AS TIMESTAMP))",
        [
            ("'9999-12-31 23:59:59'", datetime(9999, 12, 31, 23, 59, 59)),
            ("'9999-12-31 12:00:00'", datetime(9999, 12, 31, 20, 0)),
            ("'2024-11-03 01:30:00'", datetime(2024, 11, 3, 8, 30)),
            ("'0001-01-01 00:00:00'", datetime(1, 1, 1, 7, 52, 58)),
        ],
    ),
    ("TIMESTAMP", "CAST(`x` AS TIMESTAMP)", [("'2024-05-01 10:00:00'", datetime(2024, 5, 1, 10, 0))]),
]


@pytest.mark.parametrize("zone", ZONES)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("column_type, expression, cases", ZONED, ids=["paris", "paris-date", "los-angeles", "utc"])
def test_datetime_read_in_a_zone(con, column_type, expression, cases, mode, zone):
    check(con, column_type, cases, expression, mode, zone)


# ---------------------------------------------------------------- 7. arrays element by element

ELEMENTS_TO_STRING = (
    "IF(`x` IS NULL, NULL, ARRAY(SELECT CAST(`__uv_e0` AS STRING) FROM UNNEST(`x`) AS `__uv_e0`"
    " WITH OFFSET AS `__uv_o0` ORDER BY `__uv_o0`))"
)
STRUCT_ELEMENTS = (
    "IF(`x` IS NULL, NULL, ARRAY(SELECT IF(`__uv_e0` IS NULL, NULL, STRUCT(CAST(`__uv_e0`.`a` AS STRING) AS `a`,"
    " `__uv_e0`.`b` AS `b`, CAST(NULL AS INT64) AS `c`)) FROM UNNEST(`x`) AS `__uv_e0` WITH OFFSET AS `__uv_o0`"
    " ORDER BY `__uv_o0`))"
)
NESTED_ELEMENTS = (
    "IF(`x` IS NULL, NULL, ARRAY(SELECT IF(`__uv_e0` IS NULL, NULL, STRUCT(IF(`__uv_e0`.`l` IS NULL, NULL,"
    " ARRAY(SELECT CAST(`__uv_e1` AS STRING) FROM UNNEST(`__uv_e0`.`l`) AS `__uv_e1` WITH OFFSET AS `__uv_o1`"
    " ORDER BY `__uv_o1`)) AS `l`)) FROM UNNEST(`x`) AS `__uv_e0` WITH OFFSET AS `__uv_o0` ORDER BY `__uv_o0`))"
)
ARRAYS = [
    (
        "BIGINT[]",
        ELEMENTS_TO_STRING,
        [("[3, 1, 2]", ["3", "1", "2"]), ("[]", []), ("NULL", None), ("[NULL, 1]", [None, "1"])],
    ),
    ("DOUBLE[]", ELEMENTS_TO_STRING, [("['nan'::DOUBLE, 1.0, '-inf']", ["nan", "1", "-inf"])]),
    (
        "STRUCT(a BIGINT, b VARCHAR)[]",
        STRUCT_ELEMENTS,
        [
            (
                "[{'a': 2, 'b': 'x'}, NULL, {'a': NULL, 'b': NULL}]",
                [{"a": "2", "b": "x", "c": None}, None, {"a": None, "b": None, "c": None}],
            ),
            ("[]", []),
            ("NULL", None),
        ],
    ),
    (
        "STRUCT(l DECIMAL(38, 9)[])[]",
        NESTED_ELEMENTS,
        [
            ("[{'l': [1.5, 2]}, {'l': []}, {'l': NULL}, NULL]", [{"l": ["1.5", "2"]}, {"l": []}, {"l": None}, None]),
        ],
    ),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("column_type, expression, cases", ARRAYS, ids=["int", "double", "structs", "nested"])
def test_array_element_conversion(con, column_type, expression, cases, mode):
    check(con, column_type, cases, expression, mode)


# ---------------------------------------------------------------- 8. structs field by field

ODD_NAMES = (
    "IF(`x` IS NULL, NULL, STRUCT(CAST(`x`.`select` AS STRING) AS `select`, `x`.`a b` AS `a b`, `x`.`é` AS `é`,"
    " `x`.`x\\`y` AS `x\\`y`, CAST(NULL AS DATE) AS `new field`))"
)
FIVE_LEVELS = (
    "IF(`x` IS NULL, NULL, STRUCT(IF(`x`.`l1` IS NULL, NULL, STRUCT(IF(`x`.`l1`.`l2` IS NULL, NULL,"
    " STRUCT(IF(`x`.`l1`.`l2`.`l3` IS NULL, NULL, STRUCT(IF(`x`.`l1`.`l2`.`l3`.`l4` IS NULL, NULL,"
    " STRUCT(CAST(`x`.`l1`.`l2`.`l3`.`l4`.`v` AS STRING) AS `v`)) AS `l4`)) AS `l3`)) AS `l2`)) AS `l1`))"
)
STRUCTS = [
    (
        'STRUCT("select" DOUBLE, "a b" VARCHAR, "é" BIGINT, "x`y" BOOLEAN)',
        ODD_NAMES,
        [
            (
                "{'select': 1.5, 'a b': 'v', 'é': 3, 'x`y': true}",
                {"select": "1.5", "a b": "v", "é": 3, "x`y": True, "new field": None},
            ),
            (
                "{'select': NULL, 'a b': NULL, 'é': NULL, 'x`y': NULL}",
                {"select": None, "a b": None, "é": None, "x`y": None, "new field": None},
            ),
            ("NULL", None),
        ],
    ),
    (
        "STRUCT(l1 STRUCT(l2 STRUCT(l3 STRUCT(l4 STRUCT(v BIGINT)))))",
        FIVE_LEVELS,
        [
            ("{'l1': {'l2': {'l3': {'l4': {'v': 7}}}}}", {"l1": {"l2": {"l3": {"l4": {"v": "7"}}}}}),
            ("{'l1': {'l2': {'l3': {'l4': NULL}}}}", {"l1": {"l2": {"l3": {"l4": None}}}}),
            ("{'l1': {'l2': NULL}}", {"l1": {"l2": None}}),
            ("{'l1': NULL}", {"l1": None}),
            ("NULL", None),
        ],
    ),
    (
        "STRUCT(l1 STRUCT(l2 STRUCT(l3 STRUCT(l4 STRUCT(v BIGINT)))))",
        "`x`.`l1`.`l2`.`l3`.`l4`.`v`",
        [
            ("{'l1': {'l2': {'l3': {'l4': {'v': 7}}}}}", 7),
            ("{'l1': NULL}", None),
        ],
    ),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("column_type, expression, cases", STRUCTS, ids=["odd-names", "five-levels", "path"])
def test_struct_rebuild(con, column_type, expression, cases, mode):
    check(con, column_type, cases, expression, mode)


# ---------------------------------------------------------------- 9. literals, names, comments, whole bodies


def test_literals_quoted_names_and_comments(con):
    con.execute('CREATE TABLE cdc."odd_v_1" ("we`ird" BIGINT, "x""y" VARCHAR)')
    con.execute("INSERT INTO cdc.odd_v_1 VALUES (1, 'q')")
    body = (
        "-- Generated by uniview. Do not edit: `uniview refresh` replaces this view. */ still a comment\n"
        'SELECT\n  `we\\`ird` AS `out\\`put`,\n  `x"y` AS `x"y`,\n'
        "  'customer_v_a\\'b\\\\c' AS `_uniview_source`,\n  'line\\nbreak' AS `nl`\n"
        "FROM `cdc`.`odd_v_1`"
    )
    con.execute(f"CREATE VIEW cdc.odd_view AS {to_duckdb(body)}")
    cursor = con.execute("SELECT * FROM cdc.odd_view")
    assert [d[0] for d in cursor.description] == ["out`put", 'x"y', "_uniview_source", "nl"]
    assert cursor.fetchall() == [(1, "q", "customer_v_a'b\\c", "line\nbreak")]


def test_project_qualified_tables_read_the_dataset_schema(con):
    con.execute("CREATE TABLE cdc.proj_v_1 (a BIGINT)")
    con.execute("INSERT INTO cdc.proj_v_1 VALUES (5)")
    sql = to_duckdb("SELECT `a` AS `a` FROM `my-project`.`cdc`.`proj_v_1`")
    assert con.execute(sql).fetchall() == [(5,)]


def test_a_canonical_union_body(con):
    con.execute("CREATE TABLE cdc.customer_v_abc (id BIGINT, first_name VARCHAR, s STRUCT(a BIGINT))")
    con.execute("INSERT INTO cdc.customer_v_abc VALUES (1, 'Ann', {'a': 4})")
    con.execute("CREATE TABLE cdc.customer_v_def (id VARCHAR, email VARCHAR)")
    con.execute("INSERT INTO cdc.customer_v_def VALUES ('c-2', 'bo@example.com')")
    body = (
        "-- Generated by uniview. Do not edit: `uniview refresh` replaces this view.\n"
        "SELECT\n  CAST(`id` AS STRING) AS `id`,\n  `first_name` AS `first_name`,\n  CAST(NULL AS STRING) AS `email`,\n"
        "  IF(`s` IS NULL, NULL, STRUCT(`s`.`a` AS `a`, CAST(NULL AS ARRAY<STRUCT<`b c` STRING>>) AS `b`)) AS `s`,\n"
        "  'customer_v_abc' AS `_uniview_source`\nFROM `cdc`.`customer_v_abc`\nUNION ALL\n"
        "SELECT\n  `id` AS `id`,\n  CAST(NULL AS STRING) AS `first_name`,\n  `email` AS `email`,\n"
        "  CAST(NULL AS STRUCT<`a` INT64, `b` ARRAY<STRUCT<`b c` STRING>>>) AS `s`,\n"
        "  'customer_v_def' AS `_uniview_source`\nFROM `cdc`.`customer_v_def`\n"
    )
    for mode in MODES:
        sql = to_duckdb(body, column_types(con) if mode == "typed" else None)
        assert sorted(con.execute(sql).fetchall()) == [
            ("1", "Ann", None, {"a": 4, "b": None}, "customer_v_abc"),
            ("c-2", None, "bo@example.com", None, "customer_v_def"),
        ]


def test_output_is_one_select_without_bigquery_syntax():
    sql = to_duckdb("SELECT CAST(`a` AS STRING) AS `a` FROM `cdc`.`t_v_1`")
    assert sql.startswith("SELECT ") and "`" not in sql and ";" not in sql


UNTRANSLATABLE = [
    ("", "exactly one SELECT"),
    ("SELECT 1; SELECT 2", "exactly one SELECT"),
    ("DELETE FROM `cdc`.`t` WHERE TRUE", "exactly one SELECT"),
    ("SELECT FROM WHERE (", "does not parse"),
    ("SELECT ARRAY(SELECT 1) AS `a`", "ARRAY subquery"),
    (
        "SELECT ARRAY(SELECT e FROM UNNEST(`a`) AS e WITH OFFSET AS o ORDER BY o DESC) AS `a` FROM `cdc`.`t`",
        "ARRAY subquery",
    ),
    ("SELECT ARRAY(SELECT e FROM UNNEST(`a`) AS e WHERE e > 1) AS `a` FROM `cdc`.`t`", "ARRAY subquery"),
    ("SELECT SAFE.PARSE_DATE('%F', '2024-01-01') AS `d`", "not supported"),
    ("SELECT STRUCT(1, 2) AS `s`", "without a name"),
    ("SELECT CAST(`s` AS STRING FORMAT 'YYYY') AS `s` FROM `cdc`.`t`", "FORMAT"),
]


@pytest.mark.parametrize("body, reason", UNTRANSLATABLE)
def test_untranslatable_sql_raises_warehouse_error(body, reason):
    with pytest.raises(WarehouseError, match=reason):
        to_duckdb(body)


def test_dates_and_naive_results_are_python_values(con):
    check(con, "DATE", [("'2024-05-01'", date(2024, 5, 1))], "`x`")


@pytest.mark.parametrize("expression", [ELEMENTS_TO_STRING, STRUCT_ELEMENTS, NESTED_ELEMENTS, FIVE_LEVELS, ODD_NAMES])
def test_column_types_reach_every_path_and_array_element(expression):
    """With the table's types, no conversion is left to choose by typeof() at bind time."""
    types = {
        "x": parse_type("STRUCT<`select` FLOAT64, l1 STRUCT<l2 STRUCT<l3 STRUCT<l4 STRUCT<v INT64>>>>>"),
    }
    if "UNNEST" in expression:
        element = "STRUCT<a INT64, b STRING, l ARRAY<NUMERIC>>" if "__uv_e0`." in expression else "INT64"
        types = {"x": parse_type(f"ARRAY<{element}>")}
    sql = to_duckdb(f"SELECT {expression} AS `r` FROM `cdc`.`typed_v_1`", lambda dataset, table: types)
    assert "typeof(" not in sql
