"""Where the load step's SQL differs between warehouses: the constructs the type rules are written with.

uniview.sink.load_typing writes each rule once, with the constructs below (read a JSON value's text, its
kind, an object's keys, an array's elements; cast behind a guard; lists); a LoadDialect renders each
construct for its warehouse.  DuckDB's are its JSON and list functions, with JSON pointers; BigQuery's
are GoogleSQL's: JSON_VALUE/JSON_QUERY with JSONPath, SAFE_CAST, SAFE.PARSE_JSON, REGEXP_CONTAINS,
ARRAY subqueries over UNNEST.  What each warehouse forces on top of one rule (a value BigQuery's column
type cannot hold) is named here too, so the rules stay one.

- A BigQuery document is a JSON-formatted STRING.  GoogleSQL's JSON functions over a STRING give a number's
  text as written, so BigQuery reads every decimal from its text (`exact_number_text`); DuckDB's text of a
  JSON number has been through a double, so it reads every decimal from the record itself with
  json_transform, which parses the number as written.
- BigQuery has no function that lists an object's keys as written (JSON_KEYS sorts them and keeps each
  once), so its keys are read from the object's text: its string tokens and brackets, with the keys at
  depth 1 in the order written, repeated keys included, as DuckDB's json_keys gives them.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from functools import cache, partial

import sqlglot
from sqlglot import exp

from uniview.core.identifiers import quote_path, string_literal
from uniview.core.types import Scalar, decimal_parameters
from uniview.warehouse.duckdb_connection import quote_identifier as duckdb_quote
from uniview.warehouse.duckdb_connection import string_literal as duckdb_literal
from uniview.warehouse.duckdb_text import DUCKDB_OTHERWISE_ESCAPED, json_text_escaped
from uniview.warehouse.duckdb_types import duckdb_type

#: Where a value is in its document: the keys from the document's root, e.g. ("data", "customer_id").
Path = tuple[str, ...]
#: A body over one array element: (the element's JSON text, its position) -> the element's expression.
ElementBody = Callable[[exp.Expr, exp.Expr], exp.Expr]
_TEXT = exp.Literal.string


def function_call(name: str, *arguments: exp.Expr) -> exp.Expr:
    """A call of the warehouse's function `name` as written (sqlglot may otherwise render a JSON function as
    an operator, or rename it)."""
    return exp.Anonymous(this=name, expressions=list(arguments))


class LoadDialect(ABC):
    """The constructs of the load step's SQL in one warehouse's dialect (`name`: sqlglot's)."""

    name: str
    #: A JSON number's text is its text as written (so every decimal is parsed from its text).
    exact_number_text: bool
    #: An ARRAY may hold a NULL element (BigQuery's cannot: an array value with a JSON null does not fit there).
    arrays_hold_null: bool = True

    def sql(self, expression: exp.Expr) -> str:
        return expression.sql(self.name, copy=False)

    @abstractmethod
    def extract(self, document: exp.Expr, path: Path) -> exp.Expr:
        """The JSON text of the value at `path` in `document` (NULL when absent)."""

    @abstractmethod
    def value_text(self, document: exp.Expr, path: Path) -> exp.Expr:
        """The value's text: a string unescaped, a number, true or false as written out, an object or array
        as its JSON text; NULL for JSON null and for a key that is absent."""

    @abstractmethod
    def column_texts(self, data: exp.Expr, names: Sequence[str]) -> tuple[exp.Expr | None, list[exp.Expr]]:
        """The texts of the columns `names` of `data`: a list a query computes once as the column `texts`
        (None when each text is read on its own), and each column's text from it."""

    @abstractmethod
    def kind_is(self, document: exp.Expr, path: Path, kind: str) -> exp.Expr:
        """The value at `path` is a JSON OBJECT, ARRAY or STRING (a string holding JSON text is a STRING)."""

    @abstractmethod
    def kind(self, document: exp.Expr) -> exp.Expr:
        """The JSON kind of `document`: 'OBJECT' when it is an object."""

    @abstractmethod
    def keys(self, document: exp.Expr) -> exp.Expr:
        """The keys of the object `document` in the order written, a repeated key as often as it is written."""

    @abstractmethod
    def each_element(self, document: exp.Expr, path: Path, body: ElementBody) -> exp.Expr:
        """The list of `body(element, position)` over the elements of the array at `path`, in their order."""

    @abstractmethod
    def element_at(self, values: exp.Expr, position: exp.Expr) -> exp.Expr:
        """The element of the list `values` at an each_element position."""

    @abstractmethod
    def field_of(self, value: exp.Expr, name: str) -> exp.Expr:
        """The field `name` of a struct."""

    @abstractmethod
    def struct(self, fields: Sequence[tuple[str, exp.Expr]]) -> exp.Expr:
        """A struct of the named values."""

    @abstractmethod
    def every(self, values: exp.Expr) -> exp.Expr:
        """TRUE when every boolean of the list is (NULL for an empty list)."""

    @abstractmethod
    def mapped(self, values: exp.Expr, body: Callable[[exp.Expr], exp.Expr]) -> exp.Expr:
        """The list of `body(value)` over the list `values` (empty for NULL), in its order."""

    @abstractmethod
    def extract_all(self, text: exp.Expr, pattern: str) -> exp.Expr:
        """The list of every match of `pattern` in `text`, in order."""

    @abstractmethod
    def nesting_depth(self, brackets: exp.Expr) -> exp.Expr:
        """The deepest nesting of a text of brackets only (`[{}]` is 2): the most opening brackets not yet
        closed; NULL for NULL or an empty text."""

    @abstractmethod
    def length(self, values: exp.Expr) -> exp.Expr: ...

    @abstractmethod
    def distinct(self, values: exp.Expr) -> exp.Expr:
        """The list's values, each once."""

    @abstractmethod
    def distinct_among(self, values: exp.Expr, allowed: exp.Expr) -> exp.Expr:
        """The list's values that the list `allowed` holds, each once."""

    @abstractmethod
    def not_among(self, values: exp.Expr, allowed: exp.Expr) -> exp.Expr:
        """The list's values (in their order) that the list `allowed` does not hold."""

    def same_list(self, values: exp.Expr, other: exp.Expr) -> exp.Expr | None:
        """TRUE when the two lists hold the same values in the same order; None where lists cannot be compared
        in one step (BigQuery's arrays)."""
        return None

    def join(self, values: exp.Expr, separator: str) -> exp.Expr:
        """The list's texts joined by `separator`."""
        return function_call("array_to_string", values, _TEXT(separator))

    @abstractmethod
    def join_present(self, separator: str, texts: Sequence[exp.Expr]) -> exp.Expr:
        """The texts that are not NULL joined by `separator`."""

    @abstractmethod
    def present(self, texts: Sequence[exp.Expr]) -> exp.Expr:
        """The list of the texts that are not NULL, in their order."""

    @abstractmethod
    def concat(self, first: exp.Expr, second: exp.Expr) -> exp.Expr:
        """The list `first` followed by the list `second`."""

    @abstractmethod
    def no_texts(self) -> exp.Expr:
        """An empty list of texts."""

    @abstractmethod
    def replace_all(self, text: exp.Expr, pattern: str, replacement: str) -> exp.Expr:
        """Every match of `pattern` in `text` replaced."""

    def matches(self, text: exp.Expr, pattern: str) -> exp.Expr:
        return exp.RegexpLike(this=text.copy(), expression=_TEXT(pattern))

    @abstractmethod
    def quote(self, name: str) -> str:
        """An identifier, quoted."""

    @abstractmethod
    def literal(self, text: str) -> str:
        """A string literal."""

    @abstractmethod
    def to_bytes(self, text: str) -> str:
        """The UTF-8 bytes of the text `text` (SQL)."""

    @abstractmethod
    def regexp_group(self, text: exp.Expr, pattern: str, number: int) -> exp.Expr:
        """The group `number` of `pattern`'s match of the whole `text` ('' when the group took no part)."""

    @abstractmethod
    def lsn_number(self, high: exp.Expr, low: exp.Expr) -> exp.Expr:
        """The decimal text of the 64-bit number of two hexadecimal halves of 32 bits."""

    @abstractmethod
    def string_list(self, text: exp.Expr) -> exp.Expr:
        """The JSON text of a list of strings as a list; NULL when it is not one."""

    @abstractmethod
    def try_cast(self, text: exp.Expr, bq_type: Scalar) -> exp.Expr:
        """The text cast to the column type of `bq_type`; NULL where it does not parse."""

    @abstractmethod
    def from_base64(self, text: exp.Expr) -> exp.Expr: ...

    @abstractmethod
    def json_document(self, text: exp.Expr) -> exp.Expr:
        """A JSON column's value from text that is one JSON document; NULL where the warehouse cannot parse it."""

    @abstractmethod
    def one_json_value(self, text: exp.Expr) -> exp.Expr:
        """The text parses as exactly one JSON value (before the checks for what a lenient parser lets through)."""

    def nested_text(self, text: exp.Expr, nested: Callable[[], exp.Expr]) -> exp.Expr:
        """A STRING's `text`, written as GoogleSQL writes an object's or array's JSON text (its strings escaped by
        ZetaSQL's JsonEscapeString) where `nested()` tells it is one.  GoogleSQL's JSON_QUERY writes it so."""
        return text.copy()

    @abstractmethod
    def from_text(self, bq_type: Scalar, text: exp.Expr) -> exp.Expr:
        """The column value of a type landed from its text once its guard passed (STRING, GEOGRAPHY, TIME, a
        decimal wider than the warehouse parses); NULL where the column type cannot hold it."""

    def exact_decimals(self, record: exp.Expr, path: Path, structure: object) -> exp.Expr | None:
        """The value at `path` in `record` parsed with the exact decimals in json_transform's `structure`,
        for a dialect whose number text is not exact."""
        return None


class DuckDBDialect(LoadDialect):
    """DuckDB's JSON functions (JSON pointers) and list functions with lambdas."""

    name = "duckdb"
    exact_number_text = False

    def extract(self, document: exp.Expr, path: Path) -> exp.Expr:
        return function_call("json_extract", document.copy(), _TEXT(_pointer(path)))

    def value_text(self, document: exp.Expr, path: Path) -> exp.Expr:
        return function_call("json_extract_string", document.copy(), _TEXT(_pointer(path)))

    def column_texts(self, data: exp.Expr, names: Sequence[str]) -> tuple[exp.Expr | None, list[exp.Expr]]:
        pointers = exp.Array(expressions=[_TEXT(_pointer((name,))) for name in names])
        texts = function_call("json_extract_string", data.copy(), pointers)
        return texts, [
            exp.Bracket(this=exp.column("texts"), expressions=[exp.Literal.number(j)]) for j in range(len(names))
        ]

    def kind_is(self, document: exp.Expr, path: Path, kind: str) -> exp.Expr:
        json_type = {"STRING": "VARCHAR"}.get(kind, kind)
        return exp.EQ(
            this=function_call("json_type", document.copy(), _TEXT(_pointer(path))), expression=_TEXT(json_type)
        )

    def kind(self, document: exp.Expr) -> exp.Expr:
        return function_call("json_type", document.copy())

    def keys(self, document: exp.Expr) -> exp.Expr:
        return function_call("json_keys", document.copy())

    def each_element(self, document: exp.Expr, path: Path, body: ElementBody) -> exp.Expr:
        array = function_call("json_extract", document.copy(), _TEXT(_pointer(path)))
        elements = function_call("json_extract", array, _TEXT("$[*]"))
        element, index = exp.to_identifier("element"), exp.to_identifier("position")
        each = exp.Lambda(this=body(exp.column(element), exp.column(index)), expressions=[element, index])
        return exp.func("list_transform", elements, each)

    def element_at(self, values: exp.Expr, position: exp.Expr) -> exp.Expr:
        return exp.func("list_extract", values.copy(), position)

    def field_of(self, value: exp.Expr, name: str) -> exp.Expr:
        return exp.func("struct_extract", value.copy(), _TEXT(name))

    def struct(self, fields: Sequence[tuple[str, exp.Expr]]) -> exp.Expr:
        return exp.func(
            "struct_pack", *[exp.PropertyEQ(this=exp.to_identifier(name), expression=value) for name, value in fields]
        )

    def every(self, values: exp.Expr) -> exp.Expr:
        return exp.func("list_bool_and", values)

    def nested_text(self, text: exp.Expr, nested: Callable[[], exp.Expr]) -> exp.Expr:
        """DuckDB writes a control character's escape in upper-case hex and U+2028, U+2029 unescaped: an object's or
        array's text holding one is written again, string by string (only such a text's kind is read)."""
        escaped = _duckdb(json_text_escaped("__text"), text=text)
        rewritten = exp.and_(self.matches(text, DUCKDB_OTHERWISE_ESCAPED), nested())
        return exp.Case().when(rewritten, escaped).else_(text.copy())

    def mapped(self, values: exp.Expr, body: Callable[[exp.Expr], exp.Expr]) -> exp.Expr:
        value = exp.to_identifier("value")
        return exp.func("list_transform", values.copy(), exp.Lambda(this=body(exp.column(value)), expressions=[value]))

    def extract_all(self, text: exp.Expr, pattern: str) -> exp.Expr:
        return function_call("regexp_extract_all", text.copy(), _TEXT(pattern))

    def nesting_depth(self, brackets: exp.Expr) -> exp.Expr:
        return _duckdb(_DUCKDB_NESTING_DEPTH, brackets=brackets)

    def length(self, values: exp.Expr) -> exp.Expr:
        return function_call("len", values.copy())

    def distinct(self, values: exp.Expr) -> exp.Expr:
        return function_call("list_distinct", values.copy())

    def distinct_among(self, values: exp.Expr, allowed: exp.Expr) -> exp.Expr:
        return function_call("list_intersect", values.copy(), allowed.copy())

    def same_list(self, values: exp.Expr, other: exp.Expr) -> exp.Expr | None:
        return exp.EQ(this=values.copy(), expression=other.copy())

    def not_among(self, values: exp.Expr, allowed: exp.Expr) -> exp.Expr:
        key = exp.to_identifier("key")
        return function_call(
            "list_filter",
            values.copy(),
            exp.Lambda(
                this=exp.not_(function_call("list_contains", allowed.copy(), exp.column(key))), expressions=[key]
            ),
        )

    def join_present(self, separator: str, texts: Sequence[exp.Expr]) -> exp.Expr:
        return function_call("concat_ws", _TEXT(separator), *texts)

    def present(self, texts: Sequence[exp.Expr]) -> exp.Expr:
        x = exp.to_identifier("x")
        given = exp.not_(exp.Is(this=exp.column(x), expression=exp.null()))
        return function_call("list_filter", exp.Array(expressions=list(texts)), exp.Lambda(this=given, expressions=[x]))

    def concat(self, first: exp.Expr, second: exp.Expr) -> exp.Expr:
        return function_call("list_concat", first.copy(), second.copy())

    def no_texts(self) -> exp.Expr:
        return exp.cast(exp.Array(expressions=[]), exp.DataType.build("VARCHAR[]", dialect="duckdb"))

    def matches(self, text: exp.Expr, pattern: str) -> exp.Expr:
        return exp.RegexpLike(this=text.copy(), expression=_TEXT(pattern))

    def quote(self, name: str) -> str:
        return duckdb_quote(name)

    def literal(self, text: str) -> str:
        return duckdb_literal(text)

    def to_bytes(self, text: str) -> str:
        return f"encode({text})"

    def regexp_group(self, text: exp.Expr, pattern: str, number: int) -> exp.Expr:
        return function_call("regexp_extract", text.copy(), _TEXT(pattern), exp.Literal.number(number))

    def lsn_number(self, high: exp.Expr, low: exp.Expr) -> exp.Expr:
        def unsigned(half: exp.Expr) -> exp.Expr:
            return exp.cast(
                exp.DPipe(this=_TEXT("0x"), expression=half), exp.DataType.build("UBIGINT", dialect="duckdb")
            )

        number = exp.BitwiseOr(
            this=exp.BitwiseLeftShift(this=unsigned(high), expression=exp.Literal.number(32)), expression=unsigned(low)
        )
        return exp.cast(number, "VARCHAR")

    def string_list(self, text: exp.Expr) -> exp.Expr:
        """A JSON array none of whose elements has a JSON type other than VARCHAR."""
        as_json = exp.cast(text.copy(), exp.DataType.build("JSON", dialect="duckdb"))
        x = exp.to_identifier("x")
        not_text = exp.NEQ(this=function_call("json_type", exp.column(x)), expression=_TEXT("VARCHAR"))
        others = function_call(
            "list_filter",
            function_call("json_extract", as_json, _TEXT("$[*]")),
            exp.Lambda(this=not_text, expressions=[x]),
        )
        is_list = exp.and_(
            function_call("json_valid", text.copy()),
            exp.EQ(this=function_call("json_type", as_json.copy()), expression=_TEXT("ARRAY")),
            exp.EQ(this=function_call("len", others), expression=exp.Literal.number(0)),
        )
        return exp.Case().when(is_list, exp.cast(as_json.copy(), exp.DataType.build("VARCHAR[]", dialect="duckdb")))

    def replace_all(self, text: exp.Expr, pattern: str, replacement: str) -> exp.Expr:
        return exp.RegexpReplace(
            this=text.copy(), expression=_TEXT(pattern), replacement=_TEXT(replacement), modifiers=_TEXT("g")
        )

    def try_cast(self, text: exp.Expr, bq_type: Scalar) -> exp.Expr:
        return exp.TryCast(this=text.copy(), to=exp.DataType.build(duckdb_type(bq_type), dialect="duckdb"))

    def from_base64(self, text: exp.Expr) -> exp.Expr:
        return exp.func("from_base64", text.copy())

    def json_document(self, text: exp.Expr) -> exp.Expr:
        return text.copy()

    def one_json_value(self, text: exp.Expr) -> exp.Expr:
        """Wrapped in brackets, the text is an array of exactly one element."""
        wrapped = exp.DPipe(this=exp.DPipe(this=_TEXT("["), expression=text.copy()), expression=_TEXT("]"))
        valid = exp.Case().when(function_call("json_valid", wrapped), wrapped.copy())
        return exp.EQ(this=function_call("json_array_length", valid), expression=exp.Literal.number(1))

    def from_text(self, bq_type: Scalar, text: exp.Expr) -> exp.Expr:
        return text.copy()

    def exact_decimals(self, record: exp.Expr, path: Path, structure: object) -> exp.Expr | None:
        for key in reversed(path):
            structure = {key: structure}
        value = function_call("json_transform", record.copy(), _TEXT(json.dumps(structure)))
        for key in path:
            value = exp.func("struct_extract", value, _TEXT(key))
        return value


#: One token of a JSON text for BigQuery's keys: a string (a key when a colon follows it) or a bracket.
_JSON_TOKEN = r'("(?:[^"\\]|\\.)*"\s*:?|[{}\[\]])'
#: A TIMESTAMP's zone written without its colon (-0530), which BigQuery's cast does not read.
_ZONE_WITHOUT_COLON = r"([+-][0-9]{2})([0-9]{2})$"
#: An object's keys from its tokens (_JSON_TOKEN): those at depth 1 that a colon follows, unescaped, in order.
_KEYS = """ARRAY(SELECT JSON_VALUE(RTRIM(RTRIM(token, ':')), '$') FROM (
  SELECT token, position, SUM(CASE WHEN token IN ('{', '[') THEN 1 WHEN token IN ('}', ']') THEN -1 ELSE 0 END)
    OVER (ORDER BY position ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS depth
  FROM UNNEST(REGEXP_EXTRACT_ALL(__document, __pattern)) AS token WITH OFFSET AS position)
WHERE depth = 1 AND ENDS_WITH(token, ':') ORDER BY position)"""
_BIGQUERY_LSN = """CAST(CAST(CAST(CONCAT('0x', __high) AS INT64) AS BIGNUMERIC) * 4294967296
  + CAST(CONCAT('0x', __low) AS INT64) AS STRING)"""
#: A JSON list whose every element is a string, as an ARRAY<STRING> (BigQuery: its elements' JSON texts start
#: with a quote; DuckDB: their JSON type is VARCHAR).
_BIGQUERY_STRING_LIST = """IF(STARTS_WITH(LTRIM(__text), '[') AND __valid
    AND (SELECT LOGICAL_AND(STARTS_WITH(element, '"')) FROM UNNEST(JSON_QUERY_ARRAY(__text)) AS element) IS NOT FALSE,
  ARRAY(SELECT JSON_VALUE(element) FROM UNNEST(JSON_QUERY_ARRAY(__text)) AS element WITH OFFSET AS position
    ORDER BY position), NULL)"""
#: The elements of the array at __path (none when the value there is not an array: JSON_QUERY_ARRAY is given
#: NULL then, so a lenient engine that reads every row's elements, whatever CASE guards them, reads none).
_EACH_ELEMENT = """ARRAY(SELECT __body FROM UNNEST(JSON_QUERY_ARRAY(IF(__array, __value, NULL), '$')) AS element
  WITH OFFSET AS position ORDER BY position)"""
#: The deepest nesting of a text of brackets: the running count of opening brackets less closing ones, at its most,
#: counted over its runs of opening and of closing brackets (a line nested 1,000 deep is two runs).
_BIGQUERY_NESTING_DEPTH = r"""(SELECT MAX(depth) FROM (
  SELECT SUM(IF(REGEXP_CONTAINS(run, r'^[\[{]'), 1, -1) * LENGTH(run)) OVER (ORDER BY position) AS depth
  FROM UNNEST(REGEXP_EXTRACT_ALL(__brackets, r'[\[{]+|[\]}]+')) AS run WITH OFFSET AS position))"""
#: DuckDB: the same count folded over the runs in one pass (list_reduce), with no subquery to join to every row.
_DUCKDB_NESTING_DEPTH = r"""list_reduce(
  list_transform(regexp_extract_all(__brackets, '[\[{]+|[\]}]+'),
    lambda run: CASE WHEN run[1] IN ('[', '{') THEN length(run) ELSE -length(run) END),
  lambda reached, step: {'depth': reached.depth + step, 'most': greatest(reached.most, reached.depth + step)},
  {'depth': 0, 'most': 0}).most"""
_DECIMALS = ("NUMERIC", "BIGNUMERIC")
_BIGNUMERIC_SCALE = 38
#: A text as a decimal of scale __scale whose integer part has at most __digits digits, cast to its type __type.
#: The digits are counted in the decimal's text, not compared with 10^__digits: a literal that large is a
#: BIGNUMERIC that a lesser engine cannot hold.  Rounded once: the text is cut (__cut, __kept) one digit past
#: the scale first, since BIGNUMERIC would round a longer one at 38 places before ROUND rounds it to the scale
#: (0.1244999...9 of 40 places to 0.1245, then 0.125); half away from zero depends on that one digit only.  A
#: text with an exponent is read whole (exact while its digits reach at most 38 places).
_DECIMAL = """(SELECT IF(LENGTH(LTRIM(REGEXP_EXTRACT(CAST(ABS(rounded) AS STRING), r'^[0-9]*'), '0')) <= __digits,
    CAST(rounded AS __type), NULL)
  FROM UNNEST([ROUND(SAFE_CAST(REGEXP_REPLACE(__text, __cut, __kept) AS BIGNUMERIC), __scale)]) AS rounded)"""


class BigQueryDialect(LoadDialect):
    """GoogleSQL over JSON-formatted STRINGs (JSONPath with every key quoted), SAFE_ functions and ARRAY
    subqueries over UNNEST."""

    name = "bigquery"
    exact_number_text = True
    arrays_hold_null = False

    def extract(self, document: exp.Expr, path: Path) -> exp.Expr:
        return function_call("JSON_QUERY", document.copy(), _TEXT(_json_path(path)))

    def value_text(self, document: exp.Expr, path: Path) -> exp.Expr:
        """JSON_VALUE reads a scalar (NULL for an object or array), JSON_QUERY an object's or array's text
        ('null' for JSON null)."""
        return exp.func(
            "COALESCE",
            function_call("JSON_VALUE", document.copy(), _TEXT(_json_path(path))),
            exp.Nullif(this=self.extract(document, path), expression=_TEXT("null")),
        )

    def column_texts(self, data: exp.Expr, names: Sequence[str]) -> tuple[exp.Expr | None, list[exp.Expr]]:
        return None, [self.value_text(data, (name,)) for name in names]

    def kind_is(self, document: exp.Expr, path: Path, kind: str) -> exp.Expr:
        return self._starts(self.extract(document, path), kind)

    def kind(self, document: exp.Expr) -> exp.Expr:
        return exp.Case().when(self._starts(document, "OBJECT"), _TEXT("OBJECT"))

    @staticmethod
    def _starts(text: exp.Expr, kind: str) -> exp.Expr:
        bracket = {"OBJECT": "{", "ARRAY": "[", "STRING": '"'}[kind]
        return function_call("STARTS_WITH", function_call("LTRIM", text.copy()), _TEXT(bracket))

    def keys(self, document: exp.Expr) -> exp.Expr:
        """The tokens of the object's text (strings and brackets, so no bracket inside a string counts), each
        with the depth before it: the keys at depth 1, unescaped, in the order written."""
        return _bigquery(_KEYS, document=document, pattern=_TEXT(_JSON_TOKEN))

    def each_element(self, document: exp.Expr, path: Path, body: ElementBody) -> exp.Expr:
        return _bigquery(
            _EACH_ELEMENT,
            array=self.kind_is(document, path, "ARRAY"),
            value=self.extract(document, path),
            body=body(exp.column("element"), exp.column("position")),
        )

    def element_at(self, values: exp.Expr, position: exp.Expr) -> exp.Expr:
        return exp.Bracket(this=values.copy(), expressions=[function_call("SAFE_OFFSET", position)])

    def field_of(self, value: exp.Expr, name: str) -> exp.Expr:
        return exp.Dot(this=value.copy(), expression=exp.to_identifier(name, quoted=True))

    def struct(self, fields: Sequence[tuple[str, exp.Expr]]) -> exp.Expr:
        return exp.Struct(
            expressions=[exp.alias_(value, exp.to_identifier(name, quoted=True)) for name, value in fields]
        )

    def every(self, values: exp.Expr) -> exp.Expr:
        return _bigquery("(SELECT LOGICAL_AND(each) FROM UNNEST(__list) AS each)", list=values)

    def mapped(self, values: exp.Expr, body: Callable[[exp.Expr], exp.Expr]) -> exp.Expr:
        return _bigquery(
            "ARRAY(SELECT __body FROM UNNEST(__list) AS value WITH OFFSET AS position ORDER BY position)",
            list=values,
            body=body(exp.column("value")),
        )

    def extract_all(self, text: exp.Expr, pattern: str) -> exp.Expr:
        return function_call("REGEXP_EXTRACT_ALL", text.copy(), _TEXT(pattern))

    def nesting_depth(self, brackets: exp.Expr) -> exp.Expr:
        return _bigquery(_BIGQUERY_NESTING_DEPTH, brackets=brackets)

    def length(self, values: exp.Expr) -> exp.Expr:
        return function_call("ARRAY_LENGTH", values.copy())

    def distinct(self, values: exp.Expr) -> exp.Expr:
        return _bigquery("ARRAY(SELECT DISTINCT value FROM UNNEST(__list) AS value)", list=values)

    def distinct_among(self, values: exp.Expr, allowed: exp.Expr) -> exp.Expr:
        return _bigquery(
            "ARRAY(SELECT DISTINCT value FROM UNNEST(__list) AS value WHERE value IN UNNEST(__allowed))",
            list=values,
            allowed=allowed,
        )

    def not_among(self, values: exp.Expr, allowed: exp.Expr) -> exp.Expr:
        return _bigquery(
            "ARRAY(SELECT value FROM UNNEST(__list) AS value WITH OFFSET AS position "
            "WHERE value NOT IN UNNEST(__allowed) ORDER BY position)",
            list=values,
            allowed=allowed,
        )

    def quote(self, name: str) -> str:
        return quote_path(name)

    def literal(self, text: str) -> str:
        return string_literal(text)

    def to_bytes(self, text: str) -> str:
        return f"CAST({text} AS BYTES)"

    def regexp_group(self, text: exp.Expr, pattern: str, number: int) -> exp.Expr:
        """REGEXP_EXTRACT takes a pattern of one group: the whole text's match replaced by the group instead."""
        return exp.RegexpReplace(this=text.copy(), expression=_TEXT(pattern), replacement=_TEXT(f"\\{number}"))

    def lsn_number(self, high: exp.Expr, low: exp.Expr) -> exp.Expr:
        """Through BIGNUMERIC: INT64 is signed, and an LSN takes all 64 bits."""
        return _bigquery(_BIGQUERY_LSN, high=high, low=low)

    def string_list(self, text: exp.Expr) -> exp.Expr:
        return _bigquery(_BIGQUERY_STRING_LIST, text=text, valid=self.one_json_value(text))

    def join_present(self, separator: str, texts: Sequence[exp.Expr]) -> exp.Expr:
        """ARRAY_TO_STRING leaves NULL elements out."""
        return function_call("ARRAY_TO_STRING", exp.Array(expressions=list(texts)), _TEXT(separator))

    def present(self, texts: Sequence[exp.Expr]) -> exp.Expr:
        return _bigquery(
            "ARRAY(SELECT name FROM UNNEST(__list) AS name WITH OFFSET AS position WHERE name IS NOT NULL "
            "ORDER BY position)",
            list=exp.Array(expressions=list(texts)),
        )

    def concat(self, first: exp.Expr, second: exp.Expr) -> exp.Expr:
        return function_call("ARRAY_CONCAT", first.copy(), second.copy())

    def no_texts(self) -> exp.Expr:
        return exp.cast(exp.Array(expressions=[]), exp.DataType.build("ARRAY<STRING>", dialect="bigquery"))

    def replace_all(self, text: exp.Expr, pattern: str, replacement: str) -> exp.Expr:
        """REGEXP_REPLACE replaces every match."""
        return exp.RegexpReplace(this=text.copy(), expression=_TEXT(pattern), replacement=_TEXT(replacement))

    def try_cast(self, text: exp.Expr, bq_type: Scalar) -> exp.Expr:
        """SAFE_CAST to the column type; a zone written without its colon is given one, as DuckDB reads it."""
        if bq_type.name in _DECIMALS:
            return self._decimal(text, bq_type)
        if bq_type.name == "TIMESTAMP":
            text = exp.RegexpReplace(
                this=text.copy(), expression=_TEXT(_ZONE_WITHOUT_COLON), replacement=_TEXT(r"\1:\2")
            )
        return exp.TryCast(this=text.copy(), to=exp.DataType.build(bq_type.name, dialect="bigquery"))

    @staticmethod
    def _decimal(text: exp.Expr, bq_type: Scalar) -> exp.Expr:
        """A decimal rounded once to its scale (half away from zero, as DuckDB's cast to DECIMAL(p, s)), NULL when
        its integer digits are more than its precision leaves: through BIGNUMERIC, because SAFE_CAST to a
        parameterized NUMERIC fails the query on a value out of its range instead of giving NULL."""
        precision, scale = decimal_parameters(bq_type)
        places = min(scale, _BIGNUMERIC_SCALE) + 1
        return _bigquery(
            _DECIMAL.replace("__type", bq_type.name),
            text=text,
            cut=_TEXT(rf"^([+-]?[0-9]*\.?[0-9]{{0,{places}}})[0-9]*$"),
            kept=_TEXT("\\1"),
            scale=exp.Literal.number(min(scale, _BIGNUMERIC_SCALE)),
            digits=exp.Literal.number(precision - scale),
        )

    def from_base64(self, text: exp.Expr) -> exp.Expr:
        return function_call("SAFE.FROM_BASE64", text.copy())

    def json_document(self, text: exp.Expr) -> exp.Expr:
        """A JSON column holds numbers as doubles: wide_number_mode 'round' rounds a wider one (its default,
        'exact', fails the statement on it)."""
        return function_call(
            "SAFE.PARSE_JSON",
            text.copy(),
            exp.Kwarg(this=exp.var("wide_number_mode"), expression=_TEXT("round")),
        )

    def one_json_value(self, text: exp.Expr) -> exp.Expr:
        return exp.not_(exp.Is(this=self.json_document(text), expression=exp.null()))

    def from_text(self, bq_type: Scalar, text: exp.Expr) -> exp.Expr:
        """A GEOGRAPHY column holds only a geography, a TIME only a time: text BigQuery cannot read as one
        does not fit."""
        if bq_type.name == "GEOGRAPHY":
            return function_call("SAFE.ST_GEOGFROMTEXT", text.copy())
        if bq_type.name == "TIME":
            return self.try_cast(text, bq_type)
        if bq_type.name in _DECIMALS:  # wider than a decimal's 38 digits: the guard has checked its digits
            return exp.TryCast(this=text.copy(), to=exp.DataType.build("BIGNUMERIC", dialect="bigquery"))
        return text.copy()


@cache
def _parsed(template: str, dialect: str = "bigquery") -> exp.Expr:
    return sqlglot.parse_one(template, read=dialect)


def _put(parts: dict[str, exp.Expr], node: exp.Expr) -> exp.Expr:
    if isinstance(node, exp.Column) and not node.table and node.name.startswith("__"):
        return parts[node.name[2:]].copy()
    return node


def _bigquery(template: str, **parts: exp.Expr) -> exp.Expr:
    """The BigQuery expression `template` with each placeholder column `__name` replaced by `parts[name]`."""
    return _parsed(template).copy().transform(partial(_put, parts))


def _duckdb(template: str, **parts: exp.Expr) -> exp.Expr:
    """The DuckDB expression `template` with each placeholder column `__name` replaced by `parts[name]`."""
    return _parsed(template, "duckdb").copy().transform(partial(_put, parts))


def _pointer(path: Path) -> str:
    return "".join("/" + key.replace("~", "~0").replace("/", "~1") for key in path)


def _json_path(path: Path) -> str:
    """A JSONPath with every key quoted (so any key but one holding a double quote is addressed exactly)."""
    return "$" + "".join('."' + key.replace("\\", "\\\\").replace('"', '\\"') + '"' for key in path)


DUCKDB: LoadDialect = DuckDBDialect()
BIGQUERY: LoadDialect = BigQueryDialect()
