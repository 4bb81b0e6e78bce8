"""Plan `<table>_current`: each key's row as the source table holds it now, per source database.

The view reads the family's unified view, so it has its columns and casts; with `--current` the
unified view names each row's version table (the source column, by default `_cdc_version_table`:
VERSION_COLUMN), which the view maps to the version's place in the family.  It keeps the latest
change per (`_cdc_database`, primary key), deletes left out.  Changes are ordered by `_cdc_sequence` (the change's place in its source's
log), then `_cdc_timestamp`, `_cdc_ingested_at`, `_cdc_position`, each descending with NULLs last,
and, for changes equal in all of those, a delete before an update before an insert before a
snapshot row: the ordering is total for every change a source log can produce, so the same data
always gives the same rows.  NULL keys are one key.  On top of that latest change
(docs/current-state.md states every rule with its reason):

- a TRUNCATE change (the sink lands one per truncate event) leaves out every row of its database
  that is older than the database's last truncate;
- the row is read as of its database's newest version (the version of the database's latest
  change): a column that version lacks is NULL, and a column some version lacks shows, in rows
  older than the database's last change in a version without it (the column was added, or dropped
  and added again, after the row was written), the default recorded by the version the database
  entered the column's life at (uniview.current.older_rows), as a typed literal of a constant
  (uniview.core.default_literals); NULL when it declares none, and NULL with the column named in
  `_cdc_unavailable` when the default is not known (computed when a row is written, or no value of
  the column: uniview.sink.default_values); a column that moved behind a
  column that followed it was dropped and added again (a re-added column is appended, a type change
  keeps its place), so the versions before the move count as lacking it for those after (`_lives`);
- a column whose value the source did not send (named in `_cdc_unavailable`, under the name the row's
  version table has: the old name before a rename) shows the last value the key's earlier changes
  sent, for the types a source can leave out (STRING, BYTES, JSON, ARRAY, STRUCT).

The primary key comes from the version tables' descriptions (uniview.core.version_description); every
version must record the same one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from uniview.core import landing_layout as layout
from uniview.core.errors import PlanError
from uniview.core.identifiers import identifier, identifier_path, string_literal, validate_table
from uniview.core.render import render
from uniview.core.schema import TableVersion
from uniview.core.types import Array, BQType, Scalar, Struct
from uniview.current.conversions import among, converted_value
from uniview.current.older_rows import of_newest, older_rows
from uniview.current.order import (
    ORDER_COLUMNS,
    database_key,
    newest_first_order,
    oldest_first_order,
    ordering_key,
)
from uniview.current.rekeyed import rekeyed_source

#: Types BigQuery cannot PARTITION BY (https://cloud.google.com/bigquery/docs/reference/standard-sql/window-function-calls).
_UNPARTITIONABLE = ("FLOAT64", "JSON", "GEOGRAPHY")
#: Types whose value a source can leave out of a change (PostgreSQL's TOAST: text, bytea, json, arrays, composites).
_CARRIED = ("STRING", "BYTES", "JSON")
#: The prefix of the columns `<table>_current` computes (`_uniview_place`, `_uniview_gone_N`, ...) and of its
#: statements' aliases: no source column may have it.
INTERNAL_PREFIX = "_uniview_"
#: The unified view's column naming each row's version table when --current is on and --source-column is not.
VERSION_COLUMN = "_cdc_version_table"


def current_view_name(family: str) -> str:
    return f"{family}_current"


def family_primary_key(family: str, versions: Sequence[TableVersion]) -> tuple[str, ...]:
    """The newest version's primary key, by which the current view keys every row (the rows of versions with
    another key are carried over to it: uniview.current.rekeyed); PlanError naming the versions that record none."""
    unkeyed = [version.table_name for version in versions if not version.primary_key]
    newest = versions[-1].primary_key if versions else None
    if not unkeyed and newest:
        return newest
    keyed = [version.table_name for version in versions if version.primary_key]
    raise PlanError(
        f"family {family!r}: a current view needs a primary key in every version, and "
        f"{', '.join(unkeyed)} record{'s' if len(unkeyed) == 1 else ''} none "
        f"({', '.join(keyed) or 'no version'} record{'s' if len(keyed) == 1 else ''} one); declare "
        f"metadata.primary_key (or send the Kafka message key) for every version, or leave --current off"
    )


@dataclass(frozen=True)
class CurrentRules:
    """The view's rules as select items over rows that carry, beside the unified columns: `_uniview_place`
    (the row's place in its database, oldest first; any value that compares the same), `_uniview_newest`
    (the number of its database's newest version), `_uniview_truncated`, one `_uniview_gone_N` per column
    some version lacks (the newest place in a version lacking it) and, per carried column, its carried
    value (`carried_value(name)`).  The view computes them with window functions; the current table keeps
    them (uniview.current.table).  One owner for both."""

    #: The select items of `<family>_current`, in order, the version column last.
    outputs: tuple[str, ...]
    #: (_uniview_gone_N, a condition on `_uniview_version` true for the versions lacking the column).
    gone: tuple[tuple[str, str], ...]
    #: (_uniview_entered_N[_L], an aggregate over the database's version spans (`_uniview_version`,
    #: `_uniview_min`, `_uniview_max`) joined with its gone points): the version it entered a column's life at,
    #: for the columns whose older rows depend on it (uniview.current.older_rows).
    entered: tuple[tuple[str, str], ...]
    #: (_uniview_carried_N, the column, the condition that the row did not send it and is no create, the condition
    #: that the row names the column in `_cdc_unavailable`, a create included).
    carried: tuple[tuple[str, str, str, str], ...]
    #: (_cdc_database, key columns...), quoted.
    partition: tuple[str, ...]
    #: The newest change first, and the oldest first: the view's ordering.
    newest_first: tuple[str, ...]
    oldest_first: tuple[str, ...]
    #: `_cdc_unavailable`, quoted as the unified columns spell it; None when no version has it.
    unavailable: str | None = None

    def version_number(self, versions: Sequence[TableVersion], version_table: str, digits: int = 0) -> str:
        """The place in the family of the version table named by the expression `version_table`; with `digits`,
        as text of that many digits (zero-padded, so it sorts like the number)."""
        places = [string_literal(str(n).zfill(digits)) if digits else str(n) for n in range(len(versions))]
        cases = " ".join(f"WHEN {string_literal(v.table_name)} THEN {n}" for n, v in zip(places, versions, strict=True))
        return f"CASE {version_table} {cases} END"


def current_rules(
    family: str,
    columns: dict[str, BQType],
    primary_key: Sequence[str],
    versions: Sequence[TableVersion],
    version_column: str,
    carried_value: Callable[[str], str] = lambda name: f"{name}.v",
) -> CurrentRules:
    """The rules of `<family>_current` over the unified columns (name -> type, in order)."""
    validate_table(current_view_name(family), "view")
    spelled = {name.lower(): name for name in columns}
    _check_columns(family, columns, spelled)
    key = [_key_column(family, spelled, columns, name) for name in primary_key]
    oldest_first = oldest_first_order()
    keys = {name.lower() for name in primary_key}
    outputs: list[str] = []
    gone: list[tuple[str, str]] = []
    entered: list[tuple[str, str]] = []
    carried: list[tuple[str, str, str, str]] = []
    unknown: list[str] = []
    for number, (name, bq_type) in enumerate(columns.items()):
        value = identifier(name)
        if not name.lower().startswith(layout.CDC_PREFIX) and name.lower() not in keys and name != version_column:
            if layout.UNAVAILABLE in spelled and _can_be_left_out(bq_type):
                carried_name = f"_uniview_carried_{number}"
                unavailable = _unavailable_test(versions, name, spelled[layout.UNAVAILABLE], version_column)
                carried.append((carried_name, name, _not_sent(unavailable), unavailable))
                value = carried_value(carried_name)
            value, column_gone, column_entered, mark = _as_of_newest(
                converted_value(value, versions, name, bq_type), versions, number, name, bq_type
            )
            gone.extend(column_gone)
            entered.extend(column_entered)
            unknown.extend([mark] if mark else [])
        outputs.append(value if value == identifier(name) else f"{value} AS {identifier(name)}")
    if unknown and layout.UNAVAILABLE in spelled:
        at = list(columns).index(spelled[layout.UNAVAILABLE])
        outputs[at] = f"{_with_unknown(identifier(spelled[layout.UNAVAILABLE]), unknown)} AS {outputs[at]}"
    outputs.append(identifier(version_column))
    return CurrentRules(
        tuple(outputs),
        tuple(gone),
        tuple(entered),
        tuple(carried),
        (identifier(layout.DATABASE), *key),
        tuple(newest_first_order()),
        tuple(oldest_first),
        identifier(spelled[layout.UNAVAILABLE]) if layout.UNAVAILABLE in spelled else None,
    )


def _check_columns(family: str, columns: dict[str, BQType], spelled: dict[str, str]) -> None:
    """PlanError when a CDC column the view needs is in no version, or a source column has the prefix of the
    view's own columns."""
    required = [layout.DATABASE, layout.OPERATION, *ORDER_COLUMNS]
    missing = [name for name in required if name not in spelled]
    if missing:
        raise PlanError(
            f"family {family!r}: a current view needs the CDC columns {', '.join(missing)}, which no "
            "version has; run `uniview migrate-landing` on tables landed by an older uniview"
        )
    internal = [name for name in columns if name.lower().startswith(INTERNAL_PREFIX)]
    if internal:
        raise PlanError(
            f"family {family!r}: column {internal[0]!r} starts with {INTERNAL_PREFIX}, which {family}_current "
            "uses for the columns it computes; rename it in the source, or leave --current off"
        )


def _as_of_newest(
    value: str, versions: Sequence[TableVersion], number: int, name: str, bq_type: BQType
) -> tuple[str, list[tuple[str, str]], tuple[tuple[str, str], ...], str | None]:
    """Column `name`'s select item `value` read as of the database's newest version: NULL when that version
    lacks it, what rows older than the column show (uniview.current.older_rows) in those rows; with the gone
    points and entered versions it needs, and the mark naming it in `_cdc_unavailable` where its value is not
    known (None: never)."""
    has = [n for n, version in enumerate(versions) if _has(version, name)]
    lives = _lives(versions, has, name)
    if len(has) == len(versions) and len(lives) == 1:
        return value, [], (), None
    gone = _gone_windows(number, len(versions), lives)
    gone_name = of_newest([g for g, _ in gone], lives)
    older = older_rows(versions, lives, name, bq_type, [g for g, _ in gone])
    mark = None
    if older.unknown:  # named in the row's _cdc_unavailable: its NULL is not the source's value
        older_row = f"NOT (_uniview_place > {gone_name} OR {gone_name} IS NULL)"
        mark = f"IF({older.unknown} AND {older_row}, ',{name}', '')"
    value = (
        f"IF({among('_uniview_newest', has)} OR _uniview_newest IS NULL, "
        f"IF(_uniview_place > {gone_name} OR {gone_name} IS NULL, {value}, {older.value}), NULL)"
    )
    return value, gone, older.entered, mark


def current_view_body(
    family: str,
    target_dataset: str,
    unified_view: str,
    columns: dict[str, BQType],
    primary_key: Sequence[str],
    versions: Sequence[TableVersion],
    version_column: str,
) -> str:
    """The SELECT of `<family>_current` over `target_dataset.unified_view`, whose columns (name -> type, in
    order) are given and which names each row's version table in `version_column`."""
    rules = current_rules(family, columns, primary_key, versions, version_column)
    digits = len(str(len(versions)))  # the places as text sort like numbers: the newest version is a maximum
    spelled = {name.lower(): name for name in columns}
    return render(
        "current_view.sql.j2",
        unified=rekeyed_source(identifier_path(target_dataset, unified_view), versions, spelled, version_column),
        outputs=rules.outputs,
        partition=rules.partition,
        place=ordering_key(),
        database_key=database_key(),
        version_digits=digits,
        version_text=rules.version_number(versions, identifier(version_column), digits),
        operation=identifier(layout.OPERATION),
        gone=rules.gone,
        entered=rules.entered,
        carried=[(name, carried_struct(column, left_out)) for name, column, _, left_out in rules.carried],
        links=link_facts(rules),
    )


#: How many key changes in a row a value left out of their creates is followed through (docs/current-state.md);
#: BigQuery stops a recursive query at 500 iterations, with an error.
LINK_DEPTH = 64


def carried_struct(column: str, left_out: str) -> str:
    """The value a change gives its row's carry of column `column`: STRUCT(value AS v), or NULL when it did not
    send it (`left_out`: it names the column in `_cdc_unavailable`).  The view carries within a row, a create
    continuing the row a key change moved (sql_templates/current_lineage.sql.j2)."""
    return f"IF({left_out}, NULL, STRUCT({identifier(column)} AS v))"


def link_facts(rules: CurrentRules, moved: bool = False) -> dict[str, object] | None:
    """The template's facts for following key changes (sql_templates/current_lineage.sql.j2: `links`; `moved`:
    mark each key change's delete): None when no column is carried (a carried column needs `_cdc_unavailable`)."""
    if not rules.carried:
        return None
    return {
        "partition": rules.partition,
        "key": rules.partition[1:],
        "sequence": identifier(layout.SEQUENCE),
        "unavailable": rules.unavailable,
        "depth": LINK_DEPTH,
        "moved": moved,
    }


def _lives(versions: Sequence[TableVersion], has: Sequence[int], name: str) -> list[list[int]]:
    """The versions with column `name` (`has`, in order) grouped by the column's life in the source: a version
    starts a new life when the column moved to the end relative to the columns that followed it in the previous
    version with it (it was dropped and added again, which appends it; a type change or a rename keeps its
    place)."""
    lives: list[list[int]] = []
    for number in has:
        if lives and not _moved_to_end(versions[lives[-1][-1]], versions[number], name):
            lives[-1].append(number)
        else:
            lives.append([number])
    return lives


def _moved_to_end(before: TableVersion, after: TableVersion, name: str) -> bool:
    """Column `name` comes, in `after`, behind a source column that came behind it in `before`."""

    def order(version: TableVersion) -> list[str]:
        return [c.name.lower() for c in version.columns if not c.name.lower().startswith(layout.CDC_PREFIX)]

    old, new, lowered = order(before), order(after), name.lower()
    followers = set(old[old.index(lowered) + 1 :])
    return any(column in followers for column in new[: new.index(lowered)])


def _gone_windows(number: int, count: int, lives: Sequence[Sequence[int]]) -> list[tuple[str, str]]:
    """Per life of column `number`: (_uniview_gone_N[_L], the versions outside that life), for `count` versions."""
    lives = list(lives) or [[]]
    names = [f"_uniview_gone_{number}"]
    if len(lives) > 1:
        names = [f"_uniview_gone_{number}_{n}" for n in range(len(lives))]
    return [
        (gone, among("_uniview_version", [n for n in range(count) if n not in life]))
        for gone, life in zip(names, lives, strict=True)
    ]


def _unavailable_test(versions: Sequence[TableVersion], name: str, unavailable: str, version_column: str) -> str:
    """The row did not send column `name`: its `_cdc_unavailable` names the column as the row's version table
    stores it (a renamed column by its old name, in the changes written before the rename)."""
    array = identifier(unavailable)
    renamed: dict[str, list[str]] = {}
    for version in versions:
        column = next((c for c in version.columns if c.name.lower() == name.lower()), None)
        if column is not None and column.stored and column.stored.lower() != name.lower():
            renamed.setdefault(column.stored, []).append(string_literal(version.table_name))
    test = f"{string_literal(name)} IN UNNEST({array})"
    if not renamed:
        return test
    table = identifier(version_column)
    others = ", ".join(t for tables in renamed.values() for t in tables)
    tests = [f"({test} AND ({table} IS NULL OR {table} NOT IN ({others})))"]
    tests += [
        f"({string_literal(old)} IN UNNEST({array}) AND {table} IN ({', '.join(tables)}))"
        for old, tables in renamed.items()
    ]
    return "(" + " OR ".join(tests) + ")"


def _not_sent(unavailable: str) -> str:
    """The row did not send the column and carries the value of its key's change before it: a create starts a new
    row, so a create that names the column sent NULL (a primary-key UPDATE's create, whose key may have held
    another row before a TRUNCATE or a delete: that row's value is never carried into this one)."""
    return f"({unavailable} AND {identifier(layout.OPERATION)} IS DISTINCT FROM 'INSERT')"


def _with_unknown(unavailable: str, marks: Sequence[str]) -> str:
    """`_cdc_unavailable` with the names of the columns whose default is unknown in this row appended (each
    mark is ',name' or '')."""
    names = f"CONCAT({', '.join(marks)})" if len(marks) > 1 else marks[0]
    extra = f"SPLIT(SUBSTR({names}, 2), ',')"
    return f"IF({names} = '', {unavailable}, IF({unavailable} IS NULL, {extra}, ARRAY_CONCAT({unavailable}, {extra})))"


def _has(version: TableVersion, name: str) -> bool:
    return any(column.name.lower() == name.lower() for column in version.columns)


def _can_be_left_out(bq_type: BQType) -> bool:
    return isinstance(bq_type, (Array, Struct)) or (isinstance(bq_type, Scalar) and bq_type.name in _CARRIED)


def _key_column(family: str, spelled: dict[str, str], columns: dict[str, BQType], name: str) -> str:
    if name.lower() not in spelled:
        raise PlanError(f"family {family!r}: primary key column {name!r} is in no version")
    column = spelled[name.lower()]
    bq_type = columns[column]
    if isinstance(bq_type, (Array, Struct)) or (isinstance(bq_type, Scalar) and bq_type.name in _UNPARTITIONABLE):
        raise PlanError(
            f"family {family!r}: primary key column {column!r} is {bq_type}, which BigQuery cannot "
            "partition by; a current view needs keys of other types"
        )
    return identifier(column)
