"""Debezium change events (JSON, Kafka Connect's JsonConverter) read as uniview records.

`--format debezium` turns each event into uniview's own record before anything else happens, so
routing, versioning, typing, quarantine and accounting are those of every record:

- `payload.after` is the row (`payload.before` for `op = d`, landed with operation DELETE);
  `op` c/u/d/r/t becomes INSERT/UPDATE/DELETE/SNAPSHOT/TRUNCATE (a truncate, PostgreSQL's with
  `skipped.operations=none`, lands as one marker row with every column NULL: `<table>_current`
  leaves out the database's older rows);
- `source.db` is the database, `source.table` the table; `_cdc_position` is the PostgreSQL LSN
  (`lsn`) or the MySQL binlog `file:pos:row` (and `_cdc_sequence` their sortable form);
  `_cdc_timestamp` is `source.ts_ms`; the primary key is the message key's fields (Kafka only);
- the declared schema comes from the event's value schema (the `after` struct, needs
  `value.converter.schemas.enable=true`), each field mapped to a BigQuery type
  (TYPE_MAPPING below); the version hash is taken over those types with the usual spec;
- values are converted exactly: epoch days/millis/micros/nanos to dates, times and timestamps,
  Connect decimals from base64 two's complement with their scale;
- in files, a line may also be a Kafka message as `kcat -C -J` prints it (`topic`, `partition`,
  `offset`, `key` and `payload` as JSON text), which carries the message key.

A value the connector could not read (Debezium's `unavailable.value.placeholder`, by default
`__debezium_unavailable_value`: an unchanged TOASTed value under PostgreSQL's default replica
identity) never lands as data: the column lands NULL and its name is listed in
`metadata.unavailable` (landed as `_cdc_unavailable`).  The placeholder is recognised in every form
the connector sends it: the text itself (text, JSON, XML, enums), its bytes in base64 (bytea), a
one-element array of it (text[]), and an hstore of it; `hex:` settings are decoded as the connector
does.  docs/current-state.md says what the views show for such a column.

An event without a schema is refused, not guessed: it keeps its metadata and lands in the
quarantine as `missing_schema`.  A tombstone (a null value) stays a null line (skipped), and a
heartbeat (no `op`) stays as it is (quarantined with its reason), so read = written + quarantined +
skipped still holds exactly.  A MySQL/MariaDB schema-change event (its DDL text) lands in the control
table `_uniview_ddl` (uniview.core.ddl_renames), where the generator reads column renames; one that
concerns no table (no database, no `tableChanges`, only SET statements: the snapshot's
`SET character_set_server=...`) becomes a DDL record of no table, which the sink counts as skipped
(`schema_change_without_table`).
"""

from __future__ import annotations

import base64
import contextlib
import functools
import json
import re
import struct
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from uniview.core.default_literals import is_epoch
from uniview.core.types import decimal_type
from uniview.sink.debezium_names import repaired_name
from uniview.sink.default_values import SourceColumnType, stored_default

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

OPERATIONS = {"c": "INSERT", "u": "UPDATE", "d": "DELETE", "r": "SNAPSHOT", "t": "TRUNCATE"}
#: Debezium's default `unavailable.value.placeholder`.
UNAVAILABLE_PLACEHOLDER = "__debezium_unavailable_value"
#: A MySQL SET statement without parentheses (so without a subquery), as the snapshot records the server's
#: character set: `SET character_set_server=utf8mb4, collation_server=utf8mb4_general_ci`.
_SET_STATEMENT = re.compile(r"\s*SET\s[^;()]*;?\s*", re.IGNORECASE)
_EPOCH = datetime(1970, 1, 1)
#: (source.connector, Connect type) whose DEFAULT the connector never declares: PostgreSQL's for an array
#: (`integer[] DEFAULT '{7}'`; pinned by tests/kafka/test_debezium_connector_behaviour.py): nothing tells such a
#: column added with a default from one added without, so rows older than it are not known (docs/sources.md).
_DEFAULTS_NEVER_DECLARED = {("postgresql", "array")}
#: Schema names whose default is the epoch when the column's default is computed (PostgreSQL's and MySQL's
#: connectors write it in place of now(), CURRENT_TIMESTAMP and CURRENT_DATE).
_EPOCH_PLACEHOLDER_TYPES = frozenset(
    {
        "io.debezium.time.Date",
        "org.apache.kafka.connect.data.Date",
        "io.debezium.time.Timestamp",
        "io.debezium.time.MicroTimestamp",
        "io.debezium.time.NanoTimestamp",
        "org.apache.kafka.connect.data.Timestamp",
        "io.debezium.time.ZonedTimestamp",
    }
)
_NIL_UUID = "00000000-0000-0000-0000-000000000000"
_EPOCH_DAY = date(1970, 1, 1)

