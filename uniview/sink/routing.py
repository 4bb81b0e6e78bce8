"""Decide, on the driver, where the records of one batch go: a version table or the quarantine.

A batch holds few distinct (database, table, declared version, declared schema) combinations,
however many rows it has.  Those keys are collected once; this module resolves each key to a
version route or to a rejection (reason + detail) with plain Python, and the decisions are
joined back to the rows.  One version never gets two schemas: keys that disagree with the
existing table, or with each other when the table does not exist yet, are rejected.
"""

from __future__ import annotations

import json
import logging
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from uniview.core.errors import IdentifierError, UniviewError, WarehouseError
from uniview.core.identifiers import validate_column_name, validate_dataset, validate_table
from uniview.core.landing_layout import CDC_PREFIX
from uniview.core.schema import version_table_name
from uniview.core.types import BQType
from uniview.sink.mysql_types import bigquery_type
from uniview.sink.reasons import (
    INVALID_COLUMN_NAME,
    INVALID_METADATA,
    INVALID_SCHEMA,
    MISSING_METADATA,
    MISSING_SCHEMA,
    VERSION_CONFLICT,
)
from uniview.sink.versioning import (
    VOLATILE_DEFAULT,
    SourceColumn,
    compute_version,
    declaration_digest,
    is_valid_version,
    schema_signature,
)

_LOG = logging.getLogger(__name__)


@dataclass(frozen=True)
class RecordKey:
    """What routing depends on, as the record's metadata declares it (None when absent)."""

    database_name: str | None
    table_name: str | None
    table_version: str | None
    schema_text: str | None
    primary_key_text: str | None = None


#: When a batch first saw a routing key: the earliest `_cdc_timestamp` of its records, then their earliest
#: `_cdc_sequence` (None when absent). The sequence orders the changes of one source database within one
#: millisecond: a rename and the writes around it often share one.
FirstSeen = tuple[datetime | None, str | None]


@dataclass(frozen=True)
class LandingColumn:
    """One source column of a version table: name, declared source type (if known), BigQuery type."""

    name: str
    declared_type: str | None
    bq_type: BQType
    #: As SourceColumn's: the declared default (JSON text) and nullability, recorded in the description.
    default: str | None = field(default=None, compare=False)
    nullable: bool = field(default=True, compare=False)

    @property
    def label(self) -> str:
        """How a quarantine detail names the column: `id (int(11))`."""
        return f"{self.name} ({self.declared_type or self.bq_type})"


@dataclass(frozen=True)
class KnownVersion:
    """A version table that already exists: its recorded source columns (None if it has none)
    and its source columns as the warehouse types them (CDC columns left out)."""

    source_columns: tuple[SourceColumn, ...] | None
    table_columns: tuple[tuple[str, BQType], ...]
    primary_key: tuple[str, ...] | None = None
    #: CDC columns of today's landing layout that the table lacks (landed by an older uniview).
    missing_cdc_columns: tuple[str, ...] = ()
    #: The table's name as the warehouse spells it, when it differs in case only from the name asked for (DuckDB,
    #: whose names are case-insensitive, finds `Customer_v1` for `customer_v1`); None when it is the same.
    spelled: str | None = None
    #: The digest of the declarations (defaults, nullability) the table records (None: landed before it did).
    declaration: str | None = None


@dataclass(frozen=True)
class VersionRoute:
    """One version table the batch writes to."""

    dataset: str
    table: str
    version: str
    columns: tuple[LandingColumn, ...]
    exists: bool
    primary_key: tuple[str, ...] | None = None

    @property
    def table_name(self) -> str:
        return version_table_name(self.table, self.version)

    @property
    def source_columns(self) -> tuple[SourceColumn, ...]:
        return tuple(SourceColumn(c.name, c.declared_type or "") for c in self.columns)


def redirected(route: VersionRoute, folded: Mapping[tuple[str, str], str]) -> VersionRoute:
    """The route itself, or, when its version was folded into a consolidated table, the route to its
    successor version (`folded`: (dataset, version table) -> successor table): a folded table is never
    written again (docs/consolidation.md)."""
    from uniview.core.schema import split_version_table

    while (route.dataset, route.table_name) in folded:
        successor = folded[(route.dataset, route.table_name)]
        parts = split_version_table(successor)
        if parts is None:
            raise WarehouseError(
                f"the consolidation registry gives {successor!r}, which is not a version table, as the "
                f"successor of {route.dataset}.{route.table_name}"
            )
        route = replace(route, version=parts[1], exists=False)
    return route


