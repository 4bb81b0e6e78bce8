"""`<table>_current` after `uniview consolidate` on DuckDB: the consolidated table records the key the
folded versions record, so the view and the table still plan, and hold the same rows as before."""

from __future__ import annotations

import duckdb
from click.testing import CliRunner
from scenario import EXPECTED, FAMILY, V2
from test_current_duckdb import load
from test_current_table_duckdb import add_version

from uniview.cli.main import main
from uniview.core.version_description import described_primary_key
from uniview.sink.sequence import sequence_of
from uniview.warehouse.url import duckdb_url


def run(path, command, *args):
    result = CliRunner().invoke(main, [command, "--warehouse", duckdb_url(path), "--dataset", "cdc", *args])
    assert result.exit_code == 0, result.output
    return result


def current(path, schema="cdc_unified"):
    with duckdb.connect(str(path), read_only=True) as connection:
        return sorted(
            connection.execute(f"SELECT _cdc_database, id, name FROM {schema}.{FAMILY}_current").fetchall(),
            key=repr,
        )


def test_the_current_view_and_table_hold_the_same_rows_after_a_consolidation(tmp_path):
    path = tmp_path / "w.duckdb"
    load(path)
    position = "mysql-bin.000004:1"
    add_version(
        path,
        "customer_v_c3",
        [*V2[1], ("phone", "STRING")],
        f"SELECT '8', 'v3', NULL, '555', 'binlog', 'INSERT', '{position}', TIMESTAMP '2024-01-01 00:04:00', "
        f"TIMESTAMP '2024-01-01 00:04:00', 'db1', '{sequence_of(position)}', NULL",
    )
    expected = sorted([*EXPECTED, ("db1", "8", "v3")], key=repr)
    run(path, "consolidate", "--table", FAMILY, "--max-versions", "2", "--idle-for", "0s", "--apply")
    with duckdb.connect(str(path), read_only=True) as connection:
        comments = connection.execute(
            "SELECT table_name, comment FROM duckdb_tables() WHERE schema_name = 'cdc' AND table_name LIKE ?",
            [f"{FAMILY}_v_%"],
        ).fetchall()
    consolidated = [
        comment for name, comment in comments if name not in ("customer_v_a1", "customer_v_b2", "customer_v_c3")
    ]
    assert len(consolidated) == 1, comments
    assert described_primary_key(consolidated[0]) == ("id",)
    run(path, "refresh", "--table", FAMILY, "--current")
    assert current(path) == expected
    run(path, "refresh", "--table", FAMILY, "--current", "table", "--target-dataset", "cdc_table")
    assert current(path, "cdc_table") == expected
