"""Plan and apply the unified views of one dataset's table families: the one entry point the
CLI, the Cloud Function and the sink's inline notifier all call.

`plan_families` reads metadata once and renders every view; `refresh` also compares with the
stored views and applies only what changed.  Each family is planned and applied on its own: one
family that cannot be built, or whose apply fails, is reported in its outcome and never stops the
others.  Applying is blue-green: new part views (named after their SQL) first, then the top view in
one statement, then the parts nothing reads any more, so readers never see a half-applied family.
The last statement of the apply lists the family's version tables again; if versions appeared
meanwhile the family goes round again, so concurrent or out-of-order refreshes never lose a version.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace

from uniview.core.ddl_generated import generated_columns, with_generated
from uniview.core.ddl_renames import DDL_TABLE, ordered_renames
from uniview.core.errors import NotFoundError, PlanError, TransientWarehouseError, TypeParseError, UniviewError
from uniview.core.identifiers import validate_dataset, validate_table
from uniview.core.renames import TableRename, apply_renames
from uniview.core.schema import TableVersion, collector_paused, discover_listed_families, split_version_table
from uniview.core.table_renames import lineages
from uniview.core.types import STRING, Scalar
from uniview.core.version_description import (
    described_defaults,
    described_not_null,
    described_primary_key,
    described_string_lengths,
)
from uniview.current.view import current_view_name
from uniview.planning.plan import FamilyPlan, GeneratorOptions, is_family_view, plan_family
from uniview.planning.renamed_families import declared_families, lineage_tables, renamed_families
from uniview.warehouse.base import Applied, CurrentTableResult, ViewChange, Warehouse, fingerprint

#: How often one refresh goes round when versions keep appearing while it applies.
MAX_ROUNDS = 10
#: The current table's action when the announced batch was applied by an earlier maintenance.
COALESCED = "coalesced"
#: The current table's action when no change of the tables a refresh names can be the family's and the table's shape
#: has not changed since it was built (an old name of a renamed table): it is left as it is.
UNTOUCHED = "untouched"


@dataclass(frozen=True)
class RefreshRequest:
    """What to refresh: some families (`tables`) or all (`tables=None`) of `dataset`."""

    dataset: str
    tables: tuple[str, ...] | None = None
    target_dataset: str | None = None
    options: GeneratorOptions = GeneratorOptions()
    #: Version tables that must be included (e.g. the one a notification announced).
    required_tables: tuple[str, ...] = ()
    #: With --current table: build each `<table>_current` table and its state again from every change.
    rebuild_current: bool = False
    #: The sink batch (stream, batch id) an announcement named: a `<table>_current` table that has applied it
    #: is not maintained again (the function's staleness bound coalesces announcements so).
    announced_batch: tuple[str, int] | None = None

    def __post_init__(self) -> None:
        validate_dataset(self.dataset)
        validate_dataset(self.resolved_target_dataset, "target dataset")
        for table in self.tables or ():
            validate_table(table)

    @property
    def resolved_target_dataset(self) -> str:
        return self.target_dataset or f"{self.dataset}_unified"


@dataclass
class FamilyOutcome:
    """What one refresh did to one family; `error` is set when the family failed (others went on)."""

    family: str
    versions: list[str]
    replaced: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    jobs: list[str] = field(default_factory=list)
    rounds: int = 1
    error: UniviewError | None = None
    #: Something the user should know that is not an error (e.g. why no current view was made).
    note: str | None = None
    #: What the refresh did to `<table>_current` kept as a table (--current table).
    current_table: CurrentTableResult | None = None

    @property
    def changed(self) -> bool:
        return bool(self.replaced or self.dropped)

    @property
    def failed(self) -> bool:
        return self.error is not None


@dataclass(frozen=True)
class FamilyFailure:
    """A family that could not be planned."""

    family: str
    versions: list[str]
    error: UniviewError


__all__ = [
    "FamilyFailure",
    "FamilyOutcome",
    "FamilyPlan",
    "GeneratorOptions",
    "RefreshRequest",
    "plan_families",
    "refresh",
]


def plan_families(
    warehouse: Warehouse, request: RefreshRequest, failures: list[FamilyFailure] | None = None
) -> list[FamilyPlan]:
    """Render the views of every requested family from one metadata read (no DDL).

    A family that cannot be planned raises, unless `failures` is given: then it is appended there and
    the other families are still planned.
    """
    ddl_rows = warehouse.read_ddl_renames(request.dataset)
    found = lineages(ddl_rows)  # table renames: a family may be made of other tables' changes
    declared = [rename for rename in request.options.renames if isinstance(rename, TableRename)]
    read_tables = lineage_tables(request.tables, found, DDL_TABLE, declared)
    # One pause of the collector over the listings' whole life: they are gone before it runs again, so it never
    # scans the 270,000 columns of a wide family.
    with collector_paused():
        listings = warehouse.read_table_listings(request.dataset, read_tables, request.required_tables)
        primary_keys = None
        descriptions: dict[str, str | None] | None = None
        if request.options.keeps_current:
            tables = sorted({t.table_name for t in listings if split_version_table(t.table_name)})
            descriptions = warehouse.read_descriptions(request.dataset, tables)
            if descriptions is None:
                primary_keys = warehouse.read_primary_keys(request.dataset, tables)
            else:
                primary_keys = {table: described_primary_key(text) for table, text in descriptions.items()}
        families = discover_listed_families(listings, read_tables, primary_keys)
        del listings
    if descriptions:
        families = {name: [_described(v, descriptions.get(v.table_name)) for v in vs] for name, vs in families.items()}
    control = families.pop(DDL_TABLE, None)  # renames read from the source's DDL: an input, not a family
    if found:
        families = renamed_families(families, found, [version.table_name for version in control or ()])
    if declared:
        families = declared_families(families, declared)
    renames = ordered_renames(ddl_rows) + request.options.renames
    if renames:
        families = {name: apply_renames(versions, renames) for name, versions in families.items()}
    generated = generated_columns(ddl_rows)
    if generated:
        families = {name: with_generated(name, versions, generated) for name, versions in families.items()}
    renamed = frozenset().union(*(lineage.names for lineage in found))
    missing = [table for table in request.tables or () if table not in families and table not in {DDL_TABLE, *renamed}]
    if missing:
        raise NotFoundError(
            f"no version tables for {', '.join(map(repr, missing))} in dataset {request.dataset!r} "
            f"(expected tables named <table>_v_<version>)"
        )
    if not families and control is None:
        raise NotFoundError(f"dataset {request.dataset!r} has no version tables (<table>_v_<version>)")
    target = request.resolved_target_dataset
    plans = []
    for family, versions in families.items():
        try:
            plans.append(plan_family(request.dataset, target, versions, request.options))
        except (PlanError, TypeParseError) as error:
            if failures is None:
                raise
            failures.append(FamilyFailure(family, [v.table_name for v in versions], error))
    return plans


def _described(version: TableVersion, description: str | None) -> TableVersion:
    """The version with the declared defaults and NOT NULL columns its description records, and the length of each
    STRING column declared `varchar(n)` or `STRING(n)` where the warehouse's type keeps none (DuckDB's VARCHAR)."""
    defaults = tuple(
        (name, json.dumps(value, ensure_ascii=False)) for name, value in described_defaults(description).items()
    )
    lengths = described_string_lengths(description)
    columns = tuple(
        replace(column, type=Scalar("STRING", (lengths[column.name],)))
        if column.type == STRING and column.name in lengths
        else column
        for column in version.columns
    )
    return replace(version, columns=columns, defaults=defaults, not_null=described_not_null(description))


def changes_for(plan: FamilyPlan, stored: dict[str, str]) -> list[ViewChange]:
    """Blue-green: part views missing (a part's name is its SQL's hash), the top view if it differs,
    the current view if it differs or the top view is replaced (so its schema follows), then the
    family's views that the new top view no longer reads.  A current view is never dropped."""
    wanted = {view.name for view in plan.views}
    creates = [ViewChange(part.dataset, part.name, part.body) for part in plan.parts if part.name not in stored]
    top = plan.top_view
    if creates or stored.get(top.name) != fingerprint(top.body):
        creates.append(ViewChange(top.dataset, top.name, top.body))
    current = plan.current
    if current is not None and (creates or stored.get(current.name) != fingerprint(current.body)):
        creates.append(ViewChange(current.dataset, current.name, current.body))
    drops = [
        ViewChange(plan.target_dataset, name, None)
        for name in sorted(stored)
        if name not in wanted and is_family_view(plan.family, name)
    ]
    return creates + drops


