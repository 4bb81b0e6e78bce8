"""A batch creates its new version tables in the order the source wrote them: by the time of each version's first
change, then, within one millisecond, by its log position (`_cdc_sequence`).  The order matters: a declared rename
reads the versions created before it under the new name, so versions created out of order showed NULL in
`<table>_current` where the source holds the value.  A PostgreSQL `RENAME COLUMN` and the writes around it often
share one millisecond (found by the live PostgreSQL test: two versions of `ticket` stamped 15:58:05.028)."""

from __future__ import annotations

import json

import pytest
from postgres_changes import MODES, change, current, land, refresh
from sink_support import query

#: Names the column is renamed to; with each, the version written after the rename has a table name that sorts
#: before the first version's (asserted below), so an order by name would create it first.
RENAMED_TO = ("note", "comment")
STAMP = 1_795_481_268_000


def in_one_millisecond(changes: list[tuple[str, dict]]) -> list[tuple[str, dict]]:
    """`changes` with one `ts_ms`, as a source stamps changes committed within one millisecond."""
    stamped = []
    for event, key in changes:
        document = json.loads(event)
        document["payload"]["source"]["ts_ms"] = document["payload"]["ts_ms"] = STAMP
        stamped.append((json.dumps(document), key))
    return stamped


@pytest.mark.parametrize("new_name", RENAMED_TO)
def test_versions_written_in_one_millisecond_are_created_in_log_order(spark, tmp_path, new_name):
    changes = in_one_millisecond(
        [
            change(100, "c", {"id": 1, "memo": "a"}),
            change(101, "c", {"id": 2, "memo": "b"}),
            change(102, "u", {"id": 2, new_name: "b2"}),  # after ALTER TABLE customer RENAME COLUMN memo TO ...
        ]
    )
    warehouse = land(spark, tmp_path, changes)
    ledger = "SELECT table_name FROM _uniview.created_tables WHERE dataset = 'cdc' ORDER BY seq"
    created = [table for (table,) in query(warehouse, ledger) if table.startswith("customer_v_")]
    first_positions = [query(warehouse, f"SELECT min(_cdc_sequence) FROM cdc.{table}")[0][0] for table in created]
    assert first_positions == sorted(first_positions), "the version tables are not recorded in log order"
    assert created != sorted(created), f"{new_name!r} no longer names the later version first: choose another name"

    renames = tmp_path / "renames.json"
    renames.write_text(
        json.dumps({"uniview_renames": 1, "renames": [{"table": "customer", "from": "memo", "to": new_name}]})
    )
    for mode in MODES:
        refresh(warehouse, mode, "--renames", str(renames))
        assert current(warehouse, mode, f"id, {new_name}") == [("1", "a"), ("2", "b2")]
