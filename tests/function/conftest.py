"""Servers and DuckDB files for the Cloud Function tests: the Pub/Sub emulator once per session,
functions-framework per test module (it starts in well under a second)."""

from __future__ import annotations

import json
import time

import duckdb
import pytest

from uniview.local.pubsub_emulator import find_emulator_jar, pubsub_emulator


@pytest.fixture(scope="session")
def pubsub_host(tmp_path_factory):
    """ "127.0.0.1:PORT" of a running Pub/Sub emulator."""
    if find_emulator_jar() is None:
        pytest.skip("Pub/Sub emulator not installed (apt package google-cloud-cli-pubsub-emulator)")
    with pubsub_emulator(tmp_path_factory.mktemp("pubsub-emulator")) as host:
        yield host


def run_duckdb(path, *statements):
    """Run statements on a DuckDB file read-write, waiting while another process holds its lock."""
    deadline = time.monotonic() + 30
    while True:
        try:
            with duckdb.connect(str(path)) as connection:
                for statement in statements:
                    connection.execute(statement)
                return
        except duckdb.IOException:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def query_duckdb(path, sql, parameters=()):
    """Rows of `sql` from a DuckDB file opened read-only (and closed at once); retried while locked."""
    deadline = time.monotonic() + 30
    while True:
        try:
            with duckdb.connect(str(path), read_only=True) as connection:
                return connection.execute(sql, list(parameters)).fetchall()
        except duckdb.IOException:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def views_in(path):
    return sorted(
        f"{schema}.{name}"
        for schema, name in query_duckdb(
            path, "SELECT schema_name, view_name FROM duckdb_views() WHERE NOT internal AND NOT temporary"
        )
    )


def log_lines(log_path):
    """The structured (JSON) lines of a function's log file."""
    lines = []
    for line in log_path.read_text(encoding="utf-8", errors="replace").splitlines():
        if line.startswith("{"):
            try:
                lines.append(json.loads(line))
            except ValueError:
                continue
    return lines


@pytest.fixture
def duckdb_tools():
    """run(path, *sql), query(path, sql), views(path), logs(log_path) for DuckDB files and function logs."""

    class Tools:
        run = staticmethod(run_duckdb)
        query = staticmethod(query_duckdb)
        views = staticmethod(views_in)
        logs = staticmethod(log_lines)

    return Tools
