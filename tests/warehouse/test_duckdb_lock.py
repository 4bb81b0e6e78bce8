"""A DuckDB file held read-write by another process: bounded retry, then TransientWarehouseError."""

from __future__ import annotations

import subprocess
import sys
import time

import duckdb
import pytest

from uniview.core.errors import TransientWarehouseError
from uniview.warehouse.duckdb import DuckDBWarehouse

HOLDER = """
import sys, time, duckdb
connection = duckdb.connect(sys.argv[1])
print("holding", flush=True)
time.sleep(float(sys.argv[2]))
connection.close()
"""


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "locked.duckdb"
    with duckdb.connect(str(path)) as connection:
        connection.execute("CREATE SCHEMA cdc")
        connection.execute("CREATE TABLE cdc.customer_v_a (id BIGINT)")
    return path


def hold(path, seconds):
    """Start a process that opens `path` read-write for `seconds`; returns once it holds the lock."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(path), str(seconds)], stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout.readline().strip() == "holding"
    return holder


def test_a_locked_file_raises_transient_error_after_the_bounded_wait(db):
    holder = hold(db, 60)
    try:
        started = time.monotonic()
        with (
            pytest.raises(
                TransientWarehouseError, match=rf"locked by process {holder.pid}; gave up after waiting 0.5 s"
            ),
            DuckDBWarehouse(db, lock_timeout=0.5) as warehouse,
        ):
            warehouse.read_columns("cdc")
        waited = time.monotonic() - started
        assert 0.5 <= waited < 5
    finally:
        holder.kill()
        holder.wait()


def test_the_lock_is_retried_until_the_other_process_lets_go(db):
    holder = hold(db, 1.0)
    try:
        with DuckDBWarehouse(db, lock_timeout=20) as warehouse:
            assert [r.table_name for r in warehouse.read_columns("cdc")] == ["customer_v_a"]
    finally:
        holder.kill()
        holder.wait()


def test_close_releases_the_file_for_other_processes(db):
    warehouse = DuckDBWarehouse(db)
    warehouse.read_columns("cdc")
    warehouse.close()
    holder = hold(db, 0)
    assert holder.wait(timeout=30) == 0
