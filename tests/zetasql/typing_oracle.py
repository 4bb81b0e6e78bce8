"""What BigQuery lands for one JSON value of a scalar column, from its documented rules, in exact Python: the
oracle the generated values are checked on (tests/zetasql/test_zetasql_typing_generated.py).

`expected(bq_type, value)` gives the value landed in the canonical form of test_zetasql_load_typing.canonical,
QUARANTINED when the value does not fit, or UNCHECKED for a type the oracle does not judge (JSON, GEOGRAPHY,
nested types, a BIGNUMERIC too wide for DuckDB's DECIMAL).  `value` is the JSON value as Python reads it with
`json.loads(text, parse_float=Decimal, parse_int=Decimal)`, plus its JSON text as written (`text`).
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from datetime import UTC, date, datetime, time, timedelta
from decimal import ROUND_HALF_UP, Context, Decimal, InvalidOperation, localcontext
from typing import Any

from uniview.core.types import BQType, Scalar, decimal_parameters

QUARANTINED = "quarantined"
UNCHECKED = "unchecked"

_INT64 = (-(2**63), 2**63 - 1)
_NUMBER = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")
_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")
_CLOCK = r"([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]{1,6})?"
_DATETIME = re.compile(rf"([0-9]{{4}})-([0-9]{{2}})-([0-9]{{2}})[ T]{_CLOCK}")
_TIMESTAMP = re.compile(rf"([0-9]{{4}})-([0-9]{{2}})-([0-9]{{2}})[ T]{_CLOCK}(Z|([+-])([0-9]{{2}}):?([0-9]{{2}}))?")
_TIME = re.compile(_CLOCK)
_BASE64 = re.compile(r"([A-Za-z0-9+/]{4})*([A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?")
#: BigQuery's TIMESTAMP range in microseconds from 0001-01-01 00:00:00 UTC.
_TIMESTAMP_MAX = (date(9999, 12, 31).toordinal() - 1) * 86_400_000_000 + 86_400_000_000 - 1
#: Year 0000 (a leap year of the proleptic calendar, 1,461 days before year 4) as TIMESTAMP's local time may have.
_YEAR_ZERO_SHIFT = 1461


def expected(bq_type: BQType, value: Any, text: str) -> Any:
    """The landed value of the JSON value `value` (written `text`) as `bq_type`, QUARANTINED or UNCHECKED."""
    if value is None:
        return None
    if not isinstance(bq_type, Scalar):
        return UNCHECKED
    judge = _JUDGES.get(bq_type.name)
    if judge is None:
        return UNCHECKED
    return judge(bq_type, value, text)


def _scalar_text(value: Any, text: str) -> str | None:
    """The text a scalar's rules read: a string's characters, a number as written, true/false; None otherwise."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Decimal):
        return text.strip()
    return None


def _int64(_: Scalar, value: Any, text: str) -> Any:
    read = _scalar_text(value, text)
    if read is None or not re.fullmatch(r"-?[0-9]{1,19}", read) or not _INT64[0] <= int(read) <= _INT64[1]:
        return QUARANTINED
    return Decimal(int(read))


def _decimal(bq_type: Scalar, value: Any, text: str) -> Any:
    """Rounded once, half away from zero, to the scale; quarantined past p - s integer digits."""
    precision, scale = decimal_parameters(bq_type)
    if precision > 38:
        return UNCHECKED
    read = _scalar_text(value, text)
    if read is None or isinstance(value, bool) or not _NUMBER.fullmatch(read):
        return QUARANTINED
    if isinstance(value, str) and re.match(r"[+-]?[0-9.]{39,}[eE]", read):  # documented: no source writes one
        return QUARANTINED
    with localcontext(Context(prec=10_000, Emax=10**9, Emin=-(10**9))):
        rounded = Decimal(read).quantize(Decimal(1).scaleb(-scale), rounding=ROUND_HALF_UP)
        if abs(rounded) >= Decimal(10) ** (precision - scale):
            return QUARANTINED
        return rounded.normalize() if rounded else Decimal(0)


def _float(_: Scalar, value: Any, text: str) -> Any:
    read = _scalar_text(value, text)
    if read is None or isinstance(value, bool):
        return QUARANTINED
    if read in ("NaN", "Infinity", "-Infinity"):
        number = float(read)
        return "NaN" if math.isnan(number) else number
    if not _NUMBER.fullmatch(read):
        return QUARANTINED
    number = float(read)
    return QUARANTINED if math.isinf(number) else number


