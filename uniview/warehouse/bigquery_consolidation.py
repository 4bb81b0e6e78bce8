"""Consolidation's statements on BigQuery: the registry in the control dataset, the consolidated
table, the moves as multi-statement transactions, and the folded label (docs/consolidation.md).

A move transaction mutates at most 100 tables: its sources, the consolidated table and the
registry.  BigQuery's snapshot isolation lets a sink promotion that read the registry before a
move still insert into the version after it, so a moved table leaves the view only once it has
been `moved` for the settle period and is empty; rows that arrived meanwhile are moved again.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from uniview.core.errors import NotFoundError
from uniview.core.identifiers import identifier, quote_path, string_literal
from uniview.core.landing_layout import DEFAULT_GRANULARITY, SOURCE_TABLE, history_granularity, table_layout
from uniview.core.schema import TableVersion
from uniview.planning.consolidation import (
    DROPPED,
    MOVED,
    PLANNED,
    RETIRED,
    FoldPlan,
    FoldRecord,
    consolidated_description,
    folded_primary_key,
    move_select,
)
from uniview.planning.plan import GeneratorOptions
from uniview.warehouse.bigquery import BigQueryWarehouse
from uniview.warehouse.bigquery_folds import FOLDED_LABEL, FOLDS_TABLE, registry_ddl
from uniview.warehouse.bigquery_views import pack_scripts

#: One query references at most 1,000 tables: reads over many folded tables go in chunks.
MAX_TABLES_PER_QUERY = 500
_COLUMNS = "dataset, family, version_table, consolidated_table, successor_table, state, rows_moved, recorded_at"


class BigQueryFolding:
    """The I/O of `uniview consolidate` in one BigQuery project; the registry in `control` dataset."""

    def __init__(self, warehouse: BigQueryWarehouse, control: str) -> None:
        self.warehouse, self.control = warehouse, control
        self.project = warehouse.project

    @property
    def registry(self) -> str:
        return quote_path(self.project, self.control, FOLDS_TABLE)

    def folds(self, dataset: str, family: str | None = None) -> list[FoldRecord]:
        """The registry rows of `dataset` (of `family` only, when given); none before the first fold."""
        where = f"dataset = {string_literal(dataset)}" + (
            "" if family is None else f" AND family = {string_literal(family)}"
        )
        try:
            rows = self._rows(
                "read the consolidation registry",
                f"SELECT {_COLUMNS} FROM {self.registry} WHERE {where} ORDER BY recorded_at, version_table",
            )
        except NotFoundError:
            return []
        return [FoldRecord(*(row[name] for name in _COLUMNS.split(", "))) for row in rows]

    def last_written(self, dataset: str) -> dict[str, datetime]:
        """{table: last modified}, from the dataset's __TABLES__ (BigQuery's own modification time)."""
        rows = self._rows(
            f"read the modification times in {dataset}",
            f"SELECT table_id, last_modified_time FROM {quote_path(self.project, dataset)}.__TABLES__",
        )
        return {row["table_id"]: datetime.fromtimestamp(row["last_modified_time"] / 1000, UTC) for row in rows}

    def size(self, dataset: str, tables: Sequence[str]) -> tuple[int, int | None]:
        """(rows, bytes) of `tables`: exact row counts, and the bytes a dry run says the moves will read."""
        rows = sum(
            row["n"]
            for sql in count_queries(self.project, dataset, tables)
            for row in self._rows(f"count the rows to fold in {dataset}", sql)
        )
        estimates = [self.warehouse.dry_run_bytes(sql) for sql in read_queries(self.project, dataset, tables)]
        known = [estimate for estimate in estimates if estimate is not None]
        return rows, sum(known) if len(known) == len(estimates) else None

    def record(self, plan: FoldPlan, successors: dict[str, str]) -> None:
        """Register the versions as `planned` (those not registered yet), then create the consolidated
        table if missing: each step is idempotent, so a re-run repeats what a crash cut short."""
        self._script("register the versions to fold", register_script(self.project, self.control, plan, successors))
        self._script(
            f"create {plan.consolidated_table}",
            consolidated_table_ddl(self.project, plan, self._primary_key(plan)),
        )

    def _primary_key(self, plan: FoldPlan) -> tuple[str, ...] | None:
        """The key the folded versions' descriptions record, when they agree (it clusters the table)."""
        return folded_primary_key(plan, self.warehouse.read_primary_keys)

    def move(self, plan: FoldPlan, batch: Sequence[TableVersion], options: GeneratorOptions) -> int:
        """One transaction: for each version, copy its rows into the consolidated table, delete them,
        mark it `moved` with the rows it has given so far.  The rows moved."""
        before = self._moved_rows(plan, batch)
        self._script(
            f"move {len(batch)} versions into {plan.consolidated_table}",
            move_script(self.project, self.control, plan, batch, options),
        )
        return self._moved_rows(plan, batch) - before

    def _moved_rows(self, plan: FoldPlan, batch: Sequence[TableVersion]) -> int:
        names = ", ".join(string_literal(v.table_name) for v in batch)
        rows = self._rows(
            "count the moved rows",
            f"SELECT COUNT(*) AS n FROM "
            f"{quote_path(self.project, plan.dataset, plan.consolidated_table)} "
            f"WHERE {identifier(SOURCE_TABLE)} IN ({names})",
        )
        return rows[0]["n"]

    def holding_rows(self, dataset: str, tables: Sequence[str]) -> set[str]:
        """The `tables` that hold rows."""
        return {
            row["t"]
            for sql in count_queries(self.project, dataset, tables)
            for row in self._rows(f"look for rows in folded tables of {dataset}", sql)
            if row["n"]
        }

    def settle(self, dataset: str, records: Sequence[FoldRecord], settle: timedelta) -> list[str]:
        """Retire the `moved` tables of `records` settled for `settle` and empty: label them folded
        (discovery leaves them out) and mark them `retired`.  The tables retired."""
        cutoff = datetime.now(UTC) - settle
        settled = [r.version_table for r in records if r.state == MOVED and r.recorded_at <= cutoff]
        empty = [table for table in settled if table not in self.holding_rows(dataset, settled)]
        if not empty:
            return []
        labels = [
            f"ALTER TABLE {quote_path(self.project, dataset, table)} "
            f"SET OPTIONS (labels = [('{FOLDED_LABEL}', 'true')])"
            for table in empty
        ]
        for script in pack_scripts(labels):
            self._script(f"label {len(empty)} folded tables", script)
        self._mark(dataset, empty, RETIRED)
        return empty

    def drop_folded(self, dataset: str, records: Sequence[FoldRecord]) -> list[str]:
        """Drop each `retired` table of `records` that is still empty, marking it `dropped`."""
        retired = [r.version_table for r in records if r.state == RETIRED]
        holding = self.holding_rows(dataset, retired)
        dropped = [table for table in retired if table not in holding]
        for table in dropped:
            self.warehouse.delete_table(dataset, table)
        self._mark(dataset, dropped, DROPPED)
        return dropped

    def _mark(self, dataset: str, tables: Sequence[str], state: str) -> None:
        if tables:
            names = ", ".join(map(string_literal, tables))
            self._script(
                f"mark {len(tables)} tables {state}",
                f"UPDATE {self.registry} SET state = '{state}', "
                f"recorded_at = CURRENT_TIMESTAMP() WHERE dataset = {string_literal(dataset)} "
                f"AND version_table IN ({names})",
            )

    def _rows(self, what: str, sql: str) -> list[dict[str, Any]]:
        return self.warehouse.run_query(what, sql)

    def _script(self, what: str, sql: str) -> None:
        self.warehouse.run_script(what, sql)


