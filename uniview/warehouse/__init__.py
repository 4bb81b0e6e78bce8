"""Warehouses uniview reads metadata from and writes views to."""

from uniview.warehouse.base import ViewChange, Warehouse
from uniview.warehouse.url import open_warehouse

__all__ = ["ViewChange", "Warehouse", "open_warehouse"]