@dataclass(frozen=True)
class Decision:
    """Where the records of one key go: `route` (an index into RoutingPlan.routes) or a rejection."""

    dataset: str
    route: int | None = None
    reason: str | None = None
    detail: str | None = None
    version: str | None = None


def route_shapes(routes: Sequence[VersionRoute]) -> list[int]:
    """Each route's shape: routes with the same columns and primary key (one version landing in many datasets)
    share a shape, and the staged frame types each shape once, however many tables of it a batch feeds.  The key
    is part of the shape: a DELETE is typed by it (load_sql.typed_records)."""
    shapes: dict[tuple[tuple[LandingColumn, ...], tuple[str, ...] | None], int] = {}
    return [shapes.setdefault(_shape_of(route), len(shapes)) for route in routes]


def distinct_shapes(routes: Sequence[VersionRoute]) -> list[tuple[LandingColumn, ...]]:
    """The columns of each shape, indexed as route_shapes numbers them (by first appearance)."""
    return [columns for columns, _ in dict.fromkeys(_shape_of(route) for route in routes)]


def _shape_of(route: VersionRoute) -> tuple[tuple[LandingColumn, ...], tuple[str, ...] | None]:
    key = None if route.primary_key is None else tuple(name.lower() for name in route.primary_key)
    return route.columns, key


@dataclass
class RoutingPlan:
    routes: list[VersionRoute] = field(default_factory=list)
    decisions: dict[RecordKey, Decision] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def reject_routes(plan: RoutingPlan, why: Mapping[int, str]) -> RoutingPlan:
    """`plan` with the records of the routes `why` names rejected as invalid_schema, with their reason as the
    detail (a version the warehouse cannot take); the routes stay, so the others' indexes hold."""
    decisions = {
        key: Decision(d.dataset, None, INVALID_SCHEMA, f"the schema cannot land: {why[d.route]}", d.version)
        if d.route is not None and d.route in why
        else d
        for key, d in plan.decisions.items()
    }
    return RoutingPlan(plan.routes, decisions, plan.warnings)


@dataclass(frozen=True)
class _Candidate:
    key: RecordKey
    dataset: str
    table: str
    version: str
    columns: tuple[SourceColumn, ...] | None
    primary_key: tuple[str, ...] | None = None
    #: Its version was computed with its key (a key other than the version's own).
    keyed: bool = False


class SchemaError(ValueError):
    """metadata.schema is not a usable list of {"name", "type"} objects."""


class ColumnNameError(SchemaError):
    """metadata.schema names a column BigQuery refuses."""


Lookup = Callable[[Collection[tuple[str, str]]], Mapping[tuple[str, str], KnownVersion]]


def plan_routes(
    keys: Iterable[RecordKey],
    dataset: str | None,
    fallback_dataset: str,
    lookup: Lookup,
    first_seen: Mapping[RecordKey, FirstSeen] | None = None,
) -> RoutingPlan:
    """Resolve every key.  `dataset` is the shared dataset every record lands in (a record that names no source
    database is rejected into it), None routes each record to the dataset its database_name names (records
    without a usable one are rejected into `fallback_dataset`).  `lookup` answers which version tables
    exist, as {(dataset, version table name): KnownVersion}.  Routes are ordered by the earliest
    `first_seen` of their keys (time, then log position: the order new tables are created in, which orders a
    family's versions), then by name."""
    plan = RoutingPlan()
    groups: dict[tuple[str, str, str], list[_Candidate]] = defaultdict(list)
    for key in sorted(set(keys), key=_sort_key):
        resolved = _resolve(key, dataset, fallback_dataset)
        if isinstance(resolved, Decision):
            plan.decisions[key] = resolved
        else:
            groups[(resolved.dataset, resolved.table, resolved.version)].append(resolved)
    seen = first_seen or {}
    for group, twin in _case_twins(groups, seen).items():
        detail = (
            f"table_name {group[1]!r} differs only in case from {twin!r}, which this batch lands in dataset "
            f"{group[0]!r}: table names are case-sensitive (as BigQuery's), and DuckDB cannot hold both"
        )
        _reject(plan, groups.pop(group), INVALID_METADATA, detail)
    known = _lookup_groups(lookup, groups, {})
    groups = _rekeyed(groups, known, seen)
    known = _lookup_groups(lookup, groups, known)
    groups = _redeclared(groups, known, seen)
    known = _lookup_groups(lookup, groups, known)
    for group in sorted(groups, key=lambda g: (_earliest(groups[g], seen), g)):
        ds, table, version = group
        _decide_group(plan, groups[group], known.get((ds, version_table_name(table, version))))
    return plan


