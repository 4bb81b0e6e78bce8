"""Scheduled consolidation in the function (UNIVIEW_CONSOLIDATE_*), on a real DuckDB file (the BigQuery
side of consolidation is tested on the emulator in tests/bigquery/test_bq_consolidation.py)."""

from __future__ import annotations

import logging

import pytest

from uniview.cloudfn.config import load_config
from uniview.cloudfn.events import cloud_event, notification
from uniview.cloudfn.handler import handle_cloud_event
from uniview.core.errors import ConfigError
from uniview.warehouse.url import duckdb_url

VERSIONS = 30


@pytest.fixture
def big_family(tmp_path, duckdb_tools):
    path = tmp_path / "warehouse.duckdb"
    statements = ["CREATE SCHEMA cdc"]
    for index in range(VERSIONS):
        statements += [
            f"CREATE TABLE cdc.customer_v_{index:04d} (id BIGINT, name VARCHAR, v{index % 4} INTEGER)",
            f"INSERT INTO cdc.customer_v_{index:04d} VALUES ({index}, 'n{index}', {index})",
        ]
    duckdb_tools.run(path, *statements)
    return path


def consolidating(path, **extra):
    return load_config(
        {
            "UNIVIEW_WAREHOUSE": duckdb_url(path),
            "UNIVIEW_CONSOLIDATE_IDLE_FOR": "0s",
            "UNIVIEW_CONSOLIDATE_MAX_VERSIONS": "10",
            **extra,
        }
    )


def test_a_scheduled_event_consolidates_then_refreshes(big_family, duckdb_tools, caplog):
    with caplog.at_level(logging.INFO, logger="uniview.cloudfn"):
        result = handle_cloud_event(cloud_event(notification("cdc"), "m-all"), config=consolidating(big_family))
    # consolidation refreshed the view as it went, so the refresh after it finds nothing to change
    assert result.status == "unchanged" and len(result.outcomes[0].versions) == 10  # 9 versions + consolidated
    moved = duckdb_tools.query(
        big_family, "SELECT count(*), sum(rows_moved) FROM main._uniview_folds WHERE state = 'moved'"
    )
    assert moved == [(21, 21)]
    rows = duckdb_tools.query(big_family, "SELECT id, name FROM cdc_unified.customer_unified ORDER BY id")
    assert rows == [(index, f"n{index}") for index in range(VERSIONS)]
    logged = [record.fields for record in caplog.records if getattr(record, "fields", None)]
    assert any(f.get("outcome") == "consolidated" and f.get("family") == "customer" for f in logged)


def test_an_event_for_one_family_does_not_consolidate(big_family, duckdb_tools):
    result = handle_cloud_event(
        cloud_event(notification("cdc", "customer", "0001"), "m-1"), config=consolidating(big_family)
    )
    assert result.status == "refreshed" and len(result.outcomes[0].versions) == VERSIONS
    assert duckdb_tools.query(
        big_family, "SELECT count(*) FROM duckdb_tables() WHERE table_name = '_uniview_folds'"
    ) == [(0,)]


def test_without_the_variable_nothing_is_consolidated(big_family, duckdb_tools):
    config = load_config({"UNIVIEW_WAREHOUSE": duckdb_url(big_family)})
    assert config.consolidation is None
    result = handle_cloud_event(cloud_event(notification("cdc"), "m-all"), config=config)
    assert len(result.outcomes[0].versions) == VERSIONS


def test_the_settings_reach_the_consolidation():
    config = load_config(
        {
            "UNIVIEW_WAREHOUSE": "bigquery://my-project",
            "UNIVIEW_CONSOLIDATE_IDLE_FOR": "30d",
            "UNIVIEW_CONSOLIDATE_SETTLE": "2h",
            "UNIVIEW_CONSOLIDATE_CONTROL_DATASET": "uniview",
        }
    )
    scheduled = config.consolidation
    assert (scheduled.idle_for.days, scheduled.max_versions, scheduled.settle.seconds, scheduled.control_dataset) == (
        30,
        500,
        7200,
        "uniview",
    )


@pytest.mark.parametrize(
    "variables, message",
    [
        ({"UNIVIEW_WAREHOUSE": "duckdb:///w.duckdb", "UNIVIEW_CONSOLIDATE_IDLE_FOR": "a month"}, "invalid duration"),
        (
            {
                "UNIVIEW_WAREHOUSE": "duckdb:///w.duckdb",
                "UNIVIEW_CONSOLIDATE_IDLE_FOR": "1d",
                "UNIVIEW_CONSOLIDATE_MAX_VERSIONS": "1",
            },
            "at least 2",
        ),
        (
            {"UNIVIEW_WAREHOUSE": "duckdb:///w.duckdb", "UNIVIEW_CONSOLIDATE_MAX_VERSIONS": "many"},
            "positive whole number",
        ),
    ],
)
def test_bad_consolidation_settings_are_named(variables, message):
    with pytest.raises(ConfigError, match=message):
        load_config(variables)
