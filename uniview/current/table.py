"""Plan `<table>_current` as a TABLE kept incrementally: the same rows and values as the current view
(uniview.current.view), at a cost proportional to the changes since the last refresh.

Every fact the view computes is a max-by over changes in one order (the view's `newest_first`), so the
state is merged with max-by merges, which are commutative, associative and idempotent: changes read
twice (retries, duplicate deliveries, a refresh killed half-way, two refreshes racing), and changes of
an older sequence that arrive late, all give the same state.  The order is encoded as ONE sortable
string, `_uniview_order` (`ordering_key`): larger is newer, in byte order, on BigQuery and DuckDB alike.

Three tables in the target dataset, next to the views (names: CurrentTablePlan):

- `<family>_current` (`table`): exactly the view's columns and rows, what analysts read.  Its
  description (DuckDB: comment) records the state and presentation fingerprints (`description`).
- `_uniview_current_keys_<family>_<state hash>` (`keys_table`): per (_cdc_database, key) the newest
  change's unified columns and version table, `_uniview_db` (the database as a non-NULL key),
  `_uniview_order`, and per carried column `_uniview_carried_N` (the value the newest change that sent
  it sent) and `_uniview_carried_N_at` (that change's order).  Deleted and truncated keys stay as
  tombstones: a late change older than them then stays hidden.
- `_uniview_current_facts_<family>_<state hash>` (`facts_table`): per (database, version table) the
  newest change (`_uniview_max`), the newest TRUNCATE (`_uniview_truncate`) and the newest
  `_cdc_ingested_at` applied (`_uniview_watermark`).

The state hash changes when the state's shape does (a column appears or changes type, the key or
the version column changes): the tables then get new names and are built from the whole history.
A new version that keeps the unified columns and types is absorbed: only the presentation changes,
and `<family>_current` is rewritten from the key state (no history read).

Statements (`Statement.sql` is BigQuery SQL; uniview.warehouse.duckdb_current runs them on DuckDB):

- `build_statements()` (first refresh, a changed state hash, or --rebuild-current): the window
  `_uniview_window` (every change), then CREATE OR REPLACE the key state, the facts, and last
  `<family>_current` with its description; then drop the temporary tables.  On DuckDB one
  transaction.  Where DDL cannot be in a transaction (BigQuery), run them in this order: the
  table's description is written last, so until it is the next refresh rebuilds again.
- `maintain_statements(floor)` (ONE transaction): 1. `_uniview_window` = the unified view's rows with
  `_cdc_ingested_at > floor` (or NULL); floor = the newest watermark applied less the lag
  (`floor_select`; on BigQuery a script variable, so partition pruning applies); 2. `_uniview_facts`
  = the facts merged with the window; 3. `_uniview_redo` = the databases whose every row must be
  presented again (see sql_templates/current_table_redo.sql.j2); 4. `_uniview_keys` = the window's
  keys' states merged with the window; 5. DELETE + INSERT those keys in the key state; 6. DELETE +
  INSERT the facts (this advances the watermark); 7. `_uniview_scope` = the new states of the
  window's keys and every key state of the redo databases; 8. DELETE the redo databases' rows, then
  the window's keys, from `<family>_current`, and INSERT the scope's presentation; 9. drop the
  temporary tables.  Statements not marked `typed` are portable SQL: when no name needs quoting they
  read the same on DuckDB.
- `represent_statements(floor)`: steps 1-6, then `<family>_current` replaced whole from the key state
  with the new description (when only the presentation fingerprint changed).

Exactness bound: a landing transaction commits within `lag_seconds` of the `_cdc_ingested_at` it
stamps.  Rows read again inside the lag are harmless.  Rows whose `_cdc_ingested_at` is NULL are
read by every refresh.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from uniview.core import landing_layout as layout
from uniview.core import limits
from uniview.core.identifiers import identifier, identifier_path, string_literal, validate_table
from uniview.core.render import render
from uniview.core.schema import TableVersion
from uniview.core.types import BQType
from uniview.current.view import CurrentRules, current_rules, current_view_name

#: How far before the newest applied `_cdc_ingested_at` a refresh reads again (the exactness bound).
DEFAULT_LAG_SECONDS = 3600
#: Bump when the encoding of the state changes: the state hash changes and every table is rebuilt.
STATE_FORMAT = 1
#: Microseconds from 0001-01-01 to 1970-01-01: a timestamp's microseconds since 0001-01-01 are >= 0 and
#: below 10**18, so 18 digits sort like the timestamps.
_EPOCH_OFFSET_MICROS = 62_135_596_800_000_000
_MICROS_DIGITS = 18
#: The operation's rank in the order, newer larger: a delete wins a tie, then an update, an insert, the rest.
_OPERATION_ORDER = "CASE {operation} WHEN 'DELETE' THEN '3' WHEN 'UPDATE' THEN '2' WHEN 'INSERT' THEN '1' ELSE '0' END"
#: Temporary tables of one refresh (BigQuery script and DuckDB session temporaries, read unqualified).
WINDOW = "_uniview_window"
FACTS = "_uniview_facts"
REDO = "_uniview_redo"
KEYS = "_uniview_keys"
SCOPE = "_uniview_scope"
TEMPORARY = (WINDOW, FACTS, REDO, KEYS, SCOPE)
_DESCRIPTION = re.compile(
    r"uniview current table: state (?P<state>[0-9a-f]{64}) presentation (?P<present>[0-9a-f]{64})"
)
Action = Literal["create", "rebuild", "re-present", "maintain"]


def ordering_key() -> str:
    """One STRING that sorts, in byte order, exactly like the view's `newest_first` reversed (larger is
    newer): per component '0' for NULL (the oldest), else '1' and the value: `_cdc_sequence` and
    `_cdc_position` as the hex of their UTF-8 bytes and a '.' (below every hex digit, so a prefix sorts
    first), timestamps as 18 digits of microseconds since 0001-01-01; the operation's rank last."""
    parts = []
    for name in (layout.SEQUENCE, layout.TIMESTAMP, layout.INGESTED_AT, layout.POSITION):
        column = identifier(name)
        if name in (layout.TIMESTAMP, layout.INGESTED_AT):
            micros = f"CAST(UNIX_MICROS({column}) + {_EPOCH_OFFSET_MICROS} AS INT64)"
            text = f"LPAD(CAST({micros} AS STRING), {_MICROS_DIGITS}, '0')"
        else:
            text = f"CONCAT(TO_HEX(CAST({column} AS BYTES)), '.')"
        parts.append(f"IF({column} IS NULL, '0', CONCAT('1', {text}))")
    parts.append(_OPERATION_ORDER.format(operation=identifier(layout.OPERATION)))
    return "CONCAT(" + ", ".join(parts) + ")"


