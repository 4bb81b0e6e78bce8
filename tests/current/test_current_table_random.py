"""`<table>_current` as a table equals the current view after every step of random histories on DuckDB.

Each history (tests/current/current_table_history.py) grows step by step; after each step the views
(`--current`, in dataset cdc_view) and the table (`--current table`, in cdc_unified) are refreshed
and compared: the same columns, the same rows, every value.  Along the way a refresh fails half-way
(an exception injected before a random statement: nothing may change), is repeated (nothing may
change), and is killed with SIGKILL before a random statement in another process.

UNIVIEW_CURRENT_FUZZ_SEED picks the first seed (default: a fixed one, printed on failure);
UNIVIEW_CURRENT_FUZZ_STEPS the steps per history.
"""

from __future__ import annotations

import contextlib
import os
import random
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from current_table_history import DATASET, FAMILY, RENAMED_AND_READDED, RENAMES, History

from uniview.core.errors import WarehouseError
from uniview.ops.refresh import RefreshRequest, refresh
from uniview.planning.plan import GeneratorOptions
from uniview.warehouse import duckdb_current
from uniview.warehouse.duckdb import DuckDBWarehouse
from uniview.warehouse.url import duckdb_url

SEED = int(os.environ.get("UNIVIEW_CURRENT_FUZZ_SEED", "20261127"))
STEPS = int(os.environ.get("UNIVIEW_CURRENT_FUZZ_STEPS", "10"))
TABLE = f"cdc_unified.{FAMILY}_current"
VIEW = f"cdc_view.{FAMILY}_current"


def refresh_current(path: Path, mode: str, rebuild: bool = False, renames: tuple = ()) -> None:
    target = "cdc_view" if mode == "view" else None
    options = GeneratorOptions(current=mode, renames=renames)
    request = RefreshRequest(DATASET, (FAMILY,), target, options, rebuild_current=rebuild)
    with DuckDBWarehouse(path) as warehouse:
        outcomes = refresh(warehouse, request)
    errors = [outcome.error for outcome in outcomes if outcome.error]
    if errors:
        raise errors[0]


def contents(path: Path, relation: str) -> tuple[list[tuple[str, str]], list[str]]:
    """(columns with types, rows as text, sorted) of a table or view."""
    with duckdb.connect(str(path), read_only=True) as connection:
        columns = [(name, kind) for name, kind, *_ in connection.execute(f"DESCRIBE {relation}").fetchall()]
        rows = sorted(map(repr, connection.execute(f"SELECT * FROM {relation}").fetchall()))
    return columns, rows


def state(path: Path) -> list[tuple[str, list[str]]]:
    """Every table of the current table's state and the table itself, with their rows."""
    with duckdb.connect(str(path), read_only=True) as connection:
        names = [
            name
            for (name,) in connection.execute(
                "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'cdc_unified' ORDER BY table_name"
            ).fetchall()
        ]
        return [
            (name, sorted(map(repr, connection.execute(f'SELECT * FROM cdc_unified."{name}"').fetchall())))
            for name in names
        ]


def assert_table_equals_view(path: Path, context: str) -> None:
    table, view = contents(path, TABLE), contents(path, VIEW)
    assert table[0] == view[0], f"{context}: columns differ"
    missing = sorted(set(view[1]) - set(table[1]))
    extra = sorted(set(table[1]) - set(view[1]))
    assert table[1] == view[1], f"{context}: rows differ; missing {missing[:5]}, extra {extra[:5]}"


def fail_half_way(path: Path, rng: random.Random, monkeypatch: pytest.MonkeyPatch) -> None:
    """A refresh whose transaction fails before a random statement changes nothing."""
    before = state(path)
    calls = {"n": 0}
    fail_at = rng.randrange(1, 12)
    real = duckdb_current.duckdb_statement

    def failing(*args: object, **kwargs: object) -> str:
        calls["n"] += 1
        if calls["n"] == fail_at:
            raise WarehouseError("injected failure between statements")
        return real(*args, **kwargs)  # type: ignore[arg-type]

    with monkeypatch.context() as patch:
        patch.setattr(duckdb_current, "duckdb_statement", failing)
        with contextlib.suppress(WarehouseError):
            refresh_current(path, "table")
    if calls["n"] >= fail_at:
        assert state(path) == before, f"a refresh failing at statement {fail_at} left changes"


