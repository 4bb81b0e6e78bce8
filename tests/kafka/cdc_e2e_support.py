"""What the end-to-end CDC tests share, whatever the database: a source database server (PostgreSQL or
MariaDB) -> Debezium on Kafka Connect -> Kafka -> `uniview sink --format debezium --stream`, one long-running
sink per warehouse -> DuckDB and the BigQuery emulator (real connector) -> the Cloud Function -> views.

A test module describes its source as a `CdcSource` (how to run statements and read a table back, which
topics hold its changes), builds a `CdcStack` with one `Landing` per warehouse, and drives it with `step`:
after each step every `<table>_current` must equal `SELECT *` on its source table, column for column, and
`<table>_unified` must hold each change once, with its source database and its own `_cdc_sequence`.

Kafka, Kafka Connect and the BigQuery emulator run once per test process (tests/kafka/conftest.py): a module
adds its Debezium connectors to the running Connect worker through its REST API (`connectors_added`) and removes
them at its end, and the BigQuery datasets its sinks created are dropped then.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Collection, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, ExitStack, contextmanager, nullcontext, suppress
from dataclasses import dataclass, field, replace
from decimal import ROUND_HALF_UP, Context, Decimal, localcontext
from pathlib import Path
from typing import Any

import duckdb

from uniview.core.identifiers import quote
from uniview.demo.postgres_source import normalized
from uniview.local.bigquery_emulator import DEFAULT_PROJECT
from uniview.local.function_server import function_server
from uniview.local.kafka import connector_status, wait_for_change_events, wait_until_prefixes_settle
from uniview.warehouse.duckdb_connection import quote_identifier
from uniview.warehouse.url import duckdb_url

#: The function's view options in both warehouses: widen types across versions, and build `<table>_current`.
VIEW_OPTIONS = {"UNIVIEW_POLICY": "widen"}


class OutsideBigQuery(str):
    """A source value no BigQuery column of its type holds (a date past year 9999, a TIME outside one day), as its
    text.  The sink quarantines every record that carries one (docs/sink.md#values-outside-bigquerys-domains), so
    a row holding one is not compared, and the records the quarantine holds count as changes."""


def unheld_keys(rows: Sequence[tuple]) -> set:
    """The keys (first column) of the rows holding a value outside BigQuery's domains."""
    return {row[0] for row in rows if any(isinstance(value, OutsideBigQuery) for value in row)}


def quarantined_records(landing: Landing, database: str, table: str) -> list[str]:
    """The reasons of the records of `table` in `database`'s quarantine, none before it has one."""
    if landing.name == "duckdb":
        exists = "information_schema.tables WHERE table_schema = '{0}' AND table_name = '_uniview_quarantine'"
    else:
        exists = "{0}.INFORMATION_SCHEMA.TABLES WHERE table_name = '_uniview_quarantine'"
    ((found,),) = landing.read("SELECT count(*) FROM " + exists.format(database))
    if not found:
        return []
    sql = f"SELECT reason FROM {database}._uniview_quarantine WHERE table_name = '{table}'"
    return [reason for (reason,) in landing.read(sql)]


def carry_quarantine(stack: CdcStack, database: str, old: str, new: str) -> None:
    """Table `old` of `database` is now called `new` (once the sinks have landed every change sent before): the
    records quarantined under `old` count as `new`'s, and those under `new` so far as an earlier table's."""
    for landing in stack.landings:
        with landing.reading():
            before, earlier = (len(quarantined_records(landing, database, name)) for name in (old, new))
        carried = stack.carried_quarantine.pop((landing.name, database, old), 0)
        stack.carried_quarantine[(landing.name, database, new)] = carried + before - earlier


@dataclass
class CdcSource:
    """A source database server as the test sees it.

    `run(database, *statements)` changes it; `rows(database, table)` is `SELECT *` ordered by the key and
    `columns(database, table)` the table's column names in order; `topic_prefixes` are the first parts of
    its Debezium topics, and `input_pattern` the sink's Kafka subscription pattern for its table topics.
    """

    databases: tuple[str, ...]
    tables: tuple[str, ...]
    topic_prefixes: tuple[str, ...]
    input_pattern: str
    run: Callable[..., None]
    rows: Callable[[str, str], list[tuple]]
    columns: Callable[[str, str], list[str]]
    order_by: Callable[[str], str] = lambda table: "id"
    #: The rows of both sides in one form before they are compared (numbers as Decimal by default).
    normalize: Callable[[Sequence[tuple]], list[tuple]] = normalized
    #: The cells whose value uniview may not know, per (database, table): {key: {column: how}} (`unknown_accepted`).
    unknown: Callable[[str, str], dict[Any, dict[str, str]]] | None = None
    #: The columns, per (database, table), whose unified type is BIGNUMERIC, with the integer digits their versions
    #: hold: DuckDB, and the emulator built on it, keep it as a DOUBLE (docs/duckdb.md#known-differences-from-bigquery),
    #: so both sides are compared as doubles (`as_doubles`, `emulator_holds`).
    approximate: Callable[[str, str], dict[str, int]] | None = None


@dataclass
class Landing:
    """One warehouse the changes land in: the sink's arguments and environment, and how to read it back."""

    name: str
    sink_args: list[str]
    sink_env: dict[str, str]
    read: Callable[[str], list[tuple]]
    distinct_list: str  # the aggregate that lists distinct values: DuckDB `list`, BigQuery `ARRAY_AGG`
    notify: str = ""
    #: A block whose reads share one connection (a comparison of every table), where opening one costs.
    reading: Callable[[], AbstractContextManager[None]] = nullcontext
    #: An identifier quoted as the warehouse's SQL quotes it (any name a source allows).
    quote: Callable[[str], str] = quote_identifier


def duckdb_landing(warehouse: Path) -> Landing:
    """Each read opens the file read-only, retrying while a writer holds it (the function refreshes the views right
    after the sink's announcement); within `reading()` the reads share one connection, and the writers wait for
    its end: opening the file reads its whole catalog (about 20 ms once a live module's versions and views are in)."""
    held: list[duckdb.DuckDBPyConnection] = []

    def read(sql: str) -> list[tuple]:
        if held:
            return [tuple(row) for row in held[0].execute(sql).fetchall()]
        for _ in range(100):
            try:
                with duckdb.connect(str(warehouse), read_only=True) as connection:
                    return [tuple(row) for row in connection.execute(sql).fetchall()]
            except duckdb.Error:
                time.sleep(0.2)
        raise AssertionError(f"could not read: {sql}")

    @contextmanager
    def reading() -> Iterator[None]:
        for _ in range(100):
            try:
                held.append(duckdb.connect(str(warehouse), read_only=True))
                break
            except duckdb.Error:
                time.sleep(0.2)
        try:
            yield
        finally:
            while held:
                held.pop().close()

    return Landing("duckdb", ["--warehouse", duckdb_url(warehouse)], {}, read, "list", reading=reading)


def bigquery_landing(connector_emulator_env: tuple[dict[str, str], list[str], Any]) -> Landing:
    environment, options, client = connector_emulator_env

    def read(sql: str) -> list[tuple]:
        # one jobs.query request, not an insert and two getQueryResults: on the emulator 29-32 ms of its CPU a
        # read of 20 rows instead of 38-42, and 2.3 ms of the test's instead of 5.5
        return [tuple(row.values()) for row in client.query_and_wait(sql)]

    return Landing(
        "bigquery",
        ["--warehouse", f"bigquery://{DEFAULT_PROJECT}", *options],
        environment,
        read,
        "ARRAY_AGG",
        quote=quote,
    )


@dataclass
class CdcStack:
    """Kafka, the source, the landings (each with its function's URL) and the work folder."""

    bootstrap: str
    source: CdcSource
    landings: list[Landing]
    work: Path
    events: dict[tuple[str, str], int] = field(default_factory=dict)
    #: (database, table) whose source held a value outside BigQuery's domains (OutsideBigQuery) at some check.
    held_back: set[tuple[str, str]] = field(default_factory=set)
    #: Per (database, table), the keys whose last change held such a value (quarantined, or lost by the
    #: connector): `<table>_current` keeps the row's last landed state until the key is written again, even once a
    #: type change makes the source's value one the views could show.  Whoever writes a key releases it.
    held_keys: dict[tuple[str, str], set] = field(default_factory=dict)
    #: The same, of the keys only the BigQuery emulator quarantined (`emulator_holds`).
    emulator_held_keys: dict[tuple[str, str], set] = field(default_factory=dict)
    #: Per (landing, database, table), the table's quarantined records under the names it had before a rename, less
    #: those of an earlier table of its name (`carry_quarantine`): the quarantine keeps each record's name then.
    carried_quarantine: dict[tuple[str, str, str], int] = field(default_factory=dict)


@dataclass(frozen=True)
class ConnectWorker:
    """A Kafka Connect worker running for the whole test process, with no connector of its own: its REST URL,
    its log and the broker it writes to."""

    url: str
    log: Path
    bootstrap: str


#: Debezium settings of every connector the tests add: a connector's task hands Kafka Connect a batch once it holds
#: `max.batch.size` changes or `poll.interval.ms` has passed (500 ms by default), so a step's few changes waited
#: half a second in the connector's queue; the tests' changes are few and loopback is quick.
CONNECTOR_TEST_SETTINGS = {"poll.interval.ms": 50}

#: Kafka Connect answers 404 to POST /connectors while its herder is still starting (its REST server is up
#: first), and 409 while it rebalances: both pass within seconds.
_NOT_READY = (404, 409)


def _request(url: str, method: str, body: dict | None = None, timeout: float = 60) -> None:
    data = None if body is None else json.dumps(body).encode()
    deadline = time.monotonic() + timeout
    while True:
        request = urllib.request.Request(url, data, {"Content-Type": "application/json"}, method=method)
        try:
            with urllib.request.urlopen(request, timeout=30):
                return
        except urllib.error.HTTPError as error:
            if method != "POST" or error.code not in _NOT_READY or time.monotonic() > deadline:
                raise
        time.sleep(0.5)


def wait_for_connector(worker: ConnectWorker, name: str, timeout: float = 120) -> None:
    """Until the connector and its tasks run; fails with the first line of a failed task's trace."""
    deadline = time.monotonic() + timeout
    status: dict = {}
    while time.monotonic() < deadline:
        try:
            status = connector_status(worker.url, name)
        except (urllib.error.URLError, OSError, ValueError):
            time.sleep(0.2)
            continue
        tasks = status.get("tasks") or []
        states = {status["connector"]["state"], *(task["state"] for task in tasks)}
        assert "FAILED" not in states, (name, [t.get("trace", "")[:2000] for t in tasks], worker.log)
        if tasks and states == {"RUNNING"}:
            return
        time.sleep(0.2)
    raise AssertionError(f"connector {name} is not running after {timeout:.0f}s: {status}; see {worker.log}")


def wait_for_log(worker: ConnectWorker, text: str, since: int, timeout: float = 180) -> None:
    """Until `text` is in the worker's log after byte `since` (what a connector added then has written)."""
    deadline = time.monotonic() + timeout
    while True:
        with open(worker.log, "rb") as log:
            log.seek(since)
            if text in log.read().decode(errors="replace"):
                return
        assert time.monotonic() < deadline, f"{text!r} not in {worker.log} within {timeout}s"
        time.sleep(0.5)


@contextmanager
def connectors_added(
    worker: ConnectWorker, connectors: Sequence[dict], ready: Callable[[int], None] | None = None
) -> Iterator[None]:
    """Add `connectors` to the running worker (POST /connectors), wait until they run (and `ready(log offset)`
    returns), remove them (DELETE /connectors/<name>) when the block ends."""
    since = worker.log.stat().st_size
    added = []
    try:
        for settings in connectors:
            name = str(settings["name"])
            config = {key: str(value) for key, value in {**CONNECTOR_TEST_SETTINGS, **settings}.items()}
            _request(f"{worker.url}/connectors", "POST", {"name": name, "config": config})
            added.append(name)
        for name in added:
            wait_for_connector(worker, name)
        if ready:
            ready(since)
        yield
    finally:
        for name in added:
            with suppress(urllib.error.URLError, OSError):
                _request(f"{worker.url}/connectors/{name}", "DELETE")


def bigquery_datasets(client: Any) -> set[str]:
    return {dataset.dataset_id for dataset in client.list_datasets()}


@contextmanager
def datasets_dropped_after(client: Any) -> Iterator[None]:
    """Drop, when the block ends, the BigQuery datasets created in it: the emulator lives for the whole test
    process, and the next module's sinks land in datasets of the same names."""
    before = bigquery_datasets(client)
    try:
        yield
    finally:
        for dataset in bigquery_datasets(client) - before:
            client.delete_dataset(dataset, delete_contents=True, not_found_ok=True)


def function_environments(
    warehouse: Path,
    connector_emulator_env: tuple[dict[str, str], list[str], Any],
    options: dict[str, str],
    current: tuple[str, str] = ("view", "view"),
) -> list[dict[str, str]]:
    """The function's environment per warehouse: DuckDB's file, then the BigQuery emulator; `current` is each
    one's UNIVIEW_CURRENT (`view`, or `table`: kept by the function on the sink's landed announcements)."""
    return [
        {"UNIVIEW_WAREHOUSE": duckdb_url(warehouse), **options, "UNIVIEW_CURRENT": current[0]},
        {
            "UNIVIEW_WAREHOUSE": f"bigquery://{DEFAULT_PROJECT}",
            "BIGQUERY_EMULATOR_HOST": connector_emulator_env[0]["BIGQUERY_EMULATOR_HOST"],
            **options,
            "UNIVIEW_CURRENT": current[1],
        },
    ]


@contextmanager
def running_stack(
    source: CdcSource,
    worker: ConnectWorker,
    connector_emulator_env: tuple[dict[str, str], list[str], Any],
    work: Path,
    connectors: Sequence[dict],
    view_options: dict[str, str] | None = None,
    ready: Callable[[int], None] | None = None,
    current: tuple[str, str] = ("view", "view"),
) -> Iterator[CdcStack]:
    """The source's Debezium `connectors` added to the shared Connect `worker` (`ready(log offset)` waits for
    what they must have done first) and one function per warehouse (DuckDB, the BigQuery emulator), removed
    and stopped when the block ends, with the BigQuery datasets created meanwhile; `view_options` are more of
    the functions' UNIVIEW_* settings (e.g. UNIVIEW_RENAMES)."""
    warehouse = work / "warehouse.duckdb"
    landings = [duckdb_landing(warehouse), bigquery_landing(connector_emulator_env)]
    options = {**VIEW_OPTIONS, **(view_options or {})}
    with ExitStack() as running:
        running.enter_context(datasets_dropped_after(connector_emulator_env[2]))
        running.enter_context(connectors_added(worker, connectors, ready))
        for landing, environment in zip(
            landings, function_environments(warehouse, connector_emulator_env, options, current), strict=True
        ):
            landing.notify = running.enter_context(function_server(work / landing.name, environment)).url
        yield CdcStack(worker.bootstrap, source, landings, work)


def wait_for_events(stack: CdcStack, count: int) -> None:
    """Until `count` change events are in Kafka, and the schema-change events and tombstones sent with them too
    (a sink resumed before them would read them in a micro-batch of their own)."""
    wait_for_change_events(stack.bootstrap, stack.source.topic_prefixes, count)
    wait_until_prefixes_settle(stack.bootstrap, stack.source.topic_prefixes)


@dataclass
class StreamingSink:
    """`uniview sink --stream` running until stopped, one micro-batch a second over the Kafka topics."""

    landing: Landing
    process: subprocess.Popen
    log: Path

    def tail(self) -> str:
        return self.log.read_text(errors="replace")[-3000:]


def sink_command(stack: CdcStack, landing: Landing) -> list[str]:
    return [
        sys.executable,
        "-m",
        "uniview.cli.main",
        "sink",
        "--format",
        "debezium",
        "--input",
        f"kafka://{stack.bootstrap}/?pattern={stack.source.input_pattern}",
        *landing.sink_args,
        "--dataset-per-database",
        "--stream",
        "--checkpoint",
        str(stack.work / f"ckpt-{landing.name}"),
        "--trigger-interval",
        "1 second",
        "--notify",
        landing.notify,
        "--master",
        "local[1]",
        "--json",
    ]


@contextmanager
def streaming_sinks(stack: CdcStack) -> Iterator[list[StreamingSink]]:
    """One long-running sink per warehouse, each with its checkpoint; stopped with Ctrl-C (SIGINT) at the end."""
    sinks = []
    try:
        for landing in stack.landings:
            log = stack.work / f"sink-{landing.name}.log"
            with open(log, "w") as stderr:
                process = subprocess.Popen(
                    sink_command(stack, landing),
                    stdout=subprocess.PIPE,
                    stderr=stderr,
                    text=True,
                    env={**os.environ, **landing.sink_env},
                    start_new_session=True,  # its own process group, with its Spark JVM: `sinks_paused` stops both
                )
            sinks.append(StreamingSink(landing, process, log))
        yield sinks
    finally:
        for sink in sinks:
            if sink.process.poll() is None:
                sink.process.send_signal(signal.SIGINT)
        for sink in sinks:
            try:
                sink.process.wait(timeout=120)
            except subprocess.TimeoutExpired:
                sink.process.kill()


class SinksPause:
    """The sinks stopped (SIGSTOP to each one's process group: its driver, Spark's JVM and workers) from `pause()` to
    `resume()`, each of which does nothing when the sinks already are so: a step's statements and their change
    events, which reach Kafka over a second or more, are then read by one micro-batch of each sink, not split over
    two at a trigger between them.  A BigQuery batch costs its fixed jobs and the function's refresh of each table it
    touched (several seconds) however few records it holds.  A sink reads its topics by assigned partitions, with no
    consumer group whose session could expire meanwhile."""

    def __init__(self, sinks: Sequence[StreamingSink]) -> None:
        self.sinks = sinks
        self.stopped: list[StreamingSink] = []

    def pause(self) -> None:
        if self.stopped:
            return
        for sink in self.sinks:
            if sink.process.poll() is None:
                os.killpg(sink.process.pid, signal.SIGSTOP)
                self.stopped.append(sink)

    def resume(self) -> None:
        for sink in self.stopped:
            with suppress(ProcessLookupError):
                os.killpg(sink.process.pid, signal.SIGCONT)
        self.stopped = []


@contextmanager
def sinks_paused(sinks: Sequence[StreamingSink]) -> Iterator[None]:
    """The sinks stopped while the block runs, and continued at its end (SinksPause)."""
    pause = SinksPause(sinks)
    try:
        pause.pause()
        yield
    finally:
        pause.resume()


def stopped_summary(sink: StreamingSink) -> dict:
    """Stop a running sink as Ctrl-C does; its exit code must be 0 and its summary what it landed."""
    assert sink.process.poll() is None, (sink.landing.name, "the sink stopped by itself", sink.tail())
    sink.process.send_signal(signal.SIGINT)
    out, _ = sink.process.communicate(timeout=120)
    assert sink.process.returncode == 0, (sink.landing.name, sink.tail())
    return json.loads(out)


def assert_stopped_cleanly(
    sinks: Sequence[StreamingSink], events: dict, quarantined: int = 0, ddl: int = 0
) -> list[dict]:
    """Stop every sink with Ctrl-C: each wrote every change event (and `ddl` schema-change events, which land in
    the control table `_uniview_ddl`), quarantined `quarantined`, left none pending."""
    summaries = []
    for sink in sinks:
        summary = stopped_summary(sink)
        assert (summary["written"], summary["quarantined"], summary["pending"]) == (
            sum(events.values()) + ddl,
            quarantined,
            [],
        ), (sink.landing.name, summary)
        assert summary["read"] == summary["written"] + summary["quarantined"] + summary["skipped"], (
            sink.landing.name,
            summary,
        )
        assert summary["stopped_by"] == "SIGINT", (sink.landing.name, summary)
        summaries.append(summary)
    return summaries


#: The names of `changes_sql`'s figures, beside the current rows in one read (`read_views`).
FIGURES = ("uniview_changes", "uniview_sequenced", "uniview_distinct", "uniview_databases")


def changes_sql(landing: Landing, database: str, table: str) -> str:
    """(changes, changes with a sequence, distinct (sequence, operation) pairs, the database column's values) in
    the unified view.  A primary-key UPDATE is a DELETE of the old key and an INSERT of the new one from one row
    of the log, so the two share their `_cdc_sequence` and differ in their operation; the rows of one chunk of an
    incremental snapshot share the log position it was read at, or have none (PostgreSQL's carry no LSN), so each
    SNAPSHOT row counts once, with or without a sequence."""
    changes, sequenced, distinct, databases = FIGURES
    return (
        f"SELECT count(*) AS {changes}, count(_cdc_sequence) + count(CASE WHEN _cdc_operation = 'SNAPSHOT' "
        f"AND _cdc_sequence IS NULL THEN 1 END) AS {sequenced}, count(DISTINCT CASE WHEN _cdc_operation <> 'SNAPSHOT' "
        f"THEN concat(_cdc_sequence, ' ', _cdc_operation) END) + count(CASE WHEN _cdc_operation = 'SNAPSHOT' THEN 1 END) "
        f"AS {distinct}, {landing.distinct_list}(DISTINCT _cdc_database) AS {databases} "
        f"FROM {database}_unified.{landing.quote(table + '_unified')}"
    )


def views_sql(source: CdcSource, landing: Landing, database: str, table: str, columns: Sequence[str]) -> str:
    """`columns` read through `<table>_current` in the source's key order, each row followed by a marker (1) and
    `changes_sql`'s figures, in one query: a current view with no row gives one row of NULLs and the figures.
    One query, not two, a table and a comparison: each is a job on the emulator, which also runs the sinks' and
    the function's jobs."""
    listed = ", ".join(map(landing.quote, columns))
    current = f"SELECT {listed}, 1 AS uniview_present FROM {database}_unified.{landing.quote(table + '_current')}"
    return (
        f"SELECT current_rows.*, figures.* FROM ({changes_sql(landing, database, table)}) AS figures "
        f"LEFT JOIN ({current}) AS current_rows ON TRUE ORDER BY {source.order_by(table)}"
    )


def read_views(
    source: CdcSource, landing: Landing, database: str, table: str, expected: list[tuple]
) -> tuple[list[tuple], list[tuple], tuple]:
    """`<table>_current`'s rows (every column the source table has, normalized), `expected` with the cells
    `source.unknown` names read as unknown where the view shows them so (`unknown_accepted`), and the unified
    view's figures (`changes_sql`)."""
    columns = source.columns(database, table)
    read = [*columns, "_cdc_unavailable"] if source.unknown is not None else columns
    rows = landing.read(views_sql(source, landing, database, table, read))
    figures = rows[0][-len(FIGURES) :]
    shown = [row[: len(read)] for row in rows if row[len(read)] is not None]
    changes = (*figures[:3], list(figures[3]))
    if source.unknown is None:
        return source.normalize(shown), expected, changes
    through_view = source.normalize([row[:-1] for row in shown])
    cells = source.unknown(database, table)
    accepted = unknown_accepted(expected, through_view, [row[-1] for row in shown], columns, cells)
    return through_view, accepted, changes


def unknown_accepted(
    expected: Sequence[tuple],
    current: Sequence[tuple],
    unavailable: Sequence[Sequence[str] | None],
    columns: Sequence[str],
    cells: dict[Any, dict[str, str]],
) -> list[tuple]:
    """`expected` (the source's rows, the key first) with each cell `cells` lists ({key: {column: how}}) as NULL
    where `current` (the view's rows; `unavailable`, each one's `_cdc_unavailable`) shows it as uniview shows a
    value it cannot know: NULL with the column named in `_cdc_unavailable` (how "named": a default computed by
    the source, docs/current-state.md), or NULL (how "null": a default the stream does not carry, so nothing
    tells it from none), or whatever the view shows (how "any": a default the connector declares wrongly,
    docs/sources.md).  Every other cell stays as the source has it: an unchanged TOASTed value named in
    `_cdc_unavailable` must still show the value the key sent before."""
    shown = {row[0]: (row, names or ()) for row, names in zip(current, unavailable, strict=True)}
    lowered = [column.lower() for column in columns]
    accepted = []
    for row in expected:
        values = list(row)
        view, names = shown.get(row[0], ((), ()))
        named = {name.lower() for name in names}
        for column, how in cells.get(int(row[0]), {}).items() if view else ():
            at = lowered.index(column.lower()) if column.lower() in lowered else None
            if at is not None and how == "any":
                values[at] = view[at]
            elif at is not None and view[at] is None and (how == "null" or column.lower() in named):
                values[at] = None
        accepted.append(tuple(values))
    return accepted


def as_shown(expected: Sequence[tuple], current: Sequence[tuple]) -> list[tuple]:
    """`expected` (the source's rows, the key first) with each whole number, boolean or bytes written as its text
    where `current` (the view's rows) shows that cell as text: a column whose versions the views unify to STRING (BOOL
    and INT64 after `boolean` -> `int`, docs/generator.md) shows a number as CAST(x AS STRING) does, bytes as
    SAFE_CONVERT_BYTES_TO_STRING does (MariaDB's `bit(8)` in a column another type had before), and a
    PostgreSQL numeric without a scale as the number's text, at the source's scale or its shortest."""
    shown = {row[0]: row for row in current}
    return [
        tuple(
            _as_text(value, view) if isinstance(view, str) and not isinstance(value, str) else value
            for value, view in zip(row, shown[row[0]], strict=True)
        )
        if row[0] in shown
        else row
        for row in expected
    ]


def emulator_holds(landing: Landing, expected: Sequence[tuple], columns: Sequence[str], doubles: dict[str, int]) -> set:
    """The keys of the rows the BigQuery emulator quarantines where BigQuery lands them: it computes a BIGNUMERIC as
    a DOUBLE, so a value whose double has more integer digits than its column holds does not fit there
    (9999999999999999999999999999.9999999999 in a BIGNUMERIC(38, 10) is the double 1E+28), compared as doubles."""
    if landing.name != "bigquery" or not doubles:
        return set()
    digits = {n: doubles[c] for n, c in enumerate(columns) if c in doubles}
    return {
        row[0]
        for row in expected
        if any(
            isinstance(row[n], Decimal) and row[n].is_finite() and abs(float(row[n])) >= 10.0**d
            for n, d in digits.items()
        )
    }


#: The fraction digits the BigQuery emulator keeps of a BIGNUMERIC (BigQuery keeps 38): `decimal(65,30)`'s -1E-30
#: reads 0 there, 1.5E-18 reads 2E-18 (seed 9764).
EMULATOR_BIGNUMERIC_PLACES = 18
#: The emulator's BIGNUMERIC step: one unit of its last kept fraction digit.
_EMULATOR_BIGNUMERIC_STEP = Decimal(1).scaleb(-EMULATOR_BIGNUMERIC_PLACES)


def emulator_rounded(landing: Landing, rows: Sequence[tuple], columns: Sequence[str], doubles: Collection[str]) -> list:
    """`rows` with each finite number of the `doubles` columns rounded as the emulator keeps it, on its landing."""
    if landing.name != "bigquery":
        return list(rows)
    with localcontext(Context(prec=200)):
        return _each_double(rows, columns, doubles, _at_emulator_places)


def as_doubles(rows: Sequence[tuple], columns: Sequence[str], doubles: Collection[str]) -> list[tuple]:
    """`rows` with each finite number of the `doubles` columns as the double nearest to it (as a Decimal)."""
    return _each_double(rows, columns, doubles, _as_double)


def _each_double(
    rows: Sequence[tuple], columns: Sequence[str], doubles: Collection[str], convert: Callable[[Any], Any]
) -> list[tuple]:
    """`rows` with `convert` applied to each value of the `doubles` columns (named without case)."""
    wanted = {name.lower() for name in doubles}
    at = {n for n, column in enumerate(columns) if column.lower() in wanted}
    if not at:
        return list(rows)
    return [tuple(convert(v) if n in at else v for n, v in enumerate(row)) for row in rows]


def _at_emulator_places(value: Any) -> Any:
    if isinstance(value, Decimal) and value.is_finite():
        return value.quantize(_EMULATOR_BIGNUMERIC_STEP, rounding=ROUND_HALF_UP)
    return value


def _as_double(value: Any) -> Any:
    if isinstance(value, Decimal) and value.is_finite():
        return Decimal(repr(float(value)))
    return value


def _as_text(value: Any, view: str) -> Any:
    # PostgreSQL's numeric without a scale is a STRING of the number: at its shortest scale as the connector sends
    # it (docs/sink.md), at the source's where a type change converted an older row
    texts = (format(value, "f"), format(value.normalize(), "f")) if isinstance(value, Decimal) else ()
    if value == value and view in texts:  # not NaN
        return view
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, bytes):  # BYTES unified with another type: SAFE_CONVERT_BYTES_TO_STRING's text
        return _safe_text(value)
    if isinstance(value, Decimal) and value.is_finite() and value == value.to_integral_value():
        return str(int(value))
    return value


