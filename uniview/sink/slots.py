"""Which staged column holds which column of which shape: columns of one type share *slots*.

A typed staging table (BigQuery's load step) holds the rows of many shapes (a shape is the columns of
one or more routes).  Giving every shape its own typed columns would make a table as wide as all its
shapes together.  Instead, the k-th column of type T in any shape is staged in the same column, the
k-th slot of T, so a table has as many
typed columns as the widest mix of types among its shapes, and each row fills each slot once
with its own shape's column.  For example shapes (id INT64, name STRING) and
(id INT64, email STRING, age INT64) share slots x0 (INT64: id, id), x1 (INT64: -, age) and
x2 (STRING: name, email).

This module only assigns slots; bigquery_typing builds the typed staging tables with them, and the
promotion finds a column's slot through bigquery_promotion.TypedBatch.typed_field.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from uniview.core.types import BQType
from uniview.sink.routing import LandingColumn

#: The columns of one shape: every route with these columns is typed by the same expressions.
Shape = tuple[LandingColumn, ...]
#: Staged frames stay under this many typed columns (slots); more shapes make more frames.
MAX_STAGED_COLUMNS = 512


@dataclass(frozen=True)
class Slot:
    """One staged column: its name, the type of every column staged in it, and its members as
    (shape, position of the column in that shape), at most one per shape."""

    column: str
    bq_type: BQType
    members: tuple[tuple[int, int], ...]


def assign_slots(shapes: Sequence[Shape], chunk: Sequence[int]) -> list[Slot]:
    """The slots of a frame staging the shapes `chunk` (indexes into `shapes`), named x0, x1, ...
    in order of first use."""
    members: dict[BQType, list[list[tuple[int, int]]]] = {}
    for shape in chunk:
        used: Counter = Counter()
        for position, column in enumerate(shapes[shape]):
            family = members.setdefault(column.bq_type, [])
            nth = used[column.bq_type]
            used[column.bq_type] += 1
            if nth == len(family):
                family.append([])
            family[nth].append((shape, position))
    slots = [(bq_type, tuple(slot)) for bq_type, family in members.items() for slot in family]
    return [Slot(f"x{number}", bq_type, slot) for number, (bq_type, slot) in enumerate(slots)]


def chunk_shapes(shapes: Sequence[Shape], max_columns: int | None = None) -> list[list[int]]:
    """Shape indexes grouped so each staged frame has at most `max_columns` (default
    MAX_STAGED_COLUMNS) slots, unless one shape alone needs more; at least one group."""
    max_columns = max_columns or MAX_STAGED_COLUMNS
    chunks: list[list[int]] = [[]]
    widest: Counter[BQType] = Counter()
    for index, shape in enumerate(shapes):
        mix = Counter(column.bq_type for column in shape)
        joined = widest | mix
        if chunks[-1] and sum(joined.values()) > max_columns:
            chunks.append([])
            joined = mix
        chunks[-1].append(index)
        widest = joined
    return chunks


def slot_fields(slots: Sequence[Slot]) -> dict[tuple[int, int], str]:
    """{(shape, position): the staged column holding that column}."""
    return {member: slot.column for slot in slots for member in slot.members}
