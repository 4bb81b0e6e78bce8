"""Translate uniview's canonical BigQuery view bodies into DuckDB SQL that gives BigQuery's results.

`to_duckdb(body, table_columns)` parses the BigQuery SELECT with sqlglot, rewrites every form
uniview's generator emits (casts, typed NULLs, TO_JSON_STRING, SAFE_CONVERT_BYTES_TO_STRING,
SAFE.TIMESTAMP, element-wise ARRAY subqueries, rebuilt STRUCTs, struct field paths) and prints
one DuckDB SELECT; anything else it cannot translate raises WarehouseError.

Where BigQuery's result text depends on the value's type (CAST(x AS STRING), TO_JSON_STRING),
`table_columns` supplies the types of the tables the body reads, and only the DuckDB
expression for that type is emitted.  Without it, the expression chooses at bind time with
typeof() (same results, much larger SQL; TO_JSON_STRING then keeps DuckDB's JSON text).

The canonical bodies never qualify a column by a table, so a dotted path (`s`.`a`.`b`) is
always a struct field access.  Results never depend on the reading session's TimeZone, except
TO_JSON_STRING of TIMESTAMP values when no column types were given.  docs/duckdb.md lists the
rules and every known difference from BigQuery.
"""

from __future__ import annotations

from typing import Callable, Mapping, Optional

import sqlglot
from sqlglot import exp
from sqlglot.errors import ErrorLevel, SqlglotError

from uniview.errors import TypeParseError, WarehouseError
from uniview.types import Array, BQType, Scalar, Struct, parse_type
from uniview.warehouse.duckdb_types import duckdb_type

#: Bump when the DuckDB SQL for the same BigQuery body changes: stored views written by an
#: older translation then no longer match and are replaced on the next refresh.
TRANSLATION_VERSION = 1

#: (dataset, table) -> {column name: BigQuery type}, or None when the table is unknown.
TableColumns = Callable[[str, str], Optional[Mapping[str, BQType]]]

_DIALECT = "duckdb"
_TYPE = "uniview_bq_type"
_UTC = "'UTC'"
_MAX_EXACT_JSON_INT = 9007199254740992
# Fractional seconds as BigQuery prints them: none, 3 or 6 digits.
_FRACTION = r"\.000000$|(\.[0-9]{3})000$"
# NUMERIC/BIGNUMERIC text without trailing fractional zeros (1.500 -> 1.5, 1.0 -> 1).
_DECIMAL_ZEROS = r"(\.[0-9]*[1-9])0+$|\.0+$"
# One well-formed UTF-8 sequence (Unicode Table 3-7) in upper-case hex, else one byte.
_UTF8_HEX_TOKEN = (
    "[0-7][0-9A-F]|(C[2-9A-F]|D[0-9A-F])[89AB][0-9A-F]|E0[AB][0-9A-F][89AB][0-9A-F]"
    "|(E[1-9A-CEF])[89AB][0-9A-F][89AB][0-9A-F]|ED[89][0-9A-F][89AB][0-9A-F]"
    "|F0(9[0-9A-F]|[AB][0-9A-F])[89AB][0-9A-F][89AB][0-9A-F]"
    "|F[1-3][89AB][0-9A-F][89AB][0-9A-F][89AB][0-9A-F]|F48[0-9A-F][89AB][0-9A-F][89AB][0-9A-F]|.."
)
# A JSON text split into string tokens and the runs between them.
_JSON_TOKEN = r'"(?:[^"\\]|\\.)*"|[^"]+'
# Characters ZetaSQL escapes in JSON strings, and runs of the others.
_JSON_ESCAPED_CHAR = r'[\x00-\x1F"\\\x{2028}\x{2029}]'
_JSON_PLAIN_RUN = r'[^\x00-\x1F"\\\x{2028}\x{2029}]+'
_JSON_SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def to_duckdb(bigquery_sql: str, table_columns: TableColumns | None = None) -> str:
    """The DuckDB SELECT equivalent to one BigQuery view body; WarehouseError if untranslatable."""
    tree = _parse(bigquery_sql)
    _annotate_types(tree, table_columns)
    for node in reversed(list(tree.dfs())):
        rule = _RULES.get(type(node))
        replacement = rule(node) if rule is not None else node
        if replacement is not node:
            if node is tree:
                tree = replacement
            else:
                node.replace(replacement)
    return _generate(tree)