def _safe_text(value: bytes) -> str:
    """BigQuery's SAFE_CONVERT_BYTES_TO_STRING: the UTF-8 text, each byte of an ill-formed sequence U+FFFD."""
    text = value.decode("utf-8", "surrogateescape")
    return "".join("\ufffd" if "\udc80" <= character <= "\udcff" else character for character in text)


def source_read_once(source: CdcSource) -> CdcSource:
    """`source` whose `rows` and `columns` read each table once while it is kept: the sources do not change while a
    step is compared, so every landing and every attempt of the comparison compares the same read.  Reads from
    several threads (one per landing) share it."""
    lock = threading.Lock()
    read: dict[tuple, Any] = {}

    def once(what: str, reader: Callable[[str, str], Any]) -> Callable[[str, str], Any]:
        def cached(database: str, table: str) -> Any:
            with lock:
                if (what, database, table) not in read:
                    read[(what, database, table)] = reader(database, table)
                return read[(what, database, table)]

        return cached

    return replace(source, rows=once("rows", source.rows), columns=once("columns", source.columns))


def landing_mismatches(stack: CdcStack, landing: Landing, events: dict, source: CdcSource | None = None) -> list:
    """What differs, per source database and table, between the source (`stack.source`, or `source`: the same one
    read once, `source_read_once`) and `landing`'s views."""
    source = source or stack.source
    mismatches: list[tuple] = []
    for database in source.databases:
        for table in source.tables:
            rows = source.rows(database, table)
            if not rows and events.get((database, table), 0) == 0:
                continue
            expected = source.normalize(rows)
            held = stack.held_keys.setdefault((database, table), set())
            held |= unheld_keys(expected)
            doubles = source.approximate(database, table) if source.approximate is not None else {}
            columns = source.columns(database, table) if doubles else []
            emulated = stack.emulator_held_keys.setdefault((database, table), set())
            emulated |= emulator_holds(landing, expected, columns, doubles)
            unheld = held | (emulated if landing.name == "bigquery" else set())
            if unheld:
                stack.held_back.add((database, table))
            try:
                through_view, expected, changes = read_views(source, landing, database, table, expected)
                carried = stack.carried_quarantine.get((landing.name, database, table))
                held_back = (database, table) in stack.held_back or carried is not None
                reasons = quarantined_records(landing, database, table) if held_back else []
            except Exception as error:  # a view the function has not created or refreshed yet
                mismatches.append((landing.name, database, table, f"{type(error).__name__}: {error}"[:300]))
                continue
            expected, through_view = (
                as_doubles(emulator_rounded(landing, expected, columns, doubles), columns, doubles),
                as_doubles(through_view, columns, doubles),
            )
            expected = as_shown([row for row in expected if row[0] not in unheld], through_view)
            through_view = [row for row in through_view if row[0] not in unheld]
            if through_view != expected:
                mismatches.append((landing.name, database, table, "current rows", through_view, expected))
            if set(reasons) - {"type_mismatch"}:
                mismatches.append((landing.name, database, table, "quarantined", reasons))
            wanted = events[(database, table)] - len(reasons) - (carried or 0)
            if changes != (wanted, wanted, wanted, [database]):
                mismatches.append((landing.name, database, table, "changes", changes, wanted))
    return mismatches


