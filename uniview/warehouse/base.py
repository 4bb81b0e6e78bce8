"""The interface every warehouse implements: read column metadata, read stored views, apply changes.

SQL handed to a warehouse is always BigQuery SQL (the canonical form); a backend for another
engine translates it.  A view's fingerprint is the SHA-256 of its canonical BigQuery body, so
"does the stored view already match?" is answered the same way on every backend.
"""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from collections.abc import Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING

from uniview.core.errors import WarehouseError
from uniview.core.schema import ColumnRecord, TableListing, table_listings

if TYPE_CHECKING:
    from uniview.current.table import CurrentTablePlan


def fingerprint(view_body: str) -> str:
    """SHA-256 hex digest of a view's canonical BigQuery SQL body."""
    return hashlib.sha256(view_body.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class ViewChange:
    """Create-or-replace (body is the BigQuery SELECT) or drop (body is None) one view."""

    dataset: str
    name: str
    body: str | None

    @property
    def is_drop(self) -> bool:
        return self.body is None


@dataclass(frozen=True)
class Applied:
    """What `apply` did: the ids of the jobs it ran, and the family's version tables as listed right after
    the last change (None when no re-check was asked for)."""

    jobs: list[str]
    version_tables: frozenset[str] | None = None


@dataclass(frozen=True)
class CurrentTableResult:
    """What `maintain_current_table` did to one family's `<table>_current` table (uniview.current.table):
    `action` is "create", "rebuild", "re-present" or "maintain"; `changes_read` the rows of the window
    (changes since the watermark, less the lag); `databases_presented` the databases whose every row was
    presented again (-1: not counted, on BigQuery by a build or a maintenance: a query of its own); `rows` the table's rows after; `jobs` the ids of the jobs run."""

    action: str
    changes_read: int = 0
    databases_presented: int = 0
    rows: int | None = None
    jobs: tuple[str, ...] = ()


class Warehouse(ABC):
    """A place holding version tables (source datasets) and unified views (target datasets)."""

    #: Text shown to users, e.g. "duckdb:///tmp/demo.duckdb" or "bigquery://my-project".
    url: str

    @abstractmethod
    def read_columns(
        self,
        dataset: str,
        families: Collection[str] | None = None,
        required_tables: Collection[str] = (),
    ) -> list[ColumnRecord]:
        """Column metadata of the version tables in `dataset` (of `families` only, if given).

        Types are BigQuery data_type strings.  Every table in `required_tables` must be in
        the result: a backend whose metadata can lag confirms them another way or retries;
        a table that truly does not exist raises NotFoundError.
        Raises NotFoundError when the dataset does not exist.
        """

    def read_table_listings(
        self,
        dataset: str,
        families: Collection[str] | None = None,
        required_tables: Collection[str] = (),
    ) -> list[TableListing]:
        """read_columns grouped by table (uniview.core.schema.table_listings); a backend that reads its catalog
        table by table lists them directly."""
        return table_listings(self.read_columns(dataset, families, required_tables))

    @abstractmethod
    def read_primary_keys(self, dataset: str, tables: Collection[str]) -> dict[str, tuple[str, ...] | None]:
        """{table: the primary key its description records, or None} for the version `tables` of `dataset`."""

    def read_ddl_renames(self, dataset: str) -> list[tuple[str | None, str | None, str | None]]:
        """(_cdc_database, _cdc_sequence, ddl) of every row of the control table `_uniview_ddl`
        (uniview.core.ddl_renames) in `dataset`; [] when it has none."""
        return []

    def read_descriptions(self, dataset: str, tables: Collection[str]) -> dict[str, str | None] | None:
        """{table: its description text, or None} for the version `tables` of `dataset`, or None when this
        warehouse does not read them (then only read_primary_keys is used)."""
        return None

    @abstractmethod
    def read_view_fingerprints(self, dataset: str, name_prefix: str) -> dict[str, str]:
        """{view name: fingerprint} of the views in `dataset` whose name starts with `name_prefix`.

        A missing dataset is an empty result.  A view uniview did not write may map to any
        fingerprint that differs from every body uniview renders.
        """

    @abstractmethod
    def apply(self, changes: list[ViewChange], recheck: tuple[str, str] | None = None) -> Applied:
        """Apply `changes` in order, all or nothing where the engine allows it; each statement leaves a
        queryable state where it does not (the caller orders them blue-green).

        Creates a missing target dataset first.  With `recheck=(dataset, family)`, the family's version
        tables are listed again after the last change (on BigQuery in the same job).
        Raises TransientWarehouseError for failures a retry may fix, WarehouseError otherwise.
        """

    @abstractmethod
    def add_columns(self, dataset: str, additions: dict[str, list[tuple[str, str]]]) -> list[str]:
        """Append NULLable columns (name, BigQuery type) to tables of `dataset`, all or nothing where the
        engine allows it; the ids of the jobs run."""

    def current_table_action(self, plan: CurrentTablePlan, rebuild: bool = False) -> str:
        """What maintain_current_table would do now ("create", "rebuild", "re-present", "maintain"), read
        from the stored table's description and the state tables (CurrentTablePlan.action); changes nothing."""
        raise WarehouseError(f"{self.url}: keeping <table>_current as a table is not supported here yet")

    def maintain_current_table(self, plan: CurrentTablePlan, rebuild: bool = False) -> CurrentTableResult:
        """Create, rebuild or incrementally maintain `plan`'s `<table>_current` table (uniview.current.table):
        the statements of the plan's action, the maintenance in ONE transaction, retried whole on
        transient conflicts; `rebuild` builds state and table from every change.  A view of that name
        (from --current) is replaced by the table.  Every backend that keeps current tables overrides this
        (it is not abstract so that a backend without them still opens)."""
        raise WarehouseError(f"{self.url}: keeping <table>_current as a table is not supported here yet")

    def applied_batch(self, plan: CurrentTablePlan, stream: str, batch_id: int) -> bool:
        """Whether `plan`'s current table has applied the sink's batch (stream, batch_id): a fact row of its state
        table (CurrentTablePlan.state_table) records it.  False where the table or its state does not exist."""
        return False

    def close(self) -> None:  # noqa: B027 (a hook: a warehouse that holds no connection keeps this no-op)
        """Release connections."""

    def __enter__(self) -> Warehouse:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