def _parse(bigquery_sql: str) -> exp.Query:
    try:
        statements = [s for s in sqlglot.parse(bigquery_sql, read="bigquery") if s is not None]
    except (SqlglotError, RecursionError) as error:
        raise _error(f"it does not parse as BigQuery SQL ({_first_line(error)})") from None
    if len(statements) != 1 or not isinstance(statements[0], exp.Query):
        raise _error("expected exactly one SELECT statement")
    return statements[0]


def _generate(tree: exp.Expression) -> str:
    for node in tree.walk():
        if node.comments:
            node.comments = [comment.replace("*/", "* /") for comment in node.comments]
    try:
        return tree.sql(_DIALECT, unsupported_level=ErrorLevel.RAISE)
    except (SqlglotError, RecursionError) as error:
        raise _error(_first_line(error)) from None


def _error(reason: str) -> WarehouseError:
    return WarehouseError(f"cannot translate view SQL to DuckDB: {reason}")


def _unsupported(what: str) -> WarehouseError:
    return _error(f"{what} is not supported")


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def quote_identifier(name: str) -> str:
    """A DuckDB double-quoted identifier."""
    return '"' + name.replace('"', '""') + '"'


def quote_string(value: str) -> str:
    """A DuckDB string literal (a backslash is an ordinary character in DuckDB strings)."""
    return "'" + value.replace("'", "''") + "'"


def _raw(sql: str, like: exp.Expression | None = None) -> exp.Expression:
    """A node printed verbatim (already DuckDB SQL), keeping the type annotation of `like`."""
    node = exp.Var(this=sql)
    if like is not None and _TYPE in like.meta:
        node.meta[_TYPE] = like.meta[_TYPE]
    return node


def _sql(node: exp.Expression) -> str:
    return node.sql(_DIALECT)


def _let(value: str, name: str, body: str) -> str:
    """`body` with `name` bound to `value` once (a one-element list_transform)."""
    return f"list_transform([{value}], lambda {name}: {body})[1]"


# ---------------------------------------------------------------- types of paths


def _annotate_types(tree: exp.Expression, table_columns: TableColumns | None) -> None:
    """Store the BigQuery type of every column and field path whose type is known."""
    if table_columns is None:
        return
    cache: dict[tuple[str, str], dict[str, BQType]] = {}

    def columns_of(table: exp.Table) -> dict[str, BQType]:
        key = (table.db, table.name)
        if key not in cache:
            cache[key] = {name.lower(): t for name, t in (table_columns(*key) or {}).items()}
        return cache[key]

    for node in tree.find_all(exp.Column, exp.Dot):
        found = _path_type(node, columns_of)
        if found is not None:
            node.meta[_TYPE] = found


def _path_type(node: exp.Expression, columns_of: Callable[[exp.Table], dict[str, BQType]]) -> BQType | None:
    if isinstance(node, exp.Dot):
        if not isinstance(node.this, (exp.Column, exp.Dot)) or not isinstance(node.expression, exp.Identifier):
            return None
        return _field_type(_path_type(node.this, columns_of), node.expression.name)
    if not isinstance(node, exp.Column) or isinstance(node.this, exp.Star):
        return None
    names = [part.name for part in node.parts]
    found = _name_type(node, names[0], columns_of)
    for name in names[1:]:
        found = _field_type(found, name)
    return found


def _name_type(node: exp.Expression, name: str, columns_of: Callable[[exp.Table], dict[str, BQType]]) -> BQType | None:
    """The type of a bare name: an enclosing UNNEST element first, else a column of the branch's table."""
    child, parent = node, node.parent
    while parent is not None:
        if isinstance(parent, exp.Select):
            unnest = _unnest_of(parent)
            if unnest is None:
                table = _from_table(parent)
                return columns_of(table).get(name.lower()) if table is not None else None
            element, source = unnest
            if child is not _from_clause(parent) and element.lower() == name.lower():
                array = _path_type(source, columns_of)
                return array.element if isinstance(array, Array) else None
        child, parent = parent, parent.parent
    return None


