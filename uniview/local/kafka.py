"""A single-node Apache Kafka broker (KRaft) and a Kafka Connect worker running Debezium, on loopback.

Both run from the jars uniview.local.java_stack caches (scripts/setup-kafka-stack.sh runs it), in their own process groups, and are
stopped when the block ends, whatever happened inside it:

    with kafka_broker(work_dir) as bootstrap:                       # "127.0.0.1:PORT"
        with debezium_connect(work_dir, bootstrap, [postgres_connector(...)]):   # or mysql_connector(...)
            ...
"""

from __future__ import annotations

import base64
import json
import re
import shutil
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from uniview.core.errors import UniviewError
from uniview.local.java_stack import broker_classpath
from uniview.local.processes import QUICK_JIT, free_port, running_server

#: The largest message the broker takes and Kafka Connect's producers send (Kafka's default is 1 MB).
MAX_MESSAGE_BYTES = 16 * 1024 * 1024
_JAVA = ("java", "-Xms128m", "-Xmx512m", "-XX:+UseSerialGC", QUICK_JIT)


def _write_properties(path: Path, settings: Mapping[str, object]) -> Path:
    path.write_text("".join(f"{key}={value}\n" for key, value in settings.items()))
    return path


def broker_settings(data_dir: Path, port: int, controller_port: int) -> dict[str, object]:
    """A one-node broker+controller that keeps one replica of everything and creates topics on use."""
    return {
        "process.roles": "broker,controller",
        "node.id": 1,
        "controller.quorum.voters": f"1@127.0.0.1:{controller_port}",
        "listeners": f"PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller_port}",
        "advertised.listeners": f"PLAINTEXT://127.0.0.1:{port}",
        "controller.listener.names": "CONTROLLER",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
        "log.dirs": data_dir,
        "num.partitions": 1,
        "auto.create.topics.enable": "true",
        "offsets.topic.replication.factor": 1,
        "transaction.state.log.replication.factor": 1,
        "transaction.state.log.min.isr": 1,
        "group.initial.rebalance.delay.ms": 0,
        # the controller appends a no-op record to the metadata log this often (default 500 ms) to show it is alive;
        # one node has no other broker to show it to: 0.7 s of CPU an idle minute, not 1.1
        "metadata.max.idle.interval.ms": 5000,
        # a change event carries the row twice (before and after): a 1 MB text value makes a 2 MB message
        "message.max.bytes": MAX_MESSAGE_BYTES,
        "replica.fetch.max.bytes": MAX_MESSAGE_BYTES,
    }


@contextmanager
def kafka_broker(work_dir: Path) -> Iterator[str]:
    """Format a fresh KRaft log directory, run the broker; yields its bootstrap address.

    A broker's data is disposable: `work_dir/kafka-data` left by an earlier broker (another cluster id,
    which the storage tool refuses to format over) is deleted first."""
    work_dir = Path(work_dir)
    data_dir = work_dir / "kafka-data"
    shutil.rmtree(data_dir, ignore_errors=True)
    data_dir.mkdir(parents=True)
    port, controller_port = free_port(), free_port()
    config = _write_properties(work_dir / "kafka-server.properties", broker_settings(data_dir, port, controller_port))
    cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
    # `--cluster-id=ID`, not `-t ID`: an id may start with "-", which the tool would read as an option
    _run_java(
        ["kafka.tools.StorageTool", "format", f"--cluster-id={cluster_id}", "--config", str(config)],
        work_dir / "kafka-format.log",
    )
    command = [*_JAVA, "-cp", broker_classpath(), "kafka.Kafka", str(config)]
    with running_server(command, port, work_dir / "kafka.log", timeout=60):
        yield f"127.0.0.1:{port}"


def _run_java(arguments: Sequence[str], log_path: Path) -> None:
    import subprocess

    with open(log_path, "ab") as log:
        result = subprocess.run([*_JAVA, "-cp", broker_classpath(), *arguments], stdout=log, stderr=subprocess.STDOUT)
    if result.returncode != 0:
        raise UniviewError(f"{arguments[0]} exited with code {result.returncode}; see {log_path}")


