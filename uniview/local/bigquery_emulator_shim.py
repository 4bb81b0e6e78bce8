"""Run the local BigQuery emulator (local-bigquery 0.3.2) with its Storage Write API made as strict and
as complete as BigQuery's on the points the spark-bigquery-connector and the sink depend on.  Executed by the
emulator's own interpreter (`<venv>/bin/python bigquery_emulator_shim.py serve ...`), never imported
by uniview.

1. DATETIME and TIME values may arrive as packed int64 (the encoding of BigQuery's CivilTimeEncoder,
   which the connector uses): https://cloud.google.com/bigquery/docs/write-api#data_type_conversions.
   The emulator decodes only TIMESTAMP and DATE integers.
2. BatchCommitWriteStreams and FlushRows must either make every row visible or fail.  The emulator
   dropped the rows it could not insert and reported success: here it reports the error instead.
3. MERGE inside BEGIN TRANSACTION ... COMMIT TRANSACTION (BigQuery runs it in the script's transaction).
   The emulator's MERGE opens a transaction of its own with BEGIN, which DuckDB refuses inside one and
   then aborts the script's whole transaction ("Current transaction is aborted"): here a MERGE run inside
   a script's transaction does not try to open one.
4. Two transactions that mutate one table: BigQuery aborts one with "Transaction is aborted due to
   concurrent update against table ..." (400 invalidQuery); the emulator's DuckLake catalog answers
   "Failed to commit DuckLake transaction" at COMMIT.  Here that COMMIT fails with BigQuery's words.
5. JSON_VALUE, JSON_QUERY and JSON_QUERY_ARRAY over a STRING with a constant path run GoogleSQL's semantics
   (uniview.local.bigquery_emulator_json): NULL for text that is not JSON, where DuckDB's JSON functions fail
   the query, and a number's text as written, where DuckDB's give its double's.
6. CAST of a NUMERIC or BIGNUMERIC to STRING writes no trailing fractional zeros (BigQuery's `23803720`, not
   DuckDB's DECIMAL text `23803720.000000000000000000`).
7. PARSE_JSON(..., wide_number_mode => 'round') keeps an integer of [-2^63, 2^64) exact, as BigQuery's JSON
   stores it (https://cloud.google.com/bigquery/docs/reference/standard-sql/json_functions#parse_json); the
   emulator made every integer above 2^63 - 1 a double.  Only a wider integer or a decimal is rounded.
8. CAST(x AS BYTES) of a STRING gives its UTF-8 bytes, as GoogleSQL's; the emulator's DuckDB cast to BLOB reads
   escapes and refuses any character that is not ASCII.
9. A STRUCT field given as a column path takes the column's name, as in GoogleSQL (`STRUCT(id, v.name).name`);
   the emulator made every field of such a STRUCT unnamed, so reading one by name failed.
10. The Storage Write API takes an AppendRows request of up to 10 MB, as BigQuery's does
    (https://cloud.google.com/bigquery/quotas#write-api-limits); the emulator's gRPC server kept gRPC's default
    of 4 MB, so a batch of large lines failed its connector write.
11. Two jobs that create, replace, alter or drop one table or view at once both succeed on BigQuery, the later
    one's definition kept.  The emulator's catalog records the definition with INSERT OR REPLACE in each job's
    own DuckDB transaction, and the later of two that overlap failed with "Duplicate key ... violates primary
    key constraint".  Here the DDL statements on one name run one at a time.

One change is for speed alone: the emulator lists a dataset's tables and views (`database.objects`) for every
table a statement names, with DuckDB's duckdb_tables() and duckdb_views(), which load the whole DuckLake catalog
(60-130 ms on these machines, growing with the catalog, a third of the emulator's time in the live CDC tests).
Here the same listing is read from the catalog's metadata tables.  Likewise a table's columns (which of them are NOT NULL,
whether it has the ingestion-time column), which the emulator read from duckdb_columns() for every table a statement
names and for each table of an INFORMATION_SCHEMA read, are read from the catalog's metadata when the name is a table of
a project's DuckLake catalog (a view, a result table or a temporary table is left to duckdb_columns()).  A statement
names a table several times (its check, its types, its ingestion-time column, its destination): the listing and the
columns of a DuckLake catalog's table are read once per catalog snapshot (uniview.local.bigquery_emulator_memo), and
read again as soon as any connection commits a change to the catalog.  The emulator's own records (its jobs, the
resources of its datasets and tables, the listing of a query's result table) are kept in its process, for speed too
(uniview.local.bigquery_emulator_records).  With UNIVIEW_BQ_EMULATOR_THREADS set (uniview.local.bigquery_emulator),
its DuckDB runs each query on that many threads.

A statement's translation to DuckDB's SQL (a third of the emulator's CPU; the tests translate many statements again: a
script run again, MERGE's own statements) is kept, the newest 4,096, keyed by the statement and its context (project,
default dataset, parameters, functions, and the temporary tables and script variables it names), and given again only
while every read of the catalog and of the emulator's records it made (a dataset's or a table's existence, columns and
definition, the projects) gives the same answer; a statement whose translation reads anything else is translated every
time (_translation_key).  A text parsed before is not parsed again: its statements are copies of the first parse's.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import datetime
import functools
import json
import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import grpc
import sqlglot
from local_bigquery.catalog import datasets, metadata, names, tabledata, tables
from local_bigquery.engine import database, types
from local_bigquery.errors import BigQueryError, not_found
from local_bigquery.grpc import server as grpc_server
from local_bigquery.grpc import write
from local_bigquery.grpc.read import StorageError
from local_bigquery.jobs import merge, query
from local_bigquery.sql import translate
from local_bigquery.sql.rules import NODE_RULES, STATEMENT_RULES, partitions
from local_bigquery.sql.rules.typing import kind
from sqlglot import exp

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout: the emulator's venv has no uniview
from uniview.local import bigquery_emulator_records as records
from uniview.local.bigquery_emulator import THREADS_VARIABLE
from uniview.local.bigquery_emulator_json import json_query, json_query_array, json_value
from uniview.local.bigquery_emulator_memo import COLUMN, LISTING, SCHEMA, CatalogSnapshot, SnapshotMemo, TranslationMemo

_MICROS_BITS = 20


def packed_datetime(value: int) -> str:
    """ISO text of a packed DATETIME: year(14) month(4) day(5) hour(5) minute(6) second(6), then 20 bits of micros."""
    seconds, micros = value >> _MICROS_BITS, value & ((1 << _MICROS_BITS) - 1)
    moment = datetime.datetime(
        seconds >> 26 & 0x3FFF,
        seconds >> 22 & 0xF,
        seconds >> 17 & 0x1F,
        seconds >> 12 & 0x1F,
        seconds >> 6 & 0x3F,
        seconds & 0x3F,
        micros,
    )
    return moment.isoformat(sep="T", timespec="microseconds")


def packed_time(value: int) -> str:
    """ISO text of a packed TIME: hour(5) minute(6) second(6), then 20 bits of micros."""
    seconds, micros = value >> _MICROS_BITS, value & ((1 << _MICROS_BITS) - 1)
    return datetime.time(seconds >> 12 & 0x1F, seconds >> 6 & 0x3F, seconds & 0x3F, micros).isoformat("microseconds")


_PACKED = {"DATETIME": packed_datetime, "TIME": packed_time}
_emulator_value = write._value
_emulator_insert = write._insert


def _value(schema: Any, value: Any) -> Any:
    if value is not None and schema.mode != "REPEATED" and schema.type in _PACKED and str(value).lstrip("-").isdigit():
        return _PACKED[schema.type](int(value))
    return _emulator_value(schema, value)


_committing = threading.local()


def _insert(stream: Any, rows: Any) -> Any:
    errors = _emulator_insert(stream, rows)
    if errors and getattr(_committing, "active", False):
        raise StorageError(
            grpc.StatusCode.INVALID_ARGUMENT,
            f"{len(errors)} rows of {stream.name} could not be committed: {errors[0]['errors'][0]['message']}",
        )
    return errors


def _all_or_fail(handler: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def strict(request: Any) -> Any:
        _committing.active = True
        try:
            return handler(request)
        finally:
            _committing.active = False

    return strict


_in_transaction = threading.local()  # a job runs in one thread: whether its script holds a transaction
_emulator_execute = query._execute
_emulator_run = query._run
_emulator_merge = merge.run


def _execute(*args: Any, **kwargs: Any) -> Any:
    _in_transaction.open = False
    try:
        return _emulator_execute(*args, **kwargs)
    finally:
        _in_transaction.open = False


_MUTATIONS = (exp.Insert, exp.Update, exp.Delete, exp.Merge)
_DDL = (exp.Create, exp.Drop, exp.Alter)
_ddl_locks: dict[tuple[str, ...], threading.RLock] = {}
_ddl_locks_guard = threading.Lock()


def _one_ddl_at_a_time(tree: Any, context: Any) -> contextlib.AbstractContextManager[Any]:
    """Held while a DDL statement outside a script's transaction runs: one at a time per table or view name."""
    if not isinstance(tree, _DDL) or getattr(_in_transaction, "open", False):
        return contextlib.nullcontext()
    key = tuple(part.casefold() for part in query._target(tree, context))
    with _ddl_locks_guard:
        return _ddl_locks.setdefault(key, threading.RLock())


