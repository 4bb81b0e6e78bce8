"""Plan `<table>_current` as a TABLE kept incrementally: the same rows and values as the current view
(uniview.current.view), at a cost proportional to the changes since the last refresh.

Every fact the view computes is a max-by over changes in one order (the view's `newest_first`), so the
state is merged with max-by merges, which are commutative, associative and idempotent: changes read
twice (retries, duplicate deliveries, a refresh killed half-way, two refreshes racing), and changes of
an older sequence that arrive late, all give the same state.  The order is encoded as ONE sortable
string, `_uniview_order` (`ordering_key`): larger is newer, in byte order, on BigQuery and DuckDB alike.

Two tables in the target dataset, next to the views (names: CurrentTablePlan):

- `<family>_current` (`table`): exactly the view's columns and rows, what analysts read.  Its
  description (DuckDB: comment) records the state and presentation fingerprints (`description`).
- `_uniview_current_state_<family>_<state hash>` (`state_table`), ONE table whose column `_uniview_kind` (KIND)
  says what a row is, so one MERGE writes all of it and a statement reading any of it references one table
  (BigQuery bills at least 10 MB per table a statement references, docs/billing.md):
  - KEY_ROW, per (_cdc_database, key): the newest change's unified columns and version table, `_uniview_db` (the
    database as a non-NULL key), `_uniview_order`, and per carried column `_uniview_carried_N` (the value the
    newest change that sent it sent) and `_uniview_carried_N_at` (that change's order).  Deleted and truncated
    keys stay as tombstones: a late change older than them then stays hidden.
  - FACT_ROW, per (database, version table): the newest change (`_uniview_max`), the newest TRUNCATE
    (`_uniview_truncate`) and the newest `_cdc_ingested_at` applied (`_uniview_watermark`); and, as fact rows
    whose `_uniview_db` is NULL, the sink's batches (its ledger, uniview.sink.landing.LEDGER_TABLE) whose rows
    this table has applied: `_uniview_stream`, `_uniview_batch_id`, and the ledger's `landed_at` as sortable
    text (`_uniview_landed_at`; `applied_select` and `BatchWindow` say how they are used).  One query reads the
    watermark and the batches applied.
  - NEW_ROW: a change of the window a maintenance applies, in the key state's shape, written by its first
    statement and deleted by its last, in its one transaction: no committed state holds one.

The state hash changes when the state's shape (or STATE_FORMAT) does (a column appears or changes type, the key
or the version column changes): the table then gets a new name and is built from the whole history.
A new version that keeps the unified columns and types is absorbed: only the presentation changes,
and `<family>_current` is rewritten from the key state (no history read).

Statements (`Statement.sql` is BigQuery SQL; uniview.warehouse.duckdb_current runs them on DuckDB):

- `build_statements()` (first refresh, a changed state hash, or --rebuild-current): the window
  `_uniview_window` (every change, a temporary table), then CREATE OR REPLACE the state (key and fact rows),
  and last `<family>_current` with its description; then drop the window.  On DuckDB one transaction.
  Where DDL cannot be in a transaction (BigQuery), run them in this order: the table's description is
  written last, so until it is the next refresh rebuilds again.
- `maintain_statements(window)` (ONE transaction, three writes, each referencing few tables):
  1. INSERT into the state, as new rows, the unified view's rows the condition `window` selects
  (`BatchWindow.condition`: exactly the rows not applied yet, see below): its count of rows is the count of
  changes read (BigQuery: `@@row_count`, kept in CHANGES_VARIABLE, no query); 2. (a family whose keys change)
  the check that stops the maintenance for a rebuild (`relink_select`: on DuckDB a statement of its own, on
  BigQuery in the source of the next MERGE, whose ERROR() stops the script and rolls the INSERT back); 3. MERGE
  into `<family>_current` the rows to present again (`scope_select`, the MERGE's source): one per key of the new
  rows and per key of the databases whose every row must be presented again (sql_templates/
  current_table_redo.sql.j2, with the facts before and after their merge), shown or not, presented from the key
  states and the facts merged with the new rows (a row shown replaces or inserts its key's row, a row not shown
  deletes it); 4. MERGE the state (`_state_merge`): the key states and the facts merged with the new rows, the
  batches recorded as fact rows of their own (this advances the watermark), the new rows and the batches long
  applied deleted.  Statements not marked `typed` are portable SQL: when no name needs quoting they read the
  same on DuckDB.
- `represent_statements(window)`: steps 1, 2 and 4, then `<family>_current` replaced whole from the key
  states with the new description (when only the presentation fingerprint changed).

What a maintenance reads (`BatchWindow`): the rows stamped after the newest `_cdc_ingested_at` applied
(the watermark), and the rows of each batch of the sink's ledger that wrote to the family, is not among the
batches applied (fact rows of `state_table`) and was stamped at or before the watermark (a batch that committed late: another
stream's, or a BigQuery batch whose parts committed over time), by the batch's exact ingestion range.
Nothing else: no fixed re-read, whatever the size or delay of a batch.  When every batch applied names the version
tables it wrote rows to (`BatchWindow.reads`), only those are read, each in the unified view's shape
(`window_source`): what one maintenance references, and BigQuery's floor of it, does not grow with the history.  Rows read twice (a batch whose
rows were stamped after the watermark and later appear in the ledger, two maintenances racing) are
harmless.  Rows written by something other than the sink have no ledger entry: they are read when
stamped after the watermark by a maintenance that applies no batch of the ledger, so such a writer must commit in
stamp order (one DuckDB process does).
Rows whose `_cdc_ingested_at` is NULL are read by every refresh.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal

from uniview.core import landing_layout as layout
from uniview.core import limits
from uniview.core.identifiers import identifier, identifier_path, string_literal, validate_table
from uniview.core.render import render
from uniview.core.schema import TableVersion, version_table_prefix
from uniview.core.types import BQType
from uniview.current.order import database_key, ordering_key
from uniview.current.rekeyed import rekeyed_source
from uniview.current.view import (
    CurrentRules,
    carried_struct,
    current_rules,
    current_view_name,
    link_facts,
)

#: How long a ledger row may take to commit after the `landed_at` it stamps: a maintenance reads the
#: ledger's rows landed after the newest applied batch's `landed_at` less this (the ledger, not the data).
LEDGER_HORIZON_SECONDS = 3600
#: At most this many separate ranges of late batches in one window (more are read as one range).
MAX_LATE_RANGES = 100
#: At most this many characters of version tables' SELECTs in one window (more: the window reads the unified view).
MAX_READ_CHARS = 100_000
#: Bump when the encoding of the state changes: the state hash changes and every table is rebuilt.
STATE_FORMAT = 4
#: Temporary tables of one refresh (BigQuery script and DuckDB session temporaries, read unqualified).
WINDOW = "_uniview_window"
#: Aliases of the rows of the key state, of `<family>_current` and of the window: named apart from every source
#: column, which in GoogleSQL would be read first (a family with a column `c` made `c._cdc_database` a field
#: access on that column).
STATE_ROW, SHOWN_ROW, WINDOW_ROW = "_uniview_state_row", "_uniview_shown_row", "_uniview_window_row"
REDO = "_uniview_redo"
#: The CTE of a statement's source that reads the new rows (NEW_ROW) once: the source refers to it by name.
NEW = "_uniview_new"
TEMPORARY = (WINDOW,)
#: The state table's column that says what a row is: a key's state (KEY_ROW), the facts of a (database, version
#: table) or a batch applied (FACT_ROW), or a change of the window a maintenance applies (NEW_ROW).
KIND = "_uniview_kind"
KEY_ROW, FACT_ROW, NEW_ROW = "key", "fact", "new"
#: The script variable a maintenance keeps its count of the window's rows in (BigQuery's @@row_count of the INSERT
#: that writes them: no query is billed for it).
CHANGES_VARIABLE = "_uniview_changes"
#: The alias of a MERGE's source rows (named apart from every source column, like the aliases above).
MERGED_ROW = "_uniview_merged_row"
#: The key state's facts about key changes, kept like carried columns (value, `_at`): the create of an unresolved
#: key change the key's row rests on (`database/sequence`), and the key's newest delete a key change made.
LINK_STATE = ("_uniview_link_pending", "_uniview_link_moved")
#: `UNIVIEW_CURRENT_KILL_AT=<point>` makes a refresh SIGKILL itself there (the tests' kill -9; each warehouse names
#: its points).
KILL_AT = "UNIVIEW_CURRENT_KILL_AT"
#: The message of the check that stops a maintenance whose changes a key change makes the table rebuild for.
RELINK = "uniview: a key change to follow; the current table is rebuilt"
_DESCRIPTION = re.compile(
    r"uniview current table: state (?P<state>[0-9a-f]{64}) presentation (?P<present>[0-9a-f]{64})"
)
Action = Literal["create", "rebuild", "re-present", "maintain"]


@dataclass(frozen=True)
class Statement:
    """One statement of a refresh.  `kind`: "temp" (CREATE OR REPLACE TEMP TABLE table AS select),
    "replace" (CREATE OR REPLACE TABLE table AS select, with `description`), "delete" (DELETE FROM
    table WHERE condition), "insert" (INSERT INTO table (columns) select), "drop" (DROP TABLE IF EXISTS
    table, a temporary one), "merge" (MERGE table AS alias USING (select) AS MERGED_ROW ON condition, then
    `clauses`: its WHEN clauses), "assert" (stop the script with RELINK unless `select`, a count, is 0: run
    by DuckDB only, BigQuery checks it in the MERGE that has it as `guard`).  `typed`: the select reads column
    types the translation to another engine must know (uniview.warehouse.duckdb_sql); the others use only
    portable SQL and may qualify columns."""

    kind: Literal["temp", "replace", "delete", "insert", "merge", "drop", "assert"]
    table: str
    select: str | None = None
    condition: str | None = None
    columns: tuple[str, ...] = ()
    description: str | None = None
    typed: bool = False
    #: The deleted table's alias, which the condition names.
    alias: str | None = None
    #: A replaced table's clustering columns (BigQuery; DuckDB has none).
    cluster: tuple[str, ...] = ()
    #: A MERGE's WHEN clauses.
    clauses: str = ""
    #: A count that stops a MERGE with RELINK unless it is 0, checked in its source (BigQuery: one statement less
    #: than an ASSERT, and one billed table reference less).
    guard: str | None = None

    @property
    def on_bigquery(self) -> bool:
        """Whether BigQuery runs it: an "assert" is checked there by the MERGE that has it as `guard`."""
        return self.kind != "assert"

    @property
    def sql(self) -> str:
        """The statement in BigQuery SQL."""
        if self.kind == "temp":
            return f"CREATE OR REPLACE TEMP TABLE {self.table} AS\n{self.select}"
        if self.kind == "replace":
            options = f"\nOPTIONS(description={string_literal(self.description)})" if self.description else ""
            cluster = f"\nCLUSTER BY {', '.join(self.cluster)}" if self.cluster else ""
            return f"CREATE OR REPLACE TABLE {self.table}{cluster}{options} AS\n{self.select}"
        if self.kind == "delete":
            alias = f" AS {self.alias}" if self.alias else ""
            return f"DELETE FROM {self.table}{alias} WHERE {self.condition}"
        if self.kind == "insert":
            return f"INSERT INTO {self.table} ({', '.join(self.columns)})\n{self.select}"
        if self.kind == "merge":
            source = self.select
            if self.guard:
                check = f"IF(({self.guard}) = 0, TRUE, ERROR({string_literal(RELINK)}))"
                source = f"SELECT * FROM (\n{source}\n)\nWHERE (SELECT {check})"
            return (
                f"MERGE INTO {self.table} AS {self.alias}\nUSING (\n{source}\n) AS {MERGED_ROW}\n"
                f"ON {self.condition}\n{self.clauses}"
            )
        if self.kind == "assert":
            return f"ASSERT ({self.select}) = 0 AS {string_literal(RELINK)}"
        return f"DROP TABLE IF EXISTS {self.table}"


@dataclass(frozen=True)
class CurrentTablePlan:
    """What keeps `<family>_current` as a table: its tables, fingerprints and statements."""

    family: str
    dataset: str
    unified: str
    #: Quoted names of the unified columns, the version column last: the table's columns.
    columns: tuple[str, ...]
    #: Quoted (_cdc_database, key columns...).
    partition: tuple[str, ...]
    version_column: str
    carried: tuple[str, ...]
    rules: CurrentRules
    version_number: str
    state_hash: str
    #: The version's number as text of a fixed width (it sorts like the number), for uniview.current.older_rows.
    version_text: str
    #: The dataset of the version tables (the sink's ledger names it); None: any.
    source_dataset: str | None = None
    #: The key columns BigQuery can cluster by (at most three, in key order), quoted.
    cluster_key: tuple[str, ...] = ()
    #: How key changes are followed (uniview.current.view.link_facts); None: no column is carried.
    links: dict[str, object] | None = None
    #: Per version table (its name), the SELECT that reads it in the unified view's shape: what a window reads
    #: when the batches it applies name their tables (`window_source`).
    version_reads: tuple[tuple[str, str], ...] = ()

    # ------------------------------------------------------------------ names

    @property
    def table_name(self) -> str:
        return current_view_name(self.family)

    @property
    def state_name(self) -> str:
        return f"_uniview_current_state_{self.family}_{self.state_hash[:12]}"

    @property
    def state_names(self) -> tuple[str]:
        return (self.state_name,)

    @property
    def state_prefixes(self) -> tuple[str, ...]:
        """The names of this family's state tables of any state hash (and format) start with these."""
        return state_prefixes(self.family)

    @property
    def table(self) -> str:
        return identifier_path(self.dataset, self.table_name)

    @property
    def state_table(self) -> str:
        return identifier_path(self.dataset, self.state_name)

    @property
    def state_columns(self) -> tuple[str, ...]:
        """The key state's columns, in order."""
        carried = [name for c in self.carried for name in (c, f"{c}_at")]
        return (*self.columns, "_uniview_db", "_uniview_order", *carried)

    @property
    def state_table_columns(self) -> tuple[str, ...]:
        """The state table's columns, in order: the key state's, the facts' own, and the row's kind."""
        own = [column for column in self.facts_columns if column not in self.state_columns]
        return (*self.state_columns, *own, KIND)

    def state_rows(self, kind: str, columns: Sequence[str], condition: str | None = None) -> str:
        """The state table's rows of `kind` (and `condition`), their `columns` (a subquery)."""
        where = f"{KIND} = {string_literal(kind)}" + (f" AND {condition}" if condition else "")
        return f"(SELECT {', '.join(columns)} FROM {self.state_table} WHERE {where})"

    @property
    def key_rows(self) -> str:
        """The key states (a subquery)."""
        return self.state_rows(KEY_ROW, self.state_columns)

    @property
    def new_rows(self) -> str:
        """The changes a maintenance applies, written into the state table by its first statement (a subquery in
        the key state's shape): what the statements after it read as the window, named NEW in their sources."""
        return self.state_rows(NEW_ROW, self.state_columns)

    def with_new(self, select: str, *ctes: tuple[str, str]) -> str:
        """`select` with the CTEs NEW (the new rows) and then `ctes` (name, select) before it."""
        named = [f"{NEW} AS {self.new_rows}", *(f"{name} AS (\n{body}\n)" for name, body in ctes)]
        return f"WITH {', '.join(named)}\n{select}"

    def as_state_rows(self, select: str, kind: str, columns: Sequence[str]) -> str:
        """The rows of `select` (its `columns`) as rows of the state table of `kind`, the other columns NULL."""
        listed = [column if column in columns else f"NULL AS {column}" for column in self.state_table_columns[:-1]]
        return f"SELECT {', '.join(listed)}, {string_literal(kind)} AS {KIND}\nFROM (\n{select}\n)"

    # ------------------------------------------------------------ fingerprints

    @property
    def presentation_hash(self) -> str:
        return hashlib.sha256(self.present_select(self.key_rows).encode("utf-8")).hexdigest()

    @property
    def description(self) -> str:
        """What `<family>_current`'s description records: the fingerprints it was made with."""
        return f"uniview current table: state {self.state_hash} presentation {self.presentation_hash}"

    def action(self, description: str | None, state_tables_exist: bool, rebuild: bool = False) -> Action:
        """What a refresh does, given the stored table's description (None: no table) and whether this
        state hash's state table exists."""
        found = _DESCRIPTION.search(description or "")
        if found is None:
            return "create"
        if rebuild or found["state"] != self.state_hash or not state_tables_exist:
            return "rebuild"
        return "maintain" if found["present"] == self.presentation_hash else "re-present"

    def check_limits(self) -> None:
        """Every statement within BigQuery's query length (a script is one query): LimitError otherwise."""
        window = BatchWindow(None, ((_SAMPLE_TIME, _SAMPLE_TIME),) * MAX_LATE_RANGES).condition(timestamp_literal)
        script = sum(len(s.sql) for s in self.maintain_statements(window)) + len(self.floor_select) + MAX_READ_CHARS
        longest = max(script, *(len(s.sql) for s in self.build_statements()))
        if longest > limits.MAX_QUERY_CHARS:
            raise limits.LimitError(
                f"family {self.family!r}: keeping {self.table_name} as a table needs {longest:,} characters of SQL "
                f"in one script, over BigQuery's {limits.MAX_QUERY_CHARS:,}; keep it as a view (--current)"
            )

    # ------------------------------------------------------------------ selects

    @property
    def floor_select(self) -> str:
        """The watermark: the newest `_cdc_ingested_at` applied (NULL: none)."""
        return f"SELECT MAX(_uniview_watermark) FROM {self.state_table} WHERE {KIND} = {string_literal(FACT_ROW)}"

    @property
    def applied_select(self) -> str:
        """The batches applied (stream, batch_id, landed_at), fact rows of the state table."""
        return (
            "SELECT _uniview_stream AS stream, _uniview_batch_id AS batch_id, _uniview_landed_at AS landed_at "
            f"FROM {self.state_table} WHERE {KIND} = {string_literal(FACT_ROW)} AND _uniview_stream IS NOT NULL"
        )

    def window_source(self, reads: Sequence[str] | None) -> str:
        """What a window reads: only the version tables `reads` names, each in the unified shape, when each is a
        version of the plan and their SELECTs are short enough; else the unified view (every version table)."""
        selects = dict(self.version_reads)
        if not reads or any(name not in selects for name in reads):
            return self.unified
        source = "(\n" + "\nUNION ALL\n".join(selects[name] for name in sorted(set(reads))) + "\n)"
        return source if len(source) <= MAX_READ_CHARS else self.unified

    def window_select(self, window: str | None, reads: Sequence[str] | None = None) -> str:
        """The changes the condition `window` selects (an SQL expression, BatchWindow.condition; None: every
        change), of the version tables `reads` names (None: of every one, through the unified view)."""
        return render(
            "current_table_window.sql.j2",
            unified=self.window_source(reads),
            carried=[
                (name, identifier(column), not_sent, left_out, carried_struct(column, left_out))
                for name, column, not_sent, left_out in self.rules.carried
            ],
            database_key=database_key(),
            order=ordering_key(),
            window=window,
            links=self.links,
            operation=identifier(layout.OPERATION),
        )

    def keys_select(self, stored: Sequence[str], window: str) -> str:
        """The key states of `window`'s changes merged with the stored key states each condition of `stored` (on
        STATE_ROW) selects, one per key: a key two conditions select is read twice, which a max-by merge allows,
        and each condition is a plain semi-join a planner filters the key states by."""
        columns = self.state_columns
        listed = ", ".join(columns)
        sources = [
            f"SELECT {listed} FROM {self.state_table} AS {STATE_ROW} "
            f"WHERE {STATE_ROW}.{KIND} = {string_literal(KEY_ROW)} AND {condition}"
            for condition in stored
        ]
        sources.append(f"SELECT {listed} FROM {window}")
        plain = columns[: len(self.columns) + 2]
        return render(
            "current_table_keys.sql.j2",
            plain=plain,
            carried=self.carried,
            carried_columns=columns[len(plain) :],
            key=self.partition[1:],
            sources=sources,
        )

    @property
    def facts_columns(self) -> tuple[str, ...]:
        """The fact rows' columns, in order (`_uniview_min` when the older rows depend on the version entered)."""
        spans = ("_uniview_min",) if self.rules.entered else ()
        facts = ("_uniview_db", self.version_column, "_uniview_max", "_uniview_truncate", "_uniview_watermark")
        return (*facts, *spans, *APPLIED_COLUMNS)

    def facts_select(self, with_facts: bool, batches: Sequence[AppliedBatch] = (), window: str | None = None) -> str:
        """The facts of `window` (None: the new rows; `with_facts`: merged with the stored facts of its databases), then
        `batches` as fact rows of their own."""
        facts = render(
            "current_table_facts.sql.j2",
            version=self.version_column,
            facts=self.window_facts if with_facts else None,
            spans=bool(self.rules.entered),
            operation=identifier(layout.OPERATION),
            ingested=identifier(layout.INGESTED_AT),
            window=window or NEW,
        )
        spans = ("NULL",) if self.rules.entered else ()
        return "\nUNION ALL\n".join((facts, *(applied_row(batch, ("NULL",) * 5 + spans) for batch in batches)))

    @property
    def window_facts(self) -> str:
        """The stored facts of the new rows' databases (a subquery): the only ones a maintenance changes."""
        return self.state_rows(FACT_ROW, self.facts_columns, f"_uniview_db IN (SELECT _uniview_db FROM {NEW})")

    @property
    def stored_facts(self) -> str:
        """The fact rows of (database, version table): the batches applied left out."""
        return self.state_rows(FACT_ROW, self.facts_columns, "_uniview_db IS NOT NULL")

    def databases_select(self, facts: str) -> str:
        """Per database of `facts`: its newest version (table and number), last TRUNCATE, gone_N."""
        return render(
            "current_table_databases.sql.j2",
            version=self.version_column,
            version_number=self.version_number,
            gone=self.rules.gone,
            entered=self.rules.entered,
            version_text=self.version_text,
            facts=facts,
        )

    def redo_select(self) -> str:
        return render(
            "current_table_redo.sql.j2",
            window=NEW,
            before=self.databases_select(self.stored_facts),
            after=self.databases_select(f"(\n{self.facts_select(with_facts=True)}\n)"),
            facts=self.stored_facts,
            version=self.version_column,
            operation=identifier(layout.OPERATION),
            spans=bool(self.rules.entered),
        )

    def present_select(
        self, keys: str, every_key: bool = False, facts: str | None = None, passed: Sequence[str] = ()
    ) -> str:
        """The rows of `<family>_current` for the key states in `keys`, by the facts (`facts`: a table or a
        subquery; None: the stored fact rows).  `every_key`: a row for each key state, with its `_uniview_shown_db`,
        whether it is `_uniview_shown`, and its columns `passed`."""
        return render(
            "current_table_present.sql.j2",
            every_key=every_key,
            passed=passed,
            outputs=self.rules.outputs,
            version_number=self.version_number,
            keys=keys,
            databases=self.databases_select(facts or self.stored_facts),
            operation=identifier(layout.OPERATION),
        )

    def _key_in_window(self, alias: str) -> str:
        """`alias`'s key state has a key of the new rows (NULL keys are one key)."""
        return " AND ".join((*self._cluster_filter(alias, True), self._same_key(alias, True)))

    def _same_key(self, alias: str, state: bool, source: str | None = None) -> str:
        """A row of `source` (in the key state's shape) has the key of `alias`'s row."""
        database, *key = self.partition
        own = f"{alias}._uniview_db" if state else database_key(f"{alias}.{database}")
        tests = [f"{WINDOW_ROW}._uniview_db = {own}"]
        tests += [f"{WINDOW_ROW}.{column} IS NOT DISTINCT FROM {alias}.{column}" for column in key]
        return f"EXISTS (SELECT 1 FROM {source or NEW} AS {WINDOW_ROW} WHERE {' AND '.join(tests)})"

    def _cluster_filter(self, alias: str, state: bool, source: str | None = None) -> tuple[str, ...]:
        """Per clustering column of the key state (or of `<family>_current`), a test that `alias`'s value is one
        of `source`'s: implied by the key test, and a plain column against a semi-join, so BigQuery prunes
        the blocks of the keys not changed and DuckDB filters the scan before it reads the other columns."""
        database = "_uniview_db" if state else self.partition[0]
        source = source or NEW
        tests = [f"{alias}._uniview_db IN (SELECT _uniview_db FROM {source})"] if state else []
        nullable = (*(() if state else (database,)), *self.cluster_key)
        tests += [f"({alias}.{c} IN (SELECT {c} FROM {source}) OR {alias}.{c} IS NULL)" for c in nullable]
        return tuple(tests)

    def _upsert(self, table: str, alias: str, select: str, match: Sequence[str], columns: Sequence[str]) -> Statement:
        """MERGE the rows of `select` (`columns`, named as the target's) into `table`: a row `match`ing one
        (tests of `alias` against MERGED_ROW) replaces it, the others are inserted."""
        values = ", ".join(f"{MERGED_ROW}.{column}" for column in columns)
        assignments = ", ".join(f"{column} = {MERGED_ROW}.{column}" for column in columns)
        clauses = (
            f"WHEN MATCHED THEN UPDATE SET {assignments}\n"
            f"WHEN NOT MATCHED THEN INSERT ({', '.join(columns)}) VALUES ({values})"
        )
        return Statement("merge", table, select, condition=" AND ".join(match), alias=alias, clauses=clauses)

    # --------------------------------------------------------------- statements

    def build_statements(self, batches: Sequence[AppliedBatch] = ()) -> tuple[Statement, ...]:
        """Build the state and the table from every change (first refresh, rebuild); `batches`: the
        ledger's batches of the family committed before, recorded as applied."""
        state = "\nUNION ALL\n".join(
            (
                self.as_state_rows(self.keys_select((), WINDOW), KEY_ROW, self.state_columns),
                self.as_state_rows(self.facts_select(False, batches, WINDOW), FACT_ROW, self.facts_columns),
            )
        )
        return (
            Statement("temp", WINDOW, self.window_select(None), typed=True),
            Statement("replace", self.state_table, state, cluster=self.state_cluster),
            self._replace_table(),
            Statement("drop", WINDOW),
        )

    @property
    def state_cluster(self) -> tuple[str, ...]:
        """The state table's clustering: the kind of row first (the new rows and the facts are blocks of their own),
        then the database and at most two key columns (BigQuery clusters by four)."""
        return (KIND, "_uniview_db", *self.cluster_key[:2])

    def maintain_statements(
        self, window: str | None, batches: Sequence[AppliedBatch] = (), reads: Sequence[str] | None = None
    ) -> tuple[Statement, ...]:
        """Apply the changes the condition `window` selects (BatchWindow.condition; None: every change) in the
        version tables `reads` names (BatchWindow.reads; None: every one) and record `batches` as applied: ONE
        transaction."""
        relink = self.relink_select() if self.links else None
        shown = self._shown_merge()
        return (
            self._insert_new(window, reads),
            *((Statement("assert", WINDOW, relink), dataclasses.replace(shown, guard=relink)) if relink else (shown,)),
            self._state_merge(batches),
        )

    def represent_statements(
        self, window: str | None, batches: Sequence[AppliedBatch] = (), reads: Sequence[str] | None = None
    ) -> tuple[Statement, ...]:
        """Apply the changes `window` selects, then write `<family>_current` again whole from the key state."""
        relink = self.relink_select() if self.links else None
        merge = self._state_merge(batches)
        return (
            self._insert_new(window, reads),
            *((Statement("assert", WINDOW, relink), dataclasses.replace(merge, guard=relink)) if relink else (merge,)),
            self._replace_table(),
        )

    def statements(
        self,
        action: Action,
        window: str | None,
        batches: Sequence[AppliedBatch] = (),
        reads: Sequence[str] | None = None,
    ) -> tuple[Statement, ...]:
        if action in ("create", "rebuild"):
            return self.build_statements(batches)
        if action == "re-present":
            return self.represent_statements(window, batches, reads)
        return self.maintain_statements(window, batches, reads)

    def relink_select(self) -> str:
        """How many changes of the window make the table rebuild (docs/current-state.md#the-current-table): creates
        that left a value out (a key change's), deletes at the place of a key change's create the key state
        still waits for, and changes of a key older than the newest delete a key change made of it."""
        assert self.links is not None
        operation, sequence, unavailable = (
            identifier(layout.OPERATION),
            self.links["sequence"],
            self.links["unavailable"],
        )
        key = self.partition[1:]
        late = [f"{WINDOW_ROW}._uniview_db = {STATE_ROW}._uniview_db"]
        late += [f"{WINDOW_ROW}.{column} IS NOT DISTINCT FROM {STATE_ROW}.{column}" for column in key]
        late += [f"{WINDOW_ROW}._uniview_order < {STATE_ROW}._uniview_link_moved_at"]
        new, keys = self.new_rows, self.key_rows
        return (
            f"(SELECT COUNT(*) FROM {new} WHERE {operation} = 'INSERT' AND ARRAY_LENGTH({unavailable}) > 0)\n"
            f"+ (SELECT COUNT(*) FROM {new} WHERE {operation} = 'DELETE' AND CONCAT(_uniview_db, '/', {sequence}) IN "
            f"(SELECT _uniview_link_pending FROM {keys} WHERE _uniview_link_pending IS NOT NULL))\n"
            f"+ (SELECT COUNT(*) FROM {keys} AS {STATE_ROW} WHERE "
            + " AND ".join(
                (
                    f"{STATE_ROW}._uniview_link_moved_at IS NOT NULL",
                    *self._cluster_filter(STATE_ROW, True, new),
                    f"EXISTS (SELECT 1 FROM {new} AS {WINDOW_ROW} WHERE {' AND '.join(late)})",
                )
            )
            + ")"
        )

    def _insert_new(self, window: str | None, reads: Sequence[str] | None) -> Statement:
        """The window's changes written into the state table as new rows (an INSERT, whose count of rows is the
        window's), which the statements after it read and the state's MERGE folds in and deletes."""
        listed = ", ".join(self.state_columns)
        select = f"SELECT {listed}, {string_literal(NEW_ROW)}\nFROM (\n{self.window_select(window, reads)}\n)"
        return Statement("insert", self.state_table, select, columns=(*self.state_columns, KIND), typed=True)

    def _state_merge(self, batches: Sequence[AppliedBatch]) -> Statement:
        """The state merged with the new rows (a MERGE): the key states of their keys and the facts of their
        (database, version table) pairs replaced or inserted, `batches` recorded as applied (fact rows of their own,
        whose `_uniview_db` is NULL, so they match no row), the new rows deleted, and the batches landed well before
        the newest forgotten (no ledger read reaches them any more).  This advances the watermark."""
        version = self.version_column
        source = "\nUNION ALL\n".join(
            (
                self.as_state_rows(
                    self.keys_select((self._key_in_window(STATE_ROW),), NEW), KEY_ROW, self.state_columns
                ),
                self.as_state_rows(self.facts_select(True, batches), FACT_ROW, self.facts_columns),
            )
        )
        match = [
            *self._cluster_filter(STATE_ROW, True, self.new_rows),
            f"{STATE_ROW}.{KIND} = {MERGED_ROW}.{KIND}",
            f"{STATE_ROW}._uniview_db = {MERGED_ROW}._uniview_db",
            *(f"{STATE_ROW}.{column} IS NOT DISTINCT FROM {MERGED_ROW}.{column}" for column in self.partition[1:]),
            f"({MERGED_ROW}.{KIND} = {string_literal(KEY_ROW)} OR {STATE_ROW}.{version} IS NOT DISTINCT FROM {MERGED_ROW}.{version})",
        ]
        merge = self._upsert(self.state_table, STATE_ROW, self.with_new(source), match, self.state_table_columns)
        gone = f"{STATE_ROW}.{KIND} = {string_literal(NEW_ROW)}"
        if batches:
            newest = max(batch.landed_at for batch in batches)
            forget = (_landed_datetime(newest) - timedelta(seconds=4 * LEDGER_HORIZON_SECONDS)).strftime(LANDED_FORMAT)
            gone = f"({gone} OR {STATE_ROW}._uniview_landed_at < {string_literal(forget)})"
        return dataclasses.replace(merge, clauses=f"{merge.clauses}\nWHEN NOT MATCHED BY SOURCE AND {gone} THEN DELETE")

    def scope_select(self) -> str:
        """The rows of `<family>_current` to present again, read before the state's merge (the key states and the
        facts merged with the new rows are read as subqueries): a row for each of the window's keys and for each key
        of the databases presented again (current_table_redo.sql.j2), shown or not (a deleted key's row goes).
        Every row of `<family>_current` is a key state's, so these are the keys of every row to present again."""
        keys = f"(\n{self.keys_select((self._redone(STATE_ROW), self._key_in_window(STATE_ROW)), NEW)}\n)"
        facts = f"(\n{self.facts_select(with_facts=True)}\n)"
        return self.with_new(self.present_select(keys, True, facts), (REDO, self.redo_select()))

    @staticmethod
    def _redone(alias: str) -> str:
        """`alias`'s key state is of a database presented again whole (REDO)."""
        return f"{alias}._uniview_db IN (SELECT _uniview_db FROM {REDO})"

    def _shown_merge(self) -> Statement:
        """`<family>_current`'s rows of the scope (a MERGE whose source is `scope_select`): a row shown replaces the
        key's row or is inserted, a row not shown (deleted, truncated) deletes the key's row.  Its rows are of the
        window's databases (those presented again whole are some of them), which is what prunes the table."""
        database, *key = self.partition
        same = [f"{MERGED_ROW}._uniview_shown_db = {database_key(f'{SHOWN_ROW}.{database}')}"]
        same += [f"{MERGED_ROW}.{column} IS NOT DISTINCT FROM {SHOWN_ROW}.{column}" for column in key]
        values = ", ".join(f"{MERGED_ROW}.{column}" for column in self.columns)
        assignments = ", ".join(f"{column} = {MERGED_ROW}.{column}" for column in self.columns)
        clauses = (
            f"WHEN MATCHED AND NOT {MERGED_ROW}._uniview_shown THEN DELETE\n"
            f"WHEN MATCHED THEN UPDATE SET {assignments}\n"
            f"WHEN NOT MATCHED AND {MERGED_ROW}._uniview_shown THEN INSERT ({', '.join(self.columns)}) VALUES ({values})"
        )
        return Statement(
            "merge",
            self.table,
            self.scope_select(),
            condition=" AND ".join((self._cluster_filter(SHOWN_ROW, False, self.new_rows)[0], *same)),
            alias=SHOWN_ROW,
            clauses=clauses,
            typed=True,
        )

    def databases_presented(self, action: Action) -> str:
        """A SELECT of how many databases a maintenance presents again whole (read before the state's merge), or a
        re-presentation (all)."""
        if action == "maintain":
            return self.with_new(f"SELECT COUNT(*) FROM {REDO}", (REDO, self.redo_select()))
        return f"SELECT COUNT(DISTINCT _uniview_db) FROM {self.stored_facts}"

    def counts_select(self, action: Action) -> str:
        """A SELECT of what a refresh read (`changes`: the window's rows) and presented again whole (`databases`;
        -1: not counted, for a build, and for a maintenance, where it would be a query of its own).  A build counts
        its temporary table before dropping it; a maintenance and a re-presentation return the count the INSERT of
        the new rows left in CHANGES_VARIABLE, which reads no table (and is billed nothing)."""
        if action in ("create", "rebuild"):
            return f"SELECT (SELECT COUNT(*) FROM {WINDOW}) AS changes, -1 AS databases"
        databases = f"({self.databases_presented(action)})" if action == "re-present" else "-1"
        return f"SELECT {CHANGES_VARIABLE} AS changes, {databases} AS databases"

    def _replace_table(self) -> Statement:
        return Statement(
            "replace",
            self.table,
            self.present_select(self.key_rows),
            description=self.description,
            typed=True,
            cluster=(self.partition[0], *self.cluster_key),
        )


