"""Which status reads serve a warehouse: one module that knows every engine's, so the reads' contract
(uniview.warehouse.status_reads) and each engine's implementation never import each other back."""

from __future__ import annotations

from uniview.warehouse.base import Warehouse
from uniview.warehouse.bigquery import BigQueryWarehouse
from uniview.warehouse.duckdb import DuckDBWarehouse
from uniview.warehouse.status_bigquery import BigQueryStatusReads
from uniview.warehouse.status_duckdb import DuckDBStatusReads
from uniview.warehouse.status_reads import StatusReads


def status_reads(warehouse: Warehouse) -> StatusReads:
    """The reads for `warehouse`'s engine."""
    if isinstance(warehouse, DuckDBWarehouse):
        return DuckDBStatusReads(warehouse)
    if isinstance(warehouse, BigQueryWarehouse):
        return BigQueryStatusReads(warehouse)
    raise TypeError(f"no status reads for {type(warehouse).__name__}")
