"""The batch as DataFrames: envelopes, routing decisions joined back, staged frames.

All per-row work is native Spark (from_json, map lookups, casts, regular expressions);
Python only runs on the driver over the few distinct routing keys.  A staged frame holds the
typed rows of many versions at once plus the quarantine rows, so one Spark job stages a whole
batch.  Rows are typed per *shape* (a version's columns; one version landing in a thousand
datasets is one shape) into typed columns that the shapes share by type (uniview.sink.slots), so
the work per row does not grow with the number of versions in the batch.  Typed columns are
named `x0`, `x1`, ... because Parquet and Spark restrict column names that MySQL allows;
warehouses rename them when loading.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import datetime

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from uniview.sink import reasons
from uniview.sink.routing import LandingColumn, RecordKey, RoutingPlan, distinct_shapes, route_shapes
from uniview.sink.sequence import sequence_column
from uniview.sink.slots import Shape, Slot, slot_positions
from uniview.sink.spark_types import carrier_type, parse_may_fail, typed_value, utc_timestamp, without_null_elements
from uniview.sink.value_patterns import METADATA_TIMESTAMP

_TEXT = T.StringType()
#: The fields of a record's metadata object, each read as text.
METADATA_FIELDS = (
    "ingestion_method",
    "database_name",
    "table_name",
    "table_version",
    "schema",
    "operation",
    "position",
    "timestamp",
    "primary_key",
    "unavailable",
)
#: metadata.unavailable as the sink accepts it: a JSON list of strings (Spark's parse would read 1 as "1").
_LIST_OF_STRINGS = r'^\s*\[\s*("([^"\\]|\\.)*"\s*(,\s*"([^"\\]|\\.)*"\s*)*)?\]\s*$'
METADATA_SCHEMA = T.StructType([T.StructField(name, _TEXT) for name in METADATA_FIELDS])
_CORRUPT = "_uniview_corrupt_line"
#: Each line is parsed once with `data` as a map of its keys to their values as text, so typing a
#: column is a lookup; a line whose `data` is not an object is parsed again for its metadata alone.
_DATA_TYPE = T.MapType(_TEXT, _TEXT)
ENVELOPE_SCHEMA = T.StructType(
    [
        T.StructField("data", _DATA_TYPE),
        T.StructField("metadata", METADATA_SCHEMA),
        T.StructField(_CORRUPT, _TEXT),
    ]
)
_METADATA_ENVELOPE_SCHEMA = T.StructType([T.StructField("metadata", METADATA_SCHEMA), T.StructField(_CORRUPT, _TEXT)])
KEY_COLUMNS = ("_database", "_table", "_version", "_schema", "_primary_key")
_DECISION_SCHEMA = T.StructType(
    [
        *[T.StructField(f"k{name}", _TEXT) for name in KEY_COLUMNS],
        T.StructField("_target", _TEXT),
        T.StructField("_route", T.IntegerType()),
        T.StructField("_shape", T.IntegerType()),
        T.StructField("_reject", _TEXT),
        T.StructField("_reject_detail", _TEXT),
        T.StructField("_resolved_version", _TEXT),
        *[T.StructField(name, T.ArrayType(_TEXT)) for name in ("_slot_keys", "_slot_labels", "_names")],
        T.StructField("_slot_positions", T.ArrayType(T.IntegerType())),
    ]
)
#: Columns of the quarantine table and their BigQuery types.
QUARANTINE_COLUMNS = (
    ("raw_line", "STRING"),
    ("reason", "STRING"),
    ("detail", "STRING"),
    ("source_file", "STRING"),
    ("table_name", "STRING"),
    ("table_version", "STRING"),
    ("batch", "STRING"),
    ("quarantined_at", "TIMESTAMP"),
    # The line exactly as read (NULL when larger than the warehouse takes in a row: MAX_RAW_BYTES), its length
    # in bytes and its SHA-256 (hex): docs/bad-records.md turns them back into the input.
    ("raw_bytes", "BYTES"),
    ("raw_size", "INT64"),
    ("raw_sha256", "STRING"),
)
#: The largest line BigQuery's quarantine keeps: a Storage Write API request, one row at least, must be under
#: 10 MB, and the row holds the line twice (raw_line, raw_bytes): together at most twice this (for a line that
#: is not UTF-8, its text with U+FFFD takes more than its bytes).  A larger line is quarantined as too_large,
#: with its size, SHA-256 and source_file but not its bytes.
MAX_RAW_BYTES = 4 * 1024 * 1024


#: A column of lines whose `value` was rewritten (Debezium): the text as read, kept for the quarantine.
ORIGINAL_LINE = "_original_line"
#: A column of lines: the bytes of a line that is not UTF-8, exactly as read (NULL for every other line, whose
#: text is its bytes).  Such a line's `value` is its text with U+FFFD for each invalid sequence.
LINE_BYTES = "_bytes"


def checked_lines(lines: DataFrame) -> DataFrame:
    """`lines` (value, ...) with LINE_BYTES, and `value` made valid UTF-8 where it was not.  Spark's text and
    Kafka sources hand on a line's bytes as they are, which a Parquet reader (DuckDB) refuses as a string and
    a JSON parser would read with U+FFFD in place of the bytes: the sink quarantines such a line as not_utf8
    and keeps its bytes."""
    raw = F.col("value").cast("binary")
    decoded = F.decode(raw, "UTF-8")  # Java's decoder: U+FFFD for each malformed sequence
    not_utf8 = F.encode(decoded, "UTF-8") != raw
    others = [F.col(name) for name in lines.columns if name not in ("value", LINE_BYTES)]
    return lines.select(
        F.when(not_utf8, decoded).otherwise(F.col("value")).alias("value"),
        *others,
        F.when(not_utf8, raw).alias(LINE_BYTES),
    )


def raw_bytes(line: Column, line_bytes: Column) -> Column:
    """The bytes of a line as read: its text's UTF-8 bytes, or LINE_BYTES for a line that is not UTF-8."""
    return F.coalesce(line_bytes, F.encode(line, "UTF-8"))


