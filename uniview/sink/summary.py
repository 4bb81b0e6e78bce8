"""What `uniview sink` prints when it ends: the totals line, rows per table, quarantine per reason,
notifications.  The first line is stable for scripts: `read=N written=W quarantined=Q`."""

from __future__ import annotations

import json

import click
from rich.console import Console
from rich.table import Table

from uniview.sink.job import RunResult


def totals_line(result: RunResult) -> str:
    counts = result.counts
    return f"read={counts.read} written={counts.total_written} quarantined={counts.total_quarantined}"


def print_summary(result: RunResult) -> None:
    click.echo(totals_line(result) + f" batches={result.batches} replayed={result.replayed}")
    console = Console(width=120)
    if result.counts.written:
        table = Table(title="written", title_justify="left")
        table.add_column("version table")
        table.add_column("rows", justify="right")
        for name, rows in sorted(result.counts.written.items()):
            table.add_row(name, str(rows))
        console.print(table)
    if result.counts.quarantined:
        table = Table(title="quarantined", title_justify="left")
        table.add_column("reason")
        table.add_column("rows", justify="right")
        for reason, rows in sorted(result.counts.quarantined.items()):
            table.add_row(reason, str(rows))
        console.print(table)
    for notification in result.sent:
        click.echo(f"notified: {json.dumps(notification.body())}")
    for notification, error in sorted(result.failed.items()):
        click.echo(f"notification pending (retried on the next batch or run): {json.dumps(notification.body())}: {error}",
                   err=True)
    for warning in result.warnings:
        click.echo(f"warning: {warning}", err=True)