def _field_type(struct: BQType | None, name: str) -> BQType | None:
    if not isinstance(struct, Struct):
        return None
    return next((field.type for field in struct.fields if field.name.lower() == name.lower()), None)


def _from_clause(select: exp.Select) -> exp.Expression | None:
    return select.args.get("from_") or select.args.get("from")


def _from_table(select: exp.Select) -> exp.Table | None:
    clause = _from_clause(select)
    return clause.this if clause is not None and isinstance(clause.this, exp.Table) else None


def _unnest_of(select: exp.Select) -> tuple[str, exp.Expression] | None:
    """(element alias, array) when `select` is the body of ARRAY(SELECT ... FROM UNNEST(x) AS e ...)."""
    clause = _from_clause(select)
    unnest = clause.this if clause is not None else None
    if not isinstance(select.parent, exp.Array) or not isinstance(unnest, exp.Unnest):
        return None
    alias = unnest.args.get("alias")
    columns = alias.columns if alias is not None else []
    if len(columns) != 1 or len(unnest.expressions) != 1:
        return None
    return columns[0].name, unnest.expressions[0]


def _type_of(node: exp.Expression) -> BQType | None:
    return node.meta.get(_TYPE) if node.meta else None


# ---------------------------------------------------------------- names and paths


def _column(node: exp.Column) -> exp.Expression:
    """`col` stays a column; `col`.`a`.`b` is a struct field path: struct_extract calls."""
    parts = node.parts
    if isinstance(node.this, exp.Star) or len(parts) < 2:
        return node
    path = quote_identifier(parts[0].name)
    for field in parts[1:]:
        path = f"struct_extract({path}, {quote_string(field.name)})"
    return _raw(path, like=node)


def _dot(node: exp.Dot) -> exp.Expression:
    if not isinstance(node.expression, exp.Identifier):
        raise _unsupported(f"the field access {node.sql('bigquery')}")
    return _raw(f"struct_extract({_sql(node.this)}, {quote_string(node.expression.name)})", like=node)


def _table(node: exp.Table) -> exp.Expression:
    """`project`.`ds`.`t` reads "ds"."t": a DuckDB schema stands for a dataset."""
    if node.args.get("catalog") is not None:
        node.set("catalog", None)
    return node


# ---------------------------------------------------------------- casts


def _cast(node: exp.Cast) -> exp.Expression:
    if node.args.get("format") is not None:
        raise _unsupported("CAST ... FORMAT")
    target = _bigquery_type(node.to)
    if isinstance(node.this, exp.Null):
        return _raw(f"CAST(NULL AS {_duckdb_type(target)})")
    operand = _sql(node.this)
    if target == Scalar("STRING"):
        return _raw(cast_to_string(operand, _type_of(node.this)))
    if target == Scalar("TIMESTAMP"):
        return _raw(cast_to_timestamp(operand))
    if target == Scalar("DATETIME"):
        return _raw(cast_to_datetime(operand))
    return _raw(f"CAST({operand} AS {_duckdb_type(target)})")


def _bigquery_type(data_type: exp.DataType) -> BQType:
    try:
        return parse_type(data_type.sql("bigquery"))
    except TypeParseError as error:
        raise _error(str(error)) from None


def _duckdb_type(bq_type: BQType) -> str:
    try:
        return duckdb_type(bq_type)
    except TypeParseError as error:
        raise _error(str(error)) from None


def cast_to_string(x: str, source: BQType | None = None) -> str:
    """BigQuery's CAST(x AS STRING) for a value of type `source` (None: chosen by typeof)."""
    if source is None:
        return _cast_to_string_by_typeof(x)
    name = source.name if isinstance(source, Scalar) else ""
    formatter = _STRING_FORMATS.get(name)
    if formatter is None:
        return _cast_to_string_by_typeof(x) if name not in _PLAIN_TEXT else f"CAST({x} AS VARCHAR)"
    return formatter(x)


