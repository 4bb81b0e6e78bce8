"""`binlog_row_image` other than FULL never becomes a wrong current row (docs/sources.md, Row images).

With MINIMAL (or NOBLOB) an UPDATE's row event leaves out columns, so an event built from it could not say
what the row now holds.  Against a real MariaDB and Debezium's MySQL connector as uniview configures it
(`uniview.local.kafka.mysql_connector`):

- a server running with `binlog_row_image=MINIMAL` is refused when the connector starts, with a message
  that names the setting, and nothing is published;
- on a FULL server, a client that switches its own session to MINIMAL stops the connector at its first
  partial row: the changes before it are published, that change and every later one are not, so no
  partial row reaches the sink.
"""

from __future__ import annotations

import time

import pytest

from uniview.core.errors import UniviewError

pytest.importorskip("kafka", reason="kafka-python is not installed")
pytestmark = pytest.mark.timeout(600)


def _connector(server, bootstrap, prefix, server_id):
    from uniview.local.kafka import mysql_connector

    return mysql_connector(
        prefix,
        server.host,
        server.port,
        [prefix],
        server.connector_user,
        server.connector_password,
        bootstrap,
        server_id=server_id,
    )


def _create(server, database):
    server.execute(
        f"CREATE DATABASE {database}",
        f"CREATE TABLE {database}.t (id int PRIMARY KEY, a varchar(10), b int NOT NULL, c text)",
        f"INSERT INTO {database}.t VALUES (1, 'x', 1, 'first')",
    )


def test_a_server_with_the_minimal_row_image_is_refused(kafka_bootstrap, tmp_path):
    from uniview.local.kafka import count_change_events, debezium_connect
    from uniview.local.mariadb import find_server, mariadb_server

    if find_server() is None:
        pytest.skip("MariaDB's server (mariadbd) is not installed: run scripts/setup-mariadb.sh")
    with mariadb_server(tmp_path / "minimal", row_image="MINIMAL") as server:
        assert "MINIMAL" in server.execute("SELECT @@binlog_row_image")
        _create(server, "minimal1")
        connector = _connector(server, kafka_bootstrap, "minimal1", 5411)
        refused = pytest.raises(UniviewError, match="binlog_row_image=FULL")
        with refused, debezium_connect(tmp_path / "connect", kafka_bootstrap, [connector], timeout=180):
            pass
    assert count_change_events(kafka_bootstrap, ["minimal1"]) == 0


def test_a_session_switching_to_the_minimal_row_image_stops_the_connector(mariadb, kafka_bootstrap, tmp_path):
    from uniview.local.kafka import connector_status, count_change_events, debezium_connect, wait_for_change_events

    _create(mariadb, "session1")
    connector = _connector(mariadb, kafka_bootstrap, "session1", 5412)
    with debezium_connect(tmp_path / "connect", kafka_bootstrap, [connector], timeout=180) as url:
        wait_for_change_events(kafka_bootstrap, ["session1"], 1)  # the snapshot's row
        mariadb.execute("UPDATE t SET a = 'full' WHERE id = 1", database="session1")
        wait_for_change_events(kafka_bootstrap, ["session1"], 2)
        mariadb.execute(
            "SET SESSION binlog_row_image = MINIMAL",
            "UPDATE t SET a = 'minimal' WHERE id = 1",
            "SET SESSION binlog_row_image = FULL",
            "UPDATE t SET a = 'after' WHERE id = 1",
            database="session1",
        )
        deadline = time.monotonic() + 120
        while (tasks := connector_status(url, "session1")["tasks"]) and tasks[0]["state"] != "FAILED":
            assert time.monotonic() < deadline, tasks
            time.sleep(0.5)
        assert "row size" in tasks[0]["trace"], tasks[0]["trace"][:2000]
    assert count_change_events(kafka_bootstrap, ["session1"]) == 2
