"""The BigQuery type parser: every data_type INFORMATION_SCHEMA emits round-trips, bad text is named."""

import pytest

from uniview.core.errors import TypeParseError
from uniview.core.types import Array, Field, Range, Scalar, Struct, parse_type

ROUND_TRIP = [
    "INT64",
    "FLOAT64",
    "BOOL",
    "STRING",
    "BYTES",
    "DATE",
    "DATETIME",
    "TIME",
    "TIMESTAMP",
    "JSON",
    "GEOGRAPHY",
    "INTERVAL",
    "NUMERIC",
    "NUMERIC(10)",
    "NUMERIC(10, 2)",
    "BIGNUMERIC",
    "BIGNUMERIC(76, 38)",
    "STRING(255)",
    "BYTES(16)",
    "RANGE<DATE>",
    "RANGE<DATETIME>",
    "RANGE<TIMESTAMP>",
    "ARRAY<INT64>",
    "ARRAY<STRING(10)>",
    "ARRAY<STRUCT<key STRING, value STRING>>",
    "STRUCT<a INT64, b ARRAY<STRING>>",
    "STRUCT<a STRUCT<b STRUCT<c STRUCT<d STRUCT<e ARRAY<NUMERIC(10, 2)>>>>>>",
    "STRUCT<`first name` STRING, `ünïcode` INT64, select BOOL, `a\\`b` DATE>",
    "ARRAY<STRUCT<r RANGE<DATE>, j JSON, g GEOGRAPHY>>",
]


@pytest.mark.parametrize("text", ROUND_TRIP)
def test_round_trip(text):
    assert str(parse_type(text)) == text
    assert parse_type(str(parse_type(text))) == parse_type(text)


def test_structure_is_exposed():
    parsed = parse_type("STRUCT<a NUMERIC(10, 2), `b c` ARRAY<RANGE<DATE>>>")
    assert parsed == Struct(
        (
            Field("a", Scalar("NUMERIC", (10, 2))),
            Field("b c", Array(Range(Scalar("DATE")))),
        )
    )
    assert parsed.base() == parse_type("STRUCT<a NUMERIC, `b c` ARRAY<RANGE<DATE>>>")


@pytest.mark.parametrize(
    ("alias", "canonical"),
    [
        ("INTEGER", "INT64"),
        ("FLOAT", "FLOAT64"),
        ("BOOLEAN", "BOOL"),
        ("DECIMAL(5, 1)", "NUMERIC(5, 1)"),
        ("BIGDECIMAL", "BIGNUMERIC"),
        ("RECORD<a INT64>", "STRUCT<a INT64>"),
        ("int64", "INT64"),
    ],
)
def test_aliases_and_case(alias, canonical):
    assert str(parse_type(alias)) == canonical


def test_sql_form_quotes_every_field():
    assert parse_type("STRUCT<a INT64, `b c` STRING>").sql() == "STRUCT<`a` INT64, `b c` STRING>"


def test_not_null_fields_are_accepted_and_dropped():
    assert parse_type("STRUCT<a INT64 NOT NULL, b STRING>") == parse_type("STRUCT<a INT64, b STRING>")


@pytest.mark.parametrize(
    "text",
    [
        "INT65",
        "",
        "ARRAY<INT64",
        "ARRAY<ARRAY<INT64>>",
        "STRUCT<>",
        "STRUCT<a>",
        "STRING(1, 2)",
        "INT64(3)",
        "RANGE<INT64>",
        "NUMERIC(a)",
        "INT64 extra",
        "STRUCT<a INT64,>",
        "MAP<STRING, INT64>",
        "STRING;DROP",
    ],
)
def test_unparseable_text_names_table_and_column(text):
    with pytest.raises(TypeParseError) as raised:
        parse_type(text, table="customer_v_abc", column="id")
    assert "customer_v_abc.id" in str(raised.value)
    assert repr(text) in str(raised.value)


def test_quoted_plain_names_parse_like_unquoted():
    assert parse_type("STRUCT<`select` BOOL>") == parse_type("STRUCT<select BOOL>")


@pytest.mark.parametrize(
    ("text", "valid"),
    [
        ("NUMERIC(38, 9)", True),
        ("NUMERIC(29)", True),
        ("NUMERIC(30)", False),
        ("NUMERIC(40, 2)", False),
        ("NUMERIC(5, 7)", False),
        ("NUMERIC(0)", False),
        ("BIGNUMERIC(76, 38)", True),
        ("BIGNUMERIC(48, 10)", True),
        ("BIGNUMERIC(50, 10)", False),
        ("BIGNUMERIC(39)", False),
        ("STRING(1)", True),
        ("STRING(0)", False),
        ("BYTES(0)", False),
    ],
)
def test_a_parameterized_type_bigquery_refuses_is_not_a_type(text, valid):
    """BigQuery's parameterized types: NUMERIC(P, S) with 0 <= S <= 9 and max(1, S) <= P <= S + 29, BIGNUMERIC
    with 0 <= S <= 38 and max(1, S) <= P <= S + 38, lengths of at least 1; anything else would fail the
    sink's CREATE TABLE, so it is refused where the type is read."""
    if valid:
        assert str(parse_type(text)) == text
    else:
        with pytest.raises(TypeParseError, match=r"BigQuery type|at least 1"):
            parse_type(text)