_PLAIN_TEXT = frozenset({"INT64", "BOOL", "DATE", "STRING", "GEOGRAPHY"})


def _cast_to_string_by_typeof(x: str) -> str:
    """All branches bind for any x; DuckDB folds typeof(x) and keeps only the matching one."""
    return (
        f"CASE WHEN typeof({x}) IN ('DOUBLE', 'FLOAT') THEN {format_double(f'TRY_CAST({x} AS DOUBLE)')}"
        f" WHEN typeof({x}) LIKE 'DECIMAL%' THEN {format_decimal(x)}"
        f" WHEN typeof({x}) = 'TIMESTAMP WITH TIME ZONE' THEN {format_timestamp(f'TRY_CAST({x} AS TIMESTAMPTZ)')}"
        f" WHEN typeof({x}) LIKE 'TIMESTAMP%' THEN {format_datetime(f'TRY_CAST({x} AS TIMESTAMP)')}"
        f" WHEN typeof({x}) = 'TIME' THEN {format_time(f'TRY_CAST({x} AS TIME)')}"
        f" WHEN typeof({x}) = 'INTERVAL' THEN {format_interval(f'TRY_CAST({x} AS INTERVAL)')}"
        f" ELSE CAST({x} AS VARCHAR) END"
    )


def format_double(v: str) -> str:
    """ZetaSQL's RoundTripDoubleToString: %.15g when it reads back equal, else %.17g; nan, inf."""
    short = f"printf('%.15g', {v})"
    return (
        f"CASE WHEN abs({v}) <= 1.7976931348623157e308 / 1.000000000000001"
        f" AND TRY_CAST({short} AS DOUBLE) = {v} THEN {short} ELSE printf('%.17g', {v}) END"
    )


def format_decimal(v: str) -> str:
    return f"regexp_replace(CAST({v} AS VARCHAR), {quote_string(_DECIMAL_ZEROS)}, '\\1')"


def format_datetime(v: str) -> str:
    """A TIMESTAMP as BigQuery prints a DATETIME: 2024-05-01 10:00:00[.fff[fff]]."""
    return f"regexp_replace(strftime({v}, '%Y-%m-%d %H:%M:%S.%f'), {quote_string(_FRACTION)}, '\\1')"


def format_timestamp(v: str) -> str:
    """A TIMESTAMPTZ as BigQuery prints a TIMESTAMP: in UTC, suffixed +00."""
    return f"({format_datetime(f'timezone({_UTC}, {v})')} || '+00')"


def format_time(v: str) -> str:
    return f"regexp_replace(strftime(DATE '1970-01-01' + {v}, '%H:%M:%S.%f'), {quote_string(_FRACTION)}, '\\1')"


def _interval_parts(v: str) -> str:
    """{'m': months, 'd': days, 'us': microseconds} of an INTERVAL (NULL stays NULL)."""
    micros = f"datepart('hour', {v}) * 3600000000 + datepart('minute', {v}) * 60000000 + datepart('microseconds', {v})"
    months = f"datepart('year', {v}) * 12 + datepart('month', {v})"
    return f"CASE WHEN {v} IS NOT NULL THEN {{'m': {months}, 'd': datepart('day', {v}), 'us': {micros}}} END"


def format_interval(v: str) -> str:
    """BigQuery's canonical INTERVAL text: [-]Y-M D [-]H:M:S[.fff[fff]]."""
    m, d, us = "__uv_iv.m", "__uv_iv.d", "__uv_iv.us"
    fraction = f"abs({us}) % 1000000"
    body = (
        f"CASE WHEN __uv_iv IS NOT NULL THEN concat(CASE WHEN {m} < 0 THEN '-' ELSE '' END,"
        f" abs({m}) // 12, '-', abs({m}) % 12, ' ', {d}, ' ', CASE WHEN {us} < 0 THEN '-' ELSE '' END,"
        f" abs({us}) // 3600000000, ':', abs({us}) // 60000000 % 60, ':', abs({us}) // 1000000 % 60,"
        f" CASE WHEN {fraction} = 0 THEN '' WHEN {fraction} % 1000 = 0"
        f" THEN '.' || lpad(CAST({fraction} // 1000 AS VARCHAR), 3, '0')"
        f" ELSE '.' || lpad(CAST({fraction} AS VARCHAR), 6, '0') END) END"
    )
    return _let(_interval_parts(v), "__uv_iv", body)