def database_key(column: str = identifier(layout.DATABASE)) -> str:
    """The database as a non-NULL key that equals exactly when the databases are equal or both NULL."""
    return f"IF({column} IS NULL, '0', CONCAT('1', {column}))"


@dataclass(frozen=True)
class Statement:
    """One statement of a refresh.  `kind`: "temp" (CREATE OR REPLACE TEMP TABLE table AS select),
    "replace" (CREATE OR REPLACE TABLE table AS select, with `description`), "delete" (DELETE FROM
    table WHERE condition), "insert" (INSERT INTO table (columns) select), "drop" (DROP TABLE IF EXISTS
    table, a temporary one).  `typed`: the select reads column types the translation to another engine
    must know (uniview.warehouse.duckdb_sql); the others use only portable SQL and may qualify columns."""

    kind: Literal["temp", "replace", "delete", "insert", "drop"]
    table: str
    select: str | None = None
    condition: str | None = None
    columns: tuple[str, ...] = ()
    description: str | None = None
    typed: bool = False
    #: The deleted table's alias, which the condition names.
    alias: str | None = None

    @property
    def sql(self) -> str:
        """The statement in BigQuery SQL."""
        if self.kind == "temp":
            return f"CREATE OR REPLACE TEMP TABLE {self.table} AS\n{self.select}"
        if self.kind == "replace":
            options = f"\nOPTIONS(description={string_literal(self.description)})" if self.description else ""
            return f"CREATE OR REPLACE TABLE {self.table}{options} AS\n{self.select}"
        if self.kind == "delete":
            alias = f" AS {self.alias}" if self.alias else ""
            return f"DELETE FROM {self.table}{alias} WHERE {self.condition}"
        if self.kind == "insert":
            return f"INSERT INTO {self.table} ({', '.join(self.columns)})\n{self.select}"
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
    lag_seconds: int = DEFAULT_LAG_SECONDS

    # ------------------------------------------------------------------ names

    @property
    def table_name(self) -> str:
        return current_view_name(self.family)

    @property
    def keys_name(self) -> str:
        return f"_uniview_current_keys_{self.family}_{self.state_hash[:12]}"

    @property
    def facts_name(self) -> str:
        return f"_uniview_current_facts_{self.family}_{self.state_hash[:12]}"

    @property
    def state_prefixes(self) -> tuple[str, str]:
        """The names of this family's state tables of any state hash start with these."""
        return (f"_uniview_current_keys_{self.family}_", f"_uniview_current_facts_{self.family}_")

    @property
    def table(self) -> str:
        return identifier_path(self.dataset, self.table_name)

    @property
    def keys_table(self) -> str:
        return identifier_path(self.dataset, self.keys_name)

    @property
    def facts_table(self) -> str:
        return identifier_path(self.dataset, self.facts_name)

    @property
    def state_columns(self) -> tuple[str, ...]:
        """The key state's columns, in order."""
        carried = [name for c in self.carried for name in (c, f"{c}_at")]
        return (*self.columns, "_uniview_db", "_uniview_order", *carried)

    # ------------------------------------------------------------ fingerprints

    @property
    def presentation_hash(self) -> str:
        return hashlib.sha256(self.present_select(self.keys_table).encode("utf-8")).hexdigest()

    @property
    def description(self) -> str:
        """What `<family>_current`'s description records: the fingerprints it was made with."""
        return f"uniview current table: state {self.state_hash} presentation {self.presentation_hash}"

    def action(self, description: str | None, state_tables_exist: bool, rebuild: bool = False) -> Action:
        """What a refresh does, given the stored table's description (None: no table) and whether this
        state hash's key and facts tables exist."""
        found = _DESCRIPTION.search(description or "")
        if found is None:
            return "create"
        if rebuild or found["state"] != self.state_hash or not state_tables_exist:
            return "rebuild"
        return "maintain" if found["present"] == self.presentation_hash else "re-present"

    def check_limits(self) -> None:
        """Every statement within BigQuery's query length (a script is one query): LimitError otherwise."""
        script = sum(len(s.sql) for s in self.maintain_statements("uniview_floor")) + len(self.floor_select)
        longest = max(script, *(len(s.sql) for s in self.build_statements()))
        if longest > limits.MAX_QUERY_CHARS:
            raise limits.LimitError(
                f"family {self.family!r}: keeping {self.table_name} as a table needs {longest:,} characters of SQL "
                f"in one script, over BigQuery's {limits.MAX_QUERY_CHARS:,}; keep it as a view (--current)"
            )

    # ------------------------------------------------------------------ selects

    @property
    def floor_select(self) -> str:
        """The floor of the next window: the newest watermark applied less the lag (NULL: none)."""
        return (
            f"SELECT TIMESTAMP_SUB(MAX(_uniview_watermark), INTERVAL {self.lag_seconds} SECOND) FROM {self.facts_table}"
        )

    def window_select(self, floor: str | None) -> str:
        """The changes with `_cdc_ingested_at` after `floor` (an SQL expression; None: every change)."""
        return render(
            "current_table_window.sql.j2",
            unified=self.unified,
            carried=self.rules.carried,
            database_key=database_key(),
            order=ordering_key(),
            floor=floor,
            ingested=identifier(layout.INGESTED_AT),
        )

    def keys_select(self, with_state: bool) -> str:
        """The merged key states of the window's keys (and their stored states, `with_state`)."""
        columns = self.state_columns
        listed = ", ".join(columns)
        sources = [f"SELECT {listed} FROM {WINDOW}"]
        if with_state:
            sources.insert(0, f"SELECT {listed} FROM {self.keys_table} AS s WHERE {self._key_in_window('s')}")
        plain = columns[: len(self.columns) + 2]
        return render(
            "current_table_keys.sql.j2",
            plain=plain,
            carried=self.carried,
            carried_columns=columns[len(plain) :],
            key=self.partition[1:],
            sources=sources,
        )

    def facts_select(self, with_facts: bool) -> str:
        return render(
            "current_table_facts.sql.j2",
            version=self.version_column,
            facts=self.facts_table if with_facts else None,
            operation=identifier(layout.OPERATION),
            ingested=identifier(layout.INGESTED_AT),
            window=WINDOW,
        )

    def databases_select(self, facts: str) -> str:
        """Per database of `facts`: its newest version (table and number), last TRUNCATE, gone_N."""
        return render(
            "current_table_databases.sql.j2",
            version=self.version_column,
            version_number=self.version_number,
            gone=self.rules.gone,
            facts=facts,
        )

    def redo_select(self) -> str:
        return render(
            "current_table_redo.sql.j2",
            window=WINDOW,
            before=self.databases_select(self.facts_table),
            after=self.databases_select(FACTS),
            facts=self.facts_table,
            version=self.version_column,
            operation=identifier(layout.OPERATION),
        )

    def present_select(self, keys: str) -> str:
        """The rows of `<family>_current` for the key states in `keys`."""
        return render(
            "current_table_present.sql.j2",
            outputs=self.rules.outputs,
            keys=keys,
            databases=self.databases_select(self.facts_table),
            operation=identifier(layout.OPERATION),
        )

    def _key_in_window(self, alias: str, state: bool = True) -> str:
        """`alias`'s row (of the key state, or of `<family>_current`) has a key of the window (NULL keys are
        one key)."""
        database, *key = self.partition
        own = f"{alias}._uniview_db" if state else database_key(f"{alias}.{database}")
        tests = [f"w._uniview_db = {own}"]
        tests += [f"w.{column} IS NOT DISTINCT FROM {alias}.{column}" for column in key]
        return f"EXISTS (SELECT 1 FROM {WINDOW} AS w WHERE {' AND '.join(tests)})"

    # --------------------------------------------------------------- statements

    def build_statements(self) -> tuple[Statement, ...]:
        """Build the state and the table from every change (first refresh, rebuild)."""
        return (
            Statement("temp", WINDOW, self.window_select(None), typed=True),
            Statement("replace", self.keys_table, self.keys_select(with_state=False)),
            Statement("replace", self.facts_table, self.facts_select(with_facts=False)),
            self._replace_table(),
            Statement("drop", WINDOW),
        )

    def maintain_statements(self, floor: str | None) -> tuple[Statement, ...]:
        """Apply the changes since `floor` (an SQL TIMESTAMP expression, e.g. a script variable holding
        `floor_select`'s value; None: every change): ONE transaction."""
        state = ", ".join(self.state_columns)
        in_redo = f"_uniview_db IN (SELECT _uniview_db FROM {REDO})"
        return (
            *self._merge_statements(floor),
            # the new states of the window's keys, and every key state of the databases presented again
            Statement(
                "temp",
                SCOPE,
                f"SELECT {state} FROM {self.keys_table} WHERE {in_redo}\nUNION ALL\n"
                f"SELECT {state} FROM {KEYS} WHERE NOT {in_redo}",
            ),
            Statement(
                "delete",
                self.table,
                condition=f"{database_key(identifier(layout.DATABASE))} IN (SELECT _uniview_db FROM {REDO})",
            ),
            Statement("delete", self.table, condition=self._key_in_window("c", state=False), alias="c"),
            Statement("insert", self.table, self.present_select(SCOPE), columns=self.columns, typed=True),
            *(Statement("drop", name) for name in TEMPORARY),
        )

    def represent_statements(self, floor: str | None) -> tuple[Statement, ...]:
        """Apply the changes since `floor`, then write `<family>_current` again whole from the key state."""
        return (
            *self._merge_statements(floor),
            self._replace_table(),
            *(Statement("drop", name) for name in TEMPORARY),
        )

    def statements(self, action: Action, floor: str | None) -> tuple[Statement, ...]:
        if action in ("create", "rebuild"):
            return self.build_statements()
        if action == "re-present":
            return self.represent_statements(floor)
        return self.maintain_statements(floor)

    def _merge_statements(self, floor: str | None) -> tuple[Statement, ...]:
        state = ", ".join(self.state_columns)
        return (
            Statement("temp", WINDOW, self.window_select(floor), typed=True),
            Statement("temp", FACTS, self.facts_select(with_facts=True)),
            Statement("temp", REDO, self.redo_select()),
            Statement("temp", KEYS, self.keys_select(with_state=True)),
            Statement("delete", self.keys_table, condition=self._key_in_window("s"), alias="s"),
            Statement("insert", self.keys_table, f"SELECT {state} FROM {KEYS}", columns=self.state_columns),
            Statement("delete", self.facts_table, condition="TRUE"),
            Statement(
                "insert",
                self.facts_table,
                f"SELECT * FROM {FACTS}",
                columns=("_uniview_db", self.version_column, "_uniview_max", "_uniview_truncate", "_uniview_watermark"),
            ),
        )

    def _replace_table(self) -> Statement:
        return Statement(
            "replace", self.table, self.present_select(self.keys_table), description=self.description, typed=True
        )


