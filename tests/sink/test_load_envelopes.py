"""The load step's envelope rules (uniview.sink.load_sql.envelopes) on DuckDB: every kind of line that is not a
record gets its reason.  The same lines read by BigQuery's rendering are held to these by
tests/sink/test_sink_bigquery_typing.py (the emulator) and tests/zetasql/test_zetasql_load_typing.py (GoogleSQL's
reference implementation)."""

from __future__ import annotations

import duckdb
import pytest
from typing_cases import (
    AT_DEPTH_LIMIT,
    NOT_REPEATED_KEYS,
    PAST_JSON_LIMITS,
    REPEATED_KEYS,
    SCHEMA_CHANGES_WITHOUT_TABLE,
    WITHIN_JSON_LIMITS,
)
from typing_cases import ENVELOPE_LINES as LINES

from uniview.sink.load_sql import envelopes

#: Lines that a lenient JSON reader takes as records, which the sink refuses on both warehouses: strict JSON only.
NOT_JSON = (
    '{"data": {"id": 1}, "metadata": {"table_name": "t"}} trailing',
    "{'metadata': {'table_name': 't'}}",
)


@pytest.fixture(scope="module")
def reasons() -> dict:
    """{line: (reason, detail)} as DuckDB's load step reads each of LINES and NOT_JSON."""
    connection = duckdb.connect()
    connection.execute("SET TimeZone = 'UTC'")
    source = "(SELECT unnest(?) AS value, 'file' AS source_file, NULL::BLOB AS _bytes)"
    rows = connection.execute(
        f"SELECT value, _reason, _detail FROM ({envelopes(source, False)})", [[*LINES, *NOT_JSON, AT_DEPTH_LIMIT]]
    ).fetchall()
    return {line: (reason, detail) for line, reason, detail in rows}


def test_the_reasons_cover_every_kind_of_line(reasons):
    assert {reason for reason, _ in reasons.values()} == {
        None,
        "tombstone",
        "unparseable",
        "missing_metadata",
        "duplicate_key",
        "schema_change_without_table",
        "json_too_deep",
        "json_number_out_of_range",
    }
    assert all((reason is None) == (detail is None) for reason, detail in reasons.values())


def test_a_line_past_a_limit_of_bigquerys_json_is_quarantined_before_its_json_is_read(reasons):
    """A line nested deeper than 500 levels, or holding a number beyond a double, is read no further: its reason
    names the limit.  A JSON column's string past them is judged with its column (type_mismatch); the lines at
    the limits are records."""
    past = {line: reason for line, reason in PAST_JSON_LIMITS.items() if reason != "type_mismatch"}
    assert {line: reasons[line][0] for line in past} == past
    assert {line: reasons[line] for line in PAST_JSON_LIMITS if line not in past} == dict.fromkeys(
        set(PAST_JSON_LIMITS) - set(past), (None, None)
    )
    within = [AT_DEPTH_LIMIT, *WITHIN_JSON_LIMITS]
    assert [reasons[line] for line in within] == [(None, None)] * len(within)


def test_only_a_ddl_record_that_names_no_table_is_a_schema_change_without_table(reasons):
    skipped = [line for line, (reason, _) in reasons.items() if reason == "schema_change_without_table"]
    assert sorted(skipped) == sorted(SCHEMA_CHANGES_WITHOUT_TABLE)
    assert reasons[SCHEMA_CHANGES_WITHOUT_TABLE[0]] == ("schema_change_without_table", "a schema change of no table")


@pytest.mark.parametrize("line", NOT_JSON)
def test_text_that_is_not_strict_json_is_unparseable(reasons, line):
    assert reasons[line] == ("unparseable", "the line is not a JSON object")


def test_a_key_named_twice_at_the_top_level_or_in_metadata_is_a_duplicate_key(reasons):
    """Which of the two values was meant is unknowable, so the record is not read as either of them."""
    repeated = sorted(line for line, (reason, _) in reasons.items() if reason == "duplicate_key")
    assert repeated == sorted(REPEATED_KEYS)
    detail = "a JSON object names the same key more than once: the line at its top level, its metadata, or an object of a Debezium event"
    assert {reasons[line][1] for line in REPEATED_KEYS} == {detail}


@pytest.mark.parametrize("line", NOT_REPEATED_KEYS)
def test_a_name_repeated_in_different_objects_is_no_duplicate_key(reasons, line):
    assert reasons[line] == (None, None)


@pytest.mark.parametrize("bounded", [False, True])
def test_the_reasons_texts_are_literals_of_bigquerys_sql_whatever_they_hold(monkeypatch, bounded):
    """A reason's text is written as the rendering dialect's string literal: DuckDB doubles a quote, BigQuery
    reads two adjacent literals there ("Adjacent string literals need to be separated") and fails the batch."""
    import sqlglot
    from sqlglot import exp

    from uniview.sink import reasons as reason_texts
    from uniview.sink.load_dialect import BIGQUERY

    text = "the line's metadata names a key twice: \\ and ' and \"quotes\""
    monkeypatch.setattr(reason_texts, "DUPLICATE_KEY_DETAIL", text)
    sql = envelopes("`p.d.lines`", rewritten=False, dialect=BIGQUERY, bounded=bounded)
    strings = {literal.this for literal in sqlglot.parse_one(sql, read="bigquery").find_all(exp.Literal)}
    assert text in strings
