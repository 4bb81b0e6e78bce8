"""What text a column of each BigQuery scalar type accepts: the guards of the sink's typing.

A value is typed only when its text matches its type's pattern, so "1.5" is never truncated into an
INT64 and "2024-05-01x" never read as a date.  The load step's SQL (uniview.sink.load_typing) applies
them on either warehouse.
"""

from __future__ import annotations

from uniview.core.types import (
    BIGNUMERIC_MAX_INTEGER_DIGITS,
    DEFAULT_DECIMAL_PARAMETERS,
    Array,
    BQType,
    Scalar,
    Struct,
    decimal_parameters,
)

INTEGER = r"^-?[0-9]{1,19}$"
#: A year of DATE and DATETIME: 0001 to 9999 (BigQuery's range; year 0000 is not one).
_YEAR = r"([0-9]{3}[1-9]|[0-9]{2}[1-9]0|[0-9][1-9]00|[1-9]000)"
DATE = rf"^{_YEAR}-[0-9]{{2}}-[0-9]{{2}}$"
_CLOCK = r"([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]{1,6})?"
DATETIME = rf"^{_YEAR}-[0-9]{{2}}-[0-9]{{2}}[ T]{_CLOCK}$"
#: A zone offset BigQuery reads: -14:00 to +14:00, minutes 00-59 (with or without the colon).
_OFFSET = r"[+-]((0[0-9]|1[0-3]):?[0-5][0-9]|14:?00)"
#: A TIMESTAMP's local time may be in year 0000 (an offset may bring it into range); its instant in UTC is
#: checked against BigQuery's range (TIMESTAMP_RANGE) once it is read.
TIMESTAMP = rf"^[0-9]{{4}}-[0-9]{{2}}-[0-9]{{2}}[ T]{_CLOCK}(Z|{_OFFSET})?$"
#: BigQuery's TIMESTAMP range, in UTC.
TIMESTAMP_RANGE = ("0001-01-01 00:00:00+00:00", "9999-12-31 23:59:59.999999+00:00")
TIME = rf"^{_CLOCK}$"
#: A record's metadata.timestamp (its _cdc_timestamp): read as a timestamp only when it has this shape.
METADATA_TIMESTAMP = (
    r"^[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,9})?(Z|[+-][0-9]{2}:?[0-9]{2})?$"
)
NUMBER = r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$"
#: A NUMBER with an exponent (of at most 4 digits): its integer digits, fraction digits and exponent as groups 1-3.
EXPONENT_NUMBER = r"^[+-]?([0-9]*)\.?([0-9]*)[eE]([+-]?[0-9]{1,4})$"
#: A NUMBER with an exponent and more than 38 characters before it: not read as a NUMERIC/BIGNUMERIC.
LONG_EXPONENT_MANTISSA = r"^[+-]?[0-9.]{39,}[eE]"
#: FLOAT64 text besides a NUMBER: the special values as Debezium and PostgreSQL write them (no other spelling:
#: not 'inf', 'nan', hexadecimal, digits with '_' or spaces around, which no source emits).
FLOAT_SPECIAL = r"^(NaN|-?Infinity)$"
#: The largest finite FLOAT64: a NUMBER beyond it (which a double cannot be) does not fit.
FLOAT_MAX = "1.7976931348623157e308"
BASE64 = r"^([A-Za-z0-9+/]{4})*([A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$"
#: BOOL: "true"/"false" in any case, or the integer 0 or 1 (MySQL's `tinyint(1)`, which also holds 2 or -1: such
#: a value is no BOOL and is quarantined, as a value out of any other type's domain is).
BOOL_INTEGER = r"^(-?0+|0*1)$"
BOOL_ZERO = r"^-?0+$"


def wide_decimal(bq_type: Scalar) -> str:
    """The pattern of a NUMERIC/BIGNUMERIC too wide for a 38-digit decimal (landed as its text)."""
    integer_digits, scale = wide_decimal_digits(bq_type)
    fraction = rf"(\.[0-9]{{1,{scale}}})?" if scale else ""
    return rf"^[+-]?[0-9]{{1,{integer_digits}}}{fraction}$"


def wide_decimal_digits(bq_type: Scalar) -> tuple[int, int]:
    """(integer digits, fraction digits) a NUMERIC/BIGNUMERIC too wide for a 38-digit decimal holds."""
    precision, scale = decimal_parameters(bq_type)
    return min(precision - scale, BIGNUMERIC_MAX_INTEGER_DIGITS), scale


#: The widest decimal Spark and DuckDB parse (a NUMERIC/BIGNUMERIC over it is landed as its text).
MAX_DECIMAL_PRECISION = 38


def parsed_decimal(bq_type: BQType) -> tuple[int, int] | None:
    """(precision, scale) of a NUMERIC/BIGNUMERIC parsed as a decimal (at most 38 digits), else None."""
    if not (isinstance(bq_type, Scalar) and bq_type.name in DEFAULT_DECIMAL_PARAMETERS):
        return None
    precision, scale = decimal_parameters(bq_type)
    return (precision, scale) if precision <= MAX_DECIMAL_PRECISION else None


def read_from_line(bq_type: BQType) -> bool:
    """True for the values read from the record's line with their type rather than from their text:
    nested types, and every decimal parsed as one (a JSON number's text has been through a double where the
    dialect's number text is not exact, so 0.12499999999999999999 would read 0.125 and round to 0.13)."""
    if isinstance(bq_type, (Array, Struct)):
        return True
    return parsed_decimal(bq_type) is not None
