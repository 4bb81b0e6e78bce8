"""A column's declared default as a constant of its type: the one form `<table>_current` writes it in.

The sink converts a declared default once, with the rules of a value of its column, and records the
result's *canonical text* in the version's description (uniview.sink.default_values).  This module
says which texts are canonical constants of each BigQuery type and writes them as typed literals
(`DATE '2024-01-31'`, `NUMERIC '12.5'`, `TRUE`): a text that is not one (a zero date, a value out of
BigQuery's range, `CURRENT_TIMESTAMP`, a type no literal writes) gives None, an *unknown* default.
No literal it writes can fail when a query runs.

| Type               | canonical text                                  | literal                          |
|--------------------|-------------------------------------------------|----------------------------------|
| STRING             | any text                                        | `'text'`                         |
| INT64              | an integer in INT64's range                     | `7`                              |
| FLOAT64            | a finite number, as Python's repr writes it     | `CAST(1.5 AS FLOAT64)`           |
| NUMERIC/BIGNUMERIC | a number within the type's digits and scale     | `NUMERIC '12.5'`                 |
| BOOL               | true / false                                    | `TRUE`                           |
| DATE               | YYYY-MM-DD, years 0001-9999                     | `DATE '2024-01-31'`              |
| DATETIME           | YYYY-MM-DD HH:MM:SS[.ffffff]                    | `DATETIME '...'`                 |
| TIME               | HH:MM:SS[.ffffff]                               | `TIME '10:00:00'`                |
| TIMESTAMP          | YYYY-MM-DD HH:MM:SS[.ffffff]+00:00 (UTC)        | `TIMESTAMP '...'`                |
| JSON               | one strict JSON document whose numbers a double holds | `JSON '{"a": 1}'`          |
| BYTES              | strict base64                                   | `FROM_BASE64('AP8Q')`            |

GEOGRAPHY, INTERVAL, ARRAY and STRUCT defaults are unknown.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
from datetime import UTC, date, datetime, time, timedelta, timezone
from decimal import Decimal, InvalidOperation
from typing import Any

from uniview.core.identifiers import string_literal
from uniview.core.types import (
    BIGNUMERIC_MAX_INTEGER_DIGITS,
    BIGNUMERIC_MAX_SCALE,
    NUMERIC_MAX_INTEGER_DIGITS,
    NUMERIC_MAX_SCALE,
    BQType,
    Scalar,
    decimal_parameters,
)

_INTEGER = re.compile(r"-?[0-9]+")
_NUMBER = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")
_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")
_CLOCK = r"([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]{1,6}))?"
_TIME = re.compile(_CLOCK)
_DATETIME = re.compile(rf"([0-9]{{4}})-([0-9]{{2}})-([0-9]{{2}})[ T]{_CLOCK}")
_ZONE = re.compile(r"(.*?)(Z|[+-][0-9]{2}(?::?[0-9]{2})?)?")
#: The epoch as a date or a timestamp: what Debezium's connectors write as the default of a column whose
#: default is computed when a row is written (now(), CURRENT_TIMESTAMP, CURRENT_DATE).
_EPOCH = re.compile(r"1970-01-01([ T]00:00:00(\.0+)?(Z|[+-]00(:?00)?)?)?")
_INT64 = (-(2**63), 2**63 - 1)
_JSON_INTEGERS = (-(2**63), 2**64 - 1)
#: Where a decimal type's integer digits and scale stop.
_DECIMAL_LIMITS = {
    "NUMERIC": (NUMERIC_MAX_INTEGER_DIGITS, NUMERIC_MAX_SCALE),
    "BIGNUMERIC": (BIGNUMERIC_MAX_INTEGER_DIGITS, BIGNUMERIC_MAX_SCALE),
}


def default_literal(text: str, bq_type: BQType) -> str | None:
    """The typed literal of the default whose text is `text` in a column of `bq_type`; None: unknown."""
    canonical = canonical_default(text, bq_type)
    if canonical is None or not isinstance(bq_type, Scalar):
        return None
    name = bq_type.name
    if name == "STRING":
        return string_literal(canonical)
    if name == "INT64":
        return canonical
    if name == "FLOAT64":
        return f"CAST({canonical} AS FLOAT64)"
    if name == "BOOL":
        return canonical.upper()
    if name == "BYTES":
        return f"FROM_BASE64({string_literal(canonical)})"
    return f"{name} {string_literal(canonical)}"


def canonical_default(text: str, bq_type: BQType) -> str | None:
    """`text` as the canonical text of a constant of `bq_type` (table above), or None when it is none."""
    if not isinstance(bq_type, Scalar) or bq_type.name not in _CANONICAL:
        return None
    try:
        return _CANONICAL[bq_type.name](text, bq_type)
    except (ValueError, OverflowError, InvalidOperation, binascii.Error, RecursionError):
        return None


def default_text(value: Any) -> str | None:
    """A recorded default (as JSON gives it) as the text a value of its column is typed from: a string as it
    is, a number or boolean as JSON writes it; None (unknown) for JSON null, objects and arrays."""
    if isinstance(value, str):
        return value
    if isinstance(value, (bool, int, float)):
        return json.dumps(value)
    return None


def is_epoch(text: str) -> bool:
    """The text is the epoch, as a date or a timestamp (with a zero offset or none)."""
    return _EPOCH.fullmatch(text) is not None


def _string(text: str, _: Scalar) -> str:
    return text


def _int64(text: str, _: Scalar) -> str | None:
    if not _INTEGER.fullmatch(text):
        return None
    number = int(text)
    return str(number) if _INT64[0] <= number <= _INT64[1] else None


def _float64(text: str, _: Scalar) -> str | None:
    if not _NUMBER.fullmatch(text):
        return None
    number = float(text)
    return repr(number) if math.isfinite(number) else None


def _decimal(text: str, bq_type: Scalar) -> str | None:
    if not _NUMBER.fullmatch(text):
        return None
    number = Decimal(text)
    if not number:
        return "0"
    integer_limit, scale_limit = _DECIMAL_LIMITS[bq_type.name]
    precision, scale = decimal_parameters(bq_type)
    digits, exponent = number.as_tuple().digits, int(number.as_tuple().exponent)
    while exponent < 0 and len(digits) > 1 and digits[-1] == 0:  # trailing zeros of the fraction
        digits, exponent = digits[:-1], exponent + 1
    fraction = max(0, -exponent)
    integer_digits = max(0, number.adjusted() + 1)
    if fraction > min(scale, scale_limit) or integer_digits > min(precision - scale, integer_limit):
        return None
    return format(Decimal((number.as_tuple().sign, digits, exponent)), "f")


def _bool(text: str, _: Scalar) -> str | None:
    return text.lower() if text.lower() in ("true", "false") else None


def _date(text: str, _: Scalar) -> str | None:
    found = _DATE.fullmatch(text)
    return None if found is None else date(*map(int, found.groups())).isoformat()


def _time_of_day(text: str, _: Scalar) -> str | None:
    found = _TIME.fullmatch(text)
    if found is None:
        return None
    hour, minute, second, fraction = found.groups()
    return time(int(hour), int(minute), int(second), _micros(fraction)).isoformat()


def _datetime(text: str, _: Scalar) -> str | None:
    moment = _parsed_datetime(text)
    return None if moment is None else moment.isoformat(sep=" ")


def _timestamp(text: str, _: Scalar) -> str | None:
    split = _ZONE.fullmatch(text)
    assert split is not None  # the pattern matches any text
    local, zone = split.groups()
    moment = _parsed_datetime(local)
    if moment is None:
        return None
    utc = moment.replace(tzinfo=_zone(zone)).astimezone(UTC)  # OverflowError past year 9999: unknown
    return utc.isoformat(sep=" ")


def _json(text: str, _: Scalar) -> str | None:
    def refuse(constant: str) -> None:
        raise ValueError(f"{constant} is not JSON")

    document = json.loads(text, parse_float=Decimal, parse_constant=refuse)
    return text if _json_numbers_fit(document) else None


def _bytes(text: str, _: Scalar) -> str | None:
    if len(text) % 4:
        return None
    base64.b64decode(text, validate=True)
    return text


def _parsed_datetime(text: str) -> datetime | None:
    found = _DATETIME.fullmatch(text)
    if found is None:
        return None
    year, month, day, hour, minute, second, fraction = found.groups()
    return datetime(int(year), int(month), int(day), int(hour), int(minute), int(second), _micros(fraction))


def _micros(fraction: str | None) -> int:
    return int((fraction or "0").ljust(6, "0"))


def _zone(zone: str | None) -> timezone:
    if zone is None or zone == "Z":
        return UTC
    digits = zone[1:].replace(":", "")
    offset = timedelta(hours=int(digits[:2]), minutes=int(digits[2:] or 0))
    return timezone(-offset if zone[0] == "-" else offset)


def _json_numbers_fit(document: Any) -> bool:
    """Every number of the document is one BigQuery's JSON holds exactly (an integer of INT64 or UINT64,
    or a number a double writes back the same)."""
    if isinstance(document, dict):
        return all(_json_numbers_fit(item) for item in document.values())
    if isinstance(document, list):
        return all(_json_numbers_fit(item) for item in document)
    if isinstance(document, bool) or not isinstance(document, (int, Decimal)):
        return True
    if isinstance(document, int):
        return _JSON_INTEGERS[0] <= document <= _JSON_INTEGERS[1]
    as_double = float(document)
    return math.isfinite(as_double) and Decimal(repr(as_double)) == document


_CANONICAL = {
    "STRING": _string,
    "INT64": _int64,
    "FLOAT64": _float64,
    "NUMERIC": _decimal,
    "BIGNUMERIC": _decimal,
    "BOOL": _bool,
    "DATE": _date,
    "TIME": _time_of_day,
    "DATETIME": _datetime,
    "TIMESTAMP": _timestamp,
    "JSON": _json,
    "BYTES": _bytes,
}