def consolidated_table_ddl(project: str, plan: FoldPlan, primary_key: Sequence[str] | None) -> str:
    """CREATE TABLE IF NOT EXISTS of the consolidated table: the plan's columns, partitioned by
    `_cdc_ingested_at` by DAY (it keeps years of history: landing_layout.history_granularity) and
    clustered by `_cdc_database` and the primary key, like the version tables it takes the rows of."""
    columns = ", ".join(f"{identifier(name)} {bq_type.base().sql()}" for name, bq_type in plan.table_definition)
    layout = table_layout(plan.table_definition, primary_key, history_granularity(DEFAULT_GRANULARITY))
    description = string_literal(consolidated_description(plan.family, primary_key))
    return (
        f"CREATE TABLE IF NOT EXISTS {quote_path(project, plan.dataset, plan.consolidated_table)} ({columns}) "
        + (f"{layout.ddl()} " if layout.ddl() else "")
        + f"OPTIONS (description = {description})"
    )


def move_script(
    project: str, control: str, plan: FoldPlan, batch: Sequence[TableVersion], options: GeneratorOptions
) -> str:
    """The transaction that moves the rows of `batch` into the consolidated table and marks each
    version `moved` with the rows it has given (its sources, the consolidated table and the registry
    are the tables it mutates)."""
    target = quote_path(project, plan.dataset, plan.consolidated_table)
    registry = quote_path(project, control, FOLDS_TABLE)
    statements = []
    for version in batch:
        name = string_literal(version.table_name)
        statements += [
            f"INSERT INTO {target} {move_select(plan, version, options)}",
            f"DELETE FROM {quote_path(project, plan.dataset, version.table_name)} WHERE TRUE",
            f"UPDATE {registry} SET state = '{MOVED}', recorded_at = CURRENT_TIMESTAMP(), rows_moved = "
            f"(SELECT COUNT(*) FROM {target} WHERE {identifier(SOURCE_TABLE)} = {name}) "
            f"WHERE dataset = {string_literal(plan.dataset)} AND version_table = {name}",
        ]
    return "BEGIN TRANSACTION;\n" + ";\n".join(statements) + ";\nCOMMIT TRANSACTION;"


