"""The batches a `<table>_current` table has applied (uniview.current.table.BatchWindow): a maintenance
reads exactly the rows of the sink's batches it has not applied (a batch that committed late, stamped
before the watermark, included) and nothing it applied before; killed with SIGKILL before any of its
statements, bookkeeping included, it leaves everything as it was, and the next one applies the batch.  The
histories draw no key change, whose maintenance rebuilds the table (tests/current/test_current_table_random.py
draws them)."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from current_table_history import DATASET, FAMILY, History, record_batch
from test_current_table_random import assert_table_equals_view, refresh_current, state

from uniview.current.table import AppliedBatch
from uniview.ops.refresh import RefreshRequest, plan_families, refresh
from uniview.planning.plan import GeneratorOptions
from uniview.warehouse import duckdb_current
from uniview.warehouse.duckdb import DuckDBWarehouse
from uniview.warehouse.url import duckdb_url

SEED = 20261128


def maintain(path: Path) -> int:
    """Run one refresh of the table; the changes its maintenance read."""
    request = RefreshRequest(DATASET, (FAMILY,), None, GeneratorOptions(current="table"))
    with DuckDBWarehouse(path) as warehouse:
        (outcome,) = refresh(warehouse, request)
    assert outcome.error is None, outcome.error
    assert outcome.current_table is not None
    return outcome.current_table.changes_read


def current_action(path: Path) -> str:
    with DuckDBWarehouse(path) as warehouse:
        request = RefreshRequest(DATASET, (FAMILY,), None, GeneratorOptions(current="table"))
        plan = plan_families(warehouse, request)[0].current_table
        assert plan is not None
        return warehouse.current_table_action(plan)


def bookkeeping_statements(path: Path) -> list[int]:
    """The numbers (from 1) of the maintenance's statement before the one that records the batches applied (a
    MERGE), of that one, and of the next."""
    with DuckDBWarehouse(path) as warehouse:
        request = RefreshRequest(DATASET, (FAMILY,), None, GeneratorOptions(current="table"))
        plan = plan_families(warehouse, request)[0].current_table
        assert plan is not None
        action = warehouse.current_table_action(plan)
    assert action in ("maintain", "re-present")
    statements = plan.statements(action, "TRUE", (AppliedBatch("s", 1, "2026-01-01 00:00:00.000000"),))
    numbers = [n for n, s in enumerate(statements, start=1) if s.table == plan.state_table and s.kind == "merge"]
    assert len(numbers) == 1
    return [numbers[0] - 1, numbers[0], numbers[0] + 1]


def test_a_late_batch_is_read_once_by_its_range_and_nothing_is_read_again(tmp_path):
    path = tmp_path / "w.duckdb"
    history = History(path, SEED, key_changes=0)
    for _ in range(3):
        history.step()
    refresh_current(path, "table")
    assert maintain(path) == 0  # nothing new: nothing read
    watermark = history.newest_ingested
    history.step()  # this step's batch: some rows stamped before the watermark
    assert maintain(path) == rows_to_read(path, watermark)
    assert maintain(path) == 0
    refresh_current(path, "view")
    assert_table_equals_view(path, "after a late batch")


def rows_to_read(path: Path, watermark: dt.datetime) -> int:
    """The rows of the family stamped after `watermark`, or inside the last ledger batch's ingestion range."""
    with duckdb.connect(str(path), read_only=True) as connection:
        (counts,) = connection.execute(
            "SELECT counts FROM main._uniview_batches ORDER BY batch_id DESC LIMIT 1"
        ).fetchone()
        low, high = json.loads(counts)["ingested"]
        tables = [
            name
            for (name,) in connection.execute(
                "SELECT table_name FROM duckdb_tables() WHERE schema_name = ? AND starts_with(table_name, ?)",
                [DATASET, f"{FAMILY}_v_"],
            ).fetchall()
        ]
        union = " UNION ALL ".join(f"SELECT _cdc_ingested_at AS t FROM {DATASET}.{name}" for name in tables)
        (count,) = connection.execute(
            f"SELECT count(*) FROM ({union}) WHERE t > ?::TIMESTAMPTZ OR t BETWEEN ?::TIMESTAMPTZ AND ?::TIMESTAMPTZ",
            [watermark, low, high],
        ).fetchone()
    return int(count)


def test_a_batch_without_its_ledger_row_stamped_before_the_watermark_is_not_read(tmp_path):
    """What the ledger is for: the same late rows with no ledger row are not found (the watermark passed)."""
    path = tmp_path / "w.duckdb"
    history = History(path, SEED, key_changes=0)
    for _ in range(2):
        history.step()
    refresh_current(path, "table")
    (watermark,) = (
        duckdb.connect(str(path), read_only=True)
        .execute(f"SELECT max(_cdc_ingested_at) FROM {DATASET}.item_v_a1")
        .fetchone()
    )
    with duckdb.connect(str(path)) as connection:
        connection.execute(f"CREATE TEMP TABLE late AS SELECT * FROM {DATASET}.item_v_a1 LIMIT 1")
        connection.execute("UPDATE late SET _cdc_ingested_at = ?::TIMESTAMPTZ - INTERVAL 1 MINUTE", [watermark])
        connection.execute(f"INSERT INTO {DATASET}.item_v_a1 SELECT * FROM late")
    assert maintain(path) == 0
    with duckdb.connect(str(path)) as connection:  # now recorded as the sink records a batch
        stamp = watermark - dt.timedelta(minutes=1)
        record_batch(connection, 99, [("item_v_a1", {"_cdc_ingested_at": stamp})])
    assert maintain(path) == 1 and maintain(path) == 0


@pytest.mark.parametrize("which", [0, 1, 2])
def test_a_maintenance_killed_around_its_bookkeeping_changes_nothing_and_the_next_applies_the_batch(tmp_path, which):
    path = tmp_path / "w.duckdb"
    history = History(path, SEED + which, key_changes=0)
    for _ in range(2):
        history.step()
    refresh_current(path, "table")
    for _ in range(10):  # a step whose new version would rebuild the table is applied first
        history.step()
        if current_action(path) != "rebuild":
            break
        refresh_current(path, "table")
    copy = tmp_path / "copy.duckdb"
    shutil.copy(path, copy)
    rows = maintain(copy)  # what the maintenance reads when nothing stops it
    kill_at = bookkeeping_statements(path)[which]
    before = [t for t in state(path) if t[0].startswith("_uniview") or t[0].endswith("_current")]
    command = [sys.executable, "-m", "uniview.cli.main", "refresh", "--warehouse", duckdb_url(path)]
    command += ["--dataset", DATASET, "--table", FAMILY, "--current", "table"]
    killed = subprocess.run(command, env={**os.environ, duckdb_current.KILL_AT: str(kill_at)}, check=False)
    assert killed.returncode == -9, f"not killed before statement {kill_at}"
    after = [t for t in state(path) if t[0].startswith("_uniview") or t[0].endswith("_current")]
    assert after == before, f"killed before statement {kill_at}: the table, its state or its batches changed"
    assert maintain(path) == rows  # the batch is still not applied: read whole, once
    assert maintain(path) == 0
    refresh_current(path, "view")
    assert_table_equals_view(path, f"after a kill before statement {kill_at}")
