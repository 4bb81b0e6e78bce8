"""Every statement BigQuery runs to keep `<table>_current` as a table (uniview.warehouse.bigquery_current's
script jobs: build, maintain, re-present) is accepted by the ZetaSQL analyzer, statement by statement, with
the temporary tables' and the state tables' columns as the analyzer derives them; every script also fits
BigQuery's job rules (tests/bigquery_limits.py: no DDL on a permanent table inside the transaction).

The family is the random history's (tests/current/current_table_history.py) with a version more whose
column is STRING where the others have INT64, and keys, carried values, defaults and NOT NULL columns."""

from __future__ import annotations

import datetime as dt
import json
import sys
from pathlib import Path

import pytest
from checks import catalog_of, check_family

from scripts import analyze_script

sys.path.insert(0, str(Path(__file__).parents[1]))
sys.path.insert(0, str(Path(__file__).parents[1] / "current"))

from bigquery_limits import LimitEnforcer
from current_table_history import FAMILY, RENAMED_AND_READDED, RENAMES, table_versions

from uniview.core.landing_layout import CDC_COLUMNS
from uniview.core.renames import apply_renames
from uniview.core.schema import Column, TableVersion
from uniview.core.types import parse_type
from uniview.current.table import TEMPORARY, AppliedBatch, BatchWindow
from uniview.current.view import VERSION_COLUMN
from uniview.planning.plan import GeneratorOptions, plan_family
from uniview.warehouse.bigquery_current import action_script


def versions() -> list[TableVersion]:
    found = table_versions()
    retyped = [("id", "INT64"), ("name", "STRING"), ("score", "STRING"), *CDC_COLUMNS]
    columns = tuple(Column(name, parse_type(t)) for name, t in retyped)
    found.append(TableVersion(f"{FAMILY}_v_e5", FAMILY, "e5", len(found), columns, ("id",)))
    return found


def test_every_statement_of_every_script_is_accepted_and_fits_the_job_rules(dml):
    planned = plan_family("cdc", "cdc_unified", versions(), GeneratorOptions(current="table"))
    current = planned.current_table
    assert current is not None and current.carried and current.rules.gone
    catalog = catalog_of(planned)
    check_family(dml, planned, source_column=VERSION_COLUMN, catalog=catalog)
    enforcer = LimitEnforcer()
    analyzed = 0
    for action in ("create", "maintain", "re-present", "rebuild"):
        script = action_script(current, action, drop_view=action == "create")
        enforcer.check_job(script)
        inside = script.split("BEGIN TRANSACTION;\n")[-1].split("COMMIT TRANSACTION;\n")[0]
        if action in ("maintain", "re-present"):
            assert "MERGE INTO" in inside and "CREATE OR REPLACE TABLE" not in inside
        analyzed += analyze_script(dml, script, catalog, TEMPORARY)
    # a maintenance of batches that name their tables reads those, each in the unified shape, not the view
    reads = (planned.versions[0].table_name, f"{FAMILY}_v_e5")
    window = BatchWindow(dt.datetime(2026, 1, 1, tzinfo=dt.UTC), (), reads)
    script = action_script(current, "maintain", False, window, (AppliedBatch("s", 1, "2026-01-01 00:00:00.000000"),))
    assert current.unified not in script and all(f"cdc.{table}" in script for table in reads)
    enforcer.check_job(script)
    analyzed += analyze_script(dml, script, catalog, TEMPORARY)
    assert analyzed > 20


def test_the_scripts_of_a_renamed_carried_column_and_a_column_dropped_and_added_are_accepted(dml):
    """The random history's later versions: `name` renamed `title` (its carried value looked up under both
    names), qty dropped and added again at the end (two lives, one gone point each)."""
    declared = []
    for number, version in enumerate(RENAMED_AND_READDED):
        columns = tuple(Column(name, parse_type(t)) for name, t in (*version.columns, *CDC_COLUMNS))
        defaults = tuple((name, json.dumps(value)) for name, value in version.defaults.items())
        declared.append(
            TableVersion(version.table, FAMILY, version.name, number, columns, ("id",), defaults, version.not_null)
        )
    planned = plan_family("cdc", "cdc_unified", apply_renames(declared, RENAMES), GeneratorOptions(current="table"))
    current = planned.current_table
    assert current is not None
    assert any(
        "'name' IN UNNEST" in unavailable for _, column, unavailable, _ in current.rules.carried if column == "title"
    )
    assert {name for name, _ in current.rules.gone} >= {"_uniview_gone_2_0", "_uniview_gone_2_1"}  # qty's two lives
    catalog = catalog_of(planned)
    check_family(dml, planned, source_column=VERSION_COLUMN, catalog=catalog)
    for action in ("create", "maintain", "re-present"):
        script = action_script(current, action, drop_view=action == "create")
        LimitEnforcer().check_job(script)
        assert analyze_script(dml, script, catalog, TEMPORARY) >= 5


def test_the_job_rules_refuse_a_permanent_table_made_inside_the_transaction():
    planned = plan_family("cdc", "cdc_unified", versions(), GeneratorOptions(current="table"))
    build = action_script(planned.current_table, "create")
    wrapped = build.replace("CREATE OR REPLACE TEMP", "BEGIN TRANSACTION;\nCREATE OR REPLACE TEMP", 1)
    wrapped = wrapped.replace("SELECT (SELECT COUNT(*)", "COMMIT TRANSACTION;\nSELECT (SELECT COUNT(*)", 1)
    with pytest.raises(Exception, match="DDL statements are not supported in a transaction"):
        LimitEnforcer().check_job(wrapped)


def test_the_scripts_of_a_family_whose_columns_are_named_like_short_aliases_are_accepted(dml):
    """GoogleSQL reads a column before a table alias: with a column `c`, `c._cdc_database` was a field access on
    it, and every maintenance of such a family's `<table>_current` failed on BigQuery.  The statements' aliases
    are named apart from source columns."""
    names = ("a", "b", "c", "e", "f", "g", "s", "w")
    shapes = [[*names], [*names[:-1]]]  # w dropped: a gone point, the redo's joins
    planned = plan_family(
        "cdc",
        "cdc_unified",
        [
            TableVersion(
                f"t_v_{n}",
                "t",
                str(n),
                n,
                tuple(
                    Column(name, parse_type(t))
                    for name, t in [("id", "INT64"), *((c, "STRING") for c in shape), *CDC_COLUMNS]
                ),
                ("id",),
            )
            for n, shape in enumerate(shapes)
        ],
        GeneratorOptions(current="table"),
    )
    current = planned.current_table
    assert current is not None and current.rules.gone
    catalog = catalog_of(planned)
    check_family(dml, planned, source_column=VERSION_COLUMN, catalog=catalog)
    for action in ("create", "maintain", "re-present"):
        assert (
            analyze_script(dml, action_script(current, action, drop_view=action == "create"), catalog, TEMPORARY) >= 5
        )
