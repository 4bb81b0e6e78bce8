"""Plan a family's unified view: the column superset, one compact select per version, the split, the limits.

Columns are the union of every version's columns, matched case-insensitively (the newest
version's spelling wins), ordered by first appearance: versions by creation, columns by ordinal
position.  Each version contributes one SELECT that reads its table under a short alias, names a
column only as much as needed (`id`, `CAST(id AS STRING) AS id`, `CAST(NULL AS DATE) AS d`) and
fills the columns it lacks with typed NULLs.  When the whole view would exceed `max_view_chars`,
consecutive versions are packed into part views named after a hash of their SQL, and the top view
UNION ALLs the parts, so a changed part is a new view and readers switch in one statement.  Every
BigQuery limit is checked before anything is applied (uniview.core.limits).  The same input always
renders byte-identical SQL.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from itertools import compress
from operator import itemgetter
from typing import NamedTuple

from uniview.core import limits
from uniview.core.errors import ConfigError, PlanError
from uniview.core.identifiers import (
    identifier,
    identifier_path,
    string_literal,
    validate_column_name,
    validate_dataset,
    validate_table,
)
from uniview.core.landing_layout import SOURCE_TABLE
from uniview.core.renames import Rename, TableRename
from uniview.core.render import render
from uniview.core.resolve import POLICIES, Converter, null_of, unify, validate_timezone
from uniview.core.schema import Column, TableVersion, collector_paused
from uniview.core.sql_check import check_expression_shape, check_statement_shape
from uniview.core.types import BQType
from uniview.current.table import CurrentTablePlan, current_table_plan
from uniview.current.view import VERSION_COLUMN, current_view_body, current_view_name, family_primary_key
from uniview.planning.segments import renamed_key, renamed_rows

DEFAULT_POLICY = "uniview"
#: The view budget: BigQuery's 256,000 less room for the CREATE VIEW statement around the body.
DEFAULT_MAX_VIEW_CHARS = 250_000
MIN_MAX_VIEW_CHARS = 1_000
#: Each generator setting as the command line and the Cloud Function's environment name it.
SETTING_NAMES = {
    "policy": ("--policy", "UNIVIEW_POLICY"),
    "max_view_chars": ("--max-view-chars", "UNIVIEW_MAX_VIEW_CHARS"),
    "datetime_timezone": ("--datetime-timezone", "UNIVIEW_DATETIME_TIMEZONE"),
    "source_column": ("--source-column", "UNIVIEW_SOURCE_COLUMN"),
    "current": ("--current", "UNIVIEW_CURRENT"),
    "renames": ("--renames", "UNIVIEW_RENAMES"),
}
CALLERS = ("cli", "function")
#: What `--current` / UNIVIEW_CURRENT may be.
CURRENT_MODES = ("off", "view", "table")
_CURRENT_SPELLINGS = {"": "off", "false": "off", "0": "off", "no": "off", "true": "view", "1": "view", "yes": "view"}


def current_mode(value: object) -> object:
    """ "off", "view" or "table" from a setting's value: True and "true" (also "1", "yes") mean "view", False,
    None and "false" (also "", "0", "no") mean "off"; anything else is returned as given, for the check
    to name it."""
    if value is None or isinstance(value, bool):
        return "view" if value else "off"
    if isinstance(value, str):
        text = value.strip().lower()
        return _CURRENT_SPELLINGS.get(text, text if text in CURRENT_MODES else value)
    return value


PART_HASH_LENGTH = 12


@dataclass(frozen=True)
class GeneratorOptions:
    """How views are generated.  Owns the defaults and the validation: a bad setting raises one
    ConfigError listing every problem, each named as the caller (`cli` or `function`) spells it."""

    policy: str = DEFAULT_POLICY
    max_view_chars: int = DEFAULT_MAX_VIEW_CHARS
    datetime_timezone: str | None = None
    source_column: str | None = None
    #: `<table>_current`, the latest row per primary key: "off", "view" (uniview.current.view) or "table"
    #: (uniview.current.table, kept incrementally).  True/"true" mean "view", False/"false" mean "off".
    current: bool | str = "off"
    #: Declared column and table renames (uniview.core.renames), applied to the versions before they are planned.
    renames: tuple[Rename | TableRename, ...] = ()
    #: BigQuery's query-time limits (resources, resolved size) are enforced; benchmarks lift them.
    enforce_query_limits: bool = True
    caller: str = field(default="cli", compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "current", current_mode(self.current))
        problems = [f"{self.setting(name)}: {problem}" for name, problem in self._problems()]
        if problems:
            raise ConfigError("; ".join(problems))

    @property
    def current_view(self) -> bool:
        """`<table>_current` is kept as a view."""
        return self.current == "view"

    @property
    def current_table(self) -> bool:
        """`<table>_current` is kept as a table (uniview.current.table)."""
        return self.current == "table"

    @property
    def keeps_current(self) -> bool:
        """`<table>_current` is kept, as a view or a table."""
        return self.current in ("view", "table")

    def setting(self, name: str) -> str:
        """The name of setting `name` as this options' caller spells it (a flag or a variable)."""
        flag, variable = SETTING_NAMES[name]
        return variable if self.caller == "function" else flag

    def _problems(self) -> list[tuple[str, str]]:
        problems = []
        if self.policy not in POLICIES:
            problems.append(("policy", f"unknown policy {self.policy!r}: choose one of {', '.join(POLICIES)}"))
        if (
            not isinstance(self.max_view_chars, int)
            or not MIN_MAX_VIEW_CHARS <= self.max_view_chars <= limits.MAX_VIEW_CHARS
        ):
            problems.append(
                (
                    "max_view_chars",
                    f"must be a whole number from {MIN_MAX_VIEW_CHARS} to "
                    f"{limits.MAX_VIEW_CHARS} (BigQuery's limit), not {self.max_view_chars!r}",
                )
            )
        if self.current not in CURRENT_MODES:
            problems.append(
                ("current", f"must be one of {', '.join(CURRENT_MODES)} (or true/false), not {self.current!r}")
            )
        for name, check in (("datetime_timezone", validate_timezone), ("source_column", _source_column)):
            try:
                check(getattr(self, name))
            except (ConfigError, PlanError) as error:
                problems.append((name, str(error)))
            except Exception as error:
                problems.append((name, str(error)))
        if self.caller not in CALLERS:
            raise ValueError(f"caller must be one of {CALLERS}")
        return problems


