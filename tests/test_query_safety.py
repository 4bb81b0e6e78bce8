"""Query safety: edge values stored in every type, read through the unified view in DuckDB.

Each column has its edge values in version 1 and a conflicting type in version 2, so the view
converts them.  Reading the view must not fail, no non-NULL value may become NULL, and the
text of each converted value is written out below.
"""

from __future__ import annotations

import json
from decimal import Decimal

import duckdb
import pytest

from uniview.ops.refresh import RefreshRequest, refresh
from uniview.planning.plan import GeneratorOptions
from uniview.warehouse import open_warehouse
from uniview.warehouse.url import duckdb_url

# column: (DuckDB type in version 1, [(SQL literal, expected text through the view)], type in version 2).
# TO_JSON_STRING writes INT64 outside [-2^53, 2^53] as a quoted string, as BigQuery does.
EDGE_VALUES = {
    "i64": (
        "BIGINT",
        [("-9223372036854775808", "-9223372036854775808"), ("9223372036854775807", "9223372036854775807"), ("0", "0")],
        "BOOLEAN",
    ),
    "f64": (
        "DOUBLE",
        [("'NaN'", "nan"), ("'inf'", "inf"), ("'-inf'", "-inf"), ("1.5", "1.5"), ("1e300", "1e+300")],
        "BOOLEAN",
    ),
    "num": (
        "DECIMAL(38, 9)",
        [
            ("99999999999999999999999999999.999999999", "99999999999999999999999999999.999999999"),
            ("-1.500000000", "-1.5"),
            ("0", "0"),
        ],
        "BOOLEAN",
    ),
    "flag": ("BOOLEAN", [("true", "true"), ("false", "false")], "BIGINT"),
    "day": ("DATE", [("DATE '0001-01-01'", "0001-01-01"), ("DATE '9999-12-31'", "9999-12-31")], "BOOLEAN"),
    "moment": (
        "TIMESTAMP",
        [
            ("TIMESTAMP '0001-01-01 00:00:00'", "0001-01-01 00:00:00"),
            ("TIMESTAMP '9999-12-31 23:59:59.999999'", "9999-12-31 23:59:59.999999"),
        ],
        "BOOLEAN",
    ),
    "clock": ("TIME", [("TIME '23:59:59.999999'", "23:59:59.999999"), ("TIME '00:00:00'", "00:00:00")], "BOOLEAN"),
    "instant": ("TIMESTAMPTZ", [("TIMESTAMPTZ '2024-05-01 10:00:00+00'", "2024-05-01 10:00:00+00")], "BOOLEAN"),
    "doc": ("JSON", [('\'{"a": [1, 2], "b": null}\'', '{"a":[1,2],"b":null}')], "BOOLEAN"),
    "list": (
        "BIGINT[]",
        [("[]", "[]"), ("[1, -9223372036854775808, 9007199254740992]", '[1,"-9223372036854775808",9007199254740992]')],
        "BOOLEAN",
    ),
    "rec": ('STRUCT(a BIGINT, "b c" VARCHAR)', [("{'a': 1, 'b c': NULL}", '{"a":1,"b c":null}')], "BOOLEAN"),
}
BYTES_VALUES = [("'\\xFF\\xFE'::BLOB", None), ("'abc'::BLOB", "abc"), ("''::BLOB", "")]


def make_edge_family(path):
    columns_v1 = [f'"{name}" {duck_type}' for name, (duck_type, _, _) in EDGE_VALUES.items()] + ['"raw" BLOB']
    columns_v2 = [f'"{name}" {other}' for name, (_, _, other) in EDGE_VALUES.items()] + ['"raw" BOOLEAN']
    rows = max(len(values) for _, values, _ in EDGE_VALUES.values())
    with duckdb.connect(str(path)) as connection:
        connection.execute("CREATE SCHEMA edge")
        connection.execute(f"CREATE TABLE edge.t_v_1 (row_id INTEGER, {', '.join(columns_v1)})")
        for row in range(rows):
            literals = [values[row][0] if row < len(values) else "NULL" for _, values, _ in EDGE_VALUES.values()]
            raw = BYTES_VALUES[row][0] if row < len(BYTES_VALUES) else "NULL"
            connection.execute(f"INSERT INTO edge.t_v_1 VALUES ({row}, {', '.join(literals)}, {raw})")
        connection.execute(f"INSERT INTO edge.t_v_1 (row_id) VALUES ({rows})")  # a row of NULLs stays NULL
        connection.execute(f"CREATE TABLE edge.t_v_2 (row_id INTEGER, {', '.join(columns_v2)})")
        connection.execute("INSERT INTO edge.t_v_2 (row_id, flag) VALUES (100, 42)")
    return rows


def read_view(path, sql):
    with duckdb.connect(str(path), read_only=True) as connection:
        connection.execute("SET TimeZone='UTC'")
        return connection.execute(sql).fetchall()


