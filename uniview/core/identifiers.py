"""BigQuery identifier rules: validate dataset/table names and quote every identifier.

Dataset names: letters, digits and underscores, at most 1,024 characters.
Table names: Unicode letters, marks, numbers, connector and dash punctuation and spaces,
at most 1,024 UTF-8 bytes.  Column names (flexible column names): the same characters and
`& % = + : ' < > # |`, at most 300 characters, none of BigQuery's reserved prefixes.  Every identifier
is quoted where it needs to be.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from uniview.core.errors import IdentifierError

_DATASET_NAME = re.compile(r"[A-Za-z0-9_]{1,1024}")
_TABLE_CHAR_CATEGORIES = ("L", "M", "N", "Pc", "Pd", "Zs")
_MAX_TABLE_NAME_BYTES = 1024
_PROJECT_ID = re.compile(r"[a-z][a-z0-9-]{4,28}[a-z0-9]|(?:[a-z][a-z0-9.-]*:)?[a-z][a-z0-9-]{4,28}[a-z0-9]")


def validate_dataset(name: object, what: str = "dataset") -> str:
    """Return `name` if it is a valid BigQuery dataset name, else raise IdentifierError."""
    if not isinstance(name, str) or not _DATASET_NAME.fullmatch(name):
        raise IdentifierError(f"invalid {what} name {name!r}: use 1-1024 letters, digits or underscores")
    return name


def validate_table(name: object, what: str = "table") -> str:
    """Return `name` if it is a valid BigQuery table name, else raise IdentifierError."""
    if not isinstance(name, str) or not name:
        raise IdentifierError(f"invalid {what} name {name!r}: it must be a non-empty string")
    if len(name.encode("utf-8")) > _MAX_TABLE_NAME_BYTES:
        raise IdentifierError(f"invalid {what} name {name[:40]!r}...: longer than 1024 bytes")
    for char in name:
        if not _table_name_char(char):
            raise IdentifierError(f"invalid {what} name {name!r}: character {char!r} is not allowed in a table name")
    return name


def _table_name_char(char: str) -> bool:
    category = unicodedata.category(char)
    return category in _TABLE_CHAR_CATEGORIES or category[0] in _TABLE_CHAR_CATEGORIES


def validate_project(project: object) -> str:
    """Return `project` if it looks like a GCP project id, else raise IdentifierError."""
    if not isinstance(project, str) or not _PROJECT_ID.fullmatch(project):
        raise IdentifierError(f"invalid project id {project!r}")
    return project


#: GoogleSQL's reserved keywords:
#: https://cloud.google.com/bigquery/docs/reference/standard-sql/lexical#reserved_keywords
RESERVED_KEYWORDS = frozenset(
    [
        "ALL",
        "AND",
        "ANY",
        "ARRAY",
        "AS",
        "ASC",
        "ASSERT_ROWS_MODIFIED",
        "AT",
        "BETWEEN",
        "BY",
        "CASE",
        "CAST",
        "COLLATE",
        "CONTAINS",
        "CREATE",
        "CROSS",
        "CUBE",
        "CURRENT",
        "DEFAULT",
        "DEFINE",
        "DESC",
        "DISTINCT",
        "ELSE",
        "END",
        "ENUM",
        "ESCAPE",
        "EXCEPT",
        "EXCLUDE",
        "EXISTS",
        "EXTRACT",
        "FALSE",
        "FETCH",
        "FOLLOWING",
        "FOR",
        "FROM",
        "FULL",
        "GROUP",
        "GROUPING",
        "GROUPS",
        "HASH",
        "HAVING",
        "IF",
        "IGNORE",
        "IN",
        "INNER",
        "INTERSECT",
        "INTERVAL",
        "INTO",
        "IS",
        "JOIN",
        "LATERAL",
        "LEFT",
        "LIKE",
        "LIMIT",
        "LOOKUP",
        "MERGE",
        "NATURAL",
        "NEW",
        "NO",
        "NOT",
        "NULL",
        "NULLS",
        "OF",
        "ON",
        "OR",
        "ORDER",
        "OUTER",
        "OVER",
        "PARTITION",
        "PRECEDING",
        "PROTO",
        "QUALIFY",
        "RANGE",
        "RECURSIVE",
        "RESPECT",
        "RIGHT",
        "ROLLUP",
        "ROWS",
        "SELECT",
        "SET",
        "SOME",
        "STRUCT",
        "TABLESAMPLE",
        "THEN",
        "TO",
        "TREAT",
        "TRUE",
        "UNBOUNDED",
        "UNION",
        "UNNEST",
        "USING",
        "WHEN",
        "WHERE",
        "WINDOW",
        "WITH",
        "WITHIN",
    ]
)
#: Not reserved, but read as a function call when unquoted (`SELECT current_date` is today's date).
_NILADIC_FUNCTIONS = frozenset({"CURRENT_DATE", "CURRENT_DATETIME", "CURRENT_TIME", "CURRENT_TIMESTAMP"})
_PLAIN_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

#: Column names: https://cloud.google.com/bigquery/docs/schemas#flexible-column-names
_COLUMN_NAME_SYMBOLS = frozenset("&%=+:'<>#|")
MAX_COLUMN_NAME_CHARS = 300
RESERVED_COLUMN_PREFIXES = ("_PARTITION", "_TABLE_", "_FILE_", "_ROW_TIMESTAMP", "__ROOT__", "_COLIDENTIFIER")


def validate_column_name(name: object, what: str = "column") -> str:
    """Return `name` if BigQuery accepts it as a new column name (flexible column names: Unicode letters,
    marks, numbers, connector and dash punctuation, spaces and `& % = + : ' < > # |`, at most 300
    characters, no reserved prefix), else raise IdentifierError."""
    if not isinstance(name, str) or not name:
        raise IdentifierError(f"invalid {what} name {name!r}: it must be a non-empty string")
    if len(name) > MAX_COLUMN_NAME_CHARS:
        raise IdentifierError(f"invalid {what} name {name[:40]!r}...: longer than {MAX_COLUMN_NAME_CHARS} characters")
    refused = next((char for char in name if not _column_name_char(char)), None)
    if refused is not None:
        raise IdentifierError(f"invalid {what} name {name!r}: BigQuery does not allow {refused!r} in a column name")
    reserved = next((prefix for prefix in RESERVED_COLUMN_PREFIXES if name.upper().startswith(prefix)), None)
    if reserved:
        raise IdentifierError(f"invalid {what} name {name!r}: BigQuery reserves names starting with {reserved}")
    return name


def _column_name_char(char: str) -> bool:
    return char in _COLUMN_NAME_SYMBOLS or _table_name_char(char)


@lru_cache(maxsize=65536)
def identifier(name: str) -> str:
    """`name` as it reads best in GoogleSQL: bare when it is a plain identifier that is neither a reserved
    keyword nor a niladic function, backtick-quoted otherwise."""
    if (
        _PLAIN_IDENTIFIER.fullmatch(name)
        and name.upper() not in RESERVED_KEYWORDS
        and name.upper() not in _NILADIC_FUNCTIONS
    ):
        return name
    return quote(name)


def identifier_path(*parts: str) -> str:
    """identifier() of each part of a dotted path."""
    return ".".join(identifier(part) for part in parts)


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