def _run(cur: Any, tree: Any, *args: Any) -> Any:
    if isinstance(tree, exp.Commit):
        _in_transaction.open = False
        try:
            return _emulator_run(cur, tree, *args)
        except Exception as error:
            if "Failed to commit" not in str(error):
                raise
            table = getattr(_in_transaction, "mutated", "")
            raise BigQueryError(
                "invalidQuery", f"Transaction is aborted due to concurrent update against table {table}."
            ) from error
    with _one_ddl_at_a_time(tree, args[0]):
        result = _emulator_run(cur, tree, *args)
    if isinstance(tree, exp.Transaction):
        _in_transaction.open, _in_transaction.mutated = True, ""
    elif isinstance(tree, exp.Rollback):
        _in_transaction.open = False
    elif isinstance(tree, _MUTATIONS) and getattr(_in_transaction, "open", False):
        target = tree.find(exp.Table)
        _in_transaction.mutated = target.sql(dialect="bigquery") if target is not None else ""
    return result


class _InTransaction:
    """The job's cursor, on which MERGE's own BEGIN fails as in a transaction, without reaching DuckDB."""

    def __init__(self, cursor: Any) -> None:
        self._cursor = cursor

    def execute(self, sql: str, *args: Any) -> Any:
        if sql.strip().upper() == "BEGIN":
            raise duckdb.TransactionException("the script's transaction is open")
        return self._cursor.execute(sql, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cursor, name)


