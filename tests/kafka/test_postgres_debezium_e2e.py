"""From a real database to a queryable view: PostgreSQL (logical decoding) -> Debezium's PostgreSQL
connector on Kafka Connect -> a real Kafka broker -> `uniview sink --format debezium --stream`, running
for the whole test -> DuckDB and the BigQuery emulator (real connector) -> notification -> the Cloud
Function under functions-framework -> `<table>_unified` and `<table>_current`.

The test drives the database step by step (DML, ADD COLUMN, a type change to bigint and then
numeric(12,2), a dropped column, a second source database, a transaction over two tables, then what real
tables and migrations do to the latest state: an UPDATE leaving TOASTed text and bytea unchanged, two
primary-key UPDATEs of that row (the bytea left out of their creates), ADD COLUMN ... DEFAULT, a column dropped
and added again, a primary-key UPDATE, a composite key, TRUNCATE, a declared RENAME COLUMN, a `text` ->
`varchar(3)` that cuts older values, and an incremental snapshot through Debezium's signal table while writes
continue; steps of different tables run together, one catch-up of the sinks for them all) and after every step
waits until, per warehouse and source database, `<table>_current` equals `SELECT *` on the source table (every
column it has) and the unified view holds every change, each with its source database and its own
`_cdc_sequence`.  Then each sink is stopped with Ctrl-C and must exit cleanly, its summary accounting for
every change.
"""

from __future__ import annotations

import json
import time

import pytest
from cdc_e2e_support import (
    CdcSource,
    Writes,
    assert_stopped_cleanly,
    running_stack,
    step,
    steps_together,
    streaming_sinks,
    wait_until_views_match_sources,
)

psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed")
kafka = pytest.importorskip("kafka", reason="kafka-python is not installed")

DATABASES = ("shop1", "shop2")
TABLES = ("customer", "orders", "document", "line_item", "ticket", "part")
KEYS = {"line_item": "order_id, line"}
SIGNAL_TABLE = "debezium_signal"
#: Declared for the function of both warehouses: `ticket.memo` is renamed to `note` in one step below.
RENAMES = {"uniview_renames": 1, "renames": [{"table": "ticket", "from": "memo", "to": "note"}]}
SNAPSHOT_PART_ROWS = 1  # rows of `part` in shop1 before the connector starts
#: A partitioned table: rows into both partitions, an UPDATE that moves a row from one to the other (a delete and a
#: create of the root's row), one within a partition, a DELETE.
PARTITION_STEPS = (
    "INSERT INTO part VALUES (2, '2023-06-01', 'a'), (3, '2024-06-01', 'b')",
    "UPDATE part SET placed = '2024-02-01' WHERE id = 1",
    "UPDATE part SET note = 'b2' WHERE id = 3",
    "DELETE FROM part WHERE id = 2",
)
BIG = 20_000  # characters (and bytes) of the values stored out of line (TOAST)
#: PostgreSQL, Kafka, Kafka Connect, two Spark sinks and two functions on one machine: the module takes minutes
#: (9 checks, each waiting for both warehouses' views), longer than the suite's 300 s per test, and more when the
#: machine is shared.
pytestmark = pytest.mark.timeout(1800)


@pytest.fixture(scope="module")
def postgres(postgres_server):
    """The test process's PostgreSQL server with this module's two databases and their tables."""
    with psycopg.connect(postgres_server.dsn(), autocommit=True) as connection:
        for database in DATABASES:
            connection.execute(f"CREATE DATABASE {database}")
    for database in DATABASES:
        run(
            postgres_server,
            database,
            "CREATE TABLE customer (id int PRIMARY KEY, name text, score int)",
            "CREATE TABLE orders (id int PRIMARY KEY, customer_id int, total numeric(10,2))",
            "CREATE TABLE document (id int PRIMARY KEY, title text, body text, blob bytea)",
            # stored out of line, uncompressed, once the row is over ~2 kB: an UPDATE leaving them unchanged
            # does not write them to the WAL, and Debezium sends its placeholder instead
            "ALTER TABLE document ALTER COLUMN body SET STORAGE EXTERNAL",
            "ALTER TABLE document ALTER COLUMN blob SET STORAGE EXTERNAL",
            "CREATE TABLE line_item (order_id int, line int, qty int, PRIMARY KEY (order_id, line))",
            "CREATE TABLE ticket (id int PRIMARY KEY, memo text)",
            # partitioned by range: one family `part`, none per partition
            "CREATE TABLE part (id int, placed date, note text, PRIMARY KEY (id, placed)) PARTITION BY RANGE (placed)",
            "CREATE TABLE part_2023 PARTITION OF part FOR VALUES FROM ('2023-01-01') TO ('2024-01-01')",
            "CREATE TABLE part_2024 PARTITION OF part FOR VALUES FROM ('2024-01-01') TO ('2025-01-01')",
            f"CREATE TABLE {SIGNAL_TABLE} (id varchar(64) PRIMARY KEY, type varchar(32) NOT NULL, data text)",
        )
    # read by the connector's snapshot, through the root only
    run(postgres_server, "shop1", "INSERT INTO part VALUES (1, '2023-03-01', 'snapshot')")
    return postgres_server


