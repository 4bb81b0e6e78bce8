"""The local BigQuery emulator's own records, kept in its process for speed alone.  Executed by the emulator's own
interpreter (imported by bigquery_emulator_shim), never imported by uniview.

local-bigquery 0.3.2 keeps three kinds of record in its DuckDB file, and each job reads or writes them many times:

1. Jobs: each job's resource is written with INSERT OR REPLACE when it is created, started and done, and again for
   every statement of a script (about 10 ms of CPU each).  Here the jobs are kept in a dict (JobRecords), with the
   same answers; a statement that reads INFORMATION_SCHEMA.JOBS first copies them into the emulator's table.  The
   jobs of an emulator that stopped are gone; its datasets, tables and data are not.
2. The resources of datasets, tables, routines, row access policies, models and indexes: read from its tables for
   every table a statement names.  Here each read is kept until the next write of any resource (WriteMemo).
3. A query's result table: looked up with DuckDB's duckdb_tables(), which loads every DuckLake catalog attached
   (60-130 ms).  Here it is looked up by its name in the emulator's own database.
"""

from __future__ import annotations

import json
from typing import Any

import duckdb
from local_bigquery.catalog import metadata, tables
from local_bigquery.engine import database
from local_bigquery.jobs import store
from local_bigquery.models import Job
from local_bigquery.sql.rules import STATEMENT_RULES, information_schema
from sqlglot import exp

from uniview.local.bigquery_emulator_memo import JobRecords, WriteMemo

#: The emulator's own database and the schema of its query result tables.
RESULTS_DATABASE = "emulator"

jobs = JobRecords()
resources = WriteMemo()


def _save_job(job: Job) -> Job:
    reference, statistics = job.jobReference, job.statistics
    jobs.save(
        (
            reference.projectId,
            reference.jobId,
            statistics.parentJobId,
            job.status.state,
            int(statistics.creationTime),
            json.dumps(job.dump()),
        )
    )
    return job


def _load_job(project_id: str, job_id: str) -> Job | None:
    resource = jobs.load(project_id, job_id)
    return None if resource is None else Job.model_validate_json(resource)


def _list_jobs(project_id: str, *criteria: Any) -> list[Job]:
    return [Job.model_validate_json(resource) for resource in jobs.list_(project_id, *criteria)]


def _jobs_table_filled(tree: exp.Expression, context: Any) -> exp.Expression:
    """Before a statement that reads INFORMATION_SCHEMA.JOBS: the emulator's jobs table holds the jobs kept here."""
    views = (information_schema._view(table) for table in tree.find_all(exp.Table))
    if any(view is not None and view[0] in ("JOBS", "JOBS_BY_PROJECT", "JOBS_BY_USER") for view in views):
        with database.cursor() as cursor:
            cursor.execute("BEGIN TRANSACTION")
            cursor.execute("DELETE FROM emulator.jobs")
            rows = jobs.rows()
            if rows:
                cursor.executemany("INSERT INTO emulator.jobs VALUES (?, ?, ?, ?, ?, ?)", rows)
            cursor.execute("COMMIT")
    return tree


_emulator_list_resources = metadata.list_
_emulator_save_resource = metadata.save
_emulator_delete_resource = metadata.delete


def _list_resources(model: Any, *keys: str) -> list[Any]:
    """metadata.list_: the resources of a kind under `keys`, read once per write; each caller gets its own copies."""
    found = resources.get((model, keys), lambda: _emulator_list_resources(model, *keys))
    return [resource.model_copy(deep=True) for resource in found]


def _save_resource(resource: Any, *keys: str) -> Any:
    try:
        return _emulator_save_resource(resource, *keys)
    finally:
        resources.written()


def _delete_resource(model: Any, *keys: str) -> None:
    try:
        _emulator_delete_resource(model, *keys)
    finally:
        resources.written()


def result_listing(table_id: str) -> list[tuple[str, str, int]]:
    """The emulator's listing of one query result table (`database.objects`' rows): its row count, as the
    estimated size duckdb_tables() gives for a table no row was deleted from."""
    name = database.quote(RESULTS_DATABASE, tables.RESULTS, table_id)
    try:
        ((count,),) = database.fetch(f"SELECT count(*) FROM {name}")
    except duckdb.CatalogException:
        return []
    return [(table_id, "TABLE", count)]


def install() -> None:
    """Patch the emulator's modules to keep its records here."""
    store.save, store.load, store.list_ = _save_job, _load_job, _list_jobs
    store.delete = jobs.delete
    metadata.list_, metadata.save, metadata.delete = _list_resources, _save_resource, _delete_resource
    STATEMENT_RULES.insert(0, _jobs_table_filled)
