"""The reads behind `uniview status` (each one query whatever the number of families) and `uniview explain`.

On DuckDB: the columns (1), the stored views (1), the activity of every version table (1), the
quarantine (1), the pending notifications (1): 5 queries.  On BigQuery: the columns (1 job), the
stored views (`tables.list`, then `tables.get` for a few top views or 1 job for many), the views'
modification times (1 job), the quarantine (1 job), and the activity (1 job per 900 version
tables, which reads only `_cdc_ingested_at` and `_cdc_database`); the pending notifications are
read from the sink's file under its checkpoint directory (--pending-file).
"""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from uniview.core.errors import ConfigError, NotFoundError
from uniview.core.landing_layout import DATABASE, INGESTED_AT
from uniview.core.renames import apply_renames
from uniview.core.schema import TableVersion, discover_families
from uniview.ops.explain.model import Explanation, explain_family
from uniview.ops.refresh import FamilyFailure, RefreshRequest, plan_families, stored_fingerprints
from uniview.ops.status.report import StatusInputs
from uniview.planning.plan import GeneratorOptions
from uniview.warehouse.base import Warehouse
from uniview.warehouse.status_engines import status_reads
from uniview.warehouse.status_reads import ActivityTable, PendingNotification

#: Queries one `uniview status` sends to a DuckDB warehouse, whatever the number of families.
STATUS_QUERIES_DUCKDB = 5
#: Query jobs one `uniview status` runs on BigQuery, whatever the number of families, when the dataset holds at
#: most ACTIVITY_TABLES_PER_QUERY version tables (one more job per that many more) and at most
#: MAX_VIEWS_READ_ONE_BY_ONE top views (read with tables.get, no job; more are read with one job).
STATUS_JOBS_BIGQUERY = 4


def collect(
    warehouse: Warehouse, request: RefreshRequest, pending_file: str | None = None, now: datetime | None = None
) -> StatusInputs:
    """Read what `uniview status` shows.  Families are planned as `refresh` plans them, with the
    query-time limits measured, not enforced, so a family over them still shows its headroom."""
    now = now or datetime.now(UTC)
    lifted = replace(request, options=replace(request.options, enforce_query_limits=False))
    failures: list[FamilyFailure] = []
    plans = plan_families(warehouse, lifted, failures)
    stored = stored_fingerprints(warehouse, plans) if plans else {}
    tops = {plan.family: stored.get(plan.family, {}).get(plan.top_view.name) for plan in plans}
    versions = [v for plan in plans for v in plan.versions]
    failed = {f.family: (list(f.versions), str(f.error)) for f in failures}
    reads = status_reads(warehouse)
    activity_tables = [_activity_table(v) for v in versions]
    activity = reads.table_activity(request.dataset, [t for t in activity_tables if t is not None])
    pending = reads.pending_notifications(request.dataset)
    if pending is None:
        pending = read_pending_file(pending_file, request.dataset) if pending_file else []
    return StatusInputs(
        now=now,
        plans=plans,
        failures=failed,
        stored_tops=tops,
        activity=activity,
        quarantine=reads.quarantine_counts(request.dataset, now),
        pending=pending,
        view_times=reads.view_times(request.resolved_target_dataset),
    )


def _activity_table(version: TableVersion) -> ActivityTable | None:
    names = {(column.stored or column.name).lower() for column in version.columns}
    if INGESTED_AT not in names:
        return None  # not landed by uniview's sink: no ingestion time to read
    return ActivityTable(version.table_name, DATABASE in names)


def read_pending_file(path: str, dataset: str) -> list[PendingNotification]:
    """The BigQuery sink's pending notifications (uniview_pending_notifications.json under its checkpoint
    directory, copied locally); the file keeps no time, so the file's own modification time is the since."""
    file = Path(path)
    try:
        items = json.loads(file.read_text(encoding="utf-8") or "[]")
        since = datetime.fromtimestamp(file.stat().st_mtime, UTC)
    except (OSError, ValueError) as error:
        raise ConfigError(f"cannot read the pending notifications in {path}: {error}") from None
    if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
        raise ConfigError(f"{path} is not a list of notifications (uniview_pending_notifications.json)")
    return [
        PendingNotification(item.get("table"), item.get("version"), since)
        for item in items
        if item.get("dataset") == dataset
    ]


__all__ = ["GeneratorOptions", "collect", "read_pending_file"]


def collect_explanation(warehouse: Warehouse, dataset: str, table: str, options: GeneratorOptions) -> Explanation:
    """One family's history: its columns (1 read), renames applied as the planner applies them, and the
    source databases of each version (1 read)."""
    records = warehouse.read_columns(dataset, [table])
    versions = discover_families(records, [table]).get(table)
    if not versions:
        raise NotFoundError(
            f"no version tables for {table!r} in dataset {dataset!r} (expected tables named <table>_v_<version>)"
        )
    if options.renames:
        versions = apply_renames(versions, options.renames)
    tables = [t for t in map(_activity_table, versions) if t is not None]
    activity = status_reads(warehouse).table_activity(dataset, tables)
    return explain_family(versions, options.policy, activity)
