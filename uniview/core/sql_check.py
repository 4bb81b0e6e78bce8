"""Grammar checks of generated SQL, each distinct shape once.

Every expression the generator emits comes from a small set of shapes: a conversion of one type into
another (in one time zone), a typed NULL, the view's layout around its branches.  Identifiers and
literals in them are produced by uniview.core.identifiers, which quotes and escapes exactly.  So instead of
re-parsing megabytes of assembled SQL, each shape is parsed once per process with sqlglot's BigQuery
dialect, with a placeholder where the identifier goes; a shape that does not parse is a PlanError.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable

import sqlglot
from sqlglot.errors import SqlglotError

from uniview.core.errors import PlanError
from uniview.core.render import render

_checked: set[Hashable] = set()
_lock = threading.Lock()


def parses(sql: str) -> bool:
    """True when `sql` is exactly one statement in sqlglot's BigQuery dialect."""
    try:
        parsed = sqlglot.parse(sql, read="bigquery")
    except (SqlglotError, RecursionError):
        return False
    return len(parsed) == 1 and parsed[0] is not None


def check_expression_shape(shape: Hashable, make: Callable[[], str]) -> None:
    """Parse the expression `make()` renders for `shape` (once per shape); PlanError if it does not parse."""
    if shape in _checked:
        return
    expression = make()
    if not parses(f"SELECT {expression} AS x FROM t AS v"):
        raise PlanError(f"generated expression does not parse: {expression}")
    with _lock:
        _checked.add(shape)


def check_statement_shape() -> None:
    """Parse the statements the templates lay out (a view over a first branch naming its columns and
    bare later ones, a top view over parts)."""
    if "statement" in _checked:
        return
    first = render(
        "version_select.sql.j2", named=True, items=["a", "CAST(b AS STRING) AS b"], source="d.t", alias="v", rows=None
    )
    later = render(
        "version_select.sql.j2", named=False, items=["a", "CAST(b AS STRING)"], source="d.t", alias="v", rows=None
    )
    body = render("union_view.sql.j2", branches=[first, later, later])
    for statement in (
        render("create_view.sql.j2", view="d.v", description="'x'", body=body),
        render(
            "create_view.sql.j2",
            view="d.v",
            description=None,
            body=render("union_view.sql.j2", branches=[render("part_select.sql.j2", part="d.p")] * 2),
        ),
        render("drop_view.sql.j2", view="d.v"),
    ):
        if not parses(statement):
            raise PlanError(f"a statement template renders SQL that does not parse:\n{statement}")
    with _lock:
        _checked.add("statement")