def _merge(cur: Any, tree: Any, context: Any) -> Any:
    return _emulator_merge(_InTransaction(cur) if getattr(_in_transaction, "open", False) else cur, tree, context)


#: GoogleSQL's JSON functions as DuckDB functions of (text, path as a JSON list of keys and positions).
_JSON_FUNCTIONS: dict[type, tuple[str, Callable[..., Any], str]] = {
    exp.JSONExtractScalar: ("_bq_json_value", json_value, "VARCHAR"),
    exp.JSONExtract: ("_bq_json_query", json_query, "VARCHAR"),
    exp.JSONExtractArray: ("_bq_json_query_array", json_query_array, "VARCHAR[]"),
}


def _path_steps(path: Any) -> list[str | int] | None:
    """A constant JSONPath's keys and positions; None for any other path (left to the emulator)."""
    if path is None:
        return []
    if not isinstance(path, exp.JSONPath):
        return None
    steps: list[str | int] = []
    for part in path.expressions:
        if (isinstance(part, exp.JSONPathKey) and isinstance(part.this, str)) or (
            isinstance(part, exp.JSONPathSubscript) and isinstance(part.this, int)
        ):
            steps.append(part.this)
        elif not isinstance(part, exp.JSONPathRoot):
            return None
    return steps


def _googlesql_json(node: Any, context: Any) -> Any:
    """JSON_VALUE/JSON_QUERY/JSON_QUERY_ARRAY over text as GoogleSQL's (a JSON-typed input is left as it is)."""
    if type(node) not in _JSON_FUNCTIONS or kind(node.this) == exp.DataType.Type.JSON:
        return node
    steps = _path_steps(node.expression)
    if steps is None:
        return node
    name, _, returns = _JSON_FUNCTIONS[type(node)]
    call = exp.Anonymous(this=name, expressions=[node.this, exp.Literal.string(json.dumps(steps))])
    return exp.Cast(this=call, to=exp.DataType.build(returns, dialect="duckdb"))