_STRING_FORMATS: dict[str, Callable[[str], str]] = {
    "FLOAT64": lambda x: format_double(f"CAST({x} AS DOUBLE)"),
    "NUMERIC": format_decimal,
    "BIGNUMERIC": format_decimal,
    "DATETIME": lambda x: format_datetime(f"CAST({x} AS TIMESTAMP)"),
    "TIMESTAMP": format_timestamp,
    "TIME": format_time,
    "INTERVAL": format_interval,
}


def cast_to_timestamp(x: str) -> str:
    """BigQuery's CAST(x AS TIMESTAMP): a DATE or DATETIME is read as UTC."""
    return (
        f"CASE WHEN typeof({x}) = 'TIMESTAMP WITH TIME ZONE' THEN TRY_CAST({x} AS TIMESTAMPTZ)"
        f" ELSE timezone({_UTC}, CAST({x} AS TIMESTAMP)) END"
    )


def cast_to_datetime(x: str) -> str:
    """BigQuery's CAST(x AS DATETIME): a TIMESTAMP is read in UTC."""
    return (
        f"CASE WHEN typeof({x}) = 'TIMESTAMP WITH TIME ZONE' THEN timezone({_UTC}, TRY_CAST({x} AS TIMESTAMPTZ))"
        f" ELSE CAST({x} AS TIMESTAMP) END"
    )


# ---------------------------------------------------------------- TO_JSON_STRING


def to_json_string(x: str, source: BQType | None = None) -> str:
    """BigQuery's TO_JSON_STRING(x) for a value of type `source` (NULL -> 'null')."""
    if source is None:
        return _to_json_string_untyped(x)
    return json_text(x, source, 0)


def _to_json_string_untyped(x: str) -> str:
    """DuckDB's to_json, with NaN and +-inf written as the strings BigQuery writes."""
    text = f"CAST(to_json({x}) AS VARCHAR)"
    fixed = (
        f"array_to_string(list_transform(regexp_extract_all(__uv_json, {quote_string(_JSON_TOKEN)}),"
        " lambda __uv_token: CASE WHEN starts_with(__uv_token, '\"') THEN __uv_token"
        " ELSE regexp_replace(__uv_token, '(-?Infinity|NaN)', '\"\\1\"', 'g') END), '')"
    )
    body = f"CASE WHEN regexp_matches(__uv_json, 'NaN|Infinity') THEN {fixed} ELSE __uv_json END"
    return f"COALESCE({_let(text, '__uv_json', body)}, 'null')"


def json_text(x: str, source: BQType, depth: int) -> str:
    """JSON text of `x` as ZetaSQL's JsonFromValue writes it; never NULL."""
    if isinstance(source, Struct):
        value = _json_object(x, source, depth)
    elif isinstance(source, Array):
        element = f"__uv_j{depth}"
        items = f"list_transform({x}, lambda {element}: {json_text(element, source.element, depth + 1)})"
        value = f"'[' || array_to_string({items}, ',') || ']'"
    else:
        value = _JSON_SCALARS.get(source.name, _to_json_string_untyped)(x)
    return f"CASE WHEN {x} IS NULL THEN 'null' ELSE {value} END"


def _json_object(x: str, source: Struct, depth: int) -> str:
    members = []
    for index, field in enumerate(source.fields):
        key = ("," if index else "") + json_escape(field.name) + ":"
        value = json_text(f"struct_extract({x}, {quote_string(field.name)})", field.type, depth)
        members.append(f"{quote_string(key)}, {value}")
    return f"concat('{{', {', '.join(members)}, '}}')"


