"""Shared code of the sink tests: binlog records, NDJSON files, DuckDB reads, an HTTP endpoint for notifications."""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import duckdb

from uniview.sink.versioning import SourceColumn, compute_version


def record(
    table: str,
    data: dict | None,
    schema: list[tuple[str, str]] | None = None,
    *,
    database: str = "shop",
    version: str | None = None,
    **metadata: object,
) -> dict:
    """One binlog record as a reader emits it."""
    meta: dict = {"ingestion_method": "BINLOG", "database_name": database, "table_name": table, **metadata}
    if schema is not None:
        meta["schema"] = [{"name": name, "type": declared} for name, declared in schema]
    if version is not None:
        meta["table_version"] = version
    return {"data": data, "metadata": meta}


def write_ndjson(path: Path, lines: Iterable[dict | str]) -> Path:
    """Write records (dicts) and raw lines (strings) as one NDJSON file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "\n".join(line if isinstance(line, str) else json.dumps(line, ensure_ascii=False) for line in lines)
    path.write_text(text + "\n", encoding="utf-8")
    return path


def query(path: Path, sql: str, parameters: list | None = None) -> list[tuple]:
    with duckdb.connect(str(path), read_only=True) as connection:
        connection.execute("SET TimeZone='UTC'")
        return connection.execute(sql, parameters or []).fetchall()


def columns_of(path: Path, dataset: str, table: str) -> list[tuple[str, str]]:
    return [
        tuple(row)
        for row in query(
            path,
            "SELECT column_name, data_type FROM duckdb_columns() WHERE schema_name = ? AND table_name = ? "
            "ORDER BY column_index",
            [dataset, table],
        )
    ]


def tables_of(path: Path, dataset: str) -> list[str]:
    return [
        row[0]
        for row in query(
            path, "SELECT table_name FROM duckdb_tables() WHERE schema_name = ? ORDER BY table_name", [dataset]
        )
    ]


class Endpoint:
    """A local HTTP endpoint recording POST bodies; answers the queued statuses, then 204."""

    def __init__(self, statuses=()):
        self.bodies, self.statuses = [], list(statuses)
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                endpoint.bodies.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
                self.send_response(endpoint.statuses.pop(0) if endpoint.statuses else 204)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def data(self):
        return [base64.b64decode(body["message"]["data"]) for body in self.bodies]

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def version_table(table: str, schema: list[tuple[str, str]]) -> str:
    """The version table `table`'s records of `schema` land in."""
    return f"{table}_v_{compute_version(table, [SourceColumn(n, t) for n, t in schema])}"
