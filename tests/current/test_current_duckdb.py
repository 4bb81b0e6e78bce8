"""`<table>_current` on a real DuckDB file: exactly the latest row per (database, key), through the CLI."""

from __future__ import annotations

import itertools

import duckdb
import pytest
from click.testing import CliRunner
from scenario import EXPECTED, FAMILY, rows, tables

from uniview.cli.main import main
from uniview.core.types import parse_type
from uniview.ops.refresh import RefreshRequest, refresh
from uniview.planning.plan import GeneratorOptions
from uniview.warehouse import open_warehouse
from uniview.warehouse.duckdb_types import duckdb_type
from uniview.warehouse.url import duckdb_url


def load(path, with_descriptions=True, only=None):
    with duckdb.connect(str(path)) as connection:
        connection.execute("SET TimeZone='UTC'")
        connection.execute("CREATE SCHEMA IF NOT EXISTS cdc")
        for name, (columns, description) in tables().items():
            if only and name not in only:
                continue
            definitions = ", ".join(f'"{c}" {duckdb_type(parse_type(t))}' for c, t in columns)
            connection.execute(f"CREATE TABLE cdc.{name} ({definitions})")
            if with_descriptions:
                connection.execute(f"COMMENT ON TABLE cdc.{name} IS '" + description.replace("'", "''") + "'")
            names = [c for c, _ in columns]
            for row in rows()[name]:
                connection.execute(
                    f"INSERT INTO cdc.{name} ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})",
                    [row[c] for c in names],
                )


def cli(*args):
    return CliRunner().invoke(main, list(args))


def current_rows(path):
    with duckdb.connect(str(path), read_only=True) as connection:
        found = connection.execute(f"SELECT _cdc_database, id, name FROM cdc_unified.{FAMILY}_current").fetchall()
    return sorted(found, key=repr)


def test_current_view_returns_exactly_the_latest_row_per_database_and_key(tmp_path):
    path = tmp_path / "w.duckdb"
    load(path)
    result = cli("refresh", "--warehouse", duckdb_url(path), "--dataset", "cdc", "--table", FAMILY, "--current")
    assert result.exit_code == 0, result.output
    assert current_rows(path) == EXPECTED


def test_current_view_follows_a_new_version_and_is_left_alone_when_unchanged(tmp_path):
    path = tmp_path / "w.duckdb"
    load(path, only={"customer_v_a1"})
    url = duckdb_url(path)
    assert cli("refresh", "--warehouse", url, "--dataset", "cdc", "--table", FAMILY, "--current").exit_code == 0
    with duckdb.connect(str(path), read_only=True) as connection:
        assert ("db1", "1", "a1-upd") in [
            tuple(map(str, r))
            for r in connection.execute("SELECT _cdc_database, id, name FROM cdc_unified.customer_current").fetchall()
        ]
    load(path, only={"customer_v_b2"})
    again = cli("refresh", "--warehouse", url, "--dataset", "cdc", "--table", FAMILY, "--current")
    assert "customer_current" in again.output
    assert current_rows(path) == EXPECTED
    unchanged = cli("refresh", "--warehouse", url, "--dataset", "cdc", "--table", FAMILY, "--current")
    assert unchanged.exit_code == 0 and "customer_current" not in unchanged.output


def test_a_version_recording_no_primary_key_is_an_error_naming_it_after_the_unified_view(tmp_path):
    path = tmp_path / "w.duckdb"
    load(path)
    with duckdb.connect(str(path)) as connection:
        connection.execute("COMMENT ON TABLE cdc.customer_v_b2 IS NULL")
    result = cli("refresh", "--warehouse", duckdb_url(path), "--dataset", "cdc", "--table", FAMILY, "--current")
    assert result.exit_code == 1
    assert "customer_v_b2 records none (customer_v_a1 records one)" in result.output
    with duckdb.connect(str(path), read_only=True) as connection:
        views = connection.execute("SELECT view_name FROM duckdb_views() WHERE schema_name = 'cdc_unified'").fetchall()
    assert views == [("customer_unified",)]


