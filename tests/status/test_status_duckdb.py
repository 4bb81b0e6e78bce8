"""`uniview status` on a DuckDB warehouse through the real CLI: a family in every state."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from click.testing import CliRunner
from status_scenario import FAMILYLESS_COUNTS, OVER_VERSIONS, assert_freshness, elapsed

from uniview.cli.main import main
from uniview.core import limits
from uniview.core.billing import MB, size_text
from uniview.ops.refresh import RefreshRequest
from uniview.ops.status.collect import STATUS_QUERIES_DUCKDB, collect
from uniview.ops.status.report import (
    NO_FAMILY,
    THRESHOLD_EXIT_CODE,
    family_statuses,
    no_family_status,
    parse_fail_on,
)
from uniview.warehouse import open_warehouse
from uniview.warehouse.url import duckdb_url


def status(path, *args):
    return CliRunner().invoke(main, ["status", "--warehouse", duckdb_url(path), "--dataset", "cdc", *args])


@pytest.fixture(scope="module")
def report(warehouse_file):
    before = elapsed()
    result = status(warehouse_file, "--all", "--json")
    lags = (before, elapsed())
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    return document, {family["family"]: family for family in document["families"]}, lags


def test_a_healthy_family_shows_its_versions_databases_headroom_and_freshness(report):
    _, families, lags = report
    customer = families["customer"]
    assert customer["flags"] == []
    assert (customer["versions"], customer["source_databases"], customer["rows"]) == (1, 2, 2)
    assert customer["unread_versions"] == [] and not customer["view_outdated"]
    assert_freshness(customer["freshness_seconds"], timedelta(minutes=5), *lags)
    assert set(customer["headroom_percent"]) == {"tables per query", "resolved SQL", "columns", "view size"}
    assert all(99 < value <= 100 for value in customer["headroom_percent"].values())
    assert customer["views_changed"] is None  # DuckDB records no time of a view's change


def test_a_version_table_no_view_reads_yet_is_pending_since_its_first_row(report):
    _, families, _ = report
    orders = families["orders"]
    assert orders["flags"] == ["pending"]
    assert [u["table"] for u in orders["unread_versions"]] == ["orders_v_b2"]
    assert orders["versions"] == 2 and orders["source_databases"] == 2
    assert orders["unread_versions"][0]["since"].startswith(str(orders["newest_ingested"])[:13])


def test_headroom_near_and_over_a_limit_comes_from_the_limit_model(report):
    _, families, _ = report
    wide = families["wide"]
    assert wide["flags"] == ["near limit"]
    assert wide["headroom_percent"]["columns"] == pytest.approx(100 * (1 - 8_500 / limits.MAX_COLUMNS), abs=0.1)
    hub = families["hub"]
    assert hub["flags"][0] == "over limit"
    used = (OVER_VERSIONS + 1) / (limits.MAX_QUERY_RESOURCES - limits.RESOURCES_RESERVE)
    assert hub["headroom_percent"]["tables per query"] == pytest.approx(100 * (1 - used), abs=0.1)
    assert hub["headroom_percent"]["tables per query"] < 0
    assert len(hub["unread_versions"]) == OVER_VERSIONS  # refresh refuses it: no view reads any of them


def test_stale_quarantine_and_pending_notifications(report):
    _, families, lags = report
    assert families["legacy"]["flags"] == ["stale"]
    assert_freshness(families["legacy"]["freshness_seconds"], timedelta(days=3), *lags)
    payments = families["payments"]
    assert payments["flags"] == ["quarantine"]
    assert payments["quarantine"] == {"type_mismatch": {"24h": 2, "7d": 2}, "unparseable": {"24h": 0, "7d": 1}}
    invoices = families["invoices"]
    assert invoices["flags"] == ["notifications"]
    assert [(p["table"], p["version"]) for p in invoices["pending_notifications"]] == [("invoices", "b7")]


def test_each_family_shows_its_query_floor_and_consolidation_names_those_it_would_cut(report):
    _, families, _ = report
    # BigQuery bills a query of the unified view at least 10 MB per version table it reads
    assert {name: f["query_floor_bytes"] for name, f in families.items() if name != "hub"} == {
        name: 10 * MB * f["versions"] for name, f in families.items() if name != "hub"
    }
    assert families["hub"]["query_floor_bytes"] == 10 * MB * OVER_VERSIONS
    # the hub's versions but one were never written: folded into one table, two tables are left to read
    assert families["hub"]["consolidated_query_floor_bytes"] == 2 * 10 * MB
    assert all(f["consolidated_query_floor_bytes"] is None for name, f in families.items() if name != "hub")


def test_worst_first_and_a_summary(report):
    document, _, _ = report
    order = [family["family"] for family in document["families"]]
    assert order[0] == "hub" and order[1] == "wide" and order[-1] == "customer"
    assert order.index("legacy") < order.index("orders") < order.index("payments")
    summary = document["summary"]
    assert summary["families"] == 7 and summary["healthy"] == 1 and summary["over limit"] == 1
    assert summary["versions"] == OVER_VERSIONS + 7


def test_quarantined_lines_of_no_family_are_a_row_of_their_own(report):
    document, families, _ = report
    assert document["no_family"] == {
        "name": NO_FAMILY,
        "flags": ["quarantine"],
        "crossed": [],
        "quarantine": FAMILYLESS_COUNTS,
    }
    assert NO_FAMILY not in families and document["summary"]["families"] == 7
    summary = document["summary"]
    assert (summary[f"{NO_FAMILY} quarantined 24h"], summary[f"{NO_FAMILY} quarantined 7d"]) == (3, 5)
    assert summary["quarantine"] == 1  # families flagged: payments; the row of no family is counted apart


@pytest.fixture(scope="module")
def inputs(warehouse_file):
    request = RefreshRequest("cdc")
    with open_warehouse(duckdb_url(warehouse_file)) as warehouse:
        return request, collect(warehouse, request)


@pytest.mark.parametrize(
    ("fail_on", "crossing"),
    [
        ("stale=1d", {"legacy"}),
        ("stale=4d", set()),
        ("headroom=10", {"hub"}),
        ("headroom=20", {"hub", "wide"}),
        ("pending=1h", {"orders", "invoices"}),
        ("pending=4h", set()),
        ("stale=1d,pending=150m", {"legacy", "orders"}),
    ],
)
def test_fail_on_thresholds_name_the_families_that_cross_them(inputs, fail_on, crossing):
    request, collected = inputs
    statuses = family_statuses(collected, request.options, parse_fail_on([fail_on]))
    assert {status.family for status in statuses if status.crossed} == crossing


@pytest.mark.parametrize(
    ("fail_on", "crossing"),
    [
        ("quarantine=0", {"payments", NO_FAMILY}),
        ("quarantine=2", {NO_FAMILY}),  # payments has 2 in the last 24 hours, the lines of no family 3
        ("quarantine=3", set()),
        ("stale=1d", {"legacy"}),  # the row of no family has no freshness: only the quarantine threshold applies
    ],
)
def test_the_quarantine_threshold_watches_the_lines_of_no_family_too(inputs, fail_on, crossing):
    request, collected = inputs
    thresholds = parse_fail_on([fail_on])
    no_family = no_family_status(collected, thresholds)
    assert no_family is not None
    rows = [*family_statuses(collected, request.options, thresholds), no_family]
    assert {status.family for status in rows if status.crossed} == crossing


def test_the_lines_of_no_family_fail_the_check_of_a_scheduler(warehouse_file):
    result = status(warehouse_file, "--all", "--fail-on", "quarantine=2")
    assert result.exit_code == THRESHOLD_EXIT_CODE, result.output
    assert result.stderr.splitlines() == [f"uniview: {NO_FAMILY}: crosses --fail-on quarantine"]
    assert status(warehouse_file, "--all", "--fail-on", "quarantine=3").exit_code == 0
    bad = status(warehouse_file, "--all", "--fail-on", "quarantine=some")
    assert bad.exit_code == 1 and "quarantine takes a number of records" in bad.stderr


def test_a_crossed_threshold_is_a_non_zero_exit_for_a_scheduler(warehouse_file):
    result = status(warehouse_file, "--all", "--fail-on", "stale=1d", "--fail-on", "pending=150m")
    assert result.exit_code == THRESHOLD_EXIT_CODE, result.output
    assert "uniview: legacy: crosses --fail-on stale" in result.stderr
    assert "uniview: orders: crosses --fail-on pending" in result.stderr
    assert status(warehouse_file, "--table", "customer", "--fail-on", "stale=1h,headroom=50,pending=1m").exit_code == 0


def test_a_bad_threshold_is_one_clear_error(warehouse_file):
    result = status(warehouse_file, "--all", "--fail-on", "fresh=1h")
    assert result.exit_code == 1
    assert result.stderr.startswith("uniview: error: --fail-on 'fresh=1h': expected KIND=VALUE")


def test_the_terminal_shows_the_worst_families_then_a_summary(warehouse_file):
    result = status(warehouse_file, "--all", "--limit", "2")
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert text.index("hub") < text.index("wide") < text.index("summary")
    assert "legacy" not in text.split("summary")[0].split("more families")[0]
    assert "... and 5 more families" in text
    assert "over limit" in text and "near limit" in text
    # the lines of no family: always a row (after the families shown), and in the summary
    table, totals = text.split("summary")
    (row,) = [line for line in table.splitlines() if NO_FAMILY in line]
    assert "quarantine" in row and "3/24h 5/7d" in row
    assert "(unparseable)" in table[table.index(NO_FAMILY) :]  # the commonest reason, folded under the counts
    assert table.index("wide") < table.index(NO_FAMILY)
    assert f"{NO_FAMILY} quarantined 24h" in totals and f"{NO_FAMILY} quarantined 7d" in totals
    # the query floor of each family shown, and the families consolidation would cut it for
    assert "query floor" in table
    (line,) = [line for line in text.splitlines() if "would cut the query floor" in line]
    assert line.endswith(f"hub ({size_text(10 * MB * OVER_VERSIONS)} -> 20 MB)")


def test_one_family(warehouse_file):
    result = status(warehouse_file, "--table", "orders", "--json")
    document = json.loads(result.stdout)
    assert [f["family"] for f in document["families"]] == ["orders"]


@pytest.fixture
def sent(monkeypatch):
    """The queries status sends to the DuckDB warehouse: its metadata reads and the status reads."""
    from uniview.warehouse.duckdb import DuckDBWarehouse
    from uniview.warehouse.status_duckdb import DuckDBStatusReads

    names: list[str] = []

    def counting(name, original):
        return lambda self, *args, **kwargs: names.append(name) or original(self, *args, **kwargs)

    for name in (
        "read_columns",
        "read_table_listings",
        "read_view_fingerprints",
        "read_descriptions",
        "read_primary_keys",
    ):
        monkeypatch.setattr(DuckDBWarehouse, name, counting(name, getattr(DuckDBWarehouse, name)))
    monkeypatch.setattr(DuckDBStatusReads, "_read", counting("status read", DuckDBStatusReads._read))
    return names


def test_the_number_of_queries_does_not_grow_with_the_families(sent, warehouse_file):
    counts = []
    for tables in (("customer",), None):
        sent.clear()
        with open_warehouse(duckdb_url(warehouse_file)) as warehouse:
            collected = collect(warehouse, RefreshRequest("cdc", tables))
        counts.append((len(collected.plans) + len(collected.failures), list(sent)))
    (one_family, one), (every_family, every) = counts
    assert (one_family, every_family) == (1, 7)
    assert one == every
    assert len(every) == STATUS_QUERIES_DUCKDB == 5