def topic_end_offsets(bootstrap: str, pattern: str) -> dict[str, dict[str, int]]:
    """{topic: {partition: the offset after its last message}} of every topic the sink's `pattern` subscribes to."""
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=bootstrap)
    try:
        topics = [topic for topic in consumer.topics() if re.fullmatch(pattern, topic)]
        partitions = [TopicPartition(t, p) for t in topics for p in consumer.partitions_for_topic(t) or ()]
        ends = consumer.end_offsets(partitions) if partitions else {}
    finally:
        consumer.close()
    return {topic: {str(p.partition): end for p, end in ends.items() if p.topic == topic} for topic in topics}


def committed_offsets(checkpoint: Path) -> dict[str, dict[str, int]]:
    """The Kafka offsets up to which the sink's last committed micro-batch read (its announcements answered, as
    a batch commits only after them); {} before its first commit."""
    commits = [int(path.name) for path in (checkpoint / "commits").glob("[0-9]*")]
    if not commits:
        return {}
    lines = (checkpoint / "offsets" / str(max(commits))).read_text().splitlines()
    return json.loads(lines[-1])


def wait_until_sinks_caught_up(
    stack: CdcStack, sinks: Sequence[StreamingSink], timeout: float, ends: dict[str, dict[str, int]] | None = None
) -> None:
    """Until every sink has committed a micro-batch that read each of its topics to the end (`ends`, read now when
    not given): only then can the views show the step, so the warehouses are not queried before (BigQuery's reads
    load the emulator that the function's refresh runs on). A sink that stays behind is left to the comparison's
    own timeout."""
    ends = topic_end_offsets(stack.bootstrap, stack.source.input_pattern) if ends is None else ends
    deadline = time.monotonic() + timeout
    pending = list(sinks)
    while pending and time.monotonic() < deadline:
        for sink in pending:
            assert sink.process.poll() is None, (sink.landing.name, "the sink stopped", sink.tail())
        read = {sink.landing.name: committed_offsets(stack.work / f"ckpt-{sink.landing.name}") for sink in pending}
        pending = [
            sink
            for sink in pending
            if any(
                read[sink.landing.name].get(topic, {}).get(partition, 0) < end
                for topic, partitions in ends.items()
                for partition, end in partitions.items()
            )
        ]
        if pending:
            time.sleep(0.1)


