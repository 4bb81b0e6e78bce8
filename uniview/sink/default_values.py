"""Each declared default converted once, as a value of its column is: what a version's description records.

A column's default is typed with the load step's own rules (uniview.sink.load_typing, rendered for DuckDB
and run in an in-memory DuckDB on a record whose data is the defaults), then kept only when its text is a
constant of the column's BigQuery type (uniview.core.default_literals).  Anything else is *unknown*
(None): a default the source computes when a row is written (VOLATILE_DEFAULT: now(), CURRENT_TIMESTAMP),
one its column's rules refuse (`CURRENT_TIMESTAMP` as text in a TIMESTAMP column, MySQL's zero date
'0000-00-00 00:00:00', 'x' in an INT64 column), one out of BigQuery's range, and every default of a
GEOGRAPHY, ARRAY or STRUCT column.  So `tinyint(1) DEFAULT 1` is TRUE, `tinyint(1) DEFAULT 2` unknown (2 is
no BOOL) and `INT DEFAULT '5'` is 5, as the same values in a record would land.

Before that, a default a Debezium connector declares is stored as its source stores it (`stored_default`): the
connectors send the default as the DDL or the catalog spells it, and the source converts it to the column's type
when it fills the rows already there, which is what those rows show.  One rule per source dialect and type:

| source (Debezium's `source.connector`) | column type | what the source stores |
|---|---|---|
| postgresql | char(n) (BPCHAR) | padded with spaces to n; trailing spaces past n cut (PostgreSQL's character types [1]) |
| postgresql | varchar(n) | trailing spaces past n cut [1] |
| postgresql | timestamp(p), timestamptz(p) | rounded to p fractional digits, a tie away from 2000-01-01 00:00 UTC [2] |
| postgresql | time(p), timetz(p) | rounded to p fractional digits, a tie up [2] |
| postgresql | numeric(p,s) | rounded to s fractional digits, a tie away from zero [3] |
| mysql, mariadb | char(n) | trailing spaces removed: MariaDB and MySQL read a CHAR back without them [4] |
| mysql, mariadb | datetime(p), timestamp(p), time(p) | cut to p fractional digits (p is 0 when not declared) [5] |
| mysql, mariadb | decimal(p,s) | rounded to s fractional digits, a tie away from zero [6] |

[1] https://www.postgresql.org/docs/current/datatype-character.html ("unless the excess characters are all spaces,
    in which case the string will be truncated to the maximum length"; "values of type character will be
    space-padded").
[2] PostgreSQL's AdjustTimestampForTypmod and AdjustTimeForTypmod (src/backend/utils/adt/timestamp.c, date.c):
    `(time + offset) / scale * scale`, and for a timestamp before 2000 the same on its distance from 2000.
[3] https://www.postgresql.org/docs/current/datatype-numeric.html ("the system will round the value to the
    specified number of fractional digits"); numeric's rounding breaks ties away from zero (functions-math).
[4] https://mariadb.com/kb/en/char ("Trailing spaces are removed when CHAR values are retrieved unless the
    PAD_CHAR_TO_FULL_LENGTH SQL mode is enabled"): that mode is not assumed.
[5] MariaDB truncates the fractional seconds it does not keep unless the TIME_ROUND_FRACTIONAL SQL mode is set
    (https://mariadb.com/docs/server/reference/sql-functions/date-time-functions/microseconds-in-mariadb); that
    mode is not assumed.  MySQL 8 rounds by default (https://dev.mysql.com/doc/refman/8.4/en/fractional-seconds.html)
    unless TIME_TRUNCATE_FRACTIONAL: the rule is MariaDB's.
[6] https://dev.mysql.com/doc/refman/8.4/en/precision-math-rounding.html ("For inserts into a DECIMAL ... column
    ... rounding uses round half away from zero").

All were confirmed on the live servers (tests/kafka/test_postgres_debezium_e2e.py, test_mariadb_debezium_e2e.py).
The precision and length reach the sink only where the connector propagates the column's source type
(`datatype.propagate.source.type`, docs/sources.md); without it a default is kept as the connector sent it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import ROUND_DOWN, ROUND_HALF_DOWN, ROUND_HALF_UP, Context, Decimal, InvalidOperation

import duckdb
from sqlglot import exp

from uniview.core.default_literals import canonical_default
from uniview.core.types import Scalar
from uniview.sink.load_typing import data_of, typed_column
from uniview.sink.routing import LandingColumn
from uniview.sink.versioning import VOLATILE_DEFAULT

#: Scalar types a default can be known for (every other type's default is unknown).
_TYPED = ("STRING", "INT64", "FLOAT64", "NUMERIC", "BIGNUMERIC", "BOOL", "DATE", "DATETIME", "TIME", "TIMESTAMP")
_TYPED_AS_TEXT = ("JSON", "BYTES")
#: A moment's text: the clock's seconds, their fraction, and what follows (a zone).
_SECONDS = re.compile(
    r"(?P<head>(?:[0-9]{4}-[0-9]{2}-[0-9]{2}[ T])?[0-9]{2}:[0-9]{2}:[0-9]{2})\.(?P<fraction>[0-9]+)(?P<tail>.*)"
)
#: PostgreSQL's timestamps count from here: a tie rounds away from it (AdjustTimestampForTypmod).
_POSTGRES_EPOCH = "2000-01-01"
#: Room for the digits of any numeric either source holds (PostgreSQL's run to 147,455 before the point).
_DECIMAL_CONTEXT = Context(prec=200_000)
#: Debezium's connector names (`source.connector`) -> the dialect whose storage rules apply.
_DIALECTS = {"postgresql": "postgresql", "mysql": "mysql", "mariadb": "mysql"}


@dataclass(frozen=True)
class SourceColumnType:
    """A column's type as its source declares it: the name (upper case: BPCHAR, CHAR, VARCHAR, TIMESTAMP, DATETIME,
    TIME, NUMERIC, DECIMAL, ...), its length and its scale, as the connector propagates them (None: not declared).
    PostgreSQL gives a time's precision as its scale, MySQL and MariaDB as its length."""

    name: str
    length: int | None = None
    scale: int | None = None


