"""Benchmark: `<table>_current` kept as a table on DuckDB, whole processes, as ratios measured in the same run.

A family of two versions (amount INT64, then STRING; a column added) holds KEYS keys, each changed
CHANGES times (a short history), and the same keys changed 10 x CHANGES times (a long history), in
two files.  After `uniview refresh --current table` built the table, each repeat lands 1% of the keys
changed once more, two hours later, and times two whole processes, in alternating order:

- the maintenance: `uniview refresh --current table` (what a deployed function or a cron job runs:
  imports, the catalog read, the plan, the window since the watermark, the merges, one transaction),
  against a baseline that does the same essential work and nothing else: a Python process that opens
  the DuckDB file and runs CREATE TEMP TABLE AS SELECT of just those changed rows through the unified
  view (WHERE _cdc_ingested_at >= the batch's stamp): goal <= 2x;
- the same, with a backfill of BACKFILL changes landed (and maintained by a refresh) just before: goal
  <= 2x (each maintenance reads exactly what it has not applied, so the backfill is not read again);
- the maintenance process on the long history against the short one: goal <= 1.2x;
- in process, a full scan of the table against a plain table holding the same rows: goal <= 1.1x,
  and the same full scan of today's current view, for comparison.

Every ratio is the median of the repeats' ratios of processes run back to back (these machines are
noisy); each maintenance is checked to have read exactly the changes landed (from its stderr line).

Usage: python -m bench.bench_current_table [--keys 100000] [--changes 5] [--repeats 5] [--backfill 300000]
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import duckdb

from bench.results_file import write_results
from uniview.core.landing_layout import CDC_COLUMNS
from uniview.core.types import parse_type
from uniview.core.version_description import version_description
from uniview.ops.refresh import RefreshRequest, refresh
from uniview.planning.plan import GeneratorOptions
from uniview.warehouse.duckdb import DuckDBWarehouse
from uniview.warehouse.duckdb_types import duckdb_type

FAMILY = "orders"
VERSIONS = (
    ("orders_v_a1", [("id", "INT64"), ("amount", "INT64"), ("note", "STRING")]),
    ("orders_v_b2", [("id", "INT64"), ("amount", "STRING"), ("note", "STRING"), ("status", "STRING")]),
)
SCAN = "SELECT count(*), count(DISTINCT id), max(length(note)), max(amount), max(status), max(_cdc_ingested_at) FROM {source}"
_START = "TIMESTAMPTZ '2025-01-01 00:00:00+00'"


def _rows(table: str, first: int, count: int, keys: int, hours: float) -> str:
    """`count` changes numbered from `first` (key = number % keys), made one a millisecond, landed from `hours`
    after the start one every ten seconds; the first version has no status."""
    status = ", 'open'" if table.endswith("b2") else ""
    amount = "CAST(i AS VARCHAR)" if table.endswith("b2") else "i"
    return (
        f"SELECT i % {keys}, {amount}, 'note ' || i{status}, 'BINLOG',"
        f" CASE WHEN i < {keys} THEN 'INSERT' ELSE 'UPDATE' END, 'pos-' || i, {_START} + to_milliseconds(i),"
        f" {_START} + to_microseconds(CAST({hours} * 3600e6 AS BIGINT)) + to_seconds(10 * (i - {first})),"
        f" 'db1', lpad(CAST(i AS VARCHAR), 20, '0'), NULL FROM range({first}, {first + count}) AS r(i)"
    )


def build(path: Path, keys: int, changes: int) -> int:
    """The history: the first half of the changes in the first version, the rest in the second; the
    number of changes landed."""
    total = keys * changes
    with duckdb.connect(str(path)) as connection:
        connection.execute("CREATE SCHEMA cdc")
        for (table, columns), (first, count) in zip(
            VERSIONS, ((0, total // 2), (total // 2, total - total // 2)), strict=True
        ):
            definitions = ", ".join(f'"{c}" {duckdb_type(parse_type(t))}' for c, t in columns + list(CDC_COLUMNS))
            connection.execute(f"CREATE TABLE cdc.{table} ({definitions})")
            description = version_description(FAMILY, columns, ("id",)).replace("'", "''")
            connection.execute(f"COMMENT ON TABLE cdc.{table} IS '{description}'")
            connection.execute(f"INSERT INTO cdc.{table} {_rows(table, first, count, keys, 0)}")
    return total


def land(path: Path, first: int, keys: int, hours: float) -> int:
    """1% of the keys changed once more, `hours` after the start; the number of changes."""
    count = max(1, keys // 100)
    with duckdb.connect(str(path)) as connection:
        step = keys // count
        connection.execute(
            f"INSERT INTO cdc.orders_v_b2 {_rows('orders_v_b2', first, count, keys, hours)}".replace(
                f"i % {keys}", f"(i * {step}) % {keys}"
            )
        )
    return count


def timed(action: Callable[[], object]) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def _scan(connection: duckdb.DuckDBPyConnection, source: str) -> None:
    connection.execute(SCAN.format(source=source)).fetchall()


#: The baseline process: open the file, read the changed rows through the unified view, nothing else.
_READ_CHANGED = (
    "import duckdb, sys; c = duckdb.connect(sys.argv[1]); "
    "c.execute('CREATE TEMP TABLE changed AS SELECT * FROM cdc_unified.orders_unified WHERE _cdc_ingested_at >= ' + sys.argv[2]); "
    "print(c.execute('SELECT count(*) FROM changed').fetchone()[0])"
)
_READ = re.compile(r"orders_current \(table\): (?P<action>[a-z-]+), (?P<changes>[0-9,]+) change\(s\) read")


def timed_process(command: list[str]) -> tuple[float, str, str]:
    """Wall seconds of one whole process, its stdout and its stderr."""
    started = time.perf_counter()
    done = subprocess.run(command, check=True, capture_output=True, text=True)
    return time.perf_counter() - started, done.stdout, done.stderr


class Family:
    """One file: its history, the table built, and what a repeat measures."""

    def __init__(self, folder: Path, name: str, keys: int, changes: int) -> None:
        self.path = folder / f"{name}.duckdb"
        self.keys = keys
        self.landed = build(self.path, keys, changes)
        self.hours = 2 + self.landed / 360  # the history's last change, and two hours more
        request = RefreshRequest("cdc", (FAMILY,), options=GeneratorOptions(current="table"))
        with DuckDBWarehouse(self.path) as warehouse:
            refresh(warehouse, request)
            refresh(warehouse, RefreshRequest("cdc", (FAMILY,), "cdc_view", GeneratorOptions(current="view")))
        uniview = str(Path(sys.executable).with_name("uniview"))
        self.maintain_command = [
            *(uniview, "refresh", "--warehouse", f"duckdb:///{self.path}", "--dataset", "cdc"),
            *("--table", FAMILY, "--current", "table"),
        ]

    def maintain(self) -> tuple[float, int]:
        """Seconds of one `uniview refresh --current table` process, and the changes it read."""
        seconds, _, stderr = timed_process(self.maintain_command)
        found = _READ.search(stderr)
        assert found is not None and found["action"] == "maintain", stderr
        return seconds, int(found["changes"].replace(",", ""))

    def read_changed(self, watermark: str, count: int) -> float:
        """Seconds of the baseline process reading the `count` rows stamped from `watermark` on."""
        seconds, stdout, _ = timed_process([sys.executable, "-c", _READ_CHANGED, str(self.path), watermark])
        assert int(stdout) == count, (stdout, count)
        return seconds

    def backfill(self, count: int) -> int:
        """Land `count` changes at once (a backfill) and maintain the table once (a refresh process); the
        changes it read."""
        with duckdb.connect(str(self.path)) as connection:
            connection.execute(
                f"INSERT INTO cdc.orders_v_b2 {_rows('orders_v_b2', self.landed, count, self.keys, self.hours)}"
            )
        self.landed += count
        self.hours += 4 + count / 360
        return self.maintain()[1]

    def repeat(self, baseline_first: bool) -> tuple[float, float, int]:
        """Land 1% of the keys changed; (seconds of the process reading just them, seconds of the maintenance
        process, changes the maintenance read: exactly these), run in the order given."""
        count = land(self.path, self.landed, self.keys, self.hours)
        watermark = f"{_START} + to_microseconds(CAST({self.hours} * 3600e6 AS BIGINT))"
        self.landed += count
        self.hours += 4  # the next batch
        if baseline_first:
            read = self.read_changed(watermark, count)
            maintain, changes = self.maintain()
        else:
            maintain, changes = self.maintain()
            read = self.read_changed(watermark, count)
        assert changes == count, (changes, count)
        return read, maintain, changes

    def scans(self, repeats: int) -> tuple[float, float, float]:
        """Median seconds of the same full scan over the table, a plain copy of it, and the current view."""
        with duckdb.connect(str(self.path)) as connection:
            connection.execute("CREATE OR REPLACE TABLE cdc.plain AS SELECT * FROM cdc_unified.orders_current")
            connection.execute("CHECKPOINT")  # both tables at rest, as a reader finds them
            sources = ("cdc_unified.orders_current", "cdc.plain", "cdc_view.orders_current")
            times: dict[str, list[float]] = {source: [] for source in sources}
            for _ in range(repeats):
                for source in sources:
                    times[source].append(timed(partial(_scan, connection, source)))
        table, plain, view = (statistics.median(times[source]) for source in sources)
        return table, plain, view


def _ratio(candidates: list[float], baselines: list[float]) -> float:
    return statistics.median(c / b for c, b in zip(candidates, baselines, strict=True))


def measure(keys: int, changes: int, repeats: int, backfill: int) -> dict:
    count = max(1, keys // 100)
    with tempfile.TemporaryDirectory() as folder:
        short = Family(Path(folder), "short", keys, changes)
        long = Family(Path(folder), "long", keys, changes * 10)
        backfilled = Family(Path(folder), "backfilled", keys, changes)
        reads, maintained, maintained_long, backfill_reads, backfill_maintained = [], [], [], [], []
        short.repeat(True), long.repeat(True), backfilled.repeat(True)  # warm-up: file cache, .pyc
        backfill_read = backfilled.backfill(backfill)
        for number in range(repeats):
            first = number % 2 == 0
            read, maintain, read_count = short.repeat(first)
            reads.append(read)
            maintained.append(maintain)
            maintained_long.append(long.repeat(not first)[1])
            after_read, after_maintain, after_count = backfilled.repeat(first)
            assert after_count == count, (after_count, count)  # the backfill is not read again
            backfill_reads.append(after_read)
            backfill_maintained.append(after_maintain)
            backfilled.backfill(backfill)  # the next repeat again follows a backfill landed just before
        table, plain, view = short.scans(repeats)
    return {
        "keys": keys,
        "changes_per_key": changes,
        "history_rows": keys * changes,
        "long_history_rows": keys * changes * 10,
        "changed_per_repeat": count,
        "changes_read_per_repeat": read_count,
        "repeats": repeats,
        "read_changed_process_s": statistics.median(reads),
        "maintain_process_s": statistics.median(maintained),
        "maintain_long_process_s": statistics.median(maintained_long),
        "maintain_vs_read": _ratio(maintained, reads),
        "backfill_rows": backfill,
        "backfill_changes_read": backfill_read,
        "maintain_after_backfill_process_s": statistics.median(backfill_maintained),
        "read_after_backfill_process_s": statistics.median(backfill_reads),
        "after_backfill_vs_read": _ratio(backfill_maintained, backfill_reads),
        "long_vs_short": _ratio(maintained_long, maintained),
        "maintain_times_s": [round(t, 3) for t in maintained],
        "read_times_s": [round(t, 3) for t in reads],
        "maintain_long_times_s": [round(t, 3) for t in maintained_long],
        "maintain_after_backfill_times_s": [round(t, 3) for t in backfill_maintained],
        "read_after_backfill_times_s": [round(t, 3) for t in backfill_reads],
        "scan_table_s": table,
        "scan_plain_s": plain,
        "scan_view_s": view,
        "table_vs_plain": table / plain,
        "view_vs_table": view / table,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", type=int, default=100_000)
    parser.add_argument("--changes", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--backfill", type=int, default=300_000)
    args = parser.parse_args()
    results = measure(args.keys, args.changes, args.repeats, args.backfill)
    path = write_results("current_table", results)
    for name, value in results.items():
        if isinstance(value, list):
            print(f"{name:>34}: {value}")
        else:
            print(f"{name:>34}: {value:.4f}" if isinstance(value, float) else f"{name:>34}: {value:,}")
    print(f"written to {path}")


if __name__ == "__main__":
    main()