#: Seconds between two comparisons of a landing whose views do not match yet (a refresh still running).
RECOMPARE_SECONDS = 0.25


def wait_until_views_match_sources(
    stack: CdcStack,
    sinks: Sequence[StreamingSink],
    events: dict,
    timeout: float = 360,
    matched: dict[str, Callable[[], None]] | None = None,
) -> None:
    """Until every view agrees with its source table and holds each change once; fails with the differences.
    Each landing is compared as soon as its own sink has caught up, side by side (DuckDB's while BigQuery's batch
    still lands), with the source tables read once for all (`source_read_once`); `matched[landing name]`, when
    given, runs once that landing's views match (a check that reads only that warehouse)."""
    deadline = time.monotonic() + timeout
    ends = topic_end_offsets(stack.bootstrap, stack.source.input_pattern)
    source = source_read_once(stack.source)
    with ThreadPoolExecutor(max_workers=len(sinks)) as pool:
        waits = [
            pool.submit(_wait_until_landing_matches, stack, source, sink, sinks, events, (deadline, ends))
            for sink in sinks
        ]
        timings = []
        for sink, wait in zip(sinks, waits, strict=True):
            timings.append(wait.result())
            then = (matched or {}).get(sink.landing.name)
            if then is not None:
                started = time.monotonic()
                then()
                timings[-1] += f", then {time.monotonic() - started:.1f}s"
    print("timing: " + "; ".join(timings))


