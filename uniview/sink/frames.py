"""The batch as Spark hands it to the landing: its lines, checked and bounded, never parsed.

Spark reads each batch's lines (files or Kafka) and stages them as they are, in one job; the warehouse's load
step routes, types and judges them in SQL (uniview.sink.load_sql).  Here: the columns every staged batch
carries, the line's bytes when it is not UTF-8 (checked_lines), a line too large for BigQuery's quarantine
staged as its size and hash (bounded_lines), and the quarantine table's columns.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

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


#: Columns of lines staged by bounded_lines: the size in bytes and the SHA-256 (hex) of a line too large to stage.
TOO_LARGE_SIZE, TOO_LARGE_SHA256 = "_size", "_sha256"


def bounded_lines(lines: DataFrame, max_line_bytes: int) -> DataFrame:
    """`lines` (value, source_file, LINE_BYTES and maybe ORIGINAL_LINE: the lines the sink stages) with each line
    too large for the warehouse's quarantine staged without its text and bytes, as its size and SHA-256
    (TOO_LARGE_SIZE, TOO_LARGE_SHA256; NULL on every other line): the load step quarantines it as too_large.
    The quarantine row would hold the line twice (text, with U+FFFD for each byte of a line that is not UTF-8,
    and bytes): too large when together they take more than twice `max_line_bytes`.  Nothing is parsed."""
    original = F.col(ORIGINAL_LINE) if ORIGINAL_LINE in lines.columns else F.col("value")
    line_bytes = raw_bytes(original, F.col(LINE_BYTES))
    size = F.octet_length(line_bytes)
    too_large = (F.octet_length(original) + size) > 2 * max_line_bytes
    contents = [name for name in lines.columns if name in ("value", LINE_BYTES, ORIGINAL_LINE)]
    return lines.select(
        *[F.when(~too_large, F.col(name)).alias(name) if name in contents else F.col(name) for name in lines.columns],
        F.when(too_large, size.cast("long")).alias(TOO_LARGE_SIZE),
        F.when(too_large, F.sha2(line_bytes, 256)).alias(TOO_LARGE_SHA256),
    )


def raw_bytes(line: Column, line_bytes: Column) -> Column:
    """The bytes of a line as read: its text's UTF-8 bytes, or LINE_BYTES for a line that is not UTF-8."""
    return F.coalesce(line_bytes, F.encode(line, "UTF-8"))


#: The details of the not_utf8 and too_large reasons (the latter followed by the line's size in bytes).
NOT_UTF8_DETAIL = "the line is not valid UTF-8 (raw_bytes keeps it as read)"
TOO_LARGE_DETAIL = "the line is too large to keep in the quarantine (raw_size, raw_sha256 and source_file name it): "
