"""A dataset with a family in every state `uniview status` tells apart, written with the landing's
own layout (uniview.core.landing_layout) so the reads run on what the sink writes."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import duckdb

from uniview.core.landing_layout import CDC_COLUMNS
from uniview.core.types import parse_type
from uniview.warehouse.duckdb_types import duckdb_type

NOW = datetime.now(UTC).replace(microsecond=0)
#: Columns of the family near the columns limit: 8,500 of BigQuery's 10,000 with the CDC columns.
WIDE_COLUMNS = 8_500 - len(CDC_COLUMNS)
#: Versions of the family over the tables-per-query limit: 991 tables and the view, over 990.
OVER_VERSIONS = 991


@dataclass(frozen=True)
class Table:
    name: str
    columns: tuple[tuple[str, str], ...]  # BigQuery types, CDC columns excluded
    rows: tuple[tuple[str, datetime], ...] = ()  # (_cdc_database, _cdc_ingested_at)


def ago(**span: float) -> datetime:
    return NOW - timedelta(**span)


def elapsed() -> timedelta:
    """How long ago the scenario's NOW was: a freshness read now is older than its span by this much."""
    return datetime.now(UTC) - NOW


def assert_freshness(seconds: float, span: timedelta, before: timedelta, after: timedelta) -> None:
    """`seconds` is the age of a row written `span` before NOW, read between `before` and `after` past NOW."""
    assert (span + before).total_seconds() - 1 <= seconds <= (span + after).total_seconds() + 1


ID = (("id", "INT64"),)

#: family -> (tables refreshed before the status, tables landed after the refresh)
FAMILIES: dict[str, tuple[list[Table], list[Table]]] = {
    "customer": ([Table("customer_v_a1", ID, (("db1", ago(minutes=5)), ("db2", ago(minutes=7))))], []),
    "orders": (
        [Table("orders_v_a1", ID, (("db1", ago(hours=5)),))],
        [Table("orders_v_b2", (("id", "STRING"),), (("db2", ago(hours=3)),))],
    ),
    "wide": (
        [Table("wide_v_a1", tuple((f"c{i}", "INT64") for i in range(WIDE_COLUMNS)), (("db1", ago(minutes=1)),))],
        [],
    ),
    "legacy": ([Table("legacy_v_a1", ID, (("db9", ago(days=3)),))], []),
    "payments": ([Table("payments_v_a1", ID, (("db1", ago(minutes=2)),))], []),
    "invoices": ([Table("invoices_v_a1", ID, (("db1", ago(minutes=2)),))], []),
}
#: quarantined lines that name no family (table_name, reason, when): the `(no family)` row of `uniview status`
FAMILYLESS = [
    (None, "missing_metadata", ago(hours=1)),
    ("", "missing_metadata", ago(hours=5)),
    (None, "unparseable", ago(hours=3)),
    (None, "unparseable", ago(days=2)),
    (None, "unparseable", ago(days=3)),
]
#: Their counts by reason, 24 hours and 7 days, as `uniview status --json` gives them.
FAMILYLESS_COUNTS = {"missing_metadata": {"24h": 2, "7d": 2}, "unparseable": {"24h": 1, "7d": 3}}
#: quarantined (table_name, reason, when)
QUARANTINE = [
    ("payments", "type_mismatch", ago(hours=1)),
    ("payments", "type_mismatch", ago(hours=2)),
    ("payments", "unparseable", ago(days=5)),
    ("payments", "unparseable", ago(days=9)),  # older than a week: not counted
    # lines that name no family: the sink leaves table_name NULL (not JSON, no metadata object) or as the
    # record gave it, empty (a metadata.table_name of "")
    *FAMILYLESS,
]
#: pending notifications (table, version, since)
PENDING = [("invoices", "b7", ago(hours=2))]


def over_limit_tables() -> list[Table]:
    return [Table(f"hub_v_h{i:04d}", ID, (("db1", ago(minutes=30)),) if i == 0 else ()) for i in range(OVER_VERSIONS)]


DATASET = "cdc"


def create_duckdb(connection: duckdb.DuckDBPyConnection, tables: list[Table]) -> None:
    for table in tables:
        columns = [*table.columns, *CDC_COLUMNS]
        definitions = ", ".join(f'"{name}" {duckdb_type(parse_type(bq))}' for name, bq in columns)
        connection.execute(f'CREATE TABLE {DATASET}."{table.name}" ({definitions})')
        for database, ingested in table.rows:
            connection.execute(
                f'INSERT INTO {DATASET}."{table.name}" ("_cdc_database", "_cdc_ingested_at") VALUES (?, ?)',
                [database, ingested],
            )