def current_table_plan(
    family: str,
    target_dataset: str,
    unified_view: str,
    columns: dict[str, BQType],
    primary_key: Sequence[str],
    versions: Sequence[TableVersion],
    version_column: str,
    source_dataset: str | None = None,
    version_reads: dict[str, str] | None = None,
    renamed: str = "",
) -> CurrentTablePlan:
    """The plan of `<family>_current` as a table over `target_dataset.unified_view` (columns: name ->
    unified type, in order, the version column left out); PlanError as for the view.  `renamed` says which table
    renames the family's changes follow (uniview.core.table_renames): when it changes, the table is built again."""
    rules = current_rules(family, columns, primary_key, versions, version_column, carried_value=lambda name: name)
    for prefix in state_prefixes(family):
        validate_table(f"{prefix}{'0' * 12}")
    links = link_facts(rules, moved=True)
    carried = tuple(name for name, *_ in rules.carried) + (LINK_STATE if links else ())
    shape = {
        "format": STATE_FORMAT,
        "columns": [[name, str(bq_type)] for name, bq_type in columns.items()],
        "key": [name.lower() for name in primary_key],
        "version_column": version_column,
        "carried": carried,
    }
    if rules.entered:  # the facts keep each version's oldest change too (uniview.current.older_rows)
        shape["spans"] = True
    if renamed:  # changes that belonged to another family belong to this one now, or the other way round
        shape["renamed"] = renamed
    state_hash = hashlib.sha256(json.dumps(shape, sort_keys=True).encode("utf-8")).hexdigest()
    quoted = version_column if version_column == identifier(version_column) else identifier(version_column)
    return CurrentTablePlan(
        family=family,
        dataset=target_dataset,
        unified=rekeyed_source(
            identifier_path(target_dataset, unified_view), versions, {n.lower(): n for n in columns}, version_column
        ),
        columns=(*(identifier(name) for name in columns), identifier(version_column)),
        partition=rules.partition,
        version_column=quoted,
        carried=carried,
        rules=rules,
        version_number=rules.version_number(versions, quoted),
        version_text=rules.version_number(versions, quoted, len(str(len(versions)))),
        state_hash=state_hash,
        source_dataset=source_dataset,
        cluster_key=clusterable_key(primary_key, columns),
        links=links,
        version_reads=tuple((version_reads or {}).items()),
    )