def run(server, database, *statements):
    with psycopg.connect(server.dsn(database), autocommit=True) as connection:
        for statement in statements:
            connection.execute(statement)


def source_rows(server, database, table):
    with psycopg.connect(server.dsn(database)) as connection:
        order = KEYS.get(table, "id")
        return [tuple(row) for row in connection.execute(f"SELECT * FROM {table} ORDER BY {order}").fetchall()]


def source_columns(server, database, table):
    with psycopg.connect(server.dsn(database)) as connection:
        return [
            r[0]
            for r in connection.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = %s ORDER BY ordinal_position",
                [table],
            ).fetchall()
        ]


def postgres_source(server) -> CdcSource:
    return CdcSource(
        databases=DATABASES,
        tables=TABLES,
        topic_prefixes=DATABASES,
        input_pattern="shop[0-9]+\\.public\\..*",
        run=lambda database, *statements: run(server, database, *statements),
        rows=lambda database, table: source_rows(server, database, table),
        columns=lambda database, table: source_columns(server, database, table),
        order_by=lambda table: KEYS.get(table, "id"),
    )


@pytest.fixture(scope="module")
def stack(postgres, kafka_connect, connector_emulator_env, tmp_path_factory):
    """Debezium publishing both databases (connectors added to the shared Connect worker), and one sink target +
    function per warehouse."""
    from uniview.local.postgres_publication import captured_connector

    connectors = [captured_connector(postgres, db, db, signal_table=f"public.{SIGNAL_TABLE}") for db in DATABASES]
    with running_stack(
        postgres_source(postgres),
        kafka_connect,
        connector_emulator_env,
        tmp_path_factory.mktemp("cdc"),
        connectors,
        {"UNIVIEW_RENAMES": json.dumps(RENAMES)},
        # DuckDB's <table>_current is a table kept by the function after every sink batch, BigQuery's a view
        # (the MariaDB module swaps them): each mode is checked against the source after every step
        current=("table", "view"),
    ) as running:
        yield running


def test_postgres_changes_reach_the_unified_views_step_by_step(stack):
    """Nine checks: each runs the next change of `shop1.customer`, whose steps follow one another, together with
    the next changes of the other tables, which are independent of it and of each other."""
    events: dict = {("shop1", "part"): SNAPSHOT_PART_ROWS}
    with streaming_sinks(stack) as sinks:
        steps_together(
            stack,
            sinks,
            events,
            Writes(
                "shop1",
                "customer",
                [
                    "INSERT INTO customer VALUES (1, 'Ann', 10), (2, 'Bob', 20), (3, 'Cy', 30)",
                    "UPDATE customer SET name = 'Bobby' WHERE id = 2",
                    "DELETE FROM customer WHERE id = 3",
                ],
                5,
            ),
            Writes(
                "shop2",
                "customer",
                ["INSERT INTO customer VALUES (1, 'Other Ann', 99)", "UPDATE customer SET score = 100 WHERE id = 1"],
                2,
            ),
            TOASTED,
            COMPOSITE_KEY,
            PARTITIONED,
            DECLARED_RENAME,
        )
        assert_no_partition_families(stack)
        steps_together(
            stack,
            sinks,
            events,
            Writes(
                "shop1",
                "customer",
                [
                    "ALTER TABLE customer ADD COLUMN email text",
                    "INSERT INTO customer VALUES (4, 'Dee', 40, 'dee@example.com')",
                    "UPDATE customer SET email = 'ann@example.com' WHERE id = 1",
                ],
                2,
            ),
            Writes(
                "shop2",
                {"customer": 1, "orders": 1},
                ["BEGIN; INSERT INTO customer VALUES (2, 'Tx', 1); INSERT INTO orders VALUES (1, 2, 19.99); COMMIT"],
            ),
            TOASTED_KEY_MOVED,
            CUTTING_TYPE_CHANGE,
        )
        steps_together(
            stack,
            sinks,
            events,
            Writes(
                "shop1",
                "customer",
                [
                    "ALTER TABLE customer ALTER COLUMN score TYPE bigint",
                    "UPDATE customer SET score = 3000000000 WHERE id = 4",
                ],
                1,
            ),
            TRUNCATED,
        )
        step(
            stack,
            sinks,
            events,
            "shop1",
            "customer",
            [
                "ALTER TABLE customer ALTER COLUMN score TYPE numeric(12,2)",
                "UPDATE customer SET score = 12.34 WHERE id = 2",
            ],
            1,
        )
        step(
            stack,
            sinks,
            events,
            "shop1",
            "customer",
            ["ALTER TABLE customer DROP COLUMN name", "INSERT INTO customer VALUES (5, 50.5, 'eve@example.com')"],
            1,
        )
        latest_state_steps(stack, sinks, events)
        assert_stopped_cleanly(sinks, events)


