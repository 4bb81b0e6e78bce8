"""Each declared default converted once, as a value of its column is: what a version's description records.

A column's default is typed with the load step's own rules (uniview.sink.load_typing, rendered for DuckDB
and run in an in-memory DuckDB on a record whose data is the defaults), then kept only when its text is a
constant of the column's BigQuery type (uniview.core.default_literals).  Anything else is *unknown*
(None): a default the source computes when a row is written (VOLATILE_DEFAULT: now(), CURRENT_TIMESTAMP),
one its column's rules refuse (`CURRENT_TIMESTAMP` as text in a TIMESTAMP column, MySQL's zero date
'0000-00-00 00:00:00', 'x' in an INT64 column), one out of BigQuery's range, and every default of a
GEOGRAPHY, ARRAY or STRUCT column.  So `tinyint(1) DEFAULT 1` is TRUE, `tinyint(1) DEFAULT 2` unknown (2 is
no BOOL) and `INT DEFAULT '5'` is 5, as the same values in a record would land.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

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
