"""The operator's view of a dataset's families: what `uniview status` computes from what it read.

For each family: its versions and the source databases writing them, the version tables no view
reads yet (found as `refresh` finds them: by the fingerprint of the stored top view), the headroom
to each of BigQuery's limits (uniview.core.limits), when its views last changed, its freshness, its
quarantine and its pending notifications.  Families are ordered worst first.  `--fail-on`
thresholds name what makes the command exit non-zero; the same thresholds (or their defaults)
flag each family.  Pure: the reads are in uniview.ops.status.collect.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from uniview.core import limits
from uniview.core.errors import ConfigError, PlanError, TypeParseError
from uniview.core.schema import TableVersion
from uniview.ops.billing import consolidated_floor, family_views, query_floor
from uniview.planning.consolidation import parse_duration
from uniview.planning.plan import FamilyPlan, GeneratorOptions, plan_family
from uniview.warehouse.base import fingerprint
from uniview.warehouse.status_reads import PendingNotification, QuarantineCount, TableActivity

#: How many shorter version lists are planned to find which versions the stored top view lacks.
MAX_UNREAD_PROBES = 32
#: The kinds `--fail-on` takes, and their defaults for flagging a family when not given.
FAIL_ON_KINDS = ("stale", "headroom", "pending", "quarantine")
DEFAULT_STALE = timedelta(hours=24)
DEFAULT_HEADROOM = round(100 * (1 - limits.NEARING_SHARE), 1)  # the refresh's warning: above 80% of a limit
DEFAULT_PENDING = timedelta(hours=1)
#: Records quarantined in the last 24 hours that a row may have before it is flagged.
DEFAULT_QUARANTINE = 0
#: The row of the quarantined lines that name no family (no metadata.table_name: not JSON, no metadata).
#: Not a table name BigQuery allows, so no family is ever named so.
NO_FAMILY = "(no family)"
#: Exit code of `uniview status` when a --fail-on threshold is crossed (1 is an error, 2 a usage error).
THRESHOLD_EXIT_CODE = 3
#: Flags by severity, worst first.
SEVERITY = ("over limit", "unplannable", "near limit", "stale", "pending", "quarantine", "notifications")


@dataclass(frozen=True)
class Thresholds:
    stale: timedelta = DEFAULT_STALE
    headroom: float = DEFAULT_HEADROOM
    pending: timedelta = DEFAULT_PENDING
    quarantine: int = DEFAULT_QUARANTINE
    #: The kinds given with --fail-on: crossing one of them fails the command.
    failing: frozenset[str] = frozenset()


def parse_fail_on(entries: Sequence[str]) -> Thresholds:
    """`stale=6h`, `headroom=15`, `pending=30m`, `quarantine=0` (repeatable, or comma-separated) -> Thresholds."""
    values: dict[str, Any] = {}
    for entry in (part.strip() for text in entries for part in text.split(",") if part.strip()):
        kind, _, value = entry.partition("=")
        if kind not in FAIL_ON_KINDS or not value:
            raise ConfigError(
                f"--fail-on {entry!r}: expected KIND=VALUE with KIND one of {', '.join(FAIL_ON_KINDS)}, "
                "e.g. stale=6h, headroom=15 (percent), pending=30m, quarantine=0 (records in 24 hours)"
            )
        values[kind] = _threshold(kind, entry, value)
    return Thresholds(**values, failing=frozenset(values))


def _percent(entry: str, value: str) -> float:
    try:
        number = float(value.rstrip("%"))
    except ValueError:
        raise ConfigError(f"--fail-on {entry!r}: headroom takes a percentage, e.g. headroom=15") from None
    if not 0 <= number <= 100:
        raise ConfigError(f"--fail-on {entry!r}: headroom takes a percentage from 0 to 100")
    return number


def _threshold(kind: str, entry: str, value: str) -> float | int | timedelta:
    if kind == "headroom":
        return _percent(entry, value)
    if kind == "quarantine":
        return _count(entry, value)
    return parse_duration(value)


def _count(entry: str, value: str) -> int:
    if not value.isdigit():
        raise ConfigError(f"--fail-on {entry!r}: quarantine takes a number of records, e.g. quarantine=0")
    return int(value)


@dataclass(frozen=True)
class UnreadVersion:
    table: str
    since: datetime | None


@dataclass
class FamilyStatus:
    family: str
    versions: int
    databases: int
    rows: int
    unread: list[UnreadVersion]
    #: The stored top view differs from the planned one for another reason than new versions (settings, a drop).
    view_outdated: bool
    headroom: dict[str, float] | None
    error: str | None
    views_changed: datetime | None
    newest_ingested: datetime | None
    freshness: timedelta | None
    quarantine: dict[str, tuple[int, int]]
    pending: list[PendingNotification]
    flags: list[str] = field(default_factory=list)
    crossed: list[str] = field(default_factory=list)
    #: BigQuery's on-demand floor of one query of the unified view, and what it would be with the idle versions
    #: folded (uniview.ops.billing); None where unknown or where consolidation would not cut it.
    query_floor: int | None = None
    consolidated_floor: int | None = None

    @property
    def quarantined_last_day(self) -> int:
        return sum(day for day, _ in self.quarantine.values())

    @property
    def quarantined_last_week(self) -> int:
        return sum(week for _, week in self.quarantine.values())

    @property
    def min_headroom(self) -> float | None:
        return min(self.headroom.values()) if self.headroom else None

    def as_json(self) -> dict[str, Any]:
        return {
            "family": self.family,
            "flags": self.flags,
            "crossed": self.crossed,
            "versions": self.versions,
            "source_databases": self.databases,
            "rows": self.rows,
            "unread_versions": [{"table": u.table, "since": _iso(u.since)} for u in self.unread],
            "view_outdated": self.view_outdated,
            "headroom_percent": self.headroom,
            "error": self.error,
            "views_changed": _iso(self.views_changed),
            "newest_ingested": _iso(self.newest_ingested),
            "freshness_seconds": None if self.freshness is None else round(self.freshness.total_seconds()),
            "quarantine": {reason: {"24h": day, "7d": week} for reason, (day, week) in self.quarantine.items()},
            "pending_notifications": [
                {"table": p.table, "version": p.version, "since": _iso(p.since)} for p in self.pending
            ],
            "query_floor_bytes": self.query_floor,
            "consolidated_query_floor_bytes": self.consolidated_floor,
        }


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat()


@dataclass(frozen=True)
class StatusInputs:
    """What uniview.ops.status.collect read: one value per read, whatever the number of families."""

    now: datetime
    plans: Sequence[FamilyPlan]
    failures: Mapping[str, tuple[list[str], str]]  # family -> (version tables, why it cannot be planned)
    stored_tops: Mapping[str, str | None]  # family -> the stored top view's fingerprint
    activity: Mapping[str, TableActivity]
    quarantine: Sequence[QuarantineCount]
    pending: Sequence[PendingNotification]
    view_times: Mapping[str, datetime]


def family_statuses(inputs: StatusInputs, options: GeneratorOptions, thresholds: Thresholds) -> list[FamilyStatus]:
    """Every family's status, flagged and ordered worst first."""
    statuses = [_from_plan(inputs, plan, options) for plan in inputs.plans]
    statuses += [
        _from_failure(inputs, family, versions, error) for family, (versions, error) in inputs.failures.items()
    ]
    for status in statuses:
        _flag(status, inputs.now, thresholds)
    return sorted(statuses, key=_worst_first)


