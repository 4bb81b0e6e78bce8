"""The envelope's per-line facts as DuckDB's load step computes them (uniview.sink.load_sql.envelopes) agree with
the plain rules they stand for, on drawn inputs: `_cdc_sequence` from the binlog pattern's groups extracted once
(sequence.binlog_groups) with the reference `sequence_of`, and the keys named twice, with their shortcuts for a
short list and for metadata keys in their usual order, with the list made distinct."""

from __future__ import annotations

import json

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlglot import exp

from uniview.sink.frames import METADATA_FIELDS
from uniview.sink.load_sql import _duckdb_repeated_keys, envelopes
from uniview.sink.sequence import binlog_groups, sequence_of, sequence_sql

_DIGITS = st.text("0123456789", min_size=0, max_size=22)
#: Positions near every shape's edges: binlog names with and without dots, rows, plain numbers, LSNs, junk.
POSITIONS = st.one_of(
    st.builds(
        lambda name, file, pos, row: f"{name}{file}:{pos}" + ("" if row is None else f":{row}"),
        st.sampled_from(["", "mysql-bin.", "a.b.", ".", "bin", "x.y"]),
        _DIGITS,
        _DIGITS,
        st.none() | _DIGITS,
    ),
    _DIGITS,
    st.builds(
        lambda high, low: f"{high}/{low}",
        st.text("0123456789abcdefABCDEFg", max_size=9),
        st.text("0123456789aF", max_size=9),
    ),
    st.text(st.sampled_from("0123456789:./abc\n"), max_size=30),
)
_KEYS = st.lists(st.sampled_from([*METADATA_FIELDS, "data", "metadata", "x"]), max_size=12)


@pytest.fixture(scope="module")
def connection():
    return duckdb.connect()


_SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@_SETTINGS
@given(positions=st.lists(POSITIONS, min_size=1, max_size=20))
def test_the_sequence_from_binlog_groups_extracted_once_is_the_reference(connection, positions):
    position = exp.column("p")
    once = sequence_sql(position, binlog=exp.column("_binlog")).sql("duckdb")
    each = sequence_sql(position).sql("duckdb")
    rows = connection.execute(
        f"SELECT p, {once}, {each} FROM (SELECT p, {binlog_groups(position).sql('duckdb')} AS _binlog "
        "FROM (SELECT unnest(?) AS p))",
        [positions],
    ).fetchall()
    assert [once_ for _, once_, _ in rows] == [each_ for _, _, each_ in rows]
    # the reference matches as the warehouses' RE2 does: a position ending in a newline is none
    assert [once_ for _, once_, _ in rows] == [sequence_of(p) for p, _, _ in rows]


@_SETTINGS
@given(top=st.none() | _KEYS, metadata=st.none() | _KEYS)
def test_keys_named_twice_with_the_shortcuts_are_those_of_the_distinct_list(connection, top, metadata):
    listed = [exp.column("top"), exp.column("metadata")]
    shortcut = _duckdb_repeated_keys([(listed[0], ()), (listed[1], METADATA_FIELDS)])
    row = connection.execute(
        f"SELECT {shortcut} FROM (SELECT ?::VARCHAR[] AS top, ?::VARCHAR[] AS metadata)", [top, metadata]
    ).fetchone()
    expected = any(keys is not None and len(set(keys)) < len(keys) for keys in (top, metadata))
    assert row == (expected,)


@settings(_SETTINGS, max_examples=50)
@given(
    position=POSITIONS.filter(lambda p: "\n" not in p),  # see the test above
    order=st.permutations(["ingestion_method", "table_name", "position", "operation"]),
    repeat=st.none() | st.sampled_from(["table_name", "position", "data"]),
)
def test_the_envelope_sequences_and_judges_keys_as_the_rules_say(connection, position, order, repeat):
    fields = {"ingestion_method": "BINLOG", "table_name": "t", "position": position, "operation": "INSERT"}
    metadata = ", ".join(json.dumps(name) + ": " + json.dumps(fields[name]) for name in order)
    if repeat in fields:
        metadata += f", {json.dumps(repeat)}: {json.dumps(fields[repeat])}"
    line = '{"data": {"id": 1}, "metadata": {' + metadata + "}" + (', "data": {}' if repeat == "data" else "") + "}"
    source = "(SELECT ? AS value, 'file' AS source_file, NULL::BLOB AS _bytes)"
    row = connection.execute(f"SELECT _cdc_sequence, _reason FROM ({envelopes(source, False)})", [line]).fetchone()
    assert row == (sequence_of(position), "duplicate_key" if repeat else None)
