"""Plan a family's unified view: the column superset, one select per version, and the split.

Columns are the union of every version's columns, matched case-insensitively (the newest
version's spelling wins), ordered by first appearance: versions by creation, columns by ordinal
position.  Each version contributes one SELECT that converts its columns to the unified types
and fills the columns it lacks with typed NULLs.  When the whole view would exceed
`max_view_chars`, consecutive versions are packed into part views within the budget and the
top view UNION ALLs the parts.  The same input always renders byte-identical SQL.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

import sqlglot
from sqlglot.errors import SqlglotError

from uniview.errors import ConfigError, PlanError
from uniview.identifiers import quote, quote_path, string_literal, validate_dataset, validate_table
from uniview.render import render
from uniview.resolve import POLICIES, Converter, null_of, unify, validate_timezone
from uniview.schema import TableVersion
from uniview.types import BQType

BIGQUERY_MAX_VIEW_CHARS = 256_000
BIGQUERY_MAX_QUERY_RESOURCES = 1_000
BIGQUERY_MAX_COLUMNS = 10_000


@dataclass(frozen=True)
class GeneratorOptions:
    """How views are generated; validated on construction (ConfigError)."""

    policy: str = "uniview"
    max_view_chars: int = 250_000
    datetime_timezone: str | None = None
    source_column: str | None = None
    #: BigQuery counts unique tables and views per query after expansion (1,000).
    max_query_resources: int = BIGQUERY_MAX_QUERY_RESOURCES

    def __post_init__(self) -> None:
        if self.policy not in POLICIES:
            raise ConfigError(f"unknown policy {self.policy!r}: choose one of {', '.join(POLICIES)}")
        if not 1_000 <= self.max_view_chars <= BIGQUERY_MAX_VIEW_CHARS:
            raise ConfigError(f"max view chars must be between 1000 and {BIGQUERY_MAX_VIEW_CHARS}")
        validate_timezone(self.datetime_timezone)
        if self.source_column is not None and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,299}", self.source_column):
            raise ConfigError(f"invalid source column name {self.source_column!r}")


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
        return render("create_view.sql.j2", view=quote_path(self.dataset, self.name), description=None, body=self.body)


@dataclass(frozen=True)
class FamilyPlan:
    """Everything uniview will create for one family: part views first, the top view last."""

    family: str
    source_dataset: str
    target_dataset: str
    versions: tuple[TableVersion, ...]
    columns: tuple[UnifiedColumn, ...]
    views: tuple[ViewDefinition, ...]

    @property
    def top_view(self) -> ViewDefinition:
        return self.views[-1]


def top_view_name(family: str) -> str:
    return f"{family}_unified"


def part_view_name(family: str, index: int) -> str:
    return f"{family}_unified_part_{index:03d}"


def is_family_view(family: str, view_name: str) -> bool:
    """True for the family's top view and its part views, and for no other family's views."""
    return re.fullmatch(re.escape(family) + r"_unified(?:_part_\d{3})?", view_name) is not None


def unify_columns(versions: Sequence[TableVersion], policy: str) -> tuple[UnifiedColumn, ...]:
    """The column superset in first-appearance order, each with its unified type."""
    spelling: dict[str, str] = {}
    types: dict[str, list[BQType]] = {}
    for version in versions:
        for column in version.columns:
            key = column.name.lower()
            spelling[key] = column.name
            types.setdefault(key, []).append(column.type)
    return tuple(
        UnifiedColumn(spelling[key], unify(column_types, policy), tuple(column_types))
        for key, column_types in types.items()
    )


def version_select(
    source_dataset: str, version: TableVersion, columns: Sequence[UnifiedColumn], options: GeneratorOptions
) -> str:
    """The SELECT that reads one version in the unified shape."""
    converter = Converter(options.datetime_timezone)
    own = {column.name.lower(): column for column in version.columns}
    items = []
    for column in columns:
        found = own.get(column.name.lower())
        if found is None:
            expression = null_of(column.type)
        else:
            expression = converter.convert(quote(found.name), found.type, column.type)
        items.append({"expression": expression, "alias": quote(column.name)})
    if options.source_column:
        items.append({"expression": string_literal(version.table_name), "alias": quote(options.source_column)})
    return render("version_select.sql.j2", items=items, source=quote_path(source_dataset, version.table_name))


def plan_family(
    source_dataset: str, target_dataset: str, versions: Sequence[TableVersion], options: GeneratorOptions
) -> FamilyPlan:
    """Plan the views of one family; PlanError when BigQuery's limits cannot be met."""
    validate_dataset(source_dataset)
    validate_dataset(target_dataset, "target dataset")
    if not versions:
        raise PlanError("a family needs at least one version table")
    family = versions[0].family
    validate_table(top_view_name(family), "view")
    columns = unify_columns(versions, options.policy)
    _check_columns(family, columns, options)
    branches = [version_select(source_dataset, version, columns, options) for version in versions]
    views = _split_into_views(family, target_dataset, versions, branches, options)
    for view in views:
        check_parses(view)
    return FamilyPlan(family, source_dataset, target_dataset, tuple(versions), columns, tuple(views))


