"""Every statement of BigQuery's load step is accepted by the ZetaSQL analyzer, and every job fits BigQuery's
limits: the routing keys' query, each typing script statement by statement (the routed lines' temporary
table, each typed staging table, the counts), and every promotion INSERT from the typed staging tables into
the version tables and the quarantine."""

from __future__ import annotations

import sys
from pathlib import Path

from analyzer import Catalog

from scripts import analyze_script, resolve

sys.path.insert(0, str(Path(__file__).parents[1]))
sys.path.insert(0, str(Path(__file__).parents[1] / "sink"))

from bigquery_limits import LimitEnforcer
from typing_cases import TYPES, VERDICT_SCHEMA

from uniview.core.landing_layout import CDC_COLUMNS, QUARANTINE_TABLE
from uniview.core.types import parse_type
from uniview.sink.bigquery_promotion import TypedBatch, quarantine_inserts, route_inserts
from uniview.sink.bigquery_typing import DECISIONS_PARAMETER, ROUTED, keys_query, too_wide, typing_scripts
from uniview.sink.frames import QUARANTINE_COLUMNS, TOO_LARGE_SHA256, TOO_LARGE_SIZE
from uniview.sink.landing import BatchKey
from uniview.sink.mysql_types import bigquery_type
from uniview.sink.routing import Decision, LandingColumn, RecordKey, RoutingPlan, VersionRoute, reject_routes

PROJECT, CONTROL, LINES = "p", "ctl", "lines"
#: The types whose typing is nested deepest: their statements are accepted, but the analyzer's answer (the resolved
#: statement) is deeper than protobuf's Python decoder reads (100 levels).  Their typing expressions are analyzed
#: on their own by test_zetasql_load_typing.py; the statements here hold every other type.
_DEEPEST = ("ARRAY<STRUCT<d DATE, n NUMERIC(20, 2)>>",)
#: One version per type (with a wide decimal), one of many columns in two datasets.
SCHEMAS = [
    *([("c", declared)] for declared in [*TYPES, "decimal(40,10)"] if declared not in _DEEPEST),
    [*VERDICT_SCHEMA, ("a.b", "varchar(5)"), ("select", "json"), ("space key", "time")],
]


def _routes() -> list[VersionRoute]:
    routes = []
    for number, schema in enumerate(SCHEMAS):
        columns = tuple(LandingColumn(name, declared, bigquery_type(declared).bq_type) for name, declared in schema)
        datasets = ("tenant_a", "tenant_b") if number == len(SCHEMAS) - 1 else ("tenant_a",)
        routes += [VersionRoute(dataset, f"t{number}", "v1", columns, exists=False) for dataset in datasets]
    return routes


def _catalog(routes: list[VersionRoute]) -> Catalog:
    catalog = Catalog()
    text, number = parse_type("STRING"), parse_type("INT64")
    lines = [("value", text), ("source_file", text), ("_bytes", parse_type("BYTES")), ("_original_line", text)]
    catalog.add_table(CONTROL, LINES, [*lines, (TOO_LARGE_SIZE, number), (TOO_LARGE_SHA256, text)])
    for route in routes:
        columns = [(c.name, c.bq_type) for c in route.columns] + [(n, parse_type(t)) for n, t in CDC_COLUMNS]
        catalog.add_table(route.dataset, route.table_name, columns)
        catalog.add_table(route.dataset, QUARANTINE_TABLE, [(n, parse_type(t)) for n, t in QUARANTINE_COLUMNS])
    return catalog


def _local(sql: str) -> str:
    """A statement as the catalog names things: no project, the decisions as a literal."""
    return sql.replace(f"`{PROJECT}`.", "").replace(f"@{DECISIONS_PARAMETER}", "'[]'")


def test_every_statement_of_the_load_step_is_accepted_and_fits_the_job_rules(dml):
    routes = _routes()
    catalog = _catalog(routes)
    enforcer = LimitEnforcer()
    lines = f"`{PROJECT}`.`{CONTROL}`.`{LINES}`"
    for rewritten in (False, True):
        keys = keys_query(lines, rewritten)
        enforcer.check_job(keys)
        assert dml.analyze(_local(keys), catalog).error is None
    chunks, scripts = typing_scripts(PROJECT, CONTROL, lines, True, routes, "uniview", "s#0", "staged_")
    analyzed = 0
    for script in scripts:
        enforcer.check_job(script.sql)
        analyzed += analyze_script(dml, _local(script.sql), catalog, [ROUTED])
    assert analyzed == sum(len(script.tables) + 2 for script in scripts)  # the routed lines, tables, counts
    batch = TypedBatch(BatchKey("s", 0), 0, routes, chunks, notify=False)
    inserts = route_inserts(PROJECT, CONTROL, batch, dict.fromkeys(range(len(routes)), 1))
    inserts += quarantine_inserts(PROJECT, CONTROL, ["tenant_a", "tenant_b"], QUARANTINE_TABLE, batch)
    assert len(inserts) == len(routes) + 2 * len(chunks)
    for insert in inserts:
        resolve(dml, _local(insert.sql), catalog)


def test_a_batch_of_wide_versions_is_typed_by_several_scripts_each_under_the_query_limit():
    """Three versions of 700 columns take three typing statements (each over a third of a job), two scripts."""
    declared = ["int(11)", "varchar(255)", "decimal(12,2)", "datetime", "json"]
    routes = [
        VersionRoute("d", f"wide{n}", "v1", tuple(_column(f"c{n}_{j}", declared[j % 5]) for j in range(700)), True)
        for n in range(3)
    ]
    chunks, scripts = typing_scripts(PROJECT, CONTROL, "`p.ctl.lines`", False, routes, "uniview", "s#0", "staged_")
    enforcer = LimitEnforcer()
    for script in scripts:
        enforcer.check_job(script.sql)
    assert len(scripts) >= 2 and sorted(i for chunk in chunks for i in chunk.routes) == [0, 1, 2]
    assert [table for script in scripts for table in script.tables] == [chunk.table for chunk in chunks]


def test_a_version_too_wide_to_type_in_one_statement_is_rejected_as_an_invalid_schema():
    """Thousands of columns take more SQL to type than a BigQuery job holds: routing rejects their records
    (quarantined with the reason, nothing stops), and the typing leaves the version out."""
    narrow = VersionRoute("d", "narrow", "v1", (_column("id", "int(11)"),), True)
    wide = VersionRoute("d", "wide", "v1", tuple(_column(f"c{j}", "varchar(10)") for j in range(4_000)), True)
    why = too_wide([narrow, wide])
    assert list(why) == [1] and "4,000 columns" in why[1]
    keys = [RecordKey("db", t, "v1", None, None) for t in ("narrow", "wide")]
    plan = reject_routes(RoutingPlan([narrow, wide], {k: Decision("d", i) for i, k in enumerate(keys)}), why)
    assert plan.decisions[keys[0]] == Decision("d", 0)
    assert (plan.decisions[keys[1]].route, plan.decisions[keys[1]].reason) == (None, "invalid_schema")
    chunks, scripts = typing_scripts(PROJECT, CONTROL, "`p.ctl.lines`", False, plan.routes, "u", "s#0", "staged_")
    assert [chunk.routes for chunk in chunks] == [[0]]
    LimitEnforcer().check_job(scripts[0].sql)


def _column(name: str, declared: str) -> LandingColumn:
    return LandingColumn(name, declared, bigquery_type(declared).bq_type)
