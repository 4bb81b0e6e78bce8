"""`<table>_current` as a table on BigQuery: the statements of uniview.current.table as one script job.

What a refresh does is read from the table's description and the state table's existence with
`tables.get` (no query job); then ONE script job runs it:

- maintain: queries first read the watermark, the batches applied and the sink's ledger (in the
  sink's control dataset, UNIVIEW_CONTROL_DATASET, default the source dataset: its rows landed since the newest applied
  batch less the horizon, each with its first step's time, which bounds the `_cdc_ingested_at` its
  parts stamped from below, as its `landed_at` does from above); the window (uniview.current.table.
  BatchWindow) is written into the script as TIMESTAMP literals, so its filter on `_cdc_ingested_at`
  prunes the version tables' partitions.  Then every statement inside BEGIN TRANSACTION ... COMMIT
  TRANSACTION: the state, the watermark, the batches applied and the table's rows change together or
  not at all.  The count of changes read is the INSERT of the window's rows' own (`@@row_count`, kept in a
  script variable the last SELECT returns): no statement of the script reads a table to count.
- re-present (only the presentation changed): the state's merge in the transaction, then
  `<table>_current` replaced whole from the committed state.  BigQuery refuses DDL on permanent tables
  inside a transaction; the replacement writes the new description last, so a job that stops before it
  leaves the old description and the next refresh re-presents again.
- create / rebuild: the state and the table built from every change (DDL, so no transaction); the table
  and its description are written last, so a build that stops half-way is built again by the next
  refresh.  A view of the same name (from --current) is dropped first.  A build replaces the state whole:
  a maintenance that committed while the build read the history would be undone, so a maintenance follows
  a build that did not record every batch of the ledger, and applies those batches (rows written without
  a ledger row are stamped after the build's watermark: the next maintenance reads them).

Every script drops the family's state tables of other state hashes it was given (`other_states`, read
with `tables.list`) after its table is written: a state outlives its hash by no job, even when the
process is killed once the job was submitted.

The job is retried whole, with google-api-core retry (uniview.warehouse.bigquery_retry), while BigQuery
answers with a transient error or a serialization conflict: two transactions mutating one table at once
make BigQuery abort one ("Transaction is aborted due to concurrent update against table ...", "Could not
serialize access to table ... due to concurrent update").  Re-running is exact: every merge is a max-by
merge, so changes applied twice give the same state.
"""

from __future__ import annotations

import logging
import os
import re
import signal
from collections.abc import Callable
from datetime import datetime
from typing import Any, Protocol

from google.api_core import exceptions as api_exceptions

from uniview.core.errors import NotFoundError
from uniview.core.identifiers import identifier_path, string_literal
from uniview.current.table import (
    CHANGES_VARIABLE,
    KILL_AT,
    RELINK,
    Action,
    AppliedBatch,
    BatchWindow,
    CurrentTablePlan,
    LedgerBatch,
    Statement,
    batch_window,
    ledger_batch,
    ledger_since,
    parse_description,
    state_prefixes,
    timestamp_literal,
)
from uniview.warehouse.base import CurrentTableResult
from uniview.warehouse.bigquery_retry import is_transient


class ScriptWarehouse(Protocol):
    """What the current table needs of a BigQuery warehouse (uniview.warehouse.bigquery.BigQueryWarehouse),
    named here so that this module and the warehouse never import each other back."""

    project: str

    def run_script_with_retry(
        self, what: str, sql: str, dataset: str, predicate: Callable[[BaseException], bool], deadline: float
    ) -> tuple[str, list[dict[str, Any]]]: ...

    def get_table(self, dataset: str, table: str) -> Any: ...

    def run_query(self, what: str, sql: str) -> list[dict[str, Any]]: ...

    def list_table_names(self, dataset: str) -> list[str]: ...

    def delete_table(self, dataset: str, table: str) -> None: ...


logger = logging.getLogger(__name__)

