"""`uniview migrate-landing --partition` on BigQuery: the version tables and the quarantine an earlier release
created unpartitioned, rewritten into today's layout (landing_layout: partitioned by `_cdc_ingested_at`,
clustered by `_cdc_database` and the key) under the same name.

BigQuery cannot partition a table that exists.  Each table is copied into `<name>__uniview_relayout`, created
with the same schema (types, parameters, column descriptions), description and labels plus the layout; the
row counts are compared; then the original is dropped and the copy renamed to its name.  Run it with the sink
stopped: a row landing during the copy would be lost, so a table whose count changed is left as it was.  A
run cut short is finished by the next: a copy whose original is gone is renamed, a copy beside its original
is dropped and made again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from uniview.core.errors import WarehouseError
from uniview.core.identifiers import quote, quote_path
from uniview.core.landing_layout import CDC_PREFIX, QUARANTINE_TABLE, TableLayout, quarantine_layout, table_layout
from uniview.core.schema import split_version_table
from uniview.core.types import Scalar
from uniview.core.version_description import described_primary_key
from uniview.warehouse.bigquery import BigQueryWarehouse
from uniview.warehouse.bigquery_schema import field_type

#: The copy's name: the original's, with this suffix.
COPY_SUFFIX = "__uniview_relayout"


@dataclass(frozen=True)
class Relayout:
    """One table to bring to `layout`; `resume` when only the copy is left (rename it)."""

    table: str
    layout: TableLayout
    resume: bool = False

    def describe(self) -> str:
        if self.resume:
            return f"{self.table}: rename {self.table}{COPY_SUFFIX}, copied before a run was cut short"
        layout = self.layout
        return f"{self.table}: partition by {layout.partition_column} ({layout.granularity})" + (
            f", cluster by {', '.join(layout.clustering)}" if layout.clustering else ""
        )


def target_layout(table: Any, granularity: str) -> TableLayout | None:
    """The layout an unpartitioned sink table (a google Table) should have; None when it is partitioned
    already or not the sink's (no CDC column; a version table without `_cdc_ingested_at` is migrated first)."""
    if table.time_partitioning is not None or table.range_partitioning is not None:
        return None
    columns = [(field.name, field_type(field)) for field in table.schema]
    if table.table_id == QUARANTINE_TABLE:
        layout = quarantine_layout(granularity)
        return layout if (layout.partition_column, Scalar("TIMESTAMP")) in columns else None
    if not split_version_table(table.table_id) or not any(n.lower().startswith(CDC_PREFIX) for n, _ in columns):
        return None
    layout = table_layout(columns, described_primary_key(table.description), granularity)
    return layout if layout.partition_column else None


def copy_resource(table: Any, layout: TableLayout) -> dict[str, Any]:
    """The tables.insert body of the copy: the original's schema, description and labels, and `layout`."""
    original = table.to_api_repr()
    reference = original["tableReference"]
    resource: dict[str, Any] = {
        "tableReference": {**reference, "tableId": reference["tableId"] + COPY_SUFFIX},
        "schema": original["schema"],
        **layout.api_resource(),
    }
    for key in ("description", "labels"):
        if original.get(key):
            resource[key] = original[key]
    return resource


class BigQueryRelayout:
    """The I/O of the rewrite in one dataset."""

    def __init__(self, warehouse: BigQueryWarehouse) -> None:
        self.warehouse = warehouse
        self.client = warehouse.client

    def plan(self, dataset: str, granularity: str) -> list[Relayout]:
        """The tables of `dataset` to rewrite (tables.list, then tables.get of each candidate), and the copies
        a run cut short left without their original."""
        names = self.warehouse._call(
            f"list the tables of {dataset}",
            lambda: {t.table_id for t in self.client.list_tables(f"{self.warehouse.project}.{dataset}", retry=None)},
        )
        plan = [
            Relayout(name[: -len(COPY_SUFFIX)], _copy_layout(self._get(dataset, name)), resume=True)
            for name in sorted(names)
            if name.endswith(COPY_SUFFIX) and name[: -len(COPY_SUFFIX)] not in names
        ]
        for name in sorted(names):
            if name == QUARANTINE_TABLE or (split_version_table(name) and not name.endswith(COPY_SUFFIX)):
                layout = target_layout(self._get(dataset, name), granularity)
                if layout is not None:
                    plan.append(Relayout(name, layout))
        return plan

    def apply(self, dataset: str, item: Relayout) -> int:
        """Rewrite one table (or finish its rename); the rows it holds."""
        copy = item.table + COPY_SUFFIX
        if not item.resume:
            original = self._get(dataset, item.table)
            self.warehouse.delete_table(dataset, copy)  # left by a run cut short before the swap
            from google.cloud import bigquery

            definition = bigquery.Table.from_api_repr(copy_resource(original, item.layout))
            self.warehouse._call(f"create {dataset}.{copy}", lambda: self.client.create_table(definition))
            self.warehouse.run_script(
                f"copy {dataset}.{item.table}",
                f"INSERT INTO {quote_path(self.warehouse.project, dataset, copy)} "
                f"SELECT * FROM {quote_path(self.warehouse.project, dataset, item.table)}",
            )
            before, after = self._counts(dataset, item.table, copy)
            if before != after:
                self.warehouse.delete_table(dataset, copy)
                raise WarehouseError(
                    f"{dataset}.{item.table} changed while it was copied ({before} rows, {after} copied): it is "
                    "left as it was; stop the sink, then run `uniview migrate-landing --partition --apply` again"
                )
            self.warehouse.delete_table(dataset, item.table)
        self.warehouse.run_script(
            f"rename {dataset}.{copy}",
            f"ALTER TABLE {quote_path(self.warehouse.project, dataset, copy)} RENAME TO {quote(item.table)}",
        )
        return self._counts(dataset, item.table, item.table)[0]

    def _counts(self, dataset: str, first: str, second: str) -> tuple[int, int]:
        project = self.warehouse.project
        (row,) = self.warehouse.run_query(
            f"count the rows of {dataset}.{first}",
            f"SELECT (SELECT COUNT(*) FROM {quote_path(project, dataset, first)}) AS a, "
            f"(SELECT COUNT(*) FROM {quote_path(project, dataset, second)}) AS b",
        )
        return row["a"], row["b"]

    def _get(self, dataset: str, table: str) -> Any:
        return self.warehouse._get_table(dataset, table)


def _copy_layout(copy: Any) -> TableLayout:
    """The layout a copy was created with (what a resumed rewrite reports)."""
    partitioning, clustering = copy.time_partitioning, copy.clustering_fields
    return TableLayout(
        partitioning and partitioning.field, partitioning.type_ if partitioning else "DAY", tuple(clustering or ())
    )


def migrate_partitioning(
    warehouse: BigQueryWarehouse, dataset: str, granularity: str, apply: bool, echo: Callable[[str], None]
) -> list[Relayout]:
    """`uniview migrate-landing --partition`: print each table to rewrite, and rewrite them with `apply`."""
    relayout = BigQueryRelayout(warehouse)
    plan = relayout.plan(dataset, granularity)
    for item in plan:
        echo(f"{dataset}.{item.describe()}")
    if not plan:
        echo(f"every version table and quarantine in {dataset} is partitioned")
    elif apply:
        rows = sum(relayout.apply(dataset, item) for item in plan)
        echo(f"rewrote {len(plan)} table(s), {rows} rows, in the partitioned layout")
    else:
        echo(f"{len(plan)} table(s) to rewrite; stop the sink, then run again with --apply")
    return plan
