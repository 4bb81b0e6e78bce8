"""The function served by functions-framework, refreshing views in the BigQuery emulator."""

from __future__ import annotations

import json

import pytest
import requests

from uniview.cloudfn.events import cloud_event, notification, push_body
from uniview.local.bigquery_emulator import DEFAULT_PROJECT
from uniview.local.function_server import function_server

pytestmark = pytest.mark.emulator


def structured(event):
    attributes = {key: event[key] for key in ("specversion", "type", "source", "id", "time")}
    return json.dumps({**attributes, "datacontenttype": "application/json", "data": event.data})


def logged(served, message_id):
    lines = [json.loads(line) for line in served.log_path.read_text().splitlines() if line.startswith("{")]
    return [line for line in lines if line.get("message_id") == message_id]


def test_function_refreshes_bigquery_views_and_logs_the_jobs(tmp_path, bq_emulator_host, dataset, run_sql, bq_client):
    run_sql(f"CREATE TABLE `{dataset}`.customer_v_a1 (id INT64)", f"INSERT INTO `{dataset}`.customer_v_a1 VALUES (1)")
    environment = {"UNIVIEW_WAREHOUSE": f"bigquery://{DEFAULT_PROJECT}", "BIGQUERY_EMULATOR_HOST": bq_emulator_host}
    with function_server(tmp_path, environment) as served:
        event = cloud_event(notification(dataset, "customer", "a1"), "bq-1")
        response = requests.post(
            served.url, data=structured(event), timeout=120, headers={"Content-Type": "application/cloudevents+json"}
        )
        assert response.status_code == 200, response.text[:300]
        [line] = logged(served, "bq-1")
        assert (line["outcome"], line["versions"], line["views_replaced"]) == (
            "refreshed",
            ["customer_v_a1"],
            [f"{dataset}_unified.customer_unified"],
        )
        assert len(line["jobs"]) == 1 and line["duration_ms"] > 0
        assert bq_client.get_job(line["jobs"][0]).state == "DONE"

        response = requests.post(
            served.url, json=push_body(notification(dataset, "customer", "a1"), "bq-2"), timeout=120
        )
        assert response.status_code == 200
        [line] = logged(served, "bq-2")
        assert (line["outcome"], line["jobs"]) == ("unchanged", [])

        response = requests.post(
            served.url, json=push_body(notification(dataset, "customer", "zz"), "bq-3"), timeout=120
        )
        assert response.status_code == 500  # the announced table does not exist (yet): Pub/Sub redelivers
        [line] = logged(served, "bq-3")
        assert (line["outcome"], line["reason"]) == ("retry", "NotFoundError")
    rows = bq_client.query(f"SELECT id FROM `{dataset}_unified`.customer_unified").result()
    assert [row["id"] for row in rows] == [1]
