"""BigQuery's hard limits on views and queries, in one place, and the check of a family against them.

Each number is BigQuery's documented limit (https://cloud.google.com/bigquery/quotas, "Query jobs"
and "View limits", and https://cloud.google.com/bigquery/docs/schemas for columns).  The planner
checks every one of them before any DDL runs, so a view that BigQuery would reject, or a view whose
queries would fail, is never created: a family that cannot fit gets one LimitError naming the limit,
the measured figure and the way out.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from uniview.core.errors import PlanError
from uniview.core.types import Array, BQType, Struct

QUOTAS = "https://cloud.google.com/bigquery/quotas"

#: "Maximum number of characters in a view's SQL text": 256 K (referenced views not counted).
#: https://cloud.google.com/bigquery/quotas#view_limits ; K read as 1,000 to be safe.
MAX_VIEW_CHARS = 256_000
#: "Maximum unresolved standard SQL query length": 1,024 K characters, the text of a job (a DDL script
#: included).  https://cloud.google.com/bigquery/quotas#query_jobs
MAX_QUERY_CHARS = 1_024_000
#: "Maximum resolved legacy and GoogleSQL query length": 12 MB, the query with every view it reaches
#: expanded.  https://cloud.google.com/bigquery/quotas#query_jobs ; counted in UTF-8 bytes.
MAX_RESOLVED_BYTES = 12_000_000
#: "Maximum number of tables referenced per query" after views are expanded: 1,000 unique tables,
#: views and functions.  https://cloud.google.com/bigquery/quotas#query_jobs
MAX_QUERY_RESOURCES = 1_000
#: "Maximum columns in a table, query result or view definition": 10,000, nested and repeated fields
#: included.  https://cloud.google.com/bigquery/quotas#table_limits
MAX_COLUMNS = 10_000
#: "Maximum number of nested view levels": 16.  https://cloud.google.com/bigquery/quotas#view_limits
MAX_VIEW_NESTING = 16

#: What a reader's own query over the view may add to the resolved length (its text, a join, the
#: latest-state view on top): the view itself must leave this much of the 12 MB free.
RESOLVED_RESERVE_BYTES = 1_000_000
#: A reader's query references the family's view and may join a few more tables.
RESOURCES_RESERVE = 10
#: A family whose queries use more than this share of a per-query limit is told to consolidate.
NEARING_SHARE = 0.8


class LimitError(PlanError):
    """A family that cannot fit one of BigQuery's limits, with the measured figure and the way out."""


def consolidate_advice(family: str) -> str:
    """The way out of the per-query limits, named in their errors (docs/consolidation.md)."""
    return (
        f"fold its old, idle versions into one table with `uniview consolidate --table {family} "
        "--idle-for <duration> --apply` (docs/consolidation.md)"
    )


def count_columns(types: Iterable[BQType]) -> int:
    """Columns as BigQuery counts them: every column, and every field nested in a STRUCT (inside ARRAYs too)."""
    return sum(_fields(t) for t in types)


def _fields(bq_type: BQType) -> int:
    if isinstance(bq_type, Array):
        return _fields(bq_type.element)
    if isinstance(bq_type, Struct):
        return 1 + sum(_fields(f.type) for f in bq_type.fields)
    return 1


@dataclass(frozen=True)
class FamilyFootprint:
    """What one query over a family's top view costs against the limits."""

    family: str
    view_chars: Sequence[int]  # each view's body
    resolved_bytes: int  # the top view with every part expanded
    resources: int  # version tables + views one query references
    columns: int  # nested fields included
    nesting: int  # levels of views a query goes through

    def check_definition(self, max_view_chars: int = MAX_VIEW_CHARS) -> None:
        """LimitError for a view BigQuery would refuse to create: too long, too many columns, too deep."""
        widest = max(self.view_chars)
        if widest > max_view_chars:
            raise LimitError(
                f"family {self.family!r}: a view of {widest:,} characters is over the "
                f"{max_view_chars:,}-character view budget (BigQuery allows {MAX_VIEW_CHARS:,}; {QUOTAS})"
            )
        if self.columns > MAX_COLUMNS:
            raise LimitError(
                f"family {self.family!r}: {self.columns:,} columns, nested fields included, are over "
                f"BigQuery's limit of {MAX_COLUMNS:,} per view ({QUOTAS}); drop unused columns from "
                "newer versions or split the table"
            )
        if self.nesting > MAX_VIEW_NESTING - 1:
            raise LimitError(
                f"family {self.family!r}: {self.nesting} levels of views, over the "
                f"{MAX_VIEW_NESTING - 1} a query can go through ({QUOTAS})"
            )

    def nearing_limits(self, share: float = NEARING_SHARE) -> str | None:
        """A warning when queries on the view use more than `share` of what a query may reference or
        resolve: time to consolidate, before the family is refused."""
        resolved = self.resolved_bytes / (MAX_RESOLVED_BYTES - RESOLVED_RESERVE_BYTES)
        resources = self.resources / (MAX_QUERY_RESOURCES - RESOURCES_RESERVE)
        if max(resolved, resources) <= share:
            return None
        return (
            f"family {self.family!r} is nearing BigQuery's per-query limits ({self.resources:,} tables and views "
            f"referenced, {resolved:.0%} of the resolved-SQL budget); " + consolidate_advice(self.family)
        )

    def usage(self) -> dict[str, float]:
        """The share of each limit the family uses, for `uniview status`: tables per query and resolved SQL
        against what a reader's query leaves (the reserves above), columns, and the widest view."""
        return {
            "tables per query": self.resources / (MAX_QUERY_RESOURCES - RESOURCES_RESERVE),
            "resolved SQL": self.resolved_bytes / (MAX_RESOLVED_BYTES - RESOLVED_RESERVE_BYTES),
            "columns": self.columns / MAX_COLUMNS,
            "view size": max(self.view_chars) / MAX_VIEW_CHARS,
        }

    def headroom(self) -> dict[str, float]:
        """Percent of each limit still free (negative when over it), by the names usage() gives."""
        return {name: round(100 * (1 - used), 1) for name, used in self.usage().items()}

    def check_queries(self) -> None:
        """LimitError for a view every query of which BigQuery would refuse: too large resolved, too many tables."""
        resolved_limit = MAX_RESOLVED_BYTES - RESOLVED_RESERVE_BYTES
        if self.resolved_bytes > resolved_limit:
            raise LimitError(
                f"family {self.family!r}: a query on its view would resolve to {self.resolved_bytes:,} "
                f"bytes of SQL, over {resolved_limit:,} (BigQuery's 12 MB resolved-query limit less "
                f"{RESOLVED_RESERVE_BYTES:,} for the reader's own query; {QUOTAS}); " + consolidate_advice(self.family)
            )
        resource_limit = MAX_QUERY_RESOURCES - RESOURCES_RESERVE
        if self.resources > resource_limit:
            raise LimitError(
                f"family {self.family!r}: a query on its view would reference {self.resources:,} tables "
                f"and views, over {resource_limit:,} (BigQuery's limit of {MAX_QUERY_RESOURCES:,} per "
                f"query less {RESOURCES_RESERVE} for the reader's own query; {QUOTAS}); "
                + consolidate_advice(self.family)
            )