def test_a_family_recording_no_primary_key_gets_a_note_and_no_current_view(tmp_path):
    path = tmp_path / "w.duckdb"
    load(path, with_descriptions=False)
    result = cli("refresh", "--warehouse", duckdb_url(path), "--dataset", "cdc", "--all", "--current")
    assert result.exit_code == 0
    assert "note: no version of 'customer' records a primary key: no current view" in result.output
    with duckdb.connect(str(path), read_only=True) as connection:
        views = connection.execute("SELECT view_name FROM duckdb_views() WHERE schema_name = 'cdc_unified'").fetchall()
    assert views == [("customer_unified",)]


def test_without_current_no_current_view_is_made_and_primary_keys_are_not_needed(tmp_path):
    path = tmp_path / "w.duckdb"
    load(path, with_descriptions=False)
    assert cli("refresh", "--warehouse", duckdb_url(path), "--dataset", "cdc", "--all").exit_code == 0
    with duckdb.connect(str(path), read_only=True) as connection:
        views = connection.execute("SELECT view_name FROM duckdb_views() WHERE schema_name = 'cdc_unified'").fetchall()
    assert views == [("customer_unified",)]


@pytest.mark.parametrize("flag", ["--current"])
def test_plan_json_lists_the_current_view_after_the_unified_view(tmp_path, flag):
    import json

    path = tmp_path / "w.duckdb"
    load(path)
    result = cli("plan", "--warehouse", duckdb_url(path), "--dataset", "cdc", "--table", FAMILY, flag, "--json")
    names = [view["name"] for view in json.loads(result.output)["views"]]
    assert names == ["cdc_unified.customer_unified", "cdc_unified.customer_current"]


def land_version(connection, table, columns, key, changes, database="db1", ingested="2024-05-01 11:00:00"):
    """Version table `cdc.<table>` (columns: (name, BigQuery type); `key`: its primary key) holding `changes`:
    (values of the columns..., operation, binlog position) in `database` (created if it is not there), stamped
    `ingested` (`_cdc_ingested_at`)."""
    from uniview.core.landing_layout import CDC_COLUMNS
    from uniview.core.version_description import version_description
    from uniview.sink.sequence import sequence_of

    definitions = ", ".join(f'"{c}" {duckdb_type(parse_type(t))}' for c, t in [*columns, *CDC_COLUMNS])
    connection.execute(f"CREATE SCHEMA IF NOT EXISTS cdc; CREATE TABLE IF NOT EXISTS cdc.{table} ({definitions})")
    description = version_description(table.rsplit("_v_", 1)[0], columns, key).replace("'", "''")
    connection.execute(f"COMMENT ON TABLE cdc.{table} IS '{description}'")
    names = ", ".join(f'"{c}"' for c, _ in columns)
    for *values, operation, position in changes:
        at = f"mysql-bin.000001:{position}"
        connection.execute(
            f"INSERT INTO cdc.{table} ({names}, _cdc_operation, _cdc_position, _cdc_sequence, _cdc_database, "
            f"_cdc_timestamp, _cdc_ingested_at) VALUES ({', '.join('?' * len(values))}, ?, ?, ?, ?, "
            "TIMESTAMP '2024-05-01 10:00:00' + INTERVAL (?) MILLISECOND, ?::TIMESTAMP)",
            [*values, operation, at, sequence_of(at), database, position, ingested],
        )


def refreshed_current(path, family, mode, sql):
    current = ["--current", "table"] if mode == "table" else ["--current"]
    result = cli("refresh", "--warehouse", duckdb_url(path), "--dataset", "cdc", "--table", family, *current)
    assert result.exit_code == 0, result.output
    with duckdb.connect(str(path), read_only=True) as connection:
        return connection.execute(sql).fetchall()