#: The types BigQuery clusters by.
_CLUSTERABLE = ("INT64", "STRING", "DATE", "DATETIME", "TIMESTAMP", "BOOL", "NUMERIC", "BIGNUMERIC")


def clusterable_key(primary_key: Sequence[str], columns: dict[str, BQType]) -> tuple[str, ...]:
    """The key columns (quoted, at most three: the database is the fourth) that BigQuery can cluster by: the
    state and `<family>_current` are clustered by the database and these, so a maintenance's DELETE and
    MERGE of a few keys touch only their blocks."""
    by_name = {name.lower(): (name, bq_type) for name, bq_type in columns.items()}
    found = [by_name[key.lower()] for key in primary_key if key.lower() in by_name]
    return tuple(identifier(name) for name, bq_type in found if str(bq_type) in _CLUSTERABLE)[:3]


def parse_description(description: str | None) -> tuple[str, str] | None:
    """(state hash, presentation hash) a `<family>_current` table's description records, or None."""
    found = _DESCRIPTION.search(description or "")
    return (found["state"], found["present"]) if found else None


def state_prefixes(family: str) -> tuple[str, ...]:
    """The names of `family`'s state tables of any state hash start with these (the first: the one state table; the
    others: the key state, the facts and the batches applied, tables of their own in states of earlier formats)."""
    return (
        f"_uniview_current_state_{family}_",
        f"_uniview_current_keys_{family}_",
        f"_uniview_current_facts_{family}_",
        f"_uniview_current_batches_{family}_",
    )