def _from_plan(inputs: StatusInputs, plan: FamilyPlan, options: GeneratorOptions) -> FamilyStatus:
    unread, outdated = unread_versions(plan, inputs.stored_tops.get(plan.family), options)
    status = _base(inputs, plan.family, [v.table_name for v in plan.versions])
    status.unread = [UnreadVersion(v.table_name, _since(inputs, v)) for v in unread]
    status.view_outdated = outdated
    status.headroom = plan.footprint.headroom() if plan.footprint is not None else None
    status.views_changed = inputs.view_times.get(plan.top_view.name)
    views = family_views(plan)
    status.query_floor = query_floor(plan, plan.top_view.name, views)
    written = {v.table_name: _newest(inputs, v.table_name) for v in plan.versions}
    status.consolidated_floor = consolidated_floor(plan, views, written, inputs.now)
    return status


def _newest(inputs: StatusInputs, table: str) -> datetime | None:
    activity = inputs.activity.get(table)
    return None if activity is None else activity.newest_ingested


def _from_failure(inputs: StatusInputs, family: str, tables: list[str], error: str) -> FamilyStatus:
    status = _base(inputs, family, tables)
    status.error = error
    status.views_changed = inputs.view_times.get(f"{family}_unified")
    return status


def _base(inputs: StatusInputs, family: str, tables: list[str]) -> FamilyStatus:
    activity = [inputs.activity[table] for table in tables if table in inputs.activity]
    newest = max((a.newest_ingested for a in activity if a.newest_ingested), default=None)
    quarantine = {q.reason: (q.last_day, q.last_week) for q in inputs.quarantine if q.table == family}
    return FamilyStatus(
        family=family,
        versions=len(tables),
        databases=len(frozenset().union(*(a.databases for a in activity))),
        rows=sum(a.rows for a in activity),
        unread=[],
        view_outdated=False,
        headroom=None,
        error=None,
        views_changed=None,
        newest_ingested=newest,
        freshness=None if newest is None else inputs.now - newest,
        quarantine=quarantine,
        pending=[p for p in inputs.pending if p.table in (family, None)],
    )


