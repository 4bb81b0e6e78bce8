"""TIMESTAMP values: the sink's fast reading of a trailing "Z" gives the instants Spark's own zoned parse gives."""

from datetime import UTC, datetime

import pytest

from uniview.sink.job import SESSION_SETTINGS
from uniview.sink.spark_types import typed_value, utc_timestamp
from uniview.types import Scalar


def micros(*parts: int) -> int:
    at = datetime(*parts, tzinfo=UTC)
    return int(at.timestamp()) * 1_000_000 + at.microsecond


CASES = [
    ("2024-05-01T10:00:00Z", micros(2024, 5, 1, 10)),
    ("2024-05-01 10:00:00.123456Z", micros(2024, 5, 1, 10, 0, 0, 123456)),
    ("2024-05-01T10:00:00+02:00", micros(2024, 5, 1, 8)),
    ("2024-05-01T10:00:00-0530", micros(2024, 5, 1, 15, 30)),
    ("2024-05-01T10:00:00", micros(2024, 5, 1, 10)),
    ("2024-12-31T23:59:59.999999Z", micros(2024, 12, 31, 23, 59, 59, 999999)),
    ("2024-02-30T10:00:00Z", None),
    ("2024-05-01T10:00:00ZZ", None),
    ("Z", None),
]


@pytest.fixture(scope="module")
def texts(spark):
    for key, value in SESSION_SETTINGS.items():
        spark.conf.set(key, value)
    return spark.createDataFrame([(text,) for text, _ in CASES], "text string")


def test_timestamp_columns_land_the_instant_their_text_names(texts):
    from pyspark.sql import functions as F

    landed = texts.select("text", F.unix_micros(typed_value(Scalar("TIMESTAMP"), F.col("text"))).alias("at")).collect()
    assert {row["text"]: row["at"] for row in landed} == dict(CASES)


def test_a_trailing_z_reads_as_spark_reads_the_zone_itself(texts):
    from pyspark.sql import functions as F

    pairs = texts.select(
        F.unix_micros(utc_timestamp(F.col("text"))).alias("fast"),
        F.unix_micros(F.col("text").cast("timestamp")).alias("zoned"),
    ).collect()
    zoned = [(row["fast"], row["zoned"]) for row in pairs if row["zoned"] is not None]
    assert len(zoned) == 6 and all(fast == at for fast, at in zoned)


ARRAY_CASES = [
    ("ARRAY<INT64>", "[1, 2]", True),
    ("ARRAY<INT64>", "[1, null]", False),
    ("ARRAY<INT64>", "[]", True),
    ("STRUCT<a INT64, b ARRAY<STRING>>", '{"a": 1, "b": ["x", null]}', False),
    ("STRUCT<a INT64, b ARRAY<STRING>>", '{"a": null, "b": null}', True),
    ("ARRAY<STRUCT<c ARRAY<INT64>>>", '[{"c": [1]}, {"c": [2, null]}]', False),
    ("ARRAY<STRUCT<c ARRAY<INT64>>>", '[{"c": [1]}, {"c": null}]', True),
    ("ARRAY<STRUCT<c ARRAY<INT64>>>", "[null]", False),
]


@pytest.mark.parametrize(("declared", "text", "lands"), ARRAY_CASES)
def test_an_array_holding_a_null_element_does_not_fit_since_bigquery_arrays_cannot_hold_null(
    spark, declared, text, lands
):
    """BigQuery refuses an ARRAY with a NULL element: such a value does not fit (its record is quarantined), at
    any depth; it is never landed with the element left out.  NULL arrays and NULL fields still land."""
    from pyspark.sql import functions as F

    from uniview.sink.spark_types import carrier_type, without_null_elements
    from uniview.types import parse_type

    bq_type = parse_type(declared)
    frame = spark.createDataFrame([(text,)], "text string")
    carried = F.from_json(F.col("text"), carrier_type(bq_type))
    (row,) = frame.select(
        carried.isNotNull().alias("read"), without_null_elements(bq_type, carried).isNotNull().alias("typed")
    ).collect()
    assert row["read"], "Spark reads the value itself"
    assert row["typed"] is lands
