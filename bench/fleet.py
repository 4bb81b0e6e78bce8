"""What a fleet of source databases costs on BigQuery, per minute and per day, from the SQL uniview renders.

    .venv/bin/python -m bench.fleet --databases 50000 --tables 300 --versions 20 --layout shared
    .venv/bin/python -m bench.fleet --databases 50000 --tables 300 --versions 20 --layout per-database --json

A fleet is D databases of T tables, each table with V versions, each source table changing at a rate
(changes an hour, Poisson), landed by one sink stream every `trigger` seconds, and each family's
`<table>_current` table maintained at most once per `staleness` seconds after a batch wrote to it.  The
layout is one dataset per database (D x T families) or one shared dataset (T families, the tenant in
`_cdc_database`).  Every billed figure is uniview.core.billing's bill of the scripts the sink and the
function render (a part of a sink batch, its reads, one refresh of a family: its catalog reads, its views' DDL,
the re-check of its version tables and the maintenance of its `<table>_current`, as uniview.ops.billing bills
it for `uniview plan --json`); nothing is counted by hand.  The jobs a sink batch runs are counted from
uniview.sink.landing_bigquery's protocol (SINK_JOBS_PER_BATCH plus one job per part of at most
MAX_TABLES_PER_TRANSACTION - 1 tables; a batch that creates version tables runs one more, SINK_JOBS_PER_NEW_TABLES); a refresh runs one job per billed statement of its reads and re-check,
and one for the maintenance script.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import asdict, dataclass
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from uniview.core.billing import ScriptBill, bill_scripts, on_demand_usd, size_text  # noqa: E402
from uniview.core.landing_layout import CDC_COLUMNS  # noqa: E402
from uniview.core.schema import Column, TableVersion  # noqa: E402
from uniview.core.types import parse_type  # noqa: E402
from uniview.ops.billing import family_views, maintenance_script, refresh_statements  # noqa: E402
from uniview.planning.plan import FamilyPlan, GeneratorOptions, plan_family  # noqa: E402
from uniview.sink.bigquery_promotion import (  # noqa: E402
    MAX_TABLES_PER_TRANSACTION,
    Insert,
    batch_reads,
    part_script,
)
from uniview.sink.bigquery_typing import keys_query  # noqa: E402
from uniview.sink.landing import BatchKey  # noqa: E402
from uniview.warehouse.bigquery_folds import folded_guard  # noqa: E402

#: Query jobs of one sink batch besides its parts: the ledger check, the routing keys, one typing script (which
#: reads the folded versions and the plan an earlier attempt recorded too) and the ledger record.
SINK_JOBS_PER_BATCH = 4
#: The query job of a batch that creates version tables: its plan recorded, before it creates them.
SINK_JOBS_PER_NEW_TABLES = 1
#: Query jobs of a sink run besides its batches: the control tables' DDL, once per run.
SINK_JOBS_PER_RUN = 1
#: BigQuery's limits on mutating DML (UPDATE, DELETE, MERGE; INSERT counts as one) against one table.
MUTATING_DML_RUNNING_PER_TABLE = 2
MUTATING_DML_QUEUED_PER_TABLE = 20
#: Slot time a small statement takes on capacity pricing: an assumption, not a measurement.
DEFAULT_SLOT_SECONDS_PER_STATEMENT = 0.5
_PROJECT, _CONTROL = "project", "uniview"
_MINUTES_A_DAY = 24 * 60
#: The version tables one part writes: one table of a transaction is the steps table.
_PART_TABLES = MAX_TABLES_PER_TRANSACTION - 1


@dataclass(frozen=True)
class Fleet:
    databases: int
    tables: int
    versions: int
    changes_per_table_hour: float
    trigger_seconds: float
    staleness_seconds: float
    layout: str  # "shared" or "per-database"
    slot_seconds_per_statement: float = DEFAULT_SLOT_SECONDS_PER_STATEMENT

    @property
    def families(self) -> int:
        return self.tables if self.layout == "shared" else self.databases * self.tables

    def touched(self, seconds: float) -> float:
        """The chance a family gets a change within `seconds`: of any tenant's table in the shared layout."""
        quiet = math.exp(-self.changes_per_table_hour * seconds / 3600)
        return 1 - quiet ** (self.databases if self.layout == "shared" else 1)