#: The details of the not_utf8 and too_large reasons (the latter followed by the line's size in bytes).
NOT_UTF8_DETAIL = "the line is not valid UTF-8 (raw_bytes keeps it as read)"
TOO_LARGE_DETAIL = "the line is too large to keep in the quarantine (raw_size, raw_sha256 and source_file name it): "


def parse_envelopes(lines: DataFrame, with_data: bool = True, max_line_bytes: int | None = None) -> DataFrame:
    """(value, source_file) lines -> envelope columns plus `_reason` for lines that are not records.
    `_data` is the data object as a map (NULL when data is missing or not an object, and on every row
    when not `with_data`: the routing pass needs only the metadata, which parses the same either way),
    `_value` the line the envelope was parsed from (for the columns parsed exactly, see _parse_exact).
    The quarantine keeps the line as read (ORIGINAL_LINE when the value was rewritten, and its bytes:
    LINE_BYTES); a line whose text and bytes take more than twice `max_line_bytes` is too_large."""
    options = {"columnNameOfCorruptRecord": _CORRUPT}
    original = F.col(ORIGINAL_LINE) if ORIGINAL_LINE in lines.columns else F.col("value")
    line_bytes = F.col(LINE_BYTES) if LINE_BYTES in lines.columns else F.lit(None).cast("binary")
    columns: list[Column | str] = [
        original.alias("_line"),
        "value",
        F.col("value").isNull().alias("_null_value"),
        "source_file",
        line_bytes.alias("_line_bytes"),
    ]
    metadata_only = F.from_json("value", _METADATA_ENVELOPE_SCHEMA, options)
    if with_data:
        parsed = lines.select(*columns, F.from_json("value", ENVELOPE_SCHEMA, options).alias("m"))
        not_a_map = F.col("m").isNull() | F.col(f"m.{_CORRUPT}").isNotNull()
        envelope = parsed.select(
            "*",
            F.when(not_a_map, metadata_only)
            .otherwise(F.struct(F.col("m.metadata").alias("metadata"), F.col(f"m.{_CORRUPT}").alias(_CORRUPT)))
            .alias("e"),
            F.col("m.data").alias("_data"),
        )
    else:
        envelope = lines.select(*columns, metadata_only.alias("e"), F.lit(None).cast(_DATA_TYPE).alias("_data"))
    meta = F.col("e.metadata")
    unparseable = F.col("e").isNull() | F.col(f"e.{_CORRUPT}").isNotNull()
    size = F.coalesce(F.octet_length("_line_bytes"), F.octet_length("_line"))
    # the quarantine row holds the line twice: as text (U+FFFD, 3 bytes, for each byte of a line that is not UTF-8)
    # and as bytes
    kept = F.octet_length("_line") + size
    too_large = F.lit(False) if max_line_bytes is None else kept > 2 * max_line_bytes
    return envelope.select(
        "_line",
        "_line_bytes",
        F.col("value").alias("_value"),
        F.col("source_file").alias("_source_file"),
        "_data",
        meta["database_name"].alias("_database"),
        meta["table_name"].alias("_table"),
        meta["table_version"].alias("_version"),
        meta["schema"].alias("_schema"),
        meta["ingestion_method"].alias("_cdc_ingestion_method"),
        meta["operation"].alias("_cdc_operation"),
        meta["position"].alias("_cdc_position"),
        meta["timestamp"].alias("_timestamp_text"),
        meta["database_name"].alias("_cdc_database"),
        sequence_column(meta["position"]).alias("_cdc_sequence"),
        meta["primary_key"].alias("_primary_key"),
        meta["unavailable"].alias("_unavailable_text"),
        F.when(meta["unavailable"].rlike(_LIST_OF_STRINGS), F.from_json(meta["unavailable"], T.ArrayType(_TEXT))).alias(
            "_cdc_unavailable"
        ),
        F.when(meta["timestamp"].rlike(METADATA_TIMESTAMP), utc_timestamp(meta["timestamp"])).alias("_cdc_timestamp"),
        F.when(F.col("_null_value"), F.lit(reasons.TOMBSTONE))
        .when(F.col("_line_bytes").isNotNull(), F.lit(reasons.NOT_UTF8))
        .when(too_large, F.lit(reasons.TOO_LARGE))
        .when(unparseable, F.lit(reasons.UNPARSEABLE))
        .when(meta.isNull(), F.lit(reasons.MISSING_METADATA))
        .alias("_reason"),
        F.when(F.col("_null_value"), F.lit("a message with a null value (tombstone)"))
        .when(F.col("_line_bytes").isNotNull(), F.lit(NOT_UTF8_DETAIL))
        .when(too_large, F.concat(F.lit(TOO_LARGE_DETAIL), size.cast("string"), F.lit(" bytes")))
        .when(unparseable, F.lit("the line is not a JSON object"))
        .when(meta.isNull(), F.lit("no metadata object"))
        .alias("_envelope_detail"),
    )


