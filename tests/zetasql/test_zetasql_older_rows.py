"""ZetaSQL's reference implementation computes `<table>_current` for a column dropped and added again as DuckDB
does, the version each database entered the column's life at included (tests/current/test_older_rows.py holds
the cases and the values the sources show)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from checks import catalog_of, check_family
from click.testing import CliRunner
from reference import duckdb_family_differences

from scripts import analyze_script

sys.path.insert(0, str(Path(__file__).parents[1] / "current"))
from test_older_rows import CASES

from uniview.cli.main import main
from uniview.core.landing_layout import CDC_COLUMNS
from uniview.core.schema import Column, TableVersion
from uniview.core.types import parse_type
from uniview.current.table import TEMPORARY
from uniview.current.view import VERSION_COLUMN
from uniview.planning.plan import GeneratorOptions, plan_family
from uniview.warehouse.bigquery_current import action_script
from uniview.warehouse.url import duckdb_url


@pytest.mark.parametrize("mode", ["view", "table"])
@pytest.mark.parametrize("case", list(CASES))
def test_zetasql_shows_the_default_of_the_version_the_column_was_added_with_as_duckdb_does(
    zetasql, tmp_path, case, mode
):
    path = tmp_path / "w.duckdb"
    CASES[case].land(path)
    arguments = ["refresh", "--warehouse", duckdb_url(path), "--dataset", "cdc", "--table", "t", "--current"]
    result = CliRunner().invoke(main, [*arguments, mode, "--policy", "uniview"])
    assert result.exit_code == 0, result.output
    options = GeneratorOptions(policy="uniview", current=mode)
    assert duckdb_family_differences(zetasql, path, "cdc", "t", options) == []


def test_the_current_tables_scripts_that_keep_the_version_entered_are_accepted(dml):
    """The scripts BigQuery runs for a family whose older rows depend on the version a database entered: the
    facts keep each version's oldest change, and the databases' facts join them with the gone points."""
    case = CASES["added again in place with another default"]
    versions = [
        TableVersion(
            table,
            "t",
            table,
            number,
            tuple(Column(name, parse_type(t)) for name, t in (*columns, *CDC_COLUMNS)),
            ("id",),
            tuple((name, json.dumps(value)) for name, value in case.defaults.get(table, {}).items()),
        )
        for number, (table, columns) in enumerate(case.versions.items())
    ]
    planned = plan_family("cdc", "cdc_unified", versions, GeneratorOptions(current="table"))
    current = planned.current_table
    assert current is not None and current.rules.entered
    catalog = catalog_of(planned)
    check_family(dml, planned, source_column=VERSION_COLUMN, catalog=catalog)
    for action in ("create", "maintain", "re-present"):
        script = action_script(current, action, drop_view=action == "create")
        assert "_uniview_min" in script
        assert analyze_script(dml, script, catalog, TEMPORARY) >= 5