def current_table_plan(
    family: str,
    target_dataset: str,
    unified_view: str,
    columns: dict[str, BQType],
    primary_key: Sequence[str],
    versions: Sequence[TableVersion],
    version_column: str,
) -> CurrentTablePlan:
    """The plan of `<family>_current` as a table over `target_dataset.unified_view` (columns: name ->
    unified type, in order, the version column left out); PlanError as for the view."""
    rules = current_rules(family, columns, primary_key, versions, version_column, carried_value=lambda name: name)
    for prefix in ("_uniview_current_keys_", "_uniview_current_facts_"):
        validate_table(f"{prefix}{family}_{'0' * 12}")
    carried = tuple(name for name, _, _ in rules.carried)
    shape = {
        "format": STATE_FORMAT,
        "columns": [[name, str(bq_type)] for name, bq_type in columns.items()],
        "key": [name.lower() for name in primary_key],
        "version_column": version_column,
        "carried": carried,
    }
    state_hash = hashlib.sha256(json.dumps(shape, sort_keys=True).encode("utf-8")).hexdigest()
    quoted = version_column if version_column == identifier(version_column) else identifier(version_column)
    return CurrentTablePlan(
        family=family,
        dataset=target_dataset,
        unified=identifier_path(target_dataset, unified_view),
        columns=(*(identifier(name) for name in columns), identifier(version_column)),
        partition=rules.partition,
        version_column=quoted,
        carried=carried,
        rules=rules,
        version_number=rules.version_number(versions, quoted),
        state_hash=state_hash,
    )


def parse_description(description: str | None) -> tuple[str, str] | None:
    """(state hash, presentation hash) a `<family>_current` table's description records, or None."""
    found = _DESCRIPTION.search(description or "")
    return (found["state"], found["present"]) if found else None
