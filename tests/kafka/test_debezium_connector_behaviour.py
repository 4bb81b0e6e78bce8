"""A NULL written to a column declared with a DEFAULT reaches Kafka as null through Debezium's PostgreSQL connector
and the Connect worker uniview runs: Kafka Connect's JsonConverter writes the column's default in place of a null
unless `replace.null.with.default` is false (found by the generative test, seed 901: `UPDATE t SET c2 = NULL` on a
column declared `DEFAULT 7` arrived as 7, and `<table>_current` showed 7 where both sources held NULL).

It also pins what the PostgreSQL connector does that uniview documents around: a default it declares wrongly,
which the generative test accepts (MISREAD_BY_CONNECTORS) and docs/sources.md tells users of (when that test
fails, the connector reads it right), and the placeholder it sends for a TOASTed value in a key change, unless
the table's replica identity is FULL."""

from __future__ import annotations

import base64
import json

import pytest

psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed")
kafka = pytest.importorskip("kafka", reason="kafka-python is not installed")

pytestmark = pytest.mark.timeout(600)
DATABASE = "nulldefaults"


def change_events(bootstrap: str, topic: str, count: int, part: str = "payload") -> list[dict]:
    """The first `count` change events of `topic` (their payloads, or schemas), waiting up to two minutes."""
    consumer = kafka.KafkaConsumer(
        topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest", consumer_timeout_ms=120_000
    )
    events = []
    try:
        for message in consumer:
            if message.value:  # a tombstone has none
                events.append(json.loads(message.value)[part])
            if len(events) == count:
                break
    finally:
        consumer.close()
    return events


def test_a_null_written_to_a_column_with_a_default_arrives_as_null(postgres_server, kafka_connect):
    from cdc_e2e_support import connectors_added

    from uniview.local.kafka import postgres_connector

    with psycopg.connect(postgres_server.dsn(), autocommit=True) as connection:
        connection.execute(f"CREATE DATABASE {DATABASE}")
    with psycopg.connect(postgres_server.dsn(DATABASE), autocommit=True) as connection:
        connection.execute("CREATE TABLE t (id int PRIMARY KEY, c bigint DEFAULT 7, s text DEFAULT 'x')")
        connection.execute("INSERT INTO t (id) VALUES (1)")
    connector = postgres_connector(DATABASE, postgres_server.host, postgres_server.port, DATABASE, "postgres")
    with connectors_added(kafka_connect, [connector]):
        with psycopg.connect(postgres_server.dsn(DATABASE), autocommit=True) as connection:
            connection.execute("UPDATE t SET c = NULL, s = NULL WHERE id = 1")
            connection.execute("INSERT INTO t VALUES (2, NULL, NULL)")
        snapshot, update, insert = change_events(kafka_connect.bootstrap, f"{DATABASE}.public.t", 3)
    assert (snapshot["op"], snapshot["after"]) == ("r", {"id": 1, "c": 7, "s": "x"})
    assert (update["op"], update["after"]) == ("u", {"id": 1, "c": None, "s": None})
    assert (insert["op"], insert["after"]) == ("c", {"id": 2, "c": None, "s": None})


def test_the_postgresql_connector_declares_a_boolean_default_written_as_a_number_false(postgres_server, kafka_connect):
    """PostgreSQL stores `DEFAULT 1::boolean` as `(1)::boolean`; Debezium's PostgresDefaultValueConverter reads a
    boolean default with Java's Boolean.parseBoolean, which is false for anything but `true`.  The stream then
    declares `false`, and rows older than such a column show false in `<table>_current` where PostgreSQL has
    true (found by the generative test, seed 1000).  `DEFAULT true` is declared right."""
    from cdc_e2e_support import connectors_added

    from uniview.local.kafka import postgres_connector

    database = "booleandefaults"
    with psycopg.connect(postgres_server.dsn(), autocommit=True) as connection:
        connection.execute(f"CREATE DATABASE {database}")
    with psycopg.connect(postgres_server.dsn(database), autocommit=True) as connection:
        connection.execute("CREATE TABLE t (id int PRIMARY KEY, n boolean DEFAULT 1::boolean, l boolean DEFAULT true)")
        connection.execute("INSERT INTO t (id) VALUES (1)")
        stored = connection.execute(
            "SELECT column_default FROM information_schema.columns WHERE table_name = 't' AND column_name = 'n'"
        ).fetchone()
    assert stored == ("(1)::boolean",)
    connector = postgres_connector(database, postgres_server.host, postgres_server.port, database, "postgres")
    with connectors_added(kafka_connect, [connector]):
        (schema,) = change_events(kafka_connect.bootstrap, f"{database}.public.t", 1, part="schema")
        (payload,) = change_events(kafka_connect.bootstrap, f"{database}.public.t", 1)
    after = next(field for field in schema["fields"] if field["field"] == "after")
    defaults = {field["field"]: field.get("default") for field in after["fields"]}
    assert payload["after"] == {"id": 1, "n": True, "l": True}
    assert (defaults["n"], defaults["l"]) == (False, True)