#: TOAST: the UPDATE sends Debezium's placeholder for body and blob; the view shows the values
TOASTED = Writes(
    "shop1",
    "document",
    [
        f"INSERT INTO document VALUES (1, 'first', repeat('toasted text ', {BIG // 13}), "
        f"decode(repeat('00ff', {BIG // 2}), 'hex'))",
        "INSERT INTO document VALUES (2, 'small', 'short', '\\x0102')",
        "UPDATE document SET title = 'renamed' WHERE id = 1",
        "UPDATE document SET title = 'again', body = 'now short' WHERE id = 1",
        "UPDATE document SET title = 'third' WHERE id = 1",
    ],
    5,
)
#: two primary-key UPDATEs of that row: each create leaves the TOASTed blob out, and the row moves with it
TOASTED_KEY_MOVED = Writes(
    "shop1", "document", ["UPDATE document SET id = 3 WHERE id = 1", "UPDATE document SET id = 4 WHERE id = 3"], 4
)
#: a composite key, with a change of one of its columns
COMPOSITE_KEY = Writes(
    "shop1",
    "line_item",
    [
        "INSERT INTO line_item VALUES (1, 1, 5), (1, 2, 1), (2, 1, 7)",
        "UPDATE line_item SET qty = 2 WHERE order_id = 1 AND line = 2",
        "DELETE FROM line_item WHERE order_id = 2 AND line = 1",
        "UPDATE line_item SET line = 3 WHERE order_id = 1 AND line = 1",
    ],
    7,
)
#: the partitioned table: rows into both partitions, one moved between them, one deleted
PARTITIONED = Writes("shop1", "part", PARTITION_STEPS, 6)
#: TRUNCATE: the database's rows leave the current view; the history keeps them
TRUNCATED = Writes("shop2", "orders", ["TRUNCATE orders", "INSERT INTO orders VALUES (2, 2, 5.00)"], 2)
#: RENAME COLUMN, declared (RENAMES): the rows written before it read under the new name
DECLARED_RENAME = Writes(
    "shop1",
    "ticket",
    [
        "INSERT INTO ticket VALUES (1, 'a'), (2, 'b')",
        "ALTER TABLE ticket RENAME COLUMN memo TO note",
        "UPDATE ticket SET note = 'b2' WHERE id = 2",
    ],
    3,
)
#: text -> varchar(3) with a cast, which cuts the longer text older rows hold and logs no change for them: the
#: connector propagates the varchar's length, so the next change is a new version and the view shows the cut
CUTTING_TYPE_CHANGE = Writes(
    "shop1",
    "ticket",
    [
        "UPDATE ticket SET note = 'longer' WHERE id = 1",
        "ALTER TABLE ticket ALTER COLUMN note TYPE varchar(3) USING note::varchar(3)",
        "INSERT INTO ticket VALUES (3, 'c')",
    ],
    2,
)