def json_escape(text: str) -> str:
    """`text` as a JSON string the way ZetaSQL's JsonEscapeString writes it."""
    out = []
    for char in text:
        if char in _JSON_SHORT_ESCAPES:
            out.append(_JSON_SHORT_ESCAPES[char])
        elif ord(char) < 0x20 or char in "\u2028\u2029":
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def _json_string(x: str) -> str:
    """A JSON string: text without characters to escape is copied; other text is split into
    runs and single characters to escape (\\" \\\\ \\n ... or \\u00xx, \\u2028, \\u2029)."""
    short = " ".join(f"WHEN __uv_c = {quote_string(c)} THEN {quote_string(e)}" for c, e in _JSON_SHORT_ESCAPES.items())
    escape = f"CASE {short} ELSE printf('\\u%04x', ord(__uv_c)) END"
    special = quote_string(_JSON_ESCAPED_CHAR)
    tokens = f"regexp_extract_all({x}, {quote_string(_JSON_ESCAPED_CHAR + '|' + _JSON_PLAIN_RUN)})"
    escaped = (
        f"array_to_string(list_transform({tokens}, lambda __uv_c:"
        f" CASE WHEN regexp_full_match(__uv_c, {special}) THEN {escape} ELSE __uv_c END), '')"
    )
    return f"'\"' || CASE WHEN NOT regexp_matches({x}, {special}) THEN {x} ELSE {escaped} END || '\"'"


def _json_integer(x: str) -> str:
    """Integers beyond +-2^53 are written as JSON strings."""
    text = f"CAST({x} AS VARCHAR)"
    exact = f"{x} BETWEEN -{_MAX_EXACT_JSON_INT} AND {_MAX_EXACT_JSON_INT}"
    return f"CASE WHEN {exact} THEN {text} ELSE '\"' || {text} || '\"' END"


def _json_decimal(x: str) -> str:
    """NUMERIC and BIGNUMERIC: a JSON number when integral within +-2^53, else a JSON string."""
    text = format_decimal(x)
    exact = f"{x} BETWEEN -{_MAX_EXACT_JSON_INT} AND {_MAX_EXACT_JSON_INT} AND NOT contains({text}, '.')"
    return f"CASE WHEN {exact} THEN {text} ELSE '\"' || {text} || '\"' END"


def _json_double(x: str) -> str:
    v = f"CAST({x} AS DOUBLE)"
    return (
        f"CASE WHEN isnan({v}) THEN '\"NaN\"' WHEN {v} = 'inf'::DOUBLE THEN '\"Infinity\"'"
        f" WHEN {v} = '-inf'::DOUBLE THEN '\"-Infinity\"' ELSE {format_double(v)} END"
    )


def json_interval(v: str) -> str:
    """ZetaSQL's IntervalValue::ToISO8601, e.g. P1Y2M3DT4H5M6.789S."""
    m, d, us = "__uv_iv.m", "__uv_iv.d", "__uv_iv.us"
    seconds, sub = f"({us} % 60000000 // 1000000)", f"({us} % 1000000)"
    digits = f"rtrim(lpad(CAST(abs({sub}) AS VARCHAR), 6, '0'), '0')"
    second_text = (
        f"CASE WHEN {sub} = 0 THEN {seconds} || 'S' WHEN {seconds} <> 0 THEN {seconds} || '.' || {digits} || 'S'"
        f" WHEN {us} < 0 THEN '-0.' || {digits} || 'S' ELSE '0.' || {digits} || 'S' END"
    )
    parts = [
        _iso_unit(f"{m} // 12", "Y"),
        _iso_unit(f"{m} % 12", "M"),
        _iso_unit(d, "D"),
        f"CASE WHEN {us} <> 0 THEN 'T' ELSE '' END",
        _iso_unit(f"{us} // 3600000000", "H"),
        _iso_unit(f"{us} % 3600000000 // 60000000", "M"),
        f"CASE WHEN {us} % 60000000 <> 0 THEN {second_text} ELSE '' END",
    ]
    text = f"CASE WHEN {m} = 0 AND {d} = 0 AND {us} = 0 THEN 'P0Y' ELSE concat('P', {', '.join(parts)}) END"
    return _let(_interval_parts(v), "__uv_iv", f"CASE WHEN __uv_iv IS NOT NULL THEN '\"' || {text} || '\"' END")


