"""Warehouses uniview reads metadata from and writes views to; `open_warehouse(url)` opens one."""

from __future__ import annotations

from uniview.warehouse.base import ViewChange, Warehouse
from uniview.warehouse.url import WarehouseURL

__all__ = ["ViewChange", "Warehouse", "WarehouseURL", "open_warehouse"]


def open_warehouse(url: str | WarehouseURL) -> Warehouse:
    """A connected Warehouse for `url`; ConfigError for an unknown or malformed URL."""
    parsed = url if isinstance(url, WarehouseURL) else WarehouseURL.parse(url)
    if parsed.is_duckdb:
        from uniview.warehouse.duckdb import DuckDBWarehouse

        return DuckDBWarehouse(parsed.location)
    from uniview.warehouse.bigquery import BigQueryWarehouse

    return BigQueryWarehouse(parsed.location)
