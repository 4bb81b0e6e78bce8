"""From MariaDB's binary log to a queryable view: MariaDB 10.11 (ROW format, FULL row image) -> Debezium's
MySQL connector on Kafka Connect -> a real Kafka broker -> `uniview sink --format debezium --stream`, running
for the whole test -> DuckDB and the BigQuery emulator (real connector) -> notification -> the Cloud Function
under functions-framework -> `<table>_unified` and `<table>_current`.

The same step-by-step test as PostgreSQL's (tests/kafka/cdc_e2e_support.py): DML, ADD COLUMN, int -> bigint,
a decimal widened, DROP COLUMN, a second source database, a composite primary key, a MEDIUMTEXT value of
about 1 MB, a primary-key UPDATE, a dropped column added again, ADD COLUMN ... DEFAULT, RENAME COLUMN (read
from the DDL on the schema-change topic), TRUNCATE TABLE, a transaction over two tables, a primary key
redefined, a generated column added.  Steps of different tables run together, one catch-up of the sinks for
them all (`steps_together`); after every step, per warehouse and source database, `<table>_current`
equals `SELECT *` on the source table (every column it has) and `<table>_unified` holds every change once.
Then each sink is stopped with Ctrl-C and must account
for every change and every schema-change event.
"""

from __future__ import annotations

import datetime as dt

import pytest
from cdc_e2e_support import (
    CdcSource,
    Writes,
    running_stack,
    step,
    steps_together,
    stopped_summary,
    streaming_sinks,
    wait_for_log,
)

pymysql = pytest.importorskip("pymysql", reason="PyMySQL is not installed")
kafka = pytest.importorskip("kafka", reason="kafka-python is not installed")

DATABASES = ("shop1", "shop2")
TABLES = ("customer", "orders", "line_item", "document", "product", "rn", "gt", "pt")
#: The tables the renames below create (as the old and the shadow tables of the swaps are called meanwhile).
RENAMED_TABLES = ("rn2", "_gt_gho", "_gt_del", "_pt_new")
KEYS = {"line_item": "order_id, line"}
PREFIX = "maria"
#: MariaDB, Kafka, Kafka Connect, two Spark sinks and two functions on one slow 2-core machine: minutes (6 checks,
#: each waiting for both warehouses' views), more when the machine is shared.
pytestmark = pytest.mark.timeout(1500)
SNAPSHOT_ENDED = "Snapshot ended with SnapshotResult [status=COMPLETED"
BIG = 1_000_000  # characters of the MEDIUMTEXT value: its change event is over Kafka's default 1 MB


def connect(server, database=None):
    return pymysql.connect(unix_socket=str(server.socket), user="root", database=database, autocommit=True)


def run(server, database, *statements):
    with connect(server, database) as connection, connection.cursor() as cursor:
        for statement in statements:
            cursor.execute(statement)


def source_rows(server, database, table):
    """`SELECT *` on the table in key order; [] when the database has no such table (not yet, or no more)."""
    with connect(server, database) as connection, connection.cursor() as cursor:
        if not cursor.execute("SHOW TABLES LIKE %s", [table]):
            return []
        cursor.execute(f"SELECT * FROM {table} ORDER BY {KEYS.get(table, 'id')}")
        return [tuple(time_of_day(value) for value in row) for row in cursor.fetchall()]


def time_of_day(value):
    """MariaDB's TIME as PyMySQL reads it (a duration) as the time of day BigQuery's TIME holds."""
    return (dt.datetime.min + value).time() if isinstance(value, dt.timedelta) else value


def source_columns(server, database, table):
    with connect(server) as connection, connection.cursor() as cursor:
        cursor.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_schema = %s AND table_name = %s "
            "ORDER BY ordinal_position",
            [database, table],
        )
        return [row[0] for row in cursor.fetchall()]