def _struct_field_names(tree: Any, context: Any) -> Any:
    """STRUCT(a, t.b, 1 AS c): the fields given as column paths named after the column, as GoogleSQL infers
    them (before the emulator's own rule makes every unnamed field positional)."""
    for struct in list(tree.find_all(exp.Struct)):
        for field in list(struct.expressions):
            if isinstance(field, exp.Column):
                field.replace(exp.PropertyEQ(this=exp.to_identifier(field.name, quoted=True), expression=field.copy()))
    return tree


_DECIMAL_TEXT = r"regexp_replace(regexp_replace(CAST({} AS VARCHAR), '(\.[0-9]*[1-9])0+$', '\1'), '\.0*$', '')"


def _decimal_text(node: Any, context: Any) -> Any:
    """CAST(x AS STRING) of a decimal (or of a value whose type the translation does not know) as BigQuery's."""
    if not (isinstance(node, exp.Cast) and node.to.this in (exp.DataType.Type.TEXT, exp.DataType.Type.VARCHAR)):
        return node
    if kind(node.this) not in (None, exp.DataType.Type.DECIMAL, exp.DataType.Type.BIGDECIMAL):
        return node
    trimmed = sqlglot.parse_one(_DECIMAL_TEXT.format("__x"), read="duckdb").transform(
        lambda part: node.this.copy() if isinstance(part, exp.Column) and part.name == "__x" else part
    )
    decimal = exp.Like(this=exp.func("typeof", node.this.copy()), expression=exp.Literal.string("DECIMAL%"))
    return exp.Case().when(decimal, trimmed).else_(node)


_BINARY = (exp.DataType.Type.BINARY, exp.DataType.Type.VARBINARY, exp.DataType.Type.BLOB)


def _string_bytes(node: Any, context: Any) -> Any:
    """CAST(x AS BYTES) of a STRING (checked when the query runs: the translation does not know every value's type)
    as GoogleSQL's: the text's UTF-8 bytes."""
    if not (isinstance(node, exp.Cast) and node.to.this in _BINARY):
        return node
    if kind(node.this) in _BINARY:
        return node
    text = exp.Like(this=exp.func("typeof", node.this.copy()), expression=exp.Literal.string("VARCHAR"))
    utf8 = exp.Anonymous(this="encode", expressions=[exp.Cast(this=node.this.copy(), to=exp.DataType.build("VARCHAR"))])
    return exp.Case().when(text, utf8).else_(node)


#: BigQuery's largest AppendRows request.
_MAX_REQUEST_BYTES = 10 * 1024 * 1024


def _start(host: str, port: int) -> tuple[Any, int]:
    """The emulator's gRPC server, taking requests as large as BigQuery's Storage Write API does."""
    options = [("grpc.max_receive_message_length", _MAX_REQUEST_BYTES)]
    started = grpc.server(concurrent.futures.ThreadPoolExecutor(max_workers=16), options=options)
    started.add_generic_rpc_handlers(
        [grpc.method_handlers_generic_handler(name, handlers) for name, handlers in grpc_server.SERVICES.items()]
    )
    bound = started.add_insecure_port(f"{host}:{port}")
    started.start()
    return started, bound


#: PARSE_JSON's 'round' mode: BigQuery's JSON holds an integer of [-2^63, 2^64) exactly.
_PARSE_JSON = """CREATE OR REPLACE MACRO bq.main.parse_json(s) AS bq.main._parse_json_exact(s),
(s, mode) AS CASE lower(mode)
    WHEN 'exact' THEN bq.main._parse_json_exact(s)
    WHEN 'round' THEN CASE
        WHEN json_type(json(s)) IN ('DOUBLE', 'HUGEINT') THEN to_json(CAST(json(s) AS DOUBLE))
        ELSE json(s) END
    ELSE _raise('Invalid wide_number_mode: ' || mode)
END"""
_emulator_connect = database._connect.__wrapped__  # uncached: the emulator's reset() clears the cache below


