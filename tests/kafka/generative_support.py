"""What the generative migration test draws and how it writes it for each source database.

A drawn step is a `Change`: one statement per dialect (MariaDB, PostgreSQL) from the same draw, and how many
change events each row it touches publishes.  The column types are the source types uniview types
(uniview/sink/mysql_types.py, and the Debezium PostgreSQL types of uniview/sink/debezium.py), each with values
at the edges of its range and the kinds of defaults a migration declares.  A statement the database refuses is
a no-op of that source (`apply` catches the database's error), so the two sources may drift apart; each is only
ever compared with its own views.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import math
import os
import re
import struct
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from ipaddress import IPv4Address, IPv4Interface, IPv6Address, IPv6Interface
from typing import Any

from cdc_e2e_support import OutsideBigQuery

MARIADB, POSTGRES = "mariadb", "postgres"
DIALECTS = (MARIADB, POSTGRES)
#: The open defects whose rules are off unless this variable lists them (comma-separated), or is "all".
OPEN_DEFECTS_VARIABLE = "UNIVIEW_GEN_OPEN_DEFECTS"


@dataclass(frozen=True)
class SourceType:
    """A column type as each dialect declares it, values at its edges (SQL literals, per dialect when they
    differ) and the defaults a migration gives it (`kind: {dialect: SQL}`)."""

    name: str
    ddl: dict[str, str]
    values: tuple[Any, ...]
    defaults: dict[str, Any] = field(default_factory=dict)
    #: The integer digits a DOUBLE keeps of the type's values where BigQuery's type is a BIGNUMERIC: DuckDB and the
    #: emulator hold a BIGNUMERIC as a DOUBLE (docs/duckdb.md#known-differences-from-bigquery); None: no BIGNUMERIC.
    bignumeric_digits: int | None = None
    #: Whether the source computes the column's value (MariaDB's `AS (expr) STORED`): no DEFAULT, not even NULL.
    generated: bool = False


def same(text: str) -> dict[str, str]:
    return {MARIADB: text, POSTGRES: text}


def _q(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


UNICODE = "Grüße ✓ 😀 ﬀ \u00a0"
#: The `enum` type's values, and the one `enum_value_added` adds (PostgreSQL's ALTER TYPE ... ADD VALUE, MariaDB's MODIFY).
ENUM_LIST, ADDED_ENUM_VALUE = "'small','medium','large'", "'huge'"
TYPES: tuple[SourceType, ...] = (
    SourceType(
        "int",
        {MARIADB: "int", POSTGRES: "integer"},
        ("0", "-2147483648", "2147483647", "2147483648", "1"),
        {"expression": same("(2 * 21)"), "string": same("'42'")},
    ),
    SourceType("bigint", same("bigint"), ("-9223372036854775808", "9223372036854775807", "-1"), {"literal": same("7")}),
    SourceType("smallint", same("smallint"), ("-32768", "32767", "32768"), {"string": same("'-5'")}),
    SourceType(
        "decimal",
        {MARIADB: "decimal(12,2)", POSTGRES: "numeric(12,2)"},
        ("9999999999.99", "-9999999999.99", "0.01", "123.456", "10000000000"),
        # "rounded": past the scale, which both sources round away from zero
        {"literal": same("1.50"), "string": same("'2.25'"), "rounded": same("-1.555")},
    ),
    SourceType(
        "wide_decimal",
        {MARIADB: "decimal(38,10)", POSTGRES: "numeric(38,10)"},
        ("9999999999999999999999999999.9999999999", "-0.0000000001"),
        bignumeric_digits=28,
    ),
    SourceType(
        # MariaDB's widest decimal
        "huge_decimal",
        {MARIADB: "decimal(65,30)", POSTGRES: "numeric(65,30)"},
        (
            "99999999999999999999999999999999999.999999999999999999999999999999",
            "-0.000000000000000000000000000001",
            "12345678901234567890.5",
            "100000000000000000000000000000000000",
        ),
        {"literal": same("-1.000000000000000000000000000001")},
        bignumeric_digits=35,
    ),
    SourceType(
        # PostgreSQL's numeric without precision or scale (Debezium's VariableScaleDecimal: a STRING of its exact
        # text, docs/sink.md), and a MariaDB decimal BigQuery's NUMERIC holds exactly
        "free_numeric",
        {MARIADB: "decimal(29,9)", POSTGRES: "numeric"},
        (
            "0.00000010",
            "-12345678901234567890.123456789",
            {MARIADB: "99999999999999999999.999999999", POSTGRES: "1e100"},
            {MARIADB: "-0.000000001", POSTGRES: "0.1234567890123456789012345678901234567890123"},
            {MARIADB: "0", POSTGRES: "-0.000"},
        ),
        {"literal": same("2.50"), "string": same("'-0.125'")},
    ),
    SourceType(
        "double",
        {MARIADB: "double", POSTGRES: "double precision"},
        (
            "1.7976931348623157e308",
            "-2.2250738585072014e-308",
            "0.1",
            {MARIADB: "1e309", POSTGRES: "'NaN'"},
            {MARIADB: "-0.0", POSTGRES: "'Infinity'"},
        ),
        {"literal": same("0.5"), "expression": same("(1.0 / 4)")},
    ),
    SourceType(
        "real",
        {MARIADB: "float", POSTGRES: "real"},
        ("3.4e38", "1.17549435e-38", {MARIADB: "0", POSTGRES: "'-Infinity'"}),
    ),
    SourceType(
        "varchar",
        same("varchar(20)"),
        ("''", _q(UNICODE), _q('O\'Reilly \\ "x"'), _q("x" * 20), _q("y" * 21)),
        # "spaces": past the length, which PostgreSQL cuts (MariaDB refuses the default)
        {"literal": same("'open'"), "empty": same("''"), "spaces": same(_q("open" + " " * 20))},
    ),
    SourceType("text", same("text"), ("''", _q(UNICODE * 3), _q("line\nbreak\ttab")), {"literal": same("'memo'")}),
    SourceType(
        "boolean",
        {MARIADB: "boolean", POSTGRES: "boolean"},
        ("true", "false", {MARIADB: "2", POSTGRES: "'yes'"}),
        {"number": {MARIADB: "1", POSTGRES: "1::boolean"}, "literal": same("false")},
    ),
    SourceType(
        "date",
        same("date"),
        ("'1000-01-01'", "'9999-12-31'", "'0001-01-01'", "'2024-02-29'", "'2023-02-29'", "'10000-01-01'"),
        {"literal": same("'2020-01-01'"), "zero_date": {MARIADB: "'0000-00-00'", POSTGRES: "'0001-01-01'"}},
    ),
    SourceType(
        "datetime",
        {MARIADB: "datetime(6)", POSTGRES: "timestamp(6)"},
        ("'1000-01-01 00:00:00'", "'9999-12-31 23:59:59.999999'", "'2024-06-30 12:00:00.5'", "'1970-01-01 00:00:00'"),
        {
            "literal": same("'2021-05-06 07:08:09'"),
            "now": {MARIADB: "CURRENT_TIMESTAMP(6)", POSTGRES: "now()"},
            "zero_date": {MARIADB: "'0000-00-00 00:00:00'", POSTGRES: "'0001-01-01 00:00:00'"},
        },
    ),
    SourceType(
        "timestamp",
        {MARIADB: "timestamp(6) NULL", POSTGRES: "timestamptz(6)"},
        ("'1970-01-01 00:00:01'", "'2038-01-19 03:14:07.999999'", "'2038-01-19 03:14:08'", "'2000-01-01 00:00:00'"),
        {"now": {MARIADB: "CURRENT_TIMESTAMP(6)", POSTGRES: "now()"}},
    ),
    # Defaults with more fractional digits than the column keeps: PostgreSQL rounds them (a tie away from
    # 2000-01-01), MariaDB cuts them, and the rows already there show what each stored.
    SourceType(
        "datetime0",
        {MARIADB: "datetime", POSTGRES: "timestamp(0)"},
        ("'2024-06-30 12:00:00.5'", "'1999-12-31 23:59:59.5'", "'2024-06-30 12:00:00'"),
        {"fraction": same("'2021-05-06 07:08:09.5'"), "before_2000": same("'1999-12-31 23:59:59.5'")},
    ),
    SourceType(
        "datetime4",
        {MARIADB: "datetime(4)", POSTGRES: "timestamp(4)"},
        ("'2000-01-01 00:00:00.12345'", "'2021-05-06 07:08:09.99995'", "'1999-12-31 23:59:59.99995'"),
        {"fraction": same("'2021-05-06 07:08:09.12345'"), "carry": same("'2021-05-06 07:08:59.99996'")},
    ),
    SourceType(
        "time0",
        same("time(0)"),
        ("'12:30:00.5'", "'23:59:59.4'", "'00:00:00'"),
        {"fraction": same("'07:08:09.5'")},
    ),
    SourceType(
        # PostgreSQL's connector sends a time(3)'s default in milliseconds, cut: only a 4th digit below 5 reaches
        # the sink as PostgreSQL rounds it (docs/sink.md#a-default-as-its-source-stores-it-in-the-column)
        "time3",
        same("time(3)"),
        ("'12:30:00.1235'", "'00:00:00.9999'"),
        {"fraction": {MARIADB: "'07:08:09.1236'", POSTGRES: "'07:08:09.1234'"}},
    ),
    SourceType(
        "time",
        same("time(6)"),
        ("'00:00:00'", "'23:59:59.999999'", "'12:30:00.5'", "'24:00:00'", "'24:00:01'"),
        {"literal": same("'08:00:00'")},
    ),
    SourceType(
        "bytes",
        {MARIADB: "varbinary(64)", POSTGRES: "bytea"},
        ({MARIADB: "x''", POSTGRES: "'\\x'"}, {MARIADB: "x'00ff10'", POSTGRES: "'\\x00ff10'"}),
    ),
    SourceType(
        "json",
        {MARIADB: "json", POSTGRES: "jsonb"},
        ("'{}'", "'[1, 2.5, \"a\"]'", _q(json.dumps({"k": UNICODE, "n": None, "deep": {"x": [1]}})), "'not json'"),
    ),
    SourceType(
        # MySQL's unsigned BIGINT (Debezium's precise mode: a decimal) and PostgreSQL's numeric of its range
        "ubigint",
        {MARIADB: "bigint unsigned", POSTGRES: "numeric(20,0)"},
        ("18446744073709551615", "9223372036854775808", "0", "-1", "18446744073709551616"),
        {"literal": same("18446744073709551615"), "string": same("'42'")},
    ),
    SourceType(
        # a fixed-length text: PostgreSQL pads it with spaces, MariaDB drops trailing spaces when it reads it
        "char",
        same("char(5)"),
        ("''", "'ab'", "'abcde'", _q("a  "), _q("ü✓"), "'abcdef'"),
        # "spaces": trailing spaces past the length: PostgreSQL cuts them to the length, MariaDB reads none back
        {"literal": same("'x'"), "spaces": same(_q("ab" + " " * 6))},
    ),
    SourceType(
        "uuid",
        {MARIADB: "char(36)", POSTGRES: "uuid"},
        (
            "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'",
            "'00000000-0000-0000-0000-000000000000'",
            {MARIADB: "'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11'", POSTGRES: "'{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}'"},
        ),
        {"expression": {MARIADB: "(uuid())", POSTGRES: "gen_random_uuid()"}},
    ),
    # MariaDB's small and unsigned integers; PostgreSQL's counterparts a smallint and a DOMAIN (a CHECK the value
    # must pass, created with the database: GENERATIVE_POSTGRES_TYPES)
    SourceType(
        "utinyint",
        {MARIADB: "tinyint unsigned", POSTGRES: "smallint"},
        ("0", "255", "256", "-1"),
        {"literal": same("200")},
    ),
    SourceType(
        "usmallint",
        {MARIADB: "smallint unsigned", POSTGRES: "natural_number"},
        ("65535", "0", "65536", "-1"),
        {"literal": same("7"), "string": same("'9'")},
    ),
    SourceType(
        "umediumint",
        {MARIADB: "mediumint unsigned", POSTGRES: "natural_number"},
        ("16777215", "1", "16777216", "2147483647"),
    ),
    SourceType(
        # MariaDB's ENUM and PostgreSQL's enum type (GENERATIVE_POSTGRES_TYPES); `enum_value_added` adds 'huge'
        "enum",
        {MARIADB: f"enum({ENUM_LIST})", POSTGRES: "size_kind"},
        ("'small'", "'large'", ADDED_ENUM_VALUE, "''"),
        {"literal": same("'medium'")},
    ),
    SourceType(
        # MariaDB's SET; PostgreSQL's inet beside it
        "set",
        {MARIADB: "set('x','y','z')", POSTGRES: "inet"},
        (
            {MARIADB: "'x,z'", POSTGRES: "'10.1.2.3/8'"},
            {MARIADB: "''", POSTGRES: "'::1'"},
            {MARIADB: "'z,y,x'", POSTGRES: "'192.168.0.1'"},
            {MARIADB: "'w'", POSTGRES: "'2001:db8::ff00:42:8329/64'"},
        ),
        {"literal": {MARIADB: "'y'", POSTGRES: "'127.0.0.1'"}},
    ),
    SourceType(
        # MariaDB's YEAR (1901 to 2155; 0 is the year 0000, which the connector sends as 1900: docs/sources.md);
        # PostgreSQL's money beside it (two fractional digits; the connector's precise mode sends a decimal)
        "year",
        {MARIADB: "year", POSTGRES: "money"},
        (
            {MARIADB: "1901", POSTGRES: "'-92233720368547758.08'"},
            {MARIADB: "2155", POSTGRES: "'92233720368547758.07'"},
            {MARIADB: "2024", POSTGRES: "'12.345'"},
            {MARIADB: "1900", POSTGRES: "'0.01'"},
        ),
        {"literal": {MARIADB: "2000", POSTGRES: "'1.50'"}},
    ),
    SourceType(
        # MariaDB's STORED generated column (older rows: not known, docs/current-state.md); PostgreSQL's column of
        # that name a plain integer (a generated column there logs no change either, and its DDL is not in the stream)
        "generated",
        {MARIADB: "int AS (c0 * 2) STORED", POSTGRES: "integer"},
        ("1", "-7"),
        generated=True,
    ),
    SourceType(
        # MariaDB's BIT(8) (Debezium's Bits: the bytes); PostgreSQL's array of integers beside it (BigQuery holds
        # no NULL array: an empty one and NULL read alike, `comparable`)
        "bit",
        {MARIADB: "bit(8)", POSTGRES: "integer[]"},
        (
            {MARIADB: "b'10100101'", POSTGRES: "'{1,2,3}'"},
            {MARIADB: "b'0'", POSTGRES: "'{}'"},
            {MARIADB: "b'11111111'", POSTGRES: "'{-2147483648,2147483647}'"},
            {MARIADB: "b'100000000'", POSTGRES: "'{0}'"},
        ),
        {"literal": {MARIADB: "b'1'", POSTGRES: "'{7}'"}},
    ),
    SourceType(
        # a point: MariaDB's POINT and PostgreSQL's point, each sent by Debezium as a STRUCT (x, y, wkb, srid) and
        # declared `point` on the envelope path, a GEOGRAPHY (WKT text on DuckDB); compared by its coordinates
        # (`Point`); no default (MariaDB's takes none)
        "point",
        same("point"),
        (
            {MARIADB: "POINT(1, 2)", POSTGRES: "point(1, 2)"},
            {MARIADB: "POINT(-1.5, 0.25)", POSTGRES: "point(-1.5, 0.25)"},
            {MARIADB: "POINT(-180, 90)", POSTGRES: "point(-180, 90)"},
            {MARIADB: "POINT(123456.789, -0.001)", POSTGRES: "point(123456.789, -0.001)"},
        ),
    ),
    SourceType(
        # PostgreSQL's interval (Debezium's MicroDuration: microseconds; no months drawn, which the connector counts as
        # 30.4375 days); MariaDB has none: a bigint of those microseconds beside it
        "interval",
        {MARIADB: "bigint", POSTGRES: "interval"},
        (
            {MARIADB: "93784500000", POSTGRES: "'1 day 02:03:04.5'"},
            {MARIADB: "-1", POSTGRES: "'-00:00:00.000001'"},
            {MARIADB: "8640000000000", POSTGRES: "'100 days'"},
        ),
    ),
)
#: PostgreSQL's own types the generator's database holds: an enum type and a DOMAIN.
GENERATIVE_POSTGRES_TYPES = (
    f"CREATE TYPE size_kind AS ENUM ({ENUM_LIST})",
    "CREATE DOMAIN natural_number AS integer CHECK (VALUE >= 0)",
)
TYPES_BY_NAME = {source_type.name: source_type for source_type in TYPES}
#: The (type, kind of default) pairs whose declared default a source converts to what it stores in the rows already
#: there (padding, cut spaces, fractional seconds, scale: uniview/sink/default_values.py's stored_default): their ADD
#: COLUMN's `drawn:` line says so (CONVERTED_MARK), and the soak counts them (scripts/soak-migrations.sh).
CONVERTED_DEFAULTS = {
    ("decimal", "rounded"),
    ("varchar", "spaces"),
    ("char", "literal"),
    ("char", "spaces"),
    ("datetime0", "fraction"),
    ("datetime0", "before_2000"),
    ("datetime4", "fraction"),
    ("datetime4", "carry"),
    ("time0", "fraction"),
    ("time3", "fraction"),
}
CONVERTED_MARK = ", stored converted"
#: Type changes: widening, narrowing, and ones few values survive.
TYPE_CHANGES = (
    ("int", "bigint"),
    ("smallint", "int"),
    ("decimal", "wide_decimal"),
    ("decimal", "free_numeric"),
    ("real", "double"),
    ("varchar", "text"),
    ("bigint", "int"),
    ("text", "varchar"),
    ("wide_decimal", "decimal"),
    ("double", "decimal"),
    ("varchar", "int"),
    ("int", "varchar"),
    ("date", "datetime"),
    ("datetime", "date"),
    ("boolean", "int"),
)


def literal(value: Any, dialect: str) -> str:
    return value[dialect] if isinstance(value, dict) else value


def cast_to(source_type: SourceType, dialect: str, column: str) -> str:
    """PostgreSQL's USING expression of a type change; MariaDB converts by itself."""
    target = source_type.ddl[POSTGRES]
    if source_type.name == "int" and dialect == POSTGRES:
        return f"{column}::text::numeric::integer"
    return f"{column}::{target}"