@pytest.mark.parametrize("mode", ["view", "table"])
def test_a_redefined_key_keys_every_row_by_the_new_key_carrying_the_rows_written_before_it(tmp_path, mode):
    columns = [("id", "INT64"), ("code", "STRING"), ("price", "INT64")]
    path = tmp_path / "w.duckdb"
    with duckdb.connect(str(path)) as connection:  # (id, code, price, operation, position): id 2's code changed
        old_key = [(1, "a", 10, "INSERT", 100), (2, "b", 20, "INSERT", 110), (3, "c", 30, "INSERT", 120)]
        old_key += [(2, "bb", 20, "UPDATE", 130), (5, "e", 50, "INSERT", 140), (5, "e", 50, "DELETE", 150)]
        land_version(connection, "product_v_k1", columns, ("id",), old_key)
        new_key = [(4, "d", 40, "INSERT", 200), (1, "a", 11, "UPDATE", 210), (3, "c", 30, "DELETE", 220)]
        land_version(connection, "product_v_k2", columns, ("code",), new_key)
    found = refreshed_current(
        path, "product", mode, "SELECT id, code, price FROM cdc_unified.product_current ORDER BY 2"
    )
    assert found == [(1, "a", 11), (2, "bb", 20), (4, "d", 40)]


@pytest.mark.parametrize("mode", ["view", "table"])
def test_a_generated_column_added_later_is_not_known_in_older_rows(tmp_path, mode):
    ddl = [("ddl", "STRING")]
    path = tmp_path / "w.duckdb"
    with duckdb.connect(str(path)) as connection:
        added = "ALTER TABLE product ADD COLUMN doubled int AS (price * 2) STORED"
        land_version(connection, "_uniview_ddl_v_d1", ddl, None, [(added, "DDL", 150)])
        land_version(
            connection, "product_v_g1", [("id", "INT64"), ("price", "INT64")], ("id",), [(1, 10, "INSERT", 100)]
        )
        columns = [("id", "INT64"), ("price", "INT64"), ("doubled", "INT64")]
        land_version(connection, "product_v_g2", columns, ("id",), [(2, 20, 40, "INSERT", 200)])
    sql = "SELECT id, doubled, _cdc_unavailable FROM cdc_unified.product_current ORDER BY id"
    assert refreshed_current(path, "product", mode, sql) == [(1, None, ["doubled"]), (2, 40, None)]


def land_ddl(connection, ddl, position, database="db1"):
    land_version(connection, "_uniview_ddl_v_d1", [("ddl", "STRING")], None, [(ddl, "DDL", position)], database)


RENAMED = [("id", "INT64"), ("v", "STRING")]


@pytest.mark.parametrize("mode", ["view", "table"])
def test_a_renamed_table_carries_its_rows_per_database_from_the_rename_on(tmp_path, mode):
    path = tmp_path / "w.duckdb"
    with duckdb.connect(str(path)) as connection:
        before = [(1, "a", "INSERT", 100), (2, "b", "INSERT", 110), (2, "b2", "UPDATE", 120)]
        land_version(connection, "rn_v_a", RENAMED, ("id",), before)
        land_ddl(connection, "RENAME TABLE rn TO rn2", 150)
        land_version(connection, "rn2_v_a", RENAMED, ("id",), [(3, "c", "INSERT", 200), (1, "a", "DELETE", 210)])
        land_version(connection, "rn_v_a", RENAMED, ("id",), [(9, "new", "INSERT", 300)])  # a new table named rn
        land_version(connection, "rn_v_a", RENAMED, ("id",), [(1, "x", "INSERT", 100)], "db2")  # not renamed yet
    sql = "SELECT _cdc_database, id, v FROM cdc_unified.{}_current ORDER BY 1, 2"
    assert refreshed_current(path, "rn2", mode, sql.format("rn2")) == [("db1", 2, "b2"), ("db1", 3, "c")]
    assert refreshed_current(path, "rn", mode, sql.format("rn")) == [("db1", 9, "new"), ("db2", 1, "x")]
    with duckdb.connect(str(path)) as connection:  # db2 renames later: its rows move, with no change of theirs
        land_ddl(connection, "RENAME TABLE rn TO rn2", 400, "db2")
    found = refreshed_current(path, "_uniview_ddl", mode, sql.format("rn2"))
    assert found == [("db1", 2, "b2"), ("db1", 3, "c"), ("db2", 1, "x")]
    assert refreshed_current(path, "rn", mode, sql.format("rn")) == [("db1", 9, "new")]