def distinct_keys(envelopes: DataFrame) -> tuple[int, dict[RecordKey, datetime | None]]:
    """(lines read, routing keys), in one pass: the keys of the records (lines with an envelope-level
    reason left out), each with the earliest metadata.timestamp among its records."""
    rows = (
        envelopes.groupBy(*KEY_COLUMNS, F.col("_reason").isNull().alias("_record"))
        .agg(F.count(F.lit(1)).alias("_lines"), F.min("_cdc_timestamp").alias("_first"))
        .collect()
    )
    keys = {RecordKey(*row[:5]): row["_first"] for row in rows if row["_record"]}
    return sum(row["_lines"] for row in rows), keys


def attach_decisions(
    spark: SparkSession, envelopes: DataFrame, plan: RoutingPlan, fallback_dataset: str, slots: Sequence[Sequence[Slot]]
) -> DataFrame:
    """Join each row to its key's decision: `_dataset`, `_route`, `_shape` (routing.route_shapes), `_reason`,
    `_detail`, `_resolved_version`, the typed `_cdc_timestamp` (a metadata.timestamp that is not a
    timestamp is invalid_metadata), and where its shape's columns are staged (`slots`: the slots of each
    staged frame, uniview.sink.slots): `_slot_keys`/`_slot_labels`/`_slot_positions` per slot of the
    row's frame, `_names` the shape's column names."""
    shape_of, shapes = route_shapes(plan.routes), distinct_shapes(plan.routes)
    staged = {shape: positions for frame in slots for shape, positions in slot_positions(frame).items()}
    layout = [_shape_layout(columns, staged.get(shape, [])) for shape, columns in enumerate(shapes)]
    rows = [
        (
            k.database_name,
            k.table_name,
            k.table_version,
            k.schema_text,
            k.primary_key_text,
            d.dataset,
            d.route,
            None if d.route is None else shape_of[d.route],
            d.reason,
            d.detail,
            d.version,
            *((None,) * 4 if d.route is None else layout[shape_of[d.route]]),
        )
        for k, d in plan.decisions.items()
    ]
    decisions = local_frame(spark, rows, _DECISION_SCHEMA)
    condition = None
    for name in KEY_COLUMNS:
        clause = envelopes[name].eqNullSafe(decisions[f"k{name}"])
        condition = clause if condition is None else condition & clause
    joined = envelopes.join(F.broadcast(decisions), condition, "left")
    text = F.col("_timestamp_text")
    bad_timestamp = text.isNotNull() & F.col("_cdc_timestamp").isNull()
    unavailable = F.col("_unavailable_text")
    bad_unavailable = unavailable.isNotNull() & F.col("_cdc_unavailable").isNull()
    unrouted = F.col("_route").isNull()
    reason = F.coalesce(
        F.col("_reason"),
        F.col("_reject"),
        F.when(bad_timestamp | bad_unavailable, F.lit(reasons.INVALID_METADATA)),
        F.when(unrouted, F.lit(reasons.INPUT_CHANGED)),
    )
    detail = (
        F.when(F.col("_reason").isNotNull(), F.col("_envelope_detail"))
        .when(F.col("_reject").isNotNull(), F.col("_reject_detail"))
        .when(bad_timestamp, F.concat(F.lit("metadata.timestamp is not a timestamp: "), text))
        .when(bad_unavailable, F.concat(F.lit("metadata.unavailable is not a list of column names: "), unavailable))
        .when(unrouted, F.lit("this record was not read when the batch was routed"))
    )
    return joined.select(
        "_line",
        "_line_bytes",
        "_value",
        "_source_file",
        "_data",
        "_table",
        "_cdc_ingestion_method",
        "_cdc_operation",
        "_cdc_position",
        "_cdc_timestamp",
        "_cdc_database",
        "_cdc_sequence",
        "_cdc_unavailable",
        F.coalesce("_target", F.lit(fallback_dataset)).alias("_dataset"),
        "_route",
        "_shape",
        reason.alias("_reason"),
        detail.alias("_detail"),
        F.coalesce("_resolved_version", "_version").alias("_resolved_version"),
        "_slot_keys",
        "_slot_labels",
        "_names",
        "_slot_positions",
    )


