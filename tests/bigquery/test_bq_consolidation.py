"""uniview consolidate on the local BigQuery emulator: a family over its limit folded and served again
with the same content; moved tables stay in the view until settled, and rows that reach them late
are moved again; kill -9 after the record and after a move; every job within BigQuery's limits."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections import Counter
from datetime import timedelta

import pytest
from bigquery_limits import LimitEnforcer

from uniview.core import limits
from uniview.core.schema import Column, TableVersion
from uniview.core.types import parse_type
from uniview.local.bigquery_emulator import DEFAULT_PROJECT
from uniview.ops.consolidate import KILL_VARIABLE, ConsolidationRequest, consolidate
from uniview.ops.refresh import RefreshRequest, refresh
from uniview.planning.consolidation import fold_plan
from uniview.warehouse.bigquery_consolidation import count_queries, move_script, read_queries
from uniview.warehouse.bigquery_folds import FOLDED_LABEL

pytestmark = pytest.mark.emulator


def build_family(run_sql, dataset: str, versions: int) -> None:
    """`versions` tables of `customer`, 2 rows each; `amount` is INT64 in odd versions, STRING in even."""
    statements = []
    for index in range(versions):
        table = f"`{dataset}.customer_v_{index:09x}`"
        amount = "INT64" if index % 2 else "STRING"
        extra = ", extra_a FLOAT64" if index % 3 == 0 else ""
        statements.append(f"CREATE TABLE {table} (id INT64, name STRING, amount {amount}{extra})")
        rows = [(index * 2 + r, f"n{index * 2 + r}", index * 7 + r) for r in range(2)]
        values = ", ".join(
            f"({i}, '{n}', {a if index % 2 else repr(str(a))}{', 0.5' if extra else ''})" for i, n, a in rows
        )
        statements.append(f"INSERT INTO {table} VALUES {values}")
    for start in range(0, len(statements), 40):
        run_sql(";\n".join(statements[start : start + 40]))


def view_content(bq_client, dataset: str) -> Counter:
    rows = bq_client.query(
        f"SELECT id, name, CAST(amount AS STRING) FROM `{dataset}_unified.customer_unified`"
    ).result()
    return Counter(tuple(row.values()) for row in rows)


def landed_content(bq_client, dataset: str) -> Counter:
    tables = [t.table_id for t in bq_client.list_tables(dataset) if t.table_id.startswith("customer_v_")]
    return Counter(
        tuple(row.values())
        for table in tables
        for row in bq_client.query(f"SELECT id, name, CAST(amount AS STRING) FROM `{dataset}.{table}`").result()
    )


def registry(bq_client, dataset: str) -> Counter:
    return Counter(
        row[0]
        for row in bq_client.query(f"SELECT state FROM `{dataset}._uniview_folds` WHERE dataset = '{dataset}'").result()
    )


def folded_labels(bq_client, dataset: str) -> int:
    return sum(1 for t in bq_client.list_tables(dataset) if FOLDED_LABEL in (t.labels or {}))


def request(dataset: str, **settings) -> ConsolidationRequest:
    return ConsolidationRequest(
        dataset, ("customer",), timedelta(0), settings.pop("max_versions", 10), settings.pop("apply", True), **settings
    )


def refreshed(warehouse, dataset: str):
    (outcome,) = refresh(warehouse, RefreshRequest(dataset=dataset, tables=("customer",)))
    return outcome


def test_a_family_over_its_limit_is_folded_and_served_again(warehouse, bq_client, run_sql, dataset, monkeypatch):
    build_family(run_sql, dataset, 24)
    before = landed_content(bq_client, dataset)
    monkeypatch.setattr(limits, "MAX_QUERY_RESOURCES", 25)  # 15 tables a query: this family is over it
    assert "uniview consolidate --table customer" in str(refreshed(warehouse, dataset).error)

    (planned,) = consolidate(warehouse, request(dataset, apply=False))
    assert [v.table_name for v in planned.plan.versions] == [f"customer_v_{i:09x}" for i in range(15)]
    assert planned.rows == 30 and not planned.applied and landed_content(bq_client, dataset) == before

    (done,) = consolidate(warehouse, request(dataset, settle=timedelta(0)))
    assert done.applied and done.moved_rows == 30 and len(done.retired) == 15
    assert registry(bq_client, dataset) == Counter({"retired": 15}) and folded_labels(bq_client, dataset) == 15
    assert not refreshed(warehouse, dataset).failed
    assert view_content(bq_client, dataset) == before == landed_content(bq_client, dataset)

    jobs = warehouse.jobs_started
    (again,) = consolidate(warehouse, request(dataset, settle=timedelta(0)))
    assert again.plan is None and again.moved_rows == 0 and again.retired == []
    assert registry(bq_client, dataset) == Counter({"retired": 15})
    assert warehouse.jobs_started - jobs <= 6  # metadata reads only: no DML when nothing is due


def test_moved_tables_stay_in_the_view_until_settled_and_late_rows_move_again(warehouse, bq_client, run_sql, dataset):
    build_family(run_sql, dataset, 8)
    (done,) = consolidate(warehouse, request(dataset, max_versions=4))  # settle: the default hour
    assert done.applied and done.moved_rows == 10 and done.retired == []
    assert registry(bq_client, dataset) == Counter({"moved": 5})
    before = view_content(bq_client, dataset)
    assert sum(before.values()) == 16 and len(refreshed(warehouse, dataset).versions) == 9  # moved ones included

    # A sink promotion that read the registry before the move commits its rows after it.
    run_sql(f"INSERT INTO `{dataset}.customer_v_000000001` (id, name, amount) VALUES (999, 'late', 1)")
    assert view_content(bq_client, dataset) - before == Counter({(999, "late", "1"): 1})

    (settled,) = consolidate(warehouse, request(dataset, max_versions=4, settle=timedelta(0)))
    assert [v.table_name for v in settled.plan.versions] == ["customer_v_000000001"] and settled.moved_rows == 1
    assert sorted(settled.retired) == [f"customer_v_{i:09x}" for i in range(5)]
    assert view_content(bq_client, dataset) == before + Counter({(999, "late", "1"): 1})
    assert landed_content(bq_client, dataset) == view_content(bq_client, dataset)


@pytest.mark.parametrize("point", ["after-record", "after-move"])  # every step: tests/consolidation (DuckDB)
def test_killed_after_a_step_a_rerun_finishes_with_the_same_content(warehouse, bq_client, run_sql, dataset, point):
    build_family(run_sql, dataset, 6)
    assert not refreshed(warehouse, dataset).failed
    before = view_content(bq_client, dataset)
    command = [
        sys.executable,
        "-m",
        "uniview.cli.main",
        "consolidate",
        "--warehouse",
        f"bigquery://{DEFAULT_PROJECT}",
        "--dataset",
        dataset,
        "--table",
        "customer",
        "--idle-for",
        "0s",
        "--max-versions",
        "3",
        "--settle",
        "0s",
        "--apply",
    ]
    killed = subprocess.run(command, capture_output=True, text=True, env={**os.environ, KILL_VARIABLE: point})
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert view_content(bq_client, dataset) == before and landed_content(bq_client, dataset) == before

    finished = subprocess.run(command, capture_output=True, text=True)
    assert finished.returncode == 0, finished.stderr
    assert registry(bq_client, dataset) == Counter({"retired": 4})
    assert view_content(bq_client, dataset) == before == landed_content(bq_client, dataset)


def test_every_job_stays_within_bigquerys_limits_at_1500_versions():
    enforcer = LimitEnforcer()
    columns = (Column("id", parse_type("INT64")), Column("name", parse_type("STRING")))
    versions = [TableVersion(f"customer_v_{i:09x}", "customer", f"{i:09x}", float(i), columns) for i in range(2000)]
    plan = fold_plan("cdc", versions, versions[:1501], "customer_v_consolidated1", "uniview")
    tables = [v.table_name for v in plan.versions]
    for sql in count_queries(DEFAULT_PROJECT, "cdc", tables) + read_queries(DEFAULT_PROJECT, "cdc", tables):
        enforcer.check_job(sql)
    for batch in plan.batches():
        enforcer.check_job(move_script(DEFAULT_PROJECT, "cdc", plan, batch, request("cdc").options))
    oversized = move_script(DEFAULT_PROJECT, "cdc", plan, versions[:99], request("cdc").options)
    with pytest.raises(Exception, match="mutating too many tables: 101"):
        enforcer.check_job(oversized)
