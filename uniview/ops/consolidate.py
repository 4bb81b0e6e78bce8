"""`uniview consolidate`: fold old, idle versions of a family into one consolidated table, so that the
family's view stays within BigQuery's per-query limits.  The protocol and its guarantees are in
docs/consolidation.md; the choice and the SQL in uniview.planning.consolidation; the statements in the
warehouse's folding (uniview.warehouse.duckdb_consolidation, uniview.warehouse.bigquery_consolidation).

Steps per family: resume what the registry left `planned`, or choose; with `apply`, record (register
the versions, create the consolidated table), join the view (refresh), move in batches, settle
(BigQuery: retire moved tables that are empty after the settle period), leave the view (refresh),
and with `drop_folded` drop the emptied tables past their retention.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from uniview.core.errors import ConfigError, NotFoundError, UniviewError
from uniview.core.landing_layout import SOURCE_TABLE
from uniview.core.limits import LimitError
from uniview.core.schema import TableVersion, discover_families, version_table_name
from uniview.ops.refresh import RefreshRequest, refresh
from uniview.planning.consolidation import (
    MOVED,
    PLANNED,
    FoldPlan,
    FoldRecord,
    check_max_versions,
    choose_versions,
    fold_plan,
    next_consolidated_table,
    successor_version,
)
from uniview.planning.plan import GeneratorOptions, UnifiedColumn
from uniview.warehouse.base import Warehouse

if TYPE_CHECKING:
    from uniview.warehouse.bigquery_consolidation import BigQueryFolding
    from uniview.warehouse.duckdb_consolidation import DuckDBFolding

    #: A warehouse's consolidation I/O (folding_for).
    Folding = DuckDBFolding | BigQueryFolding

#: `UNIVIEW_CONSOLIDATE_KILL_AT=<point>` makes the process SIGKILL itself there (the tests' kill -9).
KILL_VARIABLE = "UNIVIEW_CONSOLIDATE_KILL_AT"
KILL_POINTS = ("after-record", "after-join", "after-move", "after-leave")


@dataclass(frozen=True)
class ConsolidationRequest:
    dataset: str
    tables: tuple[str, ...] | None
    idle_for: timedelta
    max_versions: int
    apply: bool = False
    drop_folded: bool = False
    retention: timedelta = timedelta(days=7)
    options: GeneratorOptions = GeneratorOptions()
    target_dataset: str | None = None
    #: BigQuery: the dataset of the registry, the sink's control dataset (the dataset it lands in, else, with
    #: --dataset-per-database, its --fallback-dataset); default: `dataset`.
    control_dataset: str | None = None
    #: BigQuery: how long a moved table stays in the view before it may leave (the late-insert window).
    settle: timedelta = timedelta(hours=1)

    def __post_init__(self) -> None:
        check_max_versions(self.max_versions)

    def refresh_request(self, family: str) -> RefreshRequest:
        """The refresh of `family`'s views that consolidation runs, with the same options as `uniview refresh`."""
        return RefreshRequest(
            dataset=self.dataset, tables=(family,), target_dataset=self.target_dataset, options=self.options
        )


@dataclass
class FamilyConsolidation:
    """What consolidation planned or did for one family."""

    family: str
    versions_before: int
    plan: FoldPlan | None = None
    resumed: bool = False
    rows: int = 0
    bytes: int | None = None  # None where the warehouse does not say
    moved_rows: int = 0
    retired: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    applied: bool = False
    error: UniviewError | None = None


def _reach(point: str) -> None:
    if os.environ.get(KILL_VARIABLE) == point:
        os.kill(os.getpid(), signal.SIGKILL)


def folding_for(warehouse: Warehouse, request: ConsolidationRequest) -> Folding:
    """The warehouse's consolidation I/O."""
    from uniview.warehouse.duckdb import DuckDBWarehouse

    if isinstance(warehouse, DuckDBWarehouse):
        from uniview.warehouse.duckdb_consolidation import DuckDBFolding

        return DuckDBFolding(warehouse)
    from uniview.warehouse.bigquery import BigQueryWarehouse

    if isinstance(warehouse, BigQueryWarehouse):
        from uniview.warehouse.bigquery_consolidation import BigQueryFolding

        return BigQueryFolding(warehouse, request.control_dataset or request.dataset)
    raise ConfigError(f"uniview consolidate does not support {warehouse.url}")


def consolidate(warehouse: Warehouse, request: ConsolidationRequest) -> list[FamilyConsolidation]:
    """Plan, and with `request.apply` carry out, the consolidation of each requested family."""
    folding = folding_for(warehouse, request)
    families = discover_families(warehouse.read_columns(request.dataset, request.tables), request.tables)
    missing = [table for table in request.tables or () if table not in families]
    if missing:
        raise NotFoundError(f"no version tables for {', '.join(map(repr, missing))} in dataset {request.dataset!r}")
    last_written = folding.last_written(request.dataset)
    results = []
    for family, versions in families.items():
        result = FamilyConsolidation(family, len(versions))
        try:
            _consolidate_family(warehouse, folding, request, versions, last_written, result)
        except UniviewError as error:
            result.error = error
        results.append(result)
    return results