def local_frame(spark: SparkSession, rows: Sequence[tuple], schema: T.StructType) -> DataFrame:
    """`rows` of `schema` as a DataFrame the JVM builds from one JSON text (spark.createDataFrame would
    pickle them for a Python worker process to read back).  FAILFAST: a row that does not fit the
    schema is an error, never a missing decision."""
    text = json.dumps([dict(zip(schema.fieldNames(), row, strict=True)) for row in rows])
    parsed = F.from_json(F.lit(text), T.ArrayType(schema), {"mode": "FAILFAST"})
    return spark.range(1, numPartitions=1).select(F.inline(parsed))


def _shape_layout(columns: Shape, positions: list[int | None]) -> tuple[list, list, list, list]:
    """A decision row's `_slot_keys`, `_slot_labels`, `_names` and `_slot_positions` for one shape."""

    def each(value: Callable[[LandingColumn], str]) -> list:
        return [None if position is None else value(columns[position]) for position in positions]

    return each(lambda c: c.name), each(lambda c: c.label), [c.name for c in columns], positions


def staged_frame(
    routed: DataFrame,
    shapes: Sequence[Shape],
    chunk: list[int],
    slots: Sequence[Slot],
    with_rejected: bool,
    batch: str,
    at: datetime,
) -> DataFrame:
    """One frame for the rows whose shape is in `chunk` (and, when `with_rejected`, the rows rejected
    before typing).  `shapes[k]` is the columns of shape k (routing.route_shapes), `slots` the chunk's
    typed columns (slots.assign_slots).

    Columns: `_route` (-1 for rows without one), `_reason`/`_detail` (NULL for rows to write), one
    typed column per slot (its member column of the row's shape, NULL when the shape has none), the
    _cdc_ columns, and the quarantine columns (`raw_line`, ..., `quarantined_at`, `_dataset`).  Each
    step is its own projection, so every expression is computed once per row.  Which key of `_data` a
    slot reads comes with the row (attach_decisions), so the expressions do not grow with the number of
    shapes, except the exact parses of the few shapes that need them."""
    shape, ok = F.col("_shape"), F.col("_reason").isNull()
    member = shape.isin(chunk) if chunk else F.lit(False)
    rows = routed.where(member | shape.isNull() if with_rejected else member)
    looked_up = rows.select(
        "*",
        F.when(ok & shape.isNotNull(), F.map_keys("_data")).alias("_keys"),
        *[_parse_exact(shapes[k], k, ok) for k in chunk if _exact_columns(shapes[k])],
        *[F.element_at("_data", F.col("_slot_keys")[number]).alias(_raw(slot)) for number, slot in enumerate(slots)],
    )
    typed = looked_up.select(
        "*",
        *[_slot_value(slot, shapes).alias(slot.column) for slot in slots],
        # how many of the shape's columns the data names: fewer than its keys means an unknown or repeated key
        F.size(F.array_intersect("_keys", "_names")).alias("_declared"),
    )
    flags = F.array(*_misfits(slots)) if slots else F.array().cast("array<boolean>")
    misfits = typed.select("*", flags.alias("_misfits"))
    judged = misfits.select("*", F.coalesce(F.col("_reason"), _data_reason()).alias("_final_reason"))
    bad = F.col("_final_reason").isNotNull()
    keep = F.col("_final_reason") != F.lit(reasons.TOO_LARGE)
    with_raw = judged.select("*", F.when(bad, raw_bytes(F.col("_line"), F.col("_line_bytes"))).alias("_raw"))
    detail = F.when(bad, F.coalesce(F.col("_detail"), _data_detail(len(slots))))
    return with_raw.select(
        F.coalesce("_route", F.lit(-1)).alias("_route"),
        F.col("_final_reason").alias("_reason"),
        detail.alias("_detail"),
        # a quarantined row's values are not written: left out, they keep a too_large line out of the staging row
        *[F.when(~bad, F.col(slot.column)).alias(slot.column) for slot in slots],
        "_cdc_ingestion_method",
        "_cdc_operation",
        "_cdc_position",
        "_cdc_timestamp",
        F.lit(at).cast("timestamp").alias("_cdc_ingested_at"),
        "_cdc_database",
        "_cdc_sequence",
        "_cdc_unavailable",
        F.when(bad & keep, F.col("_line")).alias("raw_line"),
        F.col("_final_reason").alias("reason"),
        detail.alias("detail"),
        F.when(bad, F.col("_source_file")).alias("source_file"),
        F.col("_table").alias("table_name"),
        F.col("_resolved_version").alias("table_version"),
        F.lit(batch).alias("batch"),
        F.lit(at).cast("timestamp").alias("quarantined_at"),
        F.when(bad & keep, F.col("_raw")).alias("raw_bytes"),
        F.when(bad, F.octet_length("_raw").cast("long")).alias("raw_size"),
        F.when(bad, F.sha2(F.col("_raw"), 256)).alias("raw_sha256"),
        "_dataset",
    )


