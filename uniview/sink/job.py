"""The sink job: read NDJSON CDC records (batch or Structured Streaming), land each batch, notify.

`run(spark, options)` is the whole job; the session is passed in, so the same code runs under
`uniview sink` (a local session) and as a Dataproc PySpark job.  Spark reads each batch's lines and
hands them to the landing as they are, in one job: it parses nothing.  The warehouse's load step
routes, types and judges them in SQL (uniview.sink.load_sql, one set of rules rendered for DuckDB or
BigQuery).

Every line read is either written or quarantined; a batch whose counts do not add up stops the job.
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from py4j.protocol import Py4JError
from pyspark.errors import AnalysisException, StreamingQueryException
from pyspark.errors.exceptions.captured import CapturedException
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming import StreamingQuery

from uniview.core.errors import ConfigError, UniviewError, WarehouseError
from uniview.core.identifiers import validate_dataset
from uniview.core.landing_layout import DEFAULT_DATASET, DEFAULT_GRANULARITY, check_granularity
from uniview.sink.debezium import debezium_lines
from uniview.sink.frames import LINE_BYTES, ORIGINAL_LINE, bounded_lines, checked_lines
from uniview.sink.landing import BatchCounts, BatchKey, Landing, LineBatch
from uniview.sink.notify import Notification, Notifier, describe_failure, make_notifier
from uniview.sink.pending import FlushResult, flush
from uniview.sink.routing import FirstSeen, Lookup, RecordKey, RoutingPlan, plan_routes
from uniview.sink.sources import KafkaInput, is_kafka, kafka_lines
from uniview.sink.stop_signals import Interrupted, stop_requests
from uniview.warehouse.url import WarehouseURL

logger = logging.getLogger(__name__)

#: With one dataset per source database: where records without a usable dataset are quarantined.
DEFAULT_FALLBACK_DATASET = "uniview"
INPUT_FORMATS = ("uniview", "debezium")
SESSION_SETTINGS = {
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
    "spark.sql.ansi.enabled": "false",
    # Dates and timestamps are proleptic Gregorian, as in BigQuery and DuckDB, back to 0001-01-01: written
    # as they are (Spark's default refuses a date before 1582-10-15 and fails the whole batch).
    "spark.sql.parquet.datetimeRebaseModeInWrite": "CORRECTED",
    "spark.sql.parquet.int96RebaseModeInWrite": "CORRECTED",
    "spark.sql.avro.datetimeRebaseModeInWrite": "CORRECTED",
    # A date or timestamp nested in a STRUCT or ARRAY that does not parse is a value that does not fit (its
    # record is quarantined), not an error that fails the whole batch (Spark's default policy raises one).
    "spark.sql.legacy.timeParserPolicy": "CORRECTED",
    "spark.sql.json.enablePartialResults": "false",
}
#: Options of the sink's JVMs, which must be set before they start: `uniview sink` and the demo give them to
#: their local session, Dataproc takes them as properties (terraform/locals.tf `sink_spark_properties`,
#: docs/deployment.md).  Spark's generated code for a batch (Debezium's conversion above all) may compile to a
#: method above HotSpot's 8,000-byte limit for JIT compilation; without this flag it runs interpreted
#: (docs/sink.md, Performance).
JVM_OPTIONS = "-XX:-DontCompileHugeMethods"
JVM_PROPERTIES = {"spark.driver.extraJavaOptions": JVM_OPTIONS, "spark.executor.extraJavaOptions": JVM_OPTIONS}
#: A memory size as DuckDB reads one (--load-memory).
_SIZE = r"[0-9]+(\.[0-9]+)?\s*([KMGT]i?B)"
#: How often the driver wakes while a stream runs, to see whether a stop was asked for or a retry is due.
_WAIT_SECONDS = 1
#: How long a stop waits for Spark to record a landed batch in its checkpoint (a batch landed but not recorded
#: is read again by the next run and skipped by the ledger).
_COMMIT_WAIT_SECONDS = 30


@dataclass(frozen=True)
class SinkOptions:
    """Everything `uniview sink` accepts; `validate()` raises ConfigError for bad combinations."""

    input: str
    warehouse: str
    #: The dataset every record lands in, the source database in `_cdc_database`; None: one dataset per source
    #: database, named by each record's `database_name` (`--dataset-per-database`).
    dataset: str | None = DEFAULT_DATASET
    #: One dataset per source database only: whose quarantine gets records without a usable dataset.
    fallback_dataset: str = DEFAULT_FALLBACK_DATASET
    notify: str = "none"
    stream: bool = False
    checkpoint: str | None = None
    available_now: bool = False
    trigger_interval: str = "10 seconds"
    max_files_per_trigger: int | None = None
    staging_dir: str | None = None
    #: DuckDB's memory while it loads a batch (None: landing_duckdb.load_memory_limit()).
    load_memory: str | None = None
    bigquery_options: tuple[tuple[str, str], ...] = ()
    kafka_options: tuple[tuple[str, str], ...] = ()
    #: The record format: uniview's envelope, or Debezium's change events (uniview.sink.debezium).
    format: str = "uniview"
    #: Debezium's `unavailable.value.placeholder` as the connector is configured (None: its default).
    unavailable_placeholder: str | None = None
    #: How `--notify inline` generates views (a uniview.planning.plan.GeneratorOptions; None: the defaults).
    generator_options: object = None
    target_dataset: str | None = None
    #: BigQuery only: the time-unit partitioning of new version tables (None: landing_layout.DEFAULT_GRANULARITY).
    partition_granularity: str | None = None

    def validate(self) -> None:
        if self.dataset is not None:
            validate_dataset(self.dataset, "--dataset")
        validate_dataset(self.fallback_dataset, "--fallback-dataset")
        if self.stream and not self.checkpoint:
            raise ConfigError("--stream needs --checkpoint DIR (where Spark records its progress)")
        if not self.stream and (self.checkpoint or self.available_now):
            raise ConfigError("--checkpoint and --available-now are only used with --stream")
        if self.unavailable_placeholder is not None:
            _check_placeholder(self.unavailable_placeholder)
        if self.format not in INPUT_FORMATS:
            raise ConfigError(f"invalid --format {self.format!r}: choose one of {', '.join(INPUT_FORMATS)}")
        if self.max_files_per_trigger is not None and self.max_files_per_trigger < 1:
            raise ConfigError("--max-files-per-trigger must be at least 1")
        if is_kafka(self.input):
            KafkaInput.parse(self.input).reader_options(dict(self.kafka_options))
            if not self.stream:
                raise ConfigError(
                    "a Kafka --input needs --stream --checkpoint DIR (the checkpoint holds the offsets "
                    "read, so a re-run neither skips nor repeats records); add --available-now to stop "
                    "once the topics are drained"
                )
            if self.max_files_per_trigger is not None:
                raise ConfigError("--max-files-per-trigger is for files: use --kafka-option maxOffsetsPerTrigger=N")
        elif self.kafka_options:
            raise ConfigError("--kafka-option is only used with a kafka:// --input")
        duckdb_warehouse = warehouse_location(self.warehouse)[0] == "duckdb"
        self._check_partition_granularity(duckdb_warehouse)
        if self.load_memory is not None and not (duckdb_warehouse and re.fullmatch(_SIZE, self.load_memory)):
            raise ConfigError(
                f"invalid --load-memory {self.load_memory!r}: a size such as 4GB or 512MB, with a DuckDB --warehouse"
            )
        self.notifier()

    def _check_partition_granularity(self, duckdb_warehouse: bool) -> None:
        if self.partition_granularity is None:
            return
        if duckdb_warehouse:
            raise ConfigError("--partition-granularity is for a BigQuery --warehouse: DuckDB tables have no partitions")
        try:
            check_granularity(self.partition_granularity)
        except ValueError as error:
            raise ConfigError(f"--partition-granularity: {error}") from None

    def notifier(self) -> Notifier:
        return make_notifier(self.notify, self.warehouse, self.generator_options, self.target_dataset)

    @property
    def quarantine_dataset(self) -> str:
        """Whose quarantine gets records without a usable dataset: the shared dataset, else --fallback-dataset."""
        return self.dataset or self.fallback_dataset

    @property
    def stream_name(self) -> str:
        """The ledger's name for this stream: the checkpoint directory (absolute when local)."""
        location = self.checkpoint or ""
        return location if "://" in location else os.path.abspath(location)


