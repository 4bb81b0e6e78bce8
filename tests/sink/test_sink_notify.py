"""Notifications after new version tables: Pub/Sub (emulator), HTTP push, inline refresh, retries."""

from __future__ import annotations

import json
import time
from dataclasses import replace
from datetime import datetime

import pytest
from sink_support import Endpoint, query, record, write_ndjson

from uniview.local.processes import free_port
from uniview.local.pubsub_emulator import find_emulator_jar, pubsub_emulator
from uniview.sink.job import SinkOptions, run
from uniview.sink.versioning import SourceColumn, compute_version
from uniview.warehouse.url import duckdb_url

CUSTOMER = [("id", "int(11)"), ("first_name", "varchar(255)")]
ORDERS = [("id", "bigint(20)"), ("amount", "decimal(10,2)")]


def version(table, schema):
    return compute_version(table, [SourceColumn(n, t) for n, t in schema])


def message(table, schema, dataset="cdc"):
    """The exact message data the sink must send for a new table."""
    return (
        '{"dataset": "%s", "table": {"name": "%s", "version": "%s"}}' % (dataset, table, version(table, schema))
    ).encode()


def write_two_tables(directory):
    write_ndjson(directory / "a.json", [record("customer", {"id": 1, "first_name": "Ann"}, CUSTOMER)])
    write_ndjson(directory / "b.json", [record("orders", {"id": 7, "amount": 1.5}, ORDERS)])


@pytest.fixture
def endpoint():
    server = Endpoint()
    yield server
    server.close()


def pending(warehouse):
    return query(warehouse, "SELECT dataset, table_name, version FROM main._uniview_pending_notifications ORDER BY 2")


@pytest.fixture(scope="module")
def emulator(tmp_path_factory):
    if find_emulator_jar() is None:
        pytest.skip("the Pub/Sub emulator (apt package google-cloud-cli-pubsub-emulator) is not installed")
    with pubsub_emulator(tmp_path_factory.mktemp("pubsub")) as host:
        yield host


def created_only(data: list[bytes]) -> list[bytes]:
    """The announcements of new version tables among `data` (each batch also announces what landed)."""
    return [item for item in data if "table" in json.loads(item)]


def landed_families(data: list[bytes]) -> list[tuple[str, list[str]]]:
    """(family, datasets) of each `landed` announcement among `data`."""
    bodies = [json.loads(item) for item in data]
    return [(body["landed"]["name"], body["landed"]["datasets"]) for body in bodies if "landed" in body]


def test_pubsub_notifications_through_the_emulator(spark, tmp_path, emulator, monkeypatch):
    from google.cloud import pubsub_v1

    monkeypatch.setenv("PUBSUB_EMULATOR_HOST", emulator)
    publisher, subscriber = pubsub_v1.PublisherClient(), pubsub_v1.SubscriberClient()
    topic = publisher.topic_path("test-project", "uniview-tables")
    subscription = subscriber.subscription_path("test-project", "check")
    publisher.create_topic(name=topic)
    subscriber.create_subscription(name=subscription, topic=topic)
    write_two_tables(tmp_path / "in")
    warehouse = tmp_path / "w.duckdb"
    options = SinkOptions(
        input=str(tmp_path / "in"),
        warehouse=duckdb_url(warehouse),
        dataset="cdc",
        notify="pubsub://test-project/uniview-tables",
    )
    result = run(spark, options)
    received = pulled(subscriber, subscription, 2)
    # each family's new version is announced; the version's refresh maintains it, so no `landed` follows
    assert sorted(received) == sorted([message("customer", CUSTOMER), message("orders", ORDERS)])
    assert len(result.sent) == 2 and result.failed == {} and pending(warehouse) == []
    again = run(spark, options)  # the batch again: already landed, announced as landed, no version to announce
    assert again.counts.total_written == 2 and again.sent == []
    assert sorted(landed_families(pulled(subscriber, subscription, 2))) == [("customer", ["cdc"]), ("orders", ["cdc"])]


def pulled(subscriber, subscription, count: int) -> list[bytes]:
    """The messages of `subscription`, acknowledged: `count` of them, then any more that come within a second."""
    from google.api_core.exceptions import DeadlineExceeded

    received, deadline = [], time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            timeout = 10 if len(received) < count else 1
            response = subscriber.pull(subscription=subscription, max_messages=10, timeout=timeout)
        except DeadlineExceeded:
            response = None
        if not response or not response.received_messages:
            if len(received) >= count:
                break
            continue
        received += [m.message.data for m in response.received_messages]
        subscriber.acknowledge(subscription=subscription, ack_ids=[m.ack_id for m in response.received_messages])
    return received


def test_http_notification_is_a_pubsub_push_body(spark, tmp_path, endpoint):
    write_two_tables(tmp_path / "in")
    warehouse = tmp_path / "w.duckdb"
    options = SinkOptions(
        input=str(tmp_path / "in"), warehouse=duckdb_url(warehouse), dataset="cdc", notify=endpoint.url
    )
    run(spark, options)
    assert sorted(created_only(endpoint.data())) == sorted([message("customer", CUSTOMER), message("orders", ORDERS)])
    assert landed_families(endpoint.data()) == []  # the new versions' refreshes maintain their families
    write_ndjson(tmp_path / "in2" / "c.json", [record("orders", {"id": 8, "amount": 2.5}, ORDERS)])
    run(spark, replace(options, input=str(tmp_path / "in2")))  # rows of an existing version: announced as landed
    assert landed_families(endpoint.data()) == [("orders", ["cdc"])]
    body = endpoint.bodies[0]
    assert body["subscription"] == "projects/local/subscriptions/uniview-sink"
    assert set(body["message"]) == {"data", "messageId", "publishTime", "attributes"}
    assert body["message"]["messageId"] != endpoint.bodies[1]["message"]["messageId"]
    datetime.strptime(body["message"]["publishTime"], "%Y-%m-%dT%H:%M:%S.%fZ")
    assert pending(warehouse) == []