#: Where the sink keeps its ledger (its --control-dataset).
CONTROL_DATASET_VARIABLE = "UNIVIEW_CONTROL_DATASET"
DEFAULT_CONTROL_DATASET = "uniview"
LEDGER = "_uniview_batches"
STEPS = "_uniview_batch_steps"
#: BigQuery's answers when concurrent transactions mutate one table (400 invalidQuery): the loser is aborted.
_SERIALIZATION = re.compile(
    r"Transaction is aborted due to concurrent update|Could not serialize access to table .* due to concurrent update",
    re.IGNORECASE | re.DOTALL,
)
#: How long a refresh retries while other refreshes of the family keep winning.
CONFLICT_RETRY_DEADLINE = 300.0
#: How many builds one refresh runs at most when the maintenance after a build finds a key change to follow.
MAX_BUILDS = 3


def is_serialization_conflict(error: BaseException) -> bool:
    """True for BigQuery's abort of a transaction that lost to a concurrent update of the same table."""
    return isinstance(error, api_exceptions.BadRequest) and bool(_SERIALIZATION.search(error.message or ""))


def is_retryable(error: BaseException) -> bool:
    """A failure the whole job may be run again for: transient, or a lost serialization race."""
    return is_transient(error) or is_serialization_conflict(error)


def maintain(warehouse: ScriptWarehouse, plan: CurrentTablePlan, rebuild: bool = False) -> CurrentTableResult:
    """Run `plan`'s action as one script job, retried whole; after a build, one maintenance; what it did."""
    table = stored_table(warehouse, plan)
    action = _action(warehouse, plan, table, rebuild)
    drop_view = table is not None and table.table_type == "VIEW"
    action, jobs, counts = _refresh(warehouse, plan, action, drop_view, other_states(warehouse, plan))
    rows = stored_table(warehouse, plan)  # the table's row count is metadata: no query is billed for it
    result = CurrentTableResult(
        action,
        _count(counts, "changes"),
        _count(counts, "databases"),
        int(rows.num_rows or 0) if rows is not None else 0,
        tuple(jobs),
    )
    logger.info(
        "%s %s.%s: %d change(s) read, %s row(s)",
        action,
        plan.dataset,
        plan.table_name,
        result.changes_read,
        result.rows,
    )
    return result


def _refresh(
    warehouse: ScriptWarehouse, plan: CurrentTablePlan, action: Action, drop_view: bool, others: tuple[str, ...]
) -> tuple[Action, list[str], dict[str, Any]]:
    """Run `action`; a maintenance its check stops rebuilds.  A build replaces the state whole, so a maintenance
    that committed while the build read the history would be undone: after a build, a maintenance applies the
    ledger's batches of the family the build did not record, when there are any (rows written without a ledger
    row are stamped after the build's watermark, and the next maintenance reads them).  The action (the build,
    when one ran), the jobs, and the counts (the build's, when one ran)."""
    built: Action | None = None
    jobs: list[str] = []
    counts: dict[str, Any] = {}
    builds = 0
    pending: tuple[BatchWindow, tuple[AppliedBatch, ...]] | None = None
    while True:
        building = action in ("create", "rebuild")
        try:
            job_id, rows = _run_action(warehouse, plan, action, drop_view, others, pending)
        except Exception as error:  # the script's check stopped it, in its transaction: the table is rebuilt
            if RELINK not in str(error) or building:
                raise
            if builds >= MAX_BUILDS:  # the built state stands; the next refresh rebuilds again
                break
            action = "rebuild"
            continue
        jobs.append(job_id)
        last = rows[-1] if rows else {}
        counts = counts if built else last
        if not building:
            break
        builds += 1
        built = built or action
        _reach_after_build()
        pending = pending_window(warehouse, plan)
        if not pending[1]:  # the build recorded every batch of the ledger: nothing of a maintenance was undone
            break
        action, drop_view, others = "maintain", False, ()
    return built or action, jobs, counts


def _reach_after_build() -> None:
    """`UNIVIEW_CURRENT_KILL_AT=after-build` makes the process SIGKILL itself right after a build's job ended: exactly
    `kill -9` once the job ran (for the tests)."""
    if os.environ.get(KILL_AT) == "after-build":
        os.kill(os.getpid(), signal.SIGKILL)


def _run_action(
    warehouse: ScriptWarehouse,
    plan: CurrentTablePlan,
    action: Action,
    drop_view: bool,
    others: tuple[str, ...],
    pending: tuple[BatchWindow, tuple[AppliedBatch, ...]] | None = None,
) -> tuple[str, list[dict[str, Any]]]:
    """Run `action` as one script job, retried whole: its id and the rows of its last statement; `pending`: a
    maintenance's window and batches, when already read."""
    building = action in ("create", "rebuild")
    if building:
        window, batches = None, build_batches(warehouse, plan)
    else:
        window, batches = pending or pending_window(warehouse, plan)
    script = action_script(plan, action, drop_view, window, batches, others)
    what = f"{action} {plan.dataset}.{plan.table_name}"
    return warehouse.run_script_with_retry(what, script, plan.dataset, is_retryable, CONFLICT_RETRY_DEADLINE)


