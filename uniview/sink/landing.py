"""The interface a warehouse offers the sink: which versions exist, and land one batch.

A batch arrives as its lines (`land_lines`), as Spark staged them without parsing them: the warehouse's load
step routes, types and judges them in SQL (uniview.sink.load_sql: one set of rules, rendered for DuckDB or
BigQuery), writes each record to its version table or its dataset's quarantine, and returns exact counts.
Each landing keeps a batch ledger, so a batch replayed after a crash is not written twice.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field

from pyspark.sql import DataFrame

from uniview.core.landing_layout import CDC_PREFIX, layout_blocking_columns
from uniview.core.notification import LandedBatch
from uniview.core.schema import split_version_table
from uniview.core.types import BQType
from uniview.core.version_description import (
    described_columns,
    described_declaration,
    described_primary_key,
    version_description,
)
from uniview.sink.default_values import declared_defaults
from uniview.sink.notify import Notification
from uniview.sink.pending import PendingStore
from uniview.sink.reasons import SKIPPED
from uniview.sink.routing import FirstSeen, KnownVersion, Lookup, RecordKey, RoutingPlan, VersionRoute
from uniview.sink.versioning import SourceColumn, declaration_digest

#: The batch ledger of a landing that keeps one (DuckDB: schema main; BigQuery: the control dataset).
LEDGER_TABLE = "_uniview_batches"


@dataclass(frozen=True)
class BatchKey:
    """One batch of one stream: streams are named by their checkpoint directory."""

    stream: str
    batch_id: int

    @property
    def label(self) -> str:
        return f"{self.stream}#{self.batch_id}"


@dataclass
class BatchCounts:
    """What a batch did: rows read, rows written per version table, rows quarantined per reason, and
    messages skipped per kind (tombstones: no change in them, stored nowhere)."""

    read: int = 0
    written: Counter = field(default_factory=Counter)
    quarantined: Counter = field(default_factory=Counter)
    created: list[Notification] = field(default_factory=list)
    replayed: bool = False
    skipped: Counter = field(default_factory=Counter)
    #: The range of `_cdc_ingested_at` the batch stamped its rows with (ISO 8601 text), when known.
    ingested: tuple[str, str] | None = None

    def families(self) -> dict[str, list[str]]:
        """{family: the datasets} of the version tables the batch wrote rows to."""
        found: dict[str, set[str]] = {}
        for qualified, rows in self.written.items():
            dataset, _, table = qualified.partition(".")
            parts = split_version_table(table)
            if rows and parts is not None:
                found.setdefault(parts[0], set()).add(dataset)
        return {family: sorted(datasets) for family, datasets in sorted(found.items())}

    def landed_notifications(self, key: BatchKey, refreshed: Collection[Notification] = ()) -> list[Notification]:
        """What the batch announces: per family it wrote rows to, one `landed` notification (with every
        dataset it wrote the family to, and its ingestion range), leaving out the datasets whose family a
        version announcement of `refreshed` (delivered after the batch committed) brings up to date already:
        its refresh maintains `<table>_current` with every batch not applied yet, this one included."""
        low, high = self.ingested or (None, None)
        batch = LandedBatch(key.stream, key.batch_id, low, high)
        covered = {(n.dataset, n.table) for n in refreshed if n.landed is None and n.table is not None}
        families = {
            family: [dataset for dataset in datasets if (dataset, family) not in covered]
            for family, datasets in self.families().items()
        }
        return [
            notification
            for family, datasets in families.items()
            if datasets
            for notification in Notification.of_batch(datasets, family, batch)
        ]

    @property
    def total_written(self) -> int:
        return sum(self.written.values())

    @property
    def total_quarantined(self) -> int:
        return sum(self.quarantined.values())

    @property
    def total_skipped(self) -> int:
        return sum(self.skipped.values())

    @property
    def balanced(self) -> bool:
        return self.read == self.total_written + self.total_quarantined + self.total_skipped

    def count_reason(self, reason: str, rows: int) -> None:
        """Rows that carry `reason`: skipped (tombstones) or quarantined."""
        (self.skipped if reason in SKIPPED else self.quarantined)[reason] += rows

    def add(self, other: BatchCounts) -> None:
        self.read += other.read
        self.written.update(other.written)
        self.quarantined.update(other.quarantined)
        self.skipped.update(other.skipped)
        self.created.extend(other.created)

    def to_json(self) -> str:
        return json.dumps(
            {
                "read": self.read,
                "written": dict(self.written),
                "quarantined": dict(self.quarantined),
                "skipped": dict(self.skipped),
                "created": [n.as_record() for n in self.created],
                **({"ingested": list(self.ingested)} if self.ingested else {}),
            },
            ensure_ascii=False,
            sort_keys=True,
        )

    @classmethod
    def from_json(cls, text: str, replayed: bool = False) -> BatchCounts:
        data = json.loads(text)
        return cls(
            data["read"],
            Counter(data["written"]),
            Counter(data["quarantined"]),
            [Notification.from_record(n) for n in data["created"]],
            replayed,
            Counter(data.get("skipped", {})),
            tuple(data["ingested"]) if data.get("ingested") else None,
        )


#: Plans the routes of a batch from its routing keys (each with when the batch first saw it) and the versions
#: that exist (`lookup`): uniview.sink.routing.plan_routes with the run's options.
Router = Callable[[Mapping[RecordKey, FirstSeen], Lookup], RoutingPlan]


@dataclass(frozen=True)
class LineBatch:
    """One batch as its lines, which the landing routes and types in its load step.
    `frame` holds `value` (the record's text), `source_file`, `_bytes` (frames.LINE_BYTES), and, when
    `rewritten`, `_original_line` (the line as read, which the quarantine keeps); for a landing with
    `max_line_bytes`, the lines are bounded (frames.bounded_lines).  `route` plans the routing keys the landing
    reads; rows that reach no dataset are quarantined in `fallback_dataset`."""

    key: BatchKey
    frame: DataFrame
    rewritten: bool
    route: Router
    fallback_dataset: str
    notify: bool


class Landing(ABC):
    """A warehouse as the sink sees it: it is given each batch as its lines (`land_lines`)."""

    url: str
    pending: PendingStore
    #: The largest line this warehouse's quarantine keeps (None: any); a larger line is quarantined as too_large.
    max_line_bytes: int | None = None

    @abstractmethod
    def known_versions(self, tables: Collection[tuple[str, str]]) -> Mapping[tuple[str, str], KnownVersion]:
        """{(dataset, version table): KnownVersion} for those of `tables` that exist."""

    @abstractmethod
    def landed(self, key: BatchKey) -> BatchCounts | None:
        """The counts of `key` if it was landed before (only landings with a ledger know)."""

    @abstractmethod
    def land_lines(self, batch: LineBatch) -> BatchCounts:
        """Route, type and judge the lines in the load step; create missing version tables, write rows and
        quarantine, record new tables as pending notifications when `batch.notify`; return exact counts."""

    def interrupt(self) -> None:  # noqa: B027 (a hook: a landing that cannot stop a batch keeps this no-op)
        """Stop the batch being landed, from another thread, if the landing can (nothing is written then);
        a landing that cannot lets it complete."""

    def close(self) -> None:  # noqa: B027 (a hook: a landing that keeps no connection keeps this no-op)
        """Release resources (no connection is kept between calls)."""


def source_schema_comment(route: VersionRoute) -> str:
    """The description a version table is created with (uniview.core.version_description)."""
    return version_description(
        route.table,
        [(c.name, c.declared_type) for c in route.columns],
        route.primary_key,
        declared_defaults(route.columns),
        [c.name for c in route.columns if not c.nullable],
        declaration_digest(route.columns),
    )


def known_version(description: str | None, columns: Sequence[tuple[str, BQType]]) -> KnownVersion:
    """An existing version table as routing needs it, from its description and all its columns."""
    return KnownVersion(
        source_columns_from_comment(description),
        tuple((name, bq_type) for name, bq_type in columns if not name.lower().startswith(CDC_PREFIX)),
        described_primary_key(description),
        tuple(layout_blocking_columns([name for name, _ in columns])),
        declaration=described_declaration(description),
    )


def source_columns_from_comment(comment: str | None) -> tuple[SourceColumn, ...] | None:
    """The declared source columns a version table's description records, or None."""
    recorded = described_columns(comment)
    return None if recorded is None else tuple(SourceColumn(name, declared) for name, declared in recorded)