#: The source types whose type and length the connectors send with each column (`datatype.propagate.source.type`):
#: a varchar's length is part of its version (PostgreSQL); a char's length and a time's precision say how the
#: source stores a declared default (uniview.sink.default_values.stored_default).
POSTGRES_PROPAGATED_TYPES = r".+\.varchar,.+\.bpchar,.+\.timestamp,.+\.timestamptz,.+\.time,.+\.timetz"
MYSQL_PROPAGATED_TYPES = r".+\.char,.+\.datetime,.+\.timestamp,.+\.time"


def postgres_publication(name: str) -> str:
    """The publication (and replication slot) of PostgreSQL connector `name`."""
    return f"uniview_{name}".replace("-", "_")


def postgres_connector(
    name: str,
    host: str,
    port: int,
    database: str,
    user: str,
    *,
    tables: Sequence[str] = (),
    partitions: Sequence[str] = (),
    schemas_enable: bool = True,
    signal_table: str | None = None,
) -> dict[str, object]:
    """Debezium's PostgreSQL connector (pgoutput) for one database; topics are `<name>.<schema>.<table>`.

    It reads the publication `postgres_publication(name)`, which it does not create: uniview creates it with
    `publish_via_partition_root` (uniview.local.postgres_publication.captured_connector).  `partitions`
    (`schema.table`) are left out of the capture, so the snapshot reads a partitioned table once, through its
    root; with `tables` only those are captured.  `TRUNCATE` is published as a truncate event; `signal_table`
    (`schema.table`) is where incremental snapshots are asked for (Debezium's signal table)."""
    settings: dict[str, object] = {
        "name": name,
        "connector.class": "io.debezium.connector.postgresql.PostgresConnector",
        "plugin.name": "pgoutput",
        "database.hostname": host,
        "database.port": port,
        "database.user": user,
        "database.password": "unused",
        "database.dbname": database,
        "topic.prefix": name,
        "slot.name": postgres_publication(name),
        "publication.name": postgres_publication(name),
        # the publication publishes a partition's changes as its root's, which only its creator can ask for
        "publication.autocreate.mode": "disabled",
        "decimal.handling.mode": "precise",
        # a varchar's length travels with its schema: `text` -> `varchar(20)`, which cuts older values, is a version;
        # a char's length and a time's precision tell the sink how PostgreSQL stores a declared default
        "datatype.propagate.source.type": POSTGRES_PROPAGATED_TYPES,
        "snapshot.mode": "initial",
        "skipped.operations": "none",  # TRUNCATE is published (op "t"); Debezium skips it by default
        "key.converter.schemas.enable": str(schemas_enable).lower(),
        "value.converter.schemas.enable": str(schemas_enable).lower(),
    }
    if tables:
        settings["table.include.list"] = ",".join(tables)
    elif partitions:
        settings["table.exclude.list"] = ",".join(re.escape(partition) for partition in partitions)
    if signal_table:
        settings["signal.data.collection"] = signal_table
    return settings