def _lookup_groups(
    lookup: Lookup,
    groups: Mapping[tuple[str, str, str], list[_Candidate]],
    known: Mapping[tuple[str, str], KnownVersion],
) -> dict[tuple[str, str], KnownVersion]:
    """`known` and what `lookup` answers for the groups' version tables not asked for yet."""
    tables = {(ds, version_table_name(table, version)) for ds, table, version in groups}
    asked = {(ds, table) for ds, table in tables if (ds, table) in known}
    return {**known, **(lookup(tables - asked) if tables - asked else {})}


def _rekeyed(
    groups: Mapping[tuple[str, str, str], list[_Candidate]],
    known: Mapping[tuple[str, str], KnownVersion],
    first_seen: Mapping[RecordKey, FirstSeen],
) -> dict[tuple[str, str, str], list[_Candidate]]:
    """The groups, with each computed version's candidates that declare another key than the version's own (its
    table's, else the key seen first in the batch) moved to the version computed with their key: a key redefined
    in the source, the columns unchanged, starts a version of its own (uniview.sink.versioning)."""
    regrouped: dict[tuple[str, str, str], list[_Candidate]] = defaultdict(list)
    for (ds, table, version), candidates in groups.items():
        own = _own_key(candidates, known.get((ds, version_table_name(table, version))), first_seen)
        for candidate in candidates:
            if (
                own is not None
                and candidate.primary_key is not None
                and candidate.columns is not None
                and candidate.key.table_version is None
                and not _same_key(candidate.primary_key, own)
            ):
                keyed = compute_version(table, candidate.columns, candidate.primary_key)
                regrouped[(ds, table, keyed)].append(replace(candidate, version=keyed, keyed=True))
            else:
                regrouped[(ds, table, version)].append(candidate)
    return regrouped


def _redeclared(
    groups: Mapping[tuple[str, str, str], list[_Candidate]],
    known: Mapping[tuple[str, str], KnownVersion],
    first_seen: Mapping[RecordKey, FirstSeen],
) -> dict[tuple[str, str, str], list[_Candidate]]:
    """The groups, with each computed version's candidates that declare other defaults or nullability than the
    version's own (its table's, else the ones of the candidate seen first in the batch) moved to the version
    computed with their declarations: a column dropped and added again with another default, the columns
    otherwise as before, starts a version of its own (uniview.sink.versioning).  A candidate that declares no key
    stays where it is when the version has one (a truncate event, which Debezium sends without a key, after the
    key was redefined): a version of its own would record no key."""
    regrouped: dict[tuple[str, str, str], list[_Candidate]] = defaultdict(list)
    for (ds, table, version), candidates in groups.items():
        existing = known.get((ds, version_table_name(table, version)))
        own = _own_declaration(candidates, existing, first_seen)
        keyed = _own_key(candidates, existing, first_seen) is not None
        for candidate in candidates:
            if (
                own is not None
                and candidate.columns is not None
                and candidate.key.table_version is None
                and (candidate.primary_key is not None or not keyed)
                and declaration_digest(candidate.columns) != own
            ):
                key = candidate.primary_key if candidate.keyed else None
                declared = compute_version(table, candidate.columns, key, declared=True)
                _LOG.info(
                    "%s.%s: records declaring other defaults or nullability than version %s land in %s",
                    ds,
                    table,
                    version,
                    declared,
                )
                regrouped[(ds, table, declared)].append(replace(candidate, version=declared))
            else:
                regrouped[(ds, table, version)].append(candidate)
    return regrouped