def _iso_unit(amount: str, unit: str) -> str:
    return f"CASE WHEN {amount} <> 0 THEN ({amount}) || '{unit}' ELSE '' END"


def _json_quoted(formatter: Callable[[str], str]) -> Callable[[str], str]:
    return lambda x: f"'\"' || {formatter(x)} || '\"'"


_JSON_SCALARS: dict[str, Callable[[str], str]] = {
    "BOOL": lambda x: f"CASE WHEN {x} THEN 'true' ELSE 'false' END",
    "INT64": _json_integer,
    "NUMERIC": _json_decimal,
    "BIGNUMERIC": _json_decimal,
    "FLOAT64": _json_double,
    "STRING": _json_string,
    "BYTES": lambda x: f"'\"' || to_base64({x}) || '\"'",
    "DATE": _json_quoted(lambda x: f"CAST({x} AS VARCHAR)"),
    "DATETIME": _json_quoted(lambda x: f"replace({format_datetime(f'CAST({x} AS TIMESTAMP)')}, ' ', 'T')"),
    "TIMESTAMP": _json_quoted(lambda x: f"replace({format_datetime(f'timezone({_UTC}, {x})')}, ' ', 'T') || 'Z'"),
    "TIME": _json_quoted(format_time),
    "INTERVAL": json_interval,
    "JSON": lambda x: f"CAST(to_json({x}) AS VARCHAR)",
}


# ---------------------------------------------------------------- other functions


def safe_convert_bytes_to_string(x: str) -> str:
    """BigQuery's SAFE_CONVERT_BYTES_TO_STRING: each byte of an ill-formed sequence becomes U+FFFD."""
    repaired = (
        f"decode(unhex(array_to_string(list_transform(regexp_extract_all(hex({x}), {quote_string(_UTF8_HEX_TOKEN)}),"
        " lambda __uv_byte: CASE WHEN length(__uv_byte) = 2 AND __uv_byte >= '80' THEN 'EFBFBD' ELSE __uv_byte END),"
        " '')))"
    )
    return f"CASE WHEN {x} IS NULL THEN NULL ELSE COALESCE(TRY(decode({x})), TRY({repaired}), CAST({x} AS VARCHAR)) END"


def timestamp_in_zone(x: str, zone: str) -> str:
    """BigQuery's TIMESTAMP(datetime, zone): a skipped local time takes the offset before the
    transition (as DuckDB does), a repeated one its earlier instant (DuckDB takes the later)."""
    later = f"timezone({zone}, __uv_wall)"
    day_before = f"({later} - INTERVAL '24 hours')"
    offset_before = f"(timezone({zone}, {day_before}) - timezone({_UTC}, {day_before}))"
    earlier = f"timezone({_UTC}, __uv_wall - {offset_before})"
    is_earlier = f"__uv_earlier < {later} AND timezone({zone}, __uv_earlier) = __uv_wall"
    body = _let(earlier, "__uv_earlier", f"CASE WHEN {is_earlier} THEN __uv_earlier ELSE {later} END")
    return _let(f"CAST({x} AS TIMESTAMP)", "__uv_wall", body)


def safe_timestamp_in_zone(x: str, zone: str) -> str:
    """SAFE.TIMESTAMP(datetime, zone): NULL outside BigQuery's TIMESTAMP range."""
    bounded = (
        "CASE WHEN __uv_ts BETWEEN TIMESTAMPTZ '0001-01-01 00:00:00+00'"
        " AND TIMESTAMPTZ '9999-12-31 23:59:59.999999+00' THEN __uv_ts END"
    )
    return _let(timestamp_in_zone(x, zone), "__uv_ts", bounded)


def _json_format(node: exp.JSONFormat) -> exp.Expression:
    if node.args.get("options") or node.args.get("is_json"):
        raise _unsupported("TO_JSON_STRING with options")
    return _raw(to_json_string(_sql(node.this), _type_of(node.this)))


def _safe_convert(node: exp.SafeConvertBytesToString) -> exp.Expression:
    return _raw(safe_convert_bytes_to_string(_sql(node.this)))