def assert_stopped_cleanly_with_ddl(sinks, events, checks):
    """Stop every sink with Ctrl-C: it wrote every change event, and the schema-change events of a database in
    that dataset's `_uniview_ddl`; it skipped the schema-change events of no table (the snapshot's
    `SET character_set_server=...`: schema_change_without_table) and quarantined nothing, no missing_metadata
    from the connector's start; it left none pending.  It read each of the `checks` in one micro-batch (the sinks
    are paused while a check's statements reach Kafka: cdc_e2e_support.sinks_paused)."""
    for sink in sinks:
        summary = stopped_summary(sink)
        assert summary["batches"] == checks, (sink.landing.name, summary["batches"], checks)
        ddl = sum(count for table, count in summary["written_by_table"].items() if "._uniview_ddl_v_" in table)
        assert ddl >= 2 * len(TABLES) + 8, (sink.landing.name, summary)  # each CREATE TABLE, the 7 ALTERs, TRUNCATE
        assert summary["written"] - ddl == sum(events.values()), (sink.landing.name, summary)
        assert summary["quarantined_by_reason"] == {} and summary["quarantined"] == 0, (sink.landing.name, summary)
        assert set(summary["skipped_by_kind"]) <= {"tombstone", "schema_change_without_table"}, summary
        assert summary["pending"] == [], (sink.landing.name, summary)
        assert summary["read"] == summary["written"] + summary["quarantined"] + summary["skipped"], summary
        assert summary["stopped_by"] == "SIGINT", (sink.landing.name, summary)


#: `product`'s rows, id 2's code changed under the first key (4 change events, in the first step), then, in the
#: last step, its key redefined with its columns unchanged (a version of its own: every change after it reaches the
#: views, and the rows written before it go on under the new key) and a STORED generated column added to the table
#: with rows (the source computed it for them and logged no change, so their value is not known: UNKNOWN), a new row
#: carrying it (4 change events).
PRODUCT_BEFORE = [
    "INSERT INTO product VALUES (1, 'a', 10), (2, 'b', 20), (3, 'c', 30)",
    "UPDATE product SET code = 'bb' WHERE id = 2",
]
PRODUCT_AFTER = [
    "ALTER TABLE product DROP PRIMARY KEY, ADD PRIMARY KEY (code)",
    "INSERT INTO product VALUES (4, 'd', 40)",
    "UPDATE product SET price = 11 WHERE code = 'a'",
    "DELETE FROM product WHERE code = 'c'",
    "ALTER TABLE product ADD COLUMN doubled int AS (price * 2) STORED",
    "INSERT INTO product (id, code, price) VALUES (6, 'f', 60)",
]
#: The cells uniview cannot know, per (database, table): {key: {column: how}} (cdc_e2e_support.unknown_accepted).
UNKNOWN = {("shop1", "product"): {key: {"doubled": "named"} for key in (1, 2, 4)}}


def mariadb_source(server) -> CdcSource:
    return CdcSource(
        databases=DATABASES,
        tables=TABLES + RENAMED_TABLES,
        topic_prefixes=(PREFIX,),
        # the table topics and the schema-change topic (each DDL statement: renames are read from it)
        input_pattern=f"{PREFIX}\\.shop[0-9]+\\..*|{PREFIX}",
        run=lambda database, *statements: run(server, database, *statements),
        rows=lambda database, table: source_rows(server, database, table),
        columns=lambda database, table: source_columns(server, database, table),
        order_by=lambda table: KEYS.get(table, "id"),
        unknown=lambda database, table: UNKNOWN.get((database, table), {}),
    )


