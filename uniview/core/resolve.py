"""Cast policies: settle the types a column has across versions, and convert each version's value.

`unify(types, policy)` gives the one type a column has in the unified view; it depends only on
the set of types, never on their order.  `convert(expression, source, target)` gives the
BigQuery expression that turns a value of `source` into `target` without ever failing at query
time and without turning a non-NULL value into NULL.

Policies (type parameters are never a conflict: STRING(10) and STRING(20) unify to STRING):
- `uniview`: identical types stay; {DATETIME, TIMESTAMP} -> TIMESTAMP; any other conflict -> STRING.
- `widen`: lossless widening along INT64 < NUMERIC < BIGNUMERIC < FLOAT64 and
  DATE < DATETIME < TIMESTAMP; any other conflict -> STRING.
In both, STRUCTs merge field by field (fields matched case-insensitively, missing ones NULL)
and ARRAY element types unify recursively; STRUCT or ARRAY against anything else -> STRING.
"""

from __future__ import annotations

import re
import zoneinfo
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache, reduce

from uniview.core.errors import ConfigError, PlanError
from uniview.core.identifiers import quote, string_literal
from uniview.core.types import STRING, TIMESTAMP, Array, BQType, Field, Range, Scalar, Struct

_WIDENING_CHAINS = (
    ("INT64", "NUMERIC", "BIGNUMERIC", "FLOAT64"),
    ("DATE", "DATETIME", "TIMESTAMP"),
)
_CAST_TO_STRING = frozenset(
    {"INT64", "FLOAT64", "NUMERIC", "BIGNUMERIC", "BOOL", "DATE", "DATETIME", "TIME", "TIMESTAMP", "INTERVAL"}
)
_TIMEZONE_NAME = re.compile(r"[A-Za-z0-9_+\-/]{1,64}")


def unify(types: Iterable[BQType], policy: str = "uniview") -> BQType:
    """The unified-view type of a column whose versions have `types` (parameters dropped)."""
    join = _scalar_join(policy)
    return reduce(lambda a, b: _join(a, b, join), (t.base() for t in types))


def _scalar_join(policy: str) -> Callable[[Scalar, Scalar], Scalar]:
    try:
        return POLICIES[policy]
    except KeyError:
        raise ConfigError(f"unknown policy {policy!r}: choose one of {', '.join(POLICIES)}") from None


def _join(a: BQType, b: BQType, scalar_join: Callable[[Scalar, Scalar], Scalar]) -> BQType:
    if a == b:
        return a
    if isinstance(a, Struct) and isinstance(b, Struct):
        return _merge_structs(a, b, scalar_join)
    if isinstance(a, Array) and isinstance(b, Array):
        return Array(_join(a.element, b.element, scalar_join))
    if isinstance(a, Scalar) and isinstance(b, Scalar):
        return scalar_join(a, b)
    return STRING


def _merge_structs(a: Struct, b: Struct, scalar_join: Callable[[Scalar, Scalar], Scalar]) -> Struct:
    """Fields of `a` in order, then the new ones of `b`; a shared field takes `b`'s spelling."""
    merged: dict[str, Field] = {f.name.lower(): f for f in a.fields}
    for field in b.fields:
        key = field.name.lower()
        previous = merged.get(key)
        field_type = field.type if previous is None else _join(previous.type, field.type, scalar_join)
        merged[key] = Field(field.name, field_type)
    return Struct(tuple(merged.values()))


def _join_uniview(a: Scalar, b: Scalar) -> Scalar:
    """Identical types stay (handled by the caller); DATETIME with TIMESTAMP -> TIMESTAMP; else STRING."""
    if {a.name, b.name} == {"DATETIME", "TIMESTAMP"}:
        return TIMESTAMP
    return a if a.name == b.name else STRING


def _join_widen(a: Scalar, b: Scalar) -> Scalar:
    """The wider type when both sit on one widening chain; else STRING."""
    if a.name == b.name:
        return a
    for chain in _WIDENING_CHAINS:
        if a.name in chain and b.name in chain:
            return Scalar(max(a.name, b.name, key=chain.index))
    return STRING


#: The cast policies by name: how two different scalar types of one column are settled.  The CLI's
#: choices, the function's UNIVIEW_POLICY and Terraform's validation all derive from these names.
POLICIES: dict[str, Callable[[Scalar, Scalar], Scalar]] = {"uniview": _join_uniview, "widen": _join_widen}


#: tz database entries that are not zones BigQuery knows: the POSIX and leap-second copies of the
#: database, the host's own setting, and the placeholder zone.
_NOT_BIGQUERY_ZONES = ("posix/", "right/")
_NOT_BIGQUERY_NAMES = frozenset({"localtime", "Factory", "posixrules"})