def refresh(warehouse: Warehouse, request: RefreshRequest) -> list[FamilyOutcome]:
    """Create or replace the views that differ from what is stored; drop part views no longer read.

    Every family is handled on its own: a family that cannot be planned, or whose apply fails, gets
    an outcome with `error` set and the others go on.  Metadata errors of the whole dataset (it does
    not exist, the warehouse cannot be reached) still raise.
    """
    failures: list[FamilyFailure] = []
    plans = plan_families(warehouse, request, failures)
    stored = stored_fingerprints(warehouse, plans)
    outcomes = [FamilyOutcome(f.family, f.versions, error=f.error) for f in failures]
    for plan in plans:
        outcome = FamilyOutcome(plan.family, list(_version_names(plan)))
        try:
            _refresh_family(warehouse, request, plan, stored[plan.family], outcome)
        except UniviewError as error:
            outcome.error = error
        outcomes.append(outcome)
    return sorted(outcomes, key=lambda outcome: outcome.family)


def _refresh_family(
    warehouse: Warehouse, request: RefreshRequest, plan: FamilyPlan, stored: dict[str, str], outcome: FamilyOutcome
) -> None:
    for round_number in range(1, MAX_ROUNDS + 1):
        outcome.versions, outcome.rounds = list(_version_names(plan)), round_number
        changes = changes_for(plan, stored)
        if not changes:
            break
        applied = warehouse.apply(changes, recheck=(plan.source_dataset, plan.family))
        _record(outcome, changes, applied)
        if applied.version_tables is None or applied.version_tables <= set(_version_names(plan)):
            break
        stored = {view.name: fingerprint(view.body) for view in plan.all_views}
        required = tuple(t for t in request.required_tables if (split_version_table(t) or ("",))[0] == plan.family)
        again = plan_families(warehouse, replace(request, tables=(plan.family,), required_tables=required))
        plan = next(planned for planned in again if planned.family == plan.family)
    else:
        raise TransientWarehouseError(f"versions of {plan.family} kept changing during {MAX_ROUNDS} refresh rounds")
    nearing = plan.footprint.nearing_limits() if plan.footprint is not None else None
    outcome.note = "; ".join(note for note in (nearing, plan.current_note) if note) or None
    if plan.current_error is not None:
        raise plan.current_error  # the unified view is applied; the current view could not be planned
    if plan.current_table is not None and _applied(warehouse, request, plan):
        outcome.current_table = CurrentTableResult(COALESCED)
    elif plan.current_table is not None and _settled(warehouse, request, plan):
        outcome.current_table = CurrentTableResult(UNTOUCHED)
    elif plan.current_table is not None:  # it reads the unified view just applied
        outcome.current_table = warehouse.maintain_current_table(plan.current_table, request.rebuild_current)
        outcome.jobs.extend(outcome.current_table.jobs)