@pytest.mark.parametrize("identity", ["DEFAULT", "FULL"])
def test_a_key_update_of_a_row_with_an_unchanged_toasted_value(postgres_server, kafka_connect, identity):
    """PostgreSQL logs no unchanged TOASTed value in an UPDATE's new row; an UPDATE of the primary key reaches
    Kafka as a delete of the old key and a create of the new one.  Under REPLICA IDENTITY DEFAULT the create
    carries Debezium's placeholder, which is why a key change of such a row is an open defect of
    `<table>_current` (docs/current-state.md); under FULL the connector sends the value itself, which is the
    way around it docs/sources.md gives."""
    from cdc_e2e_support import connectors_added

    from uniview.local.kafka import postgres_connector

    database = f"toastkey{identity.lower()}"
    text = "x" * 3000
    with psycopg.connect(postgres_server.dsn(), autocommit=True) as connection:
        connection.execute(f"CREATE DATABASE {database}")
    with psycopg.connect(postgres_server.dsn(database), autocommit=True) as connection:
        connection.execute("CREATE TABLE t (id int PRIMARY KEY, doc text)")
        connection.execute("ALTER TABLE t ALTER COLUMN doc SET STORAGE EXTERNAL")
        connection.execute(f"ALTER TABLE t REPLICA IDENTITY {identity}")
        connection.execute("INSERT INTO t VALUES (1, %s)", (text,))
    connector = postgres_connector(database, postgres_server.host, postgres_server.port, database, "postgres")
    with connectors_added(kafka_connect, [connector]):
        with psycopg.connect(postgres_server.dsn(database), autocommit=True) as connection:
            connection.execute("UPDATE t SET id = 2 WHERE id = 1")
        snapshot, delete, create = change_events(kafka_connect.bootstrap, f"{database}.public.t", 3)
    assert (snapshot["op"], delete["op"], create["op"]) == ("r", "d", "c")
    assert create["after"]["id"] == 2
    assert create["after"]["doc"] == (text if identity == "FULL" else "__debezium_unavailable_value")


def test_the_postgresql_connector_sends_a_numeric_at_its_shortest_scale_and_nan_as_null(postgres_server, kafka_connect):
    """PostgreSQL's `numeric` without a scale keeps the scale each value was written with (1.50) and holds NaN
    and (since 14) ±Infinity.  The connector's precise decimal mode (`decimal.handling.mode=precise`,
    docs/sources.md) sends a VariableScaleDecimal whose trailing fractional zeros are dropped (1.50 as 1.5 at
    scale 1), in the snapshot and the stream alike, and null for the special values: `<table>_current` shows
    the same number at its shortest scale, and NULL for those (the generative test compares such a column as
    numbers)."""
    from cdc_e2e_support import connectors_added

    from uniview.local.kafka import postgres_connector

    database = "numericspecials"
    with psycopg.connect(postgres_server.dsn(), autocommit=True) as connection:
        connection.execute(f"CREATE DATABASE {database}")
    with psycopg.connect(postgres_server.dsn(database), autocommit=True) as connection:
        connection.execute("CREATE TABLE t (id int PRIMARY KEY, n numeric)")
        connection.execute("INSERT INTO t VALUES (1, 'NaN'), (2, 'Infinity'), (3, '-Infinity'), (4, 0.00000010)")
    connector = postgres_connector(database, postgres_server.host, postgres_server.port, database, "postgres")
    with connectors_added(kafka_connect, [connector]):
        with psycopg.connect(postgres_server.dsn(database), autocommit=True) as connection:
            connection.execute("INSERT INTO t VALUES (5, 'NaN'), (6, 0.00000010), (7, 1.50)")
        events = change_events(kafka_connect.bootstrap, f"{database}.public.t", 7)
    values = {event["after"]["id"]: (event["op"], event["after"]["n"]) for event in events}
    assert {key: values[key] for key in (1, 2, 3, 5)} == {
        1: ("r", None),
        2: ("r", None),
        3: ("r", None),
        5: ("c", None),
    }
    shortest = {"scale": 7, "value": base64.b64encode(bytes([1])).decode()}  # 1 at scale 7: 0.0000001
    assert (values[4], values[6]) == (("r", shortest), ("c", shortest))
    assert values[7] == ("c", {"scale": 1, "value": base64.b64encode(bytes([15])).decode()})  # 1.50 as 1.5
