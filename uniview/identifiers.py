"""BigQuery identifier rules: validate dataset/table names and quote every identifier.

Dataset names: letters, digits and underscores, at most 1,024 characters.
Table names: Unicode letters, marks, numbers, connector and dash punctuation and spaces,
at most 1,024 UTF-8 bytes.  Column names are quoted as they come from the warehouse.
"""

from __future__ import annotations

import re
import unicodedata

from uniview.errors import IdentifierError

_DATASET_NAME = re.compile(r"[A-Za-z0-9_]{1,1024}")
_TABLE_CHAR_CATEGORIES = ("L", "M", "N", "Pc", "Pd", "Zs")
_MAX_TABLE_NAME_BYTES = 1024
_PROJECT_ID = re.compile(r"[a-z][a-z0-9-]{4,28}[a-z0-9]|(?:[a-z][a-z0-9.-]*:)?[a-z][a-z0-9-]{4,28}[a-z0-9]")


def validate_dataset(name: object, what: str = "dataset") -> str:
    """Return `name` if it is a valid BigQuery dataset name, else raise IdentifierError."""
    if not isinstance(name, str) or not _DATASET_NAME.fullmatch(name):
        raise IdentifierError(
            f"invalid {what} name {name!r}: use 1-1024 letters, digits or underscores"
        )
    return name


def validate_table(name: object, what: str = "table") -> str:
    """Return `name` if it is a valid BigQuery table name, else raise IdentifierError."""
    if not isinstance(name, str) or not name:
        raise IdentifierError(f"invalid {what} name {name!r}: it must be a non-empty string")
    if len(name.encode("utf-8")) > _MAX_TABLE_NAME_BYTES:
        raise IdentifierError(f"invalid {what} name {name[:40]!r}...: longer than 1024 bytes")
    for char in name:
        category = unicodedata.category(char)
        if not (category in _TABLE_CHAR_CATEGORIES or category[0] in _TABLE_CHAR_CATEGORIES):
            raise IdentifierError(
                f"invalid {what} name {name!r}: character {char!r} is not allowed in a table name"
            )
    return name


def validate_project(project: object) -> str:
    """Return `project` if it looks like a GCP project id, else raise IdentifierError."""
    if not isinstance(project, str) or not _PROJECT_ID.fullmatch(project):
        raise IdentifierError(f"invalid project id {project!r}")
    return project


def quote(name: str) -> str:
    """Backtick-quote one identifier for GoogleSQL, escaping backslashes and backticks."""
    return "`" + name.replace("\\", "\\\\").replace("`", "\\`") + "`"


def quote_path(*parts: str) -> str:
    """Quote each part of a dotted path: quote_path('ds', 't') -> `ds`.`t`."""
    return ".".join(quote(part) for part in parts)


def string_literal(value: str) -> str:
    """A GoogleSQL single-quoted string literal for `value`."""
    escaped = value.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n").replace("\r", "\\r")
    return "'" + escaped + "'"
