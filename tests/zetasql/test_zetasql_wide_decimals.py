"""A decimal wider than 38 digits (MySQL's `decimal(65,30)`, a BIGNUMERIC(65, 30)) written with an exponent, as
Python's and Java's decimals write a value under 10^-6 (`0E-30`, `-1E-30`): it lands when its value has at most
p - s integer digits and s fraction digits, as the same value written plainly does, and both warehouses decide
alike (BigQuery's rendering run by ZetaSQL's reference implementation, DuckDB's load step).  Found by the
generative soak's envelope path, seed 9764: `UPDATE t SET c = -0.000000000000000000000000000001` of a
`decimal(65,30)` was quarantined (docs/sink.md#values-outside-bigquerys-domains)."""

from __future__ import annotations

from decimal import Decimal

import pytest
from test_zetasql_load_typing import _lines, bigquery_outcome, duckdb_outcome

from uniview.sink.mysql_types import bigquery_type
from uniview.sink.routing import LandingColumn

CASES = [
    # (declared, text, its value when it fits, else None)
    ("decimal(65,30)", "-1E-30", Decimal("-1E-30")),
    ("decimal(65,30)", "0E-30", Decimal(0)),
    ("decimal(65,30)", "1.5E-7", Decimal("1.5E-7")),
    ("decimal(65,30)", "1E-31", None),  # 31 fraction digits
    ("decimal(65,30)", "10E-32", None),  # 0.000...1 at 31 places, its trailing zero past them
    ("decimal(65,30)", "100E-32", Decimal("1E-30")),
    ("decimal(65,30)", "1.5E+34", Decimal("1.5E+34")),  # 35 integer digits
    ("decimal(65,30)", "1E+35", None),  # 36
    ("decimal(65,30)", "0.00E+99", Decimal(0)),
    ("decimal(65,30)", "1E99999", None),  # an exponent of 5 digits
    ("decimal(48,10)", "-12.5e2", Decimal(-1250)),
    ("decimal(48,10)", "1.000000000001E1", None),  # 11 fraction digits
    ("decimal(48,10)", "1.00000000001E1", Decimal("10.0000000001")),  # 10
]


@pytest.mark.parametrize(("declared", "text", "value"), CASES)
def test_a_wide_decimal_written_with_an_exponent_lands_when_its_value_fits(zetasql, declared, text, value):
    column = LandingColumn("c", declared, bigquery_type(declared).bq_type)
    assert bigquery_type(declared).bq_type.name == "BIGNUMERIC"
    lines = _lines({"0": '{"c": "%s"}' % text})
    bigquery, duck = (
        outcome["0"] for outcome in (bigquery_outcome(zetasql, lines, [column]), duckdb_outcome(lines, [column]))
    )
    if value is None:
        assert (bigquery[0], duck[0]) == ("type_mismatch", "type_mismatch")
        return
    assert (bigquery[0], duck[0]) == (None, None)
    assert Decimal(bigquery[2]) == value
    assert float(duck[2]) == float(value)  # DuckDB holds a BIGNUMERIC as a DOUBLE (docs/duckdb.md)
