"""Random change histories of one family, landed in a DuckDB file in the sink's landing layout.

A `History` lands, step by step, what sources send: inserts, updates, deletes, snapshot rows,
truncates, changes of an older log position arriving late, the same change delivered twice, values
a source did not send (named in `_cdc_unavailable`), keys that are NULL, changes without a log
position, and new versions that drop a column, add one with a declared default or NOT NULL without
one, and change a column's type (INT64 -> STRING and back); three source databases move to new
versions at different times.  Everything is drawn from one seeded `random.Random`.  `History(...,
versions=RENAMED_AND_READDED)` goes on with a declared rename of a carried column (`RENAMES`) and a column
dropped and added again with nothing written in between (appended last, as PostgreSQL does).

A primary-key UPDATE lands as a delete of the old key and a create of the new one at one log position, the
create leaving carried values out (PostgreSQL's unchanged TOASTed values) more often than not; one of the two
is sometimes held back to the next step (another Kafka partition's batch), in either order.

`_cdc_ingested_at` advances by two hours a step; some rows are stamped half an hour before the
previous step's newest, as a landing that committed late would.  Each step is recorded as the sink
records a batch, in its ledger (`main._uniview_batches`): the tables it wrote to and the exact range of
`_cdc_ingested_at` it stamped, which is how a maintenance finds the rows of a batch that committed late.
"""

from __future__ import annotations

import datetime as dt
import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from uniview.core.landing_layout import CDC_COLUMNS
from uniview.core.renames import Rename
from uniview.core.schema import Column, TableVersion
from uniview.core.types import parse_type
from uniview.core.version_description import version_description
from uniview.sink.sequence import sequence_of
from uniview.warehouse.duckdb_types import duckdb_type

FAMILY = "item"
DATASET = "cdc"
DATABASES = ("db1", "db2", "db3")
T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
_STRING = "STRING"


@dataclass(frozen=True)
class Version:
    name: str
    columns: tuple[tuple[str, str], ...]
    defaults: dict[str, Any] = field(default_factory=dict)
    not_null: tuple[str, ...] = ()

    @property
    def table(self) -> str:
        return f"{FAMILY}_v_{self.name}"

    def type_of(self, column: str) -> str | None:
        return dict(self.columns).get(column)


VERSIONS = (
    Version("a1", (("id", "INT64"), ("name", _STRING), ("qty", "INT64"), ("note", _STRING), ("tags", "ARRAY<STRING>"))),
    # qty becomes STRING; status and score appear with declared defaults
    Version(
        "b2",
        (
            ("id", "INT64"),
            ("name", _STRING),
            ("qty", _STRING),
            ("note", _STRING),
            ("tags", "ARRAY<STRING>"),
            ("status", _STRING),
            ("score", "INT64"),
        ),
        {"status": "open", "score": 5},
    ),
    # note is dropped; flag appears NOT NULL without a default the stream carried
    Version(
        "c3",
        (
            ("id", "INT64"),
            ("name", _STRING),
            ("qty", _STRING),
            ("tags", "ARRAY<STRING>"),
            ("status", _STRING),
            ("score", "INT64"),
            ("flag", "BOOL"),
        ),
        {"status": "open", "score": 5},
        ("flag",),
    ),
    # note comes back with a default, qty is INT64 again, tags are dropped: no new unified column or type
    Version(
        "d4",
        (
            ("id", "INT64"),
            ("name", _STRING),
            ("qty", "INT64"),
            ("note", _STRING),
            ("status", _STRING),
            ("score", "INT64"),
            ("flag", "BOOL"),
        ),
        {"status": "open", "score": 5, "note": "n/a"},
        ("flag",),
    ),
)


#: The carried column `name` renamed `title` (declared: RENAMES), then qty dropped and added again at the end
#: with a default, with nothing written in between: a version of its own only by its column order.
_LATER = (("title", _STRING), ("note", _STRING), ("status", _STRING), ("score", "INT64"), ("flag", "BOOL"))
RENAMED_AND_READDED = (
    *VERSIONS,
    Version("e5", (("id", "INT64"), _LATER[0], ("qty", "INT64"), *_LATER[1:]), VERSIONS[3].defaults, ("flag",)),
    Version("f6", (("id", "INT64"), *_LATER, ("qty", "INT64")), {**VERSIONS[3].defaults, "qty": 1}, ("flag",)),
)
RENAMES = (Rename(FAMILY, "name", "title"),)


def table_versions(versions: tuple[Version, ...] = VERSIONS) -> list[TableVersion]:
    """`versions` as the planner reads them from the catalog: with the CDC columns, the key, defaults, NOT NULL."""
    found = []
    for number, version in enumerate(versions):
        columns = tuple(Column(name, parse_type(t)) for name, t in (*version.columns, *CDC_COLUMNS))
        defaults = tuple((name, json.dumps(value)) for name, value in version.defaults.items())
        found.append(
            TableVersion(version.table, FAMILY, version.name, number, columns, ("id",), defaults, version.not_null)
        )
    return found