def _snapshot(catalog: str) -> int | None:
    """The latest snapshot id of a project's DuckLake catalog; None for any other catalog."""
    if catalog not in database._attached:  # the exact name of an attached project, as duckdb_tables() compares it
        return None
    try:
        return database.fetch(f"SELECT max(snapshot_id) FROM {_metadata(catalog)}.ducklake_snapshot")[0][0]
    except duckdb.CatalogException:
        return None


def _metadata(catalog: str) -> str:
    return database.quote(f"__ducklake_metadata_{catalog}")


#: A DuckLake catalog at its latest snapshot, read from its metadata tables (the objects of no ended snapshot are the
#: current ones): the snapshot id; each schema's tables (with the estimated row count duckdb_tables() gives: the
#: catalog's record count) and views, in name order; each table's top-level columns and whether each takes NULL, as
#: duckdb_columns() gives them; its schemas.  One query, so all of one snapshot.
_CATALOG = f"""
SELECT 0 AS part, NULL AS schema_name, NULL AS name, NULL AS detail, max(snapshot_id) AS number
FROM {{metadata}}.ducklake_snapshot
UNION ALL
SELECT {LISTING}, s.schema_name, t.table_name, 'TABLE', coalesce(stats.record_count, 0)
FROM {{metadata}}.ducklake_table AS t
JOIN {{metadata}}.ducklake_schema AS s ON s.schema_id = t.schema_id AND s.end_snapshot IS NULL
LEFT JOIN {{metadata}}.ducklake_table_stats AS stats ON stats.table_id = t.table_id
WHERE t.end_snapshot IS NULL
UNION ALL
SELECT {LISTING}, s.schema_name, v.view_name, 'VIEW', 0
FROM {{metadata}}.ducklake_view AS v
JOIN {{metadata}}.ducklake_schema AS s ON s.schema_id = v.schema_id AND s.end_snapshot IS NULL
WHERE v.end_snapshot IS NULL
UNION ALL
SELECT {COLUMN}, s.schema_name, t.table_name, c.column_name, CAST(c.nulls_allowed AS BIGINT)
FROM {{metadata}}.ducklake_column AS c
JOIN {{metadata}}.ducklake_table AS t ON t.table_id = c.table_id AND t.end_snapshot IS NULL
JOIN {{metadata}}.ducklake_schema AS s ON s.schema_id = t.schema_id AND s.end_snapshot IS NULL
WHERE c.end_snapshot IS NULL AND c.parent_column IS NULL
UNION ALL
SELECT {SCHEMA}, s.schema_name, NULL, NULL, 0
FROM {{metadata}}.ducklake_schema AS s
WHERE s.end_snapshot IS NULL
ORDER BY part, schema_name, name
"""


def _load(catalog: str) -> tuple[int, list[Any]]:
    """A project's DuckLake catalog: its snapshot id and the rows of _CATALOG at it."""
    (_, _, _, _, snapshot), *rows = database.fetch(_CATALOG.format(metadata=_metadata(catalog)))
    return snapshot, rows


#: The catalogs' listings and columns, read once per snapshot (new with every connection: a reset catalog's
#: snapshot ids start again).
_memo = SnapshotMemo(_snapshot, _load)


def _catalog(catalog: str) -> CatalogSnapshot | None:
    """A project's DuckLake catalog as it is now; None for any other catalog (or one not attached yet)."""
    try:
        return _memo.catalog(catalog)
    except duckdb.CatalogException:
        return None


@functools.cache
def _connect() -> Any:
    global _memo, _translations
    _memo = SnapshotMemo(_snapshot, _load)
    _translations = TranslationMemo()  # a reset emulator starts with no catalog
    connection = _emulator_connect()
    if threads := os.environ.get(THREADS_VARIABLE):
        connection.execute(f"SET threads = {int(threads)}")
    connection.execute(_PARSE_JSON)
    for name, function, returns in _JSON_FUNCTIONS.values():  # NULL in, NULL out: they return NULL too
        connection.create_function(name, function, ["VARCHAR", "VARCHAR"], returns, null_handling="special")
    return connection


_emulator_translate = translate.translate


