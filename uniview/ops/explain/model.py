"""The schema-evolution history of one family: what `uniview explain` shows.

For each column of the unified view (the planner's own superset and types, uniview.planning.plan), its type
in each version, folded into runs of consecutive versions, the unified type and the rule that chose
it: one type, the policy's choice for conflicting types, a lossless widening, a STRUCT merge, and a
declared rename (uniview.core.renames) when a version's column is read under another name.  The versions
come in creation order, with the source databases that wrote them.  Pure: the reads are the
command's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from uniview.core.landing_layout import CDC_PREFIX
from uniview.core.schema import Column, TableVersion
from uniview.core.types import STRING, Array, BQType, Scalar, Struct
from uniview.planning.plan import UnifiedColumn, unify_columns
from uniview.warehouse.status_reads import TableActivity


@dataclass(frozen=True)
class VersionInfo:
    table: str
    version: str
    databases: tuple[str, ...]
    first_ingested: datetime | None


@dataclass(frozen=True)
class Cell:
    """A column in one version: its type there (None: the version lacks it) and the name it is stored under
    when a declared rename reads it under the view's name."""

    type: str | None
    kind: str
    renamed_from: str | None = None


@dataclass(frozen=True)
class Run:
    """Consecutive versions (indexes, both included) in which a column has one type (None: absent)."""

    first: int
    last: int
    type: str | None
    renamed_from: str | None


@dataclass(frozen=True)
class ColumnHistory:
    name: str
    cells: tuple[Cell, ...]
    unified: str
    unified_kind: str
    rule: str
    is_cdc: bool

    @property
    def conflict(self) -> bool:
        return len({cell.type for cell in self.cells if cell.type is not None}) > 1

    @property
    def renamed(self) -> bool:
        return any(cell.renamed_from for cell in self.cells)

    @property
    def runs(self) -> list[Run]:
        runs: list[Run] = []
        for index, cell in enumerate(self.cells):
            if runs and (runs[-1].type, runs[-1].renamed_from) == (cell.type, cell.renamed_from):
                runs[-1] = Run(runs[-1].first, index, cell.type, cell.renamed_from)
            else:
                runs.append(Run(index, index, cell.type, cell.renamed_from))
        return runs


@dataclass(frozen=True)
class Explanation:
    family: str
    policy: str
    versions: tuple[VersionInfo, ...]
    columns: tuple[ColumnHistory, ...]

    def as_json(self) -> dict[str, Any]:
        return {
            "family": self.family,
            "policy": self.policy,
            "versions": [
                {
                    "table": v.table,
                    "version": v.version,
                    "source_databases": list(v.databases),
                    "first_ingested": None if v.first_ingested is None else v.first_ingested.isoformat(),
                }
                for v in self.versions
            ],
            "columns": [
                {
                    "name": c.name,
                    "unified_type": c.unified,
                    "rule": c.rule,
                    "conflict": c.conflict,
                    "runs": [
                        {
                            "versions": [self.versions[r.first].version, self.versions[r.last].version],
                            "type": r.type,
                            "renamed_from": r.renamed_from,
                        }
                        for r in c.runs
                    ],
                }
                for c in self.columns
            ],
        }


def explain_family(
    versions: Sequence[TableVersion], policy: str, activity: Mapping[str, TableActivity] | None = None
) -> Explanation:
    """The history of a family's `versions` (in creation order, renames applied) under `policy`."""
    activity = activity or {}
    infos = tuple(
        VersionInfo(
            v.table_name,
            v.version,
            tuple(sorted(activity[v.table_name].databases)) if v.table_name in activity else (),
            activity[v.table_name].first_ingested if v.table_name in activity else None,
        )
        for v in versions
    )
    by_name = [{column.name.lower(): column for column in version.columns} for version in versions]
    columns = tuple(_history(unified, by_name, policy) for unified in unify_columns(versions, policy))
    return Explanation(versions[0].family, policy, infos, columns)


def _history(unified: UnifiedColumn, by_name: list[dict[str, Column]], policy: str) -> ColumnHistory:
    key = unified.name.lower()
    cells = tuple(_cell(columns.get(key)) for columns in by_name)
    renames = sorted({cell.renamed_from for cell in cells if cell.renamed_from})
    return ColumnHistory(
        unified.name,
        cells,
        str(unified.type),
        type_kind(unified.type),
        rule(unified, policy, renames),
        key.startswith(CDC_PREFIX),
    )


def _cell(column: Column | None) -> Cell:
    if column is None:
        return Cell(None, "absent")
    renamed = column.stored if column.stored and column.stored != column.name else None
    return Cell(str(column.type.base()), type_kind(column.type), renamed)


def rule(column: UnifiedColumn, policy: str, renames: Sequence[str] = ()) -> str:
    """Why the unified column has its type, in words."""
    distinct = list(dict.fromkeys(t.base() for t in column.source_types))
    named = " and ".join(str(t) for t in distinct)
    target = column.type
    if len(distinct) == 1:
        reason = "one type in every version"
    elif all(isinstance(t, Struct) for t in distinct):
        reason = "STRUCT merge: every version's fields, each field's types unified"
    elif all(isinstance(t, Array) for t in distinct):
        reason = "ARRAY: the elements' types unified"
    elif target == STRING:
        reason = f"policy {policy}: {named} conflict, read as STRING"
    elif {str(t) for t in distinct} == {"DATETIME", "TIMESTAMP"} and policy == "uniview":
        reason = f"policy {policy}: {named} read as TIMESTAMP (DATETIME taken as UTC or --datetime-timezone)"
    else:
        reason = f"widening (policy {policy}): {named} all fit {target} without loss"
    if renames:
        reason += f"; rename: {', '.join(renames)} read as {column.name}"
    return reason


#: The kinds a cell is coloured by (uniview.ops.explain.html colours them).
KINDS = ("integer", "float", "decimal", "string", "bool", "time", "bytes", "json", "struct", "array", "other")
_KIND_OF = {
    "INT64": "integer",
    "FLOAT64": "float",
    "NUMERIC": "decimal",
    "BIGNUMERIC": "decimal",
    "STRING": "string",
    "BOOL": "bool",
    "DATE": "time",
    "DATETIME": "time",
    "TIME": "time",
    "TIMESTAMP": "time",
    "INTERVAL": "time",
    "BYTES": "bytes",
    "JSON": "json",
}


def type_kind(bq_type: BQType) -> str:
    if isinstance(bq_type, Struct):
        return "struct"
    if isinstance(bq_type, Array):
        return "array"
    if isinstance(bq_type, Scalar):
        return _KIND_OF.get(bq_type.name, "other")
    return "other"