class History:
    """One family's landing tables in `path`, grown by `step()`, its versions taken in order from `versions`."""

    def __init__(
        self,
        path: Path,
        seed: int,
        keys: int = 8,
        versions: tuple[Version, ...] = VERSIONS,
        move_chance: float = 0.2,
        key_changes: float = 0.12,
    ) -> None:
        self.path = path
        self.key_changes = key_changes  # per change, of a primary-key UPDATE instead (0: the maintenance path only)
        self.versions = versions
        self.move_chance = move_chance  # per step and database, of moving to the next version
        self.random = random.Random(seed)
        self.keys = keys
        self.step_number = 0
        self.created: set[str] = set()
        self.version_of = dict.fromkeys(DATABASES, 0)  # each database's newest version (index)
        self.position = dict.fromkeys(DATABASES, 0)
        self.used: dict[str, set[int]] = {db: set() for db in DATABASES}
        self.landed: list[tuple[str, dict[str, Any]]] = []  # (table, row) for duplicates
        self.unsequenced = 0
        self.newest_ingested = T0
        self.held: list[tuple[str, dict[str, Any]]] = []  # half of a key change, landed with the next step

    # --------------------------------------------------------------- one step

    def step(self) -> int:
        """Land one batch of changes; the number of rows landed."""
        self.step_number += 1
        self._maybe_move_versions()
        now = T0 + dt.timedelta(hours=2 * self.step_number)
        batch = [(table, {**row, "_cdc_ingested_at": now - dt.timedelta(seconds=1)}) for table, row in self.held]
        self.held = []
        for number in range(self.random.randint(3, 14)):
            database = self.random.choice(DATABASES)
            stamp = now + dt.timedelta(seconds=number)
            if self.random.random() < 0.15 and self.step_number > 1:  # a landing that committed late
                stamp = self.newest_ingested - dt.timedelta(minutes=30) + dt.timedelta(seconds=number)
            if self.random.random() < self.key_changes:
                batch.extend(self._key_change(database, stamp))
            else:
                batch.append(self._change(database, stamp))
        for database in DATABASES:
            if self.random.random() < 0.06:
                batch.append(self._truncate(database, now + dt.timedelta(minutes=5)))
        for _ in range(self.random.randint(0, 2)):  # the same change delivered again
            if self.landed:
                table, row = self.random.choice(self.landed)
                batch.append((table, {**row, "_cdc_ingested_at": now + dt.timedelta(minutes=7)}))
        self._land(batch)
        self.newest_ingested = max([self.newest_ingested, *(row["_cdc_ingested_at"] for _, row in batch)])
        return len(batch)

    def _maybe_move_versions(self) -> None:
        for database in DATABASES:
            at = self.version_of[database]
            if at + 1 < len(self.versions) and self.random.random() < self.move_chance:
                self.version_of[database] = at + 1

    def _change(self, database: str, stamp: dt.datetime) -> tuple[str, dict[str, Any]]:
        version = self.versions[self.version_of[database]]
        if self.random.random() < 0.15 and self.version_of[database] > 0:  # an older version still written
            version = self.versions[self.random.randrange(self.version_of[database])]
        operation = self.random.choices(["INSERT", "UPDATE", "DELETE", "SNAPSHOT"], [3, 6, 2, 1])[0]
        key = None if self.random.random() < 0.05 else self.random.randrange(self.keys)
        row: dict[str, Any] = {"id": key}
        for column, bq_type in version.columns[1:]:
            row[column] = self._value(column, bq_type)
        unavailable = []
        if operation == "UPDATE" and self.random.random() < 0.35:
            for column, bq_type in version.columns[1:]:
                if (bq_type == _STRING or bq_type.startswith("ARRAY")) and self.random.random() < 0.5:
                    unavailable.append(column)
                    row[column] = None
        row.update(self._cdc(database, operation, stamp))
        row["_cdc_unavailable"] = unavailable or None
        return version.table, row

    def _key_change(self, database: str, stamp: dt.datetime) -> list[tuple[str, dict[str, Any]]]:
        """A primary-key UPDATE: the old key's delete and the new key's create at one position; the half of it
        held back, if any, lands with the next step."""
        table, delete = self._change(database, stamp)
        old, new = self.random.sample(range(self.keys), 2)
        version = next(v for v in self.versions if v.table == table)
        delete.update({"id": old, "_cdc_operation": "DELETE", "_cdc_unavailable": None})
        delete.update(dict.fromkeys((c for c, _ in version.columns[1:] if c != "flag"), None))
        create = {**delete, "id": new, "_cdc_operation": "INSERT"}
        left_out = []
        for column, bq_type in version.columns[1:]:
            create[column] = self._value(column, bq_type)
            if (bq_type == _STRING or bq_type.startswith("ARRAY")) and self.random.random() < 0.7:
                left_out.append(column)
                create[column] = None
        create["_cdc_unavailable"] = left_out or None
        halves = [(table, delete), (table, create)]
        if self.random.random() < 0.3:
            self.held.append(halves.pop(self.random.randrange(2)))
        return halves

    def _truncate(self, database: str, stamp: dt.datetime) -> tuple[str, dict[str, Any]]:
        version = self.versions[self.version_of[database]]
        row: dict[str, Any] = dict.fromkeys((c for c, _ in version.columns), None)
        if "flag" in row:
            row["flag"] = False
        row.update(self._cdc(database, "TRUNCATE", stamp))
        return version.table, row

    def _cdc(self, database: str, operation: str, stamp: dt.datetime) -> dict[str, Any]:
        if self.random.random() < 0.05:  # no log position: sorts before every sequenced change
            self.unsequenced += 1
            position = f"no-position-{self.unsequenced}"
            moment = T0 + dt.timedelta(microseconds=self.unsequenced)
        else:
            position_number = self._position(database)
            position = f"mysql-bin.{1 + position_number // 1000:06d}:{position_number % 1000}"
            moment = T0 + dt.timedelta(milliseconds=position_number)
        return {
            "_cdc_ingestion_method": "BINLOG",
            "_cdc_operation": operation,
            "_cdc_position": position,
            "_cdc_timestamp": moment,
            "_cdc_ingested_at": stamp,
            "_cdc_database": database,
            "_cdc_sequence": sequence_of(position),
        }

    def _position(self, database: str) -> int:
        used = self.used[database]
        if used and self.random.random() < 0.15:  # a change of an older position, arriving late
            below = self.random.randrange(max(1, self.position[database] - 30), self.position[database] + 1)
            while below in used:
                below -= 1
            if below > 0:
                used.add(below)
                return below
        self.position[database] += self.random.choice([7, 10, 13, 997])
        used.add(self.position[database])
        return self.position[database]

    def _value(self, column: str, bq_type: str) -> Any:
        pick = self.random.random()
        if column == "flag":
            return pick < 0.5
        if pick < 0.12:
            return None
        if bq_type == "INT64":
            return self.random.randrange(-5, 100)
        if bq_type.startswith("ARRAY"):
            return [self.random.choice("xyz") for _ in range(self.random.randrange(3))]
        return self.random.choice(["a", "b", "c", "", "d e", "é", "o'k", "x\\y"]) + str(self.random.randrange(9))

    # --------------------------------------------------------------- landing

    def _land(self, batch: list[tuple[str, dict[str, Any]]]) -> None:
        with duckdb.connect(str(self.path)) as connection:
            connection.execute("SET TimeZone='UTC'")
            connection.execute(f"CREATE SCHEMA IF NOT EXISTS {DATASET}")
            for table, row in batch:
                version = next(v for v in self.versions if v.table == table)
                self._create(connection, version)
                names = [c for c, _ in version.columns] + [c for c, _ in CDC_COLUMNS]
                connection.execute(
                    f"INSERT INTO {DATASET}.{table} ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})",
                    [row.get(name) for name in names],
                )
                self.landed.append((table, row))
            record_batch(connection, self.step_number, batch)

    def _create(self, connection: duckdb.DuckDBPyConnection, version: Version) -> None:
        if version.table in self.created:
            return
        columns = list(version.columns) + list(CDC_COLUMNS)
        definitions = ", ".join(f'"{c}" {duckdb_type(parse_type(t))}' for c, t in columns)
        connection.execute(f"CREATE TABLE {DATASET}.{version.table} ({definitions})")
        description = version_description(
            FAMILY, [(c, t.lower()) for c, t in version.columns], ("id",), version.defaults, version.not_null
        )
        connection.execute(f"COMMENT ON TABLE {DATASET}.{version.table} IS '" + description.replace("'", "''") + "'")
        self.created.add(version.table)


def record_batch(connection: duckdb.DuckDBPyConnection, batch_id: int, batch: list[tuple[str, dict[str, Any]]]) -> None:
    """Record `batch` in the sink's ledger as the DuckDB landing does: its tables and its ingestion range."""
    stamps = [row["_cdc_ingested_at"] for _, row in batch]
    written: dict[str, int] = {}
    for table, _ in batch:
        written[f"{DATASET}.{table}"] = written.get(f"{DATASET}.{table}", 0) + 1
    counts = {"written": written, "ingested": [min(stamps).isoformat(), max(stamps).isoformat()]} if batch else {}
    connection.execute(
        "CREATE TABLE IF NOT EXISTS main._uniview_batches (stream VARCHAR, batch_id BIGINT, read BIGINT, "
        "written BIGINT, quarantined BIGINT, counts VARCHAR, landed_at TIMESTAMP WITH TIME ZONE, "
        "PRIMARY KEY (stream, batch_id))"
    )
    connection.execute(
        "INSERT INTO main._uniview_batches VALUES ('history', ?, ?, ?, 0, ?, ?)",
        [batch_id, len(batch), len(batch), json.dumps(counts), dt.datetime.now(dt.UTC)],
    )
