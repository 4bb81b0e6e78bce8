"""Choosing what to fold, pure: durations, idleness, how many, names, batches."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from families import synthetic_family

from uniview.core.errors import ConfigError
from uniview.planning.consolidation import (
    MAX_SOURCES_PER_MOVE,
    choose_versions,
    fold_plan,
    move_select,
    next_consolidated_table,
    parse_duration,
    successor_version,
)
from uniview.planning.plan import GeneratorOptions

NOW = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("0s", timedelta(0)),
        ("30d", timedelta(days=30)),
        ("12h", timedelta(hours=12)),
        ("1w2d", timedelta(days=9)),
        ("90m", timedelta(minutes=90)),
    ],
)
def test_durations(text, expected):
    assert parse_duration(text) == expected


@pytest.mark.parametrize("text", ["", "30", "d", "3 d", "1y", "-1d", "1d-", "1.5h"])
def test_bad_durations_are_one_clear_error(text):
    with pytest.raises(ConfigError, match="invalid duration"):
        parse_duration(text)


def test_a_family_within_its_limit_folds_nothing():
    versions = synthetic_family(10, 3)
    assert choose_versions(versions, {}, NOW, timedelta(0), max_versions=10) == []


def test_oldest_idle_versions_are_folded_until_the_family_fits():
    versions = synthetic_family(30, 3)
    chosen = choose_versions(versions, {}, NOW, timedelta(0), max_versions=10)
    assert chosen == versions[:21]  # 9 survivors + 1 consolidated table = 10


def test_recently_written_versions_stay_and_older_idle_ones_are_taken_instead():
    versions = synthetic_family(30, 3)
    written = {v.table_name: NOW - timedelta(hours=1) for v in versions[:5]}
    written.update({v.table_name: NOW - timedelta(days=40) for v in versions[5:10]})
    chosen = choose_versions(versions, written, NOW, timedelta(days=30), max_versions=10)
    assert chosen == versions[5:26]
    assert not {v.table_name for v in versions[:5]} & {v.table_name for v in chosen}


def test_fewer_than_two_idle_versions_fold_nothing():
    versions = synthetic_family(12, 3)
    written = {v.table_name: NOW for v in versions[1:]}
    assert choose_versions(versions, written, NOW, timedelta(days=1), max_versions=5) == []


def test_max_versions_below_two_is_refused():
    with pytest.raises(ConfigError, match="at least 2"):
        choose_versions(synthetic_family(5, 2), {}, NOW, timedelta(0), max_versions=1)


def test_consolidated_tables_count_up_past_what_the_family_and_registry_name():
    versions = synthetic_family(3, 2, family="orders")
    assert next_consolidated_table("orders", versions) == "orders_v_consolidated1"
    assert next_consolidated_table("orders", versions, ["orders_v_consolidated4"]) == "orders_v_consolidated5"


def test_successors_are_stable_distinct_version_ids():
    assert successor_version("5b6ffe5fb") == successor_version("5b6ffe5fb")
    assert successor_version("5b6ffe5fb") != successor_version("5b6ffe5fc")
    assert len(successor_version("5b6ffe5fb")) == 9 and int(successor_version("5b6ffe5fb"), 16) >= 0


def test_moves_are_batched_within_the_tables_one_transaction_may_mutate():
    versions = synthetic_family(250, 2)
    plan = fold_plan("cdc", versions, versions[:240], "events_v_consolidated1", "uniview")
    batches = plan.batches()
    assert [len(b) for b in batches] == [98, 98, 44]
    assert max(len(b) for b in batches) + 1 <= 100 and MAX_SOURCES_PER_MOVE == 98
    assert [v for b in batches for v in b] == versions[:240]


def test_the_consolidated_table_has_the_views_types_and_the_source_column():
    versions = synthetic_family(6, 4, conflict_share=0.5)
    plan = fold_plan("cdc", versions, versions[:4], "events_v_consolidated1", "uniview")
    names = [name for name, _ in plan.table_definition]
    assert names[-1] == "_cdc_source_table" and len(names) == 5
    select = move_select(plan, versions[1], GeneratorOptions())
    assert "'events_v_000001' AS _cdc_source_table" in select
    assert "CAST(column_3 AS STRING) AS column_3" in select  # converted as the view converts it
