"""No window of `<table>_current`, view or table, spans a whole source database.

BigQuery processes one analytic partition in one place, so a window partitioned by `_cdc_database` alone (or
not partitioned at all) over a family's history fails a large tenant's query with "Resources exceeded".  The
per-database facts (newest version, last truncate, when a column went missing) are aggregates joined back.
Every statement the generator plans for both modes is parsed with sqlglot (BigQuery's dialect), and every
window, written out or named in a WINDOW clause, must be partitioned by more than the database."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import sqlglot
from sqlglot import exp

sys.path.insert(0, str(Path(__file__).parent))

from current_table_history import table_versions

from uniview.core.landing_layout import DATABASE
from uniview.planning.plan import GeneratorOptions, plan_family
from uniview.warehouse.bigquery_current import action_script

#: What a window may be partitioned by besides columns of the key: the database, as a column or as its key.
_DATABASE_ONLY = {DATABASE.lower(), "_uniview_db"}


def statements(mode: str) -> list[str]:
    planned = plan_family("cdc", "cdc_unified", table_versions(), GeneratorOptions(current=mode))
    found = [view.statement for view in planned.all_views]
    if planned.current_table is not None:
        for action in ("create", "maintain", "re-present", "rebuild"):
            found.extend(sqlglot.transpile(action_script(planned.current_table, action), read="bigquery"))
    return found


def too_wide_windows(sql: str) -> list[str]:
    """Each window of `sql` partitioned by the database alone or by nothing, as its SQL."""
    wide = []
    for statement in sqlglot.parse(sql, read="bigquery"):
        if statement is None:
            continue
        for window in statement.find_all(exp.Window):
            named_use = window.args.get("alias") and not window.args.get("partition_by")
            if named_use:  # `OVER name`: the WINDOW clause's definition is checked on its own
                continue
            partition = {
                part.sql(dialect="bigquery").strip("`").lower() for part in window.args.get("partition_by") or []
            }
            if not partition - _DATABASE_ONLY:
                wide.append(window.sql(dialect="bigquery"))
    return wide


@pytest.mark.parametrize("mode", ["view", "table"])
def test_no_window_of_the_current_state_spans_a_whole_database(mode):
    planned = statements(mode)
    assert any("OVER" in sql.upper() for sql in planned)
    wide = [window for sql in planned for window in too_wide_windows(sql)]
    assert wide == []


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT MAX(x) OVER (PARTITION BY _cdc_database) FROM t",
        "SELECT ROW_NUMBER() OVER w FROM t WINDOW w AS (PARTITION BY _cdc_database ORDER BY p)",
        "SELECT FIRST_VALUE(v) OVER (ORDER BY p) FROM t",
        "SELECT MAX(x) OVER (PARTITION BY _uniview_db) FROM t",
    ],
)
def test_a_window_over_a_whole_database_is_found(sql):
    assert len(too_wide_windows(sql)) == 1


def test_a_window_over_a_key_passes():
    sql = "SELECT ROW_NUMBER() OVER w FROM t WINDOW w AS (PARTITION BY _cdc_database, id ORDER BY p)"
    assert too_wide_windows(sql) == []