def mysql_connector(
    name: str,
    host: str,
    port: int,
    databases: Sequence[str],
    user: str,
    password: str,
    bootstrap: str,
    *,
    server_id: int = 5401,
    tables: Sequence[str] = (),
    schemas_enable: bool = True,
) -> dict[str, object]:
    """Debezium's MySQL connector (reads MySQL's and MariaDB's binary log) for `databases` of one server.

    Topics are `<name>.<database>.<table>`; the connector's schema history is kept on the broker
    (`<name>.schema-history`), and its schema-change events, which carry each DDL statement, go to the
    topic `<name>` (`include.schema.changes`).  Decimals are exact, times keep microseconds, a
    date of years 1 to 99 is sent as stored (not taken for a 2-digit year), and an
    unsigned BIGINT is a decimal (it may not fit a signed 64-bit integer).  `server_id` must differ from
    the server's and from every other replica's.  `TRUNCATE TABLE` is published as a truncate event.
    """
    settings: dict[str, object] = {
        "name": name,
        "connector.class": "io.debezium.connector.mysql.MySqlConnector",
        "database.hostname": host,
        "database.port": port,
        "database.user": user,
        "database.password": password,
        "database.server.id": server_id,
        "database.ssl.mode": "disabled",
        "database.include.list": ",".join(databases),
        "topic.prefix": name,
        "schema.history.internal.kafka.bootstrap.servers": bootstrap,
        "schema.history.internal.kafka.topic": f"{name}.schema-history",
        "include.schema.changes": "true",
        "decimal.handling.mode": "precise",
        "time.precision.mode": "adaptive_time_microseconds",
        # MySQL and MariaDB map a 2-digit year when it is written; the value stored (year 1 too) is the one to send
        "enable.time.adjuster": "false",
        "bigint.unsigned.handling.mode": "precise",
        # a char's length and a time's precision tell the sink how the server stores a declared default
        "datatype.propagate.source.type": MYSQL_PROPAGATED_TYPES,
        "snapshot.mode": "initial",
        "skipped.operations": "none",  # TRUNCATE TABLE is published (op "t"); Debezium skips it by default
        "key.converter.schemas.enable": str(schemas_enable).lower(),
        "value.converter.schemas.enable": str(schemas_enable).lower(),
    }
    if tables:
        settings["table.include.list"] = ",".join(tables)
    return settings


@contextmanager
def debezium_connect(
    work_dir: Path, bootstrap: str, connectors: Sequence[Mapping[str, object]], timeout: float = 120.0
) -> Iterator[str]:
    """Run Kafka Connect standalone with the given connectors; yields its REST URL once they all run."""
    work_dir = Path(work_dir)
    work_dir.mkdir(parents=True, exist_ok=True)
    rest_port = free_port()
    worker = _write_properties(
        work_dir / "connect-worker.properties",
        {
            "bootstrap.servers": bootstrap,
            "key.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            # an UPDATE that sets a column with a DEFAULT to NULL must arrive as NULL: the JsonConverter writes the
            # column's default in place of a null unless told not to (Kafka 3.9's default is true)
            "value.converter.replace.null.with.default": "false",
            "offset.storage.file.filename": work_dir / "connect.offsets",
            "offset.flush.interval.ms": 500,
            "producer.max.request.size": MAX_MESSAGE_BYTES,
            "listeners": f"http://127.0.0.1:{rest_port}",
            # find the plugins through their ServiceLoader manifests (Kafka 3.6+, Debezium's connectors have them)
            # instead of scanning every class on the class path: 1.1 s of CPU to start the worker, not 2.9
            "plugin.discovery": "service_load",
        },
    )
    files = [_write_properties(work_dir / f"connector-{c['name']}.properties", c) for c in connectors]
    command = [
        *_JAVA,
        "-cp",
        broker_classpath(),
        "org.apache.kafka.connect.cli.ConnectStandalone",
        str(worker),
        *map(str, files),
    ]
    url = f"http://127.0.0.1:{rest_port}"
    with running_server(command, rest_port, work_dir / "connect.log", timeout=timeout):
        for connector in connectors:
            _wait_running(url, str(connector["name"]), timeout, work_dir / "connect.log")
        yield url


def connector_status(url: str, name: str) -> dict:
    """Kafka Connect's status of a connector: its state and its tasks' (with the trace of a failed one)."""
    with urllib.request.urlopen(f"{url}/connectors/{name}/status", timeout=5) as response:
        return json.load(response)


