"""`uniview sink`: the CLI of the sink job, also the entry point of the Dataproc PySpark job.

Run from a shell it starts a local Spark session (`--master`, default local[*]); started by
spark-submit (Dataproc) it uses the session spark-submit configured.  A bad argument or any
UniviewError is one line on stderr and a non-zero exit code.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Sequence
from typing import Any

import click

from uniview.local.processes import keep_grpc_fork_handlers_off

keep_grpc_fork_handlers_off()  # before anything imports gRPC (`python -m uniview.sink`)

from uniview.cli.options import generator_options, make_generator_options  # noqa: E402
from uniview.core.errors import UniviewError  # noqa: E402
from uniview.core.landing_layout import DEFAULT_DATASET  # noqa: E402
from uniview.sink.job import DEFAULT_FALLBACK_DATASET, RunResult, SinkOptions  # noqa: E402
from uniview.sink.stop_signals import Interrupted  # noqa: E402

_PROG = "uniview sink"


class OneLineError(click.ClickException):
    """Shown as `uniview sink: error: <message>` on stderr."""

    def __init__(self, message: str, exit_code: int = 1) -> None:
        super().__init__(message)
        # click declares exit_code a ClassVar yet reads it from the instance; this error's code is per instance.
        self.exit_code = exit_code  # type: ignore[misc]

    def show(self, file: Any = None) -> None:
        click.echo(f"{_PROG}: error: {self.format_message()}", err=True)


class OneLineCommand(click.Command):
    """A command whose usage errors are one line (exit code 2) instead of the usage text."""

    def make_context(
        self, info_name: str | None, args: list[str], parent: click.Context | None = None, **extra: Any
    ) -> click.Context:
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except click.UsageError as error:
            raise OneLineError(error.format_message(), exit_code=2) from None


def _key_value(ctx: click.Context, param: click.Parameter, values: Sequence[str]) -> tuple[tuple[str, str], ...]:
    pairs = []
    for value in values:
        key, sep, setting = value.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"{value!r} is not KEY=VALUE")
        pairs.append((key, setting))
    return tuple(pairs)


@click.command("sink", cls=OneLineCommand)
@click.option(
    "--input",
    "input_path",
    required=True,
    help="NDJSON file, directory or glob (local path or gs://), or Kafka: kafka://BROKER[,BROKER]/TOPIC[,TOPIC] "
    "or 'kafka://BROKER/?pattern=REGEX' (with --stream).",
)
@click.option(
    "--format",
    "format",
    type=click.Choice(["uniview", "debezium"]),
    default="uniview",
    show_default=True,
    help="Record format: uniview's envelope, or Debezium change events (JSON with schemas).",
)
@click.option(
    "--unavailable-placeholder",
    default=None,
    help="Debezium only: the connector's unavailable.value.placeholder (text, or hex:DIGITS), when it is not "
    "Debezium's default __debezium_unavailable_value; such values land NULL, named in _cdc_unavailable.",
)
@click.option(
    "--warehouse",
    required=True,
    envvar="UNIVIEW_WAREHOUSE",
    help="duckdb:///file.duckdb (relative), duckdb:////abs/file.duckdb, or bigquery://PROJECT.",
)
@click.option(
    "--dataset",
    default=None,
    help=f"The one dataset every record lands in, its source database in _cdc_database [default: {DEFAULT_DATASET}].",
)
@click.option(
    "--dataset-per-database",
    is_flag=True,
    help="Land each record in the dataset its database_name names instead (one dataset per source database).",
)
@click.option(
    "--fallback-dataset",
    default=None,
    help="With --dataset-per-database: whose quarantine gets records without a usable dataset "
    f"[default: {DEFAULT_FALLBACK_DATASET}].",
)
@click.option(
    "--notify",
    default="none",
    show_default=True,
    help="After a new version table: pubsub://PROJECT/TOPIC, http://HOST:PORT/PATH, inline or none.",
)
@click.option("--stream", is_flag=True, help="Structured Streaming over the files arriving in --input.")
@click.option("--checkpoint", default=None, help="Streaming checkpoint directory (required with --stream).")
@click.option("--available-now", is_flag=True, help="Process what is there in incremental batches, then stop.")
@click.option("--trigger-interval", default="10 seconds", show_default=True, help="Micro-batch interval of a stream.")
@click.option("--max-files-per-trigger", type=int, default=None, help="Files per micro-batch of a stream.")
@click.option(
    "--staging-dir", default=None, help="DuckDB only: where Spark stages Parquet [default: a temporary directory]."
)
@click.option(
    "--load-memory",
    default=None,
    metavar="SIZE",
    help="DuckDB only: the memory its load step may take before it spills the batch's lines to disk, "
    "e.g. 4GB [default: an eighth of the machine's memory, at least 1GB, at most 2GB].",
)
@click.option(
    "--bigquery-option",
    "bigquery_options",
    multiple=True,
    callback=_key_value,
    metavar="KEY=VALUE",
    help="BigQuery only: a spark-bigquery-connector write option (repeatable).",
)
@click.option(
    "--kafka-option",
    "kafka_options",
    multiple=True,
    callback=_key_value,
    metavar="KEY=VALUE",
    help="Kafka only: an option of Spark's Kafka source, e.g. kafka.security.protocol=SASL_SSL (repeatable).",
)
@click.option(
    "--partition-granularity",
    type=click.Choice(["HOUR", "DAY", "MONTH", "YEAR"], case_sensitive=False),
    default=None,
    help="BigQuery only: the time-unit partitioning by _cdc_ingested_at of the version tables it creates "
    "[default: DAY]; HOUR only for tables whose rows all land within about a year (10,000 partitions).",
)
@generator_options
@click.option(
    "--master", default=None, help="Spark master of a local run [default: local[*]]; ignored under spark-submit."
)
@click.option("--quiet", is_flag=True, help="Only the summary, no per-batch log lines.")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the summary as one JSON document listing every table [default: totals and the busiest tables].",
)
def sink_command(
    input_path: str,
    master: str | None,
    quiet: bool,
    as_json: bool,
    target_dataset: str | None,
    policy: str,
    max_view_chars: int,
    datetime_timezone: str | None,
    source_column: str | None,
    current: str,
    renames: str | None,
    dataset: str | None,
    dataset_per_database: bool,
    fallback_dataset: str | None,
    **options: Any,
) -> None:
    """Land NDJSON CDC records in typed, hash-versioned tables; quarantine bad records; notify.

    The view options (--policy, --max-view-chars, --datetime-timezone, --source-column, --current,
    --target-dataset) are those of `uniview refresh`, used by --notify inline: with `--current table`
    each new version's refresh also brings `<table>_current` up to date as a table."""
    logging.basicConfig(level=logging.WARNING if quiet else logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("py4j").setLevel(logging.WARNING)
    layout = _layout(dataset, dataset_per_database, fallback_dataset)
    try:
        generator = make_generator_options(policy, max_view_chars, datetime_timezone, source_column, current, renames)
        sink_options = SinkOptions(
            input=input_path, generator_options=generator, target_dataset=target_dataset, **layout, **options
        )
        sink_options.validate()
        result = _run_with_session(sink_options, master, _session_jars(sink_options))
    except Interrupted as error:
        raise OneLineError(str(error), exit_code=error.exit_code) from None
    except UniviewError as error:
        raise OneLineError(str(error)) from None
    from uniview.sink.summary import print_summary

    print_summary(result, as_json)


def _layout(dataset: str | None, per_database: bool, fallback_dataset: str | None) -> dict[str, Any]:
    """SinkOptions' dataset and fallback dataset from the layout options; a usage error for options that
    contradict each other."""
    if per_database and dataset is not None:
        raise OneLineError(
            "--dataset and --dataset-per-database exclude each other: give --dataset NAME to land every record "
            "in one dataset, or --dataset-per-database for one dataset per source database",
            exit_code=2,
        )
    if fallback_dataset is not None and not per_database:
        raise OneLineError(
            "--fallback-dataset is only used with --dataset-per-database: in a shared dataset, records that name "
            "no source database are quarantined in that dataset",
            exit_code=2,
        )
    if per_database:
        return {"dataset": None, "fallback_dataset": fallback_dataset or DEFAULT_FALLBACK_DATASET}
    return {"dataset": dataset or DEFAULT_DATASET}


def _session_jars(options: SinkOptions) -> list[str]:
    """Jars a local session needs on top of Spark's own: spark-sql-kafka for a Kafka input, and the
    spark-bigquery-connector for a BigQuery warehouse when scripts/setup-bigquery-connector.sh resolved
    it (Dataproc ships it; under spark-submit nothing is added)."""
    from uniview.local.bigquery_connector import find_connector
    from uniview.sink.job import warehouse_location
    from uniview.sink.sources import is_kafka

    if "PYSPARK_GATEWAY_PORT" in os.environ:
        return []
    jars = []
    if is_kafka(options.input):
        from uniview.local.java_stack import spark_kafka_jars

        jars += spark_kafka_jars()
    connector = find_connector() if warehouse_location(options.warehouse)[0] == "bigquery" else None
    return jars + ([str(connector.jar)] if connector else [])


def _run_with_session(options: SinkOptions, master: str | None, jars: Sequence[str] = ()) -> RunResult:
    from pyspark.sql import SparkSession

    from uniview.sink.job import run

    # the thread's active session, else the process's (a caller's session, seen from another thread): kept running
    existing = SparkSession.getActiveSession() or SparkSession._instantiatedSession
    spark = existing or _new_session(master, jars)
    try:
        return run(spark, options)
    finally:
        if existing is None:
            spark.stop()


def _new_session(master: str | None, jars: Sequence[str] = ()) -> Any:
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName("uniview-sink")
    if jars:
        builder = builder.config("spark.jars", ",".join(jars))
    if "PYSPARK_GATEWAY_PORT" not in os.environ:
        master = master or "local[*]"
        builder = builder.master(master)
        for key, value in local_session_settings(master).items():
            builder = builder.config(key, value)
    spark = builder.getOrCreate()
    if "PYSPARK_GATEWAY_PORT" not in os.environ:  # under spark-submit, the submitter chose the workers' Python
        from uniview.local.processes import use_this_python_for_spark_workers

        use_this_python_for_spark_workers(spark.sparkContext)
    return spark


def local_session_settings(master: str) -> dict[str, str]:
    """The settings of a session `uniview sink` starts itself (under spark-submit, the submitter's apply)."""
    from uniview.sink.job import JVM_PROPERTIES

    return {
        **JVM_PROPERTIES,
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": str(_local_cores(master)),
        "spark.python.daemon.module": "uniview.local.spark_daemon",
    }


def _local_cores(master: str) -> int:
    """The cores of a local master: local -> 1, local[N] -> N, otherwise all of this machine's."""
    if master == "local":
        return 1
    inside = master[len("local[") : -1] if master.startswith("local[") and master.endswith("]") else ""
    return int(inside) if inside.isdigit() else os.cpu_count() or 2


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point for `python -m uniview.sink` and the Dataproc job script."""
    sink_command.main(args=list(sys.argv[1:] if argv is None else argv), prog_name=_PROG)
