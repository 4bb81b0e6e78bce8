"""What `uniview status` prints: the worst families first (at most --limit of them), the row of the
quarantined lines that name no family (always shown), then a summary, so a dataset of thousands of
families still fits a terminal; `--json` prints every family."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from rich.console import Console
from rich.table import Table

from uniview.core.billing import size_text
from uniview.ops.billing import FOLDABLE_IDLE_FOR, FOLDED_TO_VERSIONS
from uniview.ops.status.report import NO_FAMILY, FamilyStatus, Thresholds, summary

#: Families the terminal shows before counting the rest in the summary.
DEFAULT_SHOWN = 50
_STYLES = {
    "over limit": "bold red",
    "unplannable": "bold red",
    "near limit": "yellow",
    "stale": "yellow",
    "pending": "cyan",
    "notifications": "cyan",
    "quarantine": "magenta",
}


def status_document(
    statuses: Sequence[FamilyStatus], thresholds: Thresholds, now: datetime, no_family: FamilyStatus | None = None
) -> dict[str, Any]:
    """The `--json` document; `no_family` is the row of the quarantined lines that name no family (null when
    the last 7 days hold none)."""
    return {
        "now": now.isoformat(),
        "thresholds": {
            "stale_seconds": round(thresholds.stale.total_seconds()),
            "headroom_percent": thresholds.headroom,
            "pending_seconds": round(thresholds.pending.total_seconds()),
            "quarantine_records": thresholds.quarantine,
            "fail_on": sorted(thresholds.failing),
        },
        "summary": summary(statuses, no_family),
        "families": [status.as_json() for status in statuses],
        "no_family": None if no_family is None else _no_family_json(no_family),
    }


def _no_family_json(status: FamilyStatus) -> dict[str, Any]:
    family = status.as_json()
    return {"name": NO_FAMILY, **{key: family[key] for key in ("flags", "crossed", "quarantine")}}


def print_status(
    statuses: Sequence[FamilyStatus], now: datetime, shown: int = DEFAULT_SHOWN, no_family: FamilyStatus | None = None
) -> None:
    console = Console(width=max(Console().width, 140))
    table = Table(title="uniview status (worst first)", title_justify="left")
    headings = ("family", "state", "versions", "dbs", "unread", "headroom", "fresh", "views changed", "quarantine")
    for heading in (*headings, "query floor"):
        table.add_column(heading, overflow="fold")
    for status in statuses[:shown]:
        table.add_row(
            status.family,
            _state(status),
            str(status.versions),
            str(status.databases),
            _unread(status, now),
            _headroom(status),
            age(status.freshness),
            "-" if status.views_changed is None else age(now - status.views_changed) + " ago",
            _quarantine(status),
            "-" if status.query_floor is None else size_text(status.query_floor),
        )
    if no_family is not None:
        table.add_section()
        table.add_row(f"[dim]{NO_FAMILY}[/dim]", _state(no_family), *["-"] * 6, _quarantine(no_family), "-")
    console.print(table)
    cut = consolidation_cuts(statuses)
    if cut:
        fold = f"--idle-for {FOLDABLE_IDLE_FOR.days}d --max-versions {FOLDED_TO_VERSIONS}"
        console.print(f"uniview consolidate {fold} would cut the query floor of: {cut}")
    if len(statuses) > shown:
        console.print(f"... and {len(statuses) - shown:,} more families (--limit, or --json for all)")
    totals = Table(title="summary", title_justify="left", show_header=False)
    for key, value in summary(statuses, no_family).items():
        totals.add_row(key, f"{value:,}")
    console.print(totals)


def consolidation_cuts(statuses: Sequence[FamilyStatus]) -> str:
    """The families whose query floor folding their idle versions would cut, each `name (before -> after)`."""
    return ", ".join(
        f"{s.family} ({size_text(s.query_floor)} -> {size_text(s.consolidated_floor)})"
        for s in statuses
        if s.query_floor is not None and s.consolidated_floor is not None and s.consolidated_floor < s.query_floor
    )


def _state(status: FamilyStatus) -> str:
    if not status.flags:
        return "[green]healthy[/green]"
    return ", ".join(f"[{_STYLES[flag]}]{flag}[/{_STYLES[flag]}]" for flag in status.flags)


def _unread(status: FamilyStatus, now: datetime) -> str:
    parts = []
    if status.unread:
        oldest = min((u.since for u in status.unread if u.since), default=None)
        parts.append(f"{len(status.unread)}" + ("" if oldest is None else f" ({age(now - oldest)})"))
    if status.view_outdated:
        parts.append("view outdated")
    if status.pending:
        parts.append(f"{len(status.pending)} notif.")
    return ", ".join(parts) or "-"


def _headroom(status: FamilyStatus) -> str:
    if status.error is not None:
        return f"[red]{status.error}[/red]"
    if not status.headroom:
        return "-"
    name = min(status.headroom, key=status.headroom.__getitem__)
    return f"{status.headroom[name]:.1f}% ({name})"


def _quarantine(status: FamilyStatus) -> str:
    if not status.quarantine:
        return "-"
    top = max(status.quarantine, key=lambda reason: status.quarantine[reason][1])
    return f"{status.quarantined_last_day:,}/24h {status.quarantined_last_week:,}/7d ({top})"


def age(span: timedelta | None) -> str:
    """A short duration: 45s, 12m, 3h, 2d."""
    if span is None:
        return "-"
    seconds = max(0, int(span.total_seconds()))
    for unit, size in (("d", 86_400), ("h", 3_600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"
