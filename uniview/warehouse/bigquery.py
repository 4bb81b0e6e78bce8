"""BigQuery as a warehouse: metadata from INFORMATION_SCHEMA, views applied in one script job.

One refresh reads column metadata with one INFORMATION_SCHEMA query (COLUMNS joined with
TABLES).  A version table that must be included but is not listed yet (INFORMATION_SCHEMA can
lag right after a table is created) is confirmed with `tables.get` and remembered by this
warehouse until INFORMATION_SCHEMA lists it, so a later read does not drop it again.  Stored
views are found with `tables.list` and read with `tables.get` (one INFORMATION_SCHEMA.VIEWS
query when there are many).  A missing target dataset is created in its source dataset's
location; then all view changes of one refresh run as one multi-statement query job.
Names only ever reach SQL text quoted (identifiers) or as query parameters (values).  Every
call goes through a bounded retry (uniview.warehouse.bigquery_retry).  With
BIGQUERY_EMULATOR_HOST=host:port set, the client talks to that local emulator without
credentials, as PUBSUB_EMULATOR_HOST does for Pub/Sub.  google-cloud-bigquery is imported
when the first BigQueryWarehouse is created.
"""

from __future__ import annotations

import logging
import os
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Collection
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

from uniview.core.errors import ConfigError, NotFoundError
from uniview.core.identifiers import quote, quote_path, validate_dataset, validate_project, validate_table
from uniview.core.schema import ColumnRecord, split_version_table, version_table_prefix
from uniview.core.version_description import described_primary_key, option_text
from uniview.planning.plan import PART_FINGERPRINT, is_part_view_name
from uniview.warehouse.base import Applied, CurrentTableResult, ViewChange, Warehouse
from uniview.warehouse.bigquery_folds import not_folded
from uniview.warehouse.bigquery_schema import record_from_row, records_from_table, table_names
from uniview.warehouse.bigquery_views import (
    change_statement,
    pack_scripts,
    referenced_datasets,
    stored_fingerprint,
    version_tables_statement,
)
from uniview.warehouse.url import BIGQUERY, WarehouseURL

if TYPE_CHECKING:
    from uniview.current.table import CurrentTablePlan

logger = logging.getLogger(__name__)

T = TypeVar("T")

EMULATOR_HOST_VARIABLE = "BIGQUERY_EMULATOR_HOST"
_HOST_PORT = re.compile(r"(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:]+\]):\d{1,5}")
DEFAULT_RETRY_DEADLINE = 60.0
#: How long a table confirmed with tables.get is included while INFORMATION_SCHEMA does not list it.
CONFIRMED_TABLE_MEMORY_SECONDS = 600.0
#: Up to this many stored views are read with tables.get; more with one INFORMATION_SCHEMA query.
MAX_VIEWS_READ_ONE_BY_ONE = 16
RECENT_JOBS_KEPT = 100

_COLUMNS_SQL = """SELECT c.table_name, c.column_name, c.ordinal_position, c.data_type,
  c.is_hidden, c.is_system_defined, t.creation_time
FROM {columns} AS c
JOIN {tables} AS t ON t.table_name = c.table_name
WHERE t.table_type NOT IN ('VIEW', 'MATERIALIZED VIEW') AND {not_folded}{family_filter}"""
_FAMILY_FILTER = """
  AND EXISTS (SELECT 1 FROM UNNEST(@prefixes) AS prefix WHERE STARTS_WITH(c.table_name, prefix))"""
_DESCRIPTIONS_SQL = """SELECT table_name, option_value FROM {options}
WHERE option_name = 'description' AND table_name IN UNNEST(@tables)"""
#: Tables INFORMATION_SCHEMA does not list yet whose description is read with tables.get.
MAX_TABLES_GOT = 20
_VIEWS_SQL = """SELECT v.table_name, v.view_definition, o.option_value AS description
FROM {views} AS v
LEFT JOIN {options} AS o ON o.table_name = v.table_name AND o.option_name = 'description'
WHERE STARTS_WITH(v.table_name, @prefix) AND NOT REGEXP_CONTAINS(v.table_name, r'_unified_part_[0-9a-f]+$')"""


