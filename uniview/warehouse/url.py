"""Warehouse URLs, SQLAlchemy style, parsed in one place: `WarehouseURL.parse(text)`.

duckdb:///demo.duckdb is relative to the working directory, duckdb:////tmp/demo.duckdb absolute;
bigquery://PROJECT is a Google Cloud project.  `str(url)` gives the text back.  The CLI, the Cloud
Function, the sink and both landings all parse through here; `uniview.warehouse.open_warehouse` opens one.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

from uniview.core.errors import ConfigError, UniviewError
from uniview.core.identifiers import validate_project

DUCKDB = "duckdb"
BIGQUERY = "bigquery"
_DUCKDB_PREFIX = "duckdb:///"
_EXPECTED = "expected duckdb:///path/to/file.duckdb (relative), duckdb:////abs/path.duckdb or bigquery://PROJECT"


@dataclass(frozen=True)
class WarehouseURL:
    """A parsed warehouse URL: `kind` is duckdb or bigquery, `location` the file path or the project."""

    kind: str
    location: str

    @classmethod
    def parse(cls, text: object, setting: str = "warehouse URL") -> WarehouseURL:
        """Parse `text`; ConfigError naming `setting` (a flag or a variable) when it is not a warehouse URL."""
        if not isinstance(text, str) or not text:
            raise ConfigError(f"{setting} is required: {_EXPECTED}")
        parsed = urlparse(text)
        if parsed.scheme == DUCKDB and text.startswith(_DUCKDB_PREFIX) and len(text) > len(_DUCKDB_PREFIX):
            return cls(DUCKDB, text[len(_DUCKDB_PREFIX) :])
        if parsed.scheme == BIGQUERY and parsed.netloc and parsed.path in ("", "/") and not parsed.query:
            try:
                return cls(BIGQUERY, validate_project(parsed.netloc))
            except UniviewError as error:
                raise ConfigError(f"invalid {setting} {text!r}: {error}") from None
        raise ConfigError(f"invalid {setting} {text!r}: {_EXPECTED}")

    @classmethod
    def for_duckdb(cls, path: str | Path) -> WarehouseURL:
        return cls(DUCKDB, str(path))

    @property
    def is_duckdb(self) -> bool:
        return self.kind == DUCKDB

    def __str__(self) -> str:
        return f"{_DUCKDB_PREFIX}{self.location}" if self.is_duckdb else f"{BIGQUERY}://{self.location}"


def duckdb_url(path: str | Path) -> str:
    """The warehouse URL of a DuckDB file: duckdb_url('/tmp/x.duckdb') == 'duckdb:////tmp/x.duckdb'."""
    return str(WarehouseURL.for_duckdb(path))