def _translate(tree: Any, context: Any) -> Any:
    """translate.translate(), with each project's catalog read once for the statement (SnapshotMemo.pinned), and
    the translation of a statement translated before in the same state kept (_translation_key)."""
    with _memo.pinned():
        key = _translation_key(tree, context)
        kept = _translations.get(key) if key is not None else None
        if kept is not None and _same_reads(kept.reads):
            return kept.replay(context)
        temporary, referenced = set(context.temporary), set(context.referenced)
        reads: list[tuple[Callable[..., Any], tuple, Callable[[Any], Any], Any]] = []
        _reading.found, outer = reads, getattr(_reading, "found", None)
        try:
            sql, bound = _emulator_translate(tree, context)
        finally:
            _reading.found = outer
        if outer is not None:  # a translation further out depends on these reads too
            outer.extend(reads)
        if key is not None and not any(print_ is None for *_, print_ in reads):
            translation = _Translation(
                sql, frozenset(context.used), context.temporary - temporary, context.referenced - referenced, reads
            )
            _translations.put(key, translation)
        return sql, bound


class _Translation:
    """A statement's translation, what it added to its context, and the resources it read (model, keys, their
    fingerprints)."""

    def __init__(self, sql: str, used: frozenset, temporary: set, referenced: set, reads: list) -> None:
        self.sql, self.used, self.temporary, self.referenced, self.reads = sql, used, temporary, referenced, reads

    def replay(self, context: Any) -> tuple[str, dict]:
        """translate.translate()'s answer and its changes to `context`, as a translation would give them now."""
        context.used.clear()
        context.used.update(self.used)
        context.temporary.update(self.temporary)
        context.referenced.update(self.referenced)
        return self.sql, {name: context.values[name] for name in self.used}


#: Translations by statement and context (_translation_key), each with the reads of the catalog and of the emulator's
#: records it made (_recording), checked again before it is given.  A statement whose translation reads other state is
#: translated every time: one reading INFORMATION_SCHEMA (its rows are read as it is translated), system variables,
#: a wildcard table, a query's result table, a positional parameter or an external query; and one that read a resource
#: that expires (_fingerprints).
_translations = TranslationMemo()
_reading = threading.local()  # the reads the translation in progress makes
_UNKEPT = (exp.Placeholder, exp.SessionParameter)


def _translation_key(tree: Any, context: Any) -> tuple | None:
    """The key of a statement's translation in its context and the catalogs' state; None when it is not kept."""
    if tree.find(*_UNKEPT) or any(
        isinstance(node, exp.Parameter) and isinstance(node.this, exp.Parameter)
        for node in tree.find_all(exp.Parameter)
    ):
        return None
    for table in tree.find_all(exp.Table):
        names_ = (table.name, table.db, table.catalog)
        if (
            table.name.endswith("*")
            or table.args.get("version")
            or any(
                part.casefold() in ("information_schema", tables.RESULTS)
                or part.casefold().startswith("information_schema")
                for part in names_
            )
        ):
            return None
    sql = tree.sql(dialect="bigquery")
    if "external_query" in sql.casefold() or "information_schema" in sql.casefold():
        return None
    return (
        sql,
        bool(tree.meta.get("table_function")),
        context.project_id,
        context.dataset_id,
        tuple(sorted(context.parameters.items())),
        tuple(sorted(name for name in _table_names(tree) if name in context.temporary)),
        tuple(sorted(context.functions.items())),
        tuple(sorted((name, context.variables[name]) for name in _column_names(tree) if name in context.variables)),
    )


def _table_names(tree: Any) -> set[str]:
    """The names of the tables a statement names, as the emulator looks them up among its temporary tables."""
    return {table.name.casefold() for table in tree.find_all(exp.Table)}


def _column_names(tree: Any) -> set[str]:
    """The names and qualifiers of the columns a statement names, as the emulator looks them up among its variables."""
    return {part.lower() for column in tree.find_all(exp.Column) for part in (column.name, column.table) if part}


#: A resource's fields that change with its data or when it is created again, not with its definition (a translation
#: reads none of them), besides its counts ("num...").
_VOLATILE = {"etag", "creationTime", "lastModifiedTime", "streamingBuffer"}


def _fingerprints(found: list[Any]) -> tuple[str, ...] | None:
    """The definitions of resources read, as text; None when one expires (a translation reads whether it has)."""
    prints = []
    for resource in found:
        data = resource.model_dump(mode="json", exclude_none=True)
        if data.get("expirationTime") is not None:
            return None
        kept = {name: value for name, value in data.items() if name not in _VOLATILE and not name.startswith("num")}
        prints.append(json.dumps(kept, sort_keys=True))
    return tuple(prints)


