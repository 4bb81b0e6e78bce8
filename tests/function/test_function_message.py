"""Message decoding, configuration and log format of the Cloud Function, without servers."""

from __future__ import annotations

import io
import json
import logging
from datetime import UTC, datetime, timedelta

import pytest
from cloudevents.http import CloudEvent
from function_cases import CASES, VALID, event_attributes, event_data

from uniview.cloudfn.config import ENV_VARS, load_config
from uniview.cloudfn.events import cloud_event
from uniview.cloudfn.handler import handle_cloud_event
from uniview.cloudfn.logs import configure_logging, log_event
from uniview.cloudfn.message import MalformedMessageError, Notification, message_from_event, parse_notification
from uniview.core.errors import ConfigError

CONFIG = load_config({"UNIVIEW_WAREHOUSE": "duckdb:////nonexistent-dir/never-opened.duckdb"})


def test_notification_for_one_new_version():
    notification = parse_notification(json.dumps(VALID).encode())
    assert notification == Notification("hostile", "customer", "abc")
    assert notification.version_table == "customer_v_abc"


def test_notification_for_every_family():
    assert parse_notification(b'{"dataset": "cdc", "all": true}') == Notification("cdc")


def test_unknown_fields_are_ignored_and_reported():
    data = {**VALID, "sent_by": "sink", "table": {**VALID["table"], "created": 5}}
    notification = parse_notification(json.dumps(data).encode())
    assert notification == Notification("hostile", "customer", "abc")
    assert notification.ignored_fields == ("sent_by", "table.created")


def test_family_name_may_contain_the_version_marker():
    data = {"dataset": "cdc", "table": {"name": "customer_v", "version": "5b6ffe5fb"}}
    assert parse_notification(json.dumps(data).encode()).version_table == "customer_v_v_5b6ffe5fb"


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_hostile_message_is_rejected_with_its_reason(case):
    """The handler acknowledges every case (returns) with the expected reason, before any warehouse is opened."""
    event = CloudEvent(event_attributes(case, case.id), event_data(case, case.id))
    result = handle_cloud_event(event, config=CONFIG)
    assert (result.status in ("rejected", "expired"), result.reason) == (True, case.reason)
    assert result.message_id == case.id


def test_corpus_is_large_and_varied():
    assert len(CASES) >= 30 and len({case.id for case in CASES}) == len(CASES)
    assert len({case.reason for case in CASES}) >= 10


def test_message_id_publish_time_and_data_are_read_from_the_event():
    when = datetime(2026, 1, 2, 3, 4, 5, 123456, tzinfo=UTC)
    event = cloud_event(VALID, "m-1", time="2026-01-02T03:04:05.123456789Z")
    message = message_from_event(event)
    assert (message.message_id, message.event_time, json.loads(message.data)) == ("m-1", when, VALID)


def test_event_at_the_age_limit_is_processed_and_past_it_dropped():
    now = datetime(2026, 1, 2, tzinfo=UTC)
    config = load_config(
        {"UNIVIEW_WAREHOUSE": "duckdb:////nonexistent-dir/x.duckdb", "UNIVIEW_MAX_EVENT_AGE_SECONDS": "60"}
    )
    old = cloud_event(VALID, "old", time=(now - timedelta(seconds=61)).isoformat())
    assert handle_cloud_event(old, config=config, now=now).status == "expired"
    fresh = cloud_event({"dataset": "cdc", "all": "yes"}, "fresh", time=(now - timedelta(seconds=60)).isoformat())
    assert handle_cloud_event(fresh, config=config, now=now).status == "rejected"


def test_malformed_message_error_is_a_uniview_error_with_a_reason():
    with pytest.raises(MalformedMessageError) as raised:
        parse_notification(b"{}")
    assert raised.value.reason == "missing_field" and '"dataset"' in str(raised.value)


def test_env_vars_are_the_documented_set():
    assert ENV_VARS == (
        "UNIVIEW_WAREHOUSE",
        "UNIVIEW_TARGET_DATASET",
        "UNIVIEW_POLICY",
        "UNIVIEW_MAX_VIEW_CHARS",
        "UNIVIEW_DATETIME_TIMEZONE",
        "UNIVIEW_SOURCE_COLUMN",
        "UNIVIEW_CURRENT",
        "UNIVIEW_RENAMES",
        "UNIVIEW_MAX_EVENT_AGE_SECONDS",
        "UNIVIEW_MAX_STALENESS",
        "UNIVIEW_CONSOLIDATE_IDLE_FOR",
        "UNIVIEW_CONSOLIDATE_MAX_VERSIONS",
        "UNIVIEW_CONSOLIDATE_SETTLE",
        "UNIVIEW_CONSOLIDATE_CONTROL_DATASET",
        "UNIVIEW_CONTROL_DATASET",
    )


def test_config_defaults():
    config = load_config({"UNIVIEW_WAREHOUSE": "bigquery://my-project", "UNIVIEW_POLICY": ""})
    assert config.target_dataset("cdc") == "cdc_unified"
    assert (config.options.policy, config.options.max_view_chars, config.max_event_age_seconds) == (
        "uniview",
        250_000,
        86_400,
    )
    assert config.options.datetime_timezone is None and config.options.source_column is None


