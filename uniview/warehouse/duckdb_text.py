"""BigQuery's text formats, as DuckDB SQL expressions.

Each public function takes DuckDB SQL for a value and returns DuckDB SQL for the exact text
BigQuery gives it (CAST AS STRING, TO_JSON_STRING, SAFE_CONVERT_BYTES_TO_STRING) or for the
instant TIMESTAMP(datetime, zone) names, independent of the reading session's TimeZone.
"""

from __future__ import annotations

from collections.abc import Callable

from uniview.core.types import Array, BQType, Scalar, Struct
from uniview.warehouse.duckdb_connection import string_literal

#: The UTC zone as a DuckDB string literal.
UTC_LITERAL = "'UTC'"
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
#: What DuckDB writes otherwise in a JSON text than ZetaSQL: a control character's escape in upper-case hex,
#: U+2028 and U+2029 unescaped.
DUCKDB_OTHERWISE_ESCAPED = r"\\u00[01][A-F]|[\x{2028}\x{2029}]"
_JSON_SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


quote_string = string_literal


def _let(value: str, name: str, body: str) -> str:
    """`body` with `name` bound to `value` once (a one-element list_transform)."""
    return f"list_transform([{value}], lambda {name}: {body})[1]"


# ---------------------------------------------------------------- CAST(x AS STRING)


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
    return f"({format_datetime(f'timezone({UTC_LITERAL}, {v})')} || '+00')"


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
    elif isinstance(source, Scalar):
        value = _JSON_SCALARS.get(source.name, _to_json_string_untyped)(x)
    else:  # RANGE: DuckDB has no such type, so no DuckDB column holds one
        value = _to_json_string_untyped(x)
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


def json_text_escaped(x: str) -> str:
    """The JSON text `x` (as DuckDB writes it) with each of its strings escaped as ZetaSQL's JsonEscapeString
    writes it (control characters as lower-case `\\u001f`, U+2028 and U+2029 escaped); the rest as it is.  A text
    matching DUCKDB_OTHERWISE_ESCAPED is the only one that can change."""
    decoded = "json_extract_string(__uv_token, '$')"
    tokens = (
        f"array_to_string(list_transform(regexp_extract_all({x}, {quote_string(_JSON_TOKEN)}),"
        f" lambda __uv_token: CASE WHEN starts_with(__uv_token, '\"') THEN {_json_string(decoded)}"
        " ELSE __uv_token END), '')"
    )
    return tokens


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
    "TIMESTAMP": _json_quoted(
        lambda x: f"replace({format_datetime(f'timezone({UTC_LITERAL}, {x})')}, ' ', 'T') || 'Z'"
    ),
    "TIME": _json_quoted(format_time),
    "INTERVAL": json_interval,
    "JSON": lambda x: f"CAST(to_json({x}) AS VARCHAR)",
}


# ---------------------------------------------------------------- bytes and time zones


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
    offset_before = f"(timezone({zone}, {day_before}) - timezone({UTC_LITERAL}, {day_before}))"
    earlier = f"timezone({UTC_LITERAL}, __uv_wall - {offset_before})"
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
