"""The pure rules of `uniview status`: which versions no stored view reads, flags and --fail-on."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from uniview.core.errors import ConfigError
from uniview.core.schema import Column, TableVersion
from uniview.core.types import parse_type
from uniview.ops.status.report import StatusInputs, family_statuses, parse_fail_on, unread_versions
from uniview.planning.plan import GeneratorOptions, plan_family
from uniview.warehouse.base import fingerprint

OPTIONS = GeneratorOptions()
NOW = datetime(2026, 11, 27, 12, tzinfo=UTC)


def versions(count: int) -> list[TableVersion]:
    return [
        TableVersion(
            f"orders_v_v{i}", "orders", f"v{i}", float(i), (Column("id", parse_type("INT64" if i % 2 else "STRING")),)
        )
        for i in range(count)
    ]


def plan(count: int):
    return plan_family("cdc", "cdc_unified", versions(count), OPTIONS)


def test_the_versions_after_the_ones_the_stored_view_reads_are_unread():
    stored = fingerprint(plan(2).top_view.body)
    unread, outdated = unread_versions(plan(4), stored, OPTIONS)
    assert [v.table_name for v in unread] == ["orders_v_v2", "orders_v_v3"] and not outdated


def test_no_stored_view_leaves_every_version_unread_and_a_current_one_none():
    assert [v.table_name for v in unread_versions(plan(3), None, OPTIONS)[0]] == [v.table_name for v in versions(3)]
    assert unread_versions(plan(3), fingerprint(plan(3).top_view.body), OPTIONS) == ([], False)


def test_a_stored_view_made_otherwise_is_outdated_not_unread():
    other = plan_family("cdc", "cdc_unified", versions(3), GeneratorOptions(source_column="_source")).top_view.body
    assert unread_versions(plan(3), fingerprint(other), OPTIONS) == ([], True)


def inputs(**overrides) -> StatusInputs:
    values = {
        "now": NOW,
        "plans": [],
        "failures": {},
        "stored_tops": {},
        "activity": {},
        "quarantine": [],
        "pending": [],
        "view_times": {},
    }
    return StatusInputs(**{**values, **overrides})


def test_a_family_that_cannot_be_planned_is_unplannable_and_crosses_headroom():
    failed = inputs(failures={"wide": (["wide_v_a"], "family 'wide': 10,001 columns ... over BigQuery's limit")})
    (status,) = family_statuses(failed, OPTIONS, parse_fail_on(["headroom=10"]))
    assert (status.flags, status.crossed, status.versions) == (["unplannable"], ["headroom"], 1)
    assert status.as_json()["error"].startswith("family 'wide'")


def test_a_family_ahead_of_its_view_is_pending_and_crosses_only_past_the_duration():
    planned = inputs(plans=[plan(2)], stored_tops={"orders": fingerprint(plan(1).top_view.body)})
    (status,) = family_statuses(planned, OPTIONS, parse_fail_on(["pending=1h"]))
    assert status.flags == ["pending"]
    assert status.crossed == []  # the unread version has no row yet: no time to judge


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("fresh=1h", "expected KIND=VALUE"),
        ("stale", "expected KIND=VALUE"),
        ("headroom=abc", "headroom takes a percentage"),
        ("headroom=150", "from 0 to 100"),
        ("stale=6 hours", "invalid duration"),
    ],
)
def test_a_bad_threshold_is_refused(entry, message):
    with pytest.raises(ConfigError, match=message):
        parse_fail_on([entry])


def test_thresholds_combine_and_keep_defaults_for_the_rest():
    thresholds = parse_fail_on(["stale=2h,headroom=15%", "pending=30m"])
    assert (thresholds.stale, thresholds.headroom, thresholds.pending) == (
        timedelta(hours=2),
        15.0,
        timedelta(minutes=30),
    )
    assert thresholds.failing == {"stale", "headroom", "pending"}
    assert parse_fail_on([]).failing == frozenset()
