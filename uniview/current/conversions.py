"""What a type change did to the values older rows hold: the source's own conversion, applied in `<table>_current`.

A type change (MariaDB's MODIFY, PostgreSQL's ALTER COLUMN ... TYPE) rewrites every row of the table and logs no
change for them.  The latest change of a key was written in some version; when that version declares the column
with another type than the database's newest version, the source converted the row's value at each type change
since.  `converted_value` applies the same conversions, change by change along the family's versions between the
two, to the select item of the column (uniview.current.view), in view mode and table mode alike.  Each rule was
checked on MariaDB 10.11 (strict mode) and PostgreSQL 15 (docs/current-state.md#type-changes-that-convert-older-rows):

- DATETIME -> DATE: the date, the time of day dropped (both truncate, 23:59:59.5 included);
- a number -> NUMERIC/BIGNUMERIC of a smaller scale: rounded half away from zero at the new scale (both), by a
  SAFE_CAST to the parameterized type; a FLOAT64 is first cast to NUMERIC, which rounds it at 9 decimals (the
  sources round its decimal, not its binary value);
- STRING(n) or STRING -> STRING(m), m < n: the first m characters (PostgreSQL's cast truncates; MariaDB refuses
  the change when a value is longer);
- BOOL -> INT64: 1 and 0;
- a decimal of a declared scale -> STRING (PostgreSQL's `numeric(12,2)` -> `numeric` or `text`, MariaDB's
  `decimal(12,2)` -> `varchar`): its text with every digit of the scale, 1.50;
- a change that keeps the value (INT64 -> NUMERIC, DATE -> DATETIME, a wider decimal, to STRING): the value.

Any other change (one a source refuses for the values it cannot convert, or converts in its own way) leaves the
value as it was sent.  Every expression is one no query fails on (SAFE_CAST where a cast could), on BigQuery and
DuckDB alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise

from uniview.core.resolve import convert
from uniview.core.schema import TableVersion
from uniview.core.types import STRING, BQType, Scalar, decimal_parameters

_NUMBERS = ("INT64", "NUMERIC", "BIGNUMERIC", "FLOAT64")
_DECIMALS = ("NUMERIC", "BIGNUMERIC")
#: Types a value cast to STRING in the unified view is cast back from without loss (a FLOAT64 as its shortest
#: round-trip text).
_FROM_TEXT = frozenset({"BOOL", "INT64", "NUMERIC", "BIGNUMERIC", "FLOAT64", "DATE", "DATETIME", "STRING"})
#: Changes whose value stays the same (the step is a cast no value fails).
_KEEPING = frozenset(
    {
        ("INT64", "NUMERIC"),
        ("INT64", "BIGNUMERIC"),
        ("INT64", "FLOAT64"),
        ("NUMERIC", "BIGNUMERIC"),
        ("NUMERIC", "FLOAT64"),
        ("BIGNUMERIC", "FLOAT64"),
        ("DATE", "DATETIME"),
    }
)


def converted_value(value: str, versions: Sequence[TableVersion], name: str, unified: BQType) -> str:
    """`value` (column `name` of the row, in its unified type) as the source holds it now: converted as the
    source converted it at each type change between the row's version (its number in the family,
    `_uniview_version`) and its database's newest version (`_uniview_newest`); `value` itself when no change
    between them converts it.  Versions are named by their numbers as ranges, so a family of hundreds of versions
    costs a few characters per type change, not a name per version."""
    runs = _type_runs(versions, name)
    whens = []
    for first, (numbers, _) in enumerate(runs):
        for last in range(first + 1, len(runs)):
            path = [run_type for _, run_type in runs[first : last + 1]]
            converted = _along(value, path, unified)
            if converted is None:
                continue
            written = among("_uniview_version", numbers)
            newest = among("_uniview_newest", runs[last][0])
            whens.append(f"WHEN {written} AND {newest} THEN {converted}")
    return f"CASE {' '.join(whens)} ELSE {value} END" if whens else value


def among(expression: str, numbers: Sequence[int]) -> str:
    """`expression` is one of `numbers` (version numbers), written as ranges (versions gain and lose columns,
    and keep a type, in runs)."""
    runs: list[list[int]] = []
    for n in sorted(numbers):
        if runs and n == runs[-1][1] + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    tests = [f"{expression} = {a}" if a == b else f"{expression} BETWEEN {a} AND {b}" for a, b in runs]
    return "(" + " OR ".join(tests) + ")" if tests else "FALSE"


def _type_runs(versions: Sequence[TableVersion], name: str) -> list[tuple[list[int], BQType]]:
    """The versions with column `name`, in order, grouped in runs of one declared type: (version numbers, type)."""
    runs: list[tuple[list[int], BQType]] = []
    for number, version in enumerate(versions):
        column = next((c for c in version.columns if c.name.lower() == name.lower()), None)
        if column is None:
            continue
        if runs and runs[-1][1] == column.type:
            runs[-1][0].append(number)
        else:
            runs.append(([number], column.type))
    return runs


def _along(value: str, path: Sequence[BQType], unified: BQType) -> str | None:
    """`value` converted along the declared types `path` (the row's first, the newest last); None when no step
    converts it, or a step is one uniview does not follow."""
    expression = _from_unified(value, unified, path[0])
    return None if expression is None else _applied(expression, path, unified)


def _applied(expression: str, path: Sequence[BQType], unified: BQType) -> str | None:
    """`expression` (of type `path[0]`) converted at each type change of `path`, in the unified type; None when no
    step changes it, or a step is one uniview does not follow."""
    converts = unified == STRING and path[0].base() != path[-1].base()  # the text of the value changes
    for before, after in pairwise(path):
        step = _step(expression, before, after)
        if step is None:
            return None
        expression, changed = step
        converts = converts or changed
    return convert(expression, path[-1].base(), unified) if converts else None


def converted_defaults(
    literal: str, versions: Sequence[TableVersion], name: str, unified: BQType, added: int
) -> dict[int, str]:
    """{newest version number: the default `literal`} for the newest versions after a type change that converts it:
    `literal` is a constant of column `name`'s type in version number `added`, which added the column and filled
    the older rows with it, and those rows hold it as converted at each type change since, in the unified type."""
    runs = _type_runs(versions, name)
    first = next((i for i, (numbers, _) in enumerate(runs) if added in numbers), len(runs))
    converted: dict[int, str] = {}
    for last in range(first + 1, len(runs)):
        value = _applied(literal, [run_type for _, run_type in runs[first : last + 1]], unified)
        if value is not None:
            converted.update(dict.fromkeys(runs[last][0], value))
    return converted


def _from_unified(value: str, unified: BQType, own: BQType) -> str | None:
    """The unified `value` back in the row's own type: itself, or cast back from the text the unified view made
    of it (SAFE_CAST: never fails); None when it cannot be read back exactly."""
    if own.base() == unified:
        return value
    if unified == STRING and isinstance(own, Scalar) and own.name in _FROM_TEXT:
        return f"SAFE_CAST({value} AS {own.base().sql()})"
    return None


def _step(expression: str, before: BQType, after: BQType) -> tuple[str, bool] | None:
    """One type change applied to `expression` (of type `before`): (the expression of type `after`, whether the
    value may change); None when uniview does not follow the change."""
    if not (isinstance(before, Scalar) and isinstance(after, Scalar)):
        return None
    pair = (before.name, after.name)
    if pair == ("DATETIME", "DATE"):
        return f"CAST({expression} AS DATE)", True
    if pair == ("BOOL", "INT64"):
        return f"CAST({expression} AS INT64)", True
    if before.name in _NUMBERS and after.name in _DECIMALS:
        return _to_decimal(expression, before, after)
    if pair == ("STRING", "STRING"):
        return _to_length(expression, before, after)
    if before.name == after.name:
        return expression, False
    if pair in _KEEPING:
        return f"CAST({expression} AS {after.base().sql()})", False
    if after.name == "STRING":
        return _to_text(expression, before, after)
    return None


def _to_text(expression: str, before: Scalar, after: Scalar) -> tuple[str, bool]:
    """A value as the text the sources make of it: a decimal of a declared scale keeps every digit of that scale
    (PostgreSQL's `numeric(12,2)` -> `numeric` or `text`, MariaDB's `decimal(12,2)` -> `varchar`: 1.50, not the
    1.5 of BigQuery's CAST), zeros appended to the CAST's text, cut to `after`'s length (PostgreSQL's cast to
    varchar(n) cuts); any other value as the unified view's CAST writes it."""
    text = convert(expression, before.base(), STRING)
    scale = decimal_parameters(before)[1] if before.name in _DECIMALS and before.params else 0
    if scale:  # REPEAT's count is never negative (a CAST's text has no more digits than the scale)
        decimals = f"IF(STRPOS({text}, '.') = 0, 0, LENGTH({text}) - STRPOS({text}, '.'))"
        point = f"IF(STRPOS({text}, '.') = 0, '.', '')"
        text = f"CONCAT({text}, {point}, REPEAT('0', GREATEST(0, {scale} - {decimals})))"
    if scale and after.params:
        text = f"SUBSTR({text}, 1, {after.params[0]})"
    return text, bool(scale)


def _to_decimal(expression: str, before: Scalar, after: Scalar) -> tuple[str, bool]:
    """A number as a decimal of `after`'s precision and scale: SAFE_CAST to the parameterized type rounds half away
    from zero at the scale (BigQuery's and DuckDB's casts alike).  A FLOAT64 is cast to the decimal type first,
    which rounds it at that type's own scale (9 for NUMERIC): the decimal the sources round, not the binary value
    (2.675 is 2.67499999999999982236431605997495353221893310546875)."""
    if before.name == "INT64":
        return f"CAST({expression} AS {after.base().sql()})", False
    rounds = before.name == "FLOAT64" or decimal_parameters(before)[1] > decimal_parameters(after)[1]
    if before.name == "FLOAT64":
        expression = f"SAFE_CAST({expression} AS {after.base().sql()})"
    if before == after or (not rounds and not after.params):
        return expression, rounds
    return f"SAFE_CAST({expression} AS {after.sql()})", rounds


def _to_length(expression: str, before: Scalar, after: Scalar) -> tuple[str, bool]:
    """A text cut to `after`'s length when it is shorter than `before`'s (PostgreSQL's cast to varchar(n))."""
    if not after.params or (before.params and before.params[0] <= after.params[0]):
        return expression, False
    return f"SUBSTR({expression}, 1, {after.params[0]})", True
