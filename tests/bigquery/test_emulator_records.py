"""The emulator's own records as uniview's shim keeps them in the emulator's process
(uniview.local.bigquery_emulator_records) give the answers the emulator's DuckDB tables give: its jobs (every
listing the jobs API asks for, loads, deletes), a query result table's listing, and the resources of datasets and
tables, which a write is seen by at once."""

from __future__ import annotations

import textwrap
import threading
import uuid

import pytest
from emulator_shim_support import compared_answers

from uniview.local.bigquery_emulator_memo import WriteMemo

pytest.importorskip("google.cloud.bigquery")

#: Run by the emulator's interpreter: the same jobs saved with the emulator's own store (its DuckDB table) and with
#: the shim's, then every listing, load and delete of both.
COMPARE_JOBS = textwrap.dedent(
    """
    import itertools, json, pathlib, runpy, sys
    from local_bigquery.settings import settings
    from local_bigquery.jobs import store
    from local_bigquery.models import Job
    shim_path, settings.data_dir, settings.default_project_id = sys.argv[1], pathlib.Path(sys.argv[2]), sys.argv[3]
    emulator = (store.save, store.load, store.list_, store.delete)
    runpy.run_path(shim_path)
    shim = (store.save, store.load, store.list_, store.delete)
    assert emulator != shim
    def job(project, job_id, parent, state, created):
        statistics = {"creationTime": str(created)} | ({"parentJobId": parent} if parent else {})
        return Job.model_validate({
            "jobReference": {"projectId": project, "jobId": job_id},
            "statistics": statistics, "status": {"state": state},
            "configuration": {"query": {"query": f"SELECT '{job_id}'"}},
        })
    jobs = [
        job("records", "a", None, "DONE", 1000), job("records", "b", None, "RUNNING", 2000),
        job("records", "c", None, "PENDING", 2000), job("records", "a1", "a", "DONE", 1500),
        job("records", "a2", "a", "DONE", 1500), job("records", "b1", "b", "RUNNING", 2500),
        job("elsewhere", "a", None, "DONE", 1000), job("records", "c", None, "DONE", 3000),  # saved again
    ]
    def answers(save, load, list_, delete):
        for each in jobs:
            save(each)
        ids = lambda found: [j.jobReference.jobId for j in found]
        grid = itertools.product(
            [None, ["DONE"], ["PENDING", "RUNNING"], []], [None, "a", "b", "missing"], [None, 1500, 2001], [None, 1500]
        )
        listed = [ids(list_("records", *criteria)) for criteria in grid]
        loaded = [load(p, j) and load(p, j).dump() for p, j in [("records", "a1"), ("records", "c"), ("records", "x")]]
        delete("records", "a")
        after = [ids(list_(p, None, parent)) for p in ("records", "elsewhere") for parent in (None, "a", "b")]
        return [listed, loaded, after]
    print(json.dumps([answers(*emulator), answers(*shim)]))
    """
)


def test_the_shims_jobs_are_the_emulators(tmp_path):
    emulator, shim = compared_answers(tmp_path, (), COMPARE_JOBS)
    assert shim == emulator
    listed, loaded, after = emulator
    assert listed[0] == ["c", "b", "a"]  # the jobs with no parent, the newest first; a job saved again once
    assert listed[6] == ["a1", "a2"]  # a job's children: of one creation time, by id
    assert loaded[1]["status"]["state"] == "DONE" and loaded[2] is None
    assert after == [["c", "b"], [], ["b1"], ["a"], [], []]  # a job's delete takes its children, in its project only


STATEMENTS = (
    "SELECT 1 AS x UNION ALL SELECT 2 UNION ALL SELECT 3",
    "SELECT 'one' AS y",
    "CREATE SCHEMA kept",
    "CREATE TABLE kept.orders (id INT64)",
)