@dataclass
class RunResult:
    """Totals of a run (replayed batches included), notification outcomes, mapping warnings."""

    counts: BatchCounts = field(default_factory=BatchCounts)
    batches: int = 0
    replayed: int = 0
    warnings: list[str] = field(default_factory=list)
    sent: list[Notification] = field(default_factory=list)
    failed: dict[Notification, str] = field(default_factory=dict)
    #: The signal that stopped a stream between batches (uniview.sink.stop_signals), None otherwise.
    stopped_by: str | None = None

    def record_flush(self, result: FlushResult) -> None:
        self.sent.extend(result.sent)
        self.failed = {n: e for n, e in {**self.failed, **result.failed}.items() if n not in result.sent}


def _check_placeholder(setting: str) -> None:
    """A usable --unavailable-placeholder: non-empty text, or hex: and an even number of hex digits."""
    from uniview.sink.debezium import placeholder_forms

    try:
        placeholder_forms(setting)
    except ValueError:
        raise ConfigError(f"invalid --unavailable-placeholder {setting!r}: hex: needs pairs of hex digits") from None
    if setting == "" or setting.lower() == "hex:":
        raise ConfigError("invalid --unavailable-placeholder: it is empty")


def warehouse_location(url: str) -> tuple[str, str]:
    """('duckdb', path) or ('bigquery', project); ConfigError otherwise."""
    parsed = WarehouseURL.parse(url, "--warehouse")
    return parsed.kind, parsed.location


