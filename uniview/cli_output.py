"""What `uniview plan` and `uniview refresh` print: SQL on stdout, a status table on stderr."""

from __future__ import annotations

import click
from rich.console import Console
from rich.table import Table

from uniview.plan import FamilyPlan
from uniview.refresh import FamilyOutcome, changes_for

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
