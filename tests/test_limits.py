"""Families at BigQuery's real limits: every limit modelled, checked before any DDL, never a view over one.

Each planned family is also held to the limits by tests/bigquery_limits.py, the same check the
BigQuery emulator tests put in front of every job, so the planner and BigQuery's own rules must agree.
"""

from __future__ import annotations

import re

import pytest
from bigquery_limits import LimitEnforcer
from families import all_conflicting_family, nested_family, synthetic_family, type_changing_family
from google.api_core.exceptions import BadRequest

from uniview.core import limits
from uniview.core.limits import LimitError
from uniview.planning.plan import GeneratorOptions, plan_family
from uniview.warehouse.base import ViewChange
from uniview.warehouse.bigquery_views import change_statement, pack_scripts


def enforce(plan) -> LimitEnforcer:
    """Send the family's DDL as the warehouse packs it, then a query on its view, through the enforcer."""
    enforcer = LimitEnforcer()
    statements = [change_statement("test-project", ViewChange(v.dataset, v.name, v.body)) for v in plan.views]
    for script in pack_scripts(statements):
        enforcer.check_job(script)
    enforcer.check_job(f"SELECT COUNT(*) FROM `test-project`.{plan.target_dataset}.{plan.top_view.name}")
    return enforcer


@pytest.mark.parametrize("versions, columns", [(250, 300), (900, 300), (40, 1_200)])
def test_large_families_fit_every_limit(versions, columns):
    plan = plan_family("cdc", "cdc_unified", synthetic_family(versions, columns), GeneratorOptions())
    footprint = plan.footprint
    assert max(footprint.view_chars) <= 250_000
    assert footprint.resolved_bytes <= limits.MAX_RESOLVED_BYTES - limits.RESOLVED_RESERVE_BYTES
    assert footprint.resources == versions + len(plan.views) <= limits.MAX_QUERY_RESOURCES
    assert footprint.columns == columns
    enforce(plan)


@pytest.mark.parametrize("current", ["view", "table"])
def test_a_long_lived_family_whose_columns_change_type_keeps_its_current_state_within_the_limits(current):
    """300 versions x 50 columns, each changing type 3 times (a change that converts older rows): naming each
    type run's version tables in the conversions made the current view 814,900 characters; version numbers as
    ranges keep it (and the current table's scripts) well within BigQuery's limits."""
    plan = plan_family("cdc", "cdc_unified", type_changing_family(300, 50), GeneratorOptions(current=current))
    assert plan.current_error is None
    if current == "view":
        assert plan.current is not None and len(plan.current.body) < 100_000
        enforcer = enforce(plan)
        enforcer.check_job(
            change_statement("test-project", ViewChange(plan.current.dataset, plan.current.name, plan.current.body))
        )
    else:
        assert plan.current_table is not None
        plan.current_table.check_limits()


def test_900_by_300_has_room_to_spare():
    """The family that resolved to 14.9 M characters in 61 views before compact SQL."""
    plan = plan_family("cdc", "cdc_unified", synthetic_family(900, 300), GeneratorOptions())
    assert plan.footprint.resolved_bytes < 0.5 * limits.MAX_RESOLVED_BYTES
    assert len(plan.views) < 30


def resolved(plan, query: str) -> str:
    """`query` with every view it reaches replaced by the view's SQL, as BigQuery expands it before running it."""
    bodies = {f"{view.dataset}.{view.name}": view.body for view in plan.all_views}

    def expand(sql: str) -> str:
        return _REFERENCE.sub(lambda m: f"FROM ({expand(bodies[m[1]])})" if m[1] in bodies else m[0], sql)

    return expand(query)


_REFERENCE = re.compile(r"\bFROM ([\w-]+\.[\w-]+)")


def test_900_versions_whose_every_column_changes_type_fit_every_limit():
    """Every version casts each of its 300 columns: named in every branch, as before, the family resolved to
    11.73 MB, over the 11 MB the view may take of BigQuery's 12 MB.  Only each view's first branch names the
    columns now; every figure is counted as BigQuery counts it and held to its limit."""
    plan = plan_family("cdc", "cdc_unified", all_conflicting_family(900, 300), GeneratorOptions())
    query = f"SELECT * FROM {plan.target_dataset}.{plan.top_view.name}"
    expanded = resolved(plan, query)
    # Resolved: the reader's query with every view expanded, within 12 MB less the reader's own 1 MB.
    assert len(expanded.encode()) <= limits.MAX_RESOLVED_BYTES - limits.RESOLVED_RESERVE_BYTES
    assert len(expanded.encode()) < 8_000_000  # the planner's own figure (every view's body) bounds it
    assert len(expanded.encode()) <= plan.footprint.resolved_bytes + len(query) < 1.01 * len(expanded.encode())
    # Tables and views one query references, within 1,000 (the reader's reserve of 10 kept free).
    tables = set(re.findall(r"\bFROM (cdc\.[\w-]+)", expanded))
    assert len(tables) == 900 and plan.footprint.resources == len(tables) + len(plan.views)
    assert len(tables) + len(plan.views) <= limits.MAX_QUERY_RESOURCES - limits.RESOURCES_RESERVE
    # Each view's SQL within 256K (and the budget), each DDL job within 1,024K characters.
    assert all(len(view.body) <= 250_000 < limits.MAX_VIEW_CHARS for view in plan.views)
    statements = [change_statement("test-project", ViewChange(v.dataset, v.name, v.body)) for v in plan.views]
    assert all(len(job) <= limits.MAX_QUERY_CHARS for job in pack_scripts(statements))
    # Columns: 300 of 10,000; views two levels deep.
    assert plan.footprint.columns == 300 <= limits.MAX_COLUMNS and plan.footprint.nesting == 2
    # Every version is read, casting every column, and the whole family passes the enforcer's own count.
    assert expanded.count("CAST(") == 900 * 300
    enforce(plan)


