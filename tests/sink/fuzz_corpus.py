"""Random and mutated CDC lines for the sink's fuzz tests, drawn with Hypothesis.

Hypothesis draws the corpus (not many small examples: each example is a whole `uniview sink` run), because its
strategies compose the shapes that matter here: JSON values of every type at any field of both envelopes,
byte-level mutations of valid lines (truncation, invalid UTF-8, NUL, a BOM), deep nesting, huge values and
repeated keys.  One seed gives one corpus, exactly: `draw_corpus(seed)`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from uniview.sink.frames import METADATA_FIELDS

SCHEMA = [
    {"name": "id", "type": "INT64"},
    {"name": "name", "type": "STRING"},
    {"name": "tags", "type": "ARRAY<STRING>"},
]
UNIVIEW_FIELDS = (
    ("data",),
    ("metadata",),
    ("data", "id"),
    ("data", "name"),
    ("data", "tags"),
    *(("metadata", name) for name in METADATA_FIELDS),
)
DEBEZIUM_FIELDS = (
    ("schema",),
    ("payload",),
    ("schema", "fields"),
    ("schema", "fields", 0),
    ("schema", "fields", 0, "fields"),
    ("schema", "fields", 0, "fields", 0),
    ("schema", "fields", 0, "fields", 1, "type"),
    ("schema", "fields", 0, "fields", 2, "items"),
    ("schema", "fields", 0, "fields", 0, "field"),
    ("payload", "op"),
    ("payload", "source"),
    ("payload", "before"),
    ("payload", "after"),
    ("payload", "after", "id"),
    ("payload", "after", "tags"),
    ("payload", "source", "ts_ms"),
    ("payload", "source", "db"),
    ("payload", "source", "table"),
    ("payload", "source", "lsn"),
)
#: Byte sequences that are not UTF-8: latin-1 letters, a truncated character, a surrogate, an overlong NUL.
NOT_UTF8 = (b"\xe9", b"\xc3", b"\xe2\x82", b"\xed\xa0\x80", b"\xc0\x80", b"\xff\xfe")
BOM = b"\xef\xbb\xbf"
#: How Spark's text source splits a file into lines.
LINE_BREAK = re.compile(rb"\r\n|\r|\n")

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3),
    max_leaves=8,
)


def uniview_record(number: int, table: str) -> dict:
    return {
        "data": {"id": number, "name": f"n{number}", "tags": ["a", "b"]},
        "metadata": {
            "ingestion_method": "BINLOG",
            "database_name": "shop",
            "table_name": table,
            "schema": SCHEMA,
            "operation": "INSERT",
            "position": f"mysql-bin.000001:{number}",
            "timestamp": "2024-05-01T10:00:00Z",
        },
    }


def debezium_event(number: int, table: str) -> dict:
    fields = [
        {"field": "id", "type": "int64"},
        {"field": "name", "type": "string", "optional": True},
        {"field": "tags", "type": "array", "items": {"type": "string"}, "optional": True},
    ]
    return {
        "schema": {"type": "struct", "fields": [{"field": "after", "type": "struct", "fields": fields}]},
        "payload": {
            "op": "c",
            "before": None,
            "after": {"id": number, "name": f"n{number}", "tags": ["a"]},
            "source": {"connector": "postgresql", "db": "shop", "table": table, "lsn": number, "ts_ms": 1_700_000_000},
        },
    }


def _set(document: Any, path: tuple, value: Any) -> None:
    """Put `value` at `path` in `document`, where the path still leads somewhere; otherwise leave it."""
    for step in path[:-1]:
        try:
            document = document[step]
        except (KeyError, IndexError, TypeError):
            return
    if isinstance(document, dict) or (isinstance(document, list) and isinstance(path[-1], int) and document):
        document[path[-1] if isinstance(document, dict) else path[-1] % len(document)] = value


@st.composite
def lines(draw: Callable, debezium: bool, huge: bool) -> bytes:
    """One line: a valid record or event, or one mutated at a field or at the byte level (`huge`: one with a
    value of 5 or 6 MB)."""
    number = draw(st.integers(0, 10**6))
    table = draw(st.sampled_from(["customer", "orders"]))
    document = debezium_event(number, table) if debezium else uniview_record(number, table)
    kinds = ["valid", "valid", "wrong_type", "wrong_type", "truncated", "not_utf8", "nul", "repeated_key", "deep"]
    kind = "huge" if huge else draw(st.sampled_from(kinds + ["bom", "noise"] + ["kcat"] * debezium))
    if kind == "wrong_type":
        _set(document, draw(st.sampled_from(DEBEZIUM_FIELDS if debezium else UNIVIEW_FIELDS)), draw(json_values))
    if kind == "huge":
        _set(
            document,
            ("payload", "after", "name") if debezium else ("data", "name"),
            "x" * draw(st.integers(5, 6)) * 2**20,
        )
    if kind == "kcat":  # a Kafka message as kcat prints it, its key null or not JSON, its value null or not JSON
        key = draw(st.sampled_from([None, "not json", '{"id": 1}', "[1"]))
        value = draw(st.sampled_from([None, "not json", json.dumps(document)]))
        document = {"topic": "t", "partition": 0, "offset": number, "key": key, "payload": value}
    text = json.dumps(document, ensure_ascii=draw(st.booleans())).encode("utf-8", "surrogatepass")
    at = draw(st.integers(0, len(text)))
    if kind == "truncated":
        return text[:at]
    if kind == "not_utf8":
        return text[:at] + draw(st.sampled_from(NOT_UTF8)) + text[at:]
    if kind == "nul":
        return text[:at] + b"\x00" + text[at:]
    if kind == "bom":
        return BOM + text
    if kind == "repeated_key":
        return text.replace(b'"id": ', b'"id": 1, "id": ', 1)
    if kind == "deep":
        depth = draw(st.sampled_from([900, 1_100, 5_000, 50_000]))
        return text.replace(b'"n', b"[" * depth + b"]" * depth + b', "n', 1)
    if kind == "noise":
        return draw(st.binary(max_size=60))
    return text


@dataclass(frozen=True)
class Corpus:
    """Input files (name -> bytes), as they are written."""

    files: dict[str, bytes]

    def lines(self) -> list[bytes]:
        """Every line Spark's text source reads from the files: split at LF, CRLF or CR, a UTF-8 BOM at the start
        of a file left out (Hadoop's line reader skips it), no line after a final line break."""
        found: list[bytes] = []
        for content in self.files.values():
            content = content.removeprefix(BOM)
            if content:
                pieces = LINE_BREAK.split(content)
                found += pieces[:-1] if content.endswith((b"\n", b"\r")) else pieces
        return found


@st.composite
def corpora(draw: Callable, debezium: bool, size: int, huge: bool) -> Corpus:
    """A few files: LF lines, CRLF lines after a BOM, lines with no final line break, and an empty file."""
    drawn = [draw(lines(debezium, huge=huge and number == 0)) for number in range(size)]
    third = max(1, size // 3)
    return Corpus(
        {
            "lf.ndjson": b"".join(line + b"\n" for line in drawn[:third]),
            "crlf.ndjson": BOM + b"".join(line + b"\r\n" for line in drawn[third : 2 * third]),
            "open.ndjson": b"\n".join(drawn[2 * third :]),
            "empty.ndjson": b"",
        }
    )


def draw_corpus(seed_value: int, debezium: bool, size: int, huge: bool = True) -> Corpus:
    """The corpus of `seed_value`: the same bytes on every machine and every run."""
    drawn: list[Corpus] = []

    @settings(
        max_examples=3,  # the first example Hypothesis draws is its simplest: every line alike
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @seed(seed_value)
    @given(corpora(debezium, size, huge))
    def capture(corpus: Corpus) -> None:
        drawn.append(corpus)

    capture()
    return drawn[-1]
