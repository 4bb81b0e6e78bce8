"""The ZetaSQL analyzer accepts the load step's typing rendered for BigQuery (uniview.sink.load_dialect): for
every type the sink lands, at the top level and nested, and for a version of many columns, the statement that
types and judges a batch's lines yields each column in its version table's type, and the verdict as text."""

from __future__ import annotations

import pytest
from analyzer import Catalog

from uniview.sink.load_dialect import BIGQUERY
from uniview.sink.load_sql import typed_records
from uniview.sink.mysql_types import bigquery_type
from uniview.sink.routing import LandingColumn
from uniview.types import Array, Scalar, parse_type

#: Declared as a source declares them; each lands as its sink mapping (tests/sink/test_load_typing.py's TYPES).
DECLARED = [
    "INT64",
    "FLOAT64",
    "NUMERIC",
    "NUMERIC(10, 2)",
    "NUMERIC(20, 3)",
    "decimal(40,10)",
    "BIGNUMERIC",
    "BIGNUMERIC(50, 10)",
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
    "STRUCT<inner STRUCT<t TIMESTAMP, tags ARRAY<STRING>>, `odd key` BYTES>",
    "ARRAY<ARRAY<INT64>>",
]
#: A version of many columns, names that need quoting in a JSONPath included.
MANY = [
    ("id", "int(11)"),
    ("name", "varchar(20)"),
    ("d", "date"),
    ("item", "STRUCT<qty INT64>"),
    ("n", "decimal(20,2)"),
    ("m", "decimal(20,2)"),
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