def make_client(project: str) -> Any:
    """A google.cloud.bigquery.Client for `project`, or for the emulator at $BIGQUERY_EMULATOR_HOST."""
    from google.cloud import bigquery

    host = os.environ.get(EMULATOR_HOST_VARIABLE, "").strip()
    if host:
        if not _HOST_PORT.fullmatch(host):
            raise ConfigError(f"invalid {EMULATOR_HOST_VARIABLE} {host!r}: expected host:port")
        from google.auth.credentials import AnonymousCredentials

        return bigquery.Client(
            project=project, credentials=AnonymousCredentials(), client_options={"api_endpoint": f"http://{host}"}
        )
    from google.auth.exceptions import DefaultCredentialsError

    try:
        return bigquery.Client(project=project)
    except DefaultCredentialsError as error:
        raise ConfigError(f"no Google Cloud credentials for BigQuery: {error}") from None


def information_schema(project: str, dataset: str, view: str) -> str:
    return f"{quote_path(project, dataset)}.INFORMATION_SCHEMA.{view}"


def columns_sql(project: str, dataset: str, filtered: bool) -> str:
    """The INFORMATION_SCHEMA query of the columns of `dataset`'s tables (of some families when `filtered`)."""
    return _COLUMNS_SQL.format(
        columns=information_schema(project, dataset, "COLUMNS"),
        tables=information_schema(project, dataset, "TABLES"),
        not_folded=not_folded(information_schema(project, dataset, "TABLE_OPTIONS"), "c.table_name"),
        family_filter=_FAMILY_FILTER if filtered else "",
    )


def descriptions_sql(project: str, dataset: str) -> str:
    """The INFORMATION_SCHEMA query of the descriptions of the tables named in @tables."""
    return _DESCRIPTIONS_SQL.format(options=information_schema(project, dataset, "TABLE_OPTIONS"))


