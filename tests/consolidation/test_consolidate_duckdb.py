"""A 2,000-version family on DuckDB: refused by refresh, planned, folded, queryable, with every row
once; a second run changes nothing."""

from __future__ import annotations

import hashlib
from pathlib import Path

import duckdb
import pytest
from consolidation_support import (
    DATASET,
    build_family,
    checksum,
    consolidate_args,
    consolidate_json,
    landed_content,
    refresh_args,
    uniview,
    view_content,
)

VERSIONS = 2000


def file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def registry(path: Path) -> list[tuple]:
    with duckdb.connect(str(path), read_only=True) as connection:
        return connection.execute(
            "SELECT version_table, consolidated_table, state, rows_moved FROM main._uniview_folds "
            "ORDER BY version_table"
        ).fetchall()


@pytest.fixture(scope="module")
def big_family(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("consolidate") / "warehouse.duckdb"
    build_family(path, VERSIONS)
    return path


def test_a_2000_version_family_is_refused_then_consolidated_and_queryable(big_family):
    before = landed_content(big_family)
    assert sum(before.values()) == VERSIONS * 3

    refused = uniview(*refresh_args(big_family))
    assert refused.returncode == 1
    assert "uniview consolidate --table customer" in refused.stderr and "over 990" in refused.stderr

    digest = file_digest(big_family)
    planned = consolidate_json(big_family, "--idle-for", "0s")
    assert planned["consolidated_table"] == "customer_v_consolidated1" and not planned["applied"]
    assert planned["fold"] == [f"customer_v_{index:09x}" for index in range(1501)]  # oldest first; 499 + 1 remain
    assert planned["rows"] == 4503 and planned["bytes"] is None  # DuckDB keeps no per-table byte count
    assert file_digest(big_family) == digest  # a plan changes nothing

    applied = consolidate_json(big_family, "--idle-for", "0s", "--apply")
    assert applied["applied"] and applied["moved_rows"] == 4503

    states = registry(big_family)
    assert len(states) == 1501 and {(c, s) for _, c, s, _ in states} == {("customer_v_consolidated1", "moved")}
    assert sum(rows for *_, rows in states) == 4503
    assert uniview(*refresh_args(big_family)).returncode == 0
    after = view_content(big_family)
    assert checksum(after) == checksum(before) and after == before
    assert landed_content(big_family) == before  # moved, not copied: the folded tables are empty

    # A second run finds nothing to fold and writes nothing.
    digest = file_digest(big_family)
    again = uniview(*consolidate_args(big_family, "--idle-for", "0s", "--apply"))
    assert again.returncode == 0, again.stderr
    assert "nothing to fold" in again.stdout
    assert file_digest(big_family) == digest

    # With a source column, each consolidated row still names the version table it landed in.
    assert uniview(*refresh_args(big_family), "--source-column", "_src").returncode == 0
    with duckdb.connect(str(big_family), read_only=True) as connection:
        rows = connection.execute(f"SELECT _src, id FROM {DATASET}_unified.customer_unified").fetchall()
    assert len(rows) == VERSIONS * 3
    assert all(source == f"customer_v_{row_id // 3:09x}" for source, row_id in rows)
