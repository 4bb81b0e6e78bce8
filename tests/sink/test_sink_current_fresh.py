"""`<table>_current` kept as a table is fresh after every sink batch on the deployed path: the real sink
announces each batch over HTTP (the plain Pub/Sub push JSON) to the function served by functions-framework
with UNIVIEW_CURRENT=table; after each batch and the function's answer, with no other refresh, the table
equals the source's state, for updates, deletes, key changes and truncates in an EXISTING version, and each
maintenance read exactly the rows of the batch it was told of; into DuckDB, and into the BigQuery emulator
(the sink through the real connector).  Then duplicate, reordered and late announcements change nothing and
read nothing."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import requests
from sink_support import query, record, write_ndjson

from uniview.core.notification import LandedBatch, Notification, push_body
from uniview.local.function_server import function_server
from uniview.sink.job import SinkOptions, run
from uniview.warehouse.url import duckdb_url

CUSTOMER = [("id", "int(11)"), ("first_name", "varchar(255)")]
TABLE = "cdc_unified.customer_current"


class Source:
    """The source table's rows as the changes sent so far leave them, and the records that send them."""

    def __init__(self) -> None:
        self.rows: dict[int, str] = {}
        self.position = 0

    def change(self, operation: str, key: int | None, name: str | None = None) -> dict:
        self.position += 1
        data: dict = {} if key is None else {"id": key, "first_name": name}
        if operation == "TRUNCATE":
            self.rows.clear()
        elif operation == "DELETE":
            self.rows.pop(key, None)
        else:
            self.rows[key] = name  # type: ignore[index]
        return record(
            "customer",
            data,
            CUSTOMER,
            primary_key=["id"],
            operation=operation,
            position=f"mysql-bin.000001:{self.position}",
            timestamp=f"2024-05-01T10:00:{self.position:02d}Z",
        )


def batches(source: Source) -> list[tuple[str, list[dict], dict[int, str]]]:
    """(what, records, the source's rows after them) of each batch: the first creates the version, every
    later one lands in it."""
    steps = [
        ("inserts", lambda: [source.change("INSERT", key, f"n{key}") for key in (1, 2, 3, 4)]),
        ("an update", lambda: [source.change("UPDATE", 2, "Bea")]),
        ("a delete", lambda: [source.change("DELETE", 1)]),
        ("a key change", lambda: [source.change("DELETE", 3), source.change("INSERT", 30, "n3")]),
        ("updates and an insert", lambda: [source.change("UPDATE", 4, "Dan"), source.change("INSERT", 5, "Eve")]),
        ("a truncate", lambda: [source.change("TRUNCATE", None)]),
        ("inserts after the truncate", lambda: [source.change("INSERT", 6, "Fay"), source.change("UPDATE", 6, "Fey")]),
    ]
    return [(what, make(), dict(source.rows)) for what, make in steps]


def current_rows(path: Path) -> dict[int, str]:
    return dict(query(path, f"SELECT id, first_name FROM {TABLE}"))


def landed_events(log_path: Path) -> list[dict]:
    lines = [json.loads(line) for line in log_path.read_text().splitlines() if line.startswith("{")]
    return [line for line in lines if "current_table_action" in line]


@pytest.fixture
def fresh_function(tmp_path):
    path = tmp_path / "w.duckdb"
    env = {"UNIVIEW_WAREHOUSE": duckdb_url(path), "UNIVIEW_CURRENT": "table"}
    with function_server(tmp_path, env) as served:
        yield served, path


