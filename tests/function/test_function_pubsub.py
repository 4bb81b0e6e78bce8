"""The whole local path: Pub/Sub emulator topic -> push subscription -> function served by
functions-framework -> unified view refreshed in a DuckDB file."""

from __future__ import annotations

import json
import time

import pytest

from uniview.cloudfn.events import notification
from uniview.local.function_server import function_server
from uniview.warehouse.url import duckdb_url

pytestmark = pytest.mark.emulator

PROJECT = "local-project"


def wait_for(condition, timeout=45.0, what="condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.25)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture
def pubsub_clients(pubsub_host, monkeypatch):
    from google.cloud import pubsub_v1

    monkeypatch.setenv("PUBSUB_EMULATOR_HOST", pubsub_host)
    publisher, subscriber = pubsub_v1.PublisherClient(), pubsub_v1.SubscriberClient()
    yield publisher, subscriber
    subscriber.close()


def test_published_notification_refreshes_the_view_through_push(tmp_path, pubsub_clients, duckdb_tools):
    publisher, subscriber = pubsub_clients
    path = tmp_path / "warehouse.duckdb"
    duckdb_tools.run(
        path,
        "CREATE SCHEMA cdc",
        "CREATE TABLE cdc.customer_v_abc (id BIGINT, name VARCHAR)",
        "INSERT INTO cdc.customer_v_abc VALUES (1, 'Ann')",
    )  # connection closed: the function opens it
    view_rows = "SELECT CAST(id AS VARCHAR) FROM cdc_unified.customer_unified ORDER BY 1"

    def rows():
        if "cdc_unified.customer_unified" not in duckdb_tools.views(path):
            return None
        return [row[0] for row in duckdb_tools.query(path, view_rows)]

    with function_server(tmp_path, {"UNIVIEW_WAREHOUSE": duckdb_url(path)}) as served:
        topic = publisher.topic_path(PROJECT, "versions")
        publisher.create_topic(name=topic)
        subscription = subscriber.subscription_path(PROJECT, "refresh-views")
        subscriber.create_subscription(
            name=subscription, topic=topic, push_config={"push_endpoint": served.url}, ack_deadline_seconds=20
        )

        def publish(data: bytes) -> str:
            return publisher.publish(topic, data).result(timeout=30)

        first = publish(json.dumps(notification("cdc", "customer", "abc")).encode())
        assert wait_for(rows, what="the view over customer_v_abc") == ["1"]

        duckdb_tools.run(
            path,
            "CREATE TABLE cdc.customer_v_def (id VARCHAR, email VARCHAR)",
            "INSERT INTO cdc.customer_v_def VALUES ('c-2', 'b@example.com')",
        )
        malformed = publish(b"not json at all")
        second = publish(json.dumps(notification("cdc", "customer", "def")).encode())
        assert wait_for(lambda: rows() == ["1", "c-2"] and rows(), what="the view over both versions") == ["1", "c-2"]

        def logged(message_id):
            return [line for line in duckdb_tools.logs(served.log_path) if line.get("message_id") == message_id]

        wait_for(lambda: logged(malformed), what="the malformed message's log line")
        time.sleep(2)  # a redelivery would have happened by now had the function not acked
        [rejected] = logged(malformed)
        assert (rejected["outcome"], rejected["reason"]) == ("rejected", "not_json")
        assert [line["outcome"] for line in logged(first)] == ["refreshed"]
        assert [line["versions"] for line in logged(second) if line["outcome"] == "refreshed"] == [
            ["customer_v_abc", "customer_v_def"]
        ]
        subscriber.delete_subscription(subscription=subscription)