@pytest.fixture(scope="module")
def stack(mariadb, kafka_connect, connector_emulator_env, tmp_path_factory):
    """Debezium publishing both databases of the server (a connector added to the shared Connect worker), and one
    sink target + function per warehouse."""
    from uniview.local.kafka import mysql_connector

    for database in DATABASES:
        run(mariadb, None, f"CREATE DATABASE {database}")
        run(
            mariadb,
            database,
            "CREATE TABLE customer (id int PRIMARY KEY, name varchar(100), score int)",
            "CREATE TABLE orders (id int PRIMARY KEY, customer_id int, total decimal(10,2))",
            "CREATE TABLE line_item (order_id int, line int, sku varchar(20), qty int, PRIMARY KEY (order_id, line))",
            "CREATE TABLE document (id int PRIMARY KEY, title varchar(50), body mediumtext)",
            "CREATE TABLE product (id int PRIMARY KEY, code varchar(20), price int)",
            *(f"CREATE TABLE {table} (id int PRIMARY KEY, v varchar(20))" for table in ("rn", "gt", "pt")),
        )
    connector = mysql_connector(
        PREFIX,
        mariadb.host,
        mariadb.port,
        DATABASES,
        mariadb.connector_user,
        mariadb.connector_password,
        kafka_connect.bootstrap,
    )
    with running_stack(
        mariadb_source(mariadb),
        kafka_connect,
        connector_emulator_env,
        tmp_path_factory.mktemp("cdc-mariadb"),
        [connector],
        # a step run while the connector's initial snapshot reads the tables would be read twice, by the
        # snapshot (as SNAPSHOT changes) and from the binary log
        ready=lambda since: wait_for_log(kafka_connect, SNAPSHOT_ENDED, since),
        # DuckDB's <table>_current is a view, BigQuery's a table kept by the function after every sink batch
        # (the PostgreSQL module swaps them): each mode is checked against the source after every step
        current=("view", "table"),
    ) as running:
        yield running


def test_mariadb_changes_reach_the_unified_views_step_by_step(stack):
    """Six checks: each runs the next change of `shop1.customer`, whose steps follow one another, together with
    the next changes of the other tables, which are independent of it and of each other."""
    events: dict = {}
    with streaming_sinks(stack) as sinks:
        steps_together(
            stack,
            sinks,
            events,
            Writes(
                "shop1",
                {"customer": 5, "product": 4, "rn": 3, "gt": 2, "pt": 2},
                [
                    "INSERT INTO customer VALUES (1, 'Ann', 10), (2, 'Bob', 20), (3, 'Cy', 30)",
                    "UPDATE customer SET name = 'Bobby' WHERE id = 2",
                    "DELETE FROM customer WHERE id = 3",
                    *PRODUCT_BEFORE,
                    *RENAMED_BEFORE,
                ],
            ),
            Writes("shop1", "orders", ["INSERT INTO orders VALUES (1, 1, 19.99), (2, 4, 5.00)"], 2),
            Writes(
                "shop2",
                "customer",
                ["INSERT INTO customer VALUES (1, 'Other Ann', 99)", "UPDATE customer SET score = 100 WHERE id = 1"],
                2,
            ),
            Writes(
                "shop2",
                "line_item",
                [
                    "INSERT INTO line_item VALUES (1, 1, 'A-1', 2), (1, 2, 'B-7', 1), (2, 1, 'A-1', 5)",
                    "UPDATE line_item SET qty = 3 WHERE order_id = 1 AND line = 2",
                    "DELETE FROM line_item WHERE order_id = 1 AND line = 1",
                ],
                5,
            ),
            Writes(
                "shop2",
                "document",
                [
                    f"INSERT INTO document VALUES (1, 'big', REPEAT('x', {BIG})), (2, 'small', 'text')",
                    "UPDATE document SET title = 'still big' WHERE id = 1",
                    f"UPDATE document SET body = CONCAT(REPEAT('y', {BIG}), 'end') WHERE id = 2",
                ],
                4,
            ),
        )
        steps_together(
            stack,
            sinks,
            events,
            Writes(
                "shop1",
                "customer",
                [
                    "ALTER TABLE customer ADD COLUMN email varchar(100)",
                    "INSERT INTO customer VALUES (4, 'Dee', 40, 'dee@example.com')",
                    "UPDATE customer SET email = 'ann@example.com' WHERE id = 1",
                ],
                2,
            ),
            Writes(
                "shop1",
                "orders",
                ["ALTER TABLE orders MODIFY total decimal(14,4)", "UPDATE orders SET total = 1234.5678 WHERE id = 2"],
                1,
            ),
            # a primary-key UPDATE: a delete of the old key (and its tombstone) and a create of the new one
            Writes("shop2", "customer", ["UPDATE customer SET id = 10 WHERE id = 1"], 2),
            # TRUNCATE TABLE: one truncate event; the current view is empty, then holds what comes after it
            Writes("shop2", "line_item", ["TRUNCATE TABLE line_item"], 1),
            Writes("shop1", "product", PRODUCT_AFTER, 4),
        )
        steps_together(
            stack,
            sinks,
            events,
            Writes(
                "shop1",
                "customer",
                ["ALTER TABLE customer MODIFY score bigint", "UPDATE customer SET score = 3000000000 WHERE id = 4"],
                1,
            ),
            # ADD COLUMN with a default: the rows written before it show the default as MariaDB stored it, which the
            # connector sends as the DDL spells it: a char without its trailing spaces, fractional seconds past the
            # precision cut (not rounded), a decimal rounded to its scale away from zero
            Writes(
                "shop1",
                "orders",
                [
                    "ALTER TABLE orders ADD COLUMN status varchar(10) NOT NULL DEFAULT 'open'",
                    "ALTER TABLE orders ADD COLUMN code char(5) DEFAULT 'ab      '",
                    "ALTER TABLE orders ADD COLUMN placed datetime DEFAULT '2021-05-06 07:08:09.5'",
                    "ALTER TABLE orders ADD COLUMN opens time(3) DEFAULT '07:08:09.1235'",
                    "ALTER TABLE orders ADD COLUMN fee decimal(6,2) DEFAULT -1.555",
                    "INSERT INTO orders (id, customer_id, total) VALUES (3, 5, 7.5)",
                ],
                1,
            ),
            Writes("shop2", "line_item", ["INSERT INTO line_item VALUES (3, 1, 'C-3', 1)"], 1),
            shadow_copies(),
            Writes(
                "shop2",
                {"customer": 1, "orders": 1},
                [
                    "BEGIN",
                    "INSERT INTO customer VALUES (2, 'Tx', 1)",
                    "INSERT INTO orders VALUES (1, 2, 19.99)",
                    "COMMIT",
                ],
            ),
        )
        step(
            stack,
            sinks,
            events,
            "shop1",
            "customer",
            ["ALTER TABLE customer DROP COLUMN name", "INSERT INTO customer VALUES (5, 50, 'eve@example.com')"],
            1,
        )
        # a column dropped and added again: every row the source has shows it NULL, none its old value
        step(
            stack,
            sinks,
            events,
            "shop1",
            "customer",
            [
                "ALTER TABLE customer ADD COLUMN name varchar(100)",
                "INSERT INTO customer (id, score, email, name) VALUES (6, 60, 'fay@example.com', 'Fay')",
            ],
            1,
        )
        # RENAME COLUMN, read from the DDL: the rows written before it show their value under the new name
        steps_together(
            stack,
            sinks,
            events,
            Writes(
                "shop1",
                "customer",
                [
                    "ALTER TABLE customer RENAME COLUMN email TO contact",
                    "INSERT INTO customer (id, score, contact, name) VALUES (7, 70, 'gil@example.com', 'Gil')",
                ],
                1,
            ),
            swapped(events),
        )
        assert_renamed_tables_hold_nothing(stack)
        assert_each_ddl_row_has_its_log_position(stack)
        assert_stopped_cleanly_with_ddl(sinks, events, checks=6)