def _wait_running(url: str, name: str, timeout: float, log_path: Path) -> None:
    deadline = time.monotonic() + timeout
    state = "unknown"
    while time.monotonic() < deadline:
        try:
            status = connector_status(url, name)
        except (urllib.error.URLError, OSError, ValueError):
            time.sleep(0.2)
            continue
        tasks = status.get("tasks") or []
        states = {status["connector"]["state"], *(task["state"] for task in tasks)}
        if tasks and states == {"RUNNING"}:
            return
        if "FAILED" in states:
            trace = next((t.get("trace", "") for t in tasks if t["state"] == "FAILED"), "")
            raise UniviewError(f"connector {name} failed: {trace.splitlines()[0] if trace else status}; see {log_path}")
        state = ",".join(sorted(states))
        time.sleep(0.2)
    raise UniviewError(f"connector {name} is not running after {timeout:.0f}s (state {state}); see {log_path}")


#: Debezium's notification of a connector's initial snapshot: its `aggregate_type`, and the `type`s that end it.
INITIAL_SNAPSHOT = "Initial Snapshot"
_SNAPSHOT_ENDS = {"COMPLETED": True, "ABORTED": False}


def notification_topic(name: str) -> str:
    """The topic connector `name` sends its notifications to (with_snapshot_notifications); no table topic's name."""
    return f"{name}-notifications"


def with_snapshot_notifications(connector: Mapping[str, object]) -> dict[str, object]:
    """The connector's settings plus Debezium's notifications to the topic `notification_topic(name)`: the initial
    snapshot's start, each table scanned, and its end (wait_for_snapshots reads them)."""
    return {
        **connector,
        "notification.enabled.channels": "sink",
        "notification.sink.topic.name": notification_topic(str(connector["name"])),
    }


def snapshot_ended(bootstrap: str, name: str) -> bool | None:
    """Whether connector `name`'s initial snapshot completed (True), was aborted (False) or has not ended yet (None),
    read from its notifications topic (the connector must send them: with_snapshot_notifications; the topic is
    created with its first notification)."""
    with _values_from_start(bootstrap, lambda topics: [t for t in topics if t == notification_topic(name)]) as values:
        for message in values:
            value = json.loads(message.value)
            notification = value.get("payload", value)
            if notification.get("aggregate_type") == INITIAL_SNAPSHOT and notification.get("type") in _SNAPSHOT_ENDS:
                return _SNAPSHOT_ENDS[notification["type"]]
    return None


def wait_for_snapshots(bootstrap: str, names: Sequence[str], timeout: float = 120.0) -> None:
    """Until each connector's initial snapshot has ended, so a change made from now on is streamed once from the
    log (made during the snapshot, it may be read by the snapshot and streamed again); UniviewError when a snapshot
    was aborted or `timeout` seconds pass."""
    deadline = time.monotonic() + timeout
    pending = list(names)
    while pending:
        ended = {name: snapshot_ended(bootstrap, name) for name in pending}
        if aborted := [name for name, completed in ended.items() if completed is False]:
            raise UniviewError(f"the initial snapshot of connector {', '.join(aborted)} was aborted")
        pending = [name for name, completed in ended.items() if completed is None]
        if pending and time.monotonic() > deadline:
            raise UniviewError(
                f"the initial snapshot of connector {', '.join(pending)} did not end within {timeout:.0f}s"
            )
        if pending:
            time.sleep(0.2)


def count_change_events(bootstrap: str, topic_prefixes: Sequence[str]) -> int:
    """Messages with a value (tombstones not counted) in the Debezium table topics `<prefix>.<schema>.<table>`."""

    def table_topics(topics: set[str]) -> list[str]:
        return [t for t in topics if t.split(".")[0] in topic_prefixes and t.count(".") == 2]

    with _values_from_start(bootstrap, table_topics) as values:
        return sum(1 for _ in values)