def test_a_family_that_cannot_fit_names_the_limit_and_the_way_out():
    with pytest.raises(LimitError) as raised:
        plan_family("cdc", "cdc_unified", synthetic_family(1_200, 300), GeneratorOptions())
    message = str(raised.value)
    assert "tables and views, over 990" in message and "1,000 per query" in message
    assert "consolidate" in message and "quotas" in message


def test_the_resolved_size_is_checked_even_when_tables_would_fit():
    # 900 versions of 700 columns, every one cast: under 1,000 tables, but far over 12 MB resolved.
    with pytest.raises(LimitError, match=r"resolve to [\d,]+ bytes of SQL, over 11,000,000"):
        plan_family("cdc", "cdc_unified", all_conflicting_family(900, 700), GeneratorOptions())


def test_nested_fields_count_toward_the_column_limit():
    with pytest.raises(
        LimitError, match=r"15,000 columns, nested fields included, are over BigQuery's limit of 10,000"
    ):
        plan_family("cdc", "cdc_unified", nested_family(3_000, fields=4), GeneratorOptions())
    plan = plan_family("cdc", "cdc_unified", nested_family(1_999, fields=4), GeneratorOptions())
    assert plan.footprint.columns == 9_995


def test_pack_scripts_keeps_order_and_every_job_within_the_limit():
    statements = [f"SELECT {n} AS n_{'x' * 90}" for n in range(50)]
    scripts = pack_scripts(statements, max_chars=1_000)
    assert len(scripts) > 1 and all(len(s) <= 1_000 for s in scripts)
    assert "".join(scripts) == "".join(statement + ";\n" for statement in statements)
    with pytest.raises(LimitError, match="per query job"):
        pack_scripts(["SELECT '" + "x" * 2_000 + "'"], max_chars=1_000)


def test_the_enforcer_fails_where_bigquery_would():
    enforcer = LimitEnforcer()
    with pytest.raises(BadRequest, match=r"maximum standard SQL query length is 1024\.00K"):
        enforcer.check_job("SELECT '" + "x" * 1_024_001 + "'")
    with pytest.raises(BadRequest, match="View definition is too long"):
        enforcer.check_job("CREATE OR REPLACE VIEW d.v AS\nSELECT '" + "x" * 256_001 + "' AS x")
    for n in range(60):
        enforcer.check_job(f"CREATE OR REPLACE VIEW d.p{n} AS\nSELECT '{'x' * 210_000}' AS x FROM d.t{n} AS v")
    with pytest.raises(BadRequest, match=r"maximum resolved query length is 12\.00M"):  # views resolve when created
        enforcer.check_job(
            "CREATE OR REPLACE VIEW d.top AS\n" + "\nUNION ALL\n".join(f"SELECT * FROM d.p{n}" for n in range(60))
        )
    enforcer.check_job(
        "CREATE OR REPLACE VIEW d.top AS\n" + "\nUNION ALL\n".join(f"SELECT * FROM d.p{n}" for n in range(57))
    )
    with pytest.raises(BadRequest, match=r"maximum resolved query length is 12\.00M"):
        enforcer.check_job("SELECT * FROM d.top CROSS JOIN d.p57")
    tables = LimitEnforcer()
    tables.check_job(
        "CREATE VIEW d.many AS\n" + "\nUNION ALL\n".join(f"SELECT 1 FROM d.t{n} AS v" for n in range(1_000))
    )
    with pytest.raises(BadRequest, match="Too many tables"):
        tables.check_job("SELECT * FROM d.many")


def test_a_family_nearing_the_per_query_limits_is_told_to_consolidate():
    from uniview.core.limits import FamilyFootprint

    def footprint(resources: int, resolved: int) -> FamilyFootprint:
        return FamilyFootprint("orders", [1000], resolved, resources, 10, 1)

    assert footprint(792, 1_000).nearing_limits() is None  # 80% of 990
    assert "uniview consolidate --table orders" in footprint(793, 1_000).nearing_limits()
    assert "uniview consolidate --table orders" in footprint(10, 9_000_000).nearing_limits()