def _answer(function: Callable[..., Any], args: tuple, fingerprint: Callable[[Any], Any]) -> tuple[Any, Any]:
    """`function(*args)` and its fingerprint (of the error it raised, when it did)."""
    try:
        found = function(*args)
    except Exception as error:
        return error, ("raised", type(error).__name__, str(error))
    return found, fingerprint(found)


def _recording(function: Callable[..., Any], fingerprint: Callable[[Any], Any] = repr) -> Callable[..., Any]:
    """`function`, a read of the catalog or of the emulator's records, noting each read a translation in progress
    makes (_reading.found): what it read and the fingerprint of its answer (or of the error it raised)."""

    def read(*args: Any) -> Any:
        reads = getattr(_reading, "found", None)
        if reads is None:
            return function(*args)
        found, print_ = _answer(function, args, fingerprint)
        reads.append((function, args, fingerprint, print_))
        if isinstance(found, Exception):
            raise found
        return found

    return read


def _same_reads(reads: list[tuple[Callable[..., Any], tuple, Callable[[Any], Any], Any]]) -> bool:
    """Whether each read a kept translation made gives the same answer now (noted again for a translation in
    progress further out)."""
    outer, _reading.found = getattr(_reading, "found", None), None
    try:
        same = all(_answer(function, args, fingerprint)[1] == print_ for function, args, fingerprint, print_ in reads)
    finally:
        _reading.found = outer
    if same and outer is not None:
        outer.extend(reads)
    return same


def _listed(found: list[tuple[str, str, int]]) -> list[tuple[str, str]]:
    """The names and kinds of a listing, without the row counts a translation does not read."""
    return [(name, kind) for name, kind, _ in found]


def _hidden_of(catalog: str, schema: str, name: str) -> bool:
    """_hidden() of a table named by its parts."""
    return _hidden(
        exp.Table(this=exp.to_identifier(name), db=exp.to_identifier(schema), catalog=exp.to_identifier(catalog))
    )


_recorded_hidden = _recording(_hidden_of)


def _hidden_noted(table: Any) -> bool:
    """partitions._hidden(), noted as a read by name (a table that is no plain name is read unnoted: never hidden)."""
    if not (table.catalog and table.db) or not isinstance(table.this, exp.Identifier):
        return False
    return _recorded_hidden(table.catalog, table.db, table.name)


_emulator_parse = translate.parse


@functools.lru_cache(maxsize=4096)
def _first_parse(sql: str) -> tuple[Any, ...]:
    """The statements of the text's first parse (parsing is a function of the text alone), the newest 4,096 texts."""
    return tuple(_emulator_parse(sql))


def _parse(sql: str) -> list[Any]:
    """translate.parse(): copies of the trees the text's first parse gave (each caller may change its own; a copy
    costs a sixth of parsing again)."""
    return [tree.copy() for tree in _first_parse(sql)]


_emulator_objects = database.objects
_emulator_dataset_exists = datasets.exists


def _dataset_exists(project_id: str, dataset_id: str) -> bool:
    """datasets.exists(), which asks DuckDB's duckdb_schemas(): a schema of a project's DuckLake catalog is found in
    the catalog's metadata; any other name is left to the emulator."""
    state = _catalog(project_id)
    return (state is not None and state.has_schema(dataset_id)) or _emulator_dataset_exists(project_id, dataset_id)


def _objects(project_id: str, dataset_id: str, table_id: str | None = None) -> list[tuple[str, str, int]]:
    """The emulator's listing of a dataset's tables and views, the same rows its duckdb_tables() and
    duckdb_views() query gives, read from the catalog's metadata (about 1 ms when the catalog did not change since
    it was last read, 5-10 ms otherwise, not duckdb_tables()' 60-130 ms)."""
    if project_id == _RESULTS_DATABASE and dataset_id == tables.RESULTS and table_id is not None:
        return records.result_listing(table_id)
    state = _catalog(project_id)
    if state is None:
        return _emulator_objects(project_id, dataset_id, table_id)
    return state.listing(dataset_id, table_id)


