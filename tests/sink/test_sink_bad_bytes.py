"""Lines that once stopped a whole batch, through `uniview sink`: invalid UTF-8 in either format, a Debezium
event whose schema is not an object, one nested thousands of levels deep.  The batch lands, the good lines
are written and each bad one is quarantined with its bytes exactly as read."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import duckdb
from click.testing import CliRunner
from sink_support import query, record

from uniview.cli.sink import sink_command
from uniview.core.types import parse_type
from uniview.sink.frames import QUARANTINE_COLUMNS
from uniview.warehouse.duckdb_types import duckdb_type

SCHEMA = [("id", "INT64"), ("name", "STRING")]
EVENT_SCHEMA = {
    "type": "struct",
    "fields": [
        {
            "field": "after",
            "type": "struct",
            "fields": [{"field": "id", "type": "int32"}, {"field": "name", "type": "string", "optional": True}],
        }
    ],
}


def event(number: int, name: str = "a") -> dict:
    source = {"connector": "postgresql", "db": "shop", "table": "customer", "lsn": number}
    return {"schema": EVENT_SCHEMA, "payload": {"op": "c", "source": source, "after": {"id": number, "name": name}}}


def good_line(number: int) -> bytes:
    return json.dumps(record("customer", {"id": number, "name": "é"}, SCHEMA), ensure_ascii=False).encode()


#: Invalid UTF-8 where a latin-1 column or a truncated character puts it, a NUL, a CR inside a line.
BAD_UNIVIEW = [
    good_line(90).replace("é".encode(), b"\xe9"),
    good_line(91).replace("é".encode(), b"\xc3"),
    good_line(92).replace(b'"name"', b'"na\x00me"'),
]


def quarantine(warehouse: Path) -> list[tuple]:
    return query(warehouse, "SELECT raw_bytes, raw_size, raw_sha256, reason FROM cdc._uniview_quarantine ORDER BY 1")


def test_invalid_utf8_is_quarantined_with_its_bytes_and_the_batch_lands(spark, tmp_path):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.ndjson").write_bytes(b"\n".join([good_line(1), *BAD_UNIVIEW, good_line(2)]) + b"\n")
    warehouse = tmp_path / "w.duckdb"
    arguments = ["--input", str(tmp_path / "in"), "--warehouse", f"duckdb:///{warehouse}", "--dataset", "cdc"]
    result = CliRunner().invoke(sink_command, arguments)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("read=5 written=2 quarantined=3 skipped=0")
    assert quarantine(warehouse) == sorted(
        (line, len(line), hashlib.sha256(line).hexdigest(), "unparseable" if b"\x00" in line else "not_utf8")
        for line in BAD_UNIVIEW
    )


def test_an_earlier_quarantine_table_gains_the_raw_columns(spark, tmp_path):
    warehouse = tmp_path / "w.duckdb"
    old = ", ".join(f"{name} {duckdb_type(parse_type(bq))}" for name, bq in QUARANTINE_COLUMNS[:8])
    with duckdb.connect(str(warehouse)) as connection:
        connection.execute(f"CREATE SCHEMA cdc; CREATE TABLE cdc._uniview_quarantine ({old})")
        connection.execute("INSERT INTO cdc._uniview_quarantine (raw_line, reason) VALUES ('old', 'unparseable')")
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.ndjson").write_bytes(BAD_UNIVIEW[0] + b"\n")
    arguments = ["--input", str(tmp_path / "in"), "--warehouse", f"duckdb:///{warehouse}", "--dataset", "cdc"]
    assert CliRunner().invoke(sink_command, arguments).exit_code == 0
    assert quarantine(warehouse)[-1][0] is None  # the row of the earlier release
    assert quarantine(warehouse)[0][0] == BAD_UNIVIEW[0]


def test_the_defects_of_a_debezium_batch_from_another_folder(tmp_path):
    """As a user runs it: `.venv/bin/uniview sink --format debezium` from a folder outside the checkout, on a
    file with good events, invalid UTF-8, a schema that is not an object and an event 5,000 levels deep."""
    deep = json.dumps(event(4)).replace('"name": "a"', '"name": ' + "[" * 5_000 + "]" * 5_000)
    bad = [
        json.dumps(event(3, "é")).encode().replace(b"\\u00e9", b"\xe9"),
        json.dumps({**event(5), "schema": 5}).encode(),
        deep.encode(),
    ]
    lines = [json.dumps(event(1)).encode(), *bad, json.dumps(event(2)).encode()]
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "events.json").write_bytes(b"\xef\xbb\xbf" + b"\r\n".join(lines) + b"\r\n")  # a BOM, CRLF
    environment = {k: v for k, v in os.environ.items() if k not in {"VIRTUAL_ENV", "PYTHONPATH", "PYSPARK_PYTHON"}}
    command = [str(Path(sys.executable).with_name("uniview")), "sink", "--format", "debezium", "--input", "in"]
    command += ["--warehouse", "duckdb:///" + str(tmp_path / "w.duckdb"), "--dataset", "cdc"]
    done = subprocess.run(command, cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.startswith("read=5 written=2 quarantined=3 skipped=0"), done.stdout
    kept = {line: reason for line, _, _, reason in quarantine(tmp_path / "w.duckdb")}
    assert kept == {bad[0]: "not_utf8", bad[1]: "missing_schema", bad[2]: "json_too_deep"}  # past BigQuery's 500 levels