def register_script(project: str, control: str, plan: FoldPlan, successors: dict[str, str]) -> str:
    """One transaction: versions folded before and holding rows again are planned again, into this
    plan's table; the others are added as `planned` unless already registered."""
    registry = quote_path(project, control, FOLDS_TABLE)
    at = f"TIMESTAMP {string_literal(datetime.now(UTC).isoformat())}"
    names = ", ".join(map(string_literal, successors))
    rows = " UNION ALL ".join(
        f"SELECT {string_literal(plan.dataset)} AS dataset, {string_literal(plan.family)} AS family, "
        f"{string_literal(table)} AS version_table, {string_literal(plan.consolidated_table)} AS consolidated_table, "
        f"{string_literal(successor)} AS successor_table, '{PLANNED}' AS state, CAST(NULL AS INT64) AS rows_moved, "
        f"{at} AS recorded_at"
        for table, successor in successors.items()
    )
    return (
        f"{registry_ddl(project, control)};\nBEGIN TRANSACTION;\n"
        f"UPDATE {registry} SET consolidated_table = {string_literal(plan.consolidated_table)}, state = '{PLANNED}', "
        f"recorded_at = {at} WHERE dataset = {string_literal(plan.dataset)} AND state = '{MOVED}' "
        f"AND version_table IN ({names});\n"
        f"INSERT INTO {registry} ({_COLUMNS}) SELECT n.* FROM ({rows}) AS n WHERE NOT EXISTS "
        f"(SELECT 1 FROM {registry} AS r WHERE r.dataset = n.dataset AND r.version_table = n.version_table);\n"
        "COMMIT TRANSACTION;"
    )


def count_queries(project: str, dataset: str, tables: Sequence[str]) -> list[str]:
    """Queries giving (t, n): each table's row count, at most MAX_TABLES_PER_QUERY tables per query."""
    return [
        " UNION ALL ".join(
            f"SELECT {string_literal(t)} AS t, COUNT(*) AS n FROM {quote_path(project, dataset, t)}" for t in chunk
        )
        for chunk in _chunks(tables)
    ]


def read_queries(project: str, dataset: str, tables: Sequence[str]) -> list[str]:
    """Queries reading every row of `tables` (for a dry run's byte estimate), chunked like count_queries."""
    return [
        " UNION ALL ".join(
            f"SELECT TO_JSON_STRING(v) AS row FROM {quote_path(project, dataset, t)} AS v" for t in chunk
        )
        for chunk in _chunks(tables)
    ]


def _chunks(tables: Sequence[str]) -> list[Sequence[str]]:
    return [tables[i : i + MAX_TABLES_PER_QUERY] for i in range(0, len(tables), MAX_TABLES_PER_QUERY)]
