"""The sink's type rules as SQL: a record's `data` read, typed and judged in the warehouse's load step.

One definition of each rule, with the guards of uniview.sink.value_patterns and the quarantine reasons and
details, built as sqlglot expressions with the constructs of uniview.sink.load_dialect, which renders them
for DuckDB (the default) or BigQuery: `typed_column(data_of(line), "id", INT64, line).value.sql("duckdb")`,
or with `dialect=BIGQUERY` and `.sql("bigquery")`.  Both warehouses' load steps type with them, so a record
lands, or is quarantined, the same way on either.

| BigQuery type            | JSON value accepted                                               |
|--------------------------|-------------------------------------------------------------------|
| INT64                    | integer number or string of digits, in range                      |
| FLOAT64                  | number or numeric string that is a finite double; "NaN", "Infinity", "-Infinity" |
| NUMERIC/BIGNUMERIC       | number or numeric string, rounded once (half away from zero) to the scale, within the digits |
| BOOL                     | true/false, "true"/"false", the integers 0 and 1                  |
| STRING                   | any value (non-strings as their JSON text)                        |
| BYTES                    | base64 string (a JSON string: not a number or true)               |
| DATE                     | "YYYY-MM-DD", 0001-01-01 to 9999-12-31                            |
| DATETIME                 | "YYYY-MM-DD HH:MM:SS[.ffffff]" (or with "T"), years 0001-9999     |
| TIMESTAMP                | as DATETIME, optional "Z" or "+HH:MM" within ±14:00 (default UTC), within 0001-01-01 00:00:00 to 9999-12-31 23:59:59.999999 UTC |
| TIME                     | "HH:MM:SS[.ffffff]" within 00:00:00-23:59:59.999999               |
| JSON                     | a JSON document, inline or as a string                            |
| GEOGRAPHY                | WKT text (on BigQuery: text BigQuery reads as a geography)        |
| STRUCT / ARRAY           | an object / array whose every field / element fits (on BigQuery: no NULL element, which its arrays cannot hold) |

- A value's *text* is its JSON value's text: a string unescaped, a number, true or false as written out, an
  object or array as its JSON text, NULL for JSON null and for a key that is absent.
- Scalars are typed from that text behind their guard.  Where the warehouse's text of a JSON number has
  been through a double (DuckDB), every decimal is parsed from the record itself, at any depth, so a JSON
  number keeps every digit and is rounded once.
- STRUCT and ARRAY apply the top-level rules field by field and element by element: a nested value
  fits when it is an object (an array) and every field (element) in it fits; keys of a nested object
  that its type does not name are ignored.
- A column whose text is not NULL but whose value does not fit is a *misfit*, and `data_verdict`
  gives a record's reason and detail: data missing or not an object, a key named twice, unknown
  keys, misfits.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from sqlglot import exp

from uniview.core.errors import TypeParseError
from uniview.core.types import DEFAULT_DECIMAL_PARAMETERS, Array, BQType, Scalar, Struct, decimal_parameters
from uniview.sink import reasons
from uniview.sink import value_patterns as patterns
from uniview.sink.json_limits import strings_blanked, within_limits
from uniview.sink.load_dialect import DUCKDB, LoadDialect, Path, function_call
from uniview.sink.routing import LandingColumn

__all__ = [
    "DataObject",
    "Path",
    "TypedColumn",
    "Verdict",
    "computed",
    "data_object",
    "data_of",
    "data_verdict",
    "fits",
    "function_call",
    "trailing_comma",
    "typed_column",
    "typed_json",
    "typed_value",
    "value_text",
    "value_texts",
]

#: Scalars landed from their text once it passes its guard (NULL: any text).
_TEXT_GUARDS = {"STRING": None, "GEOGRAPHY": None, "TIME": patterns.TIME}
#: Scalars cast from their text to their column type behind a guard: {type: pattern or None}.
_CAST_GUARDS = {
    "INT64": patterns.INTEGER,
    "DATE": patterns.DATE,
    "DATETIME": patterns.DATETIME,
}

#: What is left outside strings that strict JSON refuses (letters other than an exponent's e, which only NaN and
#: Infinity bring; a comma before a closing bracket).
_TRAILING_COMMA = r",\s*[\]}]"
_LENIENT_JSON = r"[A-DF-Za-df-z]|" + _TRAILING_COMMA


@dataclass(frozen=True)
class TypedColumn:
    """One column of a record: its `text`, its landing `value` (NULL when it does not fit), whether it `fits`."""

    text: exp.Expr
    value: exp.Expr
    fits: exp.Expr

    @property
    def misfit(self) -> exp.Expr:
        """A value that is there but does not fit its type."""
        return exp.not_(self.fits.copy())


def data_of(line: exp.Expr, path: Path = ("data",), dialect: LoadDialect = DUCKDB) -> exp.Expr:
    """The data object of a record `line` as JSON text.  A query computes it once per row, and the values,
    kind and keys are read from it rather than from the whole line (which also holds the metadata)."""
    return dialect.extract(line, path)


def typed_column(
    data: exp.Expr,
    name: str,
    bq_type: BQType,
    line: exp.Expr,
    data_path: Path = ("data",),
    text: exp.Expr | None = None,
    dialect: LoadDialect = DUCKDB,
    exact_record: exp.Expr | None = None,
) -> TypedColumn:
    """The column `name` of the data object `data` (data_of), typed as `bq_type`.  Decimals are read from the
    record `line` itself, where `data` is at `data_path`, when the dialect's
    number text has been through a double.  `text`: the value's text when the query has it already
    (value_texts reads many columns' texts in one parse); `exact_record`: the record's exact decimals when the
    query has them already (exact_data's struct, which holds this column's)."""
    exact: exp.Expr | None
    if exact_record is not None and _structure(bq_type) is not None:
        exact = dialect.field_of(exact_record, name)
    else:
        exact = _exact_values(dialect, line, (*data_path, name), bq_type)
    at = _At(dialect, data, (name,), exact, text)
    return TypedColumn(at.text(), typed_value(at, bq_type), fits(at, bq_type))


def exact_data(line: exp.Expr, columns: Sequence[LandingColumn], dialect: LoadDialect = DUCKDB) -> exp.Expr | None:
    """The exact decimals of every column of the record `line`'s data that holds any, read in one parse of the
    line (a struct of those columns, for typed_column's `exact_record`); None when the dialect's number text is
    exact, when no column holds a decimal, or when two names differ only in case (a struct's field names do not)."""
    structures = {column.name: _structure(column.bq_type) for column in columns}
    wanted = {name: structure for name, structure in structures.items() if structure is not None}
    if dialect.exact_number_text or not wanted or len({name.lower() for name in structures}) < len(structures):
        return None
    return dialect.exact_decimals(line, ("data",), wanted)


def typed_json(value: exp.Expr, bq_type: BQType, dialect: LoadDialect = DUCKDB) -> TypedColumn:
    """One JSON value on its own (`value`: its JSON text, e.g. a declared DEFAULT's) typed as `bq_type` by the same
    rules as a record's column: its `value` is NULL, and `fits` FALSE, when it does not fit."""
    document = exp.DPipe(
        this=exp.DPipe(this=exp.Literal.string('{"v": '), expression=value), expression=exp.Literal.string("}")
    )
    return typed_column(document, "v", bq_type, document, data_path=(), dialect=dialect)


def computed(
    column: TypedColumn, bq_type: BQType, text: exp.Expr, value: exp.Expr, fitting: exp.Expr | None = None
) -> TypedColumn:
    """`column` as a query that has computed its text and value as the columns `text` and `value` reads it:
    a scalar fits when its value is there wherever its text is; a STRUCT or ARRAY still checks its fields,
    unless the query computed whether it fits too (`fitting`)."""
    if isinstance(bq_type, (Array, Struct)):
        return TypedColumn(text, value, column.fits if fitting is None else fitting)
    return TypedColumn(text, value, _scalar_fits(text, value))


def value_texts(
    data: exp.Expr, names: Sequence[str], dialect: LoadDialect = DUCKDB
) -> tuple[exp.Expr | None, list[exp.Expr]]:
    """The texts of the columns `names` of `data`: a list the query computes once as its column `texts`
    (None when the dialect reads each on its own), and each column's text."""
    return dialect.column_texts(data, names)


@dataclass(frozen=True)
class DataObject:
    """What a verdict reads from a record's data object: its JSON `kind` (OBJECT when it is one) and its
    `keys` in the order written.  A query may compute both once per row and judge from the computed
    columns: DataObject(exp.column("kind"), exp.column("keys"))."""

    kind: exp.Expr
    keys: exp.Expr


def data_object(data: exp.Expr, dialect: LoadDialect = DUCKDB) -> DataObject:
    """The kind and keys of `data` (data_of)."""
    return DataObject(dialect.kind(data), dialect.keys(data))


@dataclass(frozen=True)
class Verdict:
    """Why a record cannot be written (`reason`, `detail`; both NULL when it can), in the order the
    quarantine documents: data missing or not an object, a key named twice, keys the schema does not
    have, values that do not fit (named in the schema's order)."""

    reason: exp.Expr
    detail: exp.Expr


def data_verdict(
    data: DataObject,
    columns: Sequence[LandingColumn],
    typed: Sequence[TypedColumn],
    reason: exp.Expr | None = None,
    dialect: LoadDialect = DUCKDB,
) -> Verdict:
    """The verdict on a record's `data`, whose `columns` are typed as `typed`.  `reason`: the column a query
    computed the verdict's reason in; the detail then reads it, so a row that can be written is judged once."""
    is_object = exp.func(
        "coalesce", exp.EQ(this=data.kind.copy(), expression=exp.Literal.string("OBJECT")), exp.false()
    )
    keys = data.keys
    names = exp.Array(expressions=[exp.Literal.string(column.name) for column in columns])
    # each key once: fewer than the keys means a key the schema does not have, or a repeated one
    odd: exp.Expr = exp.NEQ(this=dialect.length(keys), expression=dialect.length(dialect.distinct_among(keys, names)))
    as_declared = dialect.same_list(keys, names)
    if as_declared is not None and len({column.name for column in columns}) == len(columns):
        # a record usually names every column once, in the schema's order: judged so without building a set
        odd = exp.Case().when(exp.func("coalesce", as_declared, exp.false()), exp.false()).else_(odd)
    repeated = exp.NEQ(this=dialect.length(keys), expression=dialect.length(dialect.distinct(keys)))
    unknown = dialect.not_among(keys, names)
    misfits = [column.misfit for column in typed]
    labels = [_when(misfit, exp.Literal.string(column.label)) for misfit, column in zip(misfits, columns, strict=True)]
    any_misfit = exp.or_(*misfits) if misfits else exp.false()  # or_ copies them
    text = exp.Literal.string
    judged = (
        exp.Case()
        .when(exp.not_(is_object), text(reasons.INVALID_DATA))
        .when(odd, exp.Case().when(repeated, text(reasons.INVALID_DATA)).else_(text(reasons.UNKNOWN_COLUMN)))
        .when(any_misfit, text(reasons.TYPE_MISMATCH), copy=False)  # built here, used once
    )
    given = judged if reason is None else reason

    def is_reason(name: str) -> exp.Expr:
        return exp.EQ(this=given.copy(), expression=text(name))

    detail = (
        exp.Case()
        .when(
            is_reason(reasons.INVALID_DATA),
            exp.Case().when(is_object.copy(), text(reasons.REPEATED_KEY)).else_(text(reasons.DATA_NOT_AN_OBJECT)),
            copy=False,
        )
        .when(
            is_reason(reasons.UNKNOWN_COLUMN),
            exp.DPipe(this=text(reasons.UNKNOWN_KEYS), expression=dialect.join(unknown, ", ")),
            copy=False,
        )
        .when(
            is_reason(reasons.TYPE_MISMATCH),
            exp.DPipe(this=text(reasons.MISFITS), expression=dialect.join_present(", ", labels)),
            copy=False,
        )
    )
    return Verdict(judged, detail)


def value_text(document: exp.Expr, path: Path, dialect: LoadDialect = DUCKDB) -> exp.Expr:
    """The text of the value at `path` in `document` (any key is addressed exactly)."""
    return dialect.value_text(document, path)


@dataclass(frozen=True)
class _At:
    """A value's place: the JSON `document` it is in and its `path` there, and `exact`, the same value
    parsed with its type's exact decimals when it holds any and the dialect's number text is not exact (every
    decimal is then read from there instead)."""

    dialect: LoadDialect
    document: exp.Expr
    path: Path
    exact: exp.Expr | None = None
    given_text: exp.Expr | None = None

    def text(self) -> exp.Expr:
        return self.dialect.value_text(self.document, self.path) if self.given_text is None else self.given_text.copy()

    def kind_is(self, kind: str) -> exp.Expr:
        """The value is a JSON OBJECT or ARRAY (a string holding JSON text is neither)."""
        return self.dialect.kind_is(self.document, self.path, kind)

    def field(self, name: str) -> _At:
        exact = None if self.exact is None else self.dialect.field_of(self.exact, name)
        return _At(self.dialect, self.document, (*self.path, name), exact)

    def each_element(self, body: Callable[[_At], exp.Expr]) -> exp.Expr:
        """The list of `body(element's _At)` over the array's elements."""

        def each(element: exp.Expr, position: exp.Expr) -> exp.Expr:
            exact = None if self.exact is None else self.dialect.element_at(self.exact, position)
            return body(_At(self.dialect, element, (), exact))

        return self.dialect.each_element(self.document, self.path, each)


def typed_value(at: _At, bq_type: BQType) -> exp.Expr:
    """The landing value at `at` as `bq_type`; NULL when it does not fit."""
    if isinstance(bq_type, Struct):
        fields = [(item.name, typed_value(at.field(item.name), item.type)) for item in bq_type.fields]
        return _when(at.kind_is("OBJECT"), at.dialect.struct(fields))
    if isinstance(bq_type, Array):
        return _when(at.kind_is("ARRAY"), at.each_element(lambda element: typed_value(element, bq_type.element)))
    if not isinstance(bq_type, Scalar):
        raise TypeParseError(f"{bq_type} cannot be landed by the sink")
    if patterns.parsed_decimal(bq_type) is not None:
        exact = patterns.read_from_line(bq_type) and not at.dialect.exact_number_text
        assert not exact or at.exact is not None, "_exact_values reads every decimal read from the line"
        value = at.dialect.try_cast(at.exact if exact and at.exact is not None else at.text(), bq_type)
        return _when(_decimal_text(at), value)
    if bq_type.name == "STRING":  # an object or array as GoogleSQL writes its JSON text, on either warehouse
        return at.dialect.nested_text(at.text(), lambda: exp.or_(at.kind_is("OBJECT"), at.kind_is("ARRAY")))
    if bq_type.name == "BYTES":  # base64 text: a number or true is not one, whatever its digits
        return _when(at.kind_is("STRING"), _typed_scalar(at.dialect, bq_type, at.text()))
    return _typed_scalar(at.dialect, bq_type, at.text())


def fits(at: _At, bq_type: BQType) -> exp.Expr:
    """TRUE when the value at `at` is absent, JSON null, or fits `bq_type` (a STRUCT or ARRAY when every
    field and element in it fits)."""
    return exp.or_(exp.Is(this=at.text(), expression=exp.null()), _present_fits(at, bq_type))


def _present_fits(at: _At, bq_type: BQType) -> exp.Expr:
    """TRUE when the value at `at`, which is there, fits `bq_type`."""
    if isinstance(bq_type, Struct):
        return exp.and_(at.kind_is("OBJECT"), *[fits(at.field(item.name), item.type) for item in bq_type.fields])
    if isinstance(bq_type, Array):
        each = at.each_element(lambda element: _element_fits(element, bq_type.element))
        every = exp.func("coalesce", at.dialect.every(each), exp.true())
        # a CASE, not AND: the elements are only read from a value that is an array
        return exp.Case().when(at.kind_is("ARRAY"), every).else_(exp.false())
    return exp.not_(exp.Is(this=typed_value(at, bq_type), expression=exp.null()))


def _element_fits(element: _At, bq_type: BQType) -> exp.Expr:
    """An array's element fits as a value does; where arrays cannot hold NULL (BigQuery), a JSON null element
    does not."""
    if element.dialect.arrays_hold_null:
        return fits(element, bq_type)
    return exp.and_(exp.not_(exp.Is(this=element.text(), expression=exp.null())), _present_fits(element, bq_type))


def _scalar_fits(text: exp.Expr, value: exp.Expr) -> exp.Expr:
    """A scalar fits when its value is there wherever its text is."""
    return exp.or_(
        exp.Is(this=text.copy(), expression=exp.null()), exp.not_(exp.Is(this=value.copy(), expression=exp.null()))
    )


def _exact_values(dialect: LoadDialect, record: exp.Expr, path: Path, bq_type: BQType) -> exp.Expr | None:
    """The value at `path` parsed with the exact decimals in `bq_type` (None when it has none, or when the
    dialect's number text is exact)."""
    if dialect.exact_number_text:
        return None
    structure = _structure(bq_type)
    return None if structure is None else dialect.exact_decimals(record, path, structure)


def _structure(bq_type: BQType) -> object | None:
    """json_transform's structure for the exact decimals in `bq_type` (other values left out), or None."""
    if isinstance(bq_type, Struct):
        fields = {item.name: _structure(item.type) for item in bq_type.fields}
        fields = {name: inner for name, inner in fields.items() if inner is not None}
        return fields or None
    if isinstance(bq_type, Array):
        inner = _structure(bq_type.element)
        return None if inner is None else [inner]
    if isinstance(bq_type, Scalar) and patterns.read_from_line(bq_type):
        _, scale = decimal_parameters(bq_type)
        # parsed at the widest precision and narrowed after: DuckDB refuses "100000000E-3" as a DECIMAL(10, 2)
        return f"DECIMAL({patterns.MAX_DECIMAL_PRECISION},{scale})"
    return None


def _typed_scalar(dialect: LoadDialect, bq_type: Scalar, text: exp.Expr) -> exp.Expr:
    name = bq_type.name
    if name in DEFAULT_DECIMAL_PARAMETERS:
        if patterns.parsed_decimal(bq_type) is None:  # wider than any decimal the warehouse parses: landed as text
            return _wide_decimal(dialect, bq_type, text)
        raise TypeParseError(f"{bq_type} is typed by typed_value")
    if name == "BYTES":
        return _guarded(dialect, text, patterns.BASE64, dialect.from_base64(text))
    if name == "BOOL":
        return _boolean(dialect, text)
    if name == "FLOAT64":
        return _float(dialect, text)
    if name == "TIMESTAMP":
        return _in_range(dialect, _guarded(dialect, text, patterns.TIMESTAMP, dialect.try_cast(text, bq_type)))
    if name == "JSON":
        document = _when(_single_json_value(dialect, text), dialect.json_document(text))
        return _when(within_limits(text, dialect), document)  # no JSON function meets a text past the limits
    if name in _TEXT_GUARDS:
        pattern = _TEXT_GUARDS[name]
        value = dialect.from_text(bq_type, text)
        return value if pattern is None else _guarded(dialect, text, pattern, value)
    if name not in _CAST_GUARDS:
        raise TypeParseError(f"{bq_type} cannot be landed by the sink")
    pattern = _CAST_GUARDS[name]
    cast = dialect.try_cast(text, bq_type)
    return cast if pattern is None else _guarded(dialect, text, pattern, cast)


def _wide_decimal(dialect: LoadDialect, bq_type: Scalar, text: exp.Expr) -> exp.Expr:
    """A decimal wider than the warehouse parses, landed from its text: plain digits within its type (the guard),
    or a number written with an exponent whose value has at most p - s integer digits and s fraction digits
    (`0E-30`, `-1E-30`: how Python's and Java's decimals write a value under 10^-6), counted from the text, so
    both warehouses decide alike whatever their arithmetic."""
    value = dialect.from_text(bq_type, text)
    plain = dialect.matches(text, patterns.wide_decimal(bq_type))
    return exp.Case().when(plain, value).when(_exponent_fits(dialect, bq_type, text), value.copy())


def _exponent_fits(dialect: LoadDialect, bq_type: Scalar, text: exp.Expr) -> exp.Expr:
    """`text` is a number written with an exponent whose value fits `bq_type`: its digits without leading and
    trailing zeros (`significant`) times 10^`shift` have at most s fraction digits and p - s integer ones."""
    integer_digits, scale = patterns.wide_decimal_digits(bq_type)
    integer, fraction, written_exponent = (dialect.regexp_group(text, patterns.EXPONENT_NUMBER, n) for n in (1, 2, 3))
    digits = dialect.replace_all(exp.DPipe(this=integer, expression=fraction), "^0+", "")
    significant = dialect.replace_all(digits, "0+$", "")
    trailing_zeros = exp.Sub(this=exp.Length(this=digits), expression=exp.Length(this=significant.copy()))
    exponent = dialect.try_cast(written_exponent, Scalar("INT64"))
    shift = exp.Add(this=exp.Sub(this=exponent, expression=exp.Length(this=fraction.copy())), expression=trailing_zeros)
    within = exp.and_(
        exp.GTE(this=shift, expression=exp.Literal.number(-scale)),
        exp.LTE(
            this=exp.Add(this=exp.Length(this=significant.copy()), expression=shift.copy()),
            expression=exp.Literal.number(integer_digits),
        ),
    )
    zero = exp.EQ(this=significant.copy(), expression=exp.Literal.string(""))
    written = exp.and_(
        dialect.matches(text, patterns.EXPONENT_NUMBER),
        dialect.matches(text, patterns.NUMBER),
        exp.not_(dialect.matches(text, patterns.LONG_EXPONENT_MANTISSA)),
    )
    return exp.and_(written, exp.or_(zero, within))


def _decimal_text(at: _At) -> exp.Expr:
    """A NUMBER; a JSON string written with an exponent only when at most 38 characters precede it (no source
    writes a longer one; DuckDB's cast cannot read one, GoogleSQL's can; a JSON number of any length is parsed
    exactly by both)."""
    text = at.text()
    long = exp.and_(at.kind_is("STRING"), at.dialect.matches(text, patterns.LONG_EXPONENT_MANTISSA))
    return exp.and_(at.dialect.matches(text, patterns.NUMBER), exp.not_(long))


def _float(dialect: LoadDialect, text: exp.Expr) -> exp.Expr:
    """FLOAT64: a NUMBER that is a finite double (1e400 is none), or NaN, Infinity, -Infinity as written."""
    cast = dialect.try_cast(text, Scalar("FLOAT64"))
    finite = exp.LTE(this=exp.Abs(this=cast.copy()), expression=exp.Literal.number(patterns.FLOAT_MAX))
    return (
        exp.Case()
        .when(dialect.matches(text, patterns.FLOAT_SPECIAL), cast.copy())
        .when(exp.and_(dialect.matches(text, patterns.NUMBER), finite), cast.copy())
    )


def _in_range(dialect: LoadDialect, timestamp: exp.Expr) -> exp.Expr:
    """A TIMESTAMP within BigQuery's range in UTC (an offset may take a local time in range out of it)."""
    low, high = (dialect.try_cast(exp.Literal.string(bound), Scalar("TIMESTAMP")) for bound in patterns.TIMESTAMP_RANGE)
    return _when(exp.Between(this=timestamp.copy(), low=low, high=high), timestamp)


def _boolean(dialect: LoadDialect, text: exp.Expr) -> exp.Expr:
    lowered = exp.Lower(this=text.copy())
    return (
        exp.Case()
        .when(exp.EQ(this=lowered, expression=exp.Literal.string("true")), exp.true())
        .when(exp.EQ(this=lowered.copy(), expression=exp.Literal.string("false")), exp.false())
        .when(dialect.matches(text, patterns.BOOL_INTEGER), exp.not_(dialect.matches(text, patterns.BOOL_ZERO)))
    )


def _single_json_value(dialect: LoadDialect, text: exp.Expr) -> exp.Expr:
    """The text is one strict JSON document: the warehouse parses it as one value, and outside its strings there
    is no NaN, Infinity or trailing comma (which DuckDB's parser lets through)."""
    words = dialect.replace_all(strings_blanked(text, dialect), "true|false|null", "0")
    return exp.and_(
        dialect.one_json_value(text),
        exp.not_(exp.RegexpLike(this=words, expression=exp.Literal.string(_LENIENT_JSON))),
    )


def trailing_comma(text: exp.Expr, dialect: LoadDialect = DUCKDB) -> exp.Expr:
    """The JSON text has a comma before a closing bracket outside its strings, which JSON refuses and DuckDB's
    parser lets through.  Its strings are blanked out only in a text that has such a comma at all."""
    return (
        exp.Case()
        .when(exp.not_(dialect.matches(text, _TRAILING_COMMA)), exp.false())
        .else_(exp.RegexpLike(this=strings_blanked(text, dialect), expression=exp.Literal.string(_TRAILING_COMMA)))
    )


def _guarded(dialect: LoadDialect, text: exp.Expr, pattern: str, value: exp.Expr) -> exp.Expr:
    return _when(dialect.matches(text, pattern), value)


def _when(condition: exp.Expr, value: exp.Expr) -> exp.Expr:
    return exp.Case().when(condition, value)  # when copies both
