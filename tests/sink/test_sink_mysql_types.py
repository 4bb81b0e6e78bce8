"""The MySQL -> BigQuery type mapping, as an explicit table."""

import pytest

from uniview.core.types import Array, Field, Scalar, Struct
from uniview.sink.mysql_types import bigquery_type

TABLE = [
    ("tinyint(1)", "BOOL"),
    ("TINYINT(1) UNSIGNED", "BOOL"),
    ("bool", "BOOL"),
    ("boolean", "BOOL"),
    ("bit(1)", "BOOL"),
    ("bit", "BOOL"),
    ("bit(8)", "INT64"),
    ("bit(64)", "INT64"),
    ("tinyint", "INT64"),
    ("tinyint(4)", "INT64"),
    ("smallint(6)", "INT64"),
    ("mediumint(9)", "INT64"),
    ("int(11)", "INT64"),
    ("int(10) unsigned", "INT64"),
    ("integer", "INT64"),
    ("INT UNSIGNED ZEROFILL", "INT64"),
    ("bigint(20)", "INT64"),
    ("bigint", "INT64"),
    ("bigint(20) unsigned", "NUMERIC(20, 0)"),
    ("bigint unsigned zerofill", "NUMERIC(20, 0)"),
    ("serial", "NUMERIC(20, 0)"),
    ("year", "INT64"),
    ("year(4)", "INT64"),
    ("decimal", "NUMERIC(10, 0)"),
    ("decimal(10,2)", "NUMERIC(10, 2)"),
    ("DECIMAL(10, 2) UNSIGNED", "NUMERIC(10, 2)"),
    ("numeric(38,9)", "NUMERIC(38, 9)"),
    ("decimal(29,0)", "NUMERIC(29, 0)"),
    ("dec(12)", "NUMERIC(12, 0)"),
    ("fixed(5,1)", "NUMERIC(5, 1)"),
    ("decimal(30,0)", "BIGNUMERIC(30, 0)"),
    ("decimal(20,10)", "BIGNUMERIC(20, 10)"),
    ("decimal(65,30)", "BIGNUMERIC(65, 30)"),
    ("decimal(65,0)", "BIGNUMERIC"),
    ("float", "FLOAT64"),
    ("float(7,4)", "FLOAT64"),
    ("double", "FLOAT64"),
    ("double precision", "FLOAT64"),
    ("real", "FLOAT64"),
    ("double unsigned", "FLOAT64"),
    ("char(3)", "STRING"),
    ("varchar(255)", "STRING"),
    ("tinytext", "STRING"),
    ("text", "STRING"),
    ("mediumtext", "STRING"),
    ("longtext", "STRING"),
    ("enum('a','b)','c d')", "STRING"),
    ("set('x','y')", "STRING"),
    ("varchar(10) character set utf8mb4 collate utf8mb4_bin", "STRING"),
    ("national varchar(10)", "STRING"),
    ("binary(16)", "BYTES"),
    ("varbinary(255)", "BYTES"),
    ("tinyblob", "BYTES"),
    ("blob", "BYTES"),
    ("mediumblob", "BYTES"),
    ("longblob", "BYTES"),
    ("date", "DATE"),
    ("datetime", "DATETIME"),
    ("datetime(6)", "DATETIME"),
    ("timestamp", "TIMESTAMP"),
    ("timestamp(3)", "TIMESTAMP"),
    ("time", "TIME"),
    ("time(6)", "TIME"),
    ("json", "JSON"),
    ("geometry", "GEOGRAPHY"),
    ("point", "GEOGRAPHY"),
    ("linestring", "GEOGRAPHY"),
    ("polygon", "GEOGRAPHY"),
    ("multipoint", "GEOGRAPHY"),
    ("multilinestring", "GEOGRAPHY"),
    ("multipolygon", "GEOGRAPHY"),
    ("geometrycollection", "GEOGRAPHY"),
    ("geomcollection", "GEOGRAPHY"),
]


@pytest.mark.parametrize(("mysql", "expected"), TABLE)
def test_mapping_table(mysql, expected):
    mapping = bigquery_type(mysql)
    assert str(mapping.bq_type) == expected
    assert mapping.warning is None or expected == "BIGNUMERIC"


def test_parameters_are_kept_for_the_table_schema():
    assert bigquery_type("decimal(10,2)").bq_type == Scalar("NUMERIC", (10, 2))


def test_too_many_integer_digits_warns():
    assert "38 integer digits" in bigquery_type("decimal(65,0)").warning


@pytest.mark.parametrize(
    "unknown", ["uuid", "decimal(70,2)", "decimal(5,10)", "mystery(1,2,3)", "RANGE<DATE>", "INTERVAL"]
)
def test_unknown_types_land_as_string_with_a_warning(unknown):
    mapping = bigquery_type(unknown)
    assert mapping.bq_type == Scalar("STRING")
    assert unknown in mapping.warning


@pytest.mark.parametrize(
    ("declared", "expected"),
    [
        ("STRING", Scalar("STRING")),
        ("INT64", Scalar("INT64")),
        ("BIGNUMERIC(40, 2)", Scalar("BIGNUMERIC", (40, 2))),
        ("ARRAY<STRING>", Array(Scalar("STRING"))),
        (
            "STRUCT<street STRING, city STRING>",
            Struct((Field("street", Scalar("STRING")), Field("city", Scalar("STRING")))),
        ),
    ],
)
def test_bigquery_syntax_is_used_as_is(declared, expected):
    assert bigquery_type(declared).bq_type == expected
    assert bigquery_type(declared).warning is None
