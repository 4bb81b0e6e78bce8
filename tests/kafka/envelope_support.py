"""The generative migration test's draws written as uniview's own envelope, as a binlog reader would write them
(docs/sink.md#record-format), landed by `uniview sink --format uniview` into a DuckDB warehouse of their own.

A MariaDB statement that changes rows publishes one record per changed row: the table's declared schema as
`information_schema.columns` shows it after the statement (types, defaults, nullability), the full row image read
back from the source (the row before a DELETE, after an INSERT or UPDATE), and a position that sorts as the
binary log's does.  A row an UPDATE leaves as it was publishes nothing, as in the binary log; a TRUNCATE publishes
one TRUNCATE record; a DDL statement publishes nothing (the schema travels with the next row's record).
"""

from __future__ import annotations

import base64
import contextlib
import datetime as dt
import io
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb
from cdc_e2e_support import (
    Landing,
    as_doubles,
    as_shown,
    duckdb_landing,
    quarantined_records,
    unheld_keys,
    unknown_accepted,
)

from uniview.warehouse.duckdb_connection import quote_identifier
from uniview.warehouse.url import duckdb_url

#: A default information_schema shows as a constant: a quoted string or a number.  Anything else (now(),
#: current_timestamp(6), an expression) is computed by the source: `default_volatile`.
_NUMBER = re.compile(r"-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_BITS = re.compile(r"b'[01]+'")


@dataclass(frozen=True)
class SourceColumn:
    """A column as `information_schema.columns` declares it."""

    name: str
    column_type: str
    default: str | None
    nullable: bool

    def schema_entry(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"name": self.name, "type": self.column_type}
        if not self.nullable:
            entry["nullable"] = False
        if self.default is None or self.default == "NULL":
            return entry
        if _BITS.fullmatch(self.default):  # a BIT's default, b'101': the number a binlog reader writes
            entry["default"] = int(self.default[2:-1], 2)
        elif self.default.startswith("'") and self.default.endswith("'"):
            entry["default"] = self.default[1:-1].replace("''", "'").replace("\\\\", "\\")
        elif _NUMBER.fullmatch(self.default):
            entry["default"] = int(self.default) if self.default.lstrip("-").isdigit() else self.default
        else:
            entry["default_volatile"] = True
        return entry


def bits_as_numbers(row: dict[str, Any], schema: Sequence[SourceColumn]) -> dict[str, Any]:
    """`row` ({column: value}) with each BIT value, which the driver reads as its bytes, as the number a binlog
    reader writes (the envelope declares `bit(n)` an INT64, docs/sink.md)."""
    bits = {column.name for column in schema if column.column_type.startswith("bit(")}
    return {
        name: int.from_bytes(value, "big") if name in bits and isinstance(value, bytes) else value
        for name, value in row.items()
    }


def envelope_value(value: Any) -> Any:
    """A value of a row image as a binlog reader writes it in JSON."""
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(bytes(value)).decode()
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat(sep=" ") if isinstance(value, dt.datetime) else value.isoformat()
    if isinstance(value, dt.timedelta):
        seconds, micros = divmod(value // dt.timedelta(microseconds=1), 1_000_000)
        return f"{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}.{micros:06d}"
    return value


Rows = dict[Any, dict[str, Any]]


@dataclass
class EnvelopeLog:
    """The records of one source database's changes, in log order; `pending` those not landed yet."""

    database: str
    pending: list[dict] = field(default_factory=list)
    position: int = 0
    landed: dict[str, int] = field(default_factory=dict)
    #: The keys each table's records wrote since the last check (`take_rewritten`).
    rewritten: dict[str, set] = field(default_factory=dict)

    def record(self, table: str, operation: str, data: dict, schema: list[SourceColumn]) -> None:
        self.position += 1
        metadata = {
            "ingestion_method": "BINLOG",
            "database_name": self.database,
            "table_name": table,
            "schema": [column.schema_entry() for column in schema],
            "primary_key": ["id"],
            "operation": operation,
            "position": f"genlog.000001:{self.position}",
            "timestamp": (dt.datetime(2026, 1, 1) + dt.timedelta(seconds=self.position)).isoformat() + "Z",
        }
        data = bits_as_numbers(data, schema)
        self.pending.append({"data": {name: envelope_value(v) for name, v in data.items()}, "metadata": metadata})
        self.landed[table] = self.landed.get(table, 0) + 1
        if "id" in data:
            self.rewritten.setdefault(table, set()).add(data["id"])

    def take_rewritten(self, table: str) -> set:
        """The keys of `table` written by a record since the last call."""
        return self.rewritten.pop(table, set())

    def changes(self, table: str, before: Rows, after: Rows, schema: list[SourceColumn]) -> int:
        """Record the rows a statement changed (`before` and `after`: the table's rows by key); how many."""
        count = 0
        for key in sorted(before.keys() - after.keys()):
            self.record(table, "DELETE", before[key], schema)
            count += 1
        for key in sorted(after.keys()):
            if key not in before:
                self.record(table, "INSERT", after[key], schema)
            elif after[key] != before[key]:
                self.record(table, "UPDATE", after[key], schema)
            else:
                continue
            count += 1
        return count

    def truncate(self, table: str, schema: list[SourceColumn]) -> None:
        self.record(table, "TRUNCATE", {}, schema)

    def write(self, path: Path) -> Path | None:
        """The pending records as one NDJSON file (None when there are none); they are no longer pending."""
        if not self.pending:
            return None
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(record, ensure_ascii=False) + "\n" for record in self.pending))
        self.pending.clear()
        return path