def _source_column(name: str | None) -> None:
    if name is not None:
        validate_column_name(name, "source column")


@dataclass(frozen=True)
class UnifiedColumn:
    """One column of the unified view and the types it has in the versions."""

    name: str
    type: BQType
    source_types: tuple[BQType, ...]

    @property
    def is_cast(self) -> bool:
        return any(t.base() != self.type for t in self.source_types)


@dataclass(frozen=True)
class ViewDefinition:
    """One view to create: its dataset, name and canonical BigQuery body (a SELECT)."""

    dataset: str
    name: str
    body: str

    @property
    def qualified_name(self) -> str:
        return f"{self.dataset}.{self.name}"

    @property
    def statement(self) -> str:
        return render(
            "create_view.sql.j2", view=identifier_path(self.dataset, self.name), description=None, body=self.body
        )


@dataclass(frozen=True)
class FamilyPlan:
    """Everything uniview will create for one family: part views first, the top view last."""

    family: str
    source_dataset: str
    target_dataset: str
    versions: tuple[TableVersion, ...]
    columns: tuple[UnifiedColumn, ...]
    views: tuple[ViewDefinition, ...]
    footprint: limits.FamilyFootprint | None = None
    #: `<table>_current` when asked for; it reads the top view (its cost is within limits' reserve).
    current: ViewDefinition | None = None
    #: `<table>_current` as a table kept incrementally (--current table), instead of the view.
    current_table: CurrentTablePlan | None = None
    #: Why no current view was planned although one was asked for: versions that disagree on the
    #: primary key (an error, reported after the unified view is applied), or none recording one (a note).
    current_error: PlanError | None = None
    current_note: str | None = None

    @property
    def top_view(self) -> ViewDefinition:
        return self.views[-1]

    @property
    def parts(self) -> tuple[ViewDefinition, ...]:
        return self.views[:-1]

    @property
    def all_views(self) -> tuple[ViewDefinition, ...]:
        """Every view of the family in creation order: parts, the top view, the current view if asked for."""
        return self.views + ((self.current,) if self.current else ())

    @property
    def output_types(self) -> list[BQType]:
        """The view's column types, the source column included."""
        return [column.type for column in self.columns]


def top_view_name(family: str) -> str:
    return f"{family}_unified"


def part_view_name(family: str, body: str) -> str:
    """A part view is named after its SQL: changed SQL is a new view, never a view replaced in place."""
    return f"{family}_unified_part_{hashlib.sha256(body.encode('utf-8')).hexdigest()[:PART_HASH_LENGTH]}"


