"""A rename read from the binary log, end to end through the sink into DuckDB: the schema-change event lands in
`_uniview_ddl`, and `refresh` reads the renamed column's old rows under the new name."""

from __future__ import annotations

import sys
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parents[1] / "current"))
from postgres_changes import current, land, refresh
from test_ddl_renames import ddl_event, kcat, row_event

from uniview.cli.main import main
from uniview.core.ddl_renames import DDL_TABLE
from uniview.sink.debezium import UNAVAILABLE_PLACEHOLDER
from uniview.warehouse.url import duckdb_url


def test_a_rename_read_from_the_binlog_reads_old_rows_under_the_new_name(spark, tmp_path):
    from uniview.sink.job import SinkOptions, run

    key = {"schema": {"type": "struct", "fields": [{"field": "id", "type": "int32"}]}, "payload": {"id": 1}}
    lines = [
        kcat(0, row_event(10, "c", {"id": 1, "memo": "one"}), key),
        kcat(1, row_event(20, "c", {"id": 2, "memo": "two"}), {**key, "payload": {"id": 2}}),
        kcat(2, ddl_event(30, "ALTER TABLE customer CHANGE memo note varchar(20)"), None),
        kcat(3, ddl_event(35, "ALTER TABLE customer ADD COLUMN x int"), None),  # landed too: no rename in it
        kcat(4, row_event(40, "u", {"id": 2, "note": "two-b"}), {**key, "payload": {"id": 2}}),
    ]
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "events.json").write_text("\n".join(lines) + "\n")
    warehouse = tmp_path / "w.duckdb"
    result = run(
        spark,
        SinkOptions(input=str(tmp_path / "in"), warehouse=duckdb_url(warehouse), dataset="cdc", format="debezium"),
    )
    assert (result.counts.total_written, sum(result.counts.quarantined.values())) == (5, 0)
    refreshed = CliRunner().invoke(
        main, ["refresh", "--warehouse", duckdb_url(warehouse), "--dataset", "cdc", "--all", "--current"]
    )
    assert refreshed.exit_code == 0, refreshed.output
    with duckdb.connect(str(warehouse), read_only=True) as connection:
        views = sorted(
            v
            for (v,) in connection.execute(
                "SELECT view_name FROM duckdb_views() WHERE schema_name = 'cdc_unified'"
            ).fetchall()
        )
        current = connection.execute("SELECT id, note FROM cdc_unified.customer_current ORDER BY id").fetchall()
        columns = [r[0] for r in connection.execute("DESCRIBE cdc_unified.customer_unified").fetchall()]
    assert views == ["customer_current", "customer_unified"]
    assert current == [(1, "one"), (2, "two-b")] and "memo" not in columns
    only_control = CliRunner().invoke(
        main, ["refresh", "--warehouse", duckdb_url(warehouse), "--dataset", "cdc", "--table", DDL_TABLE]
    )
    assert only_control.exit_code == 0, only_control.output


@pytest.mark.parametrize(
    ("ddl", "mode"),
    [
        ("ALTER TABLE customer CHANGE memo note varchar(20)", "view"),
        ("ALTER TABLE customer CHANGE memo note varchar(20)", "table"),
        ("ALTER TABLE customer RENAME COLUMN memo TO note", "view"),
        ("ALTER TABLE customer RENAME COLUMN memo TO note", "table"),
    ],
)
def test_a_value_carried_over_unavailable_changes_survives_a_rename_read_from_the_binlog(spark, tmp_path, ddl, mode):
    def key(number: int) -> dict:
        return {"schema": {"type": "struct", "fields": [{"field": "id", "type": "int32"}]}, "payload": {"id": number}}

    events = [
        (row_event(10, "c", {"id": 1, "memo": "one"}), key(1)),
        (row_event(15, "c", {"id": 2, "memo": "two"}), key(2)),
        (row_event(20, "u", {"id": 1, "memo": UNAVAILABLE_PLACEHOLDER}), key(1)),
        (row_event(25, "u", {"id": 2, "memo": UNAVAILABLE_PLACEHOLDER}), key(2)),  # its last change
        (ddl_event(30, ddl), None),
        (row_event(40, "u", {"id": 1, "note": UNAVAILABLE_PLACEHOLDER}), key(1)),
        (row_event(45, "c", {"id": 3, "note": "three"}), key(3)),
    ]
    warehouse = land(spark, tmp_path, events)
    refresh(warehouse, mode)
    assert current(warehouse, mode, "id, note") == [("1", "one"), ("2", "two"), ("3", "three")]
