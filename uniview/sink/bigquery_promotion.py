"""How a typed batch moves into its BigQuery tables: the SQL of the promotion step (pure, no I/O).

The load step types a batch's lines into typed staging tables (uniview.sink.bigquery_typing); set-based
INSERTs then move each version table's rows (and each dataset's quarantine rows) out of them.  The INSERTs
are grouped into parts of at most MAX_TABLES_PER_TRANSACTION tables and MAX_SCRIPT_CHARS characters; each
part is one multi-statement transaction that also records the part in the steps table, and runs only when
the part is not recorded yet.  So a part is in BigQuery completely or not at all, and a replayed batch skips
the parts that are in.  A row's `_cdc_ingested_at` is the time its part commits.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

from uniview.core.identifiers import quote_path, string_literal
from uniview.core.landing_layout import CDC_COLUMNS
from uniview.sink.frames import QUARANTINE_COLUMNS
from uniview.sink.landing import BatchKey
from uniview.sink.reasons import SKIPPED
from uniview.sink.routing import VersionRoute, route_shapes
from uniview.warehouse.bigquery_folds import redirected_query

#: BigQuery: one transaction mutates at most 100 tables (the steps table is one of them).
MAX_TABLES_PER_TRANSACTION = 100
#: Well under BigQuery's 1,024K characters per query.
MAX_SCRIPT_CHARS = 900_000
STEPS_TABLE = "_uniview_batch_steps"
#: A row's _cdc_ingested_at: when its part's transaction runs, so a change committed later is never stamped earlier
#: than a change a maintenance of <table>_current has already read (uniview.current.table's watermark).
INGESTED_AT = "CURRENT_TIMESTAMP()"


@dataclass(frozen=True)
class Insert:
    """One INSERT ... SELECT into `target` (dataset, table)."""

    target: tuple[str, str]
    sql: str


@dataclass(frozen=True)
class TypedChunk:
    """One typed staging table, `table` in the control dataset: the rows of `routes` (indexes into the batch's
    routes); `fields`: {(shape, position): the column holding column `position` of that shape's rows}.  The
    first chunk of a batch also holds the lines rejected before typing."""

    routes: list[int]
    table: str
    fields: Mapping[tuple[int, int], str]


@dataclass(frozen=True)
class TypedBatch:
    """One batch typed in its staging tables, ready to promote: `read` lines, routed to `routes`."""

    key: BatchKey
    read: int
    routes: list[VersionRoute]
    chunks: list[TypedChunk]
    notify: bool

    @cached_property
    def route_shape(self) -> list[int]:
        """The shape of each route (routing.route_shapes), as the typing numbered them."""
        return route_shapes(self.routes)

    @cached_property
    def _fields(self) -> dict[tuple[int, int], str]:
        return {member: field for chunk in self.chunks for member, field in chunk.fields.items()}

    def typed_field(self, route: int, position: int) -> str:
        """The staged column holding column `position` of route `route`'s rows."""
        return self._fields[(self.route_shape[route], position)]


def route_inserts(project: str, control: str, batch: TypedBatch, route_rows: Mapping[int, int]) -> list[Insert]:
    """For each route that writes rows (`route_rows`: the rows per route), one INSERT from its typed staging
    table.  A route whose every record was quarantined writes nothing, and its version table is not created:
    an INSERT into it would fail the batch."""
    inserts = []
    for chunk in batch.chunks:
        for index in chunk.routes:
            if not route_rows.get(index):
                continue
            route = batch.routes[index]
            names = [c.name for c in route.columns] + [name for name, _ in CDC_COLUMNS]
            values = [batch.typed_field(index, j) for j in range(len(route.columns))]
            values += [INGESTED_AT if name == "_cdc_ingested_at" else name for name, _ in CDC_COLUMNS]
            sql = (
                f"INSERT INTO {quote_path(project, route.dataset, route.table_name)} "
                f"({', '.join(quote_path(n) for n in names)})\n"
                f"SELECT {', '.join(values)} FROM {quote_path(project, control, chunk.table)} "
                f"WHERE _route = {index} AND _reason IS NULL"
            )
            inserts.append(Insert((route.dataset, route.table_name), sql))
    return inserts


def quarantine_inserts(
    project: str, control: str, datasets: Sequence[str], quarantine_table: str, batch: TypedBatch
) -> list[Insert]:
    """For each dataset with quarantined rows, one INSERT per typed staging table."""
    columns = ", ".join(name for name, _ in QUARANTINE_COLUMNS)
    kept = ", ".join(string_literal(reason) for reason in sorted(SKIPPED))
    return [
        Insert(
            (dataset, quarantine_table),
            f"INSERT INTO {quote_path(project, dataset, quarantine_table)} ({columns})\n"
            f"SELECT {columns} FROM {quote_path(project, control, chunk.table)} WHERE _reason IS NOT NULL "
            f"AND _reason NOT IN ({kept}) AND _dataset = {string_literal(dataset)}",
        )
        for dataset in datasets
        for chunk in batch.chunks
    ]


def group_parts(
    inserts: Sequence[Insert], max_tables: int = MAX_TABLES_PER_TRANSACTION, max_chars: int = MAX_SCRIPT_CHARS
) -> list[list[Insert]]:
    """Consecutive inserts grouped so each part mutates at most max_tables - 1 tables (one is left for
    the steps table) and stays under max_chars characters."""
    parts: list[list[Insert]] = []
    tables: set[tuple[str, str]] = set()
    chars = 0
    for insert in inserts:
        new_table = insert.target not in tables
        if parts and ((new_table and len(tables) + 1 > max_tables - 1) or chars + len(insert.sql) > max_chars):
            parts.append([])
            tables, chars = set(), 0
        if not parts:
            parts.append([])
        parts[-1].append(insert)
        tables.add(insert.target)
        chars += len(insert.sql) + 2
    return parts


def batch_filter(key: BatchKey) -> str:
    """The WHERE condition that selects one batch's rows of the ledger or the steps table."""
    return f"stream = {string_literal(key.stream)} AND batch_id = {key.batch_id}"


def step_query(project: str, control: str, key: BatchKey, step: str) -> str:
    """The `detail` of one recorded step of a batch (no row when it is not recorded)."""
    return (
        f"SELECT detail FROM {quote_path(project, control, STEPS_TABLE)} WHERE {batch_filter(key)} "
        f"AND step = {string_literal(step)}"
    )


def step_record(project: str, control: str, key: BatchKey, step: str, detail: str | None) -> str:
    """The INSERT that records one step of a batch."""
    text = "NULL" if detail is None else string_literal(detail)
    return (
        f"INSERT INTO {quote_path(project, control, STEPS_TABLE)} (stream, batch_id, step, detail, at) "
        f"VALUES ({string_literal(key.stream)}, {key.batch_id}, {string_literal(step)}, {text}, CURRENT_TIMESTAMP())"
    )


def step_recorded_once(project: str, control: str, key: BatchKey, step: str, detail: str) -> str:
    """One script that records a step of a batch with `detail` unless an earlier attempt recorded it, and reads the
    recorded detail back: a replay gets what the first attempt recorded."""
    return (
        f"IF NOT EXISTS ({step_query(project, control, key, step)}) THEN\n"
        f"  {step_record(project, control, key, step, detail)};\n"
        f"END IF;\n{step_query(project, control, key, step)}"
    )


def part_script(
    project: str, control: str, key: BatchKey, number: int, part: Sequence[Insert], guard: str | None = None
) -> str:
    """The transaction of one part, skipped when the steps table already records it; `guard` (a
    statement that fails the transaction when a target may no longer be written) comes first."""
    step = f"part-{number}"
    # the step is recorded before the rows, so its time is never later than theirs: a batch's first step bounds
    # the `_cdc_ingested_at` it stamped from below (uniview.current.table.ledger_batch)
    statements = ";\n  ".join(
        ([guard] if guard else []) + [step_record(project, control, key, step, None)] + [insert.sql for insert in part]
    )
    return (
        f"IF NOT EXISTS ({step_query(project, control, key, step)}) THEN\n"
        f"  BEGIN TRANSACTION;\n  {statements};\n  COMMIT TRANSACTION;\nEND IF;"
    )


#: The routes of the rows a batch's reads give with its typing counts (bigquery_typing.typing_scripts' `reads`).
FOLDED_ROUTE, PLAN_ROUTE = -2, -3


@dataclass(frozen=True)
class BatchReads:
    """What a batch reads of the control dataset with its typing: its targets that consolidation folded (dataset,
    version table -> successor) and the plan an earlier attempt recorded (None: none did)."""

    folded: Mapping[tuple[str, str], str]
    plan: str | None

    @classmethod
    def from_rows(cls, rows: Sequence[tuple]) -> BatchReads:
        """The reads' rows (route, table, dataset, _, detail) among a typing script's."""
        folded = {(dataset, table): detail for route, table, dataset, _, detail in rows if route == FOLDED_ROUTE}
        plans = [detail for route, _, _, _, detail in rows if route == PLAN_ROUTE]
        return cls(folded, plans[0] if plans else None)


def batch_reads(project: str, control: str, key: BatchKey, targets: Sequence[tuple[str, str]]) -> list[str]:
    """The reads a batch writing to `targets` (dataset, version table) makes with its typing: the folded versions
    among them, and its plan as an earlier attempt recorded it; none without a target."""
    if not targets:
        return []
    folded = redirected_query(project, control, targets)
    return [
        f"SELECT {FOLDED_ROUTE}, version_table, dataset, CAST(NULL AS INT64), successor_table FROM ({folded})",
        f"SELECT {PLAN_ROUTE}, CAST(NULL AS STRING), CAST(NULL AS STRING), CAST(NULL AS INT64), detail "
        f"FROM ({step_query(project, control, key, 'plan')})",
    ]
