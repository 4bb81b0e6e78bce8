"""Families at the sizes BigQuery users have: N versions x M columns, a share of them changing type."""

from __future__ import annotations

import random

from uniview.schema import Column, TableVersion
from uniview.types import parse_type

BASE_TYPES = ["INT64", "STRING", "FLOAT64", "DATE", "TIMESTAMP", "NUMERIC", "BOOL"]
CONFLICTING = {
    "INT64": "STRING",
    "STRING": "INT64",
    "FLOAT64": "STRING",
    "DATE": "DATETIME",
    "TIMESTAMP": "DATETIME",
    "NUMERIC": "FLOAT64",
    "BOOL": "INT64",
}


def synthetic_family(
    versions: int, columns: int, conflict_share: float = 0.2, seed: int = 7, family: str = "events"
) -> list[TableVersion]:
    """`versions` tables of `columns` columns; `conflict_share` of the columns change type across versions."""
    rng = random.Random(seed)
    types = [rng.choice(BASE_TYPES) for _ in range(columns)]
    conflicting = set(rng.sample(range(columns), int(columns * conflict_share)))
    result = []
    for index in range(versions):
        cols = tuple(
            Column(f"column_{c}", parse_type(CONFLICTING[types[c]] if c in conflicting and index % 2 else types[c]))
            for c in range(columns)
        )
        result.append(TableVersion(f"{family}_v_{index:06d}", family, f"{index:06d}", float(index), cols))
    return result


def nested_family(columns: int, fields: int = 4) -> list[TableVersion]:
    """One version of `columns` STRUCT columns of `fields` fields each."""
    struct = parse_type("STRUCT<" + ", ".join(f"f{i} INT64" for i in range(fields)) + ">")
    cols = tuple(Column(f"s{c}", struct) for c in range(columns))
    return [TableVersion("nested_v_1", "nested", "1", 1.0, cols)]
