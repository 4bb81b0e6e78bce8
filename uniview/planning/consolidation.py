"""Which versions of a family to fold into a consolidated table, and the SQL that moves their rows.

Pure: the caller reads the versions, their idle times and the registry; this module chooses and
renders (docs/consolidation.md).  A consolidated table is `<family>_v_consolidated<N>`, a version
table like any other, with the family's unified columns followed by `_cdc_source_table`.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from uniview.core.errors import ConfigError
from uniview.core.landing_layout import SOURCE_TABLE
from uniview.core.schema import TableVersion, version_table_name
from uniview.core.types import STRING, BQType
from uniview.core.version_description import version_description
from uniview.planning.plan import GeneratorOptions, UnifiedColumn, unify_columns, version_select

CONSOLIDATED_VERSION = re.compile(r"consolidated(?P<number>\d{1,4})")
#: After a fold the family keeps at most this many version tables by default: half of what one
#: query may reference, so the family can grow for a long time before the next fold.
DEFAULT_MAX_VERSIONS = 500
#: BigQuery mutates at most 100 tables per transaction: 98 sources, the consolidated table and the registry.
MAX_SOURCES_PER_MOVE = 98
#: A folded version's states in the registry (docs/consolidation.md, The protocol).
PLANNED, MOVED, RETIRED, DROPPED = "planned", "moved", "retired", "dropped"
#: From `moved` on, a sink lands the version's rows under its successor.
REDIRECTED_STATES = (MOVED, RETIRED, DROPPED)
_DURATION = re.compile(r"(?P<amount>\d+)(?P<unit>[smhdw])")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def parse_duration(text: str) -> timedelta:
    """`30d`, `12h`, `0s`, `1w2d` -> timedelta; ConfigError for anything else."""
    parts = list(_DURATION.finditer(text or ""))
    if not parts or "".join(p.group(0) for p in parts) != text:
        raise ConfigError(f"invalid duration {text!r}: use a number and a unit (s, m, h, d, w), e.g. 30d or 12h")
    total = timedelta()
    for part in parts:
        total += timedelta(**{_UNITS[part["unit"]]: int(part["amount"])})
    return total


def check_max_versions(value: int, name: str = "--max-versions") -> int:
    """`value`, or ConfigError naming `name`: a fold keeps the consolidated table and at least one version."""
    if value < 2:
        raise ConfigError(f"{name} must be at least 2, not {value}")
    return value


def next_consolidated_table(family: str, versions: Sequence[TableVersion], registered: Sequence[str] = ()) -> str:
    """`<family>_v_consolidated<N>`, N one more than any the family has or the registry names."""
    numbers = [int(m["number"]) for v in versions if (m := CONSOLIDATED_VERSION.fullmatch(v.version))]
    numbers += [
        int(m["number"]) for name in registered if (m := CONSOLIDATED_VERSION.fullmatch(name.rpartition("_v_")[2]))
    ]
    return version_table_name(family, f"consolidated{max(numbers, default=0) + 1}")


def successor_version(version: str) -> str:
    """The version a sink lands a retired version's rows under: 9 hex digits derived from it."""
    return hashlib.sha256(f"{version}/successor".encode()).hexdigest()[:9]


@dataclass(frozen=True)
class FoldRecord:
    """One row of the registry: a version folded (or to be folded) into a consolidated table."""

    dataset: str
    family: str
    version_table: str
    consolidated_table: str
    successor_table: str
    state: str
    rows_moved: int | None
    recorded_at: datetime


@dataclass(frozen=True)
class FoldPlan:
    """One consolidation of one family: the versions to fold, oldest first, and where they go."""

    dataset: str
    family: str
    consolidated_table: str
    versions: tuple[TableVersion, ...]
    columns: tuple[UnifiedColumn, ...]
    #: Versions the family keeps beside the consolidated table.
    remaining: int

    @property
    def table_definition(self) -> list[tuple[str, BQType]]:
        """The consolidated table's columns: the unified ones, then the source-table column."""
        return [(column.name, column.type) for column in self.columns] + [(SOURCE_TABLE, STRING)]

    def batches(self) -> list[tuple[TableVersion, ...]]:
        """The versions in move transactions of at most MAX_SOURCES_PER_MOVE."""
        return [self.versions[i : i + MAX_SOURCES_PER_MOVE] for i in range(0, len(self.versions), MAX_SOURCES_PER_MOVE)]


def choose_versions(
    versions: Sequence[TableVersion],
    last_written: Mapping[str, datetime | None],
    now: datetime,
    idle_for: timedelta,
    max_versions: int,
) -> list[TableVersion]:
    """The versions to fold: idle ones (never written, or not since `now - idle_for`), oldest first,
    as many as it takes for the family to keep at most `max_versions` tables with the consolidated
    one; none when the family is already small enough or too few versions are idle to fold two."""
    check_max_versions(max_versions)
    if len(versions) <= max_versions:
        return []
    cutoff = now - idle_for
    idle = [v for v in versions if (written := last_written.get(v.table_name)) is None or written <= cutoff]
    chosen = idle[: len(versions) + 1 - max_versions]  # the survivors and the consolidated table fit
    return chosen if len(chosen) >= 2 else []


def fold_plan(
    dataset: str,
    family_versions: Sequence[TableVersion],
    chosen: Sequence[TableVersion],
    consolidated_table: str,
    policy: str,
) -> FoldPlan:
    """The plan for folding `chosen` into `consolidated_table`, typed like the family's view now."""
    columns = unify_columns(family_versions, policy)
    return FoldPlan(
        dataset,
        family_versions[0].family,
        consolidated_table,
        tuple(chosen),
        columns,
        len(family_versions) - len(chosen),
    )


def move_select(plan: FoldPlan, version: TableVersion, options: GeneratorOptions) -> str:
    """The SELECT (BigQuery SQL) that reads `version` in the consolidated table's column order: the
    view's select, with the version table (or, from a consolidated table, its own) as `_cdc_source_table`."""
    return version_select(plan.dataset, version, plan.columns, replace(options, source_column=SOURCE_TABLE))


def agreed_primary_key(keys: Sequence[tuple[str, ...] | None]) -> tuple[str, ...] | None:
    """The one key every recorded key spells alike (case aside); None when none is recorded or they differ."""
    recorded = [key for key in keys if key]
    if len({tuple(name.lower() for name in key) for key in recorded}) != 1:
        return None
    return recorded[-1]


def folded_primary_key(
    plan: FoldPlan, read_primary_keys: Callable[[str, Collection[str]], Mapping[str, tuple[str, ...] | None]]
) -> tuple[str, ...] | None:
    """The key the folded versions record, when they agree: from the plan's versions, else read from the
    warehouse's descriptions (`read_primary_keys(dataset, tables)`)."""
    keys: list[tuple[str, ...] | None] = [v.primary_key for v in plan.versions if v.primary_key]
    if not keys:
        keys = list(read_primary_keys(plan.dataset, [v.table_name for v in plan.versions]).values())
    return agreed_primary_key(keys)


def consolidated_description(family: str, primary_key: Sequence[str] | None) -> str:
    """The consolidated table's description on every warehouse: its key recorded as a version table's
    description records it (`<table>_current` reads it there), or, with no agreed key, what the table is."""
    if primary_key:
        return version_description(family, (), primary_key)
    return f"uniview consolidated table of {family} (docs/consolidation.md)"
