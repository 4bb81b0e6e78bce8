"""What a version table's description records, written by the sink and read by the sink and the planner.

A version table is created with a description (BigQuery's table option, DuckDB's table comment)
holding one JSON object:

    {"uniview_source_schema": {"table": "customer", "columns": [["id", "int"], ...],
                               "primary_key": ["id"]}}

`columns` is the declared source schema (name, declared type); `primary_key` is present only
when the records declared one.  Anything else in a description reads as "nothing recorded".
"""

from __future__ import annotations

import ast
import json
from collections.abc import Sequence
from typing import Any

KEY = "uniview_source_schema"


def version_description(
    table: str, columns: Sequence[tuple[str, str | None]], primary_key: Sequence[str] | None
) -> str:
    """The description a version table is created with."""
    recorded: dict[str, Any] = {"table": table, "columns": [[name, declared] for name, declared in columns]}
    if primary_key:
        recorded["primary_key"] = list(primary_key)
    return json.dumps({KEY: recorded}, ensure_ascii=False)


def _recorded(description: str | None) -> dict[str, Any] | None:
    try:
        recorded = json.loads(description or "")[KEY]
    except (ValueError, KeyError, TypeError):
        return None
    return recorded if isinstance(recorded, dict) else None


def described_columns(description: str | None) -> tuple[tuple[str, str], ...] | None:
    """The declared source columns a description records, or None."""
    try:
        return tuple((str(name), str(declared)) for name, declared in (_recorded(description) or {})["columns"])
    except (KeyError, TypeError, ValueError):
        return None


def described_primary_key(description: str | None) -> tuple[str, ...] | None:
    """The primary key a description records, or None."""
    names = (_recorded(description) or {}).get("primary_key")
    if isinstance(names, list) and names and all(isinstance(name, str) for name in names):
        return tuple(names)
    return None


def option_text(option_value: str | None) -> str | None:
    """A description as INFORMATION_SCHEMA.TABLE_OPTIONS.option_value shows it (a quoted GoogleSQL
    string literal) read back as text."""
    if (
        option_value is None
        or len(option_value) < 2
        or option_value[0] != option_value[-1]
        or option_value[0] not in "\"'"
    ):
        return option_value
    try:
        return ast.literal_eval(option_value)
    except (ValueError, SyntaxError):
        return option_value