@dataclass(frozen=True)
class FleetFigures:
    families: int
    batches_per_minute: float
    routes_per_batch: float
    sink_jobs_per_minute: float
    maintenances_per_minute: float
    jobs_per_minute: float
    version_table_dml_per_minute: float
    current_table_dml_per_minute: float
    mutating_dml_limit_per_table: str
    maintenance_floor_bytes: int
    refresh_floor_bytes: int
    floor_bytes_per_day: float
    usd_per_day: float
    slot_hours_per_day: float


@dataclass(frozen=True)
class SinkBatchBill:
    """One sink batch: its reads and records (`fixed`), and its parts of `routes` version tables."""

    routes: int
    fixed: ScriptBill
    full_part: ScriptBill
    last_part: ScriptBill

    @property
    def parts(self) -> int:
        return math.ceil(self.routes / _PART_TABLES)

    @property
    def floor_bytes(self) -> int:
        full = self.routes // _PART_TABLES
        last = self.last_part.floor_bytes if self.routes % _PART_TABLES else 0
        return self.fixed.floor_bytes + full * self.full_part.floor_bytes + last

    @property
    def billed_statements(self) -> int:
        full = self.routes // _PART_TABLES
        last = self.last_part.billed_statements if self.routes % _PART_TABLES else 0
        return self.fixed.billed_statements + full * self.full_part.billed_statements + last


def sink_batch_bill(routes: int) -> SinkBatchBill:
    """One sink batch writing `routes` version tables, billed from the scripts it runs: a part of many tables
    is billed like every other full part, so one of each is rendered."""
    key = BatchKey("stream", 1)
    first = _inserts(min(routes, _PART_TABLES))
    fixed = bill_scripts(
        [
            keys_query(f"`{_PROJECT}`.{_CONTROL}._uniview_staging_lines", False),
            *batch_reads(_PROJECT, _CONTROL, key, [insert.target for insert in first]),
        ]
    )
    return SinkBatchBill(routes, fixed, _part_bill(_PART_TABLES), _part_bill(routes % _PART_TABLES))


@cache
def _part_bill(tables: int) -> ScriptBill:
    inserts = _inserts(tables)
    targets = {insert.target for insert in inserts}
    guard = folded_guard(_PROJECT, _CONTROL, targets) if targets else None
    return bill_scripts([part_script(_PROJECT, _CONTROL, BatchKey("stream", 1), 0, inserts, guard)])


def _inserts(count: int) -> list[Insert]:
    return [
        Insert(
            ("cdc", f"t{n}_v_a"),
            f"INSERT INTO `{_PROJECT}`.cdc.t{n}_v_a (id) SELECT id FROM `{_PROJECT}`.uniview.typed",
        )
        for n in range(count)
    ]


@dataclass(frozen=True)
class RefreshBill:
    """One refresh of a family after a sink batch wrote to it: its reads (catalog reads, views' DDL, the re-check
    of its version tables) and the maintenance of its `<table>_current` table."""

    reads: ScriptBill
    maintenance: ScriptBill

    @property
    def floor_bytes(self) -> int:
        return self.reads.floor_bytes + self.maintenance.floor_bytes

    @property
    def billed_statements(self) -> int:
        return self.reads.billed_statements + self.maintenance.billed_statements

    @property
    def jobs(self) -> int:
        """A job per billed read (DDL of unchanged views does not run), and the maintenance script."""
        return self.reads.billed_statements + 1


@cache
def family_plan(versions: int) -> FamilyPlan:
    """A family of `versions` version tables, `<table>_current` kept as a table."""
    columns = tuple(Column(name, parse_type(t)) for name, t in (("id", "INT64"), ("name", "STRING"), *CDC_COLUMNS))
    family = [TableVersion(f"t_v_{n:04d}", "t", f"{n:04d}", n, columns, ("id",)) for n in range(versions)]
    planned = plan_family("cdc", "cdc", family, GeneratorOptions(current="table"))
    assert planned.current_table is not None
    return planned


