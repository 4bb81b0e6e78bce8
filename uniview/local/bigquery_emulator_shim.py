"""Run the local BigQuery emulator (local-bigquery 0.3.2) with its Storage Write API made as strict and
as complete as BigQuery's on two points the spark-bigquery-connector depends on.  Executed by the
emulator's own interpreter (`<venv>/bin/python bigquery_emulator_shim.py serve ...`), never imported
by uniview.

1. DATETIME and TIME values may arrive as packed int64 (the encoding of BigQuery's CivilTimeEncoder,
   which the connector uses): https://cloud.google.com/bigquery/docs/write-api#data_type_conversions.
   The emulator decodes only TIMESTAMP and DATE integers.
2. BatchCommitWriteStreams and FlushRows must either make every row visible or fail.  The emulator
   dropped the rows it could not insert and reported success: here it reports the error instead.
"""

from __future__ import annotations

import datetime
import sys
import threading
from collections.abc import Callable
from typing import Any

import grpc
from local_bigquery.grpc import write
from local_bigquery.grpc.read import StorageError

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


write._value = _value
write._insert = _insert
write.commit = _all_or_fail(write.commit)
write.flush = _all_or_fail(write.flush)

if __name__ == "__main__":
    from local_bigquery.cli import main  # imported after the patches: the gRPC server binds write.* on import

    sys.exit(main(sys.argv[1:]))