#: What a listing of stored views says of a part view: nothing more is needed, its name is its SQL's hash.
PART_FINGERPRINT = "part view: named after its SQL"
_PART_VIEW = re.compile(rf".+_unified_part_[0-9a-f]{{{PART_HASH_LENGTH}}}")


def is_part_view_name(view_name: str) -> bool:
    """True for a part view named after its SQL's hash."""
    return _PART_VIEW.fullmatch(view_name) is not None


def is_family_view(family: str, view_name: str) -> bool:
    """True for the family's top view and its part views (today's hashed names and the older numbered
    ones, so those are dropped too), and for no other family's views."""
    return (
        re.fullmatch(re.escape(family) + rf"_unified(?:_part_(?:\d{{3}}|[0-9a-f]{{{PART_HASH_LENGTH}}}))?", view_name)
        is not None
    )


def unify_columns(versions: Sequence[TableVersion], policy: str) -> tuple[UnifiedColumn, ...]:
    """The column superset in first-appearance order, each with its unified type."""
    # Versions often share one column list, and their lists share Column objects (discovery gives equal
    # columns one object, equal lists one tuple): each distinct column is read once, in order of first
    # appearance for the order and the types, of last appearance for the newest spelling.
    first_seen: dict[int, tuple[Column, ...]] = {}
    last_seen: dict[int, int] = {}
    for index, version in enumerate(versions):
        first_seen.setdefault(id(version.columns), version.columns)
        last_seen[id(version.columns)] = index
    types: dict[str, dict[BQType, None]] = {}  # the distinct types of each column, in order of appearance
    for column in _distinct(first_seen.values()):
        key = column.name.lower()
        if key != SOURCE_TABLE:  # a consolidated table's bookkeeping, not a column of the family
            types.setdefault(key, {})[column.type] = None
    newest_last = [first_seen[columns_id] for columns_id in sorted(last_seen, key=last_seen.__getitem__)]
    spelling: dict[str, str] = {}
    for column in reversed(_distinct(tuple(reversed(columns)) for columns in reversed(newest_last))):
        spelling[column.name.lower()] = column.name  # in order of each column's last appearance
    return tuple(
        UnifiedColumn(spelling[key], unify(column_types, policy), tuple(column_types))
        for key, column_types in types.items()
    )


def _distinct(lists: Iterable[Sequence[Column]]) -> list[Column]:
    """The distinct Column objects in `lists`, in order of first appearance (by identity: no hashing of their
    types; each list is added in C, however many of the 270,000 columns of a wide family they hold)."""
    seen: dict[int, Column] = {}
    for columns in lists:
        seen.update(zip(map(id, columns), columns, strict=True))
    return list(seen.values())


def table_alias(version: TableVersion) -> str:
    """A short alias for the version's table that no column of it is named like: a column named like
    its table (or alias) would otherwise read as a STRUCT of the whole row."""
    return _alias({name.lower() for column in version.columns for name in (column.name, column.stored) if name})


def _alias(taken: Collection[str]) -> str:
    alias = "v"
    while alias in taken:
        alias += "_"
    return alias


@dataclass(frozen=True)
class _Shape:
    """The select items of one list of version columns: naming the unified columns, and bare."""

    columns: tuple[Column, ...]
    ordered: list[_FoundColumn]  # what fills each unified column, in order
    alias: str
    has_source_table: bool

    @cached_property
    def named(self) -> list[str]:
        """Only a view's first branch names its columns: built for the few versions that are one."""
        return list(map(_FOUND_NAMED, self.ordered))

    @cached_property
    def bare(self) -> list[str]:
        return list(map(_FOUND_BARE, self.ordered))


class _FoundColumn(NamedTuple):
    """A version's column as a select list uses it."""

    position: int  # of the unified column it fills; -1 for none
    named: str
    bare: str
    key: str
    stored_key: str
    special: bool  # named like a table alias (v, v_, ...) or the source table column: rare, looked at apart
    column: Column | None  # kept, so that its id stays its own; None for a NULL standing for a missing column


_FOUND_POSITION, _FOUND_NAMED, _FOUND_BARE = (itemgetter(i) for i in range(3))
_FOUND_SPECIAL = itemgetter(5)
#: The names `_alias` gives a version's table.
_ALIAS_SHAPED = re.compile("v_*")