#: Connect primitive types -> BigQuery.
_PRIMITIVES = {
    "int8": "INT64",
    "int16": "INT64",
    "int32": "INT64",
    "int64": "INT64",
    "float": "FLOAT64",
    "float32": "FLOAT64",
    "double": "FLOAT64",
    "float64": "FLOAT64",
    "boolean": "BOOL",
    "string": "STRING",
    "bytes": "BYTES",
}


_DAY_MICROS = 86_400_000_000

#: The parameters of a field whose source type the connector propagates (`datatype.propagate.source.type`).
_SOURCE_TYPE = "__debezium.source.column.type"
_SOURCE_LENGTH = "__debezium.source.column.length"
_SOURCE_SCALE = "__debezium.source.column.scale"
#: Source types whose length is the most characters a value holds (a cast to a shorter one cuts the text).
_VARYING = frozenset({"VARCHAR", "CHARACTER VARYING"})
#: The longest varchar either source declares (PostgreSQL's 10,485,760; MySQL's 65,535): a larger length is the
#: connector's "no length" (an unbounded PostgreSQL `varchar`).
_MAX_VARYING_LENGTH = 10_485_760


#: Connect's 32-bit float (JsonConverter names it "float"): FLOAT64 holds each such value exactly.
_FLOAT32 = frozenset({"float", "float32"})