def _check_columns(family: str, columns: Sequence[UnifiedColumn], options: GeneratorOptions) -> None:
    count = len(columns) + (1 if options.source_column else 0)
    if count > BIGQUERY_MAX_COLUMNS:
        raise PlanError(f"family {family!r} has {count} columns; BigQuery views allow {BIGQUERY_MAX_COLUMNS}")
    if options.source_column and options.source_column.lower() in {c.name.lower() for c in columns}:
        raise PlanError(
            f"source column {options.source_column!r} clashes with a column of family {family!r}: choose another name"
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
    family: str, target_dataset: str, versions: Sequence[TableVersion], branches: list[str], options: GeneratorOptions
) -> list[ViewDefinition]:
    layout = _UnionLayout.measure()
    budget = options.max_view_chars
    lengths = [len(branch) for branch in branches]
    if layout.length(lengths) <= budget:
        _check_resources(family, len(versions), 1, options)
        return [ViewDefinition(target_dataset, top_view_name(family), render("union_view.sql.j2", branches=branches))]
    groups = _pack(family, versions, lengths, layout, budget)
    _check_resources(family, len(versions), len(groups) + 1, options)
    parts = [
        ViewDefinition(target_dataset, part_view_name(family, index), render("union_view.sql.j2", branches=[branches[i] for i in group]))
        for index, group in enumerate(groups, start=1)
    ]
    top_branches = [render("part_select.sql.j2", part=quote_path(target_dataset, part.name)) for part in parts]
    top = ViewDefinition(target_dataset, top_view_name(family), render("union_view.sql.j2", branches=top_branches))
    if len(top.body) > budget:
        raise PlanError(f"family {family!r}: the top view over {len(parts)} parts exceeds {budget} characters")
    return [*parts, top]


def _pack(
    family: str, versions: Sequence[TableVersion], lengths: Sequence[int], layout: _UnionLayout, budget: int
) -> list[list[int]]:
    """Greedy, in creation order: consecutive versions fill a part until the next one would not fit."""
    groups: list[list[int]] = []
    current: list[int] = []
    current_lengths: list[int] = []
    for index, length in enumerate(lengths):
        if layout.length([length]) > budget:
            raise PlanError(
                f"version table {versions[index].table_name!r} alone needs {layout.length([length])} characters of SQL, "
                f"over the {budget}-character view budget: raise --max-view-chars (BigQuery allows 256000) "
                f"or narrow the table"
            )
        if current and layout.length(current_lengths + [length]) > budget:
            groups.append(current)
            current, current_lengths = [], []
        current.append(index)
        current_lengths.append(length)
    groups.append(current)
    return groups


def _check_resources(family: str, tables: int, views: int, options: GeneratorOptions) -> None:
    if tables + views > options.max_query_resources:
        raise PlanError(
            f"family {family!r} has {tables} version tables; with {views} view(s) a query would reference "
            f"{tables + views} tables and views, over BigQuery's limit of {options.max_query_resources} per query"
        )


def check_parses(view: ViewDefinition) -> None:
    """Parse the view's statement with sqlglot's BigQuery dialect; PlanError if it does not parse."""
    try:
        parsed = sqlglot.parse(view.statement, read="bigquery")
    except (SqlglotError, RecursionError) as error:
        raise PlanError(f"generated SQL for {view.qualified_name} does not parse: {error}") from None
    if len(parsed) != 1 or parsed[0] is None:
        raise PlanError(f"generated SQL for {view.qualified_name} is not exactly one statement")