def _own_declaration(
    candidates: list[_Candidate], known: KnownVersion | None, first_seen: Mapping[RecordKey, FirstSeen]
) -> str | None:
    """The declarations' digest a version keeps: its table's (None when it records none), else the one of the
    candidate with columns seen first."""
    if known is not None:
        return known.declaration
    declaring = [c for c in candidates if c.columns is not None and c.key.table_version is None]
    first = min(declaring, key=lambda c: _earliest([c], first_seen), default=None)
    return None if first is None or first.columns is None else declaration_digest(first.columns)


def _own_key(
    candidates: list[_Candidate], known: KnownVersion | None, first_seen: Mapping[RecordKey, FirstSeen]
) -> tuple[str, ...] | None:
    """The key a version keeps: its table's, else the one of the candidate seen first (None: none declared)."""
    if known is not None:
        return known.primary_key
    keyed = [c for c in candidates if c.primary_key is not None]
    return min(keyed, key=lambda c: _earliest([c], first_seen)).primary_key if keyed else None


def _case_twins(
    groups: Mapping[tuple[str, str, str], list[_Candidate]], first_seen: Mapping[RecordKey, FirstSeen]
) -> dict[tuple[str, str, str], str]:
    """{group: the table name it yields to} for the groups whose table name differs only in case from another
    one in the same dataset: the spelling seen first (then the first in order) lands, the others do not."""
    spellings: dict[tuple[str, str], dict[str, list[_Candidate]]] = defaultdict(lambda: defaultdict(list))
    for (ds, table, _), candidates in groups.items():
        spellings[(ds, table.casefold())][table].extend(candidates)
    twins: dict[tuple[str, str, str], str] = {}
    for (ds, _), tables in spellings.items():
        if len(tables) < 2:
            continue
        first = min(tables, key=lambda table: (_earliest(tables[table], first_seen), table))
        twins.update({group: first for group in groups if group[0] == ds and group[1] in tables and group[1] != first})
    return twins


def _earliest(candidates: list[_Candidate], first_seen: Mapping[RecordKey, FirstSeen]) -> tuple[int, float, str]:
    """The candidates' first change as a sort key: the earliest time, then the earliest log position at that time
    (undated ones last)."""
    seen = [first_seen.get(c.key, (None, None)) for c in candidates]
    dated = [(time.timestamp(), sequence or "") for time, sequence in seen if time is not None]
    return (0, *min(dated)) if dated else (1, 0.0, "")


def _sort_key(key: RecordKey) -> tuple[str, ...]:
    return tuple(
        "" if part is None else "\x01" + part
        for part in (key.database_name, key.table_name, key.table_version, key.schema_text, key.primary_key_text)
    )


def _resolve(key: RecordKey, dataset: str | None, fallback: str) -> Decision | _Candidate:
    """Validate the key's dataset, table, schema and version; compute the version if needed."""
    target = _target_dataset(key, dataset, fallback)
    if isinstance(target, Decision):
        return target
    if not key.table_name:
        return Decision(target, reason=MISSING_METADATA, detail="no metadata.table_name")
    try:
        columns = parse_schema(key.schema_text) if key.schema_text is not None else None
    except SchemaError as error:
        reason = INVALID_COLUMN_NAME if isinstance(error, ColumnNameError) else INVALID_SCHEMA
        return Decision(target, reason=reason, detail=str(error), version=key.table_version)
    if key.table_version is not None and not is_valid_version(key.table_version):
        return Decision(
            target,
            reason=INVALID_METADATA,
            version=key.table_version,
            detail=f"table_version {key.table_version!r} is not 1-16 lowercase letters or digits",
        )
    if key.table_version is not None:
        version = key.table_version
    elif columns is not None:
        version = compute_version(key.table_name, columns)
    else:
        return Decision(target, reason=MISSING_SCHEMA, detail="no metadata.table_version and no metadata.schema")
    try:
        validate_table(version_table_name(key.table_name, version), "version table")
        primary_key = parse_primary_key(key.primary_key_text, columns)
    except (IdentifierError, SchemaError) as error:
        return Decision(target, reason=INVALID_METADATA, detail=str(error), version=version)
    return _Candidate(key, target, key.table_name, version, columns, primary_key)


