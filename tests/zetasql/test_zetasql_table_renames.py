"""ZetaSQL's reference implementation answers the views of a table renamed in the DDL as DuckDB does: its views
choose each version table's changes by a join to the control table `_uniview_ddl`, which the reference loads too
(tests/current/test_current_duckdb.py holds the cases and the rows the source shows)."""

from __future__ import annotations

import sys
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner
from reference import duckdb_family_differences

sys.path.insert(0, str(Path(__file__).parents[1] / "current"))
from test_current_duckdb import RENAMED, land_ddl, land_version

from uniview.cli.main import main
from uniview.planning.plan import GeneratorOptions
from uniview.warehouse.url import duckdb_url


def refreshed(path: Path, family: str, mode: str) -> None:
    arguments = ["refresh", "--warehouse", duckdb_url(path), "--dataset", "cdc", "--table", family, "--current"]
    result = CliRunner().invoke(main, [*arguments, mode, "--policy", "widen"])
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("mode", ["view", "table"])
def test_zetasql_answers_a_table_renamed_and_swapped_in_the_ddl_as_duckdb_does(zetasql, tmp_path, mode):
    """`RENAME TABLE rn TO rn2` in one database (a new table named rn after it), and gh-ost's swap of `t`."""
    path = tmp_path / "w.duckdb"
    with duckdb.connect(str(path)) as connection:
        land_version(connection, "rn_v_a", RENAMED, ("id",), [(1, "a", "INSERT", 100), (2, "b", "INSERT", 110)])
        land_ddl(connection, "RENAME TABLE rn TO rn2", 150)
        land_version(connection, "rn2_v_a", RENAMED, ("id",), [(3, "c", "INSERT", 200), (1, "a", "DELETE", 210)])
        land_version(connection, "rn_v_a", RENAMED, ("id",), [(9, "new", "INSERT", 300)])
        land_version(connection, "rn_v_a", RENAMED, ("id",), [(1, "x", "INSERT", 100)], "db2")
        land_version(connection, "t_v_1", RENAMED, ("id",), [(1, "a", "INSERT", 400), (2, "b", "INSERT", 410)])
        copied = [(1, "a", 0, "INSERT", 420), (2, "b", 0, "INSERT", 430)]
        land_version(connection, "_t_gho_v_1", [*RENAMED, ("extra", "INT64")], ("id",), copied)
        land_ddl(connection, "RENAME TABLE `t` TO `_t_del`, `_t_gho` TO `t`", 450)
    options = GeneratorOptions(policy="widen", current=mode)
    for family in ("rn2", "rn", "t"):
        refreshed(path, family, mode)
        assert duckdb_family_differences(zetasql, path, "cdc", family, options) == []
