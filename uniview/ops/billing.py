"""Per family, the on-demand floor of what uniview runs on BigQuery and of a query of its views.

Each figure is uniview.core.billing's bill of the SQL uniview renders for the family: one refresh (the
catalog reads, the view DDL and the re-check of the version tables, and the maintenance of a
`<table>_current` table), one maintenance, and one `SELECT *` of the unified view and of the current view
or table.  The floor is what BigQuery bills however few rows are read; where consolidation would fold
idle versions into one table, `consolidated_floor` is the query floor after it.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from uniview.core.billing import bill_script, bill_scripts, expand, statement_bytes, view_tables
from uniview.core.identifiers import quote_path
from uniview.planning.consolidation import choose_versions
from uniview.planning.plan import FamilyPlan
from uniview.warehouse.bigquery import columns_sql, descriptions_sql
from uniview.warehouse.bigquery_views import version_tables_statement

#: Versions not written for this long are the ones status counts as foldable (`consolidate --idle-for 1d`).
FOLDABLE_IDLE_FOR = timedelta(days=1)
#: A fold keeps at least the consolidated table and one version (`consolidate --max-versions 2`).
FOLDED_TO_VERSIONS = 2
#: The watermark of the maintenance billed: the floor does not depend on it.
_SAMPLE_WATERMARK = datetime(2026, 1, 1, tzinfo=UTC)
#: The project named in the rendered SQL: the floor does not depend on it.
_PROJECT = "project"


@dataclass(frozen=True)
class FamilyFloors:
    """One family's floors in bytes; None where the family has no such thing."""

    family: str
    version_tables: int
    query_unified: int
    query_current: int | None
    refresh: int
    maintenance: int | None

    def as_json(self) -> dict[str, Any]:
        return {
            "version_tables": self.version_tables,
            "floor_bytes": {
                "query_unified": self.query_unified,
                "query_current": self.query_current,
                "refresh": self.refresh,
                "maintenance": self.maintenance,
            },
        }


def family_views(plan: FamilyPlan) -> dict[str, tuple[str, ...]]:
    """Per view of the family, the tables it reads: the unified view (through its parts) every version table,
    as the plan built it; the current view, as its body reads (sqlglot)."""
    versions = tuple(f"{plan.source_dataset}.{version.table_name}" for version in plan.versions)
    views: dict[str, tuple[str, ...]] = {plan.top_view.qualified_name: versions}
    if plan.current is not None:
        views |= view_tables({plan.current.qualified_name: plan.current.body})
    return views


def family_floors(plan: FamilyPlan) -> FamilyFloors:
    views = family_views(plan)
    maintenance = None
    if plan.current_table is not None:
        maintenance = bill_script(maintenance_script(plan), views).floor_bytes
    return FamilyFloors(
        plan.family,
        len(plan.versions),
        query_floor(plan, plan.top_view.name, views),
        _current_query_floor(plan, views),
        bill_scripts(refresh_statements(plan), views).floor_bytes + (maintenance or 0),
        maintenance,
    )


def maintenance_script(plan: FamilyPlan) -> str:
    """The script of one maintenance of the family's `<table>_current` table applying one batch of the sink
    that wrote the newest version: its window reads that version table alone."""
    # google-api-core, which the script's module imports, only where there is a current table to bill
    from uniview.current.table import BatchWindow
    from uniview.warehouse.bigquery_current import action_script

    assert plan.current_table is not None
    window = BatchWindow(_SAMPLE_WATERMARK, (), (plan.versions[-1].table_name,))
    return action_script(plan.current_table, "maintain", False, window)


def query_floor(plan: FamilyPlan, name: str, views: Mapping[str, tuple[str, ...]]) -> int:
    """The floor of one query of `name` in the family's target dataset."""
    return bill_script(f"SELECT * FROM {quote_path(plan.target_dataset, name)}", views).floor_bytes


def _current_query_floor(plan: FamilyPlan, views: Mapping[str, tuple[str, ...]]) -> int | None:
    if plan.current is not None:
        return query_floor(plan, plan.current.name, views)
    if plan.current_table is not None:
        return query_floor(plan, plan.current_table.table_name, views)
    return None


def refresh_statements(plan: FamilyPlan) -> list[str]:
    """The query jobs one refresh of the family runs on BigQuery besides a maintenance: its catalog reads,
    its views' DDL and the re-check of its version tables."""
    ddl = [view.statement for view in plan.all_views]
    return [
        columns_sql(_PROJECT, plan.source_dataset, True),
        descriptions_sql(_PROJECT, plan.source_dataset),
        *ddl,
        version_tables_statement(_PROJECT, plan.source_dataset, plan.family),
    ]


def consolidated_floor(
    plan: FamilyPlan, views: Mapping[str, tuple[str, ...]], last_written: Mapping[str, datetime | None], now: datetime
) -> int | None:
    """The floor of one query of the unified view once its idle versions are folded into one table; None
    when no two versions are idle (`FOLDABLE_IDLE_FOR`)."""
    chosen = choose_versions(plan.versions, last_written, now, FOLDABLE_IDLE_FOR, FOLDED_TO_VERSIONS)
    if not chosen:
        return None
    folded = {f"{plan.source_dataset}.{version.table_name}" for version in chosen}
    tables = expand((f"{plan.target_dataset}.{plan.top_view.name}",), views)
    return statement_bytes([*_kept(tables, folded), f"{plan.source_dataset}.{plan.family}_v_consolidated"], {})


def _kept(tables: tuple[str, ...], folded: Collection[str]) -> list[str]:
    return [table for table in tables if table not in folded]