@cache
def maintenance_bill(versions: int) -> ScriptBill:
    """One maintenance of `<table>_current` of a family of `versions` version tables."""
    planned = family_plan(versions)
    return bill_scripts([maintenance_script(planned)], family_views(planned))


@cache
def refresh_bill(versions: int) -> RefreshBill:
    """One refresh of a family of `versions` version tables, as uniview.ops.billing bills it."""
    planned = family_plan(versions)
    return RefreshBill(bill_scripts(refresh_statements(planned), family_views(planned)), maintenance_bill(versions))


def simulate(fleet: Fleet) -> FleetFigures:
    batches = 60 / fleet.trigger_seconds
    routes = fleet.families * fleet.touched(fleet.trigger_seconds)
    sink = sink_batch_bill(math.ceil(routes))
    interval = max(fleet.trigger_seconds, fleet.staleness_seconds)
    maintenances = fleet.families * fleet.touched(interval) * 60 / interval
    refresh = refresh_bill(fleet.versions)
    statements = batches * sink.billed_statements + maintenances * refresh.billed_statements
    floor = (batches * sink.floor_bytes + maintenances * refresh.floor_bytes) * _MINUTES_A_DAY
    per_family = maintenances / fleet.families
    mutating = sum(1 for s in refresh.maintenance.statements if s.kind in ("insert", "delete", "merge"))
    return FleetFigures(
        families=fleet.families,
        batches_per_minute=batches,
        routes_per_batch=routes,
        sink_jobs_per_minute=batches * (SINK_JOBS_PER_BATCH + sink.parts),
        maintenances_per_minute=maintenances,
        jobs_per_minute=batches * (SINK_JOBS_PER_BATCH + sink.parts) + maintenances * refresh.jobs,
        version_table_dml_per_minute=batches * fleet.touched(fleet.trigger_seconds),
        current_table_dml_per_minute=per_family * mutating,
        mutating_dml_limit_per_table=f"{MUTATING_DML_RUNNING_PER_TABLE} running, {MUTATING_DML_QUEUED_PER_TABLE} queued",
        maintenance_floor_bytes=refresh.maintenance.floor_bytes,
        refresh_floor_bytes=refresh.floor_bytes,
        floor_bytes_per_day=floor,
        usd_per_day=on_demand_usd(floor),
        slot_hours_per_day=statements * _MINUTES_A_DAY * fleet.slot_seconds_per_statement / 3600,
    )


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--databases", type=int, default=50_000)
    parser.add_argument("--tables", type=int, default=300, help="tables per database")
    parser.add_argument("--versions", type=int, default=20, help="versions per table")
    parser.add_argument("--changes-per-table-hour", type=float, default=1.0)
    parser.add_argument("--trigger", type=float, default=60.0, help="seconds between sink batches")
    parser.add_argument(
        "--staleness", type=float, default=0.0, help="seconds: a family is maintained at most this often"
    )
    parser.add_argument("--layout", choices=("shared", "per-database", "both"), default="both")
    parser.add_argument("--slot-seconds-per-statement", type=float, default=DEFAULT_SLOT_SECONDS_PER_STATEMENT)
    parser.add_argument("--json", action="store_true")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    layouts = ("shared", "per-database") if args.layout == "both" else (args.layout,)
    results = {}
    for layout in layouts:
        fleet = Fleet(
            args.databases,
            args.tables,
            args.versions,
            args.changes_per_table_hour,
            args.trigger,
            args.staleness,
            layout,
            args.slot_seconds_per_statement,
        )
        results[layout] = asdict(simulate(fleet))
    if args.json:
        print(json.dumps(results, indent=2))
        return
    for layout, figures in results.items():
        print(f"{layout}:")
        for name, value in figures.items():
            shown = size_text(value) if name.endswith("bytes") or name.endswith("bytes_per_day") else value
            print(f"  {name:32} {shown:,.1f}" if isinstance(shown, float) else f"  {name:32} {shown}")


if __name__ == "__main__":
    main()
