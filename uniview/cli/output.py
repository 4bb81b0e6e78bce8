"""What `uniview plan` and `uniview refresh` print: SQL on stdout, a status table on stderr."""

from __future__ import annotations

import click
from rich.console import Console
from rich.table import Table

from uniview.ops.refresh import FamilyOutcome, changes_for
from uniview.planning.plan import FamilyPlan

_STATUS_CONSOLE = Console(stderr=True)


def print_plan(plans: list[FamilyPlan], stored: dict[str, dict[str, str]] | None) -> None:
    """Every statement on stdout (dependencies first, `;`-separated); what would change on stderr."""
    statements = [view.statement for plan in plans for view in plan.views]
    click.echo(";\n\n".join(statements) + ";")
    if stored is None:
        return
    table = Table(title="uniview plan", title_justify="left")
    for heading in ("view", "versions", "action"):
        table.add_column(heading, overflow="fold")
    for plan in plans:
        changes = {(c.dataset, c.name): c for c in changes_for(plan, stored.get(plan.family, {}))}
        for view in plan.views:
            action = "create or replace" if (view.dataset, view.name) in changes else "unchanged"
            table.add_row(view.qualified_name, str(len(plan.versions)), action)
        for change in changes.values():
            if change.is_drop:
                table.add_row(f"{change.dataset}.{change.name}", "", "drop (no longer needed)")
    _STATUS_CONSOLE.print(table)


def print_outcomes(outcomes: list[FamilyOutcome]) -> None:
    """One row per family: its versions and what the refresh changed."""
    table = Table(title="uniview refresh", title_justify="left")
    for heading in ("family", "versions", "replaced", "dropped", "jobs"):
        table.add_column(heading, overflow="fold")
    for outcome in outcomes:
        table.add_row(
            outcome.family,
            str(len(outcome.versions)),
            "\n".join(outcome.replaced) or "unchanged",
            "\n".join(outcome.dropped) or "-",
            str(len(outcome.jobs)),
        )
    Console().print(table)


def print_consolidation(results: list, applied: bool) -> None:
    """One row per family: versions now, what is folded into which table, rows and bytes, the outcome."""
    table = Table(
        title="uniview consolidate" + ("" if applied else " (plan: run with --apply to move)"), title_justify="left"
    )
    for heading in ("family", "versions", "fold", "into", "rows", "bytes", "after", "done"):
        table.add_column(heading, overflow="fold")
    for result in results:
        plan = result.plan
        if plan is None:
            done = ", ".join(f"dropped {name}" for name in result.dropped) or "nothing to fold"
            table.add_row(result.family, str(result.versions_before), "-", "-", "-", "-", "-", done)
            continue
        done = f"moved {result.moved_rows:,} rows" if result.applied else ("resumable" if result.resumed else "-")
        table.add_row(
            result.family,
            str(result.versions_before),
            str(len(plan.versions)),
            plan.consolidated_table,
            f"{result.rows:,}",
            "-" if result.bytes is None else f"{result.bytes:,}",
            str(plan.remaining + 1),
            done,
        )
    Console().print(table)


def consolidation_report(results: list) -> list[dict]:
    """The consolidation results as JSON-ready objects: what was planned, moved and dropped per family."""
    report = []
    for result in results:
        plan = result.plan
        report.append(
            {
                "family": result.family,
                "versions": result.versions_before,
                "consolidated_table": plan.consolidated_table if plan else None,
                "fold": [version.table_name for version in plan.versions] if plan else [],
                "rows": result.rows,
                "bytes": result.bytes,
                "resumed": result.resumed,
                "applied": result.applied,
                "moved_rows": result.moved_rows,
                "retired": result.retired,
                "dropped": result.dropped,
                "error": str(result.error) if result.error else None,
            }
        )
    return report