class SelectBuilder:
    """Builds each version's SELECT; checks every distinct expression shape with sqlglot once.

    BigQuery matches the branches of a UNION ALL by position and takes the columns' names from the first
    one, so only a view's first branch names its columns (`CAST(id AS STRING) AS id`); every later branch
    is bare: the same expressions without aliases, on one line.  Each
    distinct item is built once, and the items of each distinct list of columns once."""

    def __init__(self, source_dataset: str, columns: Sequence[UnifiedColumn], options: GeneratorOptions) -> None:
        self.source_dataset = source_dataset
        self.columns = columns
        self.options = options
        self.converter = Converter(options.datetime_timezone)
        self.timezone = options.datetime_timezone
        self._position_of_key = {column.name.lower(): position for position, column in enumerate(columns)}
        self._positions = set(range(len(columns)))
        self._items: dict[tuple, tuple[str, str]] = {}
        self._shapes: dict[int, _Shape] = {}
        self._missing: dict[int, _FoundColumn] = {}
        self._found: dict[int, _FoundColumn] = {}  # by id(Column): the column is kept, so its id stays its own
        self._special_seen = False  # whether any column found is special (most families have none)

    def item(self, column: UnifiedColumn, found: Column | None, named: bool = True) -> str:
        """One select item, naming the column or bare."""
        named_item, bare_item = self._item_pair(column, found)
        return named_item if named else bare_item

    def _item_pair(self, column: UnifiedColumn, found: Column | None) -> tuple[str, str]:
        key = (column.name, None) if found is None else (column.name, found.name, found.type, found.stored)
        pair = self._items.get(key)
        if pair is None:
            pair = self._items[key] = self._build_item(column, found)
        return pair

    def _build_item(self, column: UnifiedColumn, found: Column | None) -> tuple[str, str]:
        """The item naming the unified column, and the bare expression."""
        if found is None:
            check_expression_shape(("null", column.type), lambda: null_of(column.type))
            value = null_of(column.type)
            return f"{value} AS {identifier(column.name)}", value
        source = found.type.base()
        stored = found.stored or found.name  # a renamed column is read by its name in the table
        name = identifier(stored)
        if source == column.type:
            return (name if stored == column.name else f"{name} AS {identifier(column.name)}"), name
        check_expression_shape(
            ("convert", source, column.type, self.timezone),
            lambda: self.converter.convert("__uniview_column__", source, column.type),
        )
        value = self.converter.convert(name, source, column.type)
        return f"{value} AS {identifier(column.name)}", value

    def _shape(self, columns: tuple[Column, ...]) -> _Shape:
        shape = self._shapes.get(id(columns))
        if shape is None or shape.columns is not columns:
            shape = self._shapes[id(columns)] = self._new_shape(columns)
        return shape

    def _new_shape(self, columns: tuple[Column, ...]) -> _Shape:
        """The select items of a list of columns, from each distinct Column's items (built once per builder):
        the lists are filled in C, a few passes over the list, not a Python call per column of each version."""
        found = self._found_columns(columns)
        by_position = dict(zip(map(_FOUND_POSITION, found), found, strict=True))
        if not by_position.keys() >= self._positions:  # columns this list lacks: NULL of their type
            for position in sorted(self._positions.difference(by_position)):
                by_position[position] = self._missing_column(position)
        ordered = list(map(by_position.__getitem__, range(len(self.columns))))
        special = list(compress(found, map(_FOUND_SPECIAL, found))) if self._special_seen else []
        return _Shape(
            columns,
            ordered,
            _alias({name for column in special for name in (column.key, column.stored_key)}),
            any(column.key == SOURCE_TABLE for column in special),
        )

    def _found_columns(self, columns: tuple[Column, ...]) -> list[_FoundColumn]:
        try:
            return list(map(self._found.__getitem__, map(id, columns)))
        except KeyError:
            for column in columns:
                if id(column) not in self._found:
                    self._found[id(column)] = self._found_column(column)
            return list(map(self._found.__getitem__, map(id, columns)))

    def _found_column(self, column: Column) -> _FoundColumn:
        """A version's column: the unified column it fills (-1: none) and its items there."""
        key, stored_key = column.name.lower(), (column.stored or column.name).lower()
        position = self._position_of_key.get(key, -1)
        named, bare = self._item_pair(self.columns[position], column) if position >= 0 else ("", "")
        special = bool(key == SOURCE_TABLE or _ALIAS_SHAPED.fullmatch(key) or _ALIAS_SHAPED.fullmatch(stored_key))
        self._special_seen = self._special_seen or special
        return _FoundColumn(position, named, bare, key, stored_key, special, column)

    def _missing_column(self, position: int) -> _FoundColumn:
        """The NULL that stands for a unified column a version lacks."""
        missing = self._missing.get(position)
        if missing is None:
            named, bare = self._item_pair(self.columns[position], None)
            missing = self._missing[position] = _FoundColumn(position, named, bare, "", "", False, None)
        return missing

    def select(self, version: TableVersion, named: bool = True) -> str:
        """The SELECT that reads one version in the unified shape: naming its columns (a view's first
        branch, or a SELECT on its own), or bare (a later branch of a UNION ALL)."""
        shape = self._shape(version.columns)
        items = shape.named if named else shape.bare
        if self.options.source_column:
            source = identifier(SOURCE_TABLE) if shape.has_source_table else string_literal(version.table_name)
            items = [*items, f"{source} AS {identifier(self.options.source_column)}" if named else source]
        source = identifier_path(self.source_dataset, version.table_name)
        rows = renamed_rows(self.source_dataset, version.segment, shape.alias) if version.segment else None
        return render("version_select.sql.j2", named=named, items=items, source=source, alias=shape.alias, rows=rows)