@dataclass
class Change:
    """A step: its statement in each dialect (None: the dialect has none) and the change events per affected
    row (an UPDATE of the key publishes a delete and a create)."""

    label: str
    sql: dict[str, list[str]]
    #: One count for every dialect, or one per dialect (a key-part UPDATE where only one source's key has that part).
    events_per_row: int | dict[str, int] = 1
    truncate: bool = False
    #: The table whose changes its writes are (None: the example's table); an online migration's shadow table.
    table: str | None = None

    def statements(self, dialect: str) -> list[str]:
        return self.sql.get(dialect, [])

    def events(self, dialect: str) -> int:
        """The change events each row the dialect's statements touch publishes."""
        return self.events_per_row if isinstance(self.events_per_row, int) else self.events_per_row[dialect]

    def writes_rows(self, dialect: str) -> bool:
        """Whether the dialect's statements are INSERTs, UPDATEs or DELETEs: each row they touch publishes
        changes (an ALTER's count is of the rows it copied, which publish none)."""
        statements = self.statements(dialect)
        return bool(statements) and all(
            s.split(None, 1)[0].upper() in {"INSERT", "UPDATE", "DELETE"} for s in statements
        )


def quoted(name: str, dialect: str) -> str:
    """`name` quoted as `dialect` quotes an identifier, so any name the source allows is one (non-ASCII, mixed case,
    a keyword, a space)."""
    return f"`{name}`" if dialect == MARIADB else f'"{name}"'


