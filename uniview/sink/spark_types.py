"""How each BigQuery column type is read from a record's `data` object with Spark's native functions.

Every column is read into a *carrier* type and then converted natively into its *landing* type
(the Spark type written out).  Scalars are carried as text (the value's text in the record's
`data` map) and converted with a regular-expression guard, so "1.5" is not silently truncated
into an INT64.  Spark gives a JSON number as text through a double, which is exact up to 15
significant digits: decimals of more precision, and nested types, are parsed from the line
itself with their landing type instead (parse_may_fail; exact from JSON numbers and strings).
A non-null JSON value whose typed value is NULL did not fit the declared type.

| BigQuery type            | JSON value accepted                                   | landing Spark type |
|--------------------------|-------------------------------------------------------|--------------------|
| INT64                    | integer number or string of digits, in range          | bigint             |
| FLOAT64                  | number, or string Spark casts to double                | double             |
| NUMERIC/BIGNUMERIC(p<=38)| number or numeric string, at most p digits            | decimal(p, s)      |
| BIGNUMERIC (p > 38)      | numeric string within the declared digits             | string             |
| BOOL                     | true/false, "true"/"false", integers (0 false)        | boolean            |
| STRING                   | any value (non-strings as their JSON text)            | string             |
| BYTES                    | base64 string                                         | binary             |
| DATE                     | "YYYY-MM-DD"                                          | date               |
| DATETIME                 | "YYYY-MM-DD HH:MM:SS[.ffffff]" (or with "T")          | timestamp_ntz      |
| TIMESTAMP                | as DATETIME, optional "Z" or "+HH:MM" (default UTC)   | timestamp          |
| TIME                     | "HH:MM:SS[.ffffff]" within 00:00:00-23:59:59.999999   | string             |
| JSON                     | a JSON document, inline or as a string                | string             |
| GEOGRAPHY                | WKT text                                              | string             |
| STRUCT / ARRAY           | an object / array parsed by Spark into the same shape, no array holding a NULL element (BigQuery's arrays cannot) | struct / array     |
"""

from __future__ import annotations

import operator
from functools import reduce

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

from uniview.errors import TypeParseError
from uniview.sink import value_patterns as patterns
from uniview.types import DEFAULT_DECIMAL_PARAMETERS, Array, BQType, Scalar, Struct

_STRING_LANDED = frozenset({"STRING", "TIME", "JSON", "GEOGRAPHY"})
_SCALAR_LANDING = {
    "INT64": T.LongType(),
    "FLOAT64": T.DoubleType(),
    "BOOL": T.BooleanType(),
    "BYTES": T.BinaryType(),
    "DATE": T.DateType(),
    "DATETIME": T.TimestampNTZType(),
    "TIMESTAMP": T.TimestampType(),
}


def spark_decimal(bq_type: BQType) -> T.DecimalType | None:
    """The Spark decimal for a NUMERIC/BIGNUMERIC that fits 38 digits, else None."""
    decimal = patterns.parsed_decimal(bq_type)
    return None if decimal is None else T.DecimalType(*decimal)


def landing_type(bq_type: BQType) -> T.DataType:
    """The Spark type a column of `bq_type` is written out as."""
    if isinstance(bq_type, Array):
        return T.ArrayType(landing_type(bq_type.element))
    if isinstance(bq_type, Struct):
        return T.StructType([T.StructField(f.name, landing_type(f.type)) for f in bq_type.fields])
    if not isinstance(bq_type, Scalar):
        raise TypeParseError(f"{bq_type} cannot be landed by the sink")
    if bq_type.name in DEFAULT_DECIMAL_PARAMETERS:
        return spark_decimal(bq_type) or T.StringType()
    if bq_type.name in _STRING_LANDED:
        return T.StringType()
    if bq_type.name not in _SCALAR_LANDING:
        raise TypeParseError(f"{bq_type} cannot be landed by the sink")
    return _SCALAR_LANDING[bq_type.name]