def _count(row: dict[str, Any], name: str) -> int:
    value = row.get(name)
    return int(value) if value is not None else 0


def current_action(warehouse: ScriptWarehouse, plan: CurrentTablePlan, rebuild: bool = False) -> Action:
    """What `maintain` would do now (CurrentTablePlan.action), read with `tables.get`; changes nothing."""
    return _action(warehouse, plan, stored_table(warehouse, plan), rebuild)


def stored_table(warehouse: ScriptWarehouse, plan: CurrentTablePlan) -> Any:
    """The stored `<table>_current` (a google.cloud.bigquery.Table: a table or a view), or None."""
    try:
        return warehouse.get_table(plan.dataset, plan.table_name)
    except NotFoundError:
        return None


def _action(warehouse: ScriptWarehouse, plan: CurrentTablePlan, table: Any, rebuild: bool) -> Action:
    description = table.description if table is not None and table.table_type == "TABLE" else None
    state = description is not None and all(_exists(warehouse, plan.dataset, name) for name in plan.state_names)
    return plan.action(description, state, rebuild)


def _exists(warehouse: ScriptWarehouse, dataset: str, table: str) -> bool:
    try:
        warehouse.get_table(dataset, table)
    except NotFoundError:
        return False
    return True


def control_dataset(plan: CurrentTablePlan) -> str:
    """Where the sink keeps its ledger: UNIVIEW_CONTROL_DATASET, else the family's source dataset (a sink run
    with --dataset keeps it there), else the sink's default."""
    return os.environ.get(CONTROL_DATASET_VARIABLE) or plan.source_dataset or DEFAULT_CONTROL_DATASET


def pending_window(warehouse: ScriptWarehouse, plan: CurrentTablePlan) -> tuple[BatchWindow, tuple[AppliedBatch, ...]]:
    """The window of the next maintenance and the ledger's batches it applies: one query reads the
    watermark and the batches applied (both fact rows of the state table), one the ledger's batches since the newest
    applied less the horizon."""
    rows = warehouse.run_query(
        f"read the watermark of {plan.dataset}.{plan.table_name}",
        f"SELECT ({plan.floor_select}) AS watermark, ARRAY(SELECT AS STRUCT stream, batch_id, landed_at "
        f"FROM ({plan.applied_select})) AS applied",
    )
    first = rows[0] if rows else {}
    applied = [AppliedBatch(a["stream"], int(a["batch_id"]), a["landed_at"]) for a in first.get("applied") or []]
    mark = max((batch.landed_at for batch in applied), default=None)
    return batch_window(first.get("watermark"), ledger_batches(warehouse, plan, ledger_since(mark)), applied)


def ledger_batches(warehouse: ScriptWarehouse, plan: CurrentTablePlan, since: datetime | None) -> list[LedgerBatch]:
    """The ledger's batches landed after `since` (None: all) that wrote rows to the family; none when the
    control dataset has no ledger."""
    control = control_dataset(plan)
    if not _exists(warehouse, control, LEDGER) or not _exists(warehouse, control, STEPS):
        return []
    ledger, steps = (f"`{warehouse.project}.{control}.{name}`" for name in (LEDGER, STEPS))
    after = "TRUE" if since is None else f"l.landed_at > {timestamp_literal(since)}"
    rows = warehouse.run_query(
        f"read the ledger for {plan.dataset}.{plan.table_name}",
        f"SELECT l.stream, l.batch_id, l.counts, l.landed_at, (SELECT MIN(s.at) FROM {steps} AS s "
        f"WHERE s.stream = l.stream AND s.batch_id = l.batch_id) AS first_step FROM {ledger} AS l "
        f"WHERE {after} AND l.counts LIKE {string_literal(f'%.{plan.family}_v_%')}",
    )
    found = (
        ledger_batch(
            (r["stream"], r["batch_id"], r["counts"], r["landed_at"], r["first_step"]), plan.family, plan.source_dataset
        )
        for r in rows
    )
    return [batch for batch in found if batch is not None]


