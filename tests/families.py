"""Families at the sizes BigQuery users have: N versions x M columns, a share of them changing type."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from functools import cache

from uniview.core import landing_layout as layout
from uniview.core.schema import Column, TableVersion
from uniview.core.types import INT64, parse_type

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


#: Every column changes type and neither of its types is the unified one (STRING): every version casts it.
ALL_CONFLICTING_BASE_TYPES = ["INT64", "FLOAT64", "DATE", "TIMESTAMP", "NUMERIC", "BOOL", "TIME"]
ALL_CONFLICTING = {
    "INT64": "FLOAT64",
    "FLOAT64": "INT64",
    "DATE": "DATETIME",
    "TIMESTAMP": "DATE",
    "NUMERIC": "FLOAT64",
    "BOOL": "INT64",
    "TIME": "DATETIME",
}


def synthetic_family(
    versions: int,
    columns: int,
    conflict_share: float = 0.2,
    seed: int = 7,
    family: str = "events",
    base_types: Sequence[str] = BASE_TYPES,
    conflicting_types: Mapping[str, str] = CONFLICTING,
) -> list[TableVersion]:
    """`versions` tables of `columns` columns; `conflict_share` of the columns change type across versions
    (every other version has the column's conflicting type)."""
    rng = random.Random(seed)
    types = [rng.choice(base_types) for _ in range(columns)]
    conflicting = set(rng.sample(range(columns), int(columns * conflict_share)))
    parsed = {name: parse_type(name) for name in {*base_types, *conflicting_types.values()}}
    # Like discovery from a warehouse: equal columns are one Column, equal lists of them one tuple.
    column_of = cache(Column)
    shapes: dict[tuple[str, ...], tuple[Column, ...]] = {}
    result = []
    for index in range(versions):
        names = tuple(
            conflicting_types[types[c]] if c in conflicting and index % 2 else types[c] for c in range(columns)
        )
        cols = shapes.get(names)
        if cols is None:
            cols = shapes[names] = tuple(column_of(f"column_{c}", parsed[name]) for c, name in enumerate(names))
        result.append(TableVersion(f"{family}_v_{index:06d}", family, f"{index:06d}", float(index), cols))
    return result


def all_conflicting_family(versions: int, columns: int, family: str = "events") -> list[TableVersion]:
    """The worst case for the view's size: every column changes type, so every version casts every column
    (900 x 300 resolved to 11.73 MB with every branch naming its columns: over the 11 MB budget)."""
    return synthetic_family(
        versions,
        columns,
        conflict_share=1.0,
        family=family,
        base_types=ALL_CONFLICTING_BASE_TYPES,
        conflicting_types=ALL_CONFLICTING,
    )


def nested_family(columns: int, fields: int = 4) -> list[TableVersion]:
    """One version of `columns` STRUCT columns of `fields` fields each."""
    struct = parse_type("STRUCT<" + ", ".join(f"f{i} INT64" for i in range(fields)) + ">")
    cols = tuple(Column(f"s{c}", struct) for c in range(columns))
    return [TableVersion("nested_v_1", "nested", "1", 1.0, cols)]


def type_changing_family(versions: int, columns: int, changes: int = 3, family: str = "events") -> list[TableVersion]:
    """`versions` landed tables of an `id` key (recorded as the primary key), `columns` columns and the CDC columns,
    each column changing type `changes` times at points spread over the family (DATETIME -> DATE -> DATETIME ...,
    each change one that converts the values older rows hold), as migrations do over a long-lived table."""
    cdc = tuple(Column(name, parse_type(bq_type)) for name, bq_type in layout.CDC_COLUMNS)
    types = [parse_type("DATETIME"), parse_type("DATE")]
    column_of = cache(Column)
    result = []
    for index in range(versions):
        runs = [
            sum(index >= ((point + 1) * versions // (changes + 1) + c) % versions for point in range(changes))
            for c in range(columns)
        ]
        typed = tuple(column_of(f"column_{c}", types[run % 2]) for c, run in enumerate(runs))
        version = f"{index:012x}"
        result.append(
            TableVersion(
                f"{family}_v_{version}", family, version, float(index), (column_of("id", INT64), *typed, *cdc), ("id",)
            )
        )
    return result


#: The mixed family's DuckDB types, and the other type a column has in about 20% of the versions.
MIXED_DUCKDB_TYPES = {
    "BIGINT": "VARCHAR",
    "VARCHAR": "BIGINT",
    "DOUBLE": "DECIMAL(38,9)",
    "TIMESTAMP": "TIMESTAMPTZ",
    "DATE": "TIMESTAMP",
    "BOOLEAN": "VARCHAR",
}


def mixed_duckdb_tables(versions: int, columns: int, seed: int = 63) -> list[tuple[str, list[tuple[str, str]]]]:
    """The mixed family as (version table, [(column, DuckDB type)]): BIGINT, VARCHAR, DOUBLE, TIMESTAMP, DATE and
    BOOLEAN columns; in about 20% of the versions one column has its other type (MIXED_DUCKDB_TYPES); about 3% of
    the columns missing from each version after the first."""
    rng = random.Random(seed)
    types = [rng.choice(list(MIXED_DUCKDB_TYPES)) for _ in range(columns)]
    tables = []
    for index in range(versions):
        changed = rng.randrange(columns) if index and rng.random() < 0.2 else None
        typed = [
            (f"column_{c}", MIXED_DUCKDB_TYPES[name] if c == changed else name)
            for c, name in enumerate(types)
            if index == 0 or rng.random() >= 0.03
        ]
        tables.append((f"events_v_{index:06d}", typed))
    return tables