def version_select(
    source_dataset: str, version: TableVersion, columns: Sequence[UnifiedColumn], options: GeneratorOptions
) -> str:
    """The SELECT that reads one version in the unified shape."""
    return SelectBuilder(source_dataset, columns, options).select(version)


def plan_family(
    source_dataset: str, target_dataset: str, versions: Sequence[TableVersion], options: GeneratorOptions
) -> FamilyPlan:
    """Plan the views of one family; LimitError (a PlanError) when BigQuery's limits cannot be met."""
    with collector_paused():  # the plan of a wide family builds hundreds of thousands of objects, none in a cycle
        return _plan_family(source_dataset, target_dataset, versions, options)


def _plan_family(
    source_dataset: str, target_dataset: str, versions: Sequence[TableVersion], options: GeneratorOptions
) -> FamilyPlan:
    validate_dataset(source_dataset)
    validate_dataset(target_dataset, "target dataset")
    if not versions:
        raise PlanError("a family needs at least one version table")
    if options.keeps_current and options.source_column is None:  # the current view reads each row's version table
        options = replace(options, source_column=VERSION_COLUMN)
    family = versions[0].family
    validate_table(top_view_name(family), "view")
    check_statement_shape()
    columns = unify_columns(versions, options.policy)
    _check_source_column(family, columns, options)
    builder = SelectBuilder(source_dataset, columns, options)
    views = _split_into_views(family, target_dataset, versions, builder, options)
    footprint = _footprint(family, len(versions), views, _column_count(columns, options))
    footprint.check_definition(options.max_view_chars)
    if options.enforce_query_limits:
        footprint.check_queries()
    planned = FamilyPlan(family, source_dataset, target_dataset, tuple(versions), columns, tuple(views), footprint)
    return _with_current_view(planned, options) if options.keeps_current else planned


def _with_current_view(plan: FamilyPlan, options: GeneratorOptions) -> FamilyPlan:
    """The plan with its current view, or with the reason it has none: no version records a primary key
    (a note), or the versions disagree or the key cannot be partitioned by (an error)."""
    if not any(version.primary_key for version in plan.versions):
        return replace(plan, current_note=f"no version of {plan.family!r} records a primary key: no current view")
    types = {column.name: column.type for column in plan.columns}
    try:
        key = family_primary_key(plan.family, plan.versions)
        version_column = options.source_column or VERSION_COLUMN
        top = top_view_name(plan.family)
        if options.current_table:
            builder = SelectBuilder(plan.source_dataset, plan.columns, options)
            reads = {version.table_name: builder.select(version) for version in plan.versions}
            table = current_table_plan(
                plan.family,
                plan.target_dataset,
                top,
                types,
                key,
                plan.versions,
                version_column,
                plan.source_dataset,
                reads,
                renamed_key(plan.family, plan.versions),
            )
            table.check_limits()
            return replace(plan, current_table=table)
        body = current_view_body(plan.family, plan.target_dataset, top, types, key, plan.versions, version_column)
        if len(body) > options.max_view_chars:
            raise PlanError(
                f"family {plan.family!r}: its current view would be {len(body):,} characters, more than "
                f"{options.setting('max_view_chars')} {options.max_view_chars:,}"
            )
    except PlanError as error:
        return replace(plan, current_error=error)
    return replace(plan, current=ViewDefinition(plan.target_dataset, current_view_name(plan.family), body))


def _column_count(columns: Sequence[UnifiedColumn], options: GeneratorOptions) -> int:
    return limits.count_columns(c.type for c in columns) + (1 if options.source_column else 0)