def stored_default(text: str, connector: str, column_type: SourceColumnType) -> str:
    """`text`, a default as the connector `connector` declares it, as its source stores it in a column of
    `column_type`: the value rows older than the column show (the table above).  A text no rule concerns, or one
    the rule cannot read, is returned as it is."""
    rule = _STORED.get((_DIALECTS.get(connector, ""), column_type.name))
    return text if rule is None else rule(text, column_type)


def _postgres_char(text: str, column_type: SourceColumnType) -> str:
    length = column_type.length
    return text if length is None else _spaces_cut(text, length).ljust(length)


def _postgres_varchar(text: str, column_type: SourceColumnType) -> str:
    return text if column_type.length is None else _spaces_cut(text, column_type.length)


def _spaces_cut(text: str, length: int) -> str:
    """The text without the trailing spaces past `length` (other characters past it: the source refuses the text)."""
    return text[:length] if text[length:].strip(" ") == "" else text


def _postgres_timestamp(text: str, column_type: SourceColumnType) -> str:
    before_epoch = text[:10] < _POSTGRES_EPOCH  # the head is the UTC moment (Debezium's ZonedTimestamp is in UTC)
    return _moment_at(text, column_type.scale, ROUND_HALF_DOWN if before_epoch else ROUND_HALF_UP)


def _postgres_time(text: str, column_type: SourceColumnType) -> str:
    return _moment_at(text, column_type.scale, ROUND_HALF_UP)


def _mysql_char(text: str, _: SourceColumnType) -> str:
    return text.rstrip(" ")


def _mysql_moment(text: str, column_type: SourceColumnType) -> str:
    return _moment_at(text, column_type.length or 0, ROUND_DOWN)


def _decimal_at_scale(text: str, column_type: SourceColumnType) -> str:
    if column_type.scale is None:
        return text
    try:
        number = Decimal(text)
        if not number.is_finite():
            return text
        rounded = number.quantize(Decimal(1).scaleb(-column_type.scale), ROUND_HALF_UP, _DECIMAL_CONTEXT)
    except InvalidOperation:
        return text
    return format(rounded, "f")