# ----------------------------------------------------------------- the batches applied

#: `landed_at` as the state's fact rows keep it (`_uniview_landed_at`): UTC text that sorts like the times.
LANDED_FORMAT = "%Y-%m-%d %H:%M:%S.%f"
APPLIED_COLUMNS = ("_uniview_stream", "_uniview_batch_id", "_uniview_landed_at")
_SAMPLE_TIME = datetime(2000, 1, 1, tzinfo=UTC)


@dataclass(frozen=True, order=True)
class AppliedBatch:
    """One batch of the sink's ledger as the state's fact rows record it (`landed_at`: LANDED_FORMAT text)."""

    stream: str
    batch_id: int
    landed_at: str


@dataclass(frozen=True)
class LedgerBatch:
    """One batch of the sink's ledger that wrote rows to the family: when it landed (the ledger's
    `landed_at`) and the range of `_cdc_ingested_at` its rows were stamped with (None: unknown, then
    the horizon before `landed_at` is read)."""

    stream: str
    batch_id: int
    landed_at: datetime
    ingested_from: datetime | None
    ingested_to: datetime | None
    #: The family's version tables it wrote rows to (names; empty: not recorded).
    tables: tuple[str, ...] = ()

    @property
    def applied(self) -> AppliedBatch:
        return AppliedBatch(self.stream, self.batch_id, self.landed_at.astimezone(UTC).strftime(LANDED_FORMAT))

    @property
    def ingested_range(self) -> tuple[datetime, datetime]:
        high = self.ingested_to or self.landed_at
        return (self.ingested_from or self.landed_at - timedelta(seconds=LEDGER_HORIZON_SECONDS), high)


