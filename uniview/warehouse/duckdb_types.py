"""Map DuckDB column types to BigQuery's type model and back.

DuckDB -> BigQuery is how the embedded warehouse reports its tables, so the generator sees
BigQuery types everywhere.  BigQuery -> DuckDB is how BigQuery types (declared schemas, CAST
targets) become DuckDB DDL.  DuckDB's DECIMAL stops at 38 digits: a BIGNUMERIC that does not
fit DECIMAL(38, s) is kept as DOUBLE (documented: embedded mode approximates such values).
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.errors import ParseError

from uniview.core.errors import TypeParseError
from uniview.core.types import Array, BQType, Field, Scalar, Struct, decimal_parameters, decimal_type
from uniview.warehouse.duckdb_connection import quote_identifier

T = exp.DataType.Type
_SCALARS_FROM_DUCKDB = {
    T.BIGINT: "INT64",
    T.INT: "INT64",
    T.SMALLINT: "INT64",
    T.TINYINT: "INT64",
    T.UINT: "INT64",
    T.USMALLINT: "INT64",
    T.UTINYINT: "INT64",
    T.UBIGINT: "NUMERIC",
    T.INT128: "BIGNUMERIC",
    T.UINT128: "BIGNUMERIC",
    T.DOUBLE: "FLOAT64",
    T.FLOAT: "FLOAT64",
    T.BOOLEAN: "BOOL",
    T.VARCHAR: "STRING",
    T.TEXT: "STRING",
    T.CHAR: "STRING",
    T.UUID: "STRING",
    T.VARBINARY: "BYTES",
    T.BLOB: "BYTES",
    T.BINARY: "BYTES",
    T.DATE: "DATE",
    T.TIME: "TIME",
    T.TIMESTAMP: "DATETIME",
    T.TIMESTAMP_S: "DATETIME",
    T.TIMESTAMP_MS: "DATETIME",
    T.TIMESTAMP_NS: "DATETIME",
    T.DATETIME: "DATETIME",
    T.TIMESTAMPNTZ: "DATETIME",
    T.TIMESTAMPTZ: "TIMESTAMP",
    T.INTERVAL: "INTERVAL",
    T.JSON: "JSON",
}
_SCALARS_TO_DUCKDB = {
    "INT64": "BIGINT",
    "FLOAT64": "DOUBLE",
    "BOOL": "BOOLEAN",
    "STRING": "VARCHAR",
    "BYTES": "BLOB",
    "DATE": "DATE",
    "DATETIME": "TIMESTAMP",
    "TIME": "TIME",
    "TIMESTAMP": "TIMESTAMP WITH TIME ZONE",
    "JSON": "JSON",
    "INTERVAL": "INTERVAL",
    "GEOGRAPHY": "VARCHAR",
}
_DUCKDB_MAX_PRECISION = 38


def bigquery_type_from_duckdb(duckdb_type: str, *, table: str = "", column: str = "") -> BQType:
    """The BigQuery type of a DuckDB column type string such as 'STRUCT(a BIGINT, b VARCHAR[])'."""
    try:
        parsed = exp.DataType.build(duckdb_type, dialect="duckdb")
        return _from_duckdb(parsed)
    except (ParseError, ValueError, TypeParseError) as error:
        where = ".".join(part for part in (table, column) if part)
        raise TypeParseError(
            f"column {where}: DuckDB type {duckdb_type!r} has no BigQuery equivalent ({error})"
        ) from None


def _from_duckdb(data_type: exp.DataType) -> BQType:
    kind = data_type.this
    if kind == T.ARRAY:
        return Array(_from_duckdb(data_type.expressions[0]))
    if kind == T.STRUCT:
        return Struct(tuple(Field(d.name, _from_duckdb(d.args["kind"])) for d in data_type.expressions))
    if kind == T.DECIMAL:
        return _decimal_from_duckdb([int(p.name) for p in data_type.expressions] or [18, 3])
    if kind in _SCALARS_FROM_DUCKDB:
        return Scalar(_SCALARS_FROM_DUCKDB[kind])
    raise TypeParseError(f"unsupported type {data_type.sql('duckdb')}")


def _decimal_from_duckdb(params: list[int]) -> Scalar:
    precision, scale = params[0], params[1] if len(params) > 1 else 0
    return decimal_type(precision, scale) or Scalar("BIGNUMERIC", (precision, scale))


def duckdb_type(bq_type: BQType) -> str:
    """DuckDB DDL for a BigQuery type: duckdb_type(parse_type('ARRAY<INT64>')) == 'BIGINT[]'."""
    if isinstance(bq_type, Array):
        return duckdb_type(bq_type.element) + "[]"
    if isinstance(bq_type, Struct):
        fields = ", ".join(f"{quote_identifier(f.name)} {duckdb_type(f.type)}" for f in bq_type.fields)
        return f"STRUCT({fields})"
    if not isinstance(bq_type, Scalar):
        raise TypeParseError(f"{bq_type} has no DuckDB equivalent")
    if bq_type.name in ("NUMERIC", "BIGNUMERIC"):
        return _decimal_to_duckdb(bq_type)
    if bq_type.name not in _SCALARS_TO_DUCKDB:
        raise TypeParseError(f"{bq_type} has no DuckDB equivalent")
    return _SCALARS_TO_DUCKDB[bq_type.name]


def _decimal_to_duckdb(bq_type: Scalar) -> str:
    precision, scale = decimal_parameters(bq_type)
    if precision > _DUCKDB_MAX_PRECISION:
        return "DOUBLE"
    return f"DECIMAL({precision}, {scale})"