def open_landing(spark: SparkSession, options: SinkOptions) -> Landing:
    kind, location = warehouse_location(options.warehouse)
    if kind == "duckdb":
        from uniview.sink.landing_duckdb import DuckDBLanding

        return DuckDBLanding(location, options.staging_dir, options.load_memory)
    from uniview.sink.landing_bigquery import BigQueryLanding
    from uniview.sink.pending import HadoopFilePendingStore, MemoryPendingStore

    pending = HadoopFilePendingStore(spark, options.checkpoint) if options.checkpoint else MemoryPendingStore()
    return BigQueryLanding(
        location,
        pending,
        dict(options.bigquery_options),
        options.quarantine_dataset,
        options.partition_granularity or DEFAULT_GRANULARITY,
    )


def run(spark: SparkSession, options: SinkOptions) -> RunResult:
    """Run the sink to completion (a batch run, or a stream until it stops); return the totals."""
    options.validate()
    for key, value in SESSION_SETTINGS.items():
        spark.conf.set(key, value)
    landing = open_landing(spark, options)
    try:
        sink = Sink(spark, options, landing, options.notifier())
        sink.flush()
        sink.run_stream() if options.stream else sink.run_batch()
        sink.flush()
        return sink.result
    finally:
        landing.close()


class Sink:
    """One run: processes batches, keeps totals, delivers pending notifications after each batch."""

    def __init__(self, spark: SparkSession, options: SinkOptions, landing: Landing, notifier: Notifier) -> None:
        self.spark, self.options, self.landing, self.notifier = spark, options, landing, notifier
        self.result = RunResult()
        self._stream_error: BaseException | None = None
        #: Held while a micro-batch lands, so a retry of pending notifications between batches never overlaps one.
        self._batch_lock = threading.Lock()
        self._stopping = False
        self._last_batch: int | None = None
        #: `landed` announcements not delivered yet (sent again after the next batch).
        self._landed_pending: list[Notification] = []

    def run_batch(self) -> None:
        """One batch; Ctrl-C or SIGTERM cancels its Spark jobs and the load step of a landing that can stop one
        (DuckDB's, until it commits), and ends the run with Interrupted.  A batch already past them (BigQuery's
        landing, DuckDB's commit) completes instead, and errors other than the cancelled ones are raised as
        they are."""
        lines = _with_source_file(_load_input(lambda: self.spark.read.text(self.options.input), self.options.input))
        with stop_requests(on_request=self._cancel) as stop:
            try:
                self.process(lines, BatchKey(f"batch:{uuid.uuid4().hex}", 0))
            except (Py4JError, CapturedException, WarehouseError):  # cancelled, when a stop was asked for
                if stop.signal_name is not None:
                    raise Interrupted(stop.signal_name) from None
                raise

    def _cancel(self) -> None:
        self.spark.sparkContext.cancelAllJobs()
        self.landing.interrupt()

    def run_stream(self) -> None:
        lines = self._kafka_lines() if is_kafka(self.options.input) else self._file_lines()
        writer = lines.writeStream.foreachBatch(self._stream_batch).option(
            "checkpointLocation", self.options.checkpoint
        )
        trigger = (
            {"availableNow": True} if self.options.available_now else {"processingTime": self.options.trigger_interval}
        )
        query = writer.trigger(**trigger).start()
        try:
            self._await(query)
        except StreamingQueryException as error:
            if isinstance(self._stream_error, _StreamStopping):
                return  # a batch refused while the query stopped: the next run lands it
            if isinstance(self._stream_error, UniviewError):
                raise self._stream_error from None
            raise UniviewError(f"the streaming query failed: {str(error).strip().splitlines()[0]}") from None
        except KeyboardInterrupt:  # a second signal: stop now, the batch in progress left as a kill leaves it
            query.stop()
            raise

    def _await(self, query: StreamingQuery) -> None:
        """Wait until the stream ends or a stop is asked for (uniview.sink.stop_signals).  While a running
        stream waits for data, notifications that failed are retried once per trigger interval instead of
        only after the next batch: a quiet source may send none for hours."""
        retry_every = None if self.options.available_now else trigger_seconds(self.spark, self.options.trigger_interval)
        retried = time.monotonic()
        with stop_requests() as stop:
            while not query.awaitTermination(_WAIT_SECONDS):
                if stop:
                    self.result.stopped_by = stop.signal_name
                    self._stop_between_batches(query)
                    query.awaitTermination()  # raises if a batch failed meanwhile
                    return
                if retry_every is not None and self.result.failed and time.monotonic() - retried >= retry_every:
                    retried = time.monotonic()
                    self._retry_pending()

    def _stop_between_batches(self, query: StreamingQuery) -> None:
        """Stop once no batch is landing and Spark has recorded the last one landed in its checkpoint, so the
        next run starts after it.  A batch that reaches the sink while the query stops is refused, unlanded,
        and the next run lands it."""
        logger.warning("%s: stopping the stream after the batch in progress", self.result.stopped_by)
        deadline = time.monotonic() + _COMMIT_WAIT_SECONDS
        while query.isActive:
            with self._batch_lock:
                if (
                    self._last_batch is None
                    or _recorded_batch(query) >= self._last_batch
                    or time.monotonic() > deadline
                ):
                    self._stopping = True
                    query.stop()
                    return
            time.sleep(0.005)

    def _retry_pending(self) -> None:
        if not self._batch_lock.acquire(blocking=False):
            return  # a batch is landing; it flushes when it ends
        try:
            self.flush()
        except Exception as error:  # the store could not be read: still pending, retried again later
            logger.warning("retrying pending notifications failed, will retry: %s", error)
        finally:
            self._batch_lock.release()

    def _file_lines(self) -> DataFrame:
        reader = self.spark.readStream.format("text")
        if self.options.max_files_per_trigger:
            reader = reader.option("maxFilesPerTrigger", str(self.options.max_files_per_trigger))
        return _with_source_file(_load_input(lambda: reader.load(self.options.input), self.options.input))

    def _kafka_lines(self) -> DataFrame:
        source = KafkaInput.parse(self.options.input)
        reader = self.spark.readStream.format("kafka").options(
            **source.reader_options(dict(self.options.kafka_options))
        )
        return kafka_lines(_load_input(reader.load, self.options.input))

    def _stream_batch(self, lines: DataFrame, batch_id: int) -> None:
        try:
            while not self._batch_lock.acquire(timeout=0.05):
                if self._stopping:  # the query is stopping (_stop_between_batches holds the lock)
                    raise _StreamStopping(
                        f"batch {batch_id} not landed: the stream is stopping (the next run lands it)"
                    )
            try:
                self.process(lines, BatchKey(self.options.stream_name, batch_id))
                self._last_batch = batch_id
            finally:
                self._batch_lock.release()
        except BaseException as error:
            self._stream_error = error
            raise

    def process(self, lines: DataFrame, key: BatchKey) -> BatchCounts:
        """Land one batch (or skip it when the ledger already has it), then flush notifications."""
        counts = self.landing.landed(key)
        if counts is None:
            counts = self._land(lines, key)
        if not counts.balanced:
            raise UniviewError(
                f"batch {key.label}: read {counts.read} lines but wrote {counts.total_written}, "
                f"quarantined {counts.total_quarantined} and skipped {counts.total_skipped}"
            )
        self.result.counts.add(counts)
        self.result.batches += 1
        self.result.replayed += counts.replayed
        logger.info(
            "batch %s: read %d, written %d, quarantined %d, skipped %d%s",
            key.label,
            counts.read,
            counts.total_written,
            counts.total_quarantined,
            counts.total_skipped,
            " (already landed: not written again)" if counts.replayed else "",
        )
        refreshed = self.flush()
        self._announce_landed(key, counts, refreshed)
        return counts

    def _announce_landed(self, key: BatchKey, counts: BatchCounts, refreshed: list[Notification]) -> None:
        """Per family the batch wrote rows to, announce that rows landed (one `landed` notification, on
        Pub/Sub, HTTP and inline alike): a function keeping `<table>_current` as a table maintains it.  A family
        whose new version was announced just now (`refreshed`) is not announced again in that dataset: the
        version's refresh maintains it.  An announcement that fails is sent again after the next batch while
        this process runs; one lost with the process is harmless: any later maintenance reads every batch not
        applied yet."""
        if not self.notifier.enabled:
            return
        landed = counts.landed_notifications(key, refreshed)
        self._landed_pending.extend(n for n in landed if n not in self._landed_pending)
        waiting = []
        for notification in self._landed_pending:
            try:
                self.notifier.send(notification)
            except Exception as error:  # any transport or refresh failure: sent again after the next batch
                logger.warning(
                    "announcing %s failed, will retry: %s", json.dumps(notification.body()), describe_failure(error)
                )
                waiting.append(notification)
        self._landed_pending = waiting

    def _land(self, lines: DataFrame, key: BatchKey) -> BatchCounts:
        lines = checked_lines(lines)
        if self.options.format == "debezium":
            lines = debezium_lines(lines, self.options.unavailable_placeholder)
        rewritten = ORIGINAL_LINE in lines.columns
        staged = lines.select("value", "source_file", LINE_BYTES, *([ORIGINAL_LINE] if rewritten else []))
        if self.landing.max_line_bytes is not None:
            staged = bounded_lines(staged, self.landing.max_line_bytes)
        return self.landing.land_lines(
            LineBatch(key, staged, rewritten, self._route, self.options.quarantine_dataset, self.notifier.enabled)
        )

    def _route(self, keys: Mapping[RecordKey, FirstSeen], lookup: Lookup) -> RoutingPlan:
        """The routing of a batch whose landing reads its keys (LineBatch.route)."""
        plan = plan_routes(keys, self.options.dataset, self.options.quarantine_dataset, lookup, first_seen=keys)
        self._record_warnings(plan.warnings)
        return plan

    def _record_warnings(self, warnings: list[str]) -> None:
        for warning in warnings:
            logger.warning("%s", warning)
            if warning not in self.result.warnings:
                self.result.warnings.append(warning)

    def flush(self) -> list[Notification]:
        """Send the pending announcements of new version tables; those delivered."""
        result = flush(self.landing.pending, self.notifier)
        self.result.record_flush(result)
        return result.sent


class _StreamStopping(UniviewError):
    """A batch refused, before it landed anything, because the stream is stopping."""


def _recorded_batch(query: StreamingQuery) -> int:
    """The id of the last batch Spark has finished and recorded in the checkpoint (-1 before the first)."""
    progress = query.lastProgress
    return -1 if progress is None else progress["batchId"]


def trigger_seconds(spark: SparkSession, interval: str) -> float:
    """A --trigger-interval in seconds, as Spark reads it ("10 seconds", "1 minute", "500 milliseconds")."""
    jvm = spark._jvm
    if jvm is None:  # a Spark Connect session has no JVM in this process
        raise ConfigError("the sink needs a local Spark session (Spark Connect is not supported)")
    return jvm.org.apache.spark.sql.streaming.Trigger.ProcessingTime(interval).intervalMs() / 1000


def _load_input(load: Callable[[], DataFrame], path: str) -> DataFrame:
    try:
        return load()
    except AnalysisException as error:
        raise ConfigError(f"cannot read --input {path!r}: {str(error).strip().splitlines()[0]}") from None


def _with_source_file(lines: DataFrame) -> DataFrame:
    return lines.select(
        "value", F.lit(None).cast("string").alias("key"), F.col("_metadata.file_path").alias("source_file")
    )