def _timestamp(node: exp.Timestamp) -> exp.Expression:
    if isinstance(node.parent, exp.SafeFunc):
        return node
    return _raw(timestamp_in_zone(_sql(node.this), _zone(node)))


def _safe_func(node: exp.SafeFunc) -> exp.Expression:
    inner = node.this
    if not isinstance(inner, exp.Timestamp):
        raise _unsupported(f"SAFE.{inner.sql('bigquery')}")
    return _raw(safe_timestamp_in_zone(_sql(inner.this), _zone(inner)))


def _zone(node: exp.Timestamp) -> str:
    zone = node.args.get("zone")
    if zone is None:
        return _UTC
    if not (isinstance(zone, exp.Literal) and zone.is_string):
        raise _unsupported("TIMESTAMP(x, zone) with a zone that is not a string literal")
    return quote_string(zone.this)


# ---------------------------------------------------------------- structs and arrays


def _struct(node: exp.Struct) -> exp.Expression:
    """STRUCT(x AS `a`, ...) -> {'a': x, ...}; every field must be named."""
    fields = []
    for item in node.expressions:
        if isinstance(item, exp.PropertyEQ) and isinstance(item.this, exp.Identifier):
            name, value = item.this.name, item.expression
        elif isinstance(item, exp.Alias):
            name, value = item.alias, item.this
        else:
            raise _unsupported(f"a STRUCT field without a name ({item.sql('bigquery')})")
        fields.append(f"{quote_string(name)}: {_sql(value)}")
    if not fields:
        raise _unsupported("an empty STRUCT()")
    return _raw("{" + ", ".join(fields) + "}")


def _array(node: exp.Array) -> exp.Expression:
    """ARRAY(SELECT f(e) FROM UNNEST(x) AS e WITH OFFSET AS o ORDER BY o) -> list_transform(x, lambda e: f(e))."""
    if len(node.expressions) != 1 or not isinstance(node.expressions[0], exp.Select):
        raise _unsupported(f"ARRAY {node.sql('bigquery')[:80]}")
    select = node.expressions[0]
    unnest = _unnest_of(select)
    if unnest is None or not _is_ordered_unnest(select) or len(select.expressions) != 1:
        raise _unsupported(
            "an ARRAY subquery other than"
            " ARRAY(SELECT <expr> FROM UNNEST(<array>) AS <e> WITH OFFSET AS <o> ORDER BY <o>)"
        )
    element, source = unnest
    body = select.expressions[0]
    if isinstance(body, exp.Alias):
        body = body.this
    return _raw(f"list_transform({_sql(source)}, lambda {quote_identifier(element)}: {_sql(body)})")


def _is_ordered_unnest(select: exp.Select) -> bool:
    """Nothing but `FROM UNNEST(...) AS e WITH OFFSET AS o ORDER BY o`."""
    extra = ("joins", "where", "group", "having", "limit", "offset", "distinct", "qualify", "laterals", "with")
    if any(select.args.get(key) for key in extra):
        return False
    offset = _from_clause(select).this.args.get("offset")
    order = select.args.get("order")
    ordered = order.expressions if order is not None else []
    if not isinstance(offset, exp.Identifier) or len(ordered) != 1 or ordered[0].args.get("desc"):
        return False
    key = ordered[0].this
    return isinstance(key, exp.Column) and not key.table and key.name == offset.name


def _st_astext(node: exp.Expression) -> exp.Expression:
    """GEOGRAPHY is kept as WKT text in DuckDB, so ST_ASTEXT is the text itself."""
    return _raw(f"CAST({_sql(node.this)} AS VARCHAR)")


_RULES: dict[type, Callable[..., exp.Expression]] = {
    exp.Column: _column,
    exp.Dot: _dot,
    exp.Table: _table,
    exp.Cast: _cast,
    exp.JSONFormat: _json_format,
    exp.SafeConvertBytesToString: _safe_convert,
    exp.Timestamp: _timestamp,
    exp.SafeFunc: _safe_func,
    exp.Struct: _struct,
    exp.Array: _array,
}
if hasattr(exp, "StAsText"):
    _RULES[exp.StAsText] = _st_astext
