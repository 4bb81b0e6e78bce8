"""Poison messages in a running stream: `uniview sink --stream --format debezium` reads a topic on which bad
messages arrive between good ones (invalid UTF-8, NUL, not JSON, truncated, a schema that is not an object,
nesting thousands of levels deep, keys that are null or not JSON, a tombstone).  The stream keeps going, the good
messages land, each bad one is quarantined with its topic, partition and offset and its exact bytes; killed
with kill -9 mid-stream and restarted, the result is the same: every message accounted for exactly once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

from test_kafka_source import landed

from uniview.warehouse.url import duckdb_url

FIELDS = [{"field": "id", "type": "int32"}, {"field": "name", "type": "string", "optional": True}]
SCHEMA = {"type": "struct", "fields": [{"field": "after", "type": "struct", "fields": FIELDS}]}


def event(number: int) -> dict:
    source = {"connector": "postgresql", "db": "shop", "table": "customer", "lsn": number, "ts_ms": 1_700_000_000}
    return {"schema": SCHEMA, "payload": {"op": "c", "source": source, "after": {"id": number, "name": f"c{number}"}}}


def good(number: int) -> tuple[bytes | None, bytes]:
    key = [json.dumps({"id": number}).encode(), None, b"\xff not json"][number % 3]
    return key, json.dumps(event(number)).encode()


def poison(number: int) -> list[tuple[bytes | None, bytes | None]]:
    """Bad messages, each with the reason the sink gives it (None: a tombstone, skipped)."""
    text = json.dumps(event(number)).encode()
    deep = json.dumps(event(number)).replace(f'"c{number}"', "[" * 5_000 + "]" * 5_000).encode()
    return [
        (b"1", text.replace(b'"c', b'"\xe9', 1)),
        (None, b"\x00\xff\xfe not json at all"),
        (b"2", text[: len(text) // 2]),
        (b"[", json.dumps({**event(number), "schema": 5}).encode()),
        (b"3", deep),
        (b"4", None),
    ]


def produce(producer, topic: str, numbers: range) -> tuple[dict[str, bytes], set[int], int]:
    """Good messages with poison between them: (bad message's kafka:// source -> bytes, good ids, tombstones)."""
    bad, ids, tombstones = {}, set(), 0
    for number in numbers:
        key, value = good(number)
        producer.send(topic, key=key, value=value).get(timeout=30)
        ids.add(number)
        if number % 4 == 0:
            for key, value in poison(number):
                sent = producer.send(topic, key=key, value=value).get(timeout=30)
                if value is None:
                    tombstones += 1
                else:
                    bad[f"kafka://{topic}/{sent.partition}/{sent.offset}"] = value
    return bad, ids, tombstones


def command(bootstrap: str, topic: str, tmp_path: Path, *extra: str) -> list[str]:
    return [
        str(Path(sys.executable).with_name("uniview")),
        "sink",
        "--format",
        "debezium",
        "--input",
        f"kafka://{bootstrap}/{topic}",
        "--warehouse",
        duckdb_url(tmp_path / "w.duckdb"),
        "--dataset",
        "cdc",
        "--stream",
        "--checkpoint",
        str(tmp_path / "ckpt"),
        "--master",
        "local[1]",
        "--kafka-option",
        "maxOffsetsPerTrigger=8",
        *extra,
    ]


def commits(checkpoint: Path) -> int:
    folder = checkpoint / "commits"
    return len([p for p in folder.iterdir() if p.name.isdigit()]) if folder.exists() else 0


def wait_for(condition, process: subprocess.Popen, log: Path, timeout: float = 240) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert process.poll() is None, log.read_text()[-3000:]
        assert time.monotonic() < deadline, log.read_text()[-3000:]
        time.sleep(0.2)


def test_poison_messages_in_a_running_stream_and_a_kill_9(kafka_bootstrap, producer, tmp_path):
    topic = f"poison-{uuid.uuid4().hex[:8]}"
    checkpoint, log = tmp_path / "ckpt", tmp_path / "sink.log"
    with open(log, "ab") as out:
        running = subprocess.Popen(
            command(kafka_bootstrap, topic, tmp_path, "--trigger-interval", "1 second"),
            cwd=tmp_path,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        bad, ids, tombstones = produce(producer, topic, range(0, 8))
        wait_for(lambda: commits(checkpoint) >= 2, running, log)  # the stream has gone past poison, still running
        more = produce(producer, topic, range(8, 16))
        landed_before = commits(checkpoint)
        wait_for(lambda: commits(checkpoint) > landed_before, running, log)
        assert running.poll() is None, log.read_text()[-3000:]
    finally:
        os.killpg(running.pid, signal.SIGKILL)  # mid-stream: a batch may be half done
        running.wait()
    bad.update(more[0])
    ids |= more[1]
    tombstones += more[2]
    with open(log, "ab") as out:
        restarted = subprocess.run(
            command(kafka_bootstrap, topic, tmp_path, "--available-now"),
            cwd=tmp_path,
            stdout=out,
            stderr=subprocess.STDOUT,
            timeout=300,
        )
    assert restarted.returncode == 0, log.read_text()[-3000:]
    warehouse = tmp_path / "w.duckdb"
    (table,) = landed(warehouse, "SELECT table_name FROM duckdb_tables() WHERE table_name LIKE 'customer_v_%'")[0]
    rows = landed(warehouse, f"SELECT id FROM cdc.{table} ORDER BY id")
    assert [id_ for (id_,) in rows] == sorted(ids)  # each good message once, none lost, none twice
    quarantined = landed(warehouse, "SELECT source_file, raw_bytes, reason FROM cdc._uniview_quarantine")
    assert {source: raw for source, raw, _ in quarantined} == bad and len(quarantined) == len(bad)
    reasons = sorted(reason for *_, reason in quarantined)
    assert set(reasons) == {"not_utf8", "unparseable", "missing_schema", "json_too_deep"}
    ledger = landed(warehouse, "SELECT sum(read), sum(written), sum(quarantined) FROM main._uniview_batches")[0]
    assert ledger == (len(ids) + len(bad) + tombstones, len(ids), len(bad))