def _moment_at(text: str, digits: int | None, rounding: str) -> str:
    """A date-time's or time's text with `digits` fractional digits of its seconds, rounded by `rounding` (the
    fraction's tie: ROUND_HALF_UP a later second, ROUND_HALF_DOWN an earlier one; ROUND_DOWN cuts)."""
    found = _SECONDS.fullmatch(text)
    if found is None or digits is None or len(found["fraction"]) <= digits:
        return text
    kept = Decimal("0." + found["fraction"]).quantize(Decimal(1).scaleb(-digits), rounding)
    head = found["head"]
    if kept >= 1:
        later = _a_second_later(head)
        if later is None:
            return text
        head, kept = later, kept - 1
    fraction = format(kept, "f")[1:] if digits else ""  # "0.124" -> ".124"
    return f"{head}{fraction}{found['tail']}"


def _a_second_later(head: str) -> str | None:
    """`YYYY-MM-DD HH:MM:SS` (or with `T`) a second later; `HH:MM:SS` too, where 23:59:59 becomes 24:00:00 as in
    PostgreSQL (no BigQuery TIME: the default is then unknown).  None past year 9999."""
    if len(head) == 8:
        hours, minutes, seconds = map(int, head.split(":"))
        total = hours * 3600 + minutes * 60 + seconds + 1
        return f"{total // 3600:02d}:{total % 3600 // 60:02d}:{total % 60:02d}"
    try:
        moment = datetime.strptime(head[:10] + " " + head[11:], "%Y-%m-%d %H:%M:%S") + timedelta(seconds=1)
    except (ValueError, OverflowError):
        return None
    return moment.isoformat(sep=head[10])


_Rule = Callable[[str, SourceColumnType], str]
_STORED: dict[tuple[str, str], _Rule] = {
    **{("postgresql", name): _postgres_char for name in ("BPCHAR", "CHAR", "CHARACTER")},
    **{("postgresql", name): _postgres_varchar for name in ("VARCHAR", "CHARACTER VARYING")},
    **{("postgresql", name): _postgres_timestamp for name in ("TIMESTAMP", "TIMESTAMPTZ")},
    **{("postgresql", name): _postgres_time for name in ("TIME", "TIMETZ")},
    **{("postgresql", name): _decimal_at_scale for name in ("NUMERIC", "DECIMAL")},
    ("mysql", "CHAR"): _mysql_char,
    **{("mysql", name): _mysql_moment for name in ("DATETIME", "TIMESTAMP", "TIME")},
    **{("mysql", name): _decimal_at_scale for name in ("DECIMAL", "NUMERIC")},
}


def declared_defaults(columns: Sequence[LandingColumn]) -> dict[str, str | None]:
    """{column: its default's canonical text, or None when unknown} for each column that declares one."""
    declared = {c.name: c for c in columns if c.default is not None}
    typed = [c for c in declared.values() if c.default != VOLATILE_DEFAULT and _can_be_known(c)]
    texts = _typed_texts(typed) if typed else {}
    return {
        name: None if texts.get(name) is None else canonical_default(texts[name], column.bq_type)  # type: ignore[arg-type]
        for name, column in declared.items()
    }


def _can_be_known(column: LandingColumn) -> bool:
    return isinstance(column.bq_type, Scalar) and column.bq_type.name in (*_TYPED, *_TYPED_AS_TEXT)


def _typed_texts(columns: Sequence[LandingColumn]) -> dict[str, str | None]:
    """Each column's default typed as a value of the column, as text (None: its rules refuse it)."""
    line = exp.column("line")
    data = data_of(line)
    selected = []
    for column in columns:
        value = typed_column(data, column.name, column.bq_type, line).value
        if isinstance(column.bq_type, Scalar) and column.bq_type.name == "BYTES":
            value = exp.func("to_base64", value)
        selected.append(exp.cast(value, "VARCHAR").sql("duckdb"))
    record = {"data": {column.name: json.loads(column.default or "null") for column in columns}}
    with duckdb.connect(":memory:") as connection:
        connection.execute("SET TimeZone = 'UTC'")
        row = connection.execute(
            f"SELECT {', '.join(selected)} FROM (SELECT CAST(? AS VARCHAR) AS line)", [json.dumps(record)]
        ).fetchone()
    assert row is not None
    return {column.name: text for column, text in zip(columns, row, strict=True)}