def _float32_value(value: Any) -> Any:
    """A 32-bit float as the exact FLOAT64 of the same value: the JSON carries its shortest decimal (3.4E38 for
    the float 3.3999999521443642e38), which read as a double is another number; the float's own value is what
    the source holds, and what it shows once the column is widened to double (docs/sink.md#debezium)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return value
    try:
        return struct.unpack("<f", struct.pack("<f", value))[0]
    except OverflowError:  # not a 32-bit float's value: as it was sent
        return value


def _micros_datetime(value: int, per_second: int) -> str:
    moment = _EPOCH + timedelta(microseconds=value * 1_000_000 // per_second)
    return moment.isoformat(sep=" ", timespec="microseconds")


def _time_of_day(value: int, per_second: int) -> str:
    """A time of day; a duration outside one day (MySQL's TIME runs from -838:59:59 to 838:59:59) is no TIME,
    and stays as it came, for the typing step to quarantine (never wrapped round midnight)."""
    micros = value * 1_000_000 // per_second
    if not 0 <= micros < _DAY_MICROS:
        raise ValueError(f"{value} is not a time of day")
    return (datetime.min + timedelta(microseconds=micros)).time().isoformat(timespec="microseconds")


def _zoned(value: str) -> str:
    return (
        datetime.fromisoformat(value.replace("Z", "+00:00")).astimezone(UTC).isoformat(sep=" ", timespec="microseconds")
    )


#: Connect and Debezium logical types -> (BigQuery type, value conversion).
TYPE_MAPPING: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "io.debezium.time.Date": ("DATE", lambda v: (_EPOCH_DAY + timedelta(days=v)).isoformat()),
    "org.apache.kafka.connect.data.Date": ("DATE", lambda v: (_EPOCH_DAY + timedelta(days=v)).isoformat()),
    "io.debezium.time.Timestamp": ("DATETIME", lambda v: _micros_datetime(v, 1_000)),
    "io.debezium.time.MicroTimestamp": ("DATETIME", lambda v: _micros_datetime(v, 1_000_000)),
    "io.debezium.time.NanoTimestamp": ("DATETIME", lambda v: _micros_datetime(v, 1_000_000_000)),
    "org.apache.kafka.connect.data.Timestamp": ("TIMESTAMP", lambda v: _micros_datetime(v, 1_000) + "+00:00"),
    "io.debezium.time.ZonedTimestamp": ("TIMESTAMP", _zoned),
    "io.debezium.time.Time": ("TIME", lambda v: _time_of_day(v, 1_000)),
    "io.debezium.time.MicroTime": ("TIME", lambda v: _time_of_day(v, 1_000_000)),
    "io.debezium.time.NanoTime": ("TIME", lambda v: _time_of_day(v, 1_000_000_000)),
    "org.apache.kafka.connect.data.Time": ("TIME", lambda v: _time_of_day(v, 1_000)),
    "io.debezium.time.ZonedTime": ("STRING", str),
    "io.debezium.time.Year": ("INT64", int),
    "io.debezium.data.Json": ("JSON", str),
    "io.debezium.data.Enum": ("STRING", str),
    "io.debezium.data.EnumSet": ("STRING", str),
    "io.debezium.data.Uuid": ("STRING", str),
    "io.debezium.data.Xml": ("STRING", str),
    "io.debezium.data.Bits": ("BYTES", str),
}


def _decimal_value(encoded: str, scale: int) -> str:
    unscaled = int.from_bytes(base64.b64decode(encoded), "big", signed=True)
    # built from its digits, exactly: Decimal arithmetic (scaleb) rounds to the context's 28 significant digits, so a
    # decimal(38,10) holding 9999999999999999999999999999.9999999999 became 1.000000000000000000000000000E+28
    # written out as PostgreSQL writes a numeric (0.0000001, not str()'s 1E-7), every digit of the scale kept
    return format(Decimal((int(unscaled < 0), tuple(map(int, str(abs(unscaled)))), -scale)), "f")


def field_type(field: dict) -> tuple[str, Callable[[Any], Any]]:
    """(BigQuery type, value conversion) of one Connect schema field."""
    name, kind = field.get("name"), field.get("type")
    if name == "org.apache.kafka.connect.data.Decimal":
        parameters = field.get("parameters") or {}
        scale = int(parameters.get("scale", 0))
        precision = int(parameters.get("connect.decimal.precision", 38))
        fitting = decimal_type(precision, scale)
        return (str(fitting) if fitting else "STRING"), lambda v: _decimal_value(v, scale)
    if name == "io.debezium.data.VariableScaleDecimal":
        return "STRING", lambda v: _decimal_value(v["value"], int(v["scale"]))
    if name in TYPE_MAPPING:
        return TYPE_MAPPING[name]
    if kind == "array":
        element, convert = field_type(field.get("items") or {})
        return f"ARRAY<{element}>", lambda v: [None if x is None else convert(x) for x in v]
    if kind == "struct":
        return _struct_type(field.get("fields") or [])
    if kind in _FLOAT32:
        return "FLOAT64", _float32_value
    if kind == "string":
        return _string_type(field.get("parameters")), (lambda v: v)
    if kind in _PRIMITIVES:
        return _PRIMITIVES[kind], (lambda v: v)
    raise ValueError(f"unsupported Kafka Connect type {name or kind!r}")


def source_column_type(parameters: object) -> SourceColumnType | None:
    """The column's source type as the connector propagates it (`datatype.propagate.source.type`), or None."""
    if not isinstance(parameters, dict) or not isinstance(parameters.get(_SOURCE_TYPE), str):
        return None
    length, scale = str(parameters.get(_SOURCE_LENGTH, "")), str(parameters.get(_SOURCE_SCALE, ""))
    return SourceColumnType(
        parameters[_SOURCE_TYPE].upper(),
        int(length) if length.isdigit() else None,
        int(scale) if scale.isdigit() else None,
    )


def _string_type(parameters: object) -> str:
    """STRING, or STRING(n) for a `varchar(n)` whose source type the connector propagates
    (`datatype.propagate.source.type`): the length is part of the version, so a change of it (PostgreSQL's
    `text` -> `varchar(20)`, which cuts longer values) is a new version (docs/sources.md)."""
    if not isinstance(parameters, dict):
        return "STRING"
    source_type = str(parameters.get(_SOURCE_TYPE, "")).upper()
    length = str(parameters.get(_SOURCE_LENGTH, ""))
    if source_type in _VARYING and length.isdigit() and 0 < int(length) <= _MAX_VARYING_LENGTH:
        return f"STRING({int(length)})"
    return "STRING"


def _struct_type(fields: list[dict]) -> tuple[str, Callable[[Any], Any]]:
    mapped = [(f["field"], *field_type(f)) for f in fields]
    text = "STRUCT<" + ", ".join(f"`{name}` {bq}" for name, bq, _ in mapped) + ">"
    return text, lambda v: {name: (None if v.get(name) is None else conv(v[name])) for name, _, conv in mapped}


def _row_schema(schema: object) -> list[dict] | None:
    """The fields of the value schema's `after` struct; None when the schema has no such list."""
    fields = schema.get("fields") if isinstance(schema, dict) else None
    for field in fields if isinstance(fields, list) else []:
        if isinstance(field, dict) and field.get("field") == "after":
            row_fields = field.get("fields")
            return row_fields if isinstance(row_fields, list) else None
    return None


def _timestamp(ts_ms: object) -> str | None:
    """`source.ts_ms` as an ISO timestamp; milliseconds past year 9999 stay a number, which the sink
    quarantines as invalid_metadata (metadata.timestamp is not a timestamp)."""
    if not isinstance(ts_ms, int) or isinstance(ts_ms, bool):
        return None
    try:
        return (_EPOCH + timedelta(milliseconds=ts_ms)).isoformat() + "Z"
    except OverflowError:
        return str(ts_ms)


def position(source: dict) -> str | None:
    """Where the change sits in the source's log: the PostgreSQL LSN, or MySQL's binlog file:pos:row."""
    if source.get("lsn") is not None:
        return str(source["lsn"])
    if source.get("file") is not None:
        return f"{source['file']}:{source.get('pos')}:{source.get('row', 0)}"
    return None


def key_columns(key_text: str | None) -> list[str] | None:
    """The primary key's column names from the Kafka message key: the fields of its schema
    (`schemas.enable`), else the names of its payload object; None when there is no usable key."""
    try:
        key = json.loads(key_text) if key_text else None
    except (ValueError, TypeError, RecursionError):
        return None
    if isinstance(key, dict) and isinstance(key.get("schema"), dict) and "payload" in key:
        # Connect's JsonConverter names a field `field`; Debezium's documentation shows `name` too
        fields = key["schema"].get("fields")
        names = (
            [f.get("field", f.get("name")) for f in fields if isinstance(f, dict)] if isinstance(fields, list) else []
        )
    elif isinstance(key, dict):
        names = list(key)
    else:
        return None
    texts = [repaired_name(name) for name in names if isinstance(name, str) and name]
    return texts if texts and len(texts) == len(names) else None


def placeholder_forms(setting: str = UNAVAILABLE_PLACEHOLDER) -> frozenset[str]:
    """The texts a placeholder setting (`unavailable.value.placeholder`: text, or `hex:` and hex digits)
    appears as in a JSON event: itself (string columns) and its bytes in base64 (bytes columns)."""
    raw = bytes.fromhex(setting[4:]) if setting[:4].lower() == "hex:" else setting.encode("utf-8")
    forms = {base64.b64encode(raw).decode("ascii")}
    with contextlib.suppress(UnicodeDecodeError):
        forms.add(raw.decode("utf-8"))
    return frozenset(forms)


_DEFAULT_FORMS = placeholder_forms()


def _is_unavailable(value: Any, forms: frozenset[str]) -> bool:
    """True for a placeholder: a text form, a one-element list of one (arrays of strings), or a map or
    JSON object text whose keys and values are all the placeholder (hstore)."""
    if isinstance(value, str):
        return value in forms or (value.startswith("{") and _is_placeholder_map(value, forms))
    if isinstance(value, list):
        return len(value) == 1 and isinstance(value[0], str) and value[0] in forms
    if isinstance(value, dict):
        return bool(value) and all(k in forms and v in forms for k, v in value.items())
    return False


def _is_placeholder_map(text: str, forms: frozenset[str]) -> bool:
    try:
        value = json.loads(text)
    except ValueError:
        return False
    return isinstance(value, dict) and bool(value) and all(k in forms and v in forms for k, v in value.items())


#: The line an event naming a key twice becomes: its top level names a key twice, so the sink quarantines it as
#: duplicate_key (reasons.DUPLICATE_KEY) and keeps the event as read (frames.ORIGINAL_LINE) in raw_line.
REPEATED_KEY_LINE = '{"repeated_key": null, "repeated_key": null}'


class RepeatedKeyError(ValueError):
    """A JSON object of the event names the same key more than once."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object, refused (RepeatedKeyError) when it names a key twice: which value was meant is
    unknowable, so such an event is not converted but quarantined as duplicate_key (REPEATED_KEY_LINE)."""
    value = dict(pairs)
    if len(value) != len(pairs):
        raise RepeatedKeyError("a JSON object names the same key more than once")
    return value


def _repeated_key_line(text: str) -> str:
    """REPEATED_KEY_LINE for an event that names a key twice; a uniview record (an object with metadata) stays
    as it is, for the sink's own rules (duplicate_key at its top level or in its metadata, invalid_data in its
    data)."""
    value = json.loads(text)
    return text if isinstance(value, dict) and "metadata" in value else REPEATED_KEY_LINE


def _field_name(field: dict) -> str:
    """A Connect field's name; TypeError when it is not a non-empty text (a schema Connect would not write)."""
    name = field["field"]
    if not isinstance(name, str) or not name:
        raise TypeError(f"a field name that is not a text: {name!r}")
    return name


def _record_text(record: dict[str, Any]) -> str:
    """The converted record as JSON text.  Text that UTF-8 cannot carry (a lone surrogate, which JSON's
    `\\ud800` escapes allow) stays escaped, as it came."""
    text = json.dumps(record, ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(record)
    return text


def _never_raises(convert: Callable[..., str | None]) -> Callable[..., str | None]:
    """`convert`, returning the event unchanged where it raises: an event it cannot read then lands in the
    quarantine with the usual accounting.  The conversion runs in a Spark UDF, where an exception fails the
    whole job, so one odd message (nested a few thousand levels deep, or of a shape no check foresaw) would
    stop a stream for good."""

    @functools.wraps(convert)
    def total(text: str | None, *args: Any, **kwargs: Any) -> str | None:
        try:
            return convert(text, *args, **kwargs)
        except Exception:
            return text

    return total


@_never_raises
def convert_event(text: str | None, key_text: str | None = None, placeholder: str | None = None) -> str | None:
    """One Debezium event (JSON text) as a uniview record (JSON text); anything else unchanged.
    The primary key comes from the message key (`key_text`), when there is one; `placeholder` is the
    connector's `unavailable.value.placeholder` (None: Debezium's default)."""
    if text is None:
        return None
    try:
        event = json.loads(text, object_pairs_hook=_unique_keys)
    except RepeatedKeyError:
        return _repeated_key_line(text)
    except (ValueError, RecursionError):  # not JSON, or nested past Python's recursion limit
        return text
    if not isinstance(event, dict):
        return text
    if _is_kcat_message(event):
        return convert_event(event["payload"], event.get("key"), placeholder)
    payload = event.get("payload") if "payload" in event and "schema" in event else event
    if isinstance(payload, dict) and "op" not in payload and isinstance(payload.get("ddl"), str):
        return _ddl_record(payload) or text
    if not isinstance(payload, dict) or not isinstance(payload.get("op"), str) or payload["op"] not in OPERATIONS:
        return text
    source = payload.get("source") or {}
    if not isinstance(source, dict):  # not an event Debezium writes: read as it is (and quarantined)
        return text
    row = payload.get("before") if payload["op"] == "d" else payload.get("after")
    if payload["op"] == "t":
        row = {}  # a truncate carries no row: it lands as a marker whose columns are all NULL
    metadata = {
        "ingestion_method": f"DEBEZIUM_{str(source.get('connector', '')).upper()}",
        "database_name": source.get("db"),
        "table_name": repaired_name(source["table"]) if isinstance(source.get("table"), str) else source.get("table"),
        "operation": OPERATIONS[payload["op"]],
        "position": position(source),
        "timestamp": _timestamp(source.get("ts_ms")),
    }
    primary_key = key_columns(key_text)
    if primary_key is not None:
        metadata["primary_key"] = primary_key
    fields = _row_schema(event.get("schema")) if payload is not event else None
    data = row
    if fields is not None and isinstance(row, dict):
        try:
            typed = [(_field_name(f), *field_type(f)) for f in fields]
        # a schema Connect would not write: none
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
            typed = None
        if typed is not None:
            connector = str(source.get("connector", ""))
            metadata["schema"] = [
                _schema_entry(f, repaired_name(name), bq_type, convert, connector)
                for f, (name, bq_type, convert) in zip(fields, typed, strict=True)
            ]
            forms = _DEFAULT_FORMS if placeholder is None else placeholder_forms(placeholder)
            unavailable = [name for name, _, _ in typed if _is_unavailable(row.get(name), forms)]
            data = {
                repaired_name(name): None if name in unavailable else _converted(convert, row.get(name))
                for name, _, convert in typed
            }
            if unavailable:
                metadata["unavailable"] = [repaired_name(name) for name in unavailable]
    return _record_text({"data": data, "metadata": metadata})


def _schema_entry(
    field: dict, name: str, bq_type: str, convert: Callable[[Any], Any], connector: str
) -> dict[str, Any]:
    """One metadata.schema entry: the column's name and type, its default converted like its values (the
    connectors put a column's default in the value schema) and stored as the source stores it in the column
    (uniview.sink.default_values.stored_default), or `default_volatile: true` where that default is the
    connector's placeholder for one computed when a row is written or the connector never declares one (so
    the value older rows hold is not known either), and `nullable: false` for a column that is not optional."""
    entry: dict[str, Any] = {"name": name, "type": bq_type}
    if field.get("default") is None and (connector, field.get("type")) in _DEFAULTS_NEVER_DECLARED:
        entry["default_volatile"] = True
    elif field.get("default") is not None:
        default = _converted(convert, field["default"])
        column_type = source_column_type(field.get("parameters"))
        if _is_computed_placeholder(field.get("name"), default):
            entry["default_volatile"] = True
        elif isinstance(default, str) and column_type is not None:
            entry["default"] = stored_default(default, connector, column_type)
        else:
            entry["default"] = default
    if field.get("optional") is False:
        entry["nullable"] = False
    return entry


def _is_computed_placeholder(schema_name: Any, default: Any) -> bool:
    """The default is what the connectors write for a default computed when a row is written: the epoch for
    a date or timestamp (now(), CURRENT_TIMESTAMP, CURRENT_DATE; and MySQL's zero date in a NOT NULL
    column, which no value can stand for either), the nil UUID for a uuid (gen_random_uuid())."""
    if not isinstance(default, str):
        return False
    if schema_name in _EPOCH_PLACEHOLDER_TYPES:
        return is_epoch(default)
    return schema_name == "io.debezium.data.Uuid" and default == _NIL_UUID


def _ddl_record(payload: dict) -> str | None:
    """A MySQL/MariaDB schema-change event as a record of the control table `_uniview_ddl`
    (uniview.core.ddl_renames), which the generator reads renames from; None without a source object.
    An event that concerns no table becomes a record with no table_name and no database_name, which the
    sink skips (reasons.SCHEMA_CHANGE_WITHOUT_TABLE)."""
    from uniview.core.ddl_renames import DDL_COLUMN, DDL_TABLE

    source = payload.get("source")
    if not isinstance(source, dict):
        return None
    database = payload.get("databaseName") or source.get("db")
    if _concerns_no_table(payload, source):
        of_no_table = {
            "ingestion_method": f"DEBEZIUM_{str(source.get('connector', '')).upper()}",
            "operation": "DDL",
            "position": position(source),
        }
        return _record_text({"data": {DDL_COLUMN: payload["ddl"]}, "metadata": of_no_table})
    metadata = {
        "ingestion_method": f"DEBEZIUM_{str(source.get('connector', '')).upper()}",
        "database_name": database if isinstance(database, str) else None,
        "table_name": DDL_TABLE,
        "operation": "DDL",
        "position": position(source),
        "timestamp": _timestamp(source.get("ts_ms")),
        "schema": [{"name": DDL_COLUMN, "type": "STRING"}],
    }
    return _record_text({"data": {DDL_COLUMN: payload["ddl"]}, "metadata": metadata})


def _concerns_no_table(payload: dict, source: dict) -> bool:
    """A schema-change event of no table and no database: an empty or absent `tableChanges`, no `databaseName`,
    `source.db` or `source.table`, and DDL that is one SET statement naming no table.  MySQL's and
    MariaDB's snapshot records the server's character set so (`SET character_set_server=...,
    collation_server=...` with `"databaseName": ""`).  Any other event, however malformed, is not this."""
    if payload.get("tableChanges") not in (None, []):
        return False
    if payload.get("databaseName") or source.get("db") or source.get("table"):
        return False
    return _only_set_statements(payload["ddl"])


def _only_set_statements(ddl: str) -> bool:
    """`ddl` is one SET statement with no parentheses: no subquery, so nothing in it can name a table (a text
    this does not read, such as several statements or a quoted `;`, is not one).  A regular expression, not a
    parser: the conversion runs in Spark's Python workers, which have only the standard library for certain."""
    return _SET_STATEMENT.fullmatch(ddl) is not None


def _is_kcat_message(event: dict) -> bool:
    """A Kafka message as `kcat -C -J` prints it: topic, partition, offset, and key and value as text."""
    return {"topic", "partition", "offset", "payload"} <= event.keys() and (
        event["payload"] is None or isinstance(event["payload"], str)
    )


def _converted(convert: Callable[[Any], Any], value: Any) -> Any:
    """The converted value; a value that does not fit its schema stays as it is, for the typing step to
    quarantine the record as type_mismatch."""
    if value is None:
        return None
    try:
        return convert(value)
    except (ValueError, TypeError, KeyError, OverflowError, AttributeError, RecursionError):
        return value


def debezium_lines(lines: DataFrame, placeholder: str | None = None) -> DataFrame:
    """The sink's lines with every Debezium event's value rewritten as a uniview record (`placeholder`:
    the connector's `unavailable.value.placeholder`, None for Debezium's default)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    from uniview.sink.frames import ORIGINAL_LINE

    converted = F.udf(lambda text, key: convert_event(text, key, placeholder), T.StringType())
    return lines.withColumn(ORIGINAL_LINE, F.col("value")).withColumn("value", converted(F.col("value"), F.col("key")))
