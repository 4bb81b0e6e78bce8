"""The `uniview` command: plan | refresh | status | explain | consolidate | migrate-landing | sink | demo.

Every deliberate failure (bad name, unknown table, unreachable warehouse, a family over
BigQuery's limits) is one line on stderr and exit code 1; nothing is changed half-way.
"""

from __future__ import annotations

import functools
import importlib
import json
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import click

from uniview.local.processes import keep_grpc_fork_handlers_off

keep_grpc_fork_handlers_off()  # before anything imports gRPC

from uniview.core.schema import collector_paused  # noqa: E402

with collector_paused():  # importing builds modules and classes that live as long as the process: nothing to collect
    from uniview.cli.options import generator_options, make_generator_options
    from uniview.core.errors import ConfigError, UniviewError
    from uniview.core.resolve import POLICIES
    from uniview.current.table import BatchWindow, CurrentTablePlan
    from uniview.ops.refresh import FamilyFailure, RefreshRequest
    from uniview.planning.consolidation import DEFAULT_MAX_VERSIONS
    from uniview.planning.plan import DEFAULT_MAX_VIEW_CHARS, DEFAULT_POLICY

_LAZY_COMMANDS = {
    "sink": ("uniview.cli.sink", "sink_command"),
    "demo": ("uniview.demo.command", "demo_command"),
}


