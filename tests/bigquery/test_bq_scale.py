"""The BigQuery path at scale, on the emulator with BigQuery's limits enforced on every job: blue-green
apply that leaves a queryable view after every statement, a top view whose schema follows its parts,
jobs per event, and a family whose DDL needs more than one job."""

from __future__ import annotations

from families import synthetic_family

from uniview.ops.refresh import RefreshRequest, refresh
from uniview.planning.plan import GeneratorOptions
from uniview.warehouse import bigquery as bigquery_module
from uniview.warehouse.bigquery_views import pack_scripts

SMALL_PARTS = GeneratorOptions(max_view_chars=1_000)


def create_versions(run_sql, dataset, versions, rows_per_version=1):
    """Create the version tables (one script job) with one row each: id = the version's index."""
    statements = []
    for version in versions:
        columns = ", ".join(f"`{c.name}` {c.type.sql()}" for c in version.columns)
        statements.append(f"CREATE TABLE `{dataset}`.`{version.table_name}` ({columns})")
    run_sql(";\n".join(statements))
    for index, version in enumerate(versions):
        first = version.columns[0]
        value = str(index) if first.type.sql() == "INT64" else f"'{index}'"
        run_sql(f"INSERT INTO `{dataset}`.`{version.table_name}` (`{first.name}`) VALUES ({value})")


def view_rows(bq_client, dataset, family="events"):
    rows = bq_client.query(f"SELECT COUNT(*) AS n FROM `{dataset}_unified`.`{family}_unified`").result()
    return next(iter(rows))["n"]


def view_types(bq_client, dataset, family="events"):
    return [(f.name, f.field_type) for f in bq_client.get_table(f"{dataset}_unified.{family}_unified").schema]


def test_apply_interrupted_after_each_statement_leaves_a_queryable_view_and_a_rerun_converges(
    limited_warehouse, bq_client, run_sql, dataset, monkeypatch
):
    family = synthetic_family(8, 6, conflict_share=0.0)
    create_versions(run_sql, dataset, family[:6])
    refresh(limited_warehouse, RefreshRequest(dataset, ("events",), options=SMALL_PARTS))
    assert view_rows(bq_client, dataset) == 6
    # Two new versions, one changing a column's type: every part changes.
    changed = synthetic_family(8, 6, conflict_share=0.5)[6:]
    create_versions(run_sql, dataset, changed)
    monkeypatch.setattr(bigquery_module, "pack_scripts", lambda statements: list(statements))  # one job each
    run_script = bigquery_module.BigQueryWarehouse._run_script
    statements_run = []

    def interrupted_after(limit):
        def run(self, text, location):
            if len(statements_run) >= limit:
                raise bigquery_module.NotFoundError("interrupted")  # not retried: the apply stops here
            statements_run.append(text)
            return run_script(self, text, location)

        return run

    seen = set()
    for limit in range(1, 40):
        statements_run.clear()
        monkeypatch.setattr(bigquery_module.BigQueryWarehouse, "_run_script", interrupted_after(limit))
        (outcome,) = refresh(limited_warehouse, RefreshRequest(dataset, ("events",), options=SMALL_PARTS))
        count = view_rows(bq_client, dataset)
        assert count in (6, 8), f"after {limit} statements the view shows {count} rows"
        seen.add(count)
        if outcome.error is None:
            break
    assert seen == {6, 8}, "the interruptions must have hit before and after the switch"
    monkeypatch.setattr(bigquery_module.BigQueryWarehouse, "_run_script", run_script)
    (outcome,) = refresh(limited_warehouse, RefreshRequest(dataset, ("events",), options=SMALL_PARTS))
    assert outcome.error is None and not outcome.changed
    assert view_rows(bq_client, dataset) == 8


def test_top_view_schema_follows_a_type_change_in_its_parts(limited_warehouse, bq_client, run_sql, dataset):
    first = synthetic_family(6, 5, conflict_share=0.0)
    create_versions(run_sql, dataset, first)
    refresh(limited_warehouse, RefreshRequest(dataset, ("events",), options=SMALL_PARTS))
    before = view_types(bq_client, dataset)
    later = synthetic_family(8, 5, conflict_share=1.0)[7:]  # odd versions change every column's type
    create_versions(run_sql, dataset, later)
    (outcome,) = refresh(limited_warehouse, RefreshRequest(dataset, ("events",), options=SMALL_PARTS))
    assert f"{dataset}_unified.events_unified" in outcome.replaced
    after = view_types(bq_client, dataset)
    assert after != before
    assert [name for name, _ in after] == [name for name, _ in before]


def test_two_jobs_per_changed_event_and_one_when_unchanged(limited_warehouse, run_sql, dataset):
    create_versions(run_sql, dataset, synthetic_family(6, 5)[:5])
    refresh(limited_warehouse, RefreshRequest(dataset, ("events",), options=SMALL_PARTS))
    create_versions(run_sql, dataset, synthetic_family(6, 5)[5:])
    started = limited_warehouse.jobs_started
    (outcome,) = refresh(limited_warehouse, RefreshRequest(dataset, ("events",), options=SMALL_PARTS))
    assert outcome.changed and limited_warehouse.jobs_started - started == 2
    started = limited_warehouse.jobs_started
    (outcome,) = refresh(limited_warehouse, RefreshRequest(dataset, ("events",), options=SMALL_PARTS))
    assert not outcome.changed and limited_warehouse.jobs_started - started == 1


def test_a_family_whose_ddl_is_over_one_jobs_limit_applies_in_several(
    limited_warehouse, limits_enforcer, bq_client, run_sql, dataset, monkeypatch
):
    """Packing into jobs, shown at a small job budget (tests/test_limits.py packs the 900 x 300 family at
    BigQuery's real 1,024K): the jobs run in order, parts before the top view, and the view reads all."""
    monkeypatch.setattr(bigquery_module, "pack_scripts", lambda statements: pack_scripts(statements, max_chars=2_500))
    create_versions(run_sql, dataset, synthetic_family(12, 12))
    options = GeneratorOptions(max_view_chars=2_000)
    (outcome,) = refresh(limited_warehouse, RefreshRequest(dataset, ("events",), options=options))
    assert outcome.error is None and len(outcome.jobs) >= 2
    assert view_rows(bq_client, dataset) == 12
    limits_enforcer.check_job(f"SELECT * FROM `{dataset}_unified`.`events_unified`")
