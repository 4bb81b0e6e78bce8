"""What a version table's description records, written by the sink and read by the sink and the planner.

A version table is created with a description (BigQuery's table option, DuckDB's table comment)
holding one JSON object:

    {"uniview_source_schema": {"table": "customer", "columns": [["id", "int"], ...],
                               "primary_key": ["id"],
                               "typed_defaults": {"status": "open", "created": null},
                               "not_null": ["id", "status"], "declaration": "5c3e0a8b9d41"}}

`columns` is the declared source schema (name, declared type); `primary_key` is present only
when the records declared one; `typed_defaults` (each declared default converted by the sink as a
value of its column, as the canonical text of a constant of the column's type, or null when it is
unknown: uniview.sink.default_values) and `not_null` (the columns declared NOT NULL) only when some
column has one, for `<table>_current` to show what the source shows for rows older than a column
(docs/current-state.md); `declaration`, the digest of the defaults and nullability the records
declared (uniview.sink.versioning), for the sink to tell records that declare others.  A version landed before the sink converted defaults records `defaults`
instead (each default as the records carried it); it is read the same way, the epoch being read as
unknown (what Debezium wrote for now()).  Anything else in a description reads as "nothing recorded".
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from uniview.core.default_literals import default_text, is_epoch

KEY = "uniview_source_schema"


def version_description(
    table: str,
    columns: Sequence[tuple[str, str | None]],
    primary_key: Sequence[str] | None,
    defaults: Mapping[str, Any] | None = None,
    not_null: Sequence[str] = (),
    declaration: str | None = None,
) -> str:
    """The description a version table is created with (`defaults`: column -> the default's canonical text,
    None when it is unknown; `declaration`: the digest of the columns' declarations)."""
    recorded: dict[str, Any] = {"table": table, "columns": [[name, declared] for name, declared in columns]}
    if primary_key:
        recorded["primary_key"] = list(primary_key)
    if defaults:
        recorded["typed_defaults"] = dict(defaults)
    if not_null:
        recorded["not_null"] = list(not_null)
    if declaration is not None:
        recorded["declaration"] = declaration
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


def described_declaration(description: str | None) -> str | None:
    """The digest of the declarations a description records, or None (a table landed before it was recorded)."""
    digest = (_recorded(description) or {}).get("declaration")
    return digest if isinstance(digest, str) else None


def described_defaults(description: str | None) -> dict[str, str | None]:
    """The declared defaults a description records: column -> the default's text (to be checked against the
    column's type, uniview.core.default_literals), None when it is unknown; {} when none."""
    recorded = _recorded(description) or {}
    typed = recorded.get("typed_defaults")
    if isinstance(typed, dict):
        return {name: default_text(value) for name, value in typed.items() if isinstance(name, str)}
    landed = recorded.get("defaults")
    if not isinstance(landed, dict):
        return {}
    texts = {name: default_text(value) for name, value in landed.items() if isinstance(name, str) and value is not None}
    return {name: None if text is None or is_epoch(text) else text for name, text in texts.items()}


#: A declared type whose parameter is the most characters a value holds: MySQL's and PostgreSQL's `varchar(n)`
#: (`character varying(n)`), BigQuery's `STRING(n)` (what the sink records for a Debezium column whose source
#: type the connector propagates).
_VARYING_LENGTH = re.compile(r"\s*(?:varchar|character\s+varying|string)\s*\(\s*([0-9]{1,9})\s*\)\s*", re.IGNORECASE)


def described_string_lengths(description: str | None) -> dict[str, int]:
    """Column -> the length of the `varchar(n)` or `STRING(n)` a description records it declared as ({} when
    none): what a version table keeps of its column's declared length where the warehouse's own type does not
    (DuckDB's VARCHAR), for a type change that cuts older values (uniview.current.conversions)."""
    lengths = {}
    for name, declared in described_columns(description) or ():
        match = _VARYING_LENGTH.fullmatch(declared)
        if match and int(match.group(1)) > 0:
            lengths[name] = int(match.group(1))
    return lengths


def described_not_null(description: str | None) -> tuple[str, ...]:
    """The columns a description records as NOT NULL; () when none."""
    names = (_recorded(description) or {}).get("not_null")
    return tuple(n for n in names if isinstance(n, str)) if isinstance(names, list) else ()


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
