"""Consolidation while a streaming sink appends to the versions being folded, with a reader checking
the view throughout: at every read each landed row is in exactly one table, the view shows the rows
of the tables it reads once each, folded tables stay empty, and nothing landed ever disappears; at
the end every input row is in the view exactly once."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest
from consolidation_support import DATASET, VIEWS, consolidate_args, family_tables, refresh_args, table_rows, uniview
from sink_support import record, write_ndjson

from uniview.warehouse.duckdb_connection import open_connection
from uniview.warehouse.url import duckdb_url

pytestmark = pytest.mark.spark
SCHEMAS = 6
FILES = 12
ROWS_PER_SCHEMA = 2


def schema(k: int) -> list[tuple[str, str]]:
    return [
        ("id", "int(11)"),
        ("name", "varchar(20)"),
        ("amount", "int(11)" if k % 2 else "varchar(10)"),
        (f"c{k}", "int(11)"),
    ]


def write_input(directory: Path) -> set[int]:
    """FILES files, each with ROWS_PER_SCHEMA rows of every schema; the ids written."""
    ids = set()
    for f in range(FILES):
        rows = []
        for k in range(SCHEMAS):
            for r in range(ROWS_PER_SCHEMA):
                n = (f * SCHEMAS + k) * ROWS_PER_SCHEMA + r
                amount = n * 7 if k % 2 else str(n * 7)
                rows.append(record("customer", {"id": n, "name": f"n{n}", "amount": amount, f"c{k}": k}, schema(k)))
                ids.add(n)
        write_ndjson(directory / f"part-{f:03d}.json", rows)
    return ids


@dataclass
class Snapshot:
    tables: dict[str, list[tuple]]
    view: list[tuple]
    view_sql: str
    retired: set[str]

    def referenced(self, table: str) -> bool:
        return re.search(rf"\b{re.escape(table)}\b", self.view_sql) is not None


def read_snapshot(path: Path) -> Snapshot | None:
    """The family's tables, its view and the registry, read in one read-only snapshot."""
    with open_connection(path, read_only=True, lock_timeout=60) as connection:
        tables = {table: table_rows(connection, table) for table in family_tables(connection)}
        views = connection.execute("SELECT sql FROM duckdb_views() WHERE schema_name = ?", [VIEWS]).fetchall()
        if not views:
            return None
        view = connection.execute(f"SELECT id, name, CAST(amount AS VARCHAR) FROM {VIEWS}.customer_unified").fetchall()
        has_registry = connection.execute(
            "SELECT count(*) FROM duckdb_tables() WHERE table_name = '_uniview_folds'"
        ).fetchone()[0]
        retired = (
            {
                row[0]
                for row in connection.execute(
                    "SELECT version_table FROM main._uniview_folds WHERE state <> 'planned'"
                ).fetchall()
            }
            if has_registry
            else set()
        )
    return Snapshot(tables, view, " ".join(sql for (sql,) in views), retired)


def check(snapshot: Snapshot, landed_before: set) -> set:
    """The invariants of one read; the rows landed so far."""
    landed = Counter(row for rows in snapshot.tables.values() for row in rows)
    assert max(landed.values(), default=1) == 1, "a row is in two tables"
    assert not [t for t in snapshot.retired if snapshot.tables.get(t)], "a folded table holds rows"
    in_view = Counter(snapshot.view)
    assert max(in_view.values(), default=1) == 1, "the view shows a row twice"
    read_by_view = Counter(row for table, rows in snapshot.tables.items() if snapshot.referenced(table) for row in rows)
    assert in_view == read_by_view, "the view's checksum differs from the tables it reads"
    unannounced = [t for t, rows in snapshot.tables.items() if rows and not snapshot.referenced(t)]
    assert not [t for t in unannounced if "_v_consolidated" in t], "rows moved to a table the view does not read"
    assert landed_before <= set(landed), "a landed row disappeared"
    return set(landed)


class Consolidator(threading.Thread):
    """`uniview consolidate --apply` then `uniview refresh` (the function's part), over and over."""

    def __init__(self, path: Path, sink: subprocess.Popen) -> None:
        super().__init__(daemon=True)
        self.path, self.sink = path, sink
        self.moved_while_sink_ran = 0
        self.failures: list[str] = []
        self.stop = threading.Event()

    def family_landed(self) -> bool:
        if not self.path.exists():
            return False
        with open_connection(self.path, read_only=True, lock_timeout=60) as connection:
            return bool(family_tables(connection))

    def run(self) -> None:
        while not self.stop.is_set() and not self.family_landed():
            time.sleep(0.2)  # the sink's first batch creates the family
        while not self.stop.is_set():
            done = uniview(*consolidate_args(self.path, "--idle-for", "0s", "--max-versions", "3", "--apply", "--json"))
            if done.returncode == 0:
                moved = json.loads(done.stdout)["families"][0]["moved_rows"]
                if self.sink.poll() is None:
                    self.moved_while_sink_ran += moved
            else:
                self.failures.append(done.stderr)
            refreshed = uniview(*refresh_args(self.path))
            if refreshed.returncode != 0:
                self.failures.append(refreshed.stderr)


def test_consolidation_beside_a_streaming_sink_loses_and_doubles_nothing(tmp_path):
    ids = write_input(tmp_path / "input")
    path = tmp_path / "warehouse.duckdb"
    command = [
        sys.executable,
        "-m",
        "uniview.sink",
        "--input",
        str(tmp_path / "input"),
        "--warehouse",
        duckdb_url(path),
        "--stream",
        "--checkpoint",
        str(tmp_path / "checkpoint"),
        "--available-now",
        "--max-files-per-trigger",
        "1",
        "--master",
        "local[1]",
        "--dataset",
        DATASET,
        "--notify",
        "none",
    ]
    with open(tmp_path / "sink.log", "wb") as log:
        sink = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    consolidator = Consolidator(path, sink)
    consolidator.start()
    landed, reads = set(), 0
    try:
        deadline = time.monotonic() + 240
        while sink.poll() is None and time.monotonic() < deadline:
            snapshot = read_snapshot(path) if path.exists() else None
            if snapshot is not None:
                landed, reads = check(snapshot, landed), reads + 1
            time.sleep(0.2)
        assert sink.wait(timeout=30) == 0, (tmp_path / "sink.log").read_text()[-3000:]
    finally:
        consolidator.stop.set()
        consolidator.join(timeout=120)
        if sink.poll() is None:
            sink.kill()
    assert not consolidator.failures, consolidator.failures[0]
    assert uniview(*consolidate_args(path, "--idle-for", "0s", "--max-versions", "3", "--apply")).returncode == 0
    assert uniview(*refresh_args(path)).returncode == 0
    final = read_snapshot(path)
    check(final, landed)
    assert sorted(row[0] for row in final.view) == sorted(ids)  # every input row, once
    print(
        f"reads={reads} moved_while_sink_ran={consolidator.moved_while_sink_ran} tables={sorted(final.tables)} retired={len(final.retired)}"
    )
    assert reads >= 5 and consolidator.moved_while_sink_ran > 0
    successors = [
        t for t in final.tables if not t.startswith("customer_v_consolidated") and len(t) == len("customer_v_") + 9
    ]
    assert successors or any(len(t) == len("customer_v_") + 9 for t in final.retired), (
        "the sink never landed rows of a folded version under its successor"
    )
