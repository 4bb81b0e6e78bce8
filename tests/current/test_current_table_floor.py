"""What one maintenance of `<table>_current` is billed on demand on BigQuery, however long the family's history
(uniview.core.billing over the script uniview.warehouse.bigquery_current renders): the window reads only the
version tables the batches it applies wrote rows to, so its floor does not grow with the number of versions,
and its statements reference few tables (the window's rows written into the one state table, then a MERGE each
for the table's rows and the state), so the floor is small."""

from __future__ import annotations

import datetime as dt
import functools
import json

import pytest

from uniview.core.billing import MB, bill_script, view_tables
from uniview.core.landing_layout import CDC_COLUMNS
from uniview.core.schema import Column, TableVersion
from uniview.core.types import parse_type
from uniview.current.table import AppliedBatch, BatchWindow, batch_window, ledger_batch
from uniview.planning.plan import GeneratorOptions, plan_family
from uniview.warehouse.bigquery_current import action_script

WATERMARK = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
#: The bound on the floor of one maintenance, whatever the history: 6 table references (docs/billing.md: it is 5, in
#: 3 billed statements).
MAINTENANCE_FLOOR_MB = 60
#: The bound on the floor of one re-presentation (the state merged, the table rewritten whole from it).
REPRESENT_FLOOR_MB = 60


def family(count: int) -> list[TableVersion]:
    columns = tuple(Column(name, parse_type(t)) for name, t in (("id", "INT64"), ("name", "STRING"), *CDC_COLUMNS))
    return [TableVersion(f"orders_v_{n:04d}", "orders", f"{n:04d}", n, columns, ("id",)) for n in range(count)]


@functools.cache
def maintenance_bill(versions: int, written: tuple[int, ...], action: str = "maintain") -> tuple[int, set[str]]:
    """The floor (MB) of one maintenance (or `action`) applying one batch of the sink that wrote to the versions
    `written` (counted from the newest), and the version tables it references."""
    planned = plan_family("cdc", "cdc", family(versions), GeneratorOptions(current="table"))
    assert planned.current_table is not None
    counts = {"written": {f"cdc.{planned.versions[-1 - n].table_name}": 3 for n in written}}
    landed = WATERMARK + dt.timedelta(minutes=1)
    row = ("stream", 7, json.dumps(counts), landed, WATERMARK)
    batch = ledger_batch(row, "orders", "cdc")
    assert batch is not None
    window, batches = batch_window(WATERMARK, [batch], [AppliedBatch("stream", 6, "2026-01-01 00:00:00.000000")])
    views = view_tables({view.qualified_name: view.body for view in planned.all_views})
    bill = bill_script(action_script(planned.current_table, action, False, window, batches), views)
    read = {table for statement in bill.statements for table in statement.tables if "_v_" in table}
    return bill.floor_bytes // MB, read


@pytest.mark.parametrize("versions", [1, 100, 900])
def test_a_maintenance_reads_only_the_version_tables_its_batches_wrote_and_its_floor_ignores_the_history(versions):
    floor, read = maintenance_bill(versions, (0,))
    assert read == {f"cdc.orders_v_{versions - 1:04d}"}
    assert floor == maintenance_bill(1, (0,))[0] <= MAINTENANCE_FLOOR_MB, f"{floor} MB at {versions} versions"


@pytest.mark.parametrize("versions", [1, 100, 900])
def test_a_re_presentation_reads_only_the_batches_version_tables_and_its_floor_is_small(versions):
    floor, read = maintenance_bill(versions, (0,), "re-present")
    assert read == {f"cdc.orders_v_{versions - 1:04d}"}
    assert floor <= REPRESENT_FLOOR_MB, f"{floor} MB at {versions} versions"


def test_a_batch_that_wrote_two_versions_reads_both_and_no_other():
    floor, read = maintenance_bill(100, (0, 5))
    assert read == {"cdc.orders_v_0099", "cdc.orders_v_0094"}
    assert floor == maintenance_bill(100, (0,))[0] + 10


def test_without_the_batches_tables_the_window_reads_every_version():
    planned = plan_family("cdc", "cdc", family(3), GeneratorOptions(current="table"))
    assert planned.current_table is not None
    views = view_tables({view.qualified_name: view.body for view in planned.all_views})
    for window in (BatchWindow(WATERMARK), BatchWindow(WATERMARK, (), ("orders_v_9999",)), BatchWindow(None)):
        bill = bill_script(action_script(planned.current_table, "maintain", False, window), views)
        read = {table for statement in bill.statements for table in statement.tables if "_v_" in table}
        assert read == {f"cdc.orders_v_{n:04d}" for n in range(3)}, window
