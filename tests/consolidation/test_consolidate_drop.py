"""Folded tables: dropped only with --drop-folded, when empty and past their retention; one that
holds rows again stays in the view and is folded again; the view keeps every row."""

from __future__ import annotations

from collections import Counter

import duckdb
from consolidation_support import (
    DATASET,
    build_family,
    consolidate_json,
    family_tables,
    landed_content,
    refresh_args,
    uniview,
    view_content,
)


def test_folded_tables_are_dropped_only_when_asked_and_past_retention(tmp_path):
    path = tmp_path / "warehouse.duckdb"
    build_family(path, 30)
    before = landed_content(path)
    folded = consolidate_json(path, "--idle-for", "0s", "--max-versions", "10", "--apply", "--drop-folded")
    assert len(folded["fold"]) == 21 and folded["dropped"] == []  # the default retention is 7 days

    with duckdb.connect(str(path)) as connection:  # a row written to a folded table by another tool
        connection.execute(f"INSERT INTO {DATASET}.customer_v_000000001 VALUES (999, 'late', 1)")
    assert uniview(*refresh_args(path)).returncode == 0
    late = view_content(path)
    assert late - before == Counter({(999, "late", "1"): 1}) and sum(late.values()) == sum(before.values()) + 1

    dropped = consolidate_json(
        path, "--idle-for", "0s", "--max-versions", "11", "--apply", "--drop-folded", "--retention", "0s"
    )  # 11 tables are listed: within the limit, but one is folded
    assert dropped["fold"] == ["customer_v_000000001"] and dropped["moved_rows"] == 1  # folded again
    assert sorted(dropped["dropped"]) == sorted(folded["fold"])  # every folded table, now all empty
    with duckdb.connect(str(path), read_only=True) as connection:
        remaining = family_tables(connection)
        states = Counter(state for (state,) in connection.execute("SELECT state FROM main._uniview_folds").fetchall())
    assert len(remaining) == 11 and states == Counter({"dropped": 21})  # 9 versions and 2 consolidated tables
    assert uniview(*refresh_args(path)).returncode == 0
    assert view_content(path) == late
