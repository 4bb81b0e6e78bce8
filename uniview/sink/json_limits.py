"""BigQuery's limits of a JSON value, checked on its text before any warehouse parses it.

BigQuery's JSON type nests at most 500 levels deep and holds a number only as a double, an INT64 or a
UINT64: a number beyond a double (`1e999`) cannot be one.  The load step reads every line as a JSON value
(BigQuery: `SAFE.PARSE_JSON`, then `JSON_QUERY` and `JSON_VALUE`, which fail the statement on a text nested
past 1,000 levels), and a JSON column's value given as a string holding JSON text is parsed once more.  Both
warehouses judge a text by these rules, written once here: its structure is read outside its strings (their
brackets and digits are text), and only a text that could breach a limit is looked at closely, so an
ordinary line costs a count of its opening brackets and one pattern.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sqlglot import exp

from uniview.core.types import Scalar
from uniview.sink import reasons
from uniview.sink import value_patterns as patterns
from uniview.sink.load_dialect import LoadDialect

#: BigQuery's JSON type: "a nesting limit of 500" (docs/json-data, Limitations).
MAX_NESTING_DEPTH = 500
#: A JSON string token.
JSON_STRING = r'"([^"\\]|\\.)*"'
#: What is not a bracket: removed from a text whose strings are blanked, the rest is its nesting.
_NOT_A_BRACKET = r"[^\[\]{}]"
#: A number that may lie beyond a double, from where it begins: an exponent of three digits or more, or 20
#: digits in a row (a text without either is well inside a double's range, 1.7976931348623157e308; one with
#: them has its numbers read).  20, not 309: a pattern of 309 digits in a row takes longer to match than the
#: rest of the check.
_LARGE_NUMBER = r"\s*[-+]?[0-9.]*(?:[0-9]{20}|[eE][+-]?[0-9]{3})"
#: Where a JSON number begins: after a colon, a comma or an opening bracket, or at the text's start.  A pattern
#: for each, which then begins with one given character: the regular expression engine skips to that character
#: (a pattern that may begin with any digit reads every byte of the line, and took a third of a line's checks).
_NUMBER_STARTS = (":", ",", r"\[", "^")
#: A JSON number, read from a text whose strings are blanked.
_NUMBER = r"-?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?"


def strings_blanked(text: exp.Expr, dialect: LoadDialect) -> exp.Expr:
    """The JSON `text` with each string written as `""`: what is left is its structure, numbers and words."""
    return dialect.replace_all(text, JSON_STRING, '""')


def too_deep(text: exp.Expr, dialect: LoadDialect) -> exp.Expr:
    """TRUE when the JSON `text` nests deeper than MAX_NESTING_DEPTH (a text with no more opening brackets than
    that, those in its strings counted too, is not looked at further: its two patterns cost about 40 times what
    counting does, and most lines of a kilobyte or more hold a few dozen brackets at most)."""
    long = exp.GT(this=_openings(text), expression=exp.Literal.number(MAX_NESTING_DEPTH))
    brackets = dialect.replace_all(strings_blanked(text, dialect), _NOT_A_BRACKET, "")
    depth = dialect.nesting_depth(exp.Case().when(long, brackets))
    return exp.func("coalesce", exp.GT(this=depth, expression=exp.Literal.number(MAX_NESTING_DEPTH)), exp.false())


def _openings(text: exp.Expr) -> exp.Expr:
    """How many opening brackets (`[` and `{`) the `text` holds, in its strings too: at least its nesting depth."""
    without = text.copy()
    for bracket in "[{":
        without = exp.Anonymous(
            this="REPLACE", expressions=[without, exp.Literal.string(bracket), exp.Literal.string("")]
        )
    return exp.Sub(this=exp.Length(this=text.copy()), expression=exp.Length(this=without))


def number_out_of_range(text: exp.Expr, dialect: LoadDialect) -> exp.Expr:
    """TRUE when the JSON `text` holds a number that is no finite double (`1e999`, `-1e999`); one too small
    for a double (`1e-999`) is 0 and fits."""
    maybe_large = exp.or_(*(dialect.matches(text, start + _LARGE_NUMBER) for start in _NUMBER_STARTS))
    large = exp.Case().when(maybe_large, strings_blanked(text, dialect))
    numbers = dialect.extract_all(large, _NUMBER)

    def finite(number: exp.Expr) -> exp.Expr:
        cast = dialect.try_cast(number, Scalar("FLOAT64"))
        return exp.func(
            "coalesce",
            exp.LTE(this=exp.Abs(this=cast), expression=exp.Literal.number(patterns.FLOAT_MAX)),
            exp.false(),
        )

    return exp.not_(exp.func("coalesce", dialect.every(dialect.mapped(numbers, finite)), exp.true()))


@dataclass(frozen=True)
class JsonLimit:
    """One limit: the quarantine `reason` of a line past it, its `detail`, and its `breached` check over a text."""

    reason: str
    detail: str
    breached: Callable[[exp.Expr, LoadDialect], exp.Expr]


#: Each limit, in the order a line is judged by them.
LIMITS = (
    JsonLimit(reasons.JSON_TOO_DEEP, reasons.JSON_TOO_DEEP_DETAIL, too_deep),
    JsonLimit(reasons.JSON_NUMBER_OUT_OF_RANGE, reasons.JSON_NUMBER_OUT_OF_RANGE_DETAIL, number_out_of_range),
)


def within_limits(text: exp.Expr, dialect: LoadDialect) -> exp.Expr:
    """TRUE when the JSON `text` breaches none of LIMITS."""
    return exp.not_(exp.or_(*(limit.breached(text, dialect) for limit in LIMITS)))
