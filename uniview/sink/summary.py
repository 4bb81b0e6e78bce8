"""What `uniview sink` prints when it ends.  The first line is stable for scripts:
`read=N written=W quarantined=Q skipped=S batches=B replayed=R`.  Then the busiest version tables,
quarantine reasons and skipped kinds (at most SHOWN rows each, the rest counted in one row) and the
notifications, so a run that fed ten thousand tables still fits a terminal; `--json` prints every
table instead, as one JSON document."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

import click
from rich.console import Console
from rich.table import Table

from uniview.sink.job import RunResult

#: Rows per table (and notification lines) the terminal summary shows before counting the rest.
SHOWN = 10


def totals_line(result: RunResult) -> str:
    counts = result.counts
    return (
        f"read={counts.read} written={counts.total_written} quarantined={counts.total_quarantined}"
        f" skipped={counts.total_skipped}"
    )


def summary_document(result: RunResult) -> dict:
    """Everything the run did, every table listed: what `--json` prints."""
    counts = result.counts
    return {
        "read": counts.read,
        "written": counts.total_written,
        "quarantined": counts.total_quarantined,
        "skipped": counts.total_skipped,
        "batches": result.batches,
        "replayed": result.replayed,
        "written_by_table": dict(sorted(counts.written.items())),
        "quarantined_by_reason": dict(sorted(counts.quarantined.items())),
        "skipped_by_kind": dict(sorted(counts.skipped.items())),
        "notified": [notification.body() for notification in result.sent],
        "pending": [{**notification.body(), "error": error} for notification, error in sorted(result.failed.items())],
        "warnings": list(result.warnings),
        "stopped_by": result.stopped_by,
    }


def print_summary(result: RunResult, as_json: bool = False) -> None:
    if as_json:
        click.echo(json.dumps(summary_document(result), indent=2, ensure_ascii=False))
        return
    click.echo(totals_line(result) + f" batches={result.batches} replayed={result.replayed}")
    console = Console(width=120)
    for title, heading, counts in (
        ("written", "version table", result.counts.written),
        ("quarantined", "reason", result.counts.quarantined),
        ("skipped", "kind", result.counts.skipped),
    ):
        if counts:
            console.print(_counts_table(title, heading, counts))
    for line in _at_most_shown([f"notified: {json.dumps(n.body())}" for n in result.sent], "notified"):
        click.echo(line)
    failed = [
        f"notification pending (retried on the next batch or run): {json.dumps(n.body())}: {error}"
        for n, error in sorted(result.failed.items())
    ]
    for line in _at_most_shown(failed, "notifications pending"):
        click.echo(line, err=True)
    for warning in result.warnings:
        click.echo(f"warning: {warning}", err=True)
    if result.stopped_by:
        click.echo(f"stopped by {result.stopped_by} after the batch in progress; the next run goes on from there")


def _at_most_shown(lines: Sequence[str], what: str) -> list[str]:
    if len(lines) <= SHOWN:
        return list(lines)
    return [*lines[:SHOWN], f"... and {len(lines) - SHOWN} more {what} (--json lists them all)"]


def _counts_table(title: str, heading: str, counts: Mapping[str, int]) -> Table:
    """The SHOWN largest counts (ties by name), then one row counting the rest."""
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    table = Table(
        title=title if len(ranked) <= SHOWN else f"{title}: the {SHOWN} largest of {len(ranked):,}",
        title_justify="left",
    )
    table.add_column(heading)
    table.add_column("rows", justify="right")
    for key, rows in ranked[:SHOWN]:
        table.add_row(key, f"{rows:,}")
    rest = ranked[SHOWN:]
    if rest:
        table.add_row(f"... {len(rest):,} more (--json lists them all)", f"{sum(rows for _, rows in rest):,}")
    return table