def _target_dataset(key: RecordKey, dataset: str | None, fallback: str) -> str | Decision:
    """Where the key's records land: the shared `dataset`, else the dataset its database_name names; a rejection
    when the record names no source database (in a shared dataset `_cdc_database` is the only thing that tells
    the databases' rows apart) or, with one dataset per database, names one that is no dataset name."""
    if dataset is not None:
        if key.database_name:
            return dataset
        detail = f"no metadata.database_name: every row of the shared dataset {dataset!r} names its source database"
        return Decision(dataset, reason=MISSING_METADATA, detail=detail)
    if not key.database_name:
        detail = "no metadata.database_name, which names the dataset (--dataset-per-database)"
        return Decision(fallback, reason=MISSING_METADATA, detail=detail)
    try:
        return validate_dataset(key.database_name, "dataset (metadata.database_name)")
    except IdentifierError as error:
        return Decision(fallback, reason=INVALID_METADATA, detail=str(error))


def parse_primary_key(text: str | None, columns: tuple[SourceColumn, ...] | None) -> tuple[str, ...] | None:
    """metadata.primary_key (JSON text of a list of column names) -> the names, or None when absent."""
    if text is None:
        return None
    try:
        names = json.loads(text)
    except ValueError:
        raise SchemaError("metadata.primary_key is not JSON") from None
    if (
        not isinstance(names, list)
        or not names
        or not all(isinstance(n, str) and n for n in names)
        or len({n.lower() for n in names}) != len(names)
    ):
        raise SchemaError("metadata.primary_key must be a non-empty list of distinct column names")
    declared = {c.name.lower() for c in columns} if columns is not None else None
    unknown = [n for n in names if declared is not None and n.lower() not in declared]
    if unknown:
        raise SchemaError(f"metadata.primary_key names columns not in metadata.schema: {', '.join(unknown)}")
    return tuple(names)


def parse_schema(schema_text: str) -> tuple[SourceColumn, ...]:
    """metadata.schema (JSON text) -> source columns; SchemaError names what is wrong."""
    try:
        items = json.loads(schema_text)
    except ValueError:
        raise SchemaError("metadata.schema is not JSON") from None
    if not isinstance(items, list) or not items:
        raise SchemaError('metadata.schema must be a non-empty list of {"name", "type"} objects')
    columns, seen = [], set()
    for item in items:
        if not (
            isinstance(item, dict)
            and isinstance(item.get("name"), str)
            and isinstance(item.get("type"), str)
            and item["name"]
            and item["type"].strip()
        ):
            raise SchemaError(f"metadata.schema entry {json.dumps(item)[:80]} needs a non-empty name and type")
        name = item["name"]
        if name.lower() in seen:
            raise SchemaError(f"metadata.schema declares column {name!r} twice")
        if name.lower().startswith(CDC_PREFIX):
            raise SchemaError(f"column {name!r}: the {CDC_PREFIX} prefix is reserved for CDC metadata columns")
        try:
            validate_column_name(name)
        except IdentifierError as error:
            raise ColumnNameError(str(error)) from None
        seen.add(name.lower())
        nullable = item.get("nullable", True)
        if not isinstance(nullable, bool):
            raise SchemaError(f"metadata.schema entry {name!r}: nullable must be true or false")
        if not isinstance(item.get("default_volatile", False), bool):
            raise SchemaError(f"metadata.schema entry {name!r}: default_volatile must be true or false")
        default = json.dumps(item["default"], ensure_ascii=False) if item.get("default") is not None else None
        if item.get("default_volatile"):
            default = VOLATILE_DEFAULT
        columns.append(SourceColumn(name, item["type"], default, nullable))
    return tuple(columns)


