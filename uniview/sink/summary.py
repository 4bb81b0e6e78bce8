"""What `uniview sink` prints when it ends: the totals line, rows per table, quarantine per reason,
notifications.  The first line is stable for scripts: `read=N written=W quarantined=Q skipped=S`."""

from __future__ import annotations

import json
from typing import Mapping

import click
from rich.console import Console
from rich.table import Table

from uniview.sink.job import RunResult


def totals_line(result: RunResult) -> str:
    counts = result.counts
    return (f"read={counts.read} written={counts.total_written} quarantined={counts.total_quarantined}"
            f" skipped={counts.total_skipped}")


def print_summary(result: RunResult) -> None:
    click.echo(totals_line(result) + f" batches={result.batches} replayed={result.replayed}")
    console = Console(width=120)
    for title, heading, counts in (("written", "version table", result.counts.written),
                                   ("quarantined", "reason", result.counts.quarantined),
                                   ("skipped", "kind", result.counts.skipped)):
        if counts:
            console.print(_counts_table(title, heading, counts))
    for notification in result.sent:
        click.echo(f"notified: {json.dumps(notification.body())}")
    for notification, error in sorted(result.failed.items()):
        click.echo(f"notification pending (retried on the next batch or run): {json.dumps(notification.body())}: {error}",
                   err=True)
    for warning in result.warnings:
        click.echo(f"warning: {warning}", err=True)


def _counts_table(title: str, heading: str, counts: Mapping[str, int]) -> Table:
    """Rows per key, sorted by key."""
    table = Table(title=title, title_justify="left")
    table.add_column(heading)
    table.add_column("rows", justify="right")
    for key, rows in sorted(counts.items()):
        table.add_row(key, str(rows))
    return table
