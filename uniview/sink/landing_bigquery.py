"""The BigQuery warehouse: tables created with google-cloud-bigquery, rows written by the
spark-bigquery-connector that Dataproc ships (Storage Write API, `writeMethod=direct`), exactly once.

Spark writes a batch's lines, as they are, into a staging table of the control dataset (one connector
write: Spark parses nothing).  The load step is BigQuery's: one query reads the routing keys, the driver
routes them against the version tables, and a script types and judges every line into typed staging
tables with the sink's type rules rendered for BigQuery (uniview.sink.bigquery_typing), the same rules
DuckDB's load step runs.  Set-based INSERTs then move the rows into their version and quarantine tables
in transactions of at most 100 tables (uniview.sink.bigquery_promotion), so a batch's cost in Spark jobs
and requests does not grow with the tables it feeds.
The typing script also reads which of the batch's tables consolidation folded and the plan an earlier attempt
recorded, so those reads are no jobs of their own.  The steps table records the batch's plan (the tables it
creates, for the notifications; recorded only by a batch that creates tables) and each part that committed; the
ledger records the landed batch.  A batch replayed after a crash (even
`kill -9`) skips what is recorded: every row lands once.  Only BigQueryLanding's methods talk to
BigQuery; the schemas and statements they use are built by pure functions.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import Counter, defaultdict
from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from functools import partial
from typing import Any

from pyspark.sql import DataFrame

from uniview.core.errors import NotFoundError, WarehouseError
from uniview.core.identifiers import quote_path, string_literal
from uniview.core.landing_layout import (
    ADDED_BY_SINK,
    CDC_COLUMNS,
    DEFAULT_GRANULARITY,
    QUARANTINE_TABLE,
    TableLayout,
    check_granularity,
    missing_cdc_columns,
    quarantine_layout,
    table_layout,
)
from uniview.core.types import Array, BQType, Scalar, Struct, parse_type
from uniview.sink.bigquery_promotion import (
    STEPS_TABLE,
    BatchReads,
    TypedBatch,
    batch_filter,
    batch_reads,
    group_parts,
    part_script,
    quarantine_inserts,
    route_inserts,
    step_recorded_once,
)
from uniview.sink.bigquery_typing import STAGED_ROUTE, keys_query, too_wide, typing_scripts
from uniview.sink.failpoints import reach
from uniview.sink.frames import MAX_RAW_BYTES, QUARANTINE_COLUMNS
from uniview.sink.landing import (
    LEDGER_TABLE,
    BatchCounts,
    BatchKey,
    Landing,
    LineBatch,
    known_version,
    source_schema_comment,
)
from uniview.sink.load_sql import decisions_json, first_seen_of, key_of
from uniview.sink.notify import Notification
from uniview.sink.pending import PendingStore
from uniview.sink.reasons import SKIPPED
from uniview.sink.routing import KnownVersion, VersionRoute, redirected, reject_routes
from uniview.warehouse.bigquery_folds import FOLDED_MESSAGE, folded_guard, redirected_query, registry_ddl
from uniview.warehouse.url import BIGQUERY, WarehouseURL

RETRY_DEADLINE = 120.0
#: The prefix of staging tables, in the control dataset.
STAGING_PREFIX = "_uniview_staging_"
DEFAULT_WRITE_OPTIONS = {"writeMethod": "direct"}
#: How often one part is redirected again when consolidation keeps folding its targets.
MAX_FOLDED_RETRIES = 5


def schema_field(name: str, bq_type: BQType, description: str | None = None) -> dict:
    """The tables.insert representation of one column (REPEATED for ARRAY, RECORD for STRUCT)."""
    mode = "NULLABLE"
    if isinstance(bq_type, Array):
        mode, bq_type = "REPEATED", bq_type.element
    field: dict[str, Any] = {"name": name, "mode": mode}
    if isinstance(bq_type, Struct):
        field.update(type="RECORD", fields=[schema_field(f.name, f.type) for f in bq_type.fields])
    elif isinstance(bq_type, Scalar):
        field["type"] = bq_type.name
        if bq_type.name in ("NUMERIC", "BIGNUMERIC") and bq_type.params:
            field["precision"] = str(bq_type.params[0])
            field["scale"] = str(bq_type.params[1] if len(bq_type.params) > 1 else 0)
        elif bq_type.params:
            field["maxLength"] = str(bq_type.params[0])
    if description:
        field["description"] = description
    return field


def version_table_schema(route: VersionRoute) -> list[dict]:
    """The declared columns (described by their source types), then the CDC columns."""
    fields = [
        schema_field(c.name, c.bq_type, c.declared_type and f"source type: {c.declared_type}") for c in route.columns
    ]
    return fields + [schema_field(name, parse_type(bq)) for name, bq in CDC_COLUMNS]


def quarantine_table_schema() -> list[dict]:
    return [schema_field(name, parse_type(bq)) for name, bq in QUARANTINE_COLUMNS]


def version_table_layout(route: VersionRoute, granularity: str = DEFAULT_GRANULARITY) -> TableLayout:
    """The route's table partitioned by `_cdc_ingested_at`, clustered by `_cdc_database` and its primary key."""
    columns = [(c.name, c.bq_type) for c in route.columns] + [(n, parse_type(bq)) for n, bq in CDC_COLUMNS]
    return table_layout(columns, route.primary_key, granularity)