def test_a_failed_notification_is_retried_on_the_next_batch(spark, tmp_path):
    failing_once = Endpoint(statuses=[500])
    try:
        write_two_tables(tmp_path / "in")
        warehouse = tmp_path / "w.duckdb"
        result = run(
            spark,
            SinkOptions(
                input=str(tmp_path / "in"),
                warehouse=duckdb_url(warehouse),
                dataset="cdc",
                notify=failing_once.url,
                stream=True,
                checkpoint=str(tmp_path / "ck"),
                available_now=True,
                max_files_per_trigger=1,
            ),
        )
        assert result.batches == 2
        assert created_only(failing_once.data()) == [
            message("customer", CUSTOMER),
            message("customer", CUSTOMER),
            message("orders", ORDERS),
        ]
        assert result.failed == {} and pending(warehouse) == []
    finally:
        failing_once.close()


def test_a_notification_that_fails_for_a_whole_run_waits_for_the_next_run(spark, tmp_path, endpoint):
    write_two_tables(tmp_path / "in")
    warehouse = tmp_path / "w.duckdb"
    unreachable = f"http://127.0.0.1:{free_port()}/"
    first = run(
        spark,
        SinkOptions(
            input=str(tmp_path / "in" / "a.json"), warehouse=duckdb_url(warehouse), dataset="cdc", notify=unreachable
        ),
    )
    assert [n.table for n in first.failed] == ["customer"] and "URLError" in next(iter(first.failed.values()))
    assert pending(warehouse) == [("cdc", "customer", version("customer", CUSTOMER))]
    second = run(
        spark,
        SinkOptions(
            input=str(tmp_path / "in" / "b.json"), warehouse=duckdb_url(warehouse), dataset="cdc", notify=endpoint.url
        ),
    )
    assert created_only(endpoint.data()) == [message("customer", CUSTOMER), message("orders", ORDERS)]
    assert second.failed == {} and pending(warehouse) == []


def test_inline_notification_refreshes_the_unified_view(spark, tmp_path):
    write_ndjson(tmp_path / "in" / "a.json", [record("customer", {"id": 1, "first_name": "Ann"}, CUSTOMER)])
    write_ndjson(
        tmp_path / "in" / "b.json",
        [record("customer", {"id": "c-2", "email": "b@x"}, [("id", "varchar(10)"), ("email", "varchar(50)")])],
    )
    warehouse = tmp_path / "w.duckdb"
    result = run(
        spark, SinkOptions(input=str(tmp_path / "in"), warehouse=duckdb_url(warehouse), dataset="cdc", notify="inline")
    )
    assert len(result.sent) == 2 and result.failed == {}
    rows = query(
        warehouse, "SELECT CAST(id AS VARCHAR), first_name, email FROM cdc_unified.customer_unified ORDER BY 1"
    )
    assert rows == [("1", "Ann", None), ("c-2", None, "b@x")]


def test_inline_refresh_keeps_the_current_table_after_every_batch(spark, tmp_path):
    """--current table: a batch that only adds rows to an existing version (no notification) still brings
    <table>_current up to date."""
    from uniview.planning.plan import GeneratorOptions

    def change(operation, position, data):
        return record("customer", data, CUSTOMER, operation=operation, position=position, primary_key=["id"])

    warehouse = tmp_path / "w.duckdb"

    def sink(name, lines):
        write_ndjson(tmp_path / name / "a.json", lines)
        options = SinkOptions(
            input=str(tmp_path / name),
            warehouse=duckdb_url(warehouse),
            dataset="cdc",
            notify="inline",
            generator_options=GeneratorOptions(current="table"),
        )
        return run(spark, options)

    first = sink(
        "in1",
        [
            change("INSERT", "b.000001:10", {"id": 1, "first_name": "Ann"}),
            change("INSERT", "b.000001:20", {"id": 2, "first_name": "Bob"}),
        ],
    )
    assert len(first.sent) == 1
    second = sink(
        "in2",
        [
            change("UPDATE", "b.000001:30", {"id": 1, "first_name": "Anna"}),
            change("DELETE", "b.000001:40", {"id": 2, "first_name": "Bob"}),
        ],
    )
    assert second.sent == [] and second.failed == {}  # no new version: nothing announced
    kind = query(warehouse, "SELECT table_type FROM information_schema.tables WHERE table_name = 'customer_current'")
    assert kind == [("BASE TABLE",)]
    assert query(warehouse, "SELECT id, first_name FROM cdc_unified.customer_current") == [(1, "Anna")]


def test_pending_notifications_file_under_the_checkpoint(spark, tmp_path):
    """The BigQuery warehouse keeps pending notifications in a file through Hadoop's file system."""
    from uniview.sink.notify import Notification
    from uniview.sink.pending import PENDING_FILE_NAME, HadoopFilePendingStore

    store = HadoopFilePendingStore(spark, str(tmp_path / "checkpoint"))
    assert store.pending() == []
    first, second = Notification("cdc", "a", "1"), Notification("cdc", "b", "2")
    store.add([second, first])
    store.add([first])
    assert store.pending() == [first, second]
    store.remove(first)
    assert HadoopFilePendingStore(spark, str(tmp_path / "checkpoint")).pending() == [second]
    assert json.loads((tmp_path / "checkpoint" / PENDING_FILE_NAME).read_text()) == [
        {"dataset": "cdc", "table": "b", "version": "2"}
    ]
