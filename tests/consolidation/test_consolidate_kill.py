"""kill -9 after each step of a consolidation: the view still shows every row once, and a re-run
finishes the job with the same content; a run after that changes nothing."""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
from pathlib import Path

import duckdb
import pytest
from consolidation_support import (
    build_family,
    checksum,
    consolidate_args,
    consolidate_json,
    landed_content,
    refresh_args,
    uniview,
    view_content,
)

from uniview.ops.consolidate import KILL_POINTS, KILL_VARIABLE

VERSIONS, MAX_VERSIONS = 250, 40  # 211 versions fold, in moves of 98, 98 and 15
FOLD = ("--idle-for", "0s", "--max-versions", str(MAX_VERSIONS), "--apply")


@pytest.fixture(scope="module")
def family_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("kill") / "base.duckdb"
    build_family(path, VERSIONS)
    assert uniview(*refresh_args(path)).returncode == 0
    return path


def states(path: Path) -> dict[str, int]:
    with duckdb.connect(str(path), read_only=True) as connection:
        return dict(connection.execute("SELECT state, count(*) FROM main._uniview_folds GROUP BY 1").fetchall())


@pytest.mark.parametrize("point", KILL_POINTS)
def test_killed_after_each_step_a_rerun_finishes_with_the_same_content(family_file, tmp_path, point):
    path = tmp_path / "warehouse.duckdb"
    shutil.copy(family_file, path)
    before = view_content(path)
    assert checksum(before) == checksum(landed_content(path)) and sum(before.values()) == VERSIONS * 3

    killed = uniview(*consolidate_args(path, *FOLD), env={**os.environ, KILL_VARIABLE: point})
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert view_content(path) == before  # every row once, right after the crash
    assert landed_content(path) == before
    expected_moved = {"after-record": 0, "after-join": 0, "after-move": 98, "after-leave": 211}[point]
    assert states(path).get("moved", 0) == expected_moved

    finished = consolidate_json(path, *FOLD)
    assert finished["resumed"] == (point != "after-leave")
    assert states(path) == {"moved": 211}
    assert view_content(path) == before and landed_content(path) == before

    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    again = consolidate_json(path, *FOLD)
    assert again["fold"] == [] and again["moved_rows"] == 0
    assert hashlib.sha256(path.read_bytes()).hexdigest() == digest