def latest_state_steps(stack, sinks, events) -> None:
    """What real migrations do to `shop1.customer`'s latest state, each step compared column for column with the
    source (the other tables' cases run with the earlier steps: TOASTED, COMPOSITE_KEY, ...)."""
    # ADD COLUMN ... DEFAULT: every older row shows the default as PostgreSQL stored it, which the connector sends
    # as the catalog spells it: a char padded to its length, a varchar's trailing spaces past its length cut,
    # fractional seconds rounded to the precision (a tie away from 2000-01-01)
    step(
        stack,
        sinks,
        events,
        "shop1",
        "customer",
        [
            "ALTER TABLE customer ADD COLUMN status text NOT NULL DEFAULT 'open'",
            "ALTER TABLE customer ADD COLUMN level int DEFAULT 3",
            "ALTER TABLE customer ADD COLUMN code char(5) DEFAULT 'x'",
            "ALTER TABLE customer ADD COLUMN tag varchar(3) DEFAULT 'ab      '",
            "ALTER TABLE customer ADD COLUMN placed timestamp(0) DEFAULT '2021-05-06 07:08:09.5'",
            "ALTER TABLE customer ADD COLUMN settled timestamp(0) DEFAULT '1999-12-31 23:59:59.5'",
            "ALTER TABLE customer ADD COLUMN stamped timestamp(4) DEFAULT '2021-05-06 07:08:59.99996'",
            "ALTER TABLE customer ADD COLUMN opens time(0) DEFAULT '07:08:09.5'",
            "UPDATE customer SET status = 'closed', level = 1 WHERE id = 1",
        ],
        1,
    )
    # DROP COLUMN, a change, ADD COLUMN again: the dropped values never come back
    step(
        stack,
        sinks,
        events,
        "shop1",
        "customer",
        [
            "ALTER TABLE customer DROP COLUMN email",
            "UPDATE customer SET score = 2 WHERE id = 2",
            "ALTER TABLE customer ADD COLUMN email text",
            "INSERT INTO customer (id, score, email) VALUES (6, 6, 'fay@example.com')",
        ],
        2,
    )
    # a primary-key UPDATE: a delete of the old key (and a tombstone) and a create of the new one
    step(stack, sinks, events, "shop1", "customer", ["UPDATE customer SET id = 10 WHERE id = 4"], 2)
    incremental_snapshot_step(stack, sinks, events)


def assert_no_partition_families(stack) -> None:
    """A partitioned table is one family, named after its root: nothing lands or is viewed under a partition's name."""
    for landing in stack.landings:
        for dataset in ("shop1", "shop1_unified"):
            if landing.name == "duckdb":
                sql = f"SELECT table_name FROM information_schema.tables WHERE table_schema = '{dataset}'"
            else:
                sql = f"SELECT table_name FROM {dataset}.INFORMATION_SCHEMA.TABLES"
            names = [name for (name,) in landing.read(sql)]
            assert not [name for name in names if name.startswith("part_20")], (landing.name, dataset, names)
            assert any(name.startswith("part") for name in names), (landing.name, dataset, names)


def topic_counts(bootstrap: str, prefix: str) -> dict[str, int]:
    """{table: messages with a value} in the Debezium topics `<prefix>.public.<table>`."""
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, consumer_timeout_ms=1000, auto_offset_reset="earliest")
    try:
        topics = [t for t in consumer.topics() if t.startswith(f"{prefix}.public.")]
        partitions = [TopicPartition(t, p) for t in topics for p in consumer.partitions_for_topic(t) or ()]
        consumer.assign(partitions)
        consumer.seek_to_beginning(*partitions)
        counts: dict[str, int] = {}
        for message in consumer:
            if message.value is not None:
                table = message.topic.split(".")[-1]
                counts[table] = counts.get(table, 0) + 1
        return counts
    finally:
        consumer.close()


def incremental_snapshot_step(stack, sinks, events) -> None:
    """Debezium reads `customer` again in chunks (its signal table asks for it) while rows are written: the
    rows read and the changes streamed meanwhile leave `<table>_current` equal to the source.  How many rows
    the snapshot sends depends on the race (a row changed during a chunk is not sent), so the events are
    counted on the topics once the snapshot is done."""
    before = topic_counts(stack.bootstrap, "shop1")
    signal = json.dumps({"data-collections": ["public.customer"], "type": "incremental"})
    stack.source.run(
        "shop1",
        f"INSERT INTO {SIGNAL_TABLE} VALUES ('snapshot-1', 'execute-snapshot', '{signal}')",
        "UPDATE customer SET score = score + 1 WHERE id = 1",
        "INSERT INTO customer (id, score, status) VALUES (7, 7, 'new')",
        "DELETE FROM customer WHERE id = 5",
        "UPDATE customer SET level = 9 WHERE id = 2",
    )
    rows = len(stack.source.rows("shop1", "customer"))
    deadline, stable_since, last = time.monotonic() + 180, time.monotonic(), before
    while True:  # until the snapshot has sent at least every untouched row and nothing more arrives
        counts = topic_counts(stack.bootstrap, "shop1")
        if counts != last:
            stable_since, last = time.monotonic(), counts
        sent = counts.get("customer", 0) - before.get("customer", 0)
        if sent >= 4 + rows - 3 and time.monotonic() - stable_since > 5:
            break
        assert time.monotonic() < deadline, (before, counts)
        time.sleep(1)
    for table, count in counts.items():
        events[("shop1", table)] = count
    wait_until_views_match_sources(stack, sinks, events)
    (snapshot_rows,) = stack.landings[0].read(
        "SELECT count(*) FROM shop1_unified.customer_unified WHERE _cdc_operation = 'SNAPSHOT'"
    )
    assert snapshot_rows[0] >= rows - 3, "the incremental snapshot's rows did not land"