def test_config_with_every_variable():
    config = load_config(
        {
            "UNIVIEW_WAREHOUSE": "duckdb:///local.duckdb",
            "UNIVIEW_TARGET_DATASET": "views_{dataset}",
            "UNIVIEW_POLICY": "widen",
            "UNIVIEW_MAX_VIEW_CHARS": "50000",
            "UNIVIEW_DATETIME_TIMEZONE": "Europe/Paris",
            "UNIVIEW_SOURCE_COLUMN": "_version",
            "UNIVIEW_MAX_EVENT_AGE_SECONDS": "600",
            "UNIVIEW_CURRENT": "True",
        }
    )
    assert config.options.current == "view"
    assert config.target_dataset("cdc") == "views_cdc"
    assert (
        config.options.policy,
        config.options.max_view_chars,
        config.options.datetime_timezone,
        config.options.source_column,
        config.max_event_age_seconds,
    ) == ("widen", 50_000, "Europe/Paris", "_version", 600)


@pytest.mark.parametrize(
    ("text", "mode"),
    [
        ("", "off"),
        ("false", "off"),
        ("off", "off"),
        ("true", "view"),
        ("View", "view"),
        ("table", "table"),
        (" TABLE ", "table"),
    ],
)
def test_uniview_current_takes_off_view_or_table(text, mode):
    config = load_config({"UNIVIEW_WAREHOUSE": "bigquery://my-project", "UNIVIEW_CURRENT": text})
    assert config.options.current == mode


def test_uniview_current_names_a_value_it_does_not_know():
    with pytest.raises(ConfigError) as raised:
        load_config({"UNIVIEW_WAREHOUSE": "bigquery://my-project", "UNIVIEW_CURRENT": "materialized"})
    assert (
        "UNIVIEW_CURRENT" in str(raised.value)
        and "table" in str(raised.value)
        and "'materialized'" in str(raised.value)
    )


def test_config_reports_every_problem_at_once():
    with pytest.raises(ConfigError) as raised:
        load_config(
            {
                "UNIVIEW_TARGET_DATASET": "{dataset.__class__}",
                "UNIVIEW_POLICY": "newest",
                "UNIVIEW_MAX_VIEW_CHARS": "12",
                "UNIVIEW_DATETIME_TIMEZONE": "Mars/Olympus",
                "UNIVIEW_SOURCE_COLUMN": "bad.name",
                "UNIVIEW_MAX_EVENT_AGE_SECONDS": "-5",
                "UNIVIEW_MAX_STALENESS": "when it suits",
                "UNIVIEW_CURRENT": "materialized",
                "UNIVIEW_RENAMES": '{"renames": []}',
                "UNIVIEW_CONSOLIDATE_IDLE_FOR": "soon",
                "UNIVIEW_CONSOLIDATE_MAX_VERSIONS": "x",
                "UNIVIEW_CONSOLIDATE_SETTLE": "later",
                "UNIVIEW_CONSOLIDATE_CONTROL_DATASET": "bad-name",
                "UNIVIEW_CONTROL_DATASET": "bad-name",
            }
        )
    message = str(raised.value)
    for variable in ENV_VARS:
        assert variable in message


@pytest.mark.parametrize(
    "url", ["", "postgres://x", "bigquery://", "bigquery://Bad_Project", "bigquery://proj-123/extra", "duckdb:///"]
)
def test_config_rejects_warehouse_urls(url):
    with pytest.raises(ConfigError, match="UNIVIEW_WAREHOUSE"):
        load_config({"UNIVIEW_WAREHOUSE": url})


def test_logs_are_one_json_object_per_line_with_severity_message_and_fields():
    stream = io.StringIO()
    logger = configure_logging(stream)
    configure_logging(stream)  # idempotent: still one handler
    try:
        log_event(
            logging.getLogger("uniview.cloudfn"),
            logging.WARNING,
            "rejected",
            message_id="m-1",
            reason="oversize",
            skipped=None,
        )
        try:
            raise ValueError("boom")
        except ValueError:
            logging.getLogger("uniview.warehouse").exception("failed")
    finally:
        for handler in list(logger.handlers):
            if getattr(handler, "stream", None) is stream:
                logger.removeHandler(handler)
        logger.propagate = True
    first, second = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert {k: first[k] for k in ("severity", "message", "message_id", "reason")} == {
        "severity": "WARNING",
        "message": "rejected",
        "message_id": "m-1",
        "reason": "oversize",
    }
    assert "skipped" not in first
    assert second["severity"] == "ERROR" and "ValueError: boom" in second["exception"]


def test_dataset_whose_target_name_is_too_long_is_rejected():
    event = cloud_event({"dataset": "d" * 1020, "all": True}, "long-target")
    result = handle_cloud_event(event, config=CONFIG)
    assert (result.status, result.reason) == ("rejected", "invalid_name")