class _LazyGroup(click.Group):
    """Loads the heavy subcommands (Spark, the demo) only when they are invoked."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted([*super().list_commands(ctx), *_LAZY_COMMANDS])

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in _LAZY_COMMANDS:
            return super().get_command(ctx, name)
        module_name, attribute = _LAZY_COMMANDS[name]
        try:
            return getattr(importlib.import_module(module_name), attribute)
        except ImportError as error:
            return _unavailable_command(name, error)


def _unavailable_command(name: str, error: ImportError) -> click.Command:
    """A stand-in that explains which extra to install instead of a traceback."""

    def explain() -> None:
        click.echo(
            f"uniview: error: `uniview {name}` needs a missing package ({error}); "
            f"install it with: pip install 'uniview[demo]'",
            err=True,
        )
        sys.exit(1)

    return click.Command(
        name,
        callback=explain,
        help=f"(unavailable: {error})",
        context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
    )


def fail_cleanly(command: Callable) -> Callable:
    """Turn a UniviewError into one line on stderr and exit code 1."""

    @functools.wraps(command)
    def wrapper(*args: object, **kwargs: object) -> object:
        try:
            return command(*args, **kwargs)
        except UniviewError as error:
            click.echo(f"uniview: error: {error}", err=True)
            sys.exit(1)

    return wrapper


def view_options(command: Callable) -> Callable:
    """The options `plan` and `refresh` share."""
    command = generator_options(command)
    options = [
        click.option(
            "--warehouse",
            required=True,
            envvar="UNIVIEW_WAREHOUSE",
            help="duckdb:///file.duckdb (relative), duckdb:////abs/file.duckdb, or bigquery://PROJECT.",
        ),
        click.option("--dataset", required=True, help="Source dataset holding the <table>_v_<version> tables."),
        click.option("--table", "tables", multiple=True, help="Family to refresh (repeatable)."),
        click.option("--all", "all_families", is_flag=True, help="Every family in the dataset."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def build_request(
    dataset: str,
    tables: tuple[str, ...],
    all_families: bool,
    target_dataset: str | None,
    policy: str,
    max_view_chars: int,
    datetime_timezone: str | None,
    source_column: str | None,
    current: bool | str = "off",
    renames: str | None = None,
) -> RefreshRequest:
    if bool(tables) == all_families:
        raise click.UsageError("give either --table NAME (repeatable) or --all")
    options = make_generator_options(policy, max_view_chars, datetime_timezone, source_column, current, renames)
    return RefreshRequest(dataset=dataset, tables=tables or None, target_dataset=target_dataset, options=options)


@click.group(cls=_LazyGroup)
@click.version_option(package_name="uniview")
def main() -> None:
    """uniview: one query-safe UNION ALL view over every schema version of a CDC table."""


@main.command()
@view_options
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help='Print {"views": [{"name", "sql"}]}, dependencies first, and each family\'s BigQuery billing floors.',
)
@fail_cleanly
def plan(warehouse: str, as_json: bool, **request_options: Any) -> None:
    """Print the SQL `refresh` would apply, without applying it."""
    from uniview.ops.billing import family_floors
    from uniview.ops.refresh import plan_families, stored_fingerprints
    from uniview.warehouse import open_warehouse

    request = build_request(**request_options)
    failures: list[FamilyFailure] = []
    with open_warehouse(warehouse) as connection:
        plans = plan_families(connection, request, failures)
        stored = None if as_json or not plans else stored_fingerprints(connection, plans)
        tables = [(p.current_table, connection.current_table_action(p.current_table)) for p in plans if p.current_table]
    if as_json:
        views = [{"name": view.qualified_name, "sql": view.statement} for p in plans for view in p.all_views]
        document: dict[str, Any] = {"views": views}
        if tables:
            document["current_tables"] = [current_table_json(table, action) for table, action in tables]
        document["billing"] = [{"family": p.family, **family_floors(p).as_json()} for p in plans]
        click.echo(json.dumps(document, indent=2, ensure_ascii=False))
    elif plans:
        from uniview.cli.output import print_plan  # rich: only for the table, not for --json

        print_plan(plans, stored)
    for table, action in tables:
        click.echo(f"uniview: {table.dataset}.{table.table_name} (table): {CURRENT_TABLE_ACTIONS[action]}", err=True)
    notes = [plan.current_note for plan in plans if plan.current_note]
    for note in notes:
        click.echo(f"uniview: note: {note}", err=True)
    exit_on_failures(
        [(failure.family, failure.error) for failure in failures]
        + [(plan.family, plan.current_error) for plan in plans if plan.current_error]
    )


#: A maintenance's window as `uniview plan --json` shows it: the refresh reads the watermark (and the sink's
#: ledger, for late batches) when it runs, so the planned statements name it as a parameter.
PLANNED_WINDOW = BatchWindow(datetime(1970, 1, 1, tzinfo=UTC))
WINDOW_NOTE = (
    "@watermark is the newest _cdc_ingested_at the table has applied, read when the refresh runs; "
    "the ingestion ranges of the sink's batches not applied yet are added to the condition then"
)

#: What `uniview plan` says a refresh would do to a `<table>_current` table.
CURRENT_TABLE_ACTIONS = {
    "create": "would create it and its state from every change",
    "rebuild": "would rebuild it and its state from every change (its columns or key changed, or --rebuild-current)",
    "re-present": "would apply the changes since its watermark, then write it again from its key state "
    "(the versions changed, its columns did not)",
    "maintain": "would apply the changes since its watermark",
}


def current_table_json(table: CurrentTablePlan, action: str) -> dict[str, Any]:
    """A current table in `uniview plan --json`: its name, the action and its statements (BigQuery SQL)."""
    window = None if action in ("create", "rebuild") else PLANNED_WINDOW.condition(lambda _: "@watermark")
    statements = table.statements(action, window)  # type: ignore[arg-type]
    return {
        "name": f"{table.dataset}.{table.table_name}",
        "action": action,
        "window": None if window is None else WINDOW_NOTE,
        "floor": table.floor_select,
        "statements": [statement.sql for statement in statements if statement.on_bigquery],
    }


@main.command()
@view_options
@click.option(
    "--rebuild-current",
    is_flag=True,
    help="With --current table: build each <table>_current table and its state again from every change.",
)
@fail_cleanly
def refresh(warehouse: str, rebuild_current: bool, **request_options: Any) -> None:
    """Create or replace the unified views that differ from what is stored."""
    from dataclasses import replace

    from uniview.cli.output import print_outcomes
    from uniview.ops.refresh import refresh as run_refresh
    from uniview.warehouse import open_warehouse

    request = build_request(**request_options)
    if rebuild_current and not request.options.current_table:
        raise click.UsageError("--rebuild-current rebuilds <table>_current tables: give --current table")
    request = replace(request, rebuild_current=rebuild_current)
    with open_warehouse(warehouse) as connection:
        outcomes = run_refresh(connection, request)
    print_outcomes([outcome for outcome in outcomes if not outcome.failed or outcome.changed])
    for outcome in outcomes:
        if outcome.current_table is not None:
            done = outcome.current_table
            rows = "" if done.rows is None else f", {done.rows:,} row(s)"
            click.echo(
                f"uniview: {outcome.family}_current (table): {done.action}, {done.changes_read:,} change(s) read{rows}",
                err=True,
            )
    for outcome in outcomes:
        if outcome.note:
            click.echo(f"uniview: note: {outcome.note}", err=True)
    exit_on_failures([(outcome.family, outcome.error) for outcome in outcomes if outcome.error is not None])


@main.command()
@view_options
@click.option("--json", "as_json", is_flag=True, help="Print every family as JSON, worst first, with a summary.")
@click.option(
    "--fail-on",
    "fail_on",
    multiple=True,
    metavar="KIND=VALUE",
    help="Exit with code 3 when a family crosses it: stale=DURATION (newest _cdc_ingested_at older than that), "
    "headroom=PERCENT (less free to a BigQuery limit, or over one), pending=DURATION (a version no view reads, "
    "or a notification not delivered, for longer), quarantine=COUNT (more records quarantined in the last 24 hours, "
    "for a family or for the lines that name none: the (no family) row). Repeatable or comma-separated, "
    "e.g. stale=6h,headroom=15.",
)
@click.option("--limit", "shown", type=int, default=50, show_default=True, help="Families shown in the terminal.")
@click.option(
    "--pending-file",
    default=None,
    metavar="FILE",
    help="BigQuery: a local copy of the sink's uniview_pending_notifications.json (under its checkpoint "
    "directory); DuckDB keeps them in the warehouse file.",
)
@fail_cleanly
def status(
    warehouse: str, as_json: bool, fail_on: tuple[str, ...], shown: int, pending_file: str | None, **options: Any
) -> None:
    """Show each family's versions, unread version tables, headroom to BigQuery's limits, freshness,
    quarantine and pending notifications, worst first (docs/operations-runbook.md)."""
    from uniview.ops.status.collect import collect
    from uniview.ops.status.output import print_status, status_document
    from uniview.ops.status.report import THRESHOLD_EXIT_CODE, family_statuses, no_family_status, parse_fail_on
    from uniview.warehouse import open_warehouse

    thresholds = parse_fail_on(fail_on)
    request = build_request(**options)
    with open_warehouse(warehouse) as connection:
        inputs = collect(connection, request, pending_file)
    statuses = family_statuses(inputs, request.options, thresholds)
    no_family = no_family_status(inputs, thresholds)
    if as_json:
        document = status_document(statuses, thresholds, inputs.now, no_family)
        click.echo(json.dumps(document, indent=2, ensure_ascii=False))
    else:
        print_status(statuses, inputs.now, shown, no_family)
    crossing = [s for s in [*statuses, *([no_family] if no_family else [])] if s.crossed]
    for family in crossing:
        click.echo(f"uniview: {family.family}: crosses --fail-on {', '.join(family.crossed)}", err=True)
    if crossing:
        sys.exit(THRESHOLD_EXIT_CODE)


@main.command()
@click.option(
    "--warehouse", required=True, envvar="UNIVIEW_WAREHOUSE", help="duckdb:///file.duckdb or bigquery://PROJECT."
)
@click.option("--dataset", required=True, help="Source dataset holding the <table>_v_<version> tables.")
@click.option("--table", required=True, help="The family to explain.")
@click.option(
    "--policy",
    type=click.Choice(list(POLICIES)),
    default=DEFAULT_POLICY,
    show_default=True,
    help="The policy the views are generated with (as for refresh).",
)
@click.option("--renames", default=None, metavar="FILE", help="The declared renames the views are generated with.")
@click.option("--json", "as_json", is_flag=True, help="Print the history as JSON.")
@click.option(
    "--html",
    "html_file",
    default=None,
    metavar="FILE",
    help="Also write one self-contained page (no network): versions across, columns down, cells coloured by "
    "type, conflicts and renames marked.",
)
@fail_cleanly
def explain(
    warehouse: str, dataset: str, table: str, policy: str, renames: str | None, as_json: bool, html_file: str | None
) -> None:
    """Show one family's schema history: each column's type in each version, the unified type and the rule
    that chose it, and the versions by creation with their source databases."""
    from uniview.core.identifiers import validate_dataset, validate_table
    from uniview.ops.explain.html import render_html
    from uniview.ops.explain.output import print_explanation
    from uniview.ops.status.collect import collect_explanation
    from uniview.warehouse import open_warehouse

    validate_dataset(dataset)
    validate_table(table)
    options = make_generator_options(policy, DEFAULT_MAX_VIEW_CHARS, None, None, renames=renames)
    with open_warehouse(warehouse) as connection:
        explanation = collect_explanation(connection, dataset, table, options)
    if html_file:
        write_text(html_file, render_html(explanation))
    if as_json:
        click.echo(json.dumps(explanation.as_json(), indent=2, ensure_ascii=False))
    else:
        print_explanation(explanation)


def write_text(path: str, text: str) -> None:
    try:
        with open(path, "w", encoding="utf-8") as file:
            file.write(text)
    except OSError as error:
        raise ConfigError(f"cannot write {path}: {error.strerror or error}") from None


@main.command("migrate-landing")
@click.option(
    "--warehouse", required=True, envvar="UNIVIEW_WAREHOUSE", help="duckdb:///file.duckdb or bigquery://PROJECT."
)
@click.option("--dataset", required=True, help="Dataset holding the <table>_v_<version> tables.")
@click.option(
    "--apply", "apply_changes", is_flag=True, help="Add the columns; without it, only print what would be added."
)
@click.option(
    "--partition",
    is_flag=True,
    help="BigQuery: instead, rewrite the version tables and quarantine created unpartitioned into the partitioned, "
    "clustered layout, under the same names (stop the sink first).",
)
@click.option(
    "--partition-granularity",
    type=click.Choice(["HOUR", "DAY", "MONTH", "YEAR"], case_sensitive=False),
    default="DAY",
    show_default=True,
    help="With --partition: the version tables' partitioning by _cdc_ingested_at (as the sink's option).",
)
@fail_cleanly
def migrate_landing(
    warehouse: str, dataset: str, apply_changes: bool, partition: bool, partition_granularity: str
) -> None:
    """Append the CDC columns (_cdc_database, _cdc_sequence) that version tables landed by an older uniview lack;
    with --partition, rewrite unpartitioned tables into the partitioned layout."""
    from uniview.ops.migrate_landing import plan_migration
    from uniview.warehouse import open_warehouse

    with open_warehouse(warehouse) as connection:
        if partition:
            from uniview.warehouse.bigquery import BigQueryWarehouse
            from uniview.warehouse.bigquery_relayout import migrate_partitioning

            if not isinstance(connection, BigQueryWarehouse):
                raise ConfigError("--partition is for a BigQuery --warehouse: DuckDB tables have no partitions")
            migrate_partitioning(connection, dataset, partition_granularity.upper(), apply_changes, click.echo)
            return
        additions = plan_migration(connection.read_columns(dataset))
        for table, columns in additions.items():
            click.echo(f"{dataset}.{table}: add {', '.join(f'{name} {bq_type}' for name, bq_type in columns)}")
        if not additions:
            click.echo(f"every version table in {dataset} has today's landing layout")
        elif apply_changes:
            connection.add_columns(dataset, additions)
            click.echo(f"added the columns to {len(additions)} table(s); run `uniview refresh` to update the views")
        else:
            click.echo(f"{len(additions)} table(s) to migrate; run again with --apply to add the columns")


@main.command()
@click.option(
    "--warehouse", required=True, envvar="UNIVIEW_WAREHOUSE", help="bigquery://PROJECT or duckdb:///file.duckdb."
)
@click.option("--dataset", required=True, help="Source dataset holding the <table>_v_<version> tables.")
@click.option("--table", "tables", multiple=True, help="Family to consolidate (repeatable).")
@click.option("--all", "all_families", is_flag=True, help="Every family in the dataset.")
@click.option("--idle-for", required=True, help="Fold only versions not written for this long, e.g. 30d, 12h, 0s.")
@click.option(
    "--max-versions",
    type=int,
    default=DEFAULT_MAX_VERSIONS,
    show_default=True,
    help="Fold until the family keeps at most this many version tables.",
)
@click.option("--apply", "apply_changes", is_flag=True, help="Move the rows; without it, only print the plan.")
@click.option("--drop-folded", is_flag=True, help="Also drop folded tables that are empty and past --retention.")
@click.option("--retention", default="7d", show_default=True, help="How long a folded, empty table is kept.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON, one object per family.")
@click.option(
    "--control-dataset",
    default=None,
    help="BigQuery: where the registry lives, the sink's control dataset (the dataset it lands in; with "
    "--dataset-per-database its --fallback-dataset) [default: --dataset].",
)
@click.option(
    "--settle",
    default="1h",
    show_default=True,
    help="BigQuery: how long a moved table stays in the view before it may leave (longer than any "
    "sink promotion runs).",
)
@generator_options
@fail_cleanly
def consolidate(
    warehouse: str,
    dataset: str,
    tables: tuple[str, ...],
    all_families: bool,
    idle_for: str,
    max_versions: int,
    apply_changes: bool,
    drop_folded: bool,
    retention: str,
    as_json: bool,
    control_dataset: str | None,
    settle: str,
    target_dataset: str | None,
    **generator: Any,
) -> None:
    """Fold old, idle versions into one consolidated table per family (docs/consolidation.md)."""
    from uniview.cli.output import consolidation_report, print_consolidation
    from uniview.ops.consolidate import ConsolidationRequest
    from uniview.ops.consolidate import consolidate as run_consolidate
    from uniview.planning.consolidation import parse_duration
    from uniview.warehouse import open_warehouse

    if bool(tables) == all_families:
        raise click.UsageError("give either --table NAME (repeatable) or --all")
    request = ConsolidationRequest(
        dataset,
        tables or None,
        parse_duration(idle_for),
        max_versions,
        apply_changes,
        drop_folded,
        parse_duration(retention),
        make_generator_options(**generator),
        target_dataset,
        control_dataset,
        parse_duration(settle),
    )
    with open_warehouse(warehouse) as connection:
        results = run_consolidate(connection, request)
    if as_json:
        click.echo(json.dumps({"families": consolidation_report(results)}, indent=2))
    else:
        print_consolidation(results, apply_changes)
    exit_on_failures([(result.family, result.error) for result in results if result.error])


def exit_on_failures(failures: list[tuple[str, UniviewError]]) -> None:
    """Each failed family on its own line on stderr, then exit code 1; the other families were done."""
    for family, error in failures:
        click.echo(f"uniview: error: {family}: {error}", err=True)
    if failures:
        sys.exit(1)


if __name__ == "__main__":
    main()
