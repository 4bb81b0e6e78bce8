"""The hostile-message corpus posted over HTTP to the function served by functions-framework."""

from __future__ import annotations

import json

import duckdb
import pytest
import requests
from function_cases import CASES, DATASET, VALID, http_delivery

from uniview.cloudfn.events import push_body
from uniview.local.function_server import function_server
from uniview.warehouse.url import duckdb_url


@pytest.fixture(scope="module")
def hostile_function(tmp_path_factory):
    """A function on a DuckDB file holding hostile.customer_v_abc (closed before the server starts)."""
    directory = tmp_path_factory.mktemp("hostile")
    path = directory / "warehouse.duckdb"
    with duckdb.connect(str(path)) as connection:
        connection.execute(f"CREATE SCHEMA {DATASET}")
        connection.execute(f"CREATE TABLE {DATASET}.customer_v_abc (id BIGINT, name VARCHAR)")
        connection.execute(f"INSERT INTO {DATASET}.customer_v_abc VALUES (1, 'Ann')")
    with function_server(directory, {"UNIVIEW_WAREHOUSE": duckdb_url(path)}) as served:
        yield served, path


def test_hostile_messages_are_acked_logged_and_change_nothing(hostile_function, duckdb_tools):
    served, path = hostile_function
    objects_before = duckdb_tools.query(path, "SELECT schema_name, table_name FROM duckdb_tables() ORDER BY ALL")
    for index, case in enumerate(CASES):
        headers, body = http_delivery(case, index, f"hostile-{case.id}")
        response = requests.post(served.url, data=body, headers=headers, timeout=30)
        assert response.status_code == 200, (case.id, response.status_code, response.text[:300])
    for body, content_type in (("not a request", "text/plain"), (json.dumps({"unrelated": True}), "application/json")):
        response = requests.post(served.url, data=body, headers={"Content-Type": content_type}, timeout=30)
        assert 400 <= response.status_code < 500  # refused by functions-framework before the handler

    assert duckdb_tools.views(path) == []
    assert (
        duckdb_tools.query(path, "SELECT schema_name, table_name FROM duckdb_tables() ORDER BY ALL") == objects_before
    )
    lines = duckdb_tools.logs(served.log_path)
    for case in CASES:
        about = [line for line in lines if line.get("message_id") == f"hostile-{case.id}"]
        assert len(about) == 1, (case.id, about)
        assert (about[0]["outcome"], about[0]["reason"]) in (("rejected", case.reason), ("expired", "expired")), about[
            0
        ]
        assert about[0]["severity"] == "WARNING" and about[0]["message"]

    response = requests.post(served.url, json=push_body(VALID, "valid-after-hostile"), timeout=30)
    assert response.status_code == 200
    assert duckdb_tools.views(path) == [f"{DATASET}_unified.customer_unified"]
    assert duckdb_tools.query(path, f"SELECT id, name FROM {DATASET}_unified.customer_unified") == [(1, "Ann")]
    [line] = [line for line in duckdb_tools.logs(served.log_path) if line.get("message_id") == "valid-after-hostile"]
    assert (line["outcome"], line["family"], line["versions"]) == ("refreshed", "customer", ["customer_v_abc"])