@dataclass(frozen=True)
class Quoting:
    """`q(name)`: `name` quoted as `q.dialect` quotes it."""

    dialect: str

    def __call__(self, name: str) -> str:
        return quoted(name, self.dialect)


def each(statement: Callable[[Quoting], str]) -> dict[str, list[str]]:
    """`statement(q)` in each dialect, `q` quoting a name as the dialect does."""
    return {dialect: [statement(Quoting(dialect))] for dialect in DIALECTS}


def ddl(statement: dict[str, str] | str) -> dict[str, list[str]]:
    texts = statement if isinstance(statement, dict) else same(statement)
    return {dialect: [text] for dialect, text in texts.items()}


def open_defects_enabled(defect: str) -> bool:
    """Whether the rules of an open defect run (UNIVIEW_GEN_OPEN_DEFECTS=<name>,... or all)."""
    value = os.environ.get(OPEN_DEFECTS_VARIABLE, "")
    return value == "all" or defect in {name.strip() for name in value.split(",")}


@dataclass(frozen=True)
class Point:
    """A point by its coordinates, as every side shows it: the source's (WKT), Debezium's STRUCT (x, y, wkb, srid)
    in the views, and the envelope path's GEOGRAPHY (WKT text on DuckDB)."""

    x: Decimal
    y: Decimal

    @classmethod
    def of(cls, value: Any) -> Point | None:
        """The point `value` is (WKT text, or a STRUCT's dict), or None when it is none."""
        if isinstance(value, str) and (match := _WKT_POINT.fullmatch(value)):
            return cls(Decimal(match[1]), Decimal(match[2]))
        if isinstance(value, dict) and {"wkb", "srid"} <= set(value):
            x, y = (value["x"], value["y"]) if value.get("x") is not None else _wkb_coordinates(value["wkb"])
            return cls(Decimal(repr(float(x))), Decimal(repr(float(y))))
        return None