def test_the_old_names_of_a_table_renamed_four_times_are_emptied_once_and_not_maintained_again(tmp_path):
    """t0 renamed to t1, t2, t3 and t4: the refresh that reads the renames builds every name's `<table>_current`
    (the old ones empty); a refresh of t4 then maintains t4's alone, one of the control table with no new rename
    none, and a new table named t0 is maintained again."""
    names = ["t0", "t1", "t2", "t3", "t4"]
    path, options = tmp_path / "w.duckdb", GeneratorOptions(current="table")
    with duckdb.connect(str(path)) as connection:
        land_version(connection, "t0_v_a", RENAMED, ("id",), [(1, "a", "INSERT", 100), (2, "b", "INSERT", 110)])
        for number, (old, new) in enumerate(itertools.pairwise(names)):
            land_ddl(connection, f"RENAME TABLE {old} TO {new}", 150 + number)
        land_version(connection, "t4_v_a", RENAMED, ("id",), [(3, "c", "INSERT", 200)])

    def refreshed(table, version_table=None):
        request = RefreshRequest("cdc", (table,), options=options, required_tables=tuple(filter(None, [version_table])))
        with open_warehouse(duckdb_url(path)) as warehouse:
            outcomes = refresh(warehouse, request)
        assert not [outcome.error for outcome in outcomes if outcome.error]
        return {outcome.family: outcome.current_table.action for outcome in outcomes if outcome.current_table}

    def current(family):
        with duckdb.connect(str(path), read_only=True) as connection:
            return connection.execute(
                f"SELECT _cdc_database, id, v FROM cdc_unified.{family}_current ORDER BY 2"
            ).fetchall()

    assert refreshed("_uniview_ddl") == dict.fromkeys(names, "create")
    assert [current(name) for name in names[:4]] == [[]] * 4
    later = "2024-05-01 12:00:00"
    with duckdb.connect(str(path)) as connection:
        land_version(connection, "t4_v_a", RENAMED, ("id",), [(2, "b2", "UPDATE", 300)], ingested=later)
    assert refreshed("t4", "t4_v_a") == {"t4": "maintain", **dict.fromkeys(names[:4], "untouched")}
    assert current("t4") == [("db1", 1, "a"), ("db1", 2, "b2"), ("db1", 3, "c")]
    assert refreshed("_uniview_ddl") == dict.fromkeys(names, "untouched")  # no rename since the tables were built
    with duckdb.connect(str(path)) as connection:  # a new table named t0, and a database that has not renamed yet
        land_version(connection, "t0_v_a", RENAMED, ("id",), [(9, "new", "INSERT", 400)], ingested=later)
        land_version(connection, "t0_v_a", RENAMED, ("id",), [(7, "x", "INSERT", 100)], "db2", later)
    # a change of t0 is any name's in a database that has run some of the renames after it
    assert refreshed("t0", "t0_v_a") == dict.fromkeys(names, "maintain")
    assert current("t0") == [("db2", 7, "x"), ("db1", 9, "new")]
    assert current("t4") == [("db1", 1, "a"), ("db1", 2, "b2"), ("db1", 3, "c")]


@pytest.mark.parametrize("mode", ["view", "table"])
def test_a_gh_ost_swap_gives_the_table_the_shadow_tables_rows_once(tmp_path, mode):
    wider = [*RENAMED, ("extra", "INT64")]
    path = tmp_path / "w.duckdb"
    with duckdb.connect(str(path)) as connection:
        old = [(1, "a", "INSERT", 100), (2, "b", "INSERT", 110), (2, "b2", "UPDATE", 140)]
        land_version(connection, "t_v_1", RENAMED, ("id",), old)
        copied = [(1, "a", 0, "INSERT", 120), (2, "b", 0, "INSERT", 130), (2, "b2", 0, "UPDATE", 141)]
        land_version(connection, "_t_gho_v_1", wider, ("id",), copied)
        land_ddl(connection, "RENAME TABLE `t` TO `_t_del`, `_t_gho` TO `t`", 150)
        land_version(connection, "t_v_2", wider, ("id",), [(3, "c", 7, "INSERT", 200)])
    sql = "SELECT id, v, extra FROM cdc_unified.t_current ORDER BY 1"
    assert refreshed_current(path, "t", mode, sql) == [(1, "a", 0), (2, "b2", 0), (3, "c", 7)]
    sql = "SELECT id, v FROM cdc_unified.{}_current ORDER BY 1"
    assert refreshed_current(path, "_t_gho", mode, sql.format("_t_gho")) == []
    assert refreshed_current(path, "_t_del", mode, sql.format("_t_del")) == [(1, "a"), (2, "b2")]