@pytest.fixture(scope="module")
def edge_view(tmp_path_factory):
    path = tmp_path_factory.mktemp("edge") / "edge-values.duckdb"
    rows = make_edge_family(path)
    with open_warehouse(duckdb_url(path)) as warehouse:
        refresh(warehouse, RefreshRequest("edge", ("t",)))
    return path, rows


@pytest.mark.parametrize("column", list(EDGE_VALUES))
def test_every_value_converts_to_its_exact_text(edge_view, column):
    path, rows = edge_view
    _, values, _ = EDGE_VALUES[column]
    got = read_view(
        path, f'SELECT row_id, "{column}" FROM edge_unified.t_unified WHERE row_id <= {rows} ORDER BY row_id'
    )
    expected = [(row, values[row][1] if row < len(values) else None) for row in range(rows + 1)]
    if column == "doc":
        got = [(row, None if text is None else json.loads(text)) for row, text in got]
        expected = [(row, None if text is None else json.loads(text)) for row, text in expected]
    assert got == expected


def test_bytes_never_fail_and_never_become_null(edge_view):
    path, _ = edge_view
    got = dict(read_view(path, "SELECT row_id, raw FROM edge_unified.t_unified WHERE row_id < 3"))
    assert got[1] == "abc" and got[2] == ""
    assert got[0] is not None and len(got[0]) > 0  # invalid UTF-8: replaced, not lost


def test_conflicting_version_rows_are_converted_too(edge_view):
    path, _ = edge_view
    assert read_view(path, "SELECT flag, i64 FROM edge_unified.t_unified WHERE row_id = 100") == [("42", None)]


NESTED_V1 = "STRUCT(l1 STRUCT(l2 STRUCT(l3 STRUCT(l4 STRUCT(n BIGINT, xs STRUCT(k BIGINT)[])))))"
NESTED_V2 = (
    "STRUCT(l1 STRUCT(l2 STRUCT(l3 STRUCT(l4 STRUCT(n VARCHAR, xs STRUCT(k VARCHAR, extra DATE)[], added BOOLEAN)))))"
)


def test_deeply_nested_structs_and_arrays_keep_every_value(tmp_path):
    path = tmp_path / "nested.duckdb"
    deep = "{'l1': {'l2': {'l3': {'l4': {'n': -9223372036854775808, 'xs': [{'k': 1}, NULL, {'k': 3}]}}}}}"
    with duckdb.connect(str(path)) as connection:
        connection.execute("CREATE SCHEMA n")
        connection.execute(f"CREATE TABLE n.deep_v_1 (id INTEGER, s {NESTED_V1})")
        connection.execute(
            f"INSERT INTO n.deep_v_1 VALUES (1, {deep}), (2, NULL), "
            "(3, {'l1': {'l2': {'l3': {'l4': {'n': NULL, 'xs': []}}}}}), "
            "(4, {'l1': {'l2': {'l3': {'l4': {'n': 5, 'xs': NULL}}}}})"
        )
        connection.execute(f"CREATE TABLE n.deep_v_2 (id INTEGER, s {NESTED_V2})")
    with open_warehouse(duckdb_url(path)) as warehouse:
        refresh(warehouse, RefreshRequest("n", ("deep",)))
    rows = dict(read_view(path, "SELECT id, s.l1.l2.l3.l4 FROM n_unified.deep_unified ORDER BY id"))
    assert rows[1] == {
        "n": "-9223372036854775808",
        "xs": [{"k": "1", "extra": None}, None, {"k": "3", "extra": None}],
        "added": None,
    }
    assert rows[2] is None
    assert rows[3] == {"n": None, "xs": [], "added": None}
    assert rows[4] == {"n": "5", "xs": None, "added": None}


def test_widen_policy_keeps_extreme_values(tmp_path):
    path = tmp_path / "widen.duckdb"
    with duckdb.connect(str(path)) as connection:
        connection.execute("CREATE SCHEMA w")
        connection.execute("CREATE TABLE w.x_v_1 (i BIGINT, d DATE, dt TIMESTAMP)")
        connection.execute(
            "INSERT INTO w.x_v_1 VALUES (-9223372036854775808, DATE '0001-01-01', TIMESTAMP '9999-12-31 23:59:59.999999'), "
            "(9223372036854775807, DATE '9999-12-31', TIMESTAMP '0001-01-01 00:00:00')"
        )
        connection.execute("CREATE TABLE w.x_v_2 (i DECIMAL(38, 9), d TIMESTAMPTZ, dt TIMESTAMPTZ)")
    with open_warehouse(duckdb_url(path)) as warehouse:
        refresh(
            warehouse,
            RefreshRequest("w", ("x",), options=GeneratorOptions(policy="widen", datetime_timezone="Asia/Tokyo")),
        )
    rows = read_view(path, "SELECT i, CAST(d AS VARCHAR), CAST(dt AS VARCHAR) FROM w_unified.x_unified ORDER BY i")
    assert rows == [
        (Decimal("-9223372036854775808"), "0001-01-01 00:00:00+00", "9999-12-31 14:59:59.999999+00"),
        (Decimal("9223372036854775807"), "9999-12-30 15:00:00+00", "0001-01-01 00:00:00+00"),
    ]