@contextmanager
def _values_from_start(bootstrap: str, chosen: Callable[[set[str]], list[str]]) -> Iterator[Iterator[Any]]:
    """The messages with a value in the topics `chosen` picks among the broker's, from their beginning to the end
    they had when reading began (none when no such topic exists yet)."""
    # check_crcs=False: kafka-python checks a batch's CRC-32C in pure Python, most of a read's CPU; these reads only
    # tell which messages have a value and what they say, and TCP already checks what the local broker sends
    with _consumer(bootstrap, check_crcs=False) as consumer:
        partitions = _partitions(consumer, chosen)
        if not partitions:
            yield iter(())
            return
        consumer.assign(partitions)
        consumer.seek_to_beginning(*partitions)
        yield _values_up_to(consumer, consumer.end_offsets(partitions))


@contextmanager
def _consumer(bootstrap: str, **settings: Any) -> Iterator[Any]:
    """A consumer of the broker, in no group, closed when the block ends."""
    from kafka import KafkaConsumer

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, **settings)
    try:
        yield consumer
    finally:
        consumer.close()


def _partitions(consumer: Any, chosen: Callable[[set[str]], list[str]]) -> list[Any]:
    """Every partition of the topics `chosen` picks among those the broker has now."""
    from kafka import TopicPartition

    return [TopicPartition(t, p) for t in chosen(consumer.topics()) for p in consumer.partitions_for_topic(t) or ()]


def _values_up_to(consumer: Any, ends: dict[Any, int]) -> Iterator[Any]:
    """The messages with a value an assigned `consumer` reads until its position reaches `ends` ({partition: the
    offset after its last message when reading began}) in every partition, or a second passes without one."""
    while any(consumer.position(partition) < end for partition, end in ends.items()):
        batch = consumer.poll(timeout_ms=1000)
        if not batch:
            return
        yield from (message for messages in batch.values() for message in messages if message.value is not None)


def wait_for_change_events(bootstrap: str, topic_prefixes: Sequence[str], count: int, timeout: float = 90.0) -> int:
    """Until the table topics hold at least `count` change events; UniviewError after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        seen = count_change_events(bootstrap, topic_prefixes)
        if seen >= count:
            return seen
        if time.monotonic() > deadline:
            raise UniviewError(f"only {seen} of {count} change events reached Kafka within {timeout:.0f}s")
        time.sleep(0.3)


def prefix_messages(bootstrap: str, topic_prefixes: Sequence[str]) -> int:
    """The messages (tombstones too) in every topic of the prefixes: the table topics, the schema-change topic
    `<prefix>` and any other `<prefix>.…`, counted from the partitions' offsets."""
    with _consumer(bootstrap) as consumer:
        return _prefix_messages(consumer, topic_prefixes)


def _prefix_messages(consumer: Any, topic_prefixes: Sequence[str]) -> int:
    partitions = _partitions(consumer, lambda topics: [t for t in topics if t.split(".")[0] in topic_prefixes])
    if not partitions:
        return 0
    ends, starts = consumer.end_offsets(partitions), consumer.beginning_offsets(partitions)
    return sum(ends[partition] - starts[partition] for partition in partitions)


def wait_until_prefixes_settle(
    bootstrap: str, topic_prefixes: Sequence[str], quiet: float = 1.0, timeout: float = 30.0
) -> int:
    """Until no message has reached any topic of the prefixes for `quiet` seconds: a connector's schema-change
    events and a delete's tombstone, which wait_for_change_events does not count, are in Kafka too.  The count
    then; UniviewError when the topics still grow after `timeout` seconds.  One consumer asks the broker each
    time (its list of topics too: a step may create one)."""
    deadline = time.monotonic() + timeout
    with _consumer(bootstrap) as consumer:
        seen, since = _prefix_messages(consumer, topic_prefixes), time.monotonic()
        while time.monotonic() - since < quiet:
            if time.monotonic() > deadline:
                raise UniviewError(f"messages still reached Kafka after {timeout:.0f}s")
            time.sleep(0.2)
            now = _prefix_messages(consumer, topic_prefixes)
            if now != seen:
                seen, since = now, time.monotonic()
    return seen
