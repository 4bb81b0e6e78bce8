"""`uniview status` on the local BigQuery emulator through the real CLI: the main states, the pending
notifications from the sink's file, and a number of query jobs that does not grow with the families."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from click.testing import CliRunner
from status.status_scenario import (  # tests/status/status_scenario.py
    FAMILIES,
    FAMILYLESS_COUNTS,
    PENDING,
    QUARANTINE,
    Table,
    assert_freshness,
    elapsed,
)

from uniview.cli.main import main
from uniview.core.billing import MB
from uniview.core.landing_layout import CDC_COLUMNS
from uniview.ops.refresh import RefreshRequest, refresh
from uniview.ops.status.collect import STATUS_JOBS_BIGQUERY, collect
from uniview.ops.status.report import NO_FAMILY, THRESHOLD_EXIT_CODE
from uniview.planning.plan import GeneratorOptions

MAIN_STATES = ("customer", "orders", "legacy", "payments", "invoices")


def create_bigquery(run_sql, dataset: str, tables: list[Table]) -> None:
    for table in tables:
        definitions = ", ".join(f"`{name}` {bq}" for name, bq in [*table.columns, *CDC_COLUMNS])
        run_sql(f"CREATE TABLE `{dataset}`.`{table.name}` ({definitions})")
        values = ", ".join(f"('{database}', TIMESTAMP '{ingested.isoformat()}')" for database, ingested in table.rows)
        if values:
            run_sql(f"INSERT INTO `{dataset}`.`{table.name}` (_cdc_database, _cdc_ingested_at) VALUES {values}")


@pytest.fixture
def scenario(dataset, run_sql, warehouse, tmp_path):
    pytest.importorskip("pyspark", reason="the quarantine's columns are the sink's (uniview[spark])")
    from uniview.sink.frames import QUARANTINE_COLUMNS

    create_bigquery(run_sql, dataset, [t for family in MAIN_STATES for t in FAMILIES[family][0]])
    outcomes = refresh(warehouse, RefreshRequest(dataset, MAIN_STATES, options=GeneratorOptions()))
    assert not [o for o in outcomes if o.failed], outcomes
    create_bigquery(run_sql, dataset, [t for family in MAIN_STATES for t in FAMILIES[family][1]])
    run_sql(f"CREATE TABLE `{dataset}`._uniview_quarantine ({', '.join(f'{n} {t}' for n, t in QUARANTINE_COLUMNS)})")
    rows = ", ".join(
        f"('{{}}', '{reason}', {'NULL' if table is None else repr(table)}, TIMESTAMP '{when.isoformat()}')"
        for table, reason, when in QUARANTINE
    )
    run_sql(f"INSERT INTO `{dataset}`._uniview_quarantine (raw_line, reason, table_name, quarantined_at) VALUES {rows}")
    pending = tmp_path / "uniview_pending_notifications.json"
    pending.write_text(json.dumps([{"dataset": dataset, "table": t, "version": v} for t, v, _ in PENDING]))
    return dataset, pending


def test_status_on_bigquery_tells_the_main_states_apart_in_a_fixed_number_of_jobs(scenario, warehouse):
    dataset, pending = scenario
    args = ["status", "--warehouse", "bigquery://test-project", "--dataset", dataset, "--all", "--json"]
    before = elapsed()
    result = CliRunner().invoke(main, [*args, "--pending-file", str(pending)])
    lags = (before, elapsed())
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    families = {family["family"]: family for family in document["families"]}
    assert {name: family["flags"] for name, family in families.items()} == {
        "customer": [],
        "orders": ["pending"],
        "legacy": ["stale"],
        "payments": ["quarantine"],
        "invoices": ["notifications"],
    }
    assert families["customer"]["source_databases"] == 2 and families["customer"]["views_changed"] is not None
    assert [u["table"] for u in families["orders"]["unread_versions"]] == ["orders_v_b2"]
    assert_freshness(families["legacy"]["freshness_seconds"], timedelta(days=3), *lags)
    assert families["payments"]["quarantine"] == {
        "type_mismatch": {"24h": 2, "7d": 2},
        "unparseable": {"24h": 0, "7d": 1},
    }
    assert all(99 < value <= 100 for value in families["customer"]["headroom_percent"].values())
    # a query of a unified view is billed at least 10 MB per version table; no version is idle for a day
    assert {name: family["query_floor_bytes"] for name, family in families.items()} == {
        name: family["versions"] * 10 * MB for name, family in families.items()
    }
    assert all(family["consolidated_query_floor_bytes"] is None for family in families.values())
    planned = CliRunner().invoke(main, ["plan", *args[1:-1], "--json"])
    assert planned.exit_code == 0, planned.output
    floors = {entry["family"]: entry for entry in json.loads(planned.stdout)["billing"]}
    assert floors["orders"]["version_tables"] == 2
    assert floors["orders"]["floor_bytes"]["query_unified"] == 2 * 10 * MB
    assert floors["orders"]["floor_bytes"]["maintenance"] is None
    # a refresh reads the catalog (columns, tables, their options) before it writes the views: never free
    assert all(entry["floor_bytes"]["refresh"] >= 3 * 10 * MB for entry in floors.values())
    failing = CliRunner().invoke(main, [*args, "--fail-on", "stale=1d"])
    assert failing.exit_code == 3 and "uniview: legacy: crosses --fail-on stale" in failing.stderr
    # the quarantined lines of no family (NULL or empty table_name): a row of their own, watched by --fail-on
    assert document["no_family"] == {
        "name": NO_FAMILY,
        "flags": ["quarantine"],
        "crossed": [],
        "quarantine": FAMILYLESS_COUNTS,
    }
    summary = document["summary"]
    assert (summary[f"{NO_FAMILY} quarantined 24h"], summary[f"{NO_FAMILY} quarantined 7d"]) == (3, 5)
    by_quarantine = CliRunner().invoke(main, [*args[:-1], "--fail-on", "quarantine=2"])
    assert by_quarantine.exit_code == THRESHOLD_EXIT_CODE, by_quarantine.output
    assert by_quarantine.stderr.splitlines() == [f"uniview: {NO_FAMILY}: crosses --fail-on quarantine"]
    (row,) = [line for line in by_quarantine.stdout.split("summary")[0].splitlines() if NO_FAMILY in line]
    assert "quarantine" in row and "3/24h 5/7d" in row  # the terminal table shows the row
    # the same number of query jobs for one family as for all of them
    jobs = []
    for tables in (("customer",), None):
        before = warehouse.jobs_started
        collected = collect(warehouse, RefreshRequest(dataset, tables))
        jobs.append((len(collected.plans), warehouse.jobs_started - before))
    assert jobs == [(1, STATUS_JOBS_BIGQUERY), (len(MAIN_STATES), STATUS_JOBS_BIGQUERY)]


def test_explain_on_bigquery(dataset, run_sql):
    create_bigquery(run_sql, dataset, [*FAMILIES["orders"][0], *FAMILIES["orders"][1]])
    args = ["explain", "--warehouse", "bigquery://test-project", "--dataset", dataset, "--table", "orders", "--json"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert [(v["version"], v["source_databases"]) for v in document["versions"]] == [("a1", ["db1"]), ("b2", ["db2"])]
    identifier = document["columns"][0]
    assert (identifier["name"], identifier["unified_type"], identifier["conflict"]) == ("id", "STRING", True)
    assert [run["type"] for run in identifier["runs"]] == ["INT64", "STRING"]