def _table_columns(catalog: str, schema: str, table: str) -> dict[str, bool] | None:
    """Column name -> whether it takes NULL, of a table of a project's DuckLake catalog (read from the catalog's
    metadata) or of a query's result table (from its own pragma_table_info()); None for any other name (a view, a
    temporary or a missing table), left to duckdb_columns()."""
    if catalog == _RESULTS_DATABASE:
        return _result_columns(schema, table)
    state = _catalog(catalog)
    return None if state is None else state.columns(schema, table)


#: The emulator's own database, whose schema _results holds the tables of query results.
_RESULTS_DATABASE = records.RESULTS_DATABASE


def _result_columns(schema: str, table: str) -> dict[str, bool] | None:
    """Column name -> whether it takes NULL, of a table of the emulator's database; None when there is none."""
    try:
        rows = database.fetch(
            'SELECT name, NOT "notnull" FROM pragma_table_info($1)', [database.quote(_RESULTS_DATABASE, schema, table)]
        )
    except duckdb.CatalogException:
        return None
    return dict(rows) or None


_emulator_columns = tables.columns


def _columns(project_id: str, dataset_id: str, table_id: str) -> list[Any]:
    """The emulator's tables.columns(), the NOT NULL columns read from the catalog's metadata when it is a table's."""
    catalog, schema, table = tables.physical(project_id, dataset_id, table_id)
    state = None if catalog == _RESULTS_DATABASE else _catalog(catalog)
    found = _table_columns(catalog, schema, table) if state is None else state.columns(schema, table)
    if found is None:
        return _emulator_columns(project_id, dataset_id, table_id)
    required = {name for name, nullable in found.items() if not nullable}
    shape = (
        _shape(project_id, dataset_id, table_id)
        if state is None
        else _memo.derived(catalog, state, ("shape", schema, table), lambda: _shape(project_id, dataset_id, table_id))
    )
    return [
        types.field(column, kind, column in required)
        for column, kind in shape
        if column != tables.INGESTION_TIME or dataset_id == tables.RESULTS
    ]


def _shape(project_id: str, dataset_id: str, table_id: str) -> tuple[tuple[str, Any], ...]:
    """A table's columns and their DuckDB types, as a query of it gives them."""
    with database.cursor() as cur:
        try:
            relation = cur.sql(f"SELECT * FROM {tables.name(project_id, dataset_id, table_id)} LIMIT 0")
        except duckdb.CatalogException:
            raise not_found("Table", names.label(project_id, dataset_id, table_id)) from None
        return tuple(zip(relation.columns, relation.types, strict=True))


_emulator_hidden = partitions._hidden


def _hidden(table: Any) -> bool:
    """Whether a table has the hidden ingestion-time column (partitions._hidden), read from the catalog's metadata."""
    if not (table.catalog and table.db) or not isinstance(table.this, exp.Identifier):
        return False
    found = _table_columns(table.catalog, table.db, table.name)
    return _emulator_hidden(table) if found is None else tables.INGESTION_TIME in found


NODE_RULES.insert(0, _googlesql_json)
NODE_RULES.append(_decimal_text)
NODE_RULES.append(_string_bytes)
STATEMENT_RULES.insert(0, _struct_field_names)
database._connect = _connect
database.objects = _recording(_objects, _listed)
database.projects = _recording(database.projects)
datasets.exists = _recording(_dataset_exists)
tables.columns = tabledata.columns = _recording(_columns)
partitions._hidden = _hidden_noted
query._execute = _execute
query._run = _run
merge.run = _merge
write._value = _value
grpc_server.start = _start
write._insert = _insert
write.commit = _all_or_fail(write.commit)
write.flush = _all_or_fail(write.flush)
records.install()
metadata.list_ = _recording(metadata.list_, _fingerprints)
for _module in list(sys.modules.values()):  # every module that imported translate() or parse() by name
    if getattr(_module, "translate", None) is _emulator_translate:
        vars(_module)["translate"] = _translate
    if getattr(_module, "parse", None) is _emulator_parse:
        vars(_module)["parse"] = _parse

if __name__ == "__main__":
    from local_bigquery.cli import main  # imported after the patches: the gRPC server binds write.* on import

    sys.exit(main(sys.argv[1:]))