@dataclass(frozen=True)
class BatchWindow:
    """The rows a maintenance reads: stamped after `watermark` (None: every row), or inside one of
    `late` (the ingestion ranges of batches not applied yet that were stamped at or before it); of the
    version tables `reads` names (the tables the batches applied wrote rows to; None: every one)."""

    watermark: datetime | None
    late: tuple[tuple[datetime, datetime], ...] = ()
    reads: tuple[str, ...] | None = None

    def condition(self, literal: Callable[[datetime], str]) -> str:
        """The window's condition on `_cdc_ingested_at`, timestamps written by `literal`."""
        ingested = identifier(layout.INGESTED_AT)
        if self.watermark is None:
            return "TRUE"
        tests = [f"{ingested} IS NULL", f"{ingested} > {literal(self.watermark)}"]
        tests += [f"{ingested} BETWEEN {literal(low)} AND {literal(high)}" for low, high in self.late]
        return "(" + " OR ".join(tests) + ")"

    @property
    def floor(self) -> datetime | None:
        """The oldest stamp the window reads (None: every row): what partition pruning can use."""
        if self.watermark is None:
            return None
        return min([self.watermark, *(low for low, _ in self.late)])


def batch_window(
    watermark: datetime | None, ledger: Sequence[LedgerBatch], applied: Collection[AppliedBatch]
) -> tuple[BatchWindow, tuple[AppliedBatch, ...]]:
    """The window of a maintenance and the batches it applies, from the watermark, the ledger's batches of
    the family read (LEDGER_HORIZON_SECONDS before the newest applied) and those already applied."""
    done = {(batch.stream, batch.batch_id) for batch in applied}
    pending = [batch for batch in ledger if (batch.stream, batch.batch_id) not in done]
    if watermark is None:
        return BatchWindow(None), tuple(sorted(batch.applied for batch in pending))
    named = pending and all(batch.tables for batch in pending)
    reads = tuple(sorted({table for batch in pending for table in batch.tables})) if named else None
    late = sorted(batch.ingested_range for batch in pending if batch.ingested_range[0] <= watermark)
    merged: list[tuple[datetime, datetime]] = []
    for low, high in late:
        if merged and low <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], high))
        else:
            merged.append((low, high))
    if len(merged) > MAX_LATE_RANGES:
        merged = [(merged[0][0], max(high for _, high in merged))]
    return BatchWindow(watermark, tuple(merged), reads), tuple(sorted(batch.applied for batch in pending))


