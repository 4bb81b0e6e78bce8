"""What `uniview explain` prints: each column's types across the versions (runs folded), its unified type
and rule, then the versions with their source databases."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from uniview.ops.explain.model import ColumnHistory, Explanation


def print_explanation(explanation: Explanation) -> None:
    console = Console(width=max(Console().width, 160))
    columns = Table(title=f"uniview explain {explanation.family} (policy {explanation.policy})", title_justify="left")
    for heading in ("column", "type by version", "unified", "rule"):
        columns.add_column(heading, overflow="fold")
    for column in explanation.columns:
        name = f"[red]{column.name} ≠[/red]" if column.conflict else column.name
        columns.add_row(name, runs_text(explanation, column), column.unified, column.rule)
    console.print(columns)
    versions = Table(title="versions by creation", title_justify="left")
    for heading in ("version", "table", "source databases", "first row"):
        versions.add_column(heading, overflow="fold")
    for version in explanation.versions:
        first = "-" if version.first_ingested is None else version.first_ingested.isoformat(timespec="seconds")
        versions.add_row(version.version, version.table, ", ".join(version.databases) or "-", first)
    console.print(versions)


def runs_text(explanation: Explanation, column: ColumnHistory) -> str:
    """`a1..c3: INT64; d4: STRING; e5: -` (the versions' ids, runs folded)."""
    parts = []
    for run in column.runs:
        first, last = explanation.versions[run.first].version, explanation.versions[run.last].version
        span = first if run.first == run.last else f"{first}..{last}"
        what = run.type or "-"
        if run.renamed_from:
            what += f" (stored as {run.renamed_from})"
        parts.append(f"{span}: {what}")
    return "; ".join(parts)
