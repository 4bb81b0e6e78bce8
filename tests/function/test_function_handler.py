"""The handler on a real DuckDB file: called directly, and through functions-framework's app."""

from __future__ import annotations

import json
import logging
from datetime import timedelta
from pathlib import Path

import pytest

from uniview.cloudfn.config import load_config, reset_config_cache
from uniview.cloudfn.events import cloud_event, notification
from uniview.cloudfn.handler import handle_cloud_event
from uniview.core.errors import ConfigError, NotFoundError
from uniview.warehouse.url import duckdb_url

MAIN = Path(__file__).resolve().parents[2] / "functions" / "main.py"


@pytest.fixture
def warehouse_file(tmp_path, duckdb_tools):
    path = tmp_path / "warehouse.duckdb"
    duckdb_tools.run(
        path,
        "CREATE SCHEMA cdc",
        "CREATE TABLE cdc.customer_v_abc (id BIGINT, name VARCHAR)",
        "INSERT INTO cdc.customer_v_abc VALUES (1, 'Ann')",
        "CREATE TABLE cdc.orders_v_x1 (order_id BIGINT)",
    )
    return path


def config_for(path, **extra):
    return load_config({"UNIVIEW_WAREHOUSE": duckdb_url(path), **extra})


def test_announced_version_refreshes_its_family_once(warehouse_file, duckdb_tools):
    config = config_for(warehouse_file)
    first = handle_cloud_event(cloud_event(notification("cdc", "customer", "abc"), "m-1"), config=config)
    assert first.status == "refreshed"
    assert [o.family for o in first.outcomes] == ["customer"]
    assert duckdb_tools.views(warehouse_file) == ["cdc_unified.customer_unified"]
    again = handle_cloud_event(cloud_event(notification("cdc", "customer", "abc"), "m-2"), config=config)
    assert again.status == "unchanged" and not again.outcomes[0].changed


def test_full_refresh_message_refreshes_every_family(warehouse_file, duckdb_tools):
    result = handle_cloud_event(cloud_event(notification("cdc"), "m-all"), config=config_for(warehouse_file))
    assert sorted(o.family for o in result.outcomes) == ["customer", "orders"]
    assert duckdb_tools.views(warehouse_file) == ["cdc_unified.customer_unified", "cdc_unified.orders_unified"]


def test_target_dataset_template_and_options_apply(warehouse_file, duckdb_tools):
    config = config_for(warehouse_file, UNIVIEW_TARGET_DATASET="views_{dataset}", UNIVIEW_SOURCE_COLUMN="_version")
    handle_cloud_event(cloud_event(notification("cdc", "customer", "abc"), "m-1"), config=config)
    assert duckdb_tools.query(warehouse_file, "SELECT id, _version FROM views_cdc.customer_unified") == [
        (1, "customer_v_abc")
    ]


def test_version_not_there_yet_raises_so_pubsub_redelivers(warehouse_file, duckdb_tools):
    with pytest.raises(NotFoundError, match="customer_v_new"):
        handle_cloud_event(
            cloud_event(notification("cdc", "customer", "new"), "m-1"), config=config_for(warehouse_file)
        )
    assert duckdb_tools.views(warehouse_file) == []


def test_family_no_view_can_express_is_acknowledged(warehouse_file, duckdb_tools):
    columns = ", ".join(f"column_with_a_long_name_{i} VARCHAR" for i in range(60))
    duckdb_tools.run(warehouse_file, f"CREATE TABLE cdc.wide_v_a1 ({columns})")
    config = config_for(warehouse_file, UNIVIEW_MAX_VIEW_CHARS="1000")
    result = handle_cloud_event(cloud_event(notification("cdc", "wide", "a1"), "m-1"), config=config)
    assert (result.status, result.reason) == ("unbuildable", "LimitError")  # a PlanError: over the view budget
    assert "raise UNIVIEW_MAX_VIEW_CHARS" in str(result.outcomes[0].error)  # named as the function's setting
    assert duckdb_tools.views(warehouse_file) == []


