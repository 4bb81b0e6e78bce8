"""Debezium's own example messages (its test resources and its connector documentation; each fixture
names its origin) through the sink into DuckDB: typed rows equal to the source values, schemaless
events refused with their reason, the tombstone skipped, and `<table>_current` over the result."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner
from sink_support import query

from uniview.cli.main import main
from uniview.sink.job import SinkOptions, run
from uniview.sink.sequence import sequence_of
from uniview.warehouse.url import duckdb_url

FIXTURES = json.loads((Path(__file__).parent / "debezium_fixtures" / "documented_events.json").read_text())


def kcat_line(offset: int, event: dict) -> str:
    """The message as `kcat -C -J` prints it."""
    return json.dumps(
        {
            "topic": "documented",
            "partition": 0,
            "offset": offset,
            "tstype": "create",
            "ts": 0,
            "key": None if event["key"] is None else json.dumps(event["key"]),
            "payload": None if event["value"] is None else json.dumps(event["value"]),
        }
    )


@pytest.fixture(scope="module")
def landed(spark, tmp_path_factory):
    root = tmp_path_factory.mktemp("documented")
    (root / "in").mkdir()
    (root / "in" / "events.json").write_text("\n".join(kcat_line(n, e) for n, e in enumerate(FIXTURES)) + "\n")
    warehouse = root / "w.duckdb"
    result = run(
        spark, SinkOptions(input=str(root / "in"), warehouse=duckdb_url(warehouse), dataset="cdc", format="debezium")
    )
    [table] = [
        t
        for (t,) in query(
            warehouse,
            "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'cdc' AND table_name LIKE 'customers_v_%'",
        )
    ]
    return warehouse, result, table


def test_every_message_is_written_quarantined_or_skipped(landed):
    _, result, _ = landed
    counts = result.counts
    assert (counts.read, counts.total_written, dict(counts.quarantined), dict(counts.skipped)) == (
        8,
        4,
        {"missing_schema": 3},
        {"tombstone": 1},
    )


def test_rows_equal_the_documented_source_values(landed):
    warehouse, _, table = landed
    rows = query(
        warehouse,
        f"SELECT _cdc_database, id, first_name, last_name, email, _cdc_operation, _cdc_position, "
        f"_cdc_sequence, _cdc_timestamp FROM cdc.{table} ORDER BY _cdc_database, _cdc_sequence, "
        "_cdc_operation",
    )
    mysql_at = datetime(1970, 1, 1, tzinfo=UTC)
    pg_at = datetime.fromtimestamp(1559033904.863, tz=UTC)
    assert rows == [
        (
            "inventory",
            1004,
            "Anne",
            "Kretchmar",
            "annek@noanswer.org",
            "INSERT",
            "mysql-bin.000003:154:0",
            sequence_of("mysql-bin.000003:154:0"),
            mysql_at,
        ),
        ("postgres", 1, "Anne", "Kretchmar", "annek@noanswer.org", "INSERT", "24023128", "00000000000024023128", pg_at),
        (
            "postgres",
            1,
            "Anne Marie",
            "Kretchmar",
            "annek@noanswer.org",
            "UPDATE",
            "24023128",
            "00000000000024023128",
            pg_at,
        ),
        ("postgres", 1, None, None, None, "DELETE", "46523128", "00000000000046523128", pg_at),
    ]


def test_schemaless_events_are_refused_with_their_reason_and_kept_whole(landed):
    warehouse, _, _ = landed
    stored = query(warehouse, "SELECT reason, detail, raw_line FROM cdc._uniview_quarantine ORDER BY raw_line")
    assert [(reason, detail) for reason, detail, _ in stored] == [
        ("missing_schema", "no metadata.table_version and no metadata.schema")
    ] * 3
    assert sorted(json.loads(raw)["offset"] for _, _, raw in stored) == [1, 2, 6]


def test_the_primary_key_comes_from_the_documented_key_and_the_current_view_follows_it(landed):
    warehouse, _, table = landed
    comment = query(warehouse, "SELECT comment FROM duckdb_tables() WHERE table_name = ?", [table])[0][0]
    assert json.loads(comment)["uniview_source_schema"]["primary_key"] == ["id"]
    done = CliRunner().invoke(
        main, ["refresh", "--warehouse", duckdb_url(warehouse), "--dataset", "cdc", "--all", "--current"]
    )
    assert done.exit_code == 0, done.output
    current = query(warehouse, "SELECT _cdc_database, id, first_name FROM cdc_unified.customers_current")
    assert current == [("inventory", 1004, "Anne")]  # postgres id 1 was deleted
