"""The sink reading Kafka: uniview envelopes, tombstones and garbage from a real broker, exact accounting,
every record's topic/partition/offset kept, and kill -9 + restart landing each record exactly once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from uniview.core.errors import ConfigError
from uniview.sink.sources import KafkaInput
from uniview.warehouse.url import duckdb_url

SCHEMA = [{"name": "id", "type": "int(11)"}, {"name": "name", "type": "varchar(20)"}]


def envelope(n: int, table: str = "customer") -> bytes:
    record = {
        "data": {"id": n, "name": f"c{n}"},
        "metadata": {
            "database_name": "shop",
            "table_name": table,
            "schema": SCHEMA,
            "operation": "INSERT",
            "position": f"mysql-bin.000001:{1000 + n}",
            "timestamp": "2024-05-01T10:00:00Z",
        },
    }
    return json.dumps(record).encode()


def sink_command(bootstrap: str, topic: str, warehouse: Path, checkpoint: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "uniview.sink",
        "--input",
        f"kafka://{bootstrap}/{topic}",
        "--warehouse",
        duckdb_url(warehouse),
        "--dataset",
        "cdc",
        "--stream",
        "--checkpoint",
        str(checkpoint),
        "--available-now",
        "--master",
        "local[1]",
        *extra,
    ]


def landed(warehouse: Path, sql: str) -> list[tuple]:
    import duckdb

    with duckdb.connect(str(warehouse), read_only=True) as connection:
        return connection.execute(sql).fetchall()


def version_table(warehouse: Path) -> str:
    return landed(
        warehouse, "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'cdc' AND table_name LIKE 'customer_v_%'"
    )[0][0]


@pytest.mark.parametrize(
    "location, message",
    [
        ("kafka:///topic", "expected kafka://HOST:PORT"),
        ("kafka://broker/topic", "expected kafka://HOST:PORT"),
        ("kafka://h:9092/", "name topics in the path or a pattern"),
        ("kafka://h:9092/a?pattern=b", "name topics in the path or a pattern"),
        ("kafka://h:9092/bad topic", "invalid Kafka topic name"),
        ("kafka://h:9092/?pattern=(", "invalid Kafka topic pattern"),
    ],
)
def test_bad_kafka_inputs_are_one_clear_error(location, message):
    with pytest.raises(ConfigError, match=message):
        KafkaInput.parse(location)


def test_kafka_input_options():
    source = KafkaInput.parse("kafka://a:9092,b:9093/orders,customers")
    options = source.reader_options({"kafka.security.protocol": "SASL_SSL", "startingOffsets": "latest"})
    assert options["kafka.bootstrap.servers"] == "a:9092,b:9093"
    assert options["subscribe"] == "orders,customers"
    assert options["startingOffsets"] == "latest" and options["failOnDataLoss"] == "true"
    assert options["kafka.security.protocol"] == "SASL_SSL"
    pattern = KafkaInput.parse("kafka://a:9092/?pattern=shop%5C..*|shop").reader_options()["subscribePattern"]
    assert pattern == r"^(?:shop\..*|shop)$"  # Spark searches a topic's name: anchored, the whole name must match
    assert KafkaInput.parse(r"kafka://a:9092/?pattern=shop[0-9]+\.public\..*").pattern == r"shop[0-9]+\.public\..*"
    with pytest.raises(ConfigError, match="set by uniview"):
        source.reader_options({"subscribe": "other"})


def test_sink_reads_kafka_with_exact_accounting(kafka_bootstrap, producer, tmp_path):
    topic = f"shop-{uuid.uuid4().hex[:8]}"
    for n in range(30):
        producer.send(topic, key=str(n).encode(), value=envelope(n))
    producer.send(topic, key=b"30", value=None)  # a tombstone
    producer.send(topic, key=b"31", value=b"not json")  # garbage
    producer.flush()
    warehouse = tmp_path / "w.duckdb"
    result = subprocess.run(
        sink_command(kafka_bootstrap, topic, warehouse, tmp_path / "ckpt"), capture_output=True, text=True, timeout=240
    )
    assert result.returncode == 0, result.stderr[-3000:]
    table = version_table(warehouse)
    rows = landed(warehouse, f"SELECT id, name FROM cdc.{table} ORDER BY id")
    assert rows == [(n, f"c{n}") for n in range(30)]
    quarantined = landed(warehouse, "SELECT raw_line, source_file FROM cdc._uniview_quarantine ORDER BY source_file")
    assert [source for _, source in quarantined] == [f"kafka://{topic}/0/31"]  # the tombstone is not stored
    # every record is accounted for: 32 read = 30 written + 1 quarantined + 1 skipped (the tombstone)
    assert result.stdout.splitlines()[0].startswith("read=32 written=30 quarantined=1 skipped=1 ")


def _kill_after_first_commit(command: list[str], checkpoint: Path, log: Path, env: dict[str, str]) -> None:
    with open(log, "ab") as out:
        first = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, start_new_session=True, env=env)
    deadline = time.monotonic() + 180
    while not (checkpoint / "commits" / "1").exists() and first.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    os.killpg(first.pid, signal.SIGKILL)
    first.wait()
    assert first.returncode == -signal.SIGKILL, log.read_text()[-3000:]
    with open(log, "ab") as out:
        second = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, timeout=300, env=env)
    assert second.returncode == 0, log.read_text()[-3000:]


def _produce(producer, total: int) -> str:
    topic = f"kill-{uuid.uuid4().hex[:8]}"
    for n in range(total):
        producer.send(topic, value=envelope(n))
    producer.flush()
    return topic


def test_kafka_sink_killed_and_restarted_lands_each_record_once(kafka_bootstrap, producer, tmp_path):
    total = 400
    topic = _produce(producer, total)
    warehouse, checkpoint, log = tmp_path / "w.duckdb", tmp_path / "ckpt", tmp_path / "sink.log"
    command = sink_command(kafka_bootstrap, topic, warehouse, checkpoint, "--kafka-option", "maxOffsetsPerTrigger=50")
    _kill_after_first_commit(command, checkpoint, log, dict(os.environ))
    table = version_table(warehouse)
    counts = landed(warehouse, f"SELECT count(*), count(DISTINCT id) FROM cdc.{table}")[0]
    assert counts == (total, total)


def test_kafka_sink_into_bigquery_killed_and_restarted_lands_each_record_once(
    kafka_bootstrap, producer, tmp_path, connector_emulator_env
):
    environment, options, client = connector_emulator_env
    total = 200
    topic = _produce(producer, total)
    checkpoint, log = tmp_path / "ckpt", tmp_path / "sink.log"
    command = [
        sys.executable,
        "-m",
        "uniview.sink",
        "--input",
        f"kafka://{kafka_bootstrap}/{topic}",
        "--warehouse",
        "bigquery://test-project",
        "--dataset",
        "kafka_cdc",
        "--stream",
        "--checkpoint",
        str(checkpoint),
        "--available-now",
        "--master",
        "local[1]",
        "--kafka-option",
        "maxOffsetsPerTrigger=40",
        *options,
    ]
    _kill_after_first_commit(command, checkpoint, log, {**os.environ, **environment})
    (table,) = [t.table_id for t in client.list_tables("kafka_cdc") if t.table_id.startswith("customer_v_")]
    (row,) = client.query(f"SELECT count(*), count(DISTINCT id) FROM kafka_cdc.{table}").result()
    assert tuple(row.values()) == (total, total)
    (ledger,) = client.query("SELECT count(*), count(DISTINCT batch_id) FROM kafka_cdc._uniview_batches").result()
    assert ledger[0] == ledger[1] == total // 40