def table_resource(
    project: str, dataset: str, table: str, schema: list[dict], description: str | None, layout: TableLayout | None
) -> dict[str, Any]:
    """The tables.insert body of a table the sink creates: its schema, description and layout."""
    resource: dict[str, Any] = {
        "tableReference": {"projectId": project, "datasetId": dataset, "tableId": table},
        "schema": {"fields": schema},
        **(layout.api_resource() if layout else {}),
    }
    if description:
        resource["description"] = description
    return resource


def write_options(project: str, dataset: str, table: str, extra: Mapping[str, str]) -> dict[str, str]:
    """Connector options for appending to `project.dataset.table`; `extra` (--bigquery-option) wins."""
    return {**DEFAULT_WRITE_OPTIONS, **extra, "table": f"{project}.{dataset}.{table}"}


def _staging_prefix(key: BatchKey) -> str:
    return f"{STAGING_PREFIX}{hashlib.sha256(key.label.encode()).hexdigest()[:16]}_"


class BigQueryLanding(Landing):
    """Version tables and quarantine tables in the datasets of `project`."""

    max_line_bytes = MAX_RAW_BYTES

    def __init__(
        self,
        project: str,
        pending: PendingStore,
        write_extra: Mapping[str, str] | None = None,
        control_dataset: str = "uniview",
        partition_granularity: str = DEFAULT_GRANULARITY,
    ) -> None:
        from uniview.warehouse.bigquery import make_client

        self.project = project
        #: The time-unit partitioning of the version tables this landing creates (docs/sink.md).
        self.partition_granularity = check_granularity(partition_granularity)
        #: Where the ledger, the steps table and the staging tables live.
        self.control_dataset = control_dataset
        #: What this landing asked of BigQuery: "request" (API calls and query jobs), "connector write".
        self.api_calls: Counter = Counter()
        #: The wall seconds spent in each kind of call (the same keys): the warehouse's share of a batch.
        self.api_seconds: defaultdict[str, float] = defaultdict(float)
        self._control_ready = False
        self.url = str(WarehouseURL(BIGQUERY, project))
        self.pending = pending
        self.write_extra = dict(write_extra or {})
        self._client = make_client(project)
        #: Tables seen to exist, kept for the run: a version table's schema never changes, so later
        #: batches of a stream ask BigQuery only about tables they have not seen yet.
        self._known: dict[tuple[str, str], KnownVersion] = {}
        self._existing: set[tuple[str, str]] = set()
        #: The datasets whose quarantine table has every column of QUARANTINE_COLUMNS.
        self._current_quarantines: set[str] = set()

    def known_versions(self, tables: Collection[tuple[str, str]]) -> Mapping[tuple[str, str], KnownVersion]:
        from uniview.warehouse.bigquery_schema import field_type

        known = {table: self._known[table] for table in tables if table in self._known}
        for dataset, table in sorted(set(tables) - set(known)):
            found = self._call(
                f"get table {dataset}.{table}",
                partial(self._client.get_table, f"{self.project}.{dataset}.{table}"),
                missing_ok=True,
            )
            if found is not None:
                columns = tuple((f.name, field_type(f)) for f in found.schema)
                columns += self._add_sink_columns(dataset, table, [name for name, _ in columns])
                known[(dataset, table)] = known_version(found.description, columns)
                self._existing.add((dataset, table))
                if not known[(dataset, table)].missing_cdc_columns:  # an older layout is read again once migrated
                    self._known[(dataset, table)] = known[(dataset, table)]
        return known

    def _add_sink_columns(self, dataset: str, table: str, names: list[str]) -> tuple[tuple[str, BQType], ...]:
        """Add the CDC columns an older version table lacks that the sink adds itself
        (landing_layout.ADDED_BY_SINK), when it has the others; the columns added."""
        missing = missing_cdc_columns(names)
        added = [(name, bq) for name, bq in missing if name in ADDED_BY_SINK]
        if not added or len(added) < len(missing):
            return ()
        clauses = ", ".join(f"ADD COLUMN IF NOT EXISTS {name} {bq}" for name, bq in added)
        self._script(
            f"add {', '.join(n for n, _ in added)} to {dataset}.{table}",
            f"ALTER TABLE {quote_path(self.project, dataset, table)} {clauses}",
        )
        return tuple((name, parse_type(bq)) for name, bq in added)

    def landed(self, key: BatchKey) -> BatchCounts | None:
        self._ensure_control_tables()
        rows = self._rows(
            f"read the ledger for {key.label}",
            f"SELECT counts FROM {self._control(LEDGER_TABLE)} WHERE {batch_filter(key)}",
        )
        if not rows:
            return None
        self._drop_leftover_staging(key)
        return BatchCounts.from_json(rows[0][0], replayed=True)

    def _drop_leftover_staging(self, key: BatchKey) -> None:
        """A batch that landed but was not committed to Spark's checkpoint may have left its staging tables."""
        prefix = _staging_prefix(key)
        for table in self._call(
            f"list {self.control_dataset}",
            lambda: list(self._client.list_tables(f"{self.project}.{self.control_dataset}")),
        ):
            if table.table_id.startswith(prefix):
                self._call(f"drop {table.table_id}", partial(self._client.delete_table, table, not_found_ok=True))

    def land_lines(self, batch: LineBatch) -> BatchCounts:
        """Stage the lines, type them, create the tables, promote part by part, record: see the module's protocol."""
        self._ensure_control_tables()
        prefix = _staging_prefix(batch.key)
        reach("before-stage")
        self._stage(f"{prefix}lines", batch.frame)
        reach("after-stage")
        staging = [f"{prefix}lines"]
        try:
            typed, route_rows, counts, quarantined, reads = self._type(batch, prefix, staging)
            reach("after-type")
            live = _redirect(typed, reads.folded)
            counts.written = _written(live, route_rows)
            counts.created = self._planned_creations(live, counts, reads.plan)
            self._create_tables(live, route_rows, quarantined)
            # Parts are grouped by the batch's own routes, so a redirect never moves an insert to
            # another part: a replay skips exactly the parts that committed.
            groups = group_parts(self._inserts(typed, quarantined, route_rows))
            first = 0
            for number, part in enumerate(groups):
                live = self._promote(
                    typed, live, (quarantined, route_rows), number, range(first, first + len(part)), counts
                )
                first += len(part)
                reach("after-part")
            if batch.notify:
                self.pending.add(counts.created)
            reach("before-ledger")
            # the batch's ingestion range: its parts stamped rows after its first step and before its ledger row
            recorded = self._rows(
                f"record {batch.key.label}",
                f"INSERT INTO {self._control(LEDGER_TABLE)} "
                f"(stream, batch_id, counts, landed_at) VALUES ({string_literal(batch.key.stream)}, "
                f"{batch.key.batch_id}, {string_literal(counts.to_json())}, CURRENT_TIMESTAMP());\n"
                + _drops(self.project, self.control_dataset, staging)
                + f"SELECT (SELECT MIN(at) FROM {self._control(STEPS_TABLE)} WHERE {batch_filter(batch.key)}), "
                f"(SELECT MAX(landed_at) FROM {self._control(LEDGER_TABLE)} WHERE {batch_filter(batch.key)})",
            )
            staging = []
            if recorded and recorded[0][0] is not None and recorded[0][1] is not None and counts.total_written:
                counts.ingested = (recorded[0][0].isoformat(), recorded[0][1].isoformat())
            reach("after-ledger")
        finally:
            if staging:
                self._call(f"drop the staging tables of {batch.key.label}", partial(self._drop, staging))
        return counts

    def _type(
        self, batch: LineBatch, prefix: str, staging: list[str]
    ) -> tuple[TypedBatch, Counter, BatchCounts, set[str], BatchReads]:
        """Route the staged lines and type them into typed staging tables (added to `staging` as they are made):
        the typed batch, its rows per route, its counts (rows read, quarantined and skipped per reason), the
        datasets whose quarantine gets rows, and what the typing read of the control dataset (BatchReads)."""
        lines = self._control(staging[0])
        try:
            rows = self._rows(f"read the keys of {batch.key.label}", keys_query(lines, batch.rewritten))
        except NotFoundError:  # no line was staged
            return TypedBatch(batch.key, 0, [], [], batch.notify), Counter(), BatchCounts(), set(), BatchReads({}, None)
        plan = batch.route({key_of(row): first_seen_of(row) for row in rows}, self.known_versions)
        plan = reject_routes(plan, too_wide(plan.routes))
        chunks, scripts = typing_scripts(
            self.project,
            self.control_dataset,
            lines,
            batch.rewritten,
            plan.routes,
            batch.fallback_dataset,
            batch.key.label,
            prefix,
            batch_reads(self.project, self.control_dataset, batch.key, _targets(plan.routes)),
        )
        parameter = [("decisions", decisions_json(plan))]
        counts, route_rows, quarantined, staged, read = BatchCounts(), Counter[int](), set[str](), 0, []
        for number, script in enumerate(scripts):
            staging.extend(script.tables)
            typed = self._rows(f"type {batch.key.label} ({number + 1} of {len(scripts)})", script.sql, parameter)
            for route, reason, dataset, lines_read, detail in typed:
                if route == STAGED_ROUTE:  # every script reads all the staged lines
                    staged = lines_read
                    continue
                if route is not None and route < STAGED_ROUTE:  # a row of the batch's reads
                    read.append((route, reason, dataset, lines_read, detail))
                    continue
                counts.read += lines_read
                if reason is None:
                    route_rows[route] += lines_read
                else:
                    counts.count_reason(reason, lines_read)
                    if reason not in SKIPPED:
                        quarantined.add(dataset)
        if staged != counts.read:
            raise WarehouseError(
                f"batch {batch.key.label}: {staged} lines were staged but {counts.read} were typed; nothing was written"
            )
        typed_batch = TypedBatch(batch.key, counts.read, plan.routes, chunks, batch.notify)
        return typed_batch, route_rows, counts, quarantined, BatchReads.from_rows(read)

    def _inserts(self, batch: TypedBatch, quarantined: set[str], route_rows: Mapping[int, int]) -> list:
        return route_inserts(self.project, self.control_dataset, batch, route_rows) + quarantine_inserts(
            self.project, self.control_dataset, sorted(quarantined), QUARANTINE_TABLE, batch
        )

    def _redirected(self, batch: TypedBatch) -> TypedBatch:
        """The batch with each route to a folded version sent to its successor, the registry read again
        (docs/consolidation.md)."""
        targets = _targets(batch.routes)
        rows = (
            self._rows(
                f"read the folded versions for {batch.key.label}",
                redirected_query(self.project, self.control_dataset, targets),
            )
            if targets
            else []
        )
        return _redirect(batch, {(dataset, table): successor for dataset, table, successor in rows})

    def _promote(
        self, batch: TypedBatch, live: TypedBatch, staged: tuple, number: int, positions: range, counts: BatchCounts
    ) -> TypedBatch:
        """Run one part's transaction.  When consolidation folded one of its targets after the batch
        read the registry, the transaction fails whole; the registry is read again, successors are
        created, and the part runs again.  The batch as it was last redirected.  `staged`: the datasets with
        quarantined rows, the rows per route."""
        quarantined, route_rows = staged
        for _ in range(MAX_FOLDED_RETRIES):
            part = [self._inserts(live, quarantined, route_rows)[i] for i in positions]
            guard = folded_guard(self.project, self.control_dataset, {insert.target for insert in part})
            try:
                self._script(
                    f"promote part {number} of {batch.key.label}",
                    part_script(self.project, self.control_dataset, batch.key, number, part, guard),
                )
                return live
            except WarehouseError as error:
                if FOLDED_MESSAGE not in str(error):
                    raise
            live = self._redirected(batch)
            counts.written = _written(live, route_rows)
            counts.created.extend(n for n in self._create_tables(live, route_rows, set()) if n not in counts.created)
        raise WarehouseError(
            f"batch {batch.key.label}: its tables kept being folded while it was promoted "
            f"({MAX_FOLDED_RETRIES} attempts); nothing of part {number} was written"
        )

    def _stage(self, name: str, frame: DataFrame) -> None:
        """Write the batch's lines into a fresh staging table (a table left by an attempt that crashed is dropped
        first; a batch with no line leaves none)."""
        self._call(f"drop {name}", partial(self._drop, [name]))
        self.api_calls["connector write"] += 1
        self._append(frame, self.control_dataset, name)

    def _drop(self, tables: Sequence[str]) -> None:
        for name in tables:
            self._client.delete_table(f"{self.project}.{self.control_dataset}.{name}", not_found_ok=True)

    def _planned_creations(self, batch: TypedBatch, counts: BatchCounts, recorded: str | None) -> list[Notification]:
        """The version tables this batch creates, as recorded by its first attempt (`recorded`, read with the
        typing: a replay finds the tables already there but must still announce them).  Recorded before the
        tables are created, by a batch that creates any: a batch that creates none records no plan, and its
        replay finds the same tables there."""
        if recorded is None:
            written = {name for name, rows in counts.written.items() if rows}
            created = [
                Notification(r.dataset, r.table, r.version)
                for r in batch.routes
                if not r.exists and f"{r.dataset}.{r.table_name}" in written
            ]
            if not created:
                return []
            plan = json.dumps([n.as_record() for n in created])
            recorded = self._rows(
                f"record the plan of {batch.key.label}",
                step_recorded_once(self.project, self.control_dataset, batch.key, "plan", plan),
            )[0][0]
        return [Notification.from_record(n) for n in json.loads(recorded)]

    def _create_tables(
        self, batch: TypedBatch, route_rows: Mapping[int, int], quarantined: set[str]
    ) -> list[Notification]:
        """Create the version tables the batch writes rows to (and quarantine tables); the versions created."""
        created = []
        for index, route in enumerate(batch.routes):
            if route_rows.get(index) and self.create_version_table(route):
                created.append(Notification(route.dataset, route.table, route.version))
        for dataset in sorted(quarantined):
            self.create_quarantine_table(dataset)
        return created

    def _ensure_control_tables(self) -> None:
        """The ledger, the steps table and the consolidation registry, created once per run."""
        if self._control_ready:
            return
        self._call(
            f"create dataset {self.control_dataset}",
            lambda: self._client.create_dataset(f"{self.project}.{self.control_dataset}", exists_ok=True),
        )
        self._script(
            "create the ledger",
            f"CREATE TABLE IF NOT EXISTS {self._control(LEDGER_TABLE)} "
            "(stream STRING, batch_id INT64, counts STRING, landed_at TIMESTAMP);\n"
            f"CREATE TABLE IF NOT EXISTS {self._control(STEPS_TABLE)} "
            "(stream STRING, batch_id INT64, step STRING, detail STRING, at TIMESTAMP);\n"
            + registry_ddl(self.project, self.control_dataset),
        )
        self._control_ready = True

    def _control(self, table: str) -> str:
        return quote_path(self.project, self.control_dataset, table)

    def _rows(self, what: str, sql: str, parameters: Sequence[tuple[str, str]] = ()) -> list[tuple]:
        """The rows of a query (or of a script's last statement), given STRING `parameters`."""
        from google.cloud import bigquery

        config = bigquery.QueryJobConfig(
            query_parameters=[bigquery.ScalarQueryParameter(name, "STRING", value) for name, value in parameters]
        )
        rows = self._call(what, lambda: list(self._client.query(sql, job_config=config).result()))
        return [tuple(row.values()) for row in rows]

    def _script(self, what: str, sql: str) -> None:
        self._call(what, lambda: self._client.query(sql).result())

    def create_version_table(self, route: VersionRoute) -> bool:
        """Create the route's table (and dataset) with its exact schema if missing; True if it was missing."""
        created = self._ensure_table(
            route.dataset,
            route.table_name,
            version_table_schema(route),
            source_schema_comment(route),
            version_table_layout(route, self.partition_granularity),
        )
        if created:  # what known_versions would read back, without reading it
            columns = [(c.name, c.bq_type) for c in route.columns] + [(n, parse_type(bq)) for n, bq in CDC_COLUMNS]
            self._known[(route.dataset, route.table_name)] = known_version(source_schema_comment(route), columns)
        return created

    def create_quarantine_table(self, dataset: str) -> bool:
        created = self._ensure_table(
            dataset, QUARANTINE_TABLE, quarantine_table_schema(), None, quarantine_layout(self.partition_granularity)
        )
        if not created and dataset not in self._current_quarantines:
            self._add_quarantine_columns(dataset)
        self._current_quarantines.add(dataset)
        return created

    def _add_quarantine_columns(self, dataset: str) -> None:
        """Give a quarantine table made by an earlier release the columns added since (raw_bytes, ...)."""
        table = self._call(
            f"get table {dataset}.{QUARANTINE_TABLE}",
            lambda: self._client.get_table(f"{self.project}.{dataset}.{QUARANTINE_TABLE}"),
        )
        present = {field.name for field in table.schema}
        missing = [(name, bq) for name, bq in QUARANTINE_COLUMNS if name not in present]
        if missing:
            clauses = ", ".join(f"ADD COLUMN IF NOT EXISTS {name} {bq}" for name, bq in missing)
            self._script(
                f"add {', '.join(name for name, _ in missing)} to {dataset}.{QUARANTINE_TABLE}",
                f"ALTER TABLE {quote_path(self.project, dataset, QUARANTINE_TABLE)} {clauses}",
            )

    def _ensure_table(
        self, dataset: str, table: str, schema: list[dict], description: str | None, layout: TableLayout | None = None
    ) -> bool:
        """Create the dataset and table (with its partitioning and clustering) if missing; True when the table
        did not exist.  A table that exists is used as it is: an older, unpartitioned one keeps receiving rows."""
        from google.cloud import bigquery

        table_id = f"{self.project}.{dataset}.{table}"
        if (dataset, table) in self._existing:
            return False
        if self._call(f"get table {dataset}.{table}", lambda: self._client.get_table(table_id), missing_ok=True):
            self._existing.add((dataset, table))
            return False
        self._call(
            f"create dataset {dataset}",
            lambda: self._client.create_dataset(f"{self.project}.{dataset}", exists_ok=True),
        )
        definition = bigquery.Table.from_api_repr(
            table_resource(self.project, dataset, table, schema, description, layout)
        )
        self._call(f"create table {dataset}.{table}", lambda: self._client.create_table(definition, exists_ok=True))
        self._existing.add((dataset, table))
        return True

    def _append(self, frame: DataFrame, dataset: str, table: str) -> None:
        options = write_options(self.project, dataset, table, self.write_extra)
        started = time.monotonic()
        try:
            frame.write.format("bigquery").options(**options).mode("append").save()
        finally:
            self.api_seconds["connector write"] += time.monotonic() - started

    def _call(self, what: str, call: Any, missing_ok: bool = False) -> Any:
        from uniview.warehouse.bigquery_retry import call_with_retry

        self.api_calls["request"] += 1
        started = time.monotonic()
        try:
            return call_with_retry(what, call, RETRY_DEADLINE)
        except NotFoundError:
            if missing_ok:
                return None
            raise
        finally:
            self.api_seconds["request"] += time.monotonic() - started

    def close(self) -> None:
        self._client.close()


def _drops(project: str, control: str, tables: Sequence[str]) -> str:
    """The statements that drop the staging tables `tables` of the control dataset."""
    return "".join(f"DROP TABLE IF EXISTS {quote_path(project, control, table)};\n" for table in tables)


def _targets(routes: Sequence[VersionRoute]) -> list[tuple[str, str]]:
    """The (dataset, version table) of each route."""
    return [(route.dataset, route.table_name) for route in routes]


def _redirect(batch: TypedBatch, folded: Mapping[tuple[str, str], str]) -> TypedBatch:
    """The batch with each route to a folded version (`folded`: dataset, version table -> successor) sent to its
    successor."""
    return replace(batch, routes=[redirected(route, folded) for route in batch.routes]) if folded else batch


def _written(batch: TypedBatch, route_rows: Mapping[int, int]) -> Counter:
    """{"dataset.table": rows} of the batch's routes as they are (redirected or not)."""
    written: Counter = Counter()
    for index, rows in route_rows.items():
        written[f"{batch.routes[index].dataset}.{batch.routes[index].table_name}"] += rows
    return written