#: The tables renamed below, written first: `rn` (renamed to `rn2`), `gt` (swapped as gh-ost does) and `pt` (swapped
#: as pt-online-schema-change does), 7 change events in shop1.
RENAMED_BEFORE = [
    "INSERT INTO rn VALUES (1, 'a'), (2, 'b')",
    "UPDATE rn SET v = 'b2' WHERE id = 2",
    "INSERT INTO gt VALUES (1, 'a'), (2, 'b')",
    "INSERT INTO pt VALUES (1, 'a'), (2, 'b')",
]
#: The online migrations' copy: a shadow table with a new column, the rows copied into it, and a write to the table
#: copied too (gh-ost replays it from the binary log, pt-online-schema-change's triggers write it).  9 change events:
#: gt 1, _gt_gho 3, pt 2, _pt_new 4 (2 copied, 2 written by the triggers; a REPLACE of a row there is an update).
SHADOW_COPIES = [
    "CREATE TABLE _gt_gho LIKE gt",
    "ALTER TABLE _gt_gho ADD COLUMN extra int NOT NULL DEFAULT 0",
    "INSERT INTO _gt_gho (id, v) SELECT id, v FROM gt",
    "UPDATE gt SET v = 'b2' WHERE id = 2",
    "UPDATE _gt_gho SET v = 'b2' WHERE id = 2",
    "CREATE TABLE _pt_new LIKE pt",
    "ALTER TABLE _pt_new ADD COLUMN extra int NOT NULL DEFAULT 0",
    "CREATE TRIGGER pt_ins AFTER INSERT ON pt FOR EACH ROW REPLACE INTO _pt_new (id, v) VALUES (NEW.id, NEW.v)",
    "CREATE TRIGGER pt_upd AFTER UPDATE ON pt FOR EACH ROW REPLACE INTO _pt_new (id, v) VALUES (NEW.id, NEW.v)",
    "CREATE TRIGGER pt_del AFTER DELETE ON pt FOR EACH ROW DELETE IGNORE FROM _pt_new WHERE id = OLD.id",
    "INSERT LOW_PRIORITY IGNORE INTO _pt_new (id, v) SELECT id, v FROM pt LOCK IN SHARE MODE",
    "INSERT INTO pt VALUES (3, 'c')",
    "UPDATE pt SET v = 'a2' WHERE id = 1",
]
#: The renames: `rn` to `rn2`, then a row written and one deleted; gh-ost's swap (the old table kept as `_gt_del`)
#: and pt-online-schema-change's (the old table dropped), each followed by a write.  4 change events.
SWAPS = [
    "RENAME TABLE rn TO rn2",
    "INSERT INTO rn2 VALUES (3, 'c')",
    "DELETE FROM rn2 WHERE id = 1",
    "RENAME TABLE gt TO _gt_del, _gt_gho TO gt",
    "INSERT INTO gt (id, v) VALUES (3, 'c')",
    "RENAME TABLE pt TO _pt_old, _pt_new TO pt",
    "DROP TRIGGER pt_ins",
    "DROP TRIGGER pt_upd",
    "DROP TRIGGER pt_del",
    "DROP TABLE _pt_old",
    "UPDATE pt SET v = 'c2' WHERE id = 3",
]