def _bool(_: Scalar, value: Any, text: str) -> Any:
    read = _scalar_text(value, text)
    if read is None:
        return QUARANTINED
    if read.lower() in ("true", "false"):
        return str(read.lower() == "true")
    if re.fullmatch(r"-?[0-9]+", read) and int(read) in (0, 1):
        return str(int(read) == 1)
    return QUARANTINED


def _bytes(_: Scalar, value: Any, text: str) -> Any:
    if not isinstance(value, str) or not _BASE64.fullmatch(value):
        return QUARANTINED
    try:
        return base64.b64encode(base64.b64decode(value, validate=True)).decode()
    except binascii.Error:
        return QUARANTINED


def _date(_: Scalar, value: Any, text: str) -> Any:
    parts = _DATE.fullmatch(value) if isinstance(value, str) else None
    day = _calendar_day(*parts.groups()) if parts else None
    return QUARANTINED if day is None else day.isoformat()


def _datetime(_: Scalar, value: Any, text: str) -> Any:
    parts = _DATETIME.fullmatch(value) if isinstance(value, str) else None
    day = _calendar_day(*parts.groups()[:3]) if parts else None
    clock = _clock(*parts.groups()[3:]) if parts else None
    if day is None or clock is None:
        return QUARANTINED
    return datetime.combine(day, clock).isoformat()


def _timestamp(_: Scalar, value: Any, text: str) -> Any:
    """Local time (year 0000 too) minus the offset (-14:00..+14:00), within BigQuery's range in UTC."""
    parts = _TIMESTAMP.fullmatch(value) if isinstance(value, str) else None
    if parts is None:
        return QUARANTINED
    year, month, day, hour, minute, second, fraction, zone, sign, zone_hour, zone_minute = parts.groups()
    shifted = int(year) == 0
    moment = _calendar_day("0004" if shifted else year, month, day)
    clock = _clock(hour, minute, second, fraction)
    if moment is None or clock is None:
        return QUARANTINED
    offset = 0
    if zone not in (None, "Z"):
        minutes = int(zone_hour) * 60 + int(zone_minute)
        if int(zone_minute) > 59 or minutes > 14 * 60:
            return QUARANTINED
        offset = (minutes if sign == "+" else -minutes) * 60_000_000
    days = moment.toordinal() - 1 - (_YEAR_ZERO_SHIFT if shifted else 0)
    local = days * 86_400_000_000 + (clock.hour * 3600 + clock.minute * 60 + clock.second) * 1_000_000
    micros = local + clock.microsecond - offset
    if not 0 <= micros <= _TIMESTAMP_MAX:
        return QUARANTINED
    return (datetime(1, 1, 1, tzinfo=UTC) + timedelta(microseconds=micros)).isoformat()


def _time(_: Scalar, value: Any, text: str) -> Any:
    parts = _TIME.fullmatch(value) if isinstance(value, str) else None
    clock = _clock(*parts.groups()) if parts else None
    return QUARANTINED if clock is None else clock.isoformat()


def _calendar_day(year: str, month: str, day: str) -> date | None:
    try:
        return date(int(year), int(month), int(day))
    except ValueError:
        return None


def _clock(hour: str, minute: str, second: str, fraction: str | None) -> time | None:
    micros = int((fraction or ".")[1:].ljust(6, "0"))
    try:
        return time(int(hour), int(minute), int(second), micros)
    except ValueError:
        return None


def _string(_: Scalar, value: Any, text: str) -> Any:
    return value if isinstance(value, str) else UNCHECKED


def rounded_at_38_places(text: str) -> bool:
    """A number written with an exponent whose digits reach past 38 places: BigQuery's rendering reads it as a
    BIGNUMERIC (rounded at 38 places) before rounding it to its scale (a documented difference: no source writes
    one, a decimal's scale being at most 38)."""
    if "e" not in text.lower():
        return False
    try:
        with localcontext(Context(prec=10_000)):
            exponent = Decimal(text.strip('"')).normalize().as_tuple().exponent
    except InvalidOperation:
        return False
    return isinstance(exponent, int) and exponent < -38


_JUDGES = {
    "INT64": _int64,
    "NUMERIC": _decimal,
    "BIGNUMERIC": _decimal,
    "FLOAT64": _float,
    "BOOL": _bool,
    "BYTES": _bytes,
    "DATE": _date,
    "DATETIME": _datetime,
    "TIMESTAMP": _timestamp,
    "TIME": _time,
    "STRING": _string,
}
