"""The envelope's per-line facts as DuckDB's load step computes them (uniview.sink.load_sql.envelopes) agree with
the plain rules they stand for, on drawn inputs: `_cdc_sequence` from the binlog pattern's groups extracted once
(sequence.binlog_groups) with the reference `sequence_of`; the keys named twice, with their shortcuts for a
short list and for metadata keys in their usual order, with the list made distinct; a number past a double,
sought only where a number begins, with every number read; and a line read as JSON by reading its keys, with
DuckDB's own test of JSON."""

from __future__ import annotations

import json
import math

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlglot import exp

from uniview.sink.frames import METADATA_FIELDS
from uniview.sink.json_limits import number_out_of_range
from uniview.sink.load_dialect import DUCKDB
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


#: JSON number tokens of every size: up to 330 digits (a double holds about 309), fractions, exponents of 1 to 4
#: digits either way.
NUMBERS = st.from_regex(r"-?(0|[1-9][0-9]{0,329})(\.[0-9]{1,5})?([eE][+-]?[0-9]{1,4})?", fullmatch=True)
#: Strings that hold digit runs and exponent-like text, which are text, not numbers.
STRINGS = st.text(st.sampled_from('0123456789eE+-.:,[]{} a"\\'), max_size=40).map(json.dumps)
#: Whatever JSON allows between tokens.
BLANKS = st.text(" \t\r\n", max_size=2)


def _joined(draw, items: list[str], opening: str, closing: str) -> str:
    inner = ",".join(draw(BLANKS) + item + draw(BLANKS) for item in items)
    return opening + draw(BLANKS) + inner + draw(BLANKS) + closing


@st.composite
def json_texts(draw, depth: int = 3) -> tuple[str, list[str]]:
    """(a JSON text, the number tokens it holds), its blanks drawn too."""
    kind = draw(st.sampled_from(["number", "string", "array", "object"] if depth else ["number", "string"]))
    if kind == "number":
        token = draw(NUMBERS)
        return token, [token]
    if kind == "string":
        return draw(STRINGS), []
    parts = draw(st.lists(json_texts(depth - 1), max_size=4))
    numbers = [token for _, tokens in parts for token in tokens]
    if kind == "array":
        return _joined(draw, [text for text, _ in parts], "[", "]"), numbers
    keys = draw(st.lists(STRINGS, min_size=len(parts), max_size=len(parts)))
    items = [key + draw(BLANKS) + ":" + draw(BLANKS) + text for key, (text, _) in zip(keys, parts, strict=True)]
    return _joined(draw, items, "{", "}"), numbers


@_SETTINGS
@given(drawn=st.lists(json_texts(), min_size=1, max_size=10))
def test_a_number_past_a_double_is_found_wherever_it_begins(connection, drawn):
    """The check reads closely only texts where a pattern finds a large number after a colon, a comma, an
    opening bracket or at the start: it must flag exactly the texts holding a number that is no finite double."""
    checked = number_out_of_range(exp.column("t"), DUCKDB).sql("duckdb")
    texts = [text for text, _ in drawn]
    found = connection.execute(
        f"SELECT {checked} FROM (SELECT unnest(?) AS t, generate_subscripts(?, 1) AS i) ORDER BY i", [texts, texts]
    ).fetchall()
    assert [flag for (flag,) in found] == [any(math.isinf(float(token)) for token in tokens) for _, tokens in drawn]


_MUTATIONS = st.sampled_from(["", "x", ",", "}", "]", '"', "{", ",}", ",]", "\\", "nul", "1e", "-"])


@_SETTINGS
@given(drawn=json_texts(), cut=st.integers(min_value=0), mutation=_MUTATIONS, at_end=st.booleans())
def test_reading_a_lines_keys_tells_json_from_not_json_as_json_valid_does(connection, drawn, cut, mutation, at_end):
    """The envelope reads a line's keys with try() in place of a separate json_valid: DuckDB's parse of the keys
    fails exactly where json_valid says the text is not JSON, whatever was cut off or added."""
    text, _ = drawn
    kept = text[: cut % (len(text) + 1)] if mutation else text
    mutated = kept + mutation if at_end else mutation + kept
    for line in {text, mutated, '{"metadata": ' + text + "}", '{"data": 1, "metadata": ' + mutated + "}"}:
        row = connection.execute(
            "SELECT try(json_keys(?, ['$', '$.metadata'])) IS NULL, json_valid(?)", [line, line]
        ).fetchone()
        assert row == (not row[1], row[1]), line
