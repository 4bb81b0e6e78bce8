"""`<table>_current` as a table follows a primary-key UPDATE as the view does, whatever order its halves and the
changes around it arrive in: a maintenance whose window holds a key change's create (a), a delete a create waits
for (b), or a change older than a key change of its key (c) rebuilds the table (docs/current-state.md#the-current-table).
Each step lands one batch of the sink's ledger, and the table, the view and the source's state are compared."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import duckdb
from current_table_history import DATASET, FAMILY, T0, History
from test_current_table_random import assert_table_equals_view, refresh_current

from uniview.ops.refresh import RefreshRequest, refresh
from uniview.planning.plan import GeneratorOptions
from uniview.sink.sequence import sequence_of
from uniview.warehouse.duckdb import DuckDBWarehouse


def change(key: int, operation: str, position: int, name=None, note=None, left_out=None) -> tuple[str, dict]:
    """A change of `item_v_a1` in db1 at binlog position `position` (`left_out`: the columns it did not send)."""
    at = f"mysql-bin.000001:{position}"
    return (
        f"{FAMILY}_v_a1",
        {
            "id": key,
            "name": name,
            "qty": 1 if operation != "DELETE" else None,
            "note": note,
            "tags": None,
            "_cdc_ingestion_method": "BINLOG",
            "_cdc_operation": operation,
            "_cdc_position": at,
            "_cdc_timestamp": T0 + dt.timedelta(milliseconds=position),
            "_cdc_database": "db1",
            "_cdc_sequence": sequence_of(at),
            "_cdc_unavailable": left_out,
        },
    )


def land(history: History, *changes: tuple[str, dict]) -> None:
    """One batch of the ledger, stamped two hours after the one before."""
    history.step_number += 1
    stamp = T0 + dt.timedelta(hours=2 * history.step_number)
    history._land([(table, {**row, "_cdc_ingested_at": stamp}) for table, row in changes])


def refreshed(path: Path) -> tuple[str, int]:
    """`uniview refresh --current table`, then the view: (the table's action, the changes it read)."""
    request = RefreshRequest(DATASET, (FAMILY,), None, GeneratorOptions(current="table"))
    with DuckDBWarehouse(path) as warehouse:
        (outcome,) = refresh(warehouse, request)
    assert outcome.error is None and outcome.current_table is not None, outcome.error
    refresh_current(path, "view")
    assert_table_equals_view(path, f"after {outcome.current_table.action}")
    return outcome.current_table.action, outcome.current_table.changes_read


def notes(path: Path) -> dict[int, str | None]:
    with duckdb.connect(str(path), read_only=True) as connection:
        return dict(connection.execute(f"SELECT id, note FROM cdc_unified.{FAMILY}_current").fetchall())


def test_each_order_of_a_key_change_and_a_late_change_rebuilds_the_table_once_and_shows_the_moved_value(tmp_path):
    path = tmp_path / "w.duckdb"
    history = History(path, 0)
    land(history, change(1, "INSERT", 100, "a", "big"), change(1, "UPDATE", 200, "a2", left_out=["note"]))
    assert refreshed(path)[0] == "create" and notes(path) == {1: "big"}
    # (a) the create of UPDATE ... SET id = 2 arrives first (another partition): its delete is not known yet
    land(history, change(2, "INSERT", 300, "a2", left_out=["note"]))
    assert refreshed(path)[0] == "rebuild" and notes(path) == {1: "big", 2: None}
    # (b) its delete arrives: the create waited for it
    land(history, change(1, "DELETE", 300))
    assert refreshed(path)[0] == "rebuild" and notes(path) == {2: "big"}
    # (c) a change of key 1 older than its delete arrives late: the moved row held its value
    land(history, change(1, "UPDATE", 250, "a2", "late"))
    assert refreshed(path)[0] == "rebuild" and notes(path) == {2: "late"}
    # the row goes on under its new key, the table kept step by step again
    land(history, change(2, "UPDATE", 400, "a3", left_out=["note"]), change(3, "INSERT", 410, "c", "own"))
    assert refreshed(path) == ("maintain", 2) and notes(path) == {2: "late", 3: "own"}
    assert refreshed(path) == ("maintain", 0)