@dataclass
class EnvelopeSink:
    """`uniview sink --format uniview` run on each batch of pending records (batch mode, one file per batch), into
    its own DuckDB warehouse, refreshing the views inline with `--current <current>` and the declared renames."""

    folder: Path
    current: str
    log: EnvelopeLog
    batches: int = 0
    #: The last batch's records quarantined, by reason (docs/bad-records.md).
    quarantined: dict[str, int] = field(default_factory=dict)
    #: The tables whose source held a value outside BigQuery's domains at some check (cdc_e2e_support.OutsideBigQuery).
    held_back: set[str] = field(default_factory=set)
    #: Per table, the keys whose last record was quarantined for such a value: `<table>_current` keeps the row's
    #: last landed state until a record of the key lands, even once a type change makes the source's value fit.
    held_keys: dict[str, set] = field(default_factory=dict)
    #: Per table, the records quarantined under its earlier names less those quarantined under its name before it
    #: had it (an earlier table's): the changes sent as the table that its `<table>_unified` does not hold.
    carried_quarantine: dict[str, int] = field(default_factory=dict)

    @property
    def landing(self) -> Landing:
        return duckdb_landing(self.warehouse)

    @property
    def warehouse(self) -> Path:
        return self.folder / "envelope.duckdb"

    def arguments(self, batch: Path, renames: list[dict[str, str]]) -> list[str]:
        arguments = ["sink", "--format", "uniview", "--input", str(batch), "--warehouse", duckdb_url(self.warehouse)]
        arguments += ["--dataset-per-database"]
        arguments += ["--notify", "inline", "--policy", "widen", "--current", self.current, "--json"]
        if renames:
            document = batch.parent / "renames.json"
            document.write_text(json.dumps({"uniview_renames": 1, "renames": renames}))
            arguments += ["--renames", str(document)]
        return arguments

    def moved(self, old: str, new: str) -> bool:
        """Table `old` is called `new` now (a declared table rename carries its changes): what is known of its records
        is the new name's.  Whether any record of `old` landed."""
        landed = self.log.landed.pop(old, 0)
        self.log.landed[new] = self.log.landed.get(new, 0) + landed
        self.held_keys[new] = self.held_keys.pop(old, set())
        self.log.rewritten[new] = self.log.rewritten.pop(old, set())
        if old in self.held_back:
            self.held_back.add(new)
        before = earlier = 0
        if self.warehouse.exists():  # nothing landed yet: nothing quarantined
            landing = self.landing
            with landing.reading():
                before, earlier = (len(quarantined_records(landing, self.log.database, name)) for name in (old, new))
        self.carried_quarantine[new] = self.carried_quarantine.pop(old, 0) + before - earlier
        return bool(landed)

    def land(self, renames: list[dict[str, str]]) -> None:
        """Land the pending records (in the active Spark session, which `uniview sink` uses when there is one)."""
        from uniview.cli.main import main

        batch = self.log.write(self.folder / f"batch-{self.batches}" / "records.json")
        if batch is None:
            return
        self.batches += 1
        summary = io.StringIO()
        with contextlib.redirect_stdout(summary):  # the test's thread prints nothing meanwhile
            main.main(self.arguments(batch, list(renames)), standalone_mode=False)
        self.quarantined = json.loads(summary.getvalue())["quarantined_by_reason"]

    def differences(
        self,
        table: str,
        columns: list[str],
        expected: list[tuple],
        normalize: Any,
        unknown: dict | None = None,
        doubles: set[str] | None = None,
    ) -> list:
        """What differs between `expected` (the source's rows) and `<table>_current`, and the changes
        `<table>_unified` holds against the records sent; `unknown`: the cells uniview may not know
        ({key: {column: how}}, cdc_e2e_support.unknown_accepted)."""
        if not self.log.landed.get(table) and not expected:
            return []
        unheld = (self.held_keys.get(table, set()) - self.log.take_rewritten(table)) | unheld_keys(expected)
        self.held_keys[table] = unheld  # rows whose last record held a value outside BigQuery's domains
        if unheld:
            self.held_back.add(table)
        dataset = f"{self.log.database}_unified"
        with duckdb.connect(str(self.warehouse), read_only=True) as connection:
            connection.execute("SET TimeZone = 'UTC'")
            # a table holding no row is read by its key alone: a column added while it was empty (an online
            # migration's swap of an empty table) reaches the views with the first record that carries it
            listed = ", ".join(quote_identifier(column) for column in (columns if expected else columns[:1]))
            current = quote_identifier(f"{table}_current")
            select = f"SELECT {listed}, _cdc_unavailable FROM {dataset}.{current} ORDER BY id"
            shown = connection.execute(select).fetchall()
            current = normalize([row[:-1] for row in shown])
            expected = unknown_accepted(expected, current, [row[-1] for row in shown], columns, unknown or {})
            current = [row for row in current if row[0] not in unheld]
            unified = quote_identifier(f"{table}_unified")
            (changes,) = connection.execute(f"SELECT count(*) FROM {dataset}.{unified}").fetchone() or (0,)
        carried = self.carried_quarantine.get(table)
        held_back = table in self.held_back or carried is not None
        reasons = quarantined_records(self.landing, self.log.database, table) if held_back else []
        expected = as_doubles(expected, columns, doubles or set())
        current = as_doubles(current, columns, doubles or set())
        expected = as_shown([row for row in expected if row[0] not in unheld], current)
        found: list = [("envelope: quarantined", reasons)] if set(reasons) - {"type_mismatch"} else []
        if current != expected:
            found.append(("envelope: current rows", current, expected))
        if changes + len(reasons) + (carried or 0) != self.log.landed.get(table, 0):
            found.append(("envelope: changes", changes, self.log.landed.get(table, 0) - (carried or 0)))
        if found and self.quarantined:
            found.append(("envelope: quarantined in the last batch", self.quarantined))
        return found