def _wait_until_landing_matches(
    stack: CdcStack,
    source: CdcSource,
    sink: StreamingSink,
    sinks: Sequence[StreamingSink],
    events: dict,
    until: tuple[float, dict[str, dict[str, int]]],
) -> str:
    """Until `sink`'s landing's views agree with the source; what it took, as a `timing:` part."""
    started = time.monotonic()
    deadline, ends = until
    wait_until_sinks_caught_up(stack, [sink], deadline - started, ends)
    caught_up, compared = time.monotonic(), 1
    while True:
        with sink.landing.reading():
            mismatches = landing_mismatches(stack, sink.landing, events, source)
        if not mismatches:
            break
        for each in sinks:
            assert each.process.poll() is None, (each.landing.name, "the sink stopped", each.tail())
        assert time.monotonic() < deadline, (mismatches, [each.tail() for each in sinks])
        time.sleep(RECOMPARE_SECONDS)
        compared += 1
    name = sink.landing.name
    return f"{name} caught up {caught_up - started:.1f}s, views {time.monotonic() - caught_up:.1f}s ({compared}x)"


@dataclass(frozen=True)
class Writes:
    """Statements run on one source database, and the change events they publish: `changes` of `table`, or a
    {table: changes} mapping for several tables."""

    database: str
    table: str | dict[str, int]
    statements: Sequence[str]
    changes: int = 0


