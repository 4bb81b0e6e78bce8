"""GoogleSQL's JSON_VALUE, JSON_QUERY and JSON_QUERY_ARRAY over a JSON-formatted STRING, for the local BigQuery
emulator (bigquery_emulator_shim registers them as DuckDB functions).  Pure Python, so the tests run it too.

The emulator translates them to DuckDB's JSON functions, which differ from GoogleSQL's on two points the sink's
load SQL meets (checked against ZetaSQL's reference implementation of GoogleSQL):
- text that is not JSON: GoogleSQL gives NULL, DuckDB fails the query ("Malformed JSON");
- a number: GoogleSQL gives its text as written (1.50, 1e2, 12345678901234567.125), DuckDB its double's.
Here, as in GoogleSQL: a key written twice reads its first value (JSON_QUERY of the object keeps both), JSON null
reads as SQL NULL, an object's or array's text is compact with its numbers and key order as written and its strings
escaped as GoogleSQL escapes them, and a lone surrogate in a string reads as U+FFFD.

Where this is stricter than GoogleSQL: GoogleSQL reads a document as far as the path needs, so text after it
(`{"a": 1} x`), a trailing comma or single-quoted strings still give a value; here the whole text must be strict
JSON, else NULL.  The sink's statements read only lines that SAFE.PARSE_JSON accepted and that have no trailing
comma, so they do not depend on the difference.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any

#: A path: keys (str) and array positions (int) from the root, as the shim passes it (a JSON list).
Path = list[str | int]
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


class _Number(str):
    """A JSON number, as its text was written."""


class _Object(list):
    """A JSON object as its (key, value) pairs in the order written, a key written twice included."""


def _refuse(constant: str) -> Any:
    raise ValueError(f"{constant} is not JSON")


@functools.lru_cache(maxsize=256)
def _document(text: str) -> Any:
    """The JSON value of `text`; ValueError when it is not strict JSON.  A load step reads many values of one
    line in a row (each column's JSON_VALUE), so the line is parsed once for all of them (never changed after)."""
    return json.loads(text, parse_int=_Number, parse_float=_Number, parse_constant=_refuse, object_pairs_hook=_Object)


_MISSING = object()


def _at(text: str | None, path: Path | None) -> Any:
    """The value at `path` in the document `text`; _MISSING when either is NULL, the text is not JSON, or nothing
    is there."""
    if text is None or path is None:
        return _MISSING
    try:
        value = _document(text)
    except ValueError:
        return _MISSING
    for step in path:
        if isinstance(step, int) and isinstance(value, list) and not isinstance(value, _Object):
            value = value[step] if 0 <= step < len(value) else _MISSING
        elif isinstance(value, _Object):
            value = next((item for key, item in value if key == str(step)), _MISSING)
        else:
            return _MISSING
        if value is _MISSING:
            return _MISSING
    return value


def _clean(text: str) -> str:
    return _LONE_SURROGATE.sub("\ufffd", text)


def _text(value: Any) -> str:
    """A value's compact JSON text: numbers and keys as written, non-ASCII characters unescaped."""
    parts: list[str] = []
    _write(value, parts)
    return "".join(parts)


def _string(text: str) -> str:
    """A JSON string as GoogleSQL writes it: control characters as lower-case `\\u001f`, U+2028 and U+2029
    escaped, other characters as they are."""
    return json.dumps(_clean(text), ensure_ascii=False).replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _write(value: Any, parts: list[str]) -> None:
    """Append the compact JSON text of `value` to `parts`: one call per level of nesting, so a value as deep as
    BigQuery's JSON holds (500 levels) is written within Python's recursion limit."""
    if isinstance(value, _Number):
        parts.append(str(value))
    elif isinstance(value, str):
        parts.append(_string(value))
    elif value is None or isinstance(value, bool):
        parts.append(json.dumps(value))
    else:
        pairs = value if isinstance(value, _Object) else [(None, item) for item in value]
        parts.append("{" if isinstance(value, _Object) else "[")
        for number, (key, item) in enumerate(pairs):
            parts.append("," if number else "")
            if key is not None:
                parts.append(_string(key) + ":")
            _write(item, parts)
        parts.append("}" if isinstance(value, _Object) else "]")


@functools.lru_cache(maxsize=4096)
def _steps(path_json: str) -> tuple[str | int, ...]:
    return tuple(step for step in json.loads(path_json) if isinstance(step, (str, int)))


def _path(path_json: str | None) -> Path | None:
    return None if path_json is None else list(_steps(path_json))


def json_value(text: str | None, path_json: str | None) -> str | None:
    """JSON_VALUE: a scalar's text (a string unescaped, a number as written); NULL for an object, an array,
    JSON null, a missing path or text that is not JSON."""
    value = _at(text, _path(path_json))
    if value is _MISSING or value is None or isinstance(value, list):
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    return _clean(str(value))


def json_query(text: str | None, path_json: str | None) -> str | None:
    """JSON_QUERY: the compact JSON text of the value; NULL for JSON null, a missing path or text that is not JSON."""
    value = _at(text, _path(path_json))
    return None if value is _MISSING or value is None else _text(value)


def json_query_array(text: str | None, path_json: str | None) -> list[str] | None:
    """JSON_QUERY_ARRAY: each element's compact JSON text; NULL when the value is not an array."""
    value = _at(text, _path(path_json))
    if not isinstance(value, list) or isinstance(value, _Object):
        return None
    return [_text(item) for item in value]