@pytest.mark.parametrize("offset", [0, 1])
def test_the_current_table_equals_the_view_after_every_step(tmp_path, monkeypatch, offset):
    seed = SEED + offset
    rng = random.Random(seed * 7919)
    path = tmp_path / "w.duckdb"
    history = History(path, seed)
    for step in range(1, STEPS + 1):
        history.step()
        context = f"seed {seed} (UNIVIEW_CURRENT_FUZZ_SEED={SEED}, offset {offset}), step {step}"
        if rng.random() < 0.3:
            fail_half_way(path, rng, monkeypatch)
        refresh_current(path, "table")
        refresh_current(path, "view")
        assert_table_equals_view(path, context)
        if rng.random() < 0.25:  # refreshed again with nothing new: nothing changes
            before = state(path)
            refresh_current(path, "table")
            assert state(path) == before, f"{context}: a repeated refresh changed the state"
    refresh_current(path, "table", rebuild=True)
    assert_table_equals_view(path, f"seed {seed}: after --rebuild-current")


@pytest.mark.parametrize("offset", [2, 3, 4])
def test_a_renamed_carried_column_and_a_column_dropped_and_added_keep_the_table_equal_to_the_view(tmp_path, offset):
    """The history goes on with `name` renamed `title` (declared) while values of it are carried, and qty
    dropped and added again at the end with nothing written in between (RENAMED_AND_READDED)."""
    seed = SEED + offset
    path = tmp_path / "w.duckdb"
    history = History(path, seed, versions=RENAMED_AND_READDED, move_chance=0.45)
    for step in range(1, STEPS + 5):
        history.step()
        refresh_current(path, "table", renames=RENAMES)
        refresh_current(path, "view", renames=RENAMES)
        assert_table_equals_view(path, f"seed {seed} (UNIVIEW_CURRENT_FUZZ_SEED={SEED}, offset {offset}), step {step}")
    landed = {table for table, _ in history.landed}
    assert {version.table for version in RENAMED_AND_READDED[-2:]} <= landed, f"seed {seed}: the history ended early"
    refresh_current(path, "table", rebuild=True, renames=RENAMES)
    assert_table_equals_view(path, f"seed {seed}: after --rebuild-current")


def test_a_refresh_killed_before_any_statement_leaves_the_table_as_it_was(tmp_path):
    path = tmp_path / "w.duckdb"
    history = History(path, SEED + 100)
    for _ in range(3):
        history.step()
    url = duckdb_url(path)
    command = [sys.executable, "-m", "uniview.cli.main", "refresh", "--warehouse", url, "--dataset", DATASET]
    command += ["--table", FAMILY, "--current", "table"]
    killed = subprocess.run(command, env={**os.environ, duckdb_current.KILL_AT: "4"}, check=False)
    assert killed.returncode == -9, "the first refresh was not killed while it built the table"
    assert state(path) == []  # neither the table nor its state
    refresh_current(path, "table")
    rng = random.Random(SEED)
    for _ in range(2):
        history.step()
        before = state(path)
        kill_at = rng.randrange(1, 9)  # a maintenance, or the 2 statements that find a key change and the rebuild
        killed = subprocess.run(command, env={**os.environ, duckdb_current.KILL_AT: str(kill_at)}, check=False)
        assert killed.returncode == -9, f"the refresh was not killed before statement {kill_at}"
        after = state(path)
        assert [t for t in after if t[0].startswith("_uniview") or t[0].endswith("_current")] == [
            t for t in before if t[0].startswith("_uniview") or t[0].endswith("_current")
        ], f"killed before statement {kill_at}, the table or its state changed"
        refresh_current(path, "table")
        refresh_current(path, "view")
        assert_table_equals_view(path, f"after a kill before statement {kill_at}")
