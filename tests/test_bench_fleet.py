"""The fleet model (bench/fleet.py): its billed figures are uniview.core.billing's bill of the rendered
scripts, and its counts follow the layout, the trigger and the staleness bound."""

from __future__ import annotations

import pytest

from bench.fleet import (
    SINK_JOBS_PER_BATCH,
    Fleet,
    family_plan,
    maintenance_bill,
    refresh_bill,
    simulate,
    sink_batch_bill,
)
from uniview.core.billing import MB
from uniview.ops.billing import family_floors
from uniview.sink.bigquery_promotion import MAX_TABLES_PER_TRANSACTION


def fleet(layout: str, staleness: float = 0.0, changes: float = 1.0) -> Fleet:
    return Fleet(50_000, 300, 20, changes, 60.0, staleness, layout)


def test_the_shared_layout_has_one_family_per_table_the_other_one_per_table_and_database():
    shared, separate = simulate(fleet("shared")), simulate(fleet("per-database"))
    assert (shared.families, separate.families) == (300, 15_000_000)
    # 50,000 tenants each changing once an hour: every shared family is written by every batch
    assert shared.routes_per_batch == pytest.approx(300)
    assert separate.routes_per_batch == pytest.approx(15_000_000 * (1 - 2.718281828 ** (-1 / 60)), rel=1e-6)
    assert separate.floor_bytes_per_day > 100 * shared.floor_bytes_per_day


def test_a_staleness_bound_maintains_each_family_at_most_once_per_interval():
    every_batch, bounded = simulate(fleet("shared")), simulate(fleet("shared", staleness=900))
    assert every_batch.maintenances_per_minute == pytest.approx(300)
    assert bounded.maintenances_per_minute == pytest.approx(300 / 15)
    # the refreshes' floor a day falls by the bound over the trigger; the sink's batches stay
    maintained = [f.maintenances_per_minute * f.refresh_floor_bytes for f in (every_batch, bounded)]
    assert maintained[1] == pytest.approx(maintained[0] / 15)
    sink = [f.floor_bytes_per_day - 24 * 60 * m for f, m in zip((every_batch, bounded), maintained, strict=True)]
    assert sink[0] == pytest.approx(sink[1]) and bounded.usd_per_day < every_batch.usd_per_day / 4


def test_the_billed_figures_are_the_cost_model_of_the_rendered_scripts():
    refresh = refresh_bill(20)
    maintenance = refresh.maintenance
    assert maintenance.floor_bytes == maintenance.table_references * 10 * MB
    # the window reads the version table the batch wrote, not the unified view: the floor ignores the history
    read = {table for statement in maintenance.statements for table in statement.tables if "_v_" in table}
    assert read == {"cdc.t_v_0019"}
    assert maintenance.floor_bytes == maintenance_bill(900).floor_bytes
    figures = simulate(fleet("shared"))
    sink = sink_batch_bill(300)
    assert sink.parts == -(-300 // (MAX_TABLES_PER_TRANSACTION - 1))
    assert figures.sink_jobs_per_minute == SINK_JOBS_PER_BATCH + sink.parts
    day = 24 * 60 * (sink.floor_bytes + 300 * refresh.floor_bytes)
    assert figures.floor_bytes_per_day == pytest.approx(day)
    # a batch of many parts is billed as its parts rendered one by one
    batch = sink_batch_bill(150)
    parts = sink_batch_bill(99).full_part.floor_bytes + sink_batch_bill(51).last_part.floor_bytes
    assert batch.parts == 2 and batch.floor_bytes == batch.fixed.floor_bytes + parts
    assert batch.full_part.table_references > 99  # each target, its staging table, the registry and the steps


def test_each_maintenance_is_billed_and_counted_as_the_whole_refresh_that_runs_it():
    """The function maintains a family by refreshing it: its catalog reads and the re-check of its version tables
    are billed and run as jobs too, as `uniview plan --json` bills a refresh (uniview.ops.billing)."""
    refresh = refresh_bill(20)
    assert refresh.floor_bytes == family_floors(family_plan(20)).refresh
    assert refresh.reads.billed_statements >= 3  # the columns, the descriptions, the re-check of the version tables
    assert refresh.floor_bytes > refresh.maintenance.floor_bytes
    assert refresh.jobs == refresh.reads.billed_statements + 1  # the view DDL is free and does not run unchanged
    figures = simulate(fleet("shared"))
    assert figures.refresh_floor_bytes == refresh.floor_bytes
    assert figures.jobs_per_minute == pytest.approx(figures.sink_jobs_per_minute + 300 * refresh.jobs)
