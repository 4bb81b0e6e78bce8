"""frames.local_frame: driver-side rows as a DataFrame built in the JVM, exact and strict."""

from __future__ import annotations

import pytest
from pyspark.sql import types as T

from uniview.sink.frames import local_frame

SCHEMA = T.StructType(
    [
        T.StructField("text", T.StringType()),
        T.StructField("number", T.IntegerType()),
        T.StructField("names", T.ArrayType(T.StringType())),
        T.StructField("positions", T.ArrayType(T.IntegerType())),
    ]
)


def test_rows_come_back_exactly(spark):
    rows = [
        ('a "quoted" \\ back\\slash\nnew line', 7, ["é", "日本", "\U0001f600", None], [0, None, 2]),
        ('[{"name": "id", "type": "int(11)"}]' * 200, None, [], None),
        (None, -2147483648, None, [2147483647]),
    ]
    frame = local_frame(spark, rows, SCHEMA)
    assert frame.schema == SCHEMA
    assert frame.rdd.getNumPartitions() == 1
    assert [tuple(row) for row in frame.collect()] == rows


def test_no_rows_is_an_empty_frame(spark):
    assert local_frame(spark, [], SCHEMA).collect() == []


def test_a_row_that_does_not_fit_the_schema_fails_instead_of_vanishing(spark):
    with pytest.raises(Exception, match=r"(?i)malformed|parse|FAILFAST"):
        local_frame(spark, [("x", "not a number", [], [])], SCHEMA).collect()


@pytest.mark.parametrize("row", [("x", 1, []), ("x", 1, [], [], "one too many")])
def test_a_row_with_too_few_or_too_many_values_fails_instead_of_filling_nulls(spark, row):
    # zip() would stop at the shorter side: a missing value would read back as NULL, an extra one vanish.
    with pytest.raises(ValueError, match="zip"):
        local_frame(spark, [row], SCHEMA)
