"""Fuzzing `uniview sink` as a user runs it (`.venv/bin/uniview sink` in a subprocess): random and mutated lines
of both formats (tests/sink/fuzz_corpus.py) must each be written, quarantined or skipped, exactly, and the
quarantine must give back every quarantined line's bytes through the query docs/bad-records.md documents.

The corpus is drawn from one seed, printed with every run and in every failure; `UNIVIEW_FUZZ_SEED=N` draws the
same corpus again.  DuckDB in every run; the BigQuery emulator with the real spark-bigquery-connector on a
smaller corpus (with one line past BigQuery's limit, quarantined as too_large by its size and SHA-256).
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
import secrets
import subprocess
import sys
from collections import Counter
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner
from fuzz_corpus import Corpus, draw_corpus

from uniview.cli.sink import sink_command
from uniview.sink.frames import MAX_RAW_BYTES, QUARANTINE_COLUMNS
from uniview.warehouse.duckdb_connection import quote_identifier

SEED = int(os.environ.get("UNIVIEW_FUZZ_SEED") or secrets.randbits(32))
UNIVIEW = str(Path(sys.executable).with_name("uniview"))
#: The documented query that turns the quarantine back into lines (docs/bad-records.md), per warehouse.
DUCKDB_REPLAY = "SELECT to_base64(raw_bytes) FROM cdc._uniview_quarantine WHERE raw_bytes IS NOT NULL"
BIGQUERY_REPLAY = "SELECT TO_BASE64(raw_bytes) AS line FROM cdc._uniview_quarantine WHERE raw_bytes IS NOT NULL"
_COUNTS = re.compile(r"read=(\d+) written=(\d+) quarantined=(\d+) skipped=(\d+)")


def seeded(message: str) -> str:
    return f"{message} (fuzz seed {SEED}: UNIVIEW_FUZZ_SEED={SEED} draws this corpus again)"


def run_sink(corpus: Corpus, folder: Path, warehouse: str, *extra: str, in_process: bool = False) -> tuple[int, ...]:
    """Write the corpus and run `uniview sink` on it: (read, written, quarantined, skipped).  In a subprocess run
    from `folder` as a user runs it, or (`in_process`) through the same command on this test run's Spark session,
    which saves starting a JVM."""
    print(seeded("fuzzing uniview sink"))
    (folder / "in").mkdir()
    for name, content in corpus.files.items():
        (folder / "in" / name).write_bytes(content)
    arguments = ["--input", str(folder / "in"), "--warehouse", warehouse, "--dataset", "cdc", *extra]
    if in_process:
        result = CliRunner().invoke(sink_command, arguments)
        output, failed, log = result.stdout, result.exit_code != 0, result.output + repr(result.exception)
    else:
        command = [UNIVIEW, "sink", *arguments, "--master", "local[2]"]
        done = subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=600)
        output, failed, log = done.stdout, done.returncode != 0, done.stderr
    (folder / "sink.log").write_text(log)
    assert not failed, seeded(f"uniview sink failed, see {folder / 'sink.log'}: {log[-3000:]}")
    found = _COUNTS.search(output)
    assert found, seeded(output)
    return tuple(int(n) for n in found.groups())


def assert_accounted(corpus: Corpus, counts: tuple[int, ...], written_rows: int, quarantine: list[tuple]) -> None:
    """read = written + quarantined + skipped, exactly, and each quarantined line's bytes are an input line's."""
    read, written, quarantined, skipped = counts
    lines = corpus.lines()
    assert read == len(lines), seeded(f"read {read} lines of {len(lines)}")
    assert read == written + quarantined + skipped, seeded(f"{counts} do not add up")
    assert (written_rows, len(quarantine)) == (written, quarantined), seeded("the tables do not hold the counts")
    kept = Counter(line for line, _, _, _ in quarantine if line is not None)
    assert not kept - Counter(lines), seeded("a quarantined line is not an input line")
    for line, size, digest, reason in quarantine:
        assert size is not None and digest is not None, seeded(f"{reason}: no size or SHA-256")
        if line is None:
            assert reason == "too_large" and size > MAX_RAW_BYTES // 2, seeded(f"{reason}: bytes not kept")
        else:
            assert (len(line), hashlib.sha256(line).hexdigest()) == (size, digest), seeded("size or SHA-256 wrong")
    not_utf8 = Counter(line for line in lines if not _is_utf8(line))
    assert not not_utf8 - kept, seeded("a line that is not UTF-8 was not quarantined")


def _is_utf8(line: bytes) -> bool:
    try:
        line.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


@pytest.mark.parametrize("input_format", ["uniview", "debezium"])
def test_every_line_is_written_or_quarantined_with_its_bytes_in_duckdb(input_format, tmp_path, spark):
    corpus = draw_corpus(SEED, debezium=input_format == "debezium", size=60)
    warehouse = tmp_path / "w.duckdb"
    # Debezium's run is a user's (its conversion runs in Spark's Python workers); the other one saves a JVM
    counts = run_sink(
        corpus, tmp_path, "duckdb:///" + str(warehouse), "--format", input_format, in_process=input_format == "uniview"
    )
    with duckdb.connect(str(warehouse), read_only=True) as connection:
        tables = connection.execute(
            "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'cdc' AND table_name LIKE '%\\_v\\_%' ESCAPE '\\'"
        ).fetchall()
        written = sum(
            connection.execute(f"SELECT count(*) FROM cdc.{quote_identifier(t)}").fetchone()[0] for (t,) in tables
        )
        quarantine = connection.execute(
            "SELECT raw_bytes, raw_size, raw_sha256, reason FROM cdc._uniview_quarantine"
        ).fetchall()
        replayed = [base64.b64decode(text) for (text,) in connection.execute(DUCKDB_REPLAY).fetchall()]
    assert_accounted(corpus, counts, written, quarantine)
    assert Counter(replayed) == Counter(line for line, *_ in quarantine), seeded("the documented query")
    assert all(line is not None for line, *_ in quarantine), seeded("DuckDB keeps every line whole")


def test_every_line_is_written_or_quarantined_with_its_bytes_in_bigquery(connector_stack, tmp_path):
    client, options = connector_stack
    corpus = draw_corpus(SEED + 1, debezium=True, size=24)
    arguments = [item for key, value in options for item in ("--bigquery-option", f"{key}={value}")]
    # a quarantine table of an earlier release, without the raw_ columns: the sink adds them
    from google.cloud import bigquery

    client.create_dataset("test-project.cdc", exists_ok=True)
    earlier = [bigquery.SchemaField(name, bq) for name, bq in QUARANTINE_COLUMNS[:8]]
    client.create_table(bigquery.Table("test-project.cdc._uniview_quarantine", schema=earlier))
    counts = run_sink(corpus, tmp_path, "bigquery://test-project", "--format", "debezium", *arguments, in_process=True)
    written = sum(
        next(iter(client.query(f"SELECT count(*) FROM cdc.{t.table_id}").result()))[0]
        for t in client.list_tables("cdc")
        if "_v_" in t.table_id
    )
    quarantine = [
        tuple(row.values())
        for row in client.query("SELECT raw_bytes, raw_size, raw_sha256, reason FROM cdc._uniview_quarantine").result()
    ]
    assert_accounted(corpus, counts, written, quarantine)
    replayed = [base64.b64decode(row["line"]) for row in client.query(BIGQUERY_REPLAY).result()]
    assert Counter(replayed) == Counter(line for line, *_ in quarantine if line is not None), seeded("the query")
    huge = [size for line, size, _, reason in quarantine if reason == "too_large"]
    assert huge and all(size > MAX_RAW_BYTES for size in huge), seeded("the line past BigQuery's limit")
