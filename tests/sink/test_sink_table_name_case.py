"""Table names that differ only in case (`Customer` and `customer`) in one batch: BigQuery's table names are
case-sensitive, DuckDB's identifiers are not, so both cannot be tables of one DuckDB dataset.  Neither may fail
the batch: each record lands or is quarantined with its reason, and read = written + quarantined."""

from __future__ import annotations

from sink_support import query, record, write_ndjson

from uniview.core.landing_layout import QUARANTINE_TABLE
from uniview.sink.job import SinkOptions, run
from uniview.warehouse.url import duckdb_url


def test_table_names_differing_only_in_case_do_not_fail_a_duckdb_batch(spark, tmp_path):
    schema = [("id", "int")]
    lines = [
        record("Customer", {"id": 1}, schema, version="v1", position="mysql-bin.000001:1"),
        record("customer", {"id": 2}, schema, version="v1", position="mysql-bin.000001:2"),
        record("customer", {"id": 3}, schema, version="v1", position="mysql-bin.000001:3"),
    ]
    write_ndjson(tmp_path / "in" / "records.json", lines)
    warehouse = tmp_path / "w.duckdb"
    result = run(spark, SinkOptions(input=str(tmp_path / "in"), warehouse=duckdb_url(warehouse), dataset="cdc"))
    counts = result.counts
    assert counts.read == 3 and sum(counts.written.values()) + sum(counts.quarantined.values()) == 3
    assert sum(counts.written.values()) == 1 and sum(counts.quarantined.values()) == 2
    (row,) = query(warehouse, 'SELECT id FROM cdc."Customer_v_v1"')
    assert row == (1,)
    quarantined = query(warehouse, f"SELECT reason, detail FROM cdc.{QUARANTINE_TABLE}")
    assert [reason for reason, _ in quarantined] == ["invalid_metadata"] * 2
    assert all("'customer' differs only in case from 'Customer'" in detail for _, detail in quarantined)


def test_a_table_name_differing_only_in_case_from_a_landed_one_does_not_fail_a_later_duckdb_batch(spark, tmp_path):
    schema = [("id", "int")]
    warehouse = tmp_path / "w.duckdb"
    for number, table in enumerate(["Customer", "customer"]):
        folder = tmp_path / f"in{number}"
        write_ndjson(folder / "records.json", [record(table, {"id": number}, schema, version="v1")])
        run(spark, SinkOptions(input=str(folder), warehouse=duckdb_url(warehouse), dataset="cdc"))
    assert query(warehouse, 'SELECT id FROM cdc."Customer_v_v1"') == [(0,)]
    ((reason, detail),) = query(warehouse, f"SELECT reason, detail FROM cdc.{QUARANTINE_TABLE}")
    assert reason == "invalid_metadata"
    assert "'customer' differs only in case from the table 'Customer_v_v1'" in detail
