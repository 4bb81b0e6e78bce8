"""Open a warehouse from its URL, SQLAlchemy style.

duckdb:///demo.duckdb is relative to the working directory, duckdb:////tmp/demo.duckdb absolute;
bigquery://PROJECT is a Google Cloud project.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlparse

from uniview.errors import ConfigError
from uniview.warehouse.base import Warehouse


def open_warehouse(url: str) -> Warehouse:
    """Return a connected Warehouse for `url`; ConfigError for an unknown or malformed URL."""
    parsed = urlparse(url or "")
    if parsed.scheme == "duckdb":
        from uniview.warehouse.duckdb import DuckDBWarehouse

        path = url[len("duckdb:///"):] if url.startswith("duckdb:///") else ""
        if not path:
            raise ConfigError(
                f"invalid warehouse URL {url!r}: expected duckdb:///relative/file.duckdb "
                "or duckdb:////absolute/file.duckdb"
            )
        return DuckDBWarehouse(path)
    if parsed.scheme == "bigquery":
        from uniview.warehouse.bigquery import BigQueryWarehouse

        if not parsed.netloc or parsed.path not in ("", "/"):
            raise ConfigError(f"invalid warehouse URL {url!r}: expected bigquery://PROJECT")
        return BigQueryWarehouse(parsed.netloc)
    raise ConfigError(
        f"invalid warehouse URL {url!r}: expected duckdb:///path/to/file.duckdb or bigquery://PROJECT"
    )


def duckdb_url(path: str | Path) -> str:
    """The warehouse URL of a DuckDB file: duckdb_url('/tmp/x.duckdb') == 'duckdb:////tmp/x.duckdb'."""
    return "duckdb:///" + str(path)
