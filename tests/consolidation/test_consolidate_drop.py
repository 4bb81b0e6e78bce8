"""--drop-folded: only emptied, folded tables past their retention are dropped; the view keeps every row."""

from __future__ import annotations

import duckdb
from consolidation_support import (DATASET, build_family, consolidate_json, family_tables, landed_content,
                                   refresh_args, uniview, view_content)


def test_folded_tables_are_dropped_only_when_asked_and_past_retention(tmp_path):
    path = tmp_path / "warehouse.duckdb"
    build_family(path, 30)
    before = landed_content(path)
    folded = consolidate_json(path, "--idle-for", "0s", "--max-versions", "10", "--apply", "--drop-folded")
    assert len(folded["fold"]) == 21 and folded["dropped"] == []  # the default retention is 7 days

    with duckdb.connect(str(path)) as connection:  # a row written to a folded table by another tool
        connection.execute(f"INSERT INTO {DATASET}.customer_v_000000001 VALUES (999, 'late', 1)")
    dropped = consolidate_json(path, "--idle-for", "0s", "--max-versions", "10", "--apply", "--drop-folded",
                               "--retention", "0s")
    assert sorted(dropped["dropped"]) == sorted(set(folded["fold"]) - {"customer_v_000000001"})  # not empty: kept
    with duckdb.connect(str(path), read_only=True) as connection:
        remaining = family_tables(connection)
        states = dict(connection.execute("SELECT version_table, state FROM main._uniview_folds").fetchall())
    assert "customer_v_000000001" in remaining and len(remaining) == 11  # 9 versions, the consolidated table, the kept one
    assert states["customer_v_000000001"] == "moved" and list(states.values()).count("dropped") == 20
    assert uniview(*refresh_args(path)).returncode == 0
    assert view_content(path) == before
