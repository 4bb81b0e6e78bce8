"""`<table>_current` as a table on BigQuery: the statements of uniview.current.table as one script job.

What a refresh does is read from the table's description and the state tables' existence with
`tables.get` (no query job); then ONE script job runs it:

- maintain: `DECLARE uniview_floor` = the newest watermark applied less the lag (a script variable, so
  the window's filter on `_cdc_ingested_at` prunes the version tables' partitions), then every
  statement inside BEGIN TRANSACTION ... COMMIT TRANSACTION: the state, the watermark and the table's
  rows change together or not at all.
- re-present (only the presentation changed): the state's merge in the transaction, then
  `<table>_current` replaced whole from the committed state.  BigQuery refuses DDL on permanent tables
  inside a transaction; the replacement writes the new description last, so a job that stops before it
  leaves the old description and the next refresh re-presents again.
- create / rebuild: the state and the table built from every change (DDL, so no transaction); the table
  and its description are written last, so a build that stops half-way is built again by the next
  refresh.  A view of the same name (from --current) is dropped first; state tables of the family's
  earlier state hashes are dropped after.

The job is retried whole, with google-api-core retry (uniview.warehouse.bigquery_retry), while BigQuery
answers with a transient error or a serialization conflict: two transactions mutating one table at once
make BigQuery abort one ("Transaction is aborted due to concurrent update against table ...", "Could not
serialize access to table ... due to concurrent update").  Re-running is exact: every merge is a max-by
merge, so changes applied twice give the same state.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import Any, Protocol

from google.api_core import exceptions as api_exceptions

from uniview.core.errors import NotFoundError
from uniview.core.identifiers import quote_path
from uniview.current.table import Action, CurrentTablePlan, Statement, parse_description
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

    def list_table_names(self, dataset: str) -> list[str]: ...

    def delete_table(self, dataset: str, table: str) -> None: ...


logger = logging.getLogger(__name__)

#: The script variable holding the window's floor.
FLOOR_VARIABLE = "uniview_floor"
#: BigQuery's answers when concurrent transactions mutate one table (400 invalidQuery): the loser is aborted.
_SERIALIZATION = re.compile(
    r"Transaction is aborted due to concurrent update|Could not serialize access to table .* due to concurrent update",
    re.IGNORECASE | re.DOTALL,
)
#: How long a refresh retries while other refreshes of the family keep winning.
CONFLICT_RETRY_DEADLINE = 300.0
_COUNTS = (
    "SELECT (SELECT COUNT(*) FROM {window}) AS changes, {databases} AS databases, "
    "(SELECT COUNT(*) FROM {table}) AS row_count"
)


def is_serialization_conflict(error: BaseException) -> bool:
    """True for BigQuery's abort of a transaction that lost to a concurrent update of the same table."""
    return isinstance(error, api_exceptions.BadRequest) and bool(_SERIALIZATION.search(error.message or ""))


def is_retryable(error: BaseException) -> bool:
    """A failure the whole job may be run again for: transient, or a lost serialization race."""
    return is_transient(error) or is_serialization_conflict(error)


def maintain(warehouse: ScriptWarehouse, plan: CurrentTablePlan, rebuild: bool = False) -> CurrentTableResult:
    """Run `plan`'s action as one script job, retried whole; what it did."""
    table = stored_table(warehouse, plan)
    action = _action(warehouse, plan, table, rebuild)
    script = action_script(plan, action, drop_view=table is not None and table.table_type == "VIEW")
    what = f"{action} {plan.dataset}.{plan.table_name}"
    job_id, rows = warehouse.run_script_with_retry(what, script, plan.dataset, is_retryable, CONFLICT_RETRY_DEADLINE)
    if action in ("create", "rebuild"):
        _drop_other_states(warehouse, plan)
    counts = rows[-1] if rows else {}
    result = CurrentTableResult(
        action, _count(counts, "changes"), _count(counts, "databases"), _count(counts, "row_count"), (job_id,)
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
    state = description is not None and all(
        _exists(warehouse, plan.dataset, name) for name in (plan.keys_name, plan.facts_name)
    )
    return plan.action(description, state, rebuild)


def _exists(warehouse: ScriptWarehouse, dataset: str, table: str) -> bool:
    try:
        warehouse.get_table(dataset, table)
    except NotFoundError:
        return False
    return True


def action_script(plan: CurrentTablePlan, action: Action, drop_view: bool = False) -> str:
    """The one script job that runs `action`, ending with a SELECT of what it read and wrote."""
    if action in ("create", "rebuild"):
        view = [f"DROP VIEW IF EXISTS {plan.table}"] if drop_view else []
        body = [*view, *(statement.sql for statement in plan.build_statements() if statement.kind != "drop")]
        counts = _COUNTS.format(window="_uniview_window", databases="-1", table=plan.table)
        return _script([*body, counts])
    statements = plan.statements(action, FLOOR_VARIABLE)
    in_transaction = [s for s in statements if s.kind != "drop" and not _is_permanent_ddl(s)]
    after = [s.sql for s in statements if _is_permanent_ddl(s)]
    counts = _COUNTS.format(
        window="_uniview_window", databases="(SELECT COUNT(*) FROM _uniview_redo)", table=plan.table
    )
    return _script(
        [
            f"DECLARE {FLOOR_VARIABLE} TIMESTAMP DEFAULT ({plan.floor_select})",
            "BEGIN TRANSACTION",
            *(s.sql for s in in_transaction),
            "COMMIT TRANSACTION",
            *after,
            counts,
        ]
    )


def _is_permanent_ddl(statement: Statement) -> bool:
    """CREATE OR REPLACE TABLE of a permanent table: BigQuery refuses it inside a transaction."""
    return statement.kind == "replace"


def _script(statements: list[str]) -> str:
    return "".join(f"{statement};\n" for statement in statements)


def _drop_other_states(warehouse: ScriptWarehouse, plan: CurrentTablePlan) -> None:
    """The state tables of the family's earlier state hashes, which nothing reads any more."""
    mine = {plan.keys_name, plan.facts_name}
    for name in warehouse.list_table_names(plan.dataset):
        if name not in mine and name.startswith(plan.state_prefixes):
            warehouse.delete_table(plan.dataset, name)
            logger.info("dropped %s", quote_path(warehouse.project, plan.dataset, name))


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
    prefixes = (f"_uniview_current_keys_{family}_", f"_uniview_current_facts_{family}_")
    for other in warehouse.list_table_names(dataset):
        if other.startswith(prefixes):
            warehouse.delete_table(dataset, other)
    logger.info("dropped the current table %s.%s and its state: a view replaces it", dataset, name)
    return True