@pytest.fixture
def app_client(warehouse_file, monkeypatch):
    """functions/main.py loaded by functions-framework in this process, configured from the environment."""
    import functions_framework

    monkeypatch.setenv("UNIVIEW_WAREHOUSE", duckdb_url(warehouse_file))
    reset_config_cache()
    yield functions_framework.create_app(target="handler", source=str(MAIN), signature_type="cloudevent").test_client()
    reset_config_cache()
    logger = logging.getLogger("uniview")  # main.py configured JSON logs on stdout for this process
    for handler in [h for h in logger.handlers if getattr(h, "_uniview_structured", False)]:
        logger.removeHandler(handler)
    logger.propagate = True


def structured(event_data, message_id):
    return json.dumps(
        {
            "specversion": "1.0",
            "type": "google.cloud.pubsub.topic.v1.messagePublished",
            "source": "//pubsub.googleapis.com/projects/local/topics/t",
            "id": message_id,
            "datacontenttype": "application/json",
            "data": event_data,
        }
    )


def test_main_acks_refreshes_and_fails_as_decided(app_client, warehouse_file, duckdb_tools):
    event = cloud_event(notification("cdc", "customer", "abc"), "m-1")
    response = app_client.post(
        "/", data=structured(event.data, "m-1"), headers={"Content-Type": "application/cloudevents+json"}
    )
    assert response.status_code == 200
    assert duckdb_tools.views(warehouse_file) == ["cdc_unified.customer_unified"]
    malformed = {"message": {"data": "%%%", "messageId": "m-2"}}
    response = app_client.post(
        "/", data=structured(malformed, "m-2"), headers={"Content-Type": "application/cloudevents+json"}
    )
    assert response.status_code == 200
    missing = cloud_event(notification("cdc", "customer", "zzz"), "m-3")
    response = app_client.post(
        "/", data=structured(missing.data, "m-3"), headers={"Content-Type": "application/cloudevents+json"}
    )
    assert response.status_code == 500


def test_full_refresh_logs_every_familys_outcome_and_one_bad_family_stops_none(warehouse_file, duckdb_tools, caplog):
    columns = ", ".join(f"column_with_a_long_name_{i} VARCHAR" for i in range(60))
    duckdb_tools.run(warehouse_file, f"CREATE TABLE cdc.wide_v_a1 ({columns})")
    config = config_for(warehouse_file, UNIVIEW_MAX_VIEW_CHARS="1000")
    with caplog.at_level(logging.INFO, logger="uniview.cloudfn"):
        result = handle_cloud_event(cloud_event(notification("cdc"), "m-all"), config=config)
    assert (result.status, result.reason) == ("unbuildable", "LimitError")
    assert duckdb_tools.views(warehouse_file) == ["cdc_unified.customer_unified", "cdc_unified.orders_unified"]
    logged = [record.fields for record in caplog.records if getattr(record, "fields", None)]
    by_family = {line.get("family"): line["outcome"] for line in logged if line.get("family")}
    assert by_family == {"customer": "refreshed", "orders": "refreshed", "wide": "unbuildable"}


@pytest.mark.parametrize(
    ("staleness", "message"),
    [("soon", "UNIVIEW_MAX_STALENESS: invalid duration 'soon'"), ("13h", "at most half of UNIVIEW_MAX_EVENT_AGE")],
)
def test_a_staleness_bound_the_event_age_limit_would_cut_short_is_refused(staleness, message):
    with pytest.raises(ConfigError, match=message):
        load_config({"UNIVIEW_WAREHOUSE": "duckdb:///w.duckdb", "UNIVIEW_MAX_STALENESS": staleness})
    assert load_config({"UNIVIEW_WAREHOUSE": "duckdb:///w.duckdb", "UNIVIEW_MAX_STALENESS": "15m"}).max_staleness == (
        timedelta(minutes=15)
    )