def applied_row(batch: AppliedBatch, facts: Sequence[str]) -> str:
    """A SELECT of `batch` as a fact row: the values `facts` of its fact columns (NULL), then its own."""
    return f"SELECT {', '.join(facts)}, {string_literal(batch.stream)}, {batch.batch_id}, {string_literal(batch.landed_at)}"


def timestamp_literal(moment: datetime) -> str:
    """A TIMESTAMP literal (BigQuery SQL) for `moment`, in UTC to the microsecond."""
    return f"TIMESTAMP {string_literal(moment.astimezone(UTC).strftime('%Y-%m-%d %H:%M:%S.%f+00'))}"


def _landed_datetime(text: str) -> datetime:
    return datetime.strptime(text, LANDED_FORMAT).replace(tzinfo=UTC)


def ledger_batch(
    row: tuple[str, int, str, datetime, datetime | None], family: str, source_dataset: str | None
) -> LedgerBatch | None:
    """A ledger row (stream, batch_id, counts JSON, landed_at, its first step's time or None) as a batch
    of `family`, or None when it wrote no row to the family.  The counts record the tables written and,
    where the landing knows it, the exact range of `_cdc_ingested_at` it stamped."""
    stream, batch_id, counts, landed_at, first_step = row
    recorded = json.loads(counts or "{}")
    prefix = version_table_prefix(family)
    tables = set()
    for qualified in recorded.get("written", {}):
        dataset, _, table = qualified.partition(".")
        if (source_dataset is None or dataset == source_dataset) and table.startswith(prefix):
            tables.add(table)
    if not tables:
        return None
    low, high = recorded.get("ingested") or (None, None)
    landed = _aware(landed_at)
    return LedgerBatch(
        stream,
        int(batch_id),
        landed,
        _aware(datetime.fromisoformat(low)) if low else (_aware(first_step) if first_step else None),
        _aware(datetime.fromisoformat(high)) if high else (landed if first_step else None),
        tuple(sorted(tables)),
    )


def ledger_since(applied_mark: str | None) -> datetime | None:
    """The `landed_at` after which a maintenance reads the ledger: the newest applied less the horizon."""
    if applied_mark is None:
        return None
    return _landed_datetime(applied_mark) - timedelta(seconds=LEDGER_HORIZON_SECONDS)


def _aware(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
