"""Declared source types -> BigQuery types, the types the version tables are created with.

MySQL types are mapped by the table below (case and whitespace do not matter; display widths,
`signed` and `zerofill` are ignored, `unsigned` only matters for BIGINT).  A declared type that
is not a MySQL type but parses as a BigQuery type (`STRING`, `INT64`, `STRUCT<a INT64>`,
`ARRAY<STRING>`) is used as is, so producers can declare nested columns.  Anything else lands
as STRING with a warning.

| MySQL                                                        | BigQuery                  |
|--------------------------------------------------------------|---------------------------|
| tinyint(1), bool, boolean, bit, bit(1)                       | BOOL                      |
| tinyint, smallint, mediumint, int, integer, bigint, year     | INT64                     |
| bit(n), n > 1                                                | INT64                     |
| bigint unsigned, serial                                      | NUMERIC(20, 0)            |
| decimal(p,s) with s <= 9 and p - s <= 29                      | NUMERIC(p, s)             |
| decimal(p,s) with s <= 38 and p - s <= 38 otherwise           | BIGNUMERIC(p, s)          |
| decimal(p,s) with p - s > 38                                  | BIGNUMERIC (warning)      |
| float, double, real, double precision                        | FLOAT64                   |
| char, varchar, tinytext, text, mediumtext, longtext, enum, set | STRING                  |
| binary, varbinary, tinyblob, blob, mediumblob, longblob      | BYTES                     |
| date / datetime / timestamp / time                           | DATE / DATETIME / TIMESTAMP / TIME |
| json                                                         | JSON                      |
| geometry, point, linestring, polygon, multi*, geometrycollection | GEOGRAPHY             |
| anything else                                                | STRING (warning)          |

`decimal`, `dec`, `numeric` and `fixed` are the same type; `decimal` alone is decimal(10,0).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from uniview.core.errors import TypeParseError
from uniview.core.types import (
    BOOL,
    BYTES,
    DATE,
    DATETIME,
    FLOAT64,
    GEOGRAPHY,
    INT64,
    JSON,
    STRING,
    TIME,
    TIMESTAMP,
    Array,
    BQType,
    Range,
    Scalar,
    Struct,
    decimal_type,
    parse_type,
)
from uniview.sink.versioning import normalize_source_type

_ALIASES = {
    "integer": "int",
    "int1": "tinyint",
    "int2": "smallint",
    "int3": "mediumint",
    "int4": "int",
    "int8": "bigint",
    "middleint": "mediumint",
    "boolean": "bool",
    "dec": "decimal",
    "numeric": "decimal",
    "fixed": "decimal",
    "doubleprecision": "double",
    "real": "double",
    "float4": "float",
    "float8": "double",
    "character": "char",
    "nchar": "char",
    "nationalchar": "char",
    "nationalcharacter": "char",
    "nvarchar": "varchar",
    "charactervarying": "varchar",
    "nationalvarchar": "varchar",
    "long": "mediumtext",
    "longvarchar": "mediumtext",
    "longvarbinary": "mediumblob",
    "geomcollection": "geometrycollection",
}
_INTEGERS = frozenset({"tinyint", "smallint", "mediumint", "int", "bigint"})
_STRINGS = frozenset({"char", "varchar", "tinytext", "text", "mediumtext", "longtext", "enum", "set"})
_BINARIES = frozenset({"binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob"})
_SPATIAL = frozenset(
    {
        "geometry",
        "point",
        "linestring",
        "polygon",
        "multipoint",
        "multilinestring",
        "multipolygon",
        "geometrycollection",
    }
)
_SIMPLE = {
    "bool": BOOL,
    "float": FLOAT64,
    "double": FLOAT64,
    "date": DATE,
    "datetime": DATETIME,
    "timestamp": TIMESTAMP,
    "time": TIME,
    "year": INT64,
    "json": JSON,
    **dict.fromkeys(_STRINGS, STRING),
    **dict.fromkeys(_BINARIES, BYTES),
    **dict.fromkeys(_SPATIAL, GEOGRAPHY),
}
_MODIFIERS = ("zerofill", "unsigned", "signed")
_CORE = re.compile(r"([a-z]+)(?:\(([0-9,]*)\))?")
_LEADING_NAME = re.compile(r"[a-z]+")
_NAME_ALONE = re.compile(r"([a-z]+)(?![a-z0-9_])")
_UNSIGNED_BIGINT = Scalar("NUMERIC", (20, 0))
_MAX_MYSQL_PRECISION, _MAX_MYSQL_SCALE = 65, 30


@dataclass(frozen=True)
class TypeMapping:
    """The BigQuery type of one declared source type, and a warning when it was a guess."""

    bq_type: BQType
    warning: str | None = None


@lru_cache(maxsize=4096)
def bigquery_type(declared_type: str) -> TypeMapping:
    """Map one declared source type (MySQL, or BigQuery syntax) to the BigQuery type it lands as (kept per
    text: a batch from a thousand databases declares the same few types a thousand times)."""
    mapped = mysql_type(declared_type)
    if mapped is not None:
        return mapped
    passthrough = None if _mysql_name(declared_type) else _bigquery_syntax(declared_type)
    if passthrough is not None:
        return TypeMapping(passthrough)
    return TypeMapping(STRING, f"unknown source type {declared_type!r}: landed as STRING")


def mysql_type(declared_type: str) -> TypeMapping | None:
    """The mapping of a MySQL type, or None when `declared_type` is not one."""
    compact = normalize_source_type(declared_type)
    core, unsigned = _strip_modifiers(compact)
    match = _CORE.fullmatch(core)
    if match is None:
        return _string_with_attributes(compact)
    name = _ALIASES.get(match[1], match[1])
    params = _integers(match[2])
    if params is None:
        return None
    return _map_named(name, params, unsigned)


def _mysql_name(declared_type: str) -> bool:
    """True when the type starts with a MySQL type name (then a failed MySQL parse is not retried as BigQuery)."""
    leading = _NAME_ALONE.match(normalize_source_type(declared_type))
    name = _ALIASES.get(leading[1], leading[1]) if leading else ""
    return name in _SIMPLE or name in _INTEGERS or name in ("decimal", "bit", "serial")


def _strip_modifiers(compact: str) -> tuple[str, bool]:
    """Remove trailing zerofill/unsigned/signed (any order); report whether unsigned was there."""
    unsigned, stripped = False, True
    while stripped:
        stripped = False
        for modifier in _MODIFIERS:
            if compact.endswith(modifier) and len(compact) > len(modifier):
                compact, stripped = compact[: -len(modifier)], True
                unsigned = unsigned or modifier == "unsigned"
    return compact, unsigned


def _string_with_attributes(compact: str) -> TypeMapping | None:
    """enum('a','b'), set(...), varchar(10)charactersetutf8mb4, char(3)binary: strings all."""
    leading = _LEADING_NAME.match(compact)
    name = _ALIASES.get(leading[0], leading[0]) if leading else ""
    if name in _STRINGS:
        return TypeMapping(STRING)
    if name in _BINARIES:
        return TypeMapping(BYTES)
    return None


def _integers(text: str | None) -> tuple[int, ...] | None:
    if not text:
        return ()
    parts = text.split(",")
    return tuple(int(part) for part in parts) if all(part.isdigit() for part in parts) else None


def _map_named(name: str, params: tuple[int, ...], unsigned: bool) -> TypeMapping | None:
    if name in _INTEGERS:
        if name == "tinyint" and params == (1,):
            return TypeMapping(BOOL)
        return TypeMapping(_UNSIGNED_BIGINT if name == "bigint" and unsigned else INT64)
    if name == "serial" and not params:
        return TypeMapping(_UNSIGNED_BIGINT)
    if name == "decimal":
        return _decimal(params)
    if name == "bit":
        return TypeMapping(BOOL if params in ((), (1,)) else INT64)
    return TypeMapping(_SIMPLE[name]) if name in _SIMPLE else None


def _decimal(params: tuple[int, ...]) -> TypeMapping | None:
    """NUMERIC(p, s) when it fits (s <= 9, p - s <= 29), else BIGNUMERIC(p, s), else BIGNUMERIC."""
    precision = params[0] if params else 10
    scale = params[1] if len(params) > 1 else 0
    if len(params) > 2 or not (1 <= precision <= _MAX_MYSQL_PRECISION and scale <= min(precision, _MAX_MYSQL_SCALE)):
        return None
    fitting = decimal_type(precision, scale)
    if fitting is not None:
        return TypeMapping(fitting)
    return TypeMapping(
        Scalar("BIGNUMERIC"),
        f"decimal({precision},{scale}) has more than 38 integer digits: landed as BIGNUMERIC, "
        "larger values are quarantined",
    )


def _bigquery_syntax(declared_type: str) -> BQType | None:
    """A BigQuery type written in BigQuery syntax, when uniview can land it (no RANGE, no INTERVAL)."""
    try:
        parsed = parse_type(declared_type)
    except TypeParseError:
        return None
    return parsed if _landable(parsed) else None


def _landable(bq_type: BQType) -> bool:
    if isinstance(bq_type, Range):
        return False
    if isinstance(bq_type, Array):
        return _landable(bq_type.element)
    if isinstance(bq_type, Struct):
        return all(_landable(field.type) for field in bq_type.fields)
    return bq_type.name != "INTERVAL"