#: Run by the emulator's interpreter: every query result table's listing, by the emulator's duckdb_tables() query and
#: by the shim's lookup.
COMPARE_RESULTS = textwrap.dedent(
    """
    import json, pathlib, runpy, sys
    from local_bigquery.settings import settings
    shim_path, settings.data_dir, settings.default_project_id = sys.argv[1], pathlib.Path(sys.argv[2]), sys.argv[3]
    shim = runpy.run_path(shim_path)
    emulator_objects, database = shim["_emulator_objects"], shim["database"]
    names = [name for name, _, _ in emulator_objects("emulator", "_results", None)]
    answers = [
        [name, emulator_objects("emulator", "_results", name), database.objects("emulator", "_results", name)]
        for name in names + [f"{settings.default_project_id}:missing"]
    ]
    print(json.dumps(answers))
    """
)


def test_the_shims_result_table_listing_is_the_emulators(tmp_path):
    answers = compared_answers(tmp_path, STATEMENTS, COMPARE_RESULTS)
    assert [a for a in answers if a[1] != a[2]] == []
    assert sorted(listing[0][2] for _, listing, _ in answers if listing) == [1, 3]  # one row, then three
    assert answers[-1][1:] == [[], []]


def test_a_resource_write_is_seen_by_the_next_read_at_once(bq_client, dataset):
    """Table and dataset resources written by the REST API, by DDL and by a drop are read back as written."""
    from google.api_core.exceptions import NotFound
    from google.cloud import bigquery

    name = f"{bq_client.project}.{dataset}.orders"
    bq_client.create_table(bigquery.Table(name, schema=[bigquery.SchemaField("id", "INT64")]))
    for round_number in range(3):
        table = bq_client.get_table(name)  # its etag, which every write changes
        table.description = f"by the API, round {round_number}"
        bq_client.update_table(table, ["description"])
        assert bq_client.get_table(name).description == table.description
        bq_client.query(f"ALTER TABLE `{name}` SET OPTIONS (description = 'by DDL, round {round_number}')").result()
        assert bq_client.get_table(name).description == f"by DDL, round {round_number}"
    schema = bq_client.get_dataset(dataset)
    schema.description = "the dataset's"
    bq_client.update_dataset(schema, ["description"])
    assert bq_client.get_dataset(dataset).description == "the dataset's"
    bq_client.query(f"DROP TABLE `{name}`").result()
    with pytest.raises(NotFound):
        bq_client.get_table(name)


def test_information_schema_jobs_lists_the_jobs_kept(bq_client):
    marker = f"records_{uuid.uuid4().hex[:8]}"
    job = bq_client.query(f"SELECT '{marker}' AS marker", job_id_prefix=marker)
    job.result()
    rows = bq_client.query(
        f"SELECT job_id, state, query FROM `region-us`.INFORMATION_SCHEMA.JOBS WHERE STARTS_WITH(job_id, '{marker}')"
    ).result()
    assert [tuple(row.values()) for row in rows] == [(job.job_id, "DONE", f"SELECT '{marker}' AS marker")]


def test_an_answer_is_kept_until_a_write_and_never_when_a_write_came_while_it_was_read():
    memo, reads = WriteMemo(), []

    def read(answer: str) -> str:
        reads.append(answer)
        return answer

    assert memo.get("k", lambda: read("first")) == "first"
    assert memo.get("k", lambda: read("again")) == "first" and reads == ["first"]
    memo.written()
    assert memo.get("k", lambda: read("second")) == "second"

    started, finish = threading.Event(), threading.Event()

    def slow_read() -> str:
        started.set()
        finish.wait(10)
        return read("read before the write")

    reader = threading.Thread(target=memo.get, args=("slow", slow_read))
    reader.start()
    started.wait(10)
    memo.written()  # committed while the read was under way: its answer may be the older one
    finish.set()
    reader.join(10)
    assert memo.get("slow", lambda: read("read after the write")) == "read after the write"