@lru_cache(maxsize=1)
def bigquery_time_zones() -> frozenset[str]:
    """The IANA time zone names BigQuery accepts: the tz database's zones and links
    (https://cloud.google.com/bigquery/docs/reference/standard-sql/timestamp_functions#timezone_definitions)."""
    return frozenset(
        name
        for name in zoneinfo.available_timezones()
        if not name.startswith(_NOT_BIGQUERY_ZONES) and name not in _NOT_BIGQUERY_NAMES
    )


def validate_timezone(name: str | None) -> str | None:
    """Return `name` if BigQuery knows it as an IANA time zone name (or None); else raise ConfigError.

    UTC offsets ('+05:30') are refused on purpose: a zone name follows daylight saving time, and
    'Etc/GMT-5' spells a fixed offset when one is really meant.
    """
    if name is None:
        return None
    if not _TIMEZONE_NAME.fullmatch(name) or name not in bigquery_time_zones():
        raise ConfigError(f"unknown time zone {name!r}: use an IANA time zone name such as Europe/Paris")
    return name


@dataclass(frozen=True)
class Converter:
    """Builds conversion expressions; `depth` names the UNNEST aliases of nested arrays."""

    datetime_timezone: str | None = None

    def convert(self, expression: str, source: BQType, target: BQType, depth: int = 0) -> str:
        source = source.base()
        if source == target:
            return expression
        if target == STRING:
            return self.to_string(expression, source)
        if isinstance(target, Struct) and isinstance(source, Struct):
            return self.rebuild_struct(expression, source, target, depth)
        if isinstance(target, Array) and isinstance(source, Array):
            return self.rebuild_array(expression, source, target, depth)
        if target == TIMESTAMP and isinstance(source, Scalar) and source.name in ("DATE", "DATETIME"):
            return self.to_timestamp(expression)
        if isinstance(target, Scalar) and isinstance(source, Scalar):
            return f"CAST({expression} AS {target.sql()})"
        raise PlanError(f"no conversion from {source} to {target}")

    @staticmethod
    def to_string(expression: str, source: BQType) -> str:
        if isinstance(source, (Array, Struct)) or source == Scalar("JSON"):
            # TO_JSON_STRING(NULL) is the text 'null': keep SQL NULL as NULL instead.
            return f"IF({expression} IS NULL, NULL, TO_JSON_STRING({expression}))"
        if isinstance(source, Range) or source.name in _CAST_TO_STRING:
            return f"CAST({expression} AS STRING)"
        if source.name == "BYTES":
            return f"SAFE_CONVERT_BYTES_TO_STRING({expression})"
        if source.name == "GEOGRAPHY":
            return f"ST_ASTEXT({expression})"
        raise PlanError(f"no conversion from {source} to STRING")

    def to_timestamp(self, expression: str) -> str:
        """DATE/DATETIME read as UTC, or in the configured zone (UTC at the range's very ends)."""
        utc = f"CAST({expression} AS TIMESTAMP)"
        if self.datetime_timezone is None:
            return utc
        zone = string_literal(self.datetime_timezone)
        return f"COALESCE(SAFE.TIMESTAMP({expression}, {zone}), {utc})"

    def rebuild_struct(self, expression: str, source: Struct, target: Struct, depth: int) -> str:
        source_fields = {f.name.lower(): f for f in source.fields}
        items = []
        for field in target.fields:
            found = source_fields.get(field.name.lower())
            if found is None:
                value = null_of(field.type)
            else:
                value = self.convert(f"{expression}.{quote(found.name)}", found.type, field.type, depth)
            items.append(f"{value} AS {quote(field.name)}")
        return f"IF({expression} IS NULL, NULL, STRUCT({', '.join(items)}))"

    def rebuild_array(self, expression: str, source: Array, target: Array, depth: int) -> str:
        element, offset = f"__uv_e{depth}", f"__uv_o{depth}"
        value = self.convert(element, source.element, target.element, depth + 1)
        return (
            f"IF({expression} IS NULL, NULL, ARRAY(SELECT {value} FROM UNNEST({expression}) AS {element}"
            f" WITH OFFSET AS {offset} ORDER BY {offset}))"
        )


def convert(expression: str, source: BQType, target: BQType, datetime_timezone: str | None = None) -> str:
    """A query-safe BigQuery expression turning `expression` (of type `source`) into `target`.

    `target` must be what `unify` returned for a set of types including `source`.
    """
    return Converter(datetime_timezone).convert(expression, source, target)


def null_of(target: BQType) -> str:
    """A typed NULL: CAST(NULL AS <target>), the full nested type included."""
    return f"CAST(NULL AS {target.sql()})"