def shadow_copies() -> Writes:
    """The online migrations' copy into their shadow tables (each table then compared with its source)."""
    return Writes("shop1", {"gt": 1, "_gt_gho": 3, "pt": 2, "_pt_new": 4}, SHADOW_COPIES)


def swapped(events: dict) -> Writes:
    """A table renamed, and the swaps of gh-ost and pt-online-schema-change: a rename carries the table's changes, so
    those counted so far are the new name's; each `<table>_current` then equals its table, with the rows written under
    the old names."""
    for moves in ((("rn", "rn2"),), (("gt", "_gt_del"), ("_gt_gho", "gt")), (("pt", "_pt_old"), ("_pt_new", "pt"))):
        for old, new in moves:
            events[("shop1", new)] = events.pop(("shop1", old), 0)
    return Writes("shop1", {"rn2": 2, "gt": 1, "pt": 1}, SWAPS)


def assert_renamed_tables_hold_nothing(stack) -> None:
    """The renamed table's and the shadow tables' old names hold nothing."""
    for landing in stack.landings:
        for table in ("rn", "_gt_gho", "_pt_new"):
            assert landing.read(f"SELECT * FROM shop1_unified.{table}_current") == [], (landing.name, table)


def assert_each_ddl_row_has_its_log_position(stack) -> None:
    """Every row of `_uniview_ddl` holds the log position of its statement: the sink read the schema-change topic
    `maria`, not the schema history `maria.schema-history` beside it, whose records carry the same statements again
    without one (its pattern matches a topic's whole name, docs/sources.md)."""
    for landing in stack.landings:
        for database in DATABASES:
            if landing.name == "duckdb":
                listed = f"information_schema.tables WHERE table_schema = '{database}' AND"
            else:
                listed = f"{database}.INFORMATION_SCHEMA.TABLES WHERE"
            tables = landing.read(f"SELECT table_name FROM {listed} starts_with(table_name, '_uniview_ddl_v_')")
            for (table,) in tables:
                found = landing.read(f"SELECT count(*), count(_cdc_position) FROM {database}.{table}")
                assert found[0][0] == found[0][1] > 0, (landing.name, database, table, found)