def _applied(warehouse: Warehouse, request: RefreshRequest, plan: FamilyPlan) -> bool:
    """Whether the family's current table has applied the announced batch already."""
    batch = request.announced_batch
    return batch is not None and plan.current_table is not None and warehouse.applied_batch(plan.current_table, *batch)


def _settled(warehouse: Warehouse, request: RefreshRequest, plan: FamilyPlan) -> bool:
    """Whether the family's current table has nothing to apply: no change of the tables the request names can be the
    family's (`_reachable`), and the table was made with the family's present shape and renames (it would be
    maintained, not built again).  An old name of a table renamed N times is planned with the lineage at every
    refresh of the new name or of the control table; its table is emptied once, by the build the rename causes, and
    not maintained again."""
    if plan.current_table is None or request.rebuild_current or _reachable(plan, request):
        return False
    return warehouse.current_table_action(plan.current_table) == "maintain"


def _reachable(plan: FamilyPlan, request: RefreshRequest) -> bool:
    """Whether changes of the tables `request` names can be the family's: it is one of them, one of its version
    tables is announced, or is a named table's with changes that stay in the family.  Every family is, in a refresh
    of the whole dataset.  The control table's rows reach a family's current table through its state hash (the
    renames it follows) and presentation only: a refresh of it maintains those whose shape they changed."""
    named = request.tables
    if named is None or plan.family in named:
        return True
    for version in plan.versions:
        source = (split_version_table(version.table_name) or ("",))[0]
        if version.table_name in request.required_tables:
            return True
        if source in named and (version.segment is None or version.segment.states):
            return True
    return False


def _record(outcome: FamilyOutcome, changes: list[ViewChange], applied: Applied) -> None:
    outcome.jobs.extend(applied.jobs)
    outcome.replaced.extend(f"{c.dataset}.{c.name}" for c in changes if not c.is_drop)
    outcome.dropped.extend(f"{c.dataset}.{c.name}" for c in changes if c.is_drop)


def stored_fingerprints(warehouse: Warehouse, plans: list[FamilyPlan]) -> dict[str, dict[str, str]]:
    """{family: {view name: fingerprint}} of the families' stored views, in one read per target dataset."""
    by_family: dict[str, dict[str, str]] = {}
    for target in sorted({plan.target_dataset for plan in plans}):
        in_target = [plan for plan in plans if plan.target_dataset == target]
        prefix = f"{in_target[0].family}_" if len(in_target) == 1 else ""
        stored = warehouse.read_view_fingerprints(target, prefix)
        for plan in in_target:
            mine = {current_view_name(plan.family)}
            by_family[plan.family] = {n: d for n, d in stored.items() if is_family_view(plan.family, n) or n in mine}
    return by_family


def _version_names(plan: FamilyPlan) -> tuple[str, ...]:
    return tuple(version.table_name for version in plan.versions)