def step(
    stack: CdcStack,
    sinks: Sequence[StreamingSink],
    events: dict,
    database: str,
    table: str | dict[str, int],
    statements: Sequence[str],
    changes: int = 0,
) -> None:
    """Run `statements` on `database`, count the change events they publish (`changes` of `table`, or a
    {table: changes} mapping for several tables), and wait until the views match the sources again."""
    steps_together(stack, sinks, events, Writes(database, table, statements, changes))


def steps_together(stack: CdcStack, sinks: Sequence[StreamingSink], events: dict, *writes: Writes) -> None:
    """Run each of `writes` in turn, then wait once until the views match the sources again: writes to different
    tables share one catch-up of the sinks, and every table is still compared with its source after it.  The sinks
    are paused until every change event of the writes is in Kafka, so each lands them in one micro-batch."""
    with sinks_paused(sinks):
        for write in writes:
            stack.source.run(write.database, *write.statements)
            published = write.table if isinstance(write.table, dict) else {write.table: write.changes}
            for name, count in published.items():
                events[(write.database, name)] = events.get((write.database, name), 0) + count
        started = time.monotonic()
        wait_for_events(stack, sum(events.values()))
        print(f"timing: kafka {time.monotonic() - started:.1f}s")
    wait_until_views_match_sources(stack, sinks, events)