def _check_source_column(family: str, columns: Sequence[UnifiedColumn], options: GeneratorOptions) -> None:
    if options.source_column and options.source_column.lower() in {c.name.lower() for c in columns}:
        raise PlanError(
            f"source column {options.source_column!r} clashes with a column of family {family!r}: "
            f"choose another name with {options.setting('source_column')}"
        )


def _footprint(
    family: str, version_count: int, views: Sequence[ViewDefinition], columns: int
) -> limits.FamilyFootprint:
    """A query on the top view resolves to every view's body and reads every version table."""
    resolved = sum(len(view.body.encode("utf-8")) for view in views)
    levels = 2 if len(views) > 1 else 1
    return limits.FamilyFootprint(
        family, [len(view.body) for view in views], resolved, version_count + len(views), columns, levels
    )


@dataclass(frozen=True)
class _UnionLayout:
    """Lengths of the union template, measured once, so packing needs no re-rendering."""

    fixed: int
    per_branch: int
    separator: int

    @classmethod
    def measure(cls) -> _UnionLayout:
        fixed = len(render("union_view.sql.j2", branches=[]))
        one = len(render("union_view.sql.j2", branches=["x"])) - fixed - 1
        two = len(render("union_view.sql.j2", branches=["x", "y"])) - fixed - 2
        return cls(fixed, one, two - 2 * one)

    def length(self, branch_lengths: Sequence[int]) -> int:
        count = len(branch_lengths)
        return self.fixed + sum(branch_lengths) + count * self.per_branch + max(count - 1, 0) * self.separator


def _split_into_views(
    family: str,
    target_dataset: str,
    versions: Sequence[TableVersion],
    builder: SelectBuilder,
    options: GeneratorOptions,
) -> list[ViewDefinition]:
    """One view when the family fits the budget, else part views and a top view over them; the first
    branch of each view names the columns, the others are bare."""
    layout = _UnionLayout.measure()
    budget = options.max_view_chars
    bare = [builder.select(version, named=False) for version in versions]
    named: dict[int, str] = {}

    def first(index: int) -> str:
        if index not in named:
            named[index] = builder.select(versions[index], named=True)
        return named[index]

    lengths = [len(branch) for branch in bare]
    if layout.length([len(first(0)), *lengths[1:]]) <= budget:
        body = render("union_view.sql.j2", branches=[first(0), *bare[1:]])
        return [ViewDefinition(target_dataset, top_view_name(family), body)]
    groups = _pack(family, versions, lengths, lambda index: len(first(index)), layout, options)
    parts = []
    for group in groups:
        body = render("union_view.sql.j2", branches=[first(group[0]), *(bare[i] for i in group[1:])])
        parts.append(ViewDefinition(target_dataset, part_view_name(family, body), body))
    top_branches = [render("part_select.sql.j2", part=identifier_path(target_dataset, part.name)) for part in parts]
    top = ViewDefinition(target_dataset, top_view_name(family), render("union_view.sql.j2", branches=top_branches))
    if len(top.body) > budget:
        raise limits.LimitError(
            f"family {family!r}: the top view over {len(parts)} parts needs {len(top.body):,} "
            f"characters, over the {budget:,}-character view budget"
        )
    return [*parts, top]


def _pack(
    family: str,
    versions: Sequence[TableVersion],
    lengths: Sequence[int],
    first_length: Callable[[int], int],
    layout: _UnionLayout,
    options: GeneratorOptions,
) -> list[list[int]]:
    """Greedy, in creation order: consecutive versions fill a part until the next one would not fit.
    `lengths` are the bare branches'; a part's first branch names the columns (`first_length`)."""
    budget = options.max_view_chars
    groups: list[list[int]] = []
    current: list[int] = []
    current_lengths: list[int] = []
    for index, length in enumerate(lengths):
        if current and layout.length([*current_lengths, length]) <= budget:
            current.append(index)
            current_lengths.append(length)
            continue
        opening = first_length(index)
        if layout.length([opening]) > budget:
            raise limits.LimitError(
                f"version table {versions[index].table_name!r} alone needs {layout.length([opening]):,} characters "
                f"of SQL, over the {budget:,}-character view budget: raise {options.setting('max_view_chars')} "
                f"(BigQuery allows {limits.MAX_VIEW_CHARS}) or narrow the table"
            )
        if current:
            groups.append(current)
        current, current_lengths = [index], [opening]
    groups.append(current)
    return groups
