"""A column dropped and added again, told from a type change by the column order the stream shows, end to end:
PostgreSQL changes as Debezium sends them, landed through the sink into DuckDB, and `<table>_current` read as a
view and as a table.  PostgreSQL appends a re-added column, so it comes behind columns that followed it; ALTER
COLUMN ... TYPE keeps its place.  Rows older than the re-added column show its default, as the source does.
EXPECTED is what the source table holds after the statements in each case's comment."""

from __future__ import annotations

import pytest
from postgres_changes import MODES, change, current, land, refresh

BEFORE = [
    change(100, "c", {"id": 1, "qty": 5, "name": "a"}, ("id", "qty")),
    change(110, "c", {"id": 2, "qty": 6, "name": "b"}, ("id", "qty")),
    change(120, "c", {"id": 1, "qty": 50, "name": "z"}, ("id", "qty"), database="shop2"),  # never altered
]
WRITE_BETWEEN = [change(150, "u", {"id": 2, "name": "b1"})]

#: case -> (changes after BEFORE, the rows of customer_current: (database, id, qty, name) as text)
CASES = {
    # ALTER TABLE customer DROP COLUMN qty, ADD COLUMN qty text; UPDATE ... id = 2
    "dropped and added as another type": (
        [change(200, "u", {"id": 2, "name": "b2", "qty": "x"})],
        [("shop1", "1", None, "a"), ("shop1", "2", "x", "b2"), ("shop2", "1", "50", "z")],
    ),
    # ALTER TABLE customer DROP COLUMN qty, ADD COLUMN qty int; UPDATE ... id = 2
    "dropped and added with the same type": (
        [change(200, "u", {"id": 2, "name": "b2", "qty": 9}, ("id", "qty"))],
        [("shop1", "1", None, "a"), ("shop1", "2", "9", "b2"), ("shop2", "1", "50", "z")],
    ),
    # ALTER TABLE customer DROP COLUMN qty, ADD COLUMN qty int DEFAULT 7; UPDATE ... id = 2
    "dropped and added with a default": (
        [change(200, "u", {"id": 2, "name": "b2", "qty": 9}, ("id", "qty"), {"qty": 7})],
        [("shop1", "1", "7", "a"), ("shop1", "2", "9", "b2"), ("shop2", "1", "50", "z")],
    ),
    # ALTER TABLE customer DROP COLUMN qty; UPDATE ... id = 2; ALTER TABLE customer ADD COLUMN qty text; UPDATE
    "dropped, written, added as another type": (
        [*WRITE_BETWEEN, change(200, "u", {"id": 2, "name": "b2", "qty": "x"})],
        [("shop1", "1", None, "a"), ("shop1", "2", "x", "b2"), ("shop2", "1", "50", "z")],
    ),
    # the same with ADD COLUMN qty int
    "dropped, written, added with the same type": (
        [*WRITE_BETWEEN, change(200, "u", {"id": 2, "name": "b2", "qty": 9}, ("id", "qty"))],
        [("shop1", "1", None, "a"), ("shop1", "2", "9", "b2"), ("shop2", "1", "50", "z")],
    ),
    # ALTER TABLE customer ALTER COLUMN qty TYPE text; UPDATE ... id = 2: the values stay
    "a type change": (
        [change(200, "u", {"id": 2, "qty": "x", "name": "b2"})],
        [("shop1", "1", "5", "a"), ("shop1", "2", "x", "b2"), ("shop2", "1", "50", "z")],
    ),
}


@pytest.fixture(scope="module", params=list(CASES))
def landed(request, spark, tmp_path_factory):
    changes, expected = CASES[request.param]
    warehouse = land(spark, tmp_path_factory.mktemp("dropped"), [*BEFORE, *changes])
    return warehouse, expected


@pytest.mark.parametrize("mode", MODES)
def test_current_holds_what_the_source_holds(landed, mode):
    warehouse, expected = landed
    refresh(warehouse, mode)
    assert current(warehouse, mode, "_cdc_database, id, qty, name") == expected


def test_the_last_column_dropped_and_added_with_its_type_and_nothing_between_cannot_be_seen(spark, tmp_path):
    """ALTER TABLE customer DROP COLUMN name, ADD COLUMN name text: the stream shows the same schema before and
    after (the same version), so the old value shows where the source has NULL (docs/current-state.md)."""
    changes = [*BEFORE[:2], change(200, "u", {"id": 2, "qty": 9, "name": "b2"}, ("id", "qty"))]
    warehouse = land(spark, tmp_path, changes)
    for mode in MODES:
        refresh(warehouse, mode)
        assert current(warehouse, mode, "id, qty, name") == [("1", "5", "a"), ("2", "9", "b2")]