@pytest.mark.parametrize("mode", ["view", "table"])
def test_a_declared_table_rename_carries_the_tables_rows(tmp_path, mode):
    path = tmp_path / "w.duckdb"
    with duckdb.connect(str(path)) as connection:
        land_version(connection, "orders_v_1", RENAMED, ("id",), [(1, "a", "INSERT", 100), (2, "b", "INSERT", 110)])
    sql = "SELECT id, v FROM cdc_unified.{}_current ORDER BY 1"
    assert refreshed_current(path, "orders", mode, sql.format("orders")) == [(1, "a"), (2, "b")]
    with duckdb.connect(str(path)) as connection:  # renamed in the source: the next changes arrive under the new name
        land_version(connection, "purchase_v_1", RENAMED, ("id",), [(3, "c", "INSERT", 200), (1, "a", "DELETE", 210)])
    renames = tmp_path / "renames.json"
    renames.write_text('{"uniview_renames": 1, "renames": [{"table": "orders", "to": "purchase"}]}')
    current = ["--current", "table"] if mode == "table" else ["--current"]
    for family in ("purchase", "orders"):
        arguments = ["--warehouse", duckdb_url(path), "--dataset", "cdc", "--table", family, "--renames", renames]
        result = cli("refresh", *map(str, arguments), *current)
        assert result.exit_code == 0, result.output
    with duckdb.connect(str(path), read_only=True) as connection:
        assert connection.execute(sql.format("purchase")).fetchall() == [(2, "b"), (3, "c")]
        assert connection.execute(sql.format("orders")).fetchall() == []


@pytest.mark.parametrize("mode", ["view", "table"])
def test_a_table_renamed_in_the_ddl_and_declared_too_holds_each_change_once(tmp_path, mode):
    """`RENAME TABLE rn TO rn2` read from one database's DDL, and the same rename declared (for a source whose stream
    carries no DDL): `rn2` holds each change of `rn` once, in `<table>_unified` and `<table>_current`."""
    path = tmp_path / "w.duckdb"
    with duckdb.connect(str(path)) as connection:
        land_version(connection, "rn_v_a", RENAMED, ("id",), [(1, "a", "INSERT", 100), (2, "b", "INSERT", 110)])
        land_ddl(connection, "RENAME TABLE rn TO rn2", 150)
        land_version(connection, "rn2_v_a", RENAMED, ("id",), [(3, "c", "INSERT", 200), (1, "a", "DELETE", 210)])
    renames = tmp_path / "renames.json"
    renames.write_text('{"uniview_renames": 1, "renames": [{"table": "rn", "to": "rn2"}]}')
    current = ["--current", "table"] if mode == "table" else ["--current"]
    arguments = ["--warehouse", duckdb_url(path), "--dataset", "cdc", "--table", "rn2", "--renames", renames]
    result = cli("refresh", *map(str, arguments), *current)
    assert result.exit_code == 0, result.output
    with duckdb.connect(str(path), read_only=True) as connection:
        unified = "SELECT id, v, _cdc_operation FROM cdc_unified.rn2_unified ORDER BY _cdc_sequence"
        assert connection.execute(unified).fetchall() == [
            (1, "a", "INSERT"),
            (2, "b", "INSERT"),
            (3, "c", "INSERT"),
            (1, "a", "DELETE"),
        ]
        assert connection.execute("SELECT id, v FROM cdc_unified.rn2_current ORDER BY 1").fetchall() == [
            (2, "b"),
            (3, "c"),
        ]
    result = cli("refresh", *map(str, [*arguments[:5], "rn", *arguments[6:]]), *current)
    assert result.exit_code == 0, result.output
    with duckdb.connect(str(path), read_only=True) as connection:
        assert connection.execute("SELECT count(*) FROM cdc_unified.rn_current").fetchall() == [(0,)]