def _decide_group(plan: RoutingPlan, candidates: list[_Candidate], known: KnownVersion | None) -> None:
    """Route or reject every key of one (dataset, table, version)."""
    first = candidates[0]
    table_name = version_table_name(first.table, first.version)
    if known is not None and known.spelled is not None:
        detail = (
            f"table_name {first.table!r} differs only in case from the table {known.spelled!r} of dataset "
            f"{first.dataset!r}: table names are case-sensitive (as BigQuery's), and DuckDB cannot hold both"
        )
        _reject(plan, candidates, INVALID_METADATA, detail)
        return
    if known is not None:
        if known.missing_cdc_columns:
            raise LandingLayoutError(first.dataset, table_name, known.missing_cdc_columns)
        route_columns = _known_columns(known, plan.warnings)
        matches = _matcher(known)
        conflict = f"{first.dataset}.{table_name} exists with a different schema or primary key"
        accepted = [
            c
            for c in candidates
            if (c.columns is None or matches(c.columns))
            and (c.primary_key is None or known.primary_key is None or _same_key(c.primary_key, known.primary_key))
        ]
        _add_route(plan, accepted, route_columns, exists=True, primary_key=known.primary_key)
        _reject(plan, [c for c in candidates if c not in accepted], VERSION_CONFLICT, conflict)
        return
    signatures = {schema_signature(c.columns) for c in candidates if c.columns is not None}
    keys = {tuple(n.lower() for n in c.primary_key) for c in candidates if c.primary_key is not None}
    if len(keys) > 1:
        _reject(
            plan,
            candidates,
            VERSION_CONFLICT,
            f"{len(keys)} different primary keys declare version {first.version} of {first.table}",
        )
    elif not signatures:
        _reject(
            plan,
            candidates,
            MISSING_SCHEMA,
            f"no record declares the schema of version {first.version} and {table_name} does not exist",
        )
    elif len(signatures) > 1:
        _reject(
            plan,
            candidates,
            VERSION_CONFLICT,
            f"{len(signatures)} different schemas declare version {first.version} of {first.table}",
        )
    else:
        declared = next(c.columns for c in candidates if c.columns is not None)
        primary_key = next((c.primary_key for c in candidates if c.primary_key is not None), None)
        _add_route(plan, candidates, _map_columns(declared, plan.warnings), exists=False, primary_key=primary_key)


def _same_key(declared: tuple[str, ...], recorded: tuple[str, ...]) -> bool:
    return tuple(n.lower() for n in declared) == tuple(n.lower() for n in recorded)


class LandingLayoutError(UniviewError):
    """A version table was landed by an older uniview and lacks today's CDC columns: the batch stops
    before writing anything, and `uniview migrate-landing` adds the columns."""

    def __init__(self, dataset: str, table: str, missing: tuple[str, ...]) -> None:
        super().__init__(
            f"{dataset}.{table} was created by an older uniview and lacks {', '.join(missing)}; nothing was "
            f"written. Run `uniview migrate-landing --dataset {dataset} --apply` (it adds the missing columns "
            f"as NULLable, existing rows keep NULL), then restart the sink"
        )


def _known_columns(known: KnownVersion, warnings: list[str]) -> tuple[LandingColumn, ...]:
    if known.source_columns is not None:
        return _map_columns(known.source_columns, warnings)
    return tuple(LandingColumn(name, None, bq_type) for name, bq_type in known.table_columns)


def _matcher(known: KnownVersion) -> Callable[[tuple[SourceColumn, ...]], bool]:
    """Same schema as the existing table: same recorded signature, or (tables without a recorded
    source schema) the same column names in the same order."""
    if known.source_columns is not None:
        expected = schema_signature(known.source_columns)
        return lambda columns: schema_signature(columns) == expected
    names = tuple(name for name, _ in known.table_columns)
    return lambda columns: tuple(c.name for c in columns) == names


def _map_columns(columns: tuple[SourceColumn, ...], warnings: list[str]) -> tuple[LandingColumn, ...]:
    landed = []
    for column in columns:
        mapping = bigquery_type(column.declared_type)
        if mapping.warning and f"column {column.name!r}: {mapping.warning}" not in warnings:
            warnings.append(f"column {column.name!r}: {mapping.warning}")
        landed.append(
            LandingColumn(column.name, column.declared_type, mapping.bq_type, column.default, column.nullable)
        )
    return tuple(landed)


def _add_route(
    plan: RoutingPlan,
    candidates: list[_Candidate],
    columns: tuple[LandingColumn, ...],
    exists: bool,
    primary_key: tuple[str, ...] | None,
) -> None:
    if not candidates:
        return
    first = candidates[0]
    plan.routes.append(VersionRoute(first.dataset, first.table, first.version, columns, exists, primary_key))
    for candidate in candidates:
        plan.decisions[candidate.key] = Decision(first.dataset, route=len(plan.routes) - 1, version=first.version)


def _reject(plan: RoutingPlan, candidates: list[_Candidate], reason: str, detail: str) -> None:
    for candidate in candidates:
        plan.decisions[candidate.key] = Decision(
            candidate.dataset, reason=reason, detail=detail, version=candidate.version
        )
