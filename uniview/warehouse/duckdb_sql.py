"""Translate uniview's canonical BigQuery view bodies into DuckDB SQL that gives BigQuery's results.

`to_duckdb(body, table_columns)` parses the BigQuery SELECT with sqlglot, rewrites every form
uniview's generator emits (casts, typed NULLs, TO_JSON_STRING, SAFE_CONVERT_BYTES_TO_STRING,
SAFE.TIMESTAMP, element-wise ARRAY subqueries, rebuilt STRUCTs, struct field paths) and prints
one DuckDB SELECT; anything else it cannot translate raises WarehouseError.

Where BigQuery's result text depends on the value's type (CAST(x AS STRING), TO_JSON_STRING),
`table_columns` supplies the types of the tables the body reads, and only the DuckDB
expression for that type is emitted.  Without it, the expression chooses at bind time with
typeof() (same results, much larger SQL; TO_JSON_STRING then keeps DuckDB's JSON text).
Those expressions come from uniview.warehouse.duckdb_text.

The canonical bodies never qualify a column by a table, so a dotted path (`s`.`a`.`b`) is
always a struct field access.  Results never depend on the reading session's TimeZone, except
TO_JSON_STRING of TIMESTAMP values when no column types were given.  docs/duckdb.md lists the
rules and every known difference from BigQuery.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import sqlglot
from sqlglot import exp
from sqlglot.errors import ErrorLevel, SqlglotError

from uniview.core.errors import TypeParseError, WarehouseError
from uniview.core.types import Array, BQType, Scalar, Struct, parse_type
from uniview.warehouse.duckdb_connection import first_line, quote_identifier
from uniview.warehouse.duckdb_text import (
    UTC_LITERAL,
    cast_to_string,
    quote_string,
    safe_convert_bytes_to_string,
    safe_timestamp_in_zone,
    timestamp_in_zone,
    to_json_string,
)
from uniview.warehouse.duckdb_types import duckdb_type

#: Bump when the DuckDB SQL for the same BigQuery body changes: stored views written by an
#: older translation then no longer match and are replaced on the next refresh.
TRANSLATION_VERSION = 1

#: (dataset, table) -> {column name: BigQuery type}, or None when the table is unknown.
TableColumns = Callable[[str, str], Mapping[str, BQType] | None]

_DIALECT = "duckdb"
_TYPE = "uniview_bq_type"


def to_duckdb(bigquery_sql: str, table_columns: TableColumns | None = None) -> str:
    """The DuckDB SELECT equivalent to one BigQuery view body; WarehouseError if untranslatable."""
    tree: exp.Expr = _parse(bigquery_sql)
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
        raise _error(f"it does not parse as BigQuery SQL ({first_line(error)})") from None
    if len(statements) != 1 or not isinstance(statements[0], exp.Query):
        raise _error("expected exactly one SELECT statement")
    return statements[0]


def _generate(tree: exp.Expr) -> str:
    for node in tree.walk():
        if node.comments:
            node.comments = [comment.replace("*/", "* /") for comment in node.comments]
    try:
        return tree.sql(_DIALECT, unsupported_level=ErrorLevel.RAISE)
    except (SqlglotError, RecursionError) as error:
        raise _error(first_line(error)) from None


def _error(reason: str) -> WarehouseError:
    return WarehouseError(f"cannot translate view SQL to DuckDB: {reason}")


def _unsupported(what: str) -> WarehouseError:
    return _error(f"{what} is not supported")


def _raw(sql: str, like: exp.Expr | None = None) -> exp.Expr:
    """A node printed verbatim (already DuckDB SQL), keeping the type annotation of `like`."""
    node = exp.Var(this=sql)
    if like is not None and _TYPE in like.meta:
        node.meta[_TYPE] = like.meta[_TYPE]
    return node


def _sql(node: exp.Expr) -> str:
    return node.sql(_DIALECT)


# ---------------------------------------------------------------- types of paths


def _annotate_types(tree: exp.Expr, table_columns: TableColumns | None) -> None:
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


def _path_type(node: exp.Expr, columns_of: Callable[[exp.Table], dict[str, BQType]]) -> BQType | None:
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


def _name_type(node: exp.Expr, name: str, columns_of: Callable[[exp.Table], dict[str, BQType]]) -> BQType | None:
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


def _from_clause(select: exp.Select) -> exp.Expr | None:
    return select.args.get("from_") or select.args.get("from")


def _from_table(select: exp.Select) -> exp.Table | None:
    clause = _from_clause(select)
    return clause.this if clause is not None and isinstance(clause.this, exp.Table) else None


def _unnest_of(select: exp.Select) -> tuple[str, exp.Expr] | None:
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


def _type_of(node: exp.Expr) -> BQType | None:
    return node.meta.get(_TYPE) if node.meta else None


# ---------------------------------------------------------------- names and paths


def _column(node: exp.Column) -> exp.Expr:
    """`col` stays a column; `col`.`a`.`b` is a struct field path: struct_extract calls."""
    parts = node.parts
    if isinstance(node.this, exp.Star) or len(parts) < 2:
        return node
    path = quote_identifier(parts[0].name)
    for field in parts[1:]:
        path = f"struct_extract({path}, {quote_string(field.name)})"
    return _raw(path, like=node)


def _dot(node: exp.Dot) -> exp.Expr:
    if not isinstance(node.expression, exp.Identifier):
        raise _unsupported(f"the field access {node.sql('bigquery')}")
    return _raw(f"struct_extract({_sql(node.this)}, {quote_string(node.expression.name)})", like=node)


def _table(node: exp.Table) -> exp.Expr:
    """`project`.`ds`.`t` reads "ds"."t": a DuckDB schema stands for a dataset."""
    if node.args.get("catalog") is not None:
        node.set("catalog", None)
    return node


# ---------------------------------------------------------------- casts


def _cast(node: exp.Cast) -> exp.Expr:
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
    if target == Scalar("BYTES") and _type_of(node.this) == Scalar("STRING"):
        return _raw(f"encode({operand})")  # its UTF-8 bytes; DuckDB's cast would read backslash escapes
    cast = _raw(f"CAST({operand} AS {_duckdb_type(target)})")
    if target == Scalar("INT64"):
        cast.meta[_TYPE] = target  # so CAST(CAST(x AS INT64) AS STRING) is written for an INT64
    return cast


def _try_cast(node: exp.TryCast) -> exp.Expr:
    """SAFE_CAST to a decimal as DuckDB's type of the same precision and scale (sqlglot writes NUMERIC as DuckDB's
    DECIMAL, which is DECIMAL(18, 3)); to any other type as sqlglot writes it."""
    target = _bigquery_type(node.to)
    if isinstance(target, Scalar) and target.name in ("NUMERIC", "BIGNUMERIC"):
        return _raw(f"TRY_CAST({_sql(node.this)} AS {_duckdb_type(target)})")
    return node


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


def cast_to_timestamp(x: str) -> str:
    """BigQuery's CAST(x AS TIMESTAMP): a DATE or DATETIME is read as UTC."""
    return (
        f"CASE WHEN typeof({x}) = 'TIMESTAMP WITH TIME ZONE' THEN TRY_CAST({x} AS TIMESTAMPTZ)"
        f" ELSE timezone({UTC_LITERAL}, CAST({x} AS TIMESTAMP)) END"
    )