def build_batches(warehouse: ScriptWarehouse, plan: CurrentTablePlan) -> tuple[AppliedBatch, ...]:
    """What a build records as applied: the ledger's batches of the family within the horizon of the newest."""
    control = control_dataset(plan)
    if not _exists(warehouse, control, LEDGER):
        return ()
    rows = warehouse.run_query(
        "read the ledger's newest batch",
        f"SELECT MAX(landed_at) AS newest FROM `{warehouse.project}.{control}.{LEDGER}`",
    )
    newest = rows[0]["newest"] if rows else None
    if newest is None:
        return ()
    since = ledger_since(newest.strftime("%Y-%m-%d %H:%M:%S.%f"))
    return tuple(sorted(batch.applied for batch in ledger_batches(warehouse, plan, since)))


def action_script(
    plan: CurrentTablePlan,
    action: Action,
    drop_view: bool = False,
    window: BatchWindow | None = None,
    batches: tuple[AppliedBatch, ...] = (),
    others: tuple[str, ...] = (),
) -> str:
    """The one script job that runs `action`, ending with a SELECT of what it read and wrote; `others`: the
    family's state tables of other state hashes (other_states), dropped once the table is written."""
    drops = [f"DROP TABLE IF EXISTS {identifier_path(plan.dataset, name)}" for name in others]
    if action in ("create", "rebuild"):
        view = [f"DROP VIEW IF EXISTS {plan.table}"] if drop_view else []
        body = [*view, *(statement.sql for statement in plan.build_statements(batches) if statement.kind != "drop")]
        return _script([*body, *drops, plan.counts_select(action)])
    window = window or BatchWindow(None)
    statements = plan.statements(action, window.condition(timestamp_literal), batches, window.reads)
    in_transaction = [s for s in statements if s.on_bigquery and s.kind != "drop" and not _is_permanent_ddl(s)]
    after = [s.sql for s in statements if _is_permanent_ddl(s)]
    return _script(
        [
            f"DECLARE {CHANGES_VARIABLE} INT64 DEFAULT 0",
            "BEGIN TRANSACTION",
            *(sql for s in in_transaction for sql in _with_count(plan, s)),
            "COMMIT TRANSACTION",
            *after,
            *drops,
            plan.counts_select(action),
        ]
    )


def _with_count(plan: CurrentTablePlan, statement: Statement) -> tuple[str, ...]:
    """`statement`, and after the INSERT of the new rows the count of its rows kept (@@row_count: no query)."""
    if statement.kind == "insert" and statement.table == plan.state_table:
        return (statement.sql, f"SET {CHANGES_VARIABLE} = @@row_count")
    return (statement.sql,)


def _is_permanent_ddl(statement: Statement) -> bool:
    """CREATE OR REPLACE TABLE of a permanent table: BigQuery refuses it inside a transaction."""
    return statement.kind == "replace"


def _script(statements: list[str]) -> str:
    return "".join(f"{statement};\n" for statement in statements)


def other_states(warehouse: ScriptWarehouse, plan: CurrentTablePlan) -> tuple[str, ...]:
    """The state tables of the family's other state hashes, which nothing reads any more (`tables.list`)."""
    mine = set(plan.state_names)
    return tuple(
        sorted(
            name
            for name in warehouse.list_table_names(plan.dataset)
            if name not in mine and name.startswith(plan.state_prefixes)
        )
    )


def drop_current_table(warehouse: ScriptWarehouse, dataset: str, name: str) -> bool:
    """Drop `dataset.name` when it is a current table (its description records its fingerprints), with its
    state tables: a view of that name (--current) is about to replace it, and BigQuery does not replace a
    table with a view.  True when it dropped one."""
    try:
        found = warehouse.get_table(dataset, name)
    except NotFoundError:
        return False
    if found.table_type != "TABLE" or parse_description(found.description) is None:
        return False
    warehouse.delete_table(dataset, name)
    family = name.removesuffix("_current")
    prefixes = state_prefixes(family)
    for other in warehouse.list_table_names(dataset):
        if other.startswith(prefixes):
            warehouse.delete_table(dataset, other)
    logger.info("dropped the current table %s.%s and its state: a view replaces it", dataset, name)
    return True
