"""BigQuery's type model: parse the `data_type` strings INFORMATION_SCHEMA.COLUMNS emits, print them back.

Types are immutable values.  `str(t)` prints the form INFORMATION_SCHEMA uses
(`STRUCT<a INT64, b ARRAY<STRING(10)>>`); `t.sql()` prints the form to put in generated SQL
(every struct field name backtick-quoted); `t.base()` drops type parameters, as views use them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from uniview.core.errors import TypeParseError
from uniview.core.identifiers import quote

SCALAR_NAMES = frozenset(
    {
        "INT64",
        "FLOAT64",
        "NUMERIC",
        "BIGNUMERIC",
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
    }
)
_ALIASES = {
    "INT": "INT64",
    "INTEGER": "INT64",
    "SMALLINT": "INT64",
    "BIGINT": "INT64",
    "TINYINT": "INT64",
    "BYTEINT": "INT64",
    "FLOAT": "FLOAT64",
    "BOOLEAN": "BOOL",
    "DECIMAL": "NUMERIC",
    "BIGDECIMAL": "BIGNUMERIC",
    "RECORD": "STRUCT",
}
_MAX_PARAMS = {"STRING": 1, "BYTES": 1, "NUMERIC": 2, "BIGNUMERIC": 2}
_RANGE_ELEMENTS = frozenset({"DATE", "DATETIME", "TIMESTAMP"})
_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_TOKEN = re.compile(r"\s*(?:(`(?:[^`\\]|\\.)*`)|([A-Za-z_][A-Za-z0-9_]*)|(\d+)|([<>(),]))")


@dataclass(frozen=True)
class Scalar:
    """A non-container type, with optional parameters: STRING(10), NUMERIC(10, 2)."""

    name: str
    params: tuple[int, ...] = ()

    @property
    def kind(self) -> str:
        return self.name

    def base(self) -> Scalar:
        return Scalar(self.name) if self.params else self

    def sql(self) -> str:
        return str(self)

    def __str__(self) -> str:
        return f"{self.name}({', '.join(map(str, self.params))})" if self.params else self.name


@dataclass(frozen=True)
class Array:
    """ARRAY<element>."""

    element: BQType

    kind = "ARRAY"

    def base(self) -> Array:
        return Array(self.element.base())

    def sql(self) -> str:
        return f"ARRAY<{self.element.sql()}>"

    def __str__(self) -> str:
        return f"ARRAY<{self.element}>"


@dataclass(frozen=True)
class Field:
    """One named field of a STRUCT."""

    name: str
    type: BQType

    def __str__(self) -> str:
        name = self.name if _PLAIN_NAME.fullmatch(self.name) else quote(self.name)
        return f"{name} {self.type}"


@dataclass(frozen=True)
class Struct:
    """STRUCT<name TYPE, ...>; field order is significant."""

    fields: tuple[Field, ...]

    kind = "STRUCT"

    def base(self) -> Struct:
        return Struct(tuple(Field(f.name, f.type.base()) for f in self.fields))

    def sql(self) -> str:
        return "STRUCT<" + ", ".join(f"{quote(f.name)} {f.type.sql()}" for f in self.fields) + ">"

    def __str__(self) -> str:
        return "STRUCT<" + ", ".join(str(f) for f in self.fields) + ">"


@dataclass(frozen=True)
class Range:
    """RANGE<DATE|DATETIME|TIMESTAMP>."""

    element: Scalar

    kind = "RANGE"

    def base(self) -> Range:
        return self

    def sql(self) -> str:
        return str(self)

    def __str__(self) -> str:
        return f"RANGE<{self.element}>"


BQType = Scalar | Array | Struct | Range

INT64 = Scalar("INT64")
FLOAT64 = Scalar("FLOAT64")
NUMERIC = Scalar("NUMERIC")
BIGNUMERIC = Scalar("BIGNUMERIC")
BOOL = Scalar("BOOL")
STRING = Scalar("STRING")
BYTES = Scalar("BYTES")
DATE = Scalar("DATE")
DATETIME = Scalar("DATETIME")
TIME = Scalar("TIME")
TIMESTAMP = Scalar("TIMESTAMP")
JSON = Scalar("JSON")
GEOGRAPHY = Scalar("GEOGRAPHY")
INTERVAL = Scalar("INTERVAL")


#: BigQuery's decimal types (https://cloud.google.com/bigquery/docs/reference/standard-sql/data-types#decimal_types):
#: NUMERIC holds 29 integer and 9 fractional digits, BIGNUMERIC 38 and 38 (76.76 digits in all).
NUMERIC_MAX_INTEGER_DIGITS = 29
NUMERIC_MAX_SCALE = 9
BIGNUMERIC_MAX_INTEGER_DIGITS = 38
BIGNUMERIC_MAX_SCALE = 38
#: (precision, scale) of an unparameterized NUMERIC and BIGNUMERIC.
DEFAULT_DECIMAL_PARAMETERS = {"NUMERIC": (38, 9), "BIGNUMERIC": (76, 38)}


def decimal_type(precision: int, scale: int) -> Scalar | None:
    """NUMERIC(p, s) when the digits fit NUMERIC, BIGNUMERIC(p, s) when they fit BIGNUMERIC, else None."""
    if scale <= NUMERIC_MAX_SCALE and precision - scale <= NUMERIC_MAX_INTEGER_DIGITS:
        return Scalar("NUMERIC", (precision, scale))
    if scale <= BIGNUMERIC_MAX_SCALE and precision - scale <= BIGNUMERIC_MAX_INTEGER_DIGITS:
        return Scalar("BIGNUMERIC", (precision, scale))
    return None


def _parameter_problem(name: str, params: tuple[int, ...]) -> str | None:
    """What BigQuery refuses in a parameterized type (docs: parameterized data types): a length below 1; a
    NUMERIC(P, S) outside 0 <= S <= 9 and max(1, S) <= P <= S + 29; a BIGNUMERIC outside 0 <= S <= 38 and
    max(1, S) <= P <= S + 38."""
    if name in ("STRING", "BYTES"):
        return f"{name}({params[0]}): the length must be at least 1" if params[0] < 1 else None
    if name not in ("NUMERIC", "BIGNUMERIC") or not params:
        return None
    precision, scale = params[0], params[1] if len(params) > 1 else 0
    max_scale, max_integer = (
        (NUMERIC_MAX_SCALE, NUMERIC_MAX_INTEGER_DIGITS)
        if name == "NUMERIC"
        else (BIGNUMERIC_MAX_SCALE, BIGNUMERIC_MAX_INTEGER_DIGITS)
    )
    if scale > max_scale or not max(1, scale) <= precision <= scale + max_integer:
        return (
            f"{name}({', '.join(map(str, params))}) is not a BigQuery type: it takes a scale of at most "
            f"{max_scale} and a precision from max(1, scale) to scale + {max_integer}"
        )
    return None


def decimal_parameters(bq_type: Scalar) -> tuple[int, int]:
    """(precision, scale) of a NUMERIC/BIGNUMERIC, defaults filled in (NUMERIC(10) has scale 0)."""
    if not bq_type.params:
        return DEFAULT_DECIMAL_PARAMETERS[bq_type.name]
    return bq_type.params[0], bq_type.params[1] if len(bq_type.params) > 1 else 0


def parse_type(text: str, *, table: str | None = None, column: str | None = None) -> BQType:
    """Parse one BigQuery data_type string; raise TypeParseError naming the table and column.

    A family of hundreds of versions repeats a few dozen type strings: each is parsed once per process."""
    try:
        if not isinstance(text, str):
            raise TypeParseError("not a string")
        return _parse_type_text(text)
    except TypeParseError as error:
        where = ".".join(part for part in (table, column) if part)
        prefix = f"column {where}: " if where else ""
        raise TypeParseError(f"{prefix}cannot parse data type {text!r}: {error}") from None


@lru_cache(maxsize=65_536)
def _parse_type_text(text: str) -> BQType:
    """The type `text` spells (types are immutable values, so one parse serves every column of that type)."""
    tokens = _tokenize(text)
    parser = _Parser(tokens)
    parsed = parser.parse_type()
    parser.expect_end()
    return parsed


def _tokenize(text: str) -> list[str]:
    if not isinstance(text, str):
        raise TypeParseError("not a string")
    tokens, position = [], 0
    stripped_end = len(text.rstrip())
    while position < stripped_end:
        match = _TOKEN.match(text, position)
        if not match:
            raise TypeParseError(f"unexpected character {text[position:].lstrip()[:1]!r}")
        tokens.append(match.group(match.lastindex or 0))
        position = match.end()
    return tokens


class _Parser:
    """Recursive descent over the tokens of one type string."""

    def __init__(self, tokens: list[str]) -> None:
        self.tokens = tokens
        self.position = 0

    def peek(self) -> str | None:
        return self.tokens[self.position] if self.position < len(self.tokens) else None

    def take(self) -> str:
        token = self.peek()
        if token is None:
            raise TypeParseError("unexpected end of text")
        self.position += 1
        return token

    def expect(self, token: str) -> None:
        found = self.take()
        if found != token:
            raise TypeParseError(f"expected {token!r}, found {found!r}")

    def expect_end(self) -> None:
        if self.peek() is not None:
            raise TypeParseError(f"unexpected {self.peek()!r} after the type")

    def parse_type(self) -> BQType:
        word = self.take()
        name = _ALIASES.get(word.upper(), word.upper())
        if name == "ARRAY":
            return self._parse_array()
        if name == "STRUCT":
            return self._parse_struct()
        if name == "RANGE":
            return self._parse_range()
        if name not in SCALAR_NAMES:
            raise TypeParseError(f"unknown type {word!r}")
        return Scalar(name, self._parse_params(name))

    def _parse_params(self, name: str) -> tuple[int, ...]:
        if self.peek() != "(":
            return ()
        self.take()
        params = [self._parse_int()]
        while self.peek() == ",":
            self.take()
            params.append(self._parse_int())
        self.expect(")")
        if len(params) > _MAX_PARAMS.get(name, 0):
            raise TypeParseError(f"{name} takes at most {_MAX_PARAMS.get(name, 0)} parameters")
        problem = _parameter_problem(name, tuple(params))
        if problem:
            raise TypeParseError(problem)
        return tuple(params)

    def _parse_int(self) -> int:
        token = self.take()
        if not token.isdigit():
            raise TypeParseError(f"expected a number, found {token!r}")
        return int(token)

    def _parse_array(self) -> Array:
        self.expect("<")
        element = self.parse_type()
        self.expect(">")
        if isinstance(element, Array):
            raise TypeParseError("ARRAY<ARRAY<...>> is not a BigQuery type")
        return Array(element)

    def _parse_range(self) -> Range:
        self.expect("<")
        element = self.parse_type()
        self.expect(">")
        if not (isinstance(element, Scalar) and element.name in _RANGE_ELEMENTS and not element.params):
            raise TypeParseError(f"RANGE<{element}> is not a BigQuery type")
        return Range(element)

    def _parse_struct(self) -> Struct:
        self.expect("<")
        fields = [self._parse_field()]
        while self.peek() == ",":
            self.take()
            fields.append(self._parse_field())
        self.expect(">")
        return Struct(tuple(fields))

    def _parse_field(self) -> Field:
        token = self.take()
        if token.startswith("`"):
            name = re.sub(r"\\(.)", r"\1", token[1:-1])
        elif _PLAIN_NAME.fullmatch(token):
            name = token
        else:
            raise TypeParseError(f"expected a field name, found {token!r}")
        field_type = self.parse_type()
        following = self.peek()
        if following is not None and following.upper() == "NOT":
            self.take()
            if self.take().upper() != "NULL":
                raise TypeParseError("expected NULL after NOT")
        return Field(name, field_type)
