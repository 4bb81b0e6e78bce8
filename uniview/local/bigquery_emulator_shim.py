"""Run the local BigQuery emulator (local-bigquery 0.3.2) with its Storage Write API made as strict and
as complete as BigQuery's on two points the spark-bigquery-connector depends on.  Executed by the
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
"""

from __future__ import annotations

import datetime
import sys
import threading
from collections.abc import Callable
from typing import Any

import duckdb
import grpc
from local_bigquery.errors import BigQueryError
from local_bigquery.grpc import write
from local_bigquery.grpc.read import StorageError
from local_bigquery.jobs import merge, query
from sqlglot import exp

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


query._execute = _execute
query._run = _run
merge.run = _merge
write._value = _value
write._insert = _insert
write.commit = _all_or_fail(write.commit)
write.flush = _all_or_fail(write.flush)

if __name__ == "__main__":
    from local_bigquery.cli import main  # imported after the patches: the gRPC server binds write.* on import

    sys.exit(main(sys.argv[1:]))