def _raw(slot: Slot) -> str:
    return f"_r{slot.column}"


def _slot_value(slot: Slot, shapes: Sequence[Shape]) -> Column:
    """The landing value of the row's column in `slot`: from its exact parse, or from its text in `_data`."""
    if not parse_may_fail(slot.bq_type):
        return typed_value(slot.bq_type, F.col(_raw(slot)))
    value = F.lit(None)
    for k, j in reversed(slot.members):
        value = F.when(F.col("_shape") == k, F.col(f"_p{k}")[shapes[k][j].name]).otherwise(value)
    return without_null_elements(slot.bq_type, value)


def _exact_columns(columns: Shape) -> list[LandingColumn]:
    """The columns whose value text in `_data` may not be exact (see spark_types.parse_may_fail)."""
    return [c for c in columns if parse_may_fail(c.bq_type)]


def _parse_exact(columns: Shape, index: int, ok: Column) -> Column:
    """`_p<k>`: the shape's exact columns parsed from the line itself with their landing types, only on
    the shape's own rows (a map's text of a JSON number has been through a double)."""
    mine = ok & (F.col("_shape") == index)
    data = T.StructType([T.StructField(c.name, carrier_type(c.bq_type)) for c in _exact_columns(columns)])
    envelope = T.StructType([T.StructField("data", data)])
    return F.when(mine, F.from_json("_value", envelope)["data"]).alias(f"_p{index}")