def no_family_status(inputs: StatusInputs, thresholds: Thresholds) -> FamilyStatus | None:
    """The NO_FAMILY row: the quarantined lines that name no family (NULL or empty table_name), by reason,
    flagged and checked against `--fail-on quarantine` like a family; None when the week holds none."""
    quarantine: dict[str, tuple[int, int]] = {}
    for q in inputs.quarantine:  # NULL and empty table names are counted apart: add them up
        if not q.table:
            day, week = quarantine.get(q.reason, (0, 0))
            quarantine[q.reason] = (day + q.last_day, week + q.last_week)
    if not quarantine:
        return None
    status = FamilyStatus(
        family=NO_FAMILY,
        versions=0,
        databases=0,
        rows=0,
        unread=[],
        view_outdated=False,
        headroom=None,
        error=None,
        views_changed=None,
        newest_ingested=None,
        freshness=None,
        quarantine=quarantine,
        pending=[],
    )
    _flag(status, inputs.now, thresholds)
    return status


def _since(inputs: StatusInputs, version: TableVersion) -> datetime | None:
    activity = inputs.activity.get(version.table_name)
    return activity.first_ingested if activity else None


def unread_versions(
    plan: FamilyPlan, stored_top: str | None, options: GeneratorOptions
) -> tuple[list[TableVersion], bool]:
    """(the versions no stored view reads yet, whether the stored top view differs for another reason).

    The top view is named after nothing but its family, so its stored fingerprint is compared with the
    top view planned for the first k versions, k from all of them down: the versions after the k that
    match are new.  No stored view: every version is unread."""
    versions = list(plan.versions)
    if stored_top is None:
        return versions, False
    if stored_top == fingerprint(plan.top_view.body):
        return [], False
    lifted = replace(options, enforce_query_limits=False)
    for count in range(len(versions) - 1, max(0, len(versions) - 1 - MAX_UNREAD_PROBES), -1):
        try:
            earlier = plan_family(plan.source_dataset, plan.target_dataset, versions[:count], lifted)
        except (PlanError, TypeParseError):
            continue
        if fingerprint(earlier.top_view.body) == stored_top:
            return versions[count:], False
    return [], True


def _flag(status: FamilyStatus, now: datetime, thresholds: Thresholds) -> None:
    checks: list[tuple[str, str | None, bool]] = []  # (flag, --fail-on kind, raised)
    lowest = status.min_headroom
    checks.append(("unplannable", "headroom", status.error is not None))
    checks.append(("over limit", "headroom", lowest is not None and lowest < 0))
    checks.append(("near limit", "headroom", lowest is not None and 0 <= lowest < thresholds.headroom))
    checks.append(("stale", "stale", status.freshness is not None and status.freshness > thresholds.stale))
    waiting = [u.since for u in status.unread] + [p.since for p in status.pending]
    old = any(since is not None and now - since > thresholds.pending for since in waiting)  # None: no row yet
    checks.append(("pending", "pending", bool(status.unread or status.view_outdated)))
    checks.append(("notifications", "pending", bool(status.pending)))
    checks.append(("quarantine", "quarantine", status.quarantined_last_day > thresholds.quarantine))
    for flag, kind, raised in checks:
        if not raised:
            continue
        status.flags.append(flag)
        crossing = kind in thresholds.failing and (kind != "pending" or old or status.view_outdated)
        if crossing and kind is not None and kind not in status.crossed:
            status.crossed.append(kind)
    status.flags.sort(key=SEVERITY.index)


def _worst_first(status: FamilyStatus) -> tuple:
    severity = min((SEVERITY.index(flag) for flag in status.flags), default=len(SEVERITY))
    headroom = status.min_headroom if status.min_headroom is not None else -1e9 if status.error else 1e9
    freshness = -status.freshness.total_seconds() if status.freshness is not None else 0.0
    return (severity, headroom, freshness, status.family)


def summary(statuses: Sequence[FamilyStatus], no_family: FamilyStatus | None = None) -> dict[str, int]:
    """Families per flag (a family counts once per flag), healthy ones, the totals, the quarantined lines
    of no family (when there are any) and the rows crossing --fail-on (the families and the NO_FAMILY row)."""
    counts = {flag: sum(flag in s.flags for s in statuses) for flag in SEVERITY}
    without_family = {}
    if no_family is not None:
        without_family = {
            f"{NO_FAMILY} quarantined 24h": no_family.quarantined_last_day,
            f"{NO_FAMILY} quarantined 7d": no_family.quarantined_last_week,
        }
    return {
        "families": len(statuses),
        "healthy": sum(not s.flags for s in statuses),
        **{flag: count for flag, count in counts.items() if count},
        "versions": sum(s.versions for s in statuses),
        **without_family,
        "crossing --fail-on": sum(bool(s.crossed) for s in [*statuses, *([no_family] if no_family else [])]),
    }
