"""The load step's envelope rules (uniview.sink.load_sql.envelopes) against Spark's (frames.parse_envelopes).

DuckDB's landing reads each line's envelope in SQL; BigQuery's landing reads it in Spark.  Odd lines of
every kind are read both ways, and both must give the same reason, detail, metadata fields,
_cdc_timestamp and _cdc_sequence.  The cases where they are known to differ are listed in DIFFERENCES
with the reason, and the test checks they still differ, so the list stays true.
"""

from __future__ import annotations

import json
from datetime import UTC

import duckdb
import pytest
from typing_cases import ENVELOPE_LINES as LINES

from uniview.sink.frames import METADATA_FIELDS, parse_envelopes
from uniview.sink.job import SESSION_SETTINGS
from uniview.sink.load_sql import envelopes

#: Lines read differently, and why.
DIFFERENCES = {
    # Spark's JSON reader takes the first value of a line and ignores what follows it; DuckDB's refuses the line.
    '{"data": {"id": 1}, "metadata": {"table_name": "t"}} trailing': "trailing text",
    # Spark's reader accepts single-quoted strings (its allowSingleQuotes default); JSON, and DuckDB, do not.
    "{'metadata': {'table_name': 't'}}": "single quotes",
}


@pytest.fixture(scope="module")
def both(spark):
    for key, value in SESSION_SETTINGS.items():
        spark.conf.set(key, value)
    rows = [(line, "file") for line in LINES]
    frame = spark.createDataFrame(rows, "value string, source_file string")
    by_spark = {
        row["_value"] if row["_value"] is not None else None: _spark_outcome(row)
        for row in parse_envelopes(frame).collect()
    }
    connection = duckdb.connect()
    connection.execute("SET TimeZone = 'UTC'")
    source = "(SELECT unnest(?) AS value, 'file' AS source_file, NULL::BLOB AS _bytes)"
    columns = ", ".join(f'"{name}"' for name in METADATA_FIELDS)
    by_sql = {
        row[0]: row[1:]
        for row in connection.execute(
            f"SELECT value, _reason, _detail, {columns}, _cdc_unavailable, _cdc_timestamp, _cdc_sequence FROM ({envelopes(source, False)})",
            [LINES],
        ).fetchall()
    }
    return by_spark, {line: _normalised(outcome) for line, outcome in by_sql.items()}


def _spark_outcome(row) -> tuple:
    stamp = row["_cdc_timestamp"]
    metadata = [
        row[name]
        for name in (
            "_cdc_ingestion_method",
            "_database",
            "_table",
            "_version",
            "_schema",
            "_cdc_operation",
            "_cdc_position",
            "_timestamp_text",
            "_primary_key",
            "_unavailable_text",
            "_cdc_unavailable",
        )
    ]
    return (
        row["_reason"],
        row["_envelope_detail"],
        *metadata,
        None if stamp is None else stamp.replace(tzinfo=UTC),
        row["_cdc_sequence"],
    )


def _normalised(outcome: tuple) -> tuple:
    *head, stamp, sequence = outcome
    return (*head, None if stamp is None else stamp.astimezone(UTC), sequence)


def _comparable(outcome: tuple) -> tuple:
    """The schema and other JSON-valued fields compared as JSON (Spark and DuckDB space them differently)."""

    def parsed(value):
        try:
            return json.loads(value) if isinstance(value, str) and value[:1] in "[{" else value
        except ValueError:
            return value

    return tuple(parsed(value) for value in outcome)


def test_sql_envelopes_read_every_line_as_spark_does(both):
    by_spark, by_sql = both
    differing = {
        line: (by_spark[line], by_sql[line])
        for line in LINES
        if _comparable(by_spark[line]) != _comparable(by_sql[line])
    }
    assert {line: pair for line, pair in differing.items() if line not in DIFFERENCES} == {}
    assert set(differing) == set(DIFFERENCES)


def test_the_reasons_cover_every_kind_of_line(both):
    _, by_sql = both
    assert {outcome[0] for outcome in by_sql.values()} == {None, "tombstone", "unparseable", "missing_metadata"}
