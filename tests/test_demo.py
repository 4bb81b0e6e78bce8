"""`uniview demo` end to end, as a user runs it: a subprocess, real Spark, emulator, function."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

pytest.importorskip("pyspark", reason="the demo needs the spark extra (pyspark)")


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("demo")
    uniview = Path(sys.executable).with_name("uniview")
    completed = subprocess.run(
        [str(uniview), "demo", "--workdir", str(workdir)],
        capture_output=True,
        text=True,
        timeout=240,
        env={"COLUMNS": "160", "PATH": "/usr/bin:/bin", "HOME": str(workdir)},
    )
    return workdir, completed


def test_demo_succeeds_and_accounts_for_every_line(demo_run):
    _, completed = demo_run
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    match = re.search(r"uniview: read (\d+) = written (\d+) \+ quarantined (\d+)", completed.stdout)
    assert match and int(match[1]) == int(match[2]) + int(match[3]) and int(match[3]) == 4
    debezium = re.search(r"debezium: read (\d+) = written (\d+) \+ quarantined (\d+)", completed.stdout)
    assert debezium and debezium.groups() == ("10", "10", "0")
    assert "shop_unified.accounts_current (latest row per database and key)" in completed.stdout
    for heading in (
        "Version tables per family",
        "resolved columns",
        "rows per version",
        "Quarantine",
        "Time per stage",
    ):
        assert heading in completed.stdout
    assert "Query it with:" in completed.stdout


def test_demo_leaves_queryable_unified_views(demo_run):
    workdir, completed = demo_run
    assert completed.returncode == 0
    with duckdb.connect(str(workdir / "uniview-demo.duckdb"), read_only=True) as connection:
        views = {
            r[0]
            for r in connection.execute(
                "SELECT view_name FROM duckdb_views() WHERE schema_name = 'shop_unified'"
            ).fetchall()
        }
        assert views == {
            "customer_unified",
            "orders_unified",
            "products_unified",
            "shipments_unified",
            "accounts_unified",
            "accounts_current",
        }
        current = connection.execute(
            "SELECT _cdc_database, id, email, CAST(balance AS VARCHAR), plan FROM shop_unified.accounts_current "
            "ORDER BY 1, 2"
        ).fetchall()
        assert current == [
            ("tenant1", 1, "ann@example.com", "20.75", None),
            ("tenant1", 2, "bob@example.com", "1.00", "free"),
            ("tenant1", 3, "cy@example.com", "12.00", "pro"),
            ("tenant2", 1, "eve@example.org", "1000.00", "pro"),
        ]
        types = dict(
            connection.execute(
                "SELECT column_name, data_type FROM information_schema.columns "
                "WHERE table_schema = 'shop_unified' AND table_name = 'orders_unified'"
            ).fetchall()
        )
        assert types["created_at"] == "TIMESTAMP WITH TIME ZONE" and types["amount"] == "BIGINT"
        customer = connection.execute(
            "SELECT count(*), count(full_name), count(email), count(DISTINCT _uniview_source) "
            "FROM shop_unified.customer_unified"
        ).fetchone()
        assert customer == (80, 40, 40, 2)
        countries = connection.execute("SELECT count(address.country) FROM shop_unified.shipments_unified").fetchone()
        assert countries == (30,)