def test_every_batch_leaves_the_current_table_fresh_through_the_function(spark, tmp_path, fresh_function):
    served, path = fresh_function
    source = Source()
    for number, (what, records, expected) in enumerate(batches(source)):
        seen = len(landed_events(served.log_path))
        write_ndjson(tmp_path / "in" / f"{number}.json", records)
        options = SinkOptions(
            input=str(tmp_path / "in" / f"{number}.json"), warehouse=duckdb_url(path), dataset="cdc", notify=served.url
        )
        result = run(spark, options)
        assert result.failed == {} and result.counts.total_written == len(records), what
        assert current_rows(path) == expected, f"after {what}"
        events = landed_events(served.log_path)[seen:]
        if number == 0:  # the new version's announcement built the table with the batch: no `landed` one follows
            assert [e["current_table_action"] for e in events] == ["create"], events
        else:  # one announcement per batch, whose maintenance read exactly the batch's rows
            assert [(e["current_table_action"], e["current_table_changes_read"]) for e in events] == [
                ("maintain", len(records))
            ], (what, events)


def test_duplicate_reordered_and_late_announcements_change_nothing(spark, tmp_path, fresh_function):
    served, path = fresh_function
    source = Source()
    steps = batches(source)[:4]
    for number, (_, records, _) in enumerate(steps):
        write_ndjson(tmp_path / "in" / f"{number}.json", records)
        options = SinkOptions(input=str(tmp_path / "in" / f"{number}.json"), warehouse=duckdb_url(path), dataset="cdc")
        run(spark, options)
    assert not query(path, "SELECT count(*) FROM duckdb_tables() WHERE table_name = 'customer_current'")[0][0]
    ledger = query(path, "SELECT stream, batch_id, landed_at FROM main._uniview_batches ORDER BY landed_at")
    announcements = [
        Notification.of_batch(["cdc"], "customer", LandedBatch(stream, batch_id))[0] for stream, batch_id, _ in ledger
    ]
    # the last batch's announcement arrives first: the table is built from every batch committed
    deliver(served.url, announcements[-1], "late-0")
    assert current_rows(path) == steps[-1][2]
    before = query(path, f"SELECT * FROM {TABLE} ORDER BY ALL")
    # then the others, late and out of order, and each twice: nothing is read again, nothing changes
    for index, announcement in enumerate([*reversed(announcements), *announcements]):
        deliver(served.url, announcement, f"again-{index}")
    assert query(path, f"SELECT * FROM {TABLE} ORDER BY ALL") == before
    events = landed_events(served.log_path)
    assert [e["current_table_action"] for e in events] == ["create"] + ["maintain"] * 8
    assert all(e["current_table_changes_read"] == 0 for e in events[1:]), events


def test_a_burst_within_the_staleness_bound_gives_one_maintenance_that_applies_every_batch(spark, tmp_path):
    """UNIVIEW_MAX_STALENESS: the announcements of a burst are answered with a retry until they are that old;
    brought back by Pub/Sub after it, the first one maintains the table, the others find their batch applied."""
    path = tmp_path / "w.duckdb"
    source = Source()
    steps = batches(source)[:3]
    for number, (_, records, _) in enumerate(steps):
        write_ndjson(tmp_path / "in" / f"{number}.json", records)
        run(
            spark, SinkOptions(input=str(tmp_path / "in" / f"{number}.json"), warehouse=duckdb_url(path), dataset="cdc")
        )
    ledger = query(path, "SELECT stream, batch_id FROM main._uniview_batches ORDER BY landed_at")
    burst = [Notification.of_batch(["cdc"], "customer", LandedBatch(*batch))[0] for batch in ledger]
    env = {"UNIVIEW_WAREHOUSE": duckdb_url(path), "UNIVIEW_CURRENT": "table", "UNIVIEW_MAX_STALENESS": "10m"}
    with function_server(tmp_path, env) as served:
        for index, announcement in enumerate(burst):  # just published: each is put off, nothing is maintained
            answer = requests.post(served.url, json=push_body(announcement.data(), f"burst-{index}"), timeout=120)
            assert answer.status_code >= 500, answer.text[:300]
        assert not query(path, "SELECT count(*) FROM duckdb_tables() WHERE table_name = 'customer_current'")[0][0]
        redelivered = datetime.now(UTC) - timedelta(minutes=11)  # Pub/Sub brings them back past the bound
        for index, announcement in enumerate(burst):
            body = push_body(announcement.data(), f"burst-{index}", publish_time=redelivered)
            assert requests.post(served.url, json=body, timeout=120).status_code == 200
        events = landed_events(served.log_path)
        lines = [json.loads(line) for line in served.log_path.read_text().splitlines() if line.startswith("{")]
    assert [e["current_table_action"] for e in events] == ["create"] + ["coalesced"] * (len(burst) - 1), events
    assert [line["outcome"] for line in lines if line.get("reason") == "max_staleness"] == ["deferred"] * len(burst)
    assert current_rows(path) == steps[-1][2]
    assert_equals_view(path)


