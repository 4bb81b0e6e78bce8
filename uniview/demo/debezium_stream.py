"""The demo's Debezium table: `accounts` from two MySQL source databases, as Debezium's MySQL connector
writes change events (JsonConverter, `schemas.enable=true`), saved the way `kcat -C -J` prints Kafka
messages (one JSON object per line with the message key and value as text).

Inserts, updates, a delete and a re-insert per database, and a schema change half-way (a `plan`
ENUM column is added), so the table has two versions, a history and a different current state in
each database.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

TABLE = "accounts"
DATABASES = ("tenant1", "tenant2")
_DECIMAL = {
    "type": "bytes",
    "optional": True,
    "name": "org.apache.kafka.connect.data.Decimal",
    "version": 1,
    "parameters": {"scale": "2", "connect.decimal.precision": "10"},
    "field": "balance",
}
_V1 = [
    {"type": "int32", "optional": False, "field": "id"},
    {"type": "string", "optional": True, "field": "email"},
    _DECIMAL,
    {"type": "int64", "optional": True, "name": "io.debezium.time.Timestamp", "version": 1, "field": "created_at"},
]
_V2 = [
    *_V1,
    {
        "type": "string",
        "optional": True,
        "name": "io.debezium.data.Enum",
        "version": 1,
        "parameters": {"allowed": "free,pro"},
        "field": "plan",
    },
]
#: (database, op, id, email, balance in cents, plan or None for version 1)
CHANGES = (
    ("tenant1", "c", 1, "ann@example.com", 1050, None),
    ("tenant1", "c", 2, "bob@example.com", 0, None),
    ("tenant2", "c", 1, "eve@example.org", 99999, None),
    ("tenant1", "u", 1, "ann@example.com", 2075, None),
    ("tenant1", "d", 2, "bob@example.com", 0, None),
    ("tenant2", "c", 2, "max@example.org", 500, None),
    ("tenant1", "c", 3, "cy@example.com", 1200, "pro"),
    ("tenant1", "c", 2, "bob@example.com", 100, "free"),
    ("tenant2", "u", 1, "eve@example.org", 100000, "pro"),
    ("tenant2", "d", 2, "max@example.org", 500, "free"),
)


def _decimal(cents: int) -> str:
    return base64.b64encode(cents.to_bytes(8, "big", signed=True).lstrip(b"\x00") or b"\x00").decode()


def _event(database: str, op: str, row: dict, fields: list[dict], position: int, at: int) -> dict:
    envelope = [
        {
            "type": "struct",
            "fields": fields,
            "optional": True,
            "name": f"{database}.{database}.{TABLE}.Value",
            "field": name,
        }
        for name in ("before", "after")
    ]
    envelope += [
        {
            "type": "struct",
            "optional": False,
            "name": "io.debezium.connector.mysql.Source",
            "field": "source",
            "fields": [{"type": "string", "field": name} for name in ("connector", "db", "table", "file")]
            + [{"type": "int64", "field": "pos"}, {"type": "int32", "field": "row"}],
        },
        {"type": "string", "optional": False, "field": "op"},
        {"type": "int64", "optional": True, "field": "ts_ms"},
    ]
    source = {
        "version": "3.0.8.Final",
        "connector": "mysql",
        "name": database,
        "ts_ms": at,
        "db": database,
        "table": TABLE,
        "server_id": 223344,
        "file": "mysql-bin.000003",
        "pos": position,
        "row": 0,
    }
    payload = {
        "before": row if op in "ud" else None,
        "after": None if op == "d" else row,
        "source": source,
        "op": op,
        "ts_ms": at + 7,
    }
    return {
        "schema": {
            "type": "struct",
            "fields": envelope,
            "optional": False,
            "name": f"{database}.{database}.{TABLE}.Envelope",
        },
        "payload": payload,
    }


def _key(database: str, key: int) -> dict:
    return {
        "schema": {
            "type": "struct",
            "fields": [{"type": "int32", "optional": False, "field": "id"}],
            "optional": False,
            "name": f"{database}.{database}.{TABLE}.Key",
        },
        "payload": {"id": key},
    }


def messages() -> Iterator[dict]:
    """Each change as `kcat -C -J` prints a Kafka message: key and value as JSON text."""
    start = int(datetime(2024, 5, 1, 9, tzinfo=UTC).timestamp() * 1000)
    offsets = dict.fromkeys(DATABASES, 0)
    for number, (database, op, key, email, cents, plan) in enumerate(CHANGES):
        at = start + number * 60_000
        row = {"id": key, "email": email, "balance": _decimal(cents), "created_at": start}
        fields = _V1 if plan is None else _V2
        if plan is not None:
            row["plan"] = plan
        value = _event(database, op, row, fields, 154 + number * 321, at)
        topic = f"{database}.{database}.{TABLE}"
        yield {
            "topic": topic,
            "partition": 0,
            "offset": offsets[database],
            "tstype": "create",
            "ts": at,
            "broker": 1,
            "key": json.dumps(_key(database, key)),
            "payload": json.dumps(value),
        }
        offsets[database] += 1


def write_debezium_stream(directory: Path) -> tuple[Path, int]:
    """Write the messages as one file; (path, line count)."""
    directory.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(message) for message in messages()]
    path = directory / f"{TABLE}.kcat.json"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path, len(lines)