def carrier_type(bq_type: BQType) -> T.DataType:
    """The Spark type `from_json` parses a column of `bq_type` into."""
    if isinstance(bq_type, (Array, Struct)) or parse_may_fail(bq_type):
        return landing_type(bq_type)
    return T.StringType()


def parse_may_fail(bq_type: BQType) -> bool:
    """True when from_json itself may turn a non-null value into NULL: the values read from the line
    (value_patterns.read_from_line: nested types, decimals of more than 15 digits)."""
    return patterns.read_from_line(bq_type)


def typed_value(bq_type: BQType, carried: Column) -> Column:
    """The landing value of one column from its carrier value; NULL when the value does not fit."""
    if not isinstance(bq_type, Scalar) or parse_may_fail(bq_type):  # nested (RANGE is refused before)
        return carried
    name = bq_type.name
    if name in ("NUMERIC", "BIGNUMERIC"):
        decimal = spark_decimal(bq_type)
        if decimal is None:
            return _guarded(carried, patterns.wide_decimal(bq_type), carried)
        return _guarded(carried, patterns.NUMBER, carried.cast(decimal))
    if name == "BYTES":
        return _guarded(carried, patterns.BASE64, F.unbase64(carried))
    if name == "INT64":
        return _guarded(carried, patterns.INTEGER, carried.cast("bigint"))
    if name == "FLOAT64":
        return carried.cast("double")
    if name == "BOOL":
        return _boolean(carried)
    if name == "DATE":
        return _guarded(carried, patterns.DATE, carried.cast("date"))
    if name == "DATETIME":
        return _guarded(carried, patterns.DATETIME, carried.cast("timestamp_ntz"))
    if name == "TIMESTAMP":
        return _guarded(carried, patterns.TIMESTAMP, utc_timestamp(carried))
    if name == "TIME":
        return _guarded(carried, patterns.TIME, carried)
    if name == "JSON":
        return F.when(F.json_array_length(F.concat(F.lit("["), carried, F.lit("]"))) == 1, carried)
    return carried


def without_null_elements(bq_type: BQType, value: Column) -> Column:
    """`value`, or NULL (a misfit) when it holds an ARRAY with a NULL element (null_element)."""
    holes = null_element(bq_type, value)
    return value if holes is None else F.when(~holes, value)


def null_element(bq_type: BQType, value: Column) -> Column | None:
    """Whether `value` holds an ARRAY with a NULL element, at any depth (None: its type holds no ARRAY).
    BigQuery's arrays cannot hold NULL: such a value does not fit, and its record is quarantined whole
    rather than landed with the element left out (docs/bad-records.md)."""
    if isinstance(bq_type, Array):
        element = bq_type.element

        def hole(item: Column) -> Column:
            inner = null_element(element, item)
            return item.isNull() if inner is None else item.isNull() | inner

        return F.coalesce(F.exists(value, hole), F.lit(False))
    if isinstance(bq_type, Struct):
        checks = [c for f in bq_type.fields if (c := null_element(f.type, value.getField(f.name))) is not None]
        return F.coalesce(reduce(operator.or_, checks), F.lit(False)) if checks else None
    return None


def utc_timestamp(text: Column) -> Column:
    """`text` (a timestamp, optionally with a zone) cast to a timestamp.  A trailing "Z" is dropped first:
    the text is then read in the session's time zone, which the sink sets to UTC (job.SESSION_SETTINGS),
    so the instant is the same, and Spark skips resolving a zone name for every value."""
    zulu = text.endswith("Z")
    return F.when(zulu, text.substr(F.lit(1), F.length(text) - 1)).otherwise(text).cast("timestamp")


def _guarded(carried: Column, pattern: str, value: Column) -> Column:
    return F.when(carried.rlike(pattern), value)


def _boolean(carried: Column) -> Column:
    lowered = F.lower(carried)
    return (
        F.when(lowered == "true", F.lit(True))
        .when(lowered == "false", F.lit(False))
        .when(carried.rlike(patterns.BOOL_INTEGER), ~carried.rlike(patterns.BOOL_ZERO))
    )