def _consolidate_family(
    warehouse: Warehouse,
    folding: Folding,
    request: ConsolidationRequest,
    versions: list[TableVersion],
    last_written: Mapping[str, datetime | None],
    result: FamilyConsolidation,
) -> None:
    family = versions[0].family
    records = folding.folds(request.dataset, family)
    result.plan = _plan(folding, request, versions, records, last_written)
    result.resumed = any(r.state == PLANNED for r in records)
    if result.plan is not None:
        result.rows, result.bytes = folding.size(request.dataset, [v.table_name for v in result.plan.versions])
    if not request.apply:
        return
    if result.plan is not None:
        _move(warehouse, folding, request, result.plan, result)
        records = folding.folds(request.dataset, family)
    result.retired = folding.settle(request.dataset, records, request.settle)
    if result.plan is not None or result.retired:
        _refresh(warehouse, request.refresh_request(family), over_limits_ok=False)
        result.applied = result.plan is not None
        _reach("after-leave")
    if request.drop_folded:
        result.dropped = _drop_expired(folding, request, family)


def _plan(
    folding: Folding,
    request: ConsolidationRequest,
    versions: list[TableVersion],
    records: list[FoldRecord],
    last_written: Mapping[str, datetime | None],
) -> FoldPlan | None:
    """What an interrupted run left `planned`, or the versions chosen now (and folded versions that
    hold rows again), or None."""
    pending = [r for r in records if r.state == PLANNED]
    if pending:
        return _resumed_plan(request, versions, pending)
    listed = {v.table_name for v in versions}
    moved = [r.version_table for r in records if r.state == MOVED and r.version_table in listed]
    staying = [v for v in versions if v.table_name not in moved]  # moved tables leave once settled
    chosen = choose_versions(staying, last_written, datetime.now(UTC), request.idle_for, request.max_versions)
    chosen = _with_refolds(versions, chosen, folding.holding_rows(request.dataset, moved))
    if not chosen:
        return None
    target = next_consolidated_table(versions[0].family, versions, [r.consolidated_table for r in records])
    return fold_plan(request.dataset, versions, chosen, target, request.options.policy)


def _with_refolds(versions: list[TableVersion], chosen: list[TableVersion], folded: set[str]) -> list[TableVersion]:
    """`chosen` and every folded version that holds rows again (written by something other than
    uniview's sink, or by a sink promotion that overlapped the move), in the family's order."""
    names = {v.table_name for v in chosen} | folded
    return [v for v in versions if v.table_name in names]


def _move(
    warehouse: Warehouse, folding: Folding, request: ConsolidationRequest, plan: FoldPlan, result: FamilyConsolidation
) -> None:
    folding.record(
        plan, {v.table_name: version_table_name(plan.family, successor_version(v.version)) for v in plan.versions}
    )
    _reach("after-record")
    _refresh(warehouse, request.refresh_request(plan.family), over_limits_ok=True)
    _reach("after-join")
    for batch in plan.batches():
        result.moved_rows += folding.move(plan, batch, request.options)
        _reach("after-move")


def _refresh(warehouse: Warehouse, request: RefreshRequest, over_limits_ok: bool) -> None:
    """Refresh one family and release the warehouse.  Joining the consolidated table to the view of a
    family over BigQuery's limits cannot succeed and need not: that family has no complete view."""
    try:
        for outcome in refresh(warehouse, request):
            if outcome.error is not None and not (over_limits_ok and isinstance(outcome.error, LimitError)):
                raise outcome.error
    finally:
        warehouse.close()


def _resumed_plan(request: ConsolidationRequest, versions: list[TableVersion], pending: list[FoldRecord]) -> FoldPlan:
    """The plan an interrupted run recorded: its consolidated table (columns as created, or as the
    family's view has them when the crash came before the table was) and the versions still `planned`."""
    target = pending[0].consolidated_table
    by_name = {v.table_name: v for v in versions}
    chosen = tuple(by_name[r.version_table] for r in pending if r.version_table in by_name)
    if target not in by_name:
        return fold_plan(request.dataset, versions, chosen, target, request.options.policy)
    columns = tuple(UnifiedColumn(c.name, c.type, (c.type,)) for c in by_name[target].columns if c.name != SOURCE_TABLE)
    return FoldPlan(request.dataset, versions[0].family, target, chosen, columns, len(versions) - len(chosen))


def _drop_expired(folding: Folding, request: ConsolidationRequest, family: str) -> list[str]:
    cutoff = datetime.now(UTC) - request.retention
    expired = [r for r in folding.folds(request.dataset, family) if r.recorded_at <= cutoff]
    return folding.drop_folded(request.dataset, expired) if expired else []


__all__ = ["ConsolidationRequest", "FamilyConsolidation", "consolidate"]