def cast_to_datetime(x: str) -> str:
    """BigQuery's CAST(x AS DATETIME): a TIMESTAMP is read in UTC."""
    return (
        f"CASE WHEN typeof({x}) = 'TIMESTAMP WITH TIME ZONE' THEN timezone({UTC_LITERAL}, TRY_CAST({x} AS TIMESTAMPTZ))"
        f" ELSE CAST({x} AS TIMESTAMP) END"
    )


# ---------------------------------------------------------------- other functions


def _json_format(node: exp.JSONFormat) -> exp.Expr:
    if node.args.get("options") or node.args.get("is_json"):
        raise _unsupported("TO_JSON_STRING with options")
    return _raw(to_json_string(_sql(node.this), _type_of(node.this)))


def _safe_convert(node: exp.SafeConvertBytesToString) -> exp.Expr:
    return _raw(safe_convert_bytes_to_string(_sql(node.this)))


def _timestamp(node: exp.Timestamp) -> exp.Expr:
    if isinstance(node.parent, exp.SafeFunc):
        return node
    return _raw(timestamp_in_zone(_sql(node.this), _zone(node)))


def _safe_func(node: exp.SafeFunc) -> exp.Expr:
    inner = node.this
    if not isinstance(inner, exp.Timestamp):
        raise _unsupported(f"SAFE.{inner.sql('bigquery')}")
    return _raw(safe_timestamp_in_zone(_sql(inner.this), _zone(inner)))


def _zone(node: exp.Timestamp) -> str:
    zone = node.args.get("zone")
    if zone is None:
        return UTC_LITERAL
    if not (isinstance(zone, exp.Literal) and zone.is_string):
        raise _unsupported("TIMESTAMP(x, zone) with a zone that is not a string literal")
    return quote_string(zone.this)


# ---------------------------------------------------------------- structs and arrays


def _struct(node: exp.Struct) -> exp.Expr:
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


def _array(node: exp.Array) -> exp.Expr:
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
    clause = _from_clause(select)
    if clause is None or any(select.args.get(key) for key in extra):
        return False
    offset = clause.this.args.get("offset")
    order = select.args.get("order")
    ordered = order.expressions if order is not None else []
    if not isinstance(offset, exp.Identifier) or len(ordered) != 1 or ordered[0].args.get("desc"):
        return False
    key = ordered[0].this
    return isinstance(key, exp.Column) and not key.table and key.name == offset.name


def _st_astext(node: exp.Expr) -> exp.Expr:
    """GEOGRAPHY is kept as WKT text in DuckDB, so ST_ASTEXT is the text itself."""
    return _raw(f"CAST({_sql(node.this)} AS VARCHAR)")


_RULES: dict[type, Callable[..., exp.Expr]] = {
    exp.Column: _column,
    exp.Dot: _dot,
    exp.Table: _table,
    exp.Cast: _cast,
    exp.TryCast: _try_cast,
    exp.JSONFormat: _json_format,
    exp.SafeConvertBytesToString: _safe_convert,
    exp.Timestamp: _timestamp,
    exp.SafeFunc: _safe_func,
    exp.Struct: _struct,
    exp.Array: _array,
}
if hasattr(exp, "StAsText"):
    _RULES[exp.StAsText] = _st_astext
