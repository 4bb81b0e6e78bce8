"""`uniview demo [--workdir DIR]`: CDC stream -> Spark sink -> DuckDB -> Pub/Sub -> function -> views."""

from __future__ import annotations

import sys
from contextlib import ExitStack
from pathlib import Path

import click
import duckdb
from rich.console import Console

from uniview.core.errors import UniviewError
from uniview.demo.debezium_stream import DATABASES as DEBEZIUM_DATABASES
from uniview.demo.debezium_stream import TABLE as DEBEZIUM_TABLE
from uniview.demo.debezium_stream import write_debezium_stream
from uniview.demo.pipeline import (
    DATASET,
    SOURCE_COLUMN,
    DemoPaths,
    announcement_channel,
    new_spark_session,
    wait_for_views,
)
from uniview.demo.report import print_report, timings_table
from uniview.demo.spark_progress import spark_progress
from uniview.demo.stages import StageClock
from uniview.demo.stream import write_stream


@click.command("demo")
@click.option(
    "--workdir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path(".uniview-demo"),
    show_default=True,
    help="Where the demo writes its input, its DuckDB warehouse and the servers' logs.",
)
@click.option(
    "--source",
    type=click.Choice(["stream", "postgres", "mysql"]),
    default="stream",
    show_default=True,
    help="stream: a generated CDC stream of files; postgres: a real PostgreSQL through Debezium and Kafka; "
    "mysql: a real MariaDB's binary log through Debezium's MySQL connector and Kafka.",
)
def demo_command(workdir: Path, source: str) -> None:
    """Run the whole pipeline locally and show what uniview made of a changing CDC stream."""
    console = Console()
    if source in ("postgres", "mysql"):
        _database_demo(workdir, console, source)
        return
    paths = DemoPaths(workdir.absolute())
    try:
        seconds = run_demo(paths, console)
    except UniviewError as error:
        console.print(f"[red]uniview demo failed:[/red] {error}")
        sys.exit(1)
    console.print(timings_table(seconds))
    # the options the demo refreshed with: `status` compares the views with what these plan
    options = f"--warehouse {paths.warehouse_url} --dataset {DATASET} --all --source-column {SOURCE_COLUMN}"
    console.print(
        f"\nThe warehouse is left at [bold]{paths.warehouse_file}[/bold]. Query it with:\n"
        f"  {sys.executable} -c \"import duckdb; duckdb.connect('{paths.warehouse_file}', read_only=True)"
        f".sql('SELECT * FROM {DATASET}_unified.customer_unified').show()\"\n"
        f"see each family's state with: uniview status {options}\n"
        f"or refresh it again with: uniview refresh {options}",
        soft_wrap=True,
    )


def _database_demo(workdir: Path, console: Console, source: str) -> None:
    from uniview.demo.mysql_source import MySQLDemo
    from uniview.demo.postgres_source import PostgresDemo

    demo = (MySQLDemo if source == "mysql" else PostgresDemo)(workdir.absolute(), console)
    demo.workdir.mkdir(parents=True, exist_ok=True)
    try:
        seconds = demo.run()
    except (UniviewError, FileNotFoundError) as error:
        console.print(f"[red]uniview demo failed:[/red] {error}")
        sys.exit(1)
    console.print(timings_table(seconds))
    console.print(f"\nThe warehouse is left at [bold]{demo.warehouse}[/bold].", soft_wrap=True)


def run_demo(paths: DemoPaths, console: Console) -> dict[str, float]:
    from uniview.sink.job import SinkOptions, run

    clock = StageClock(console)
    with clock.stage("1. Generate a CDC stream with schema changes"):
        paths.reset()
        files, lines = write_stream(paths.input_dir)
        console.print(f"{lines} lines in {len(files)} NDJSON files under {paths.input_dir}")
        debezium_file, events = write_debezium_stream(paths.debezium_dir)
        console.print(
            f"{events} Debezium change events of {DEBEZIUM_TABLE} from {' and '.join(DEBEZIUM_DATABASES)} "
            f"in {debezium_file}"
        )
    with ExitStack() as running:
        with clock.stage("2. Start Spark, the function and the Pub/Sub emulator"):
            spark = new_spark_session()
            running.callback(spark.stop)
            route = running.enter_context(announcement_channel(paths))
            console.print(f"announcements: {route.description}")
        with clock.stage("3. Spark sink: land typed version tables, quarantine bad records, announce versions"):
            for source, record_format in ((paths.input_dir, "uniview"), (paths.debezium_dir, "debezium")):
                options = SinkOptions(
                    input=str(source),
                    warehouse=paths.warehouse_url,
                    notify=route.notify,
                    staging_dir=str(paths.workdir / "staging"),
                    format=record_format,
                )
                with spark_progress(spark, console, f"sink ({record_format})"):
                    result = run(spark, options)
                counts = result.counts
                console.print(
                    f"{record_format}: read {counts.read} = written {counts.total_written} + quarantined "
                    f"{counts.total_quarantined} + skipped {counts.total_skipped}; {len(result.sent)} new version(s) announced"
                )
        with clock.stage("4. Function refreshes the unified views"):
            families = wait_for_views(paths)
            console.print(f"{len(families)} unified views cover {sum(map(len, families.values()))} version tables")
    with clock.stage("5. Report"):
        _report(paths, console)
    return clock.seconds


def _report(paths: DemoPaths, console: Console) -> None:
    from uniview.ops.refresh import RefreshRequest, plan_families
    from uniview.planning.plan import GeneratorOptions
    from uniview.warehouse import open_warehouse

    with open_warehouse(paths.warehouse_url) as warehouse:
        plans = plan_families(warehouse, RefreshRequest(DATASET, options=GeneratorOptions(source_column=SOURCE_COLUMN)))
    with duckdb.connect(str(paths.warehouse_file), read_only=True) as connection:
        connection.execute("SET TimeZone='UTC'")
        print_report(console, connection, plans)
