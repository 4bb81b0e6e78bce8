"""Plan and apply the unified views of one dataset's table families: the one entry point the
CLI, the Cloud Function and the sink's inline notifier all call.

`plan_families` reads metadata once and renders every view; `refresh` also compares with the
stored views, applies only what changed, then re-reads the version set and goes round again
if versions appeared meanwhile, so concurrent or out-of-order refreshes never lose a version.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from uniview.errors import NotFoundError, TransientWarehouseError
from uniview.identifiers import validate_dataset, validate_table
from uniview.plan import FamilyPlan, GeneratorOptions, is_family_view, plan_family
from uniview.schema import discover_families, split_version_table
from uniview.warehouse.base import ViewChange, Warehouse, fingerprint

#: How often one refresh goes round when versions keep appearing while it applies.
MAX_ROUNDS = 10


@dataclass(frozen=True)
class RefreshRequest:
    """What to refresh: some families (`tables`) or all (`tables=None`) of `dataset`."""

    dataset: str
    tables: tuple[str, ...] | None = None
    target_dataset: str | None = None
    options: GeneratorOptions = GeneratorOptions()
    #: Version tables that must be included (e.g. the one a notification announced).
    required_tables: tuple[str, ...] = ()

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
    """What one refresh did to one family."""

    family: str
    versions: list[str]
    replaced: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    jobs: list[str] = field(default_factory=list)
    rounds: int = 1

    @property
    def changed(self) -> bool:
        return bool(self.replaced or self.dropped)


__all__ = ["FamilyOutcome", "FamilyPlan", "GeneratorOptions", "RefreshRequest", "plan_families", "refresh"]


def plan_families(warehouse: Warehouse, request: RefreshRequest) -> list[FamilyPlan]:
    """Render the views of every requested family from one metadata read (no DDL)."""
    records = warehouse.read_columns(request.dataset, request.tables, request.required_tables)
    families = discover_families(records, request.tables)
    missing = [table for table in request.tables or () if table not in families]
    if missing:
        raise NotFoundError(
            f"no version tables for {', '.join(map(repr, missing))} in dataset {request.dataset!r} "
            f"(expected tables named <table>_v_<version>)"
        )
    if not families:
        raise NotFoundError(f"dataset {request.dataset!r} has no version tables (<table>_v_<version>)")
    target = request.resolved_target_dataset
    return [
        plan_family(request.dataset, target, versions, request.options) for versions in families.values()
    ]


def changes_for(plan: FamilyPlan, stored: dict[str, str]) -> list[ViewChange]:
    """Views whose stored fingerprint differs, parts before the top view, then stale parts dropped."""
    wanted = {view.name for view in plan.views}
    creates = [
        ViewChange(view.dataset, view.name, view.body)
        for view in plan.views
        if stored.get(view.name) != fingerprint(view.body)
    ]
    drops = [
        ViewChange(plan.target_dataset, name, None)
        for name in sorted(stored)
        if name not in wanted and is_family_view(plan.family, name)
    ]
    return creates + drops


def refresh(warehouse: Warehouse, request: RefreshRequest) -> list[FamilyOutcome]:
    """Create or replace the views that differ from what is stored; drop stale part views.

    After applying, the version set is read again; families whose versions changed meanwhile
    are refreshed again (at most MAX_ROUNDS times, then TransientWarehouseError), so a
    refresh that raced with newer versions never leaves a view that misses them.
    """
    outcomes: dict[str, FamilyOutcome] = {}
    plans = plan_families(warehouse, request)
    for round_number in range(1, MAX_ROUNDS + 1):
        stored = stored_fingerprints(warehouse, plans)
        applied = [plan for plan in plans if _apply_plan(warehouse, plan, stored[plan.family], outcomes, round_number)]
        if not applied:
            return list(outcomes.values())
        families = tuple(plan.family for plan in applied)
        required = tuple(t for t in request.required_tables if (split_version_table(t) or ("",))[0] in families)
        recheck = replace(request, tables=families, required_tables=required)
        current = {plan.family: plan for plan in plan_families(warehouse, recheck)}
        plans = [
            current[plan.family] for plan in applied if _version_names(current[plan.family]) != _version_names(plan)
        ]
        if not plans:
            return list(outcomes.values())
    raise TransientWarehouseError(
        f"versions of {', '.join(plan.family for plan in plans)} kept changing during {MAX_ROUNDS} refresh rounds"
    )


def stored_fingerprints(warehouse: Warehouse, plans: list[FamilyPlan]) -> dict[str, dict[str, str]]:
    """{family: {view name: fingerprint}} of the families' stored views, in one read per target dataset."""
    by_family: dict[str, dict[str, str]] = {}
    for target in sorted({plan.target_dataset for plan in plans}):
        in_target = [plan for plan in plans if plan.target_dataset == target]
        prefix = f"{in_target[0].family}_unified" if len(in_target) == 1 else ""
        stored = warehouse.read_view_fingerprints(target, prefix)
        for plan in in_target:
            by_family[plan.family] = {n: d for n, d in stored.items() if is_family_view(plan.family, n)}
    return by_family


def _apply_plan(
    warehouse: Warehouse, plan: FamilyPlan, stored: dict[str, str], outcomes: dict[str, FamilyOutcome], round_number: int
) -> bool:
    """Apply one family's changes; record them in `outcomes`; True when anything was applied."""
    changes = changes_for(plan, stored)
    outcome = outcomes.setdefault(plan.family, FamilyOutcome(plan.family, []))
    outcome.versions = list(_version_names(plan))
    outcome.rounds = round_number
    if not changes:
        return False
    outcome.jobs.extend(warehouse.apply(changes))
    outcome.replaced.extend(f"{c.dataset}.{c.name}" for c in changes if not c.is_drop)
    outcome.dropped.extend(f"{c.dataset}.{c.name}" for c in changes if c.is_drop)
    return True


def _version_names(plan: FamilyPlan) -> tuple[str, ...]:
    return tuple(version.table_name for version in plan.versions)