def _misfits(slots: Sequence[Slot]) -> list[Column]:
    """Per slot: a non-null JSON value whose typed value is NULL."""
    return [F.col(_raw(slot)).isNotNull() & F.col(slot.column).isNull() for slot in slots]


def _data_reason() -> Column:
    """Why a row cannot be written: data missing or naming a key twice (which value was meant is
    unknowable), unknown keys, values that do not fit (`_misfits`, one flag per slot)."""
    return (
        F.when(F.col("_keys").isNull(), F.lit(reasons.INVALID_DATA))
        .when(
            _odd_keys(), F.when(_repeated_key(), F.lit(reasons.INVALID_DATA)).otherwise(F.lit(reasons.UNKNOWN_COLUMN))
        )
        .when(F.array_contains("_misfits", True), F.lit(reasons.TYPE_MISMATCH))
    )


def _odd_keys() -> Column:
    return F.size("_keys") != F.col("_declared")


def _repeated_key() -> Column:
    return F.size("_keys") != F.size(F.array_distinct("_keys"))


def _data_detail(slot_count: int) -> Column:
    """The detail of `_data_reason`, naming the unknown keys or the columns that do not fit (in the
    shape's column order)."""
    unknown = F.array_except("_keys", "_names")
    labels = [
        F.when(
            F.col("_misfits")[number],
            F.struct(F.col("_slot_positions")[number].alias("position"), F.col("_slot_labels")[number].alias("label")),
        )
        for number in range(slot_count)
    ]
    # No lambdas (array_compact is one): they would keep the whole projection out of Spark's compiled stage.
    # Slots that fit are NULL labels, which sort_array puts first and array_join skips.
    ordered = F.sort_array(F.array(*labels))["label"] if labels else F.array().cast("array<string>")
    return (
        F.when(F.col("_keys").isNull(), F.lit(reasons.DATA_NOT_AN_OBJECT))
        .when(_odd_keys() & _repeated_key(), F.lit(reasons.REPEATED_KEY))
        .when(_odd_keys(), F.concat(F.lit(reasons.UNKNOWN_KEYS), F.array_join(unknown, ", ")))
        .otherwise(F.concat(F.lit(reasons.MISFITS), F.array_join(ordered, ", ")))
    )