def assert_equals_view(path: Path) -> None:
    """`<table>_current` holds exactly what the current view computes from every change."""
    from click.testing import CliRunner

    from uniview.cli.main import main

    args = ["--dataset", "cdc", "--table", "customer", "--current", "--target-dataset", "cdc_view"]
    assert CliRunner().invoke(main, ["refresh", "--warehouse", duckdb_url(path), *args]).exit_code == 0
    assert sorted(query(path, f"SELECT * FROM {TABLE}")) == sorted(
        query(path, "SELECT * FROM cdc_view.customer_current")
    )


def test_in_view_mode_an_announcement_is_acknowledged_without_touching_the_warehouse(tmp_path):
    path = tmp_path / "absent.duckdb"
    with function_server(tmp_path, {"UNIVIEW_WAREHOUSE": duckdb_url(path), "UNIVIEW_CURRENT": "view"}) as served:
        deliver(served.url, Notification.of_batch(["cdc"], "customer", LandedBatch("s", 1))[0], "view-mode")
        lines = [json.loads(line) for line in served.log_path.read_text().splitlines() if line.startswith("{")]
    assert [(line["outcome"], line["reason"]) for line in lines if line.get("message_id") == "view-mode"] == [
        ("unchanged", "not_a_current_table")
    ]
    assert not path.exists()  # not even opened


def deliver(url: str, notification: Notification, message_id: str) -> None:
    body = push_body(notification.data(), message_id=message_id)
    response = requests.post(url, json=body, timeout=120)
    assert response.status_code == 200, response.text[:300]


def test_every_batch_leaves_the_current_table_fresh_on_bigquery(spark, tmp_path, connector_stack):
    """The same through the BigQuery emulator: the sink with the real connector, the function on the same
    emulator, the ledger in the sink's dataset (its control dataset), read by the function."""
    from uniview.local.bigquery_emulator import DEFAULT_PROJECT

    client, options = connector_stack
    dataset = f"fresh_{tmp_path.name[-8:].replace('-', '_')}"
    env = {
        "UNIVIEW_WAREHOUSE": f"bigquery://{DEFAULT_PROJECT}",
        "UNIVIEW_CURRENT": "table",
        "BIGQUERY_EMULATOR_HOST": os.environ["BIGQUERY_EMULATOR_HOST"],
    }
    source = Source()
    skipped = ("updates and an insert", "inserts after the truncate")  # a truncate clears what was skipped
    steps = [step for step in batches(source) if step[0] not in skipped]
    with function_server(tmp_path, env) as served:
        for number, (what, records, expected) in enumerate(steps):
            write_ndjson(tmp_path / "in" / f"{number}.json", records)
            sink_options = SinkOptions(
                input=str(tmp_path / "in" / f"{number}.json"),
                warehouse=f"bigquery://{DEFAULT_PROJECT}",
                dataset=dataset,
                notify=served.url,
                bigquery_options=options,
            )
            result = run(spark, sink_options)
            assert result.failed == {}, what
            rows = client.query(f"SELECT id, first_name FROM `{dataset}_unified.customer_current`").result()
            assert {row["id"]: row["first_name"] for row in rows} == expected, f"after {what}"