class BigQueryWarehouse(Warehouse):
    """Version tables and unified views in the datasets of one Google Cloud project.

    `retry_deadline` bounds how long transient failures (rate limits, 5xx, conflicting DDL)
    are retried before TransientWarehouseError.  `jobs_started` counts the query jobs this
    warehouse started, metadata reads included; `recent_jobs` keeps the latest ids.  Safe to
    share between threads.
    """

    def __init__(self, project: str, *, retry_deadline: float = DEFAULT_RETRY_DEADLINE, client: Any = None) -> None:
        from uniview.warehouse import bigquery_retry

        self.project = validate_project(project)
        self.url = str(WarehouseURL(BIGQUERY, self.project))
        self.retry_deadline = float(retry_deadline)
        self.jobs_started = 0
        self.recent_jobs: deque[str] = deque(maxlen=RECENT_JOBS_KEPT)
        self._retry = bigquery_retry
        self._client = client
        self._lock = threading.Lock()
        self._locations: dict[str, str] = {}
        self._confirmed: dict[tuple[str, str], tuple[float, list[ColumnRecord]]] = {}

    @property
    def client(self) -> Any:
        with self._lock:
            if self._client is None:
                self._client = make_client(self.project)
            return self._client

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None

    # -- reading ---------------------------------------------------------------------------

    def columns_query(self, dataset: str, families: list[str] | None) -> tuple[str, list[Any]]:
        """The INFORMATION_SCHEMA query (SQL text and parameters) for the columns of `dataset`."""
        from google.cloud import bigquery

        sql = columns_sql(self.project, dataset, families is not None)
        if families is None:
            return sql, []
        prefixes = [version_table_prefix(family) for family in families]
        return sql, [bigquery.ArrayQueryParameter("prefixes", "STRING", prefixes)]

    def read_columns(
        self, dataset: str, families: Collection[str] | None = None, required_tables: Collection[str] = ()
    ) -> list[ColumnRecord]:
        validate_dataset(dataset)
        wanted = None if families is None else sorted({validate_table(f, "table") for f in families})
        required = sorted({validate_table(t) for t in required_tables})
        sql, parameters = self.columns_query(dataset, wanted)
        rows, _ = self._query(f"read the columns of {dataset}", sql, parameters)
        records = [record_from_row(row) for row in rows]
        if not records:
            self._require_dataset(dataset)
        records.extend(self._remembered_tables(dataset, wanted, table_names(records)))
        missing = [table for table in required if table not in table_names(records)]
        for table in missing:
            records.extend(self._confirm_table(dataset, table))
        return records

    def read_primary_keys(self, dataset: str, tables: Collection[str]) -> dict[str, tuple[str, ...] | None]:
        """From the tables' descriptions (read_descriptions)."""
        return {table: described_primary_key(text) for table, text in self.read_descriptions(dataset, tables).items()}

    def read_ddl_renames(self, dataset: str) -> list[tuple[str | None, str | None, str | None]]:
        """The rows of every version of the control table `_uniview_ddl` in `dataset`: its tables are
        found with `tables.list` (no query job), and read with one query when there are any."""
        from uniview.core.ddl_renames import DDL_COLUMN, DDL_TABLE
        from uniview.core.schema import split_version_table

        validate_dataset(dataset)
        try:
            listed = self._call(
                f"list the tables of {dataset}",
                lambda: [t.table_id for t in self.client.list_tables(self._dataset_ref(dataset), retry=None)],
            )
        except NotFoundError:
            return []
        tables = [name for name in listed if (split_version_table(name) or ("",))[0] == DDL_TABLE]
        if not tables:
            return []
        sql = " UNION ALL ".join(
            f"SELECT _cdc_database, _cdc_sequence, {quote(DDL_COLUMN)} AS ddl FROM {quote_path(self.project, dataset, t)}"
            for t in tables
        )
        rows, _ = self._query(f"read the renames of {dataset}", sql, [])
        return [(row["_cdc_database"], row["_cdc_sequence"], row["ddl"]) for row in rows]

    def read_descriptions(self, dataset: str, tables: Collection[str]) -> dict[str, str | None]:
        """The tables' descriptions (one INFORMATION_SCHEMA.TABLE_OPTIONS query); a table it does not
        list yet is read with `tables.get`."""
        from google.cloud import bigquery

        validate_dataset(dataset)
        wanted = sorted({validate_table(t) for t in tables})
        sql = descriptions_sql(self.project, dataset)
        rows, _ = self._query(
            f"read the table descriptions of {dataset}", sql, [bigquery.ArrayQueryParameter("tables", "STRING", wanted)]
        )
        found = {row["table_name"]: option_text(row["option_value"]) for row in rows}
        texts = {table: found.get(table) for table in wanted}
        for table in [t for t in wanted if t not in found][:MAX_TABLES_GOT]:
            texts[table] = self._get_table(dataset, table).description
        return texts

    def read_view_fingerprints(self, dataset: str, name_prefix: str) -> dict[str, str]:
        """Views found with `tables.list`; a few are read with `tables.get` (no query job), many with
        one INFORMATION_SCHEMA query."""
        validate_dataset(dataset)
        try:
            names = self._call(f"list the views of {dataset}", lambda: self._view_names(dataset, name_prefix))
        except NotFoundError:
            return {}
        # A part view's name is the hash of its SQL: listing it is enough.  Only top views are read.
        fingerprints = {name: PART_FINGERPRINT for name in names if is_part_view_name(name)}
        tops = [name for name in names if name not in fingerprints]
        if len(tops) > MAX_VIEWS_READ_ONE_BY_ONE:
            return {**fingerprints, **self._view_fingerprints_from_information_schema(dataset, name_prefix)}
        for name in tops:
            try:
                view = self._get_table(dataset, name)
            except NotFoundError:  # dropped since it was listed
                continue
            fingerprints[name] = stored_fingerprint(view.view_query or "", view.description)
        return fingerprints

    def _view_names(self, dataset: str, name_prefix: str) -> list[str]:
        listed = self.client.list_tables(self._dataset_ref(dataset), retry=None)
        return [t.table_id for t in listed if t.table_type == "VIEW" and t.table_id.startswith(name_prefix)]

    def _view_fingerprints_from_information_schema(self, dataset: str, name_prefix: str) -> dict[str, str]:
        from google.cloud import bigquery

        sql = _VIEWS_SQL.format(
            views=self._information_schema(dataset, "VIEWS"),
            options=self._information_schema(dataset, "TABLE_OPTIONS"),
        )
        parameters = [bigquery.ScalarQueryParameter("prefix", "STRING", name_prefix)]
        rows, _ = self._query(f"read the views of {dataset}", sql, parameters)
        return {row["table_name"]: stored_fingerprint(row["view_definition"] or "", row["description"]) for row in rows}

    # -- writing ---------------------------------------------------------------------------

    def apply(self, changes: list[ViewChange], recheck: tuple[str, str] | None = None) -> Applied:
        """Create missing target datasets (`datasets.insert`, next to the source dataset), then run the
        changes in order as multi-statement query jobs, as few as fit BigQuery's 1,024K-character job
        limit (one for any usual change); the last job ends by listing the re-checked family's tables."""
        if not changes:
            return Applied([], None)
        targets = sorted({validate_dataset(change.dataset, "target dataset") for change in changes})
        for change in changes:
            validate_table(change.name, "view")
        locations = [self._ensure_dataset(target, changes) for target in targets]
        self._drop_current_tables(changes)
        statements = [change_statement(self.project, change) for change in changes]
        if recheck is not None:
            statements.append(version_tables_statement(self.project, *recheck))
        scripts = pack_scripts(statements)
        jobs: list[str] = []
        rows: list[dict[str, Any]] = []
        try:
            for number, text in enumerate(scripts, start=1):
                what = f"apply view changes in {', '.join(targets)} (job {number} of {len(scripts)})"
                job_id, rows = self._call(what, partial(self._run_script, text, locations[0] or None))
                jobs.append(job_id)
        except NotFoundError:
            for target in targets:  # a dataset deleted meanwhile is created again next time
                self._locations.pop(target, None)
            self._confirmed.clear()  # a remembered table may have been dropped since
            raise
        if recheck is None:
            return Applied(jobs, None)
        family = recheck[1]
        return Applied(
            jobs,
            frozenset(
                row["table_name"] for row in rows if (split_version_table(row["table_name"]) or ("",))[0] == family
            ),
        )

    def _drop_current_tables(self, changes: list[ViewChange]) -> None:
        """A current view (--current) replaces a current table of the same name (--current table)."""
        from uniview.current.view import current_view_name
        from uniview.warehouse import bigquery_current

        for change in changes:
            if not change.is_drop and change.name.endswith(current_view_name("")):
                bigquery_current.drop_current_table(self, change.dataset, change.name)

    def add_columns(self, dataset: str, additions: dict[str, list[tuple[str, str]]]) -> list[str]:
        """ALTER TABLE ... ADD COLUMN IF NOT EXISTS statements in script jobs of at most 1,024K characters
        (each statement is idempotent, so a failed job is safe to run again)."""
        validate_dataset(dataset)
        statements = [
            f"ALTER TABLE {quote_path(self.project, dataset, validate_table(table))} "
            + ", ".join(f"ADD COLUMN IF NOT EXISTS {quote(name)} {bq_type}" for name, bq_type in columns)
            for table, columns in additions.items()
        ]
        location = self._dataset_location(dataset)
        return [
            self._call(f"add columns in {dataset}", partial(self._run_script, script, location))[0]
            for script in pack_scripts(statements)
        ]

    def _ensure_dataset(self, dataset: str, changes: list[ViewChange]) -> str:
        """The location of `dataset`, creating it first (where its views' sources live) when missing."""
        location = self._dataset_location(dataset)
        if location is not None:
            return location
        from google.cloud import bigquery

        new = bigquery.Dataset(self._dataset_ref(dataset))
        new.location = self._location_for_new_dataset(dataset, changes)
        created = self._call(
            f"create dataset {dataset}", lambda: self.client.create_dataset(new, exists_ok=True, retry=None)
        )
        logger.info("created dataset %s.%s in %s", self.project, dataset, created.location)
        self._locations[dataset] = created.location or ""
        return created.location or ""

    # -- <table>_current as a table (uniview.warehouse.bigquery_current) -----------------------

    def current_table_action(self, plan: CurrentTablePlan, rebuild: bool = False) -> str:
        """What maintain_current_table would do now, read with `tables.get` (no query job)."""
        from uniview.warehouse import bigquery_current

        return bigquery_current.current_action(self, plan, rebuild)

    def applied_batch(self, plan: CurrentTablePlan, stream: str, batch_id: int) -> bool:
        """One query of the state table, whose fact rows record the batches applied (a query job, billed at its 10 MB floor)."""
        from google.cloud import bigquery

        from uniview.current.table import FACT_ROW, KIND

        sql = (
            f"SELECT COUNT(*) AS found FROM {quote_path(self.project, plan.dataset, plan.state_name)} "
            f"WHERE {KIND} = '{FACT_ROW}' AND _uniview_stream = @stream AND _uniview_batch_id = @batch_id"
        )
        parameters = [
            bigquery.ScalarQueryParameter("stream", "STRING", stream),
            bigquery.ScalarQueryParameter("batch_id", "INT64", batch_id),
        ]
        try:
            rows, _ = self._query(f"read whether {plan.table_name} applied {stream}#{batch_id}", sql, parameters)
        except NotFoundError:
            return False
        return bool(rows and rows[0]["found"])

    def maintain_current_table(self, plan: CurrentTablePlan, rebuild: bool = False) -> CurrentTableResult:
        """One script job: the maintenance in one multi-statement transaction, retried whole on
        serialization conflicts (uniview.warehouse.bigquery_current)."""
        from uniview.warehouse import bigquery_current

        validate_dataset(plan.dataset, "target dataset")
        return bigquery_current.maintain(self, plan, rebuild)

    def run_script_with_retry(
        self, what: str, sql: str, dataset: str, predicate: Callable[[BaseException], bool], deadline: float
    ) -> tuple[str, list[dict[str, Any]]]:
        """One multi-statement job in `dataset`'s location, run again whole while `predicate` accepts its
        failure, for up to `deadline` seconds; its id and the rows of its last statement."""
        location = self._dataset_location(dataset)
        if location is None:
            raise NotFoundError(f"dataset {dataset} does not exist in project {self.project}")
        return self._retry.call_with_retry(
            what, lambda: self._run_script(sql, location or None), deadline, predicate=predicate
        )

    def get_table(self, dataset: str, table: str) -> Any:
        """The table's metadata (`tables.get`); NotFoundError when it does not exist."""
        return self._get_table(dataset, table)

    def list_table_names(self, dataset: str) -> list[str]:
        """The names of the tables and views in `dataset` (`tables.list`)."""
        return self._call(
            f"list the tables of {dataset}",
            lambda: [t.table_id for t in self.client.list_tables(self._dataset_ref(dataset), retry=None)],
        )

    # -- internals -------------------------------------------------------------------------

    # -- for consolidation (uniview.warehouse.bigquery_consolidation) -------------------------

    def run_query(self, what: str, sql: str) -> list[dict[str, Any]]:
        """The rows of one query job, retried while BigQuery answers with a transient error."""
        return self._query(what, sql, [])[0]

    def run_script(self, what: str, sql: str) -> None:
        """One multi-statement job (a transaction is rolled back whole when it fails)."""
        self._call(what, lambda: self._run_script(sql, None))

    def dry_run_bytes(self, sql: str) -> int | None:
        """The bytes BigQuery estimates `sql` would read (a dry run: free, nothing runs)."""
        from google.cloud import bigquery

        config = bigquery.QueryJobConfig(dry_run=True, use_query_cache=False)
        job = self._call("estimate the bytes to fold", lambda: self.client.query(sql, job_config=config, retry=None))
        return job.total_bytes_processed

    def delete_table(self, dataset: str, table: str) -> None:
        reference = self._dataset_ref(dataset).table(table)
        self._call(
            f"drop {dataset}.{table}", lambda: self.client.delete_table(reference, not_found_ok=True, retry=None)
        )

    def _information_schema(self, dataset: str, view: str) -> str:
        return information_schema(self.project, dataset, view)

    def _call(self, what: str, call: Callable[[], T]) -> T:
        return self._retry.call_with_retry(what, call, self.retry_deadline)

    def _query(self, what: str, sql: str, parameters: list[Any]) -> tuple[list[dict[str, Any]], str | None]:
        from google.cloud import bigquery

        def run() -> tuple[list[dict[str, Any]], str | None]:
            config = bigquery.QueryJobConfig(query_parameters=parameters, use_legacy_sql=False)
            job = self.client.query(sql, job_config=config, retry=None, job_retry=None)
            self._record(job.job_id)
            rows = [dict(row.items()) for row in job.result(retry=None)]
            return rows, job.location

        return self._call(what, run)

    def _run_script(self, text: str, location: str | None) -> tuple[str, list[dict[str, Any]]]:
        """Run one script job; its id and the rows of its last statement."""
        job = self.client.query(text, location=location, retry=None, job_retry=None)
        self._record(job.job_id)
        rows = [dict(row.items()) for row in job.result(retry=None)]
        return job.job_id, rows

    def _record(self, job_id: str) -> None:
        with self._lock:
            self.jobs_started += 1
            self.recent_jobs.append(job_id)

    def _get_dataset(self, dataset: str) -> Any:
        reference = self._dataset_ref(dataset)
        return self._call(f"look up dataset {dataset}", lambda: self.client.get_dataset(reference, retry=None))

    def _get_table(self, dataset: str, table: str) -> Any:
        reference = self._dataset_ref(dataset).table(table)
        return self._call(f"look up table {dataset}.{table}", lambda: self.client.get_table(reference, retry=None))

    def _require_dataset(self, dataset: str) -> None:
        """NotFoundError unless `dataset` exists (some servers answer an empty INFORMATION_SCHEMA)."""
        found = self._get_dataset(dataset)
        if found.location:
            self._locations[dataset] = found.location

    def _confirm_table(self, dataset: str, table: str) -> list[ColumnRecord]:
        """Columns of `table` from `tables.get`, for a required table INFORMATION_SCHEMA does not list yet."""
        try:
            found = self._get_table(dataset, table)
        except NotFoundError:
            raise NotFoundError(f"version table {dataset}.{table} does not exist in project {self.project}") from None
        if found.table_type not in (None, "TABLE", "EXTERNAL", "SNAPSHOT", "CLONE"):
            raise NotFoundError(f"{dataset}.{table} is a {found.table_type}, not a version table")
        logger.info("INFORMATION_SCHEMA does not list %s.%s yet; read its schema with tables.get", dataset, table)
        records = records_from_table(table, found.schema, found.created)
        self._confirmed[(dataset, table)] = (time.monotonic(), records)
        return records

    def _remembered_tables(self, dataset: str, families: list[str] | None, listed: set[str]) -> list[ColumnRecord]:
        """Columns of tables confirmed with `tables.get` that INFORMATION_SCHEMA still does not list.

        A later read (the re-check after applying, another event) must not lose a version
        because the metadata still lags; version tables never change, so the schema stays right.
        """
        now, remembered = time.monotonic(), []
        for (where, table), (confirmed_at, records) in list(self._confirmed.items()):
            if where != dataset:
                continue
            if table in listed or now - confirmed_at > CONFIRMED_TABLE_MEMORY_SECONDS:
                self._confirmed.pop((where, table), None)
                continue
            parts = split_version_table(table)
            if families is None or (parts is not None and parts[0] in families):
                remembered.extend(records)
        return remembered

    def _dataset_location(self, dataset: str) -> str | None:
        """The location of an existing dataset, or None when it does not exist."""
        if self._locations.get(dataset):
            return self._locations[dataset]
        try:
            found = self._get_dataset(dataset)
        except NotFoundError:
            return None
        self._locations[dataset] = found.location or ""
        return found.location or ""

    def _location_for_new_dataset(self, target: str, changes: list[ViewChange]) -> str | None:
        """The location of the source dataset the views read from (views must live next to it)."""
        bodies = sorted((change.body for change in changes if change.body is not None), key=len)
        for dataset in referenced_datasets(bodies[0]) if bodies else []:
            location = self._dataset_location(dataset) if dataset != target else None
            if location:
                return location
        return None

    def _dataset_ref(self, dataset: str) -> Any:
        from google.cloud import bigquery

        return bigquery.DatasetReference(self.project, dataset)