def _wkb_coordinates(wkb: bytes | str) -> tuple[float, float]:
    """x and y of a point's WKB (a byte order, the type, two doubles), or of its base64 text."""
    data = base64.b64decode(wkb) if isinstance(wkb, str) else bytes(wkb)
    order = "<" if data[0] == 1 else ">"
    return struct.unpack(f"{order}dd", data[5:21])


_WKT_POINT = re.compile(r"POINT ?\((\S+) (\S+)\)")


def comparable(value: Any) -> Any:
    """A value in one form for the source, DuckDB and BigQuery: numbers as Decimal (a double's NaN and infinities as
    text; a numeric's, which no BigQuery type holds, as an OutsideBigQuery),
    dates as midnight of the day (a column that was a datetime before it was a date is DATETIME in the views),
    times with a zone in UTC, bytes as bytes, JSON documents parsed and written again with sorted keys."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return str(value)
    if isinstance(value, Decimal) and not value.is_finite():  # PostgreSQL's numeric NaN (a double's, converted)
        return OutsideBigQuery(str(float(value)))  # no NUMERIC holds it: the views show NULL (docs/current-state.md)
    if isinstance(value, Decimal | float | int):
        return Decimal(str(value))
    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        return value.astimezone(dt.UTC).replace(tzinfo=None)
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        return dt.datetime.combine(value, dt.time())  # a DATE in a column the unified view types DATETIME
    if isinstance(value, dt.timedelta):  # MariaDB's TIME, a duration: BigQuery's TIME holds those within a day
        in_a_day = dt.timedelta(0) <= value < dt.timedelta(days=1)
        return (dt.datetime.min + value).time() if in_a_day else OutsideBigQuery(value)
    if isinstance(value, memoryview | bytearray):
        return bytes(value)
    if isinstance(value, uuid.UUID | IPv4Address | IPv6Address | IPv4Interface | IPv6Interface):
        return str(value)  # PostgreSQL's uuid and inet: Debezium sends their text
    if isinstance(value, list) and not value:  # BigQuery reads a NULL ARRAY as an empty one
        return None
    if (point := Point.of(value)) is not None:
        return point
    if isinstance(value, dict | list):
        return json.dumps(value, sort_keys=True)
    if isinstance(value, str) and value[:1] in "{[":
        try:
            return json.dumps(json.loads(value), sort_keys=True)
        except ValueError:
            return value
    return value


def comparable_rows(rows: Sequence[tuple]) -> list[tuple]:
    return [tuple(comparable(value) for value in row) for row in rows]


def as_script(changes: Sequence[tuple[str, Change]], dialect: str) -> str:
    """The steps drawn, as the SQL one dialect ran (each line a statement; refused ones marked)."""
    return "\n".join(f"-- {label}\n" + ";\n".join(change.statements(dialect)) + ";" for label, change in changes)


Runner = Callable[[str, str], int]


def read_values_past_python(connection: Any) -> None:
    """Make a psycopg `connection` read a date, timestamp or time that Python's types cannot hold (past year 9999,
    BC, infinity, '24:00:00') as an OutsideBigQuery of its text, instead of failing the whole read: no BigQuery
    type holds one either."""
    import psycopg
    from psycopg.types import datetime as types

    loaders = {
        "date": types.DateLoader,
        "timestamp": types.TimestampLoader,
        "timestamptz": types.TimestamptzLoader,
        "time": types.TimeLoader,
    }
    for name, base in loaders.items():

        class Loader(base):  # type: ignore[valid-type, misc]
            def load(self, data: Any) -> Any:
                try:
                    return super().load(data)
                except psycopg.DataError:
                    return OutsideBigQuery(bytes(data).decode())

        connection.adapters.register_loader(name, Loader)


def read_money_as_decimal(connection: Any) -> None:
    """Make a psycopg `connection` read PostgreSQL's money (its text, `-$1,234.50` with lc_monetary C) as the Decimal
    Debezium sends for it (the connector's precise decimal mode)."""
    from psycopg.adapt import Loader

    class MoneyLoader(Loader):
        def load(self, data: Any) -> Decimal:
            text = bytes(data).decode()
            return Decimal(text.replace("$", "").replace(",", ""))

    connection.adapters.register_loader("money", MoneyLoader)


def read_point_as_wkt(connection: Any) -> None:
    """Make a psycopg `connection` read PostgreSQL's point, `(x,y)`, as the WKT MariaDB's ST_AsText writes
    (`POINT(x y)`)."""
    from psycopg.adapt import Loader

    class WktLoader(Loader):
        def load(self, data: Any) -> str:
            x, y = bytes(data).decode().strip("()").split(",")
            return f"POINT({x} {y})"

    connection.adapters.register_loader("point", WktLoader)


def read_interval_as_microseconds(connection: Any) -> None:
    """Make a psycopg `connection` read PostgreSQL's interval as the microseconds Debezium sends for it (its
    MicroDuration; the generator draws no months, which the connector counts as 30.4375 days)."""
    from psycopg.types.datetime import IntervalLoader

    class MicrosecondsLoader(IntervalLoader):
        def load(self, data: Any) -> int:
            return super().load(data) // dt.timedelta(microseconds=1)

    connection.adapters.register_loader("interval", MicrosecondsLoader)
