"""A realistic CDC stream with schema evolution, as a binlog reader would emit it (NDJSON).

Families and what happens to them:
- customer:  id int -> varchar (INT64 -> STRING), full_name dropped, email added.
- orders:    amount int -> bigint (same INT64), status varchar(20) -> varchar(50),
             then created_at datetime -> timestamp (DATETIME + TIMESTAMP -> TIMESTAMP).
- products:  price dropped, then re-added with another precision.
- shipments: the nested address STRUCT gains a field.
Plus a few malformed lines that the sink must quarantine, never drop.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

FIRST_NAMES = ["Ada", "Grace", "Linus", "Edsger", "Barbara", "Donald", "Margaret", "Ken", "Frances", "Alan"]
LAST_NAMES = [
    "Lovelace",
    "Hopper",
    "Torvalds",
    "Dijkstra",
    "Liskov",
    "Knuth",
    "Hamilton",
    "Thompson",
    "Allen",
    "Turing",
]
STATUSES = ["pending", "paid", "shipped", "delivered", "refunded-after-partial-delivery"]
CITIES = ["Lisbon", "Oslo", "Kyoto", "Austin", "Nairobi", "Montréal"]
EPOCH = datetime(2024, 5, 1, 10, 0, 0, tzinfo=UTC)


@dataclass(frozen=True)
class SchemaVersion:
    """One declared source schema of a table and how to make a row of it."""

    table: str
    columns: tuple[tuple[str, str], ...]
    make_row: Callable[[random.Random, int], dict]
    rows: int


def _when(rng: random.Random, index: int) -> datetime:
    return EPOCH + timedelta(minutes=index * 7, seconds=rng.randint(0, 59))


def _person(rng: random.Random) -> tuple[str, str]:
    return rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)


def _customer_v1(rng: random.Random, i: int) -> dict:
    first, last = _person(rng)
    return {"id": i, "first_name": first, "last_name": last, "full_name": f"{first} {last}"}


def _customer_v2(rng: random.Random, i: int) -> dict:
    first, last = _person(rng)
    return {
        "id": f"c-{i:05d}",
        "first_name": first,
        "last_name": last,
        "email": f"{first}.{last}{i}@example.com".lower(),
    }


def _order(rng: random.Random, i: int, big: bool = False, zoned: bool = False) -> dict:
    created = _when(rng, i)
    return {
        "id": i,
        "customer_id": rng.randint(1, 50),
        "amount": rng.randint(5_000_000_000, 9_000_000_000) if big else rng.randint(100, 99_999),
        "status": rng.choice(STATUSES if big else STATUSES[:4]),
        "created_at": created.strftime("%Y-%m-%dT%H:%M:%SZ" if zoned else "%Y-%m-%d %H:%M:%S"),
    }


def _product(rng: random.Random, i: int, price_digits: int | None) -> dict:
    row = {"id": i, "name": f"widget-{i}"}
    if price_digits is not None:
        row["price"] = round(rng.uniform(1, 10 ** (price_digits - 2)), 2)
    return row


def _shipment(rng: random.Random, i: int, with_country: bool) -> dict:
    address = {"street": f"{rng.randint(1, 200)} Main St", "city": rng.choice(CITIES)}
    if with_country:
        address["country"] = rng.choice(["PT", "NO", "JP", "US", "KE", "CA"])
    return {"id": i, "order_id": rng.randint(1, 400), "address": address}


ADDRESS_V1 = "STRUCT<street STRING, city STRING>"
ADDRESS_V2 = "STRUCT<street STRING, city STRING, country STRING>"
ORDERS_V1 = (
    ("id", "bigint(20)"),
    ("customer_id", "int(11)"),
    ("amount", "int(11)"),
    ("status", "varchar(20)"),
    ("created_at", "datetime"),
)
ORDERS_V2 = (
    ("id", "bigint(20)"),
    ("customer_id", "int(11)"),
    ("amount", "bigint(20)"),
    ("status", "varchar(50)"),
    ("created_at", "datetime"),
)
ORDERS_V3 = (
    ("id", "bigint(20)"),
    ("customer_id", "int(11)"),
    ("amount", "bigint(20)"),
    ("status", "varchar(50)"),
    ("created_at", "timestamp"),
)

SCHEMA_VERSIONS = (
    SchemaVersion(
        "customer",
        (
            ("id", "int(11)"),
            ("first_name", "varchar(255)"),
            ("last_name", "varchar(255)"),
            ("full_name", "varchar(255)"),
        ),
        _customer_v1,
        40,
    ),
    SchemaVersion("orders", ORDERS_V1, lambda rng, i: _order(rng, i), 60),
    SchemaVersion(
        "products",
        (("id", "int(11)"), ("name", "varchar(100)"), ("price", "decimal(10,2)")),
        lambda rng, i: _product(rng, i, 8),
        20,
    ),
    SchemaVersion(
        "shipments",
        (("id", "int(11)"), ("order_id", "int(11)"), ("address", ADDRESS_V1)),
        lambda rng, i: _shipment(rng, i, False),
        30,
    ),
    SchemaVersion(
        "customer",
        (
            ("id", "varchar(36)"),
            ("first_name", "varchar(255)"),
            ("last_name", "varchar(255)"),
            ("email", "varchar(255)"),
        ),
        _customer_v2,
        40,
    ),
    SchemaVersion("orders", ORDERS_V2, lambda rng, i: _order(rng, i, big=True), 60),
    SchemaVersion("products", (("id", "int(11)"), ("name", "varchar(100)")), lambda rng, i: _product(rng, i, None), 20),
    SchemaVersion("orders", ORDERS_V3, lambda rng, i: _order(rng, i, big=True, zoned=True), 60),
    SchemaVersion(
        "products",
        (("id", "int(11)"), ("name", "varchar(100)"), ("price", "decimal(12,2)")),
        lambda rng, i: _product(rng, i, 10),
        20,
    ),
    SchemaVersion(
        "shipments",
        (("id", "int(11)"), ("order_id", "int(11)"), ("address", ADDRESS_V2)),
        lambda rng, i: _shipment(rng, i, True),
        30,
    ),
)

MALFORMED_LINES = (
    "this is not json",
    '{"data": {"id": 1}}',
    '{"data": {"id": "not-a-number", "first_name": "Eve", "last_name": "X", "full_name": "Eve X"}, '
    '"metadata": {"database_name": "shop", "table_name": "customer", "schema": '
    '[{"name": "id", "type": "int(11)"}, {"name": "first_name", "type": "varchar(255)"}, '
    '{"name": "last_name", "type": "varchar(255)"}, {"name": "full_name", "type": "varchar(255)"}]}}',
    '{"data": {"id": 2}, "metadata": {"database_name": "shop", "table_name": "bad table;drop", "schema": [{"name": "id", "type": "int(11)"}]}}',
)


def records(database: str = "shop", seed: int = 42) -> Iterator[dict]:
    """Every record of the stream, version after version, as the binlog reader emits them."""
    rng = random.Random(seed)
    position = 4
    for version in SCHEMA_VERSIONS:
        schema = [{"name": name, "type": declared} for name, declared in version.columns]
        for index in range(1, version.rows + 1):
            position += rng.randint(50, 400)
            yield {
                "data": version.make_row(rng, index),
                "metadata": {
                    "ingestion_method": "BINLOG",
                    "database_name": database,
                    "table_name": version.table,
                    "schema": schema,
                    "operation": "INSERT",
                    "position": f"mysql-bin.000003:{position}",
                    "timestamp": _when(rng, position // 100).strftime("%Y-%m-%dT%H:%M:%SZ"),
                },
            }


def write_stream(directory: Path, database: str = "shop", files: int = 3) -> tuple[list[Path], int]:
    """Write the stream as `files` NDJSON files (malformed lines in the last); returns (paths, line count)."""
    directory.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(record, ensure_ascii=False) for record in records(database)]
    lines.extend(MALFORMED_LINES)
    size = -(-len(lines) // files)
    paths = []
    for index in range(files):
        path = directory / f"binlog-{index:03d}.json"
        path.write_text("\n".join(lines[index * size : (index + 1) * size]) + "\n", encoding="utf-8")
        paths.append(path)
    return paths, len(lines)
