"""The shim's listings and columns are read once per snapshot of a project's DuckLake catalog
(uniview.local.bigquery_emulator_memo) and never given after a change: a table or view created, altered, filled,
emptied, renamed or dropped by any connection (another cursor, a transaction, the REST API's tables.insert,
tabledata.insertAll, DML, MERGE, DDL) is seen by the next read at once, and a change another connection has not
committed yet is not seen, as with the emulator's own uncached reads.  A statement's translation is kept for the
catalogs' schema versions and the resources it read (TranslationMemo), never given once either changed."""

from __future__ import annotations

import json
import textwrap
import threading

import pytest
from emulator_shim_support import compared_answers

from uniview.local.bigquery_emulator import DEFAULT_PROJECT
from uniview.local.bigquery_emulator_memo import COLUMN, LISTING, Row, SnapshotMemo, TranslationMemo


class Catalog:
    """A catalog whose snapshot id a test moves on, counting the reads of it."""

    def __init__(self) -> None:
        self.snapshot: int | None = 1
        self.tables = ["orders"]
        self.loads = 0
        self.derived = 0

    def latest(self, catalog: str) -> int | None:
        return self.snapshot

    def load(self, catalog: str) -> tuple[int, list[Row]]:
        self.loads += 1
        assert self.snapshot is not None
        return self.snapshot, [(LISTING, "first", name, "TABLE", 0) for name in self.tables] + [
            (COLUMN, "first", name, "id", 0) for name in self.tables
        ]

    def shape(self) -> str:
        self.derived += 1
        return f"shape at {self.snapshot}"


def test_a_catalog_is_read_once_per_snapshot_and_again_after_a_commit():
    catalog = Catalog()
    memo = SnapshotMemo(catalog.latest, catalog.load)
    for _ in range(3):
        state = memo.catalog("p")
        assert state is not None
        assert state.listing("first") == state.listing("first", "orders") == [("orders", "TABLE", 0)]
        assert state.columns("first", "orders") == {"id": False}
    assert catalog.loads == 1
    catalog.snapshot, catalog.tables = 2, ["orders", "added"]
    state = memo.catalog("p")
    assert state is not None
    assert state.listing("first", "added") == [("added", "TABLE", 0)]
    assert state.listing("first", "missing") == state.listing("absent") == []
    assert state.columns("first", "missing") is None
    assert catalog.loads == 2
    memo.catalog("q")  # each catalog is its own
    assert catalog.loads == 3


def test_an_answer_derived_from_a_catalog_is_kept_only_when_no_commit_came():
    catalog = Catalog()
    memo = SnapshotMemo(catalog.latest, catalog.load)
    state = memo.catalog("p")
    assert state is not None
    assert [memo.derived("p", state, "k", catalog.shape) for _ in range(2)] == ["shape at 1"] * 2
    assert catalog.derived == 1

    def shape_during_a_commit() -> str:
        catalog.snapshot = 2
        return catalog.shape()

    state = memo.catalog("p")
    assert state is not None
    memo.derived("p", state, "other", shape_during_a_commit)
    memo.derived("p", state, "other", catalog.shape)
    assert catalog.derived == 3  # read again: the first answer was not kept


def test_within_a_pin_a_catalog_is_read_once_and_a_commit_is_seen_after_it():
    catalog, latest_reads = Catalog(), []
    memo = SnapshotMemo(lambda name: latest_reads.append(name) or catalog.latest(name), catalog.load)
    with memo.pinned():
        first = memo.catalog("p")
        catalog.snapshot, catalog.tables = 2, ["orders", "added"]  # committed while the statement is translated
        with memo.pinned():  # a pin further in changes nothing
            assert memo.catalog("p") is first
        assert memo.catalog("p") is first
        seen_by_another_thread: list = []
        reader = threading.Thread(target=lambda: seen_by_another_thread.append(memo.catalog("p")))
        reader.start()
        reader.join(10)
        assert seen_by_another_thread[0].listing("first", "added") != []
        assert memo.catalog("q") is memo.catalog("q")  # each catalog is pinned at its first read
    assert latest_reads == ["p", "p", "q"]  # this thread's first read of each catalog, and the other thread's
    state = memo.catalog("p")
    assert state is not None and state.snapshot == 2


def test_a_catalog_without_snapshots_is_not_kept():
    catalog = Catalog()
    catalog.snapshot = None
    memo = SnapshotMemo(catalog.latest, catalog.load)
    assert memo.catalog("emulator") is None
    assert catalog.loads == 0


def test_a_slower_read_of_an_older_snapshot_does_not_replace_a_newer_one():
    latest = iter([5, 6, 5])
    loads = iter([(5, []), (4, [(LISTING, "first", "older", "TABLE", 0)])])
    memo = SnapshotMemo(lambda catalog: next(latest), lambda catalog: next(loads))
    memo.catalog("p")
    memo.catalog("p")  # a read that began before snapshot 5 was kept and finished after it
    state = memo.catalog("p")
    assert state is not None
    assert (state.snapshot, state.listing("first")) == (5, [])


#: Run on the project's DuckLake catalog by another cursor, one step at a time (a step may hold statements, and may
#: leave a transaction open for the next step to commit).
STEPS = (
    "CREATE TABLE first.orders (id BIGINT NOT NULL, note VARCHAR)",
    "INSERT INTO first.orders VALUES (1, 'a'), (2, 'b')",
    "DELETE FROM first.orders WHERE id = 1",
    "ALTER TABLE first.orders ADD COLUMN placed DATE",
    "ALTER TABLE first.orders ALTER COLUMN note SET NOT NULL",
    "ALTER TABLE first.orders ALTER COLUMN id DROP NOT NULL",
    "ALTER TABLE first.orders RENAME COLUMN note TO remark",
    "ALTER TABLE first.orders DROP COLUMN placed",
    "CREATE TABLE first.other (n INTEGER)",
    "ALTER TABLE first.other ALTER COLUMN n TYPE BIGINT",
    "CREATE VIEW first.orders_view AS SELECT id FROM first.orders",
    "BEGIN; INSERT INTO first.orders VALUES (3, 'c'); CREATE TABLE second.pending (id INTEGER)",
    "COMMIT",
    "BEGIN; DROP TABLE first.other; INSERT INTO first.orders VALUES (4, 'd')",
    "ROLLBACK",
    "DROP VIEW first.orders_view",
    "ALTER TABLE first.orders RENAME TO renamed",
    "CREATE TABLE first.orders (id VARCHAR NOT NULL)",
    "CREATE OR REPLACE TABLE first.orders AS SELECT 1 AS id, 'x' AS code",
    "DROP TABLE first.renamed",
    "DROP SCHEMA second CASCADE",
    "CREATE SCHEMA second",
    "CREATE TABLE second.orders (id BIGINT)",
)

#: Run by the emulator's interpreter: after each step, the shim's answers (read before the step too, so that any it
#: kept would be given) and the emulator's own, for every dataset and name.
COMPARE = textwrap.dedent(
    """
    import json, pathlib, runpy, sys
    from local_bigquery.settings import settings
    shim_path, settings.data_dir, settings.default_project_id = sys.argv[1], pathlib.Path(sys.argv[2]), sys.argv[3]
    shim = runpy.run_path(shim_path)  # its patches applied, as `serve` runs them
    database, tables = shim["database"], shim["tables"]
    project = settings.default_project_id
    other = database.connection().cursor()
    other.execute(f'USE "{project}"')

    def answer(function, *args):
        try:
            found = function(*args)
        except Exception as error:
            return type(error).__name__ + ": " + str(error)
        return [getattr(item, "dump", lambda: item)() for item in found]

    def answers():
        both = []
        for dataset in ("first", "second"):
            for name in (None, "orders", "other", "orders_view", "renamed", "pending"):
                emulator = answer(shim["_emulator_objects"], project, dataset, name)
                both.append([dataset, name, "objects", emulator, answer(database.objects, project, dataset, name)])
                if name is not None:
                    emulator = answer(shim["_emulator_columns"], project, dataset, name)
                    both.append([dataset, name, "columns", emulator, answer(tables.columns, project, dataset, name)])
        return both

    steps = []
    for step in json.loads(sys.argv[4]):
        answers()
        answers()
        other.execute(step)
        steps.append([step, answers()])
    print(json.dumps(steps))
    """
)


def test_a_change_by_another_connection_is_seen_at_once(tmp_path):
    steps = compared_answers(tmp_path, ("CREATE SCHEMA first", "CREATE SCHEMA second"), COMPARE, json.dumps(STEPS))
    assert [step for step, _ in steps] == list(STEPS)
    differences = [[step, *row] for step, rows in steps for row in rows if row[3] != row[4]]
    assert differences == []
    last = {(dataset, name, what): emulator for dataset, name, what, emulator, _ in steps[-1][1]}
    assert last[("first", None, "objects")] == [["orders", "TABLE", 1], ["other", "TABLE", 0]]  # rolled back
    assert [field["name"] for field in last[("first", "orders", "columns")]] == ["id", "code"]
    assert last[("second", None, "objects")] == [["orders", "TABLE", 0]]
    committed = [row[3] for row in dict(steps)["COMMIT"] if row[:3] == ["second", "pending", "objects"]]
    assert committed == [[["pending", "TABLE", 0]]]


def test_a_change_through_the_api_is_seen_by_the_next_query(bq_client, dataset, run_sql):
    from google.api_core.exceptions import NotFound
    from google.cloud import bigquery

    table = f"{DEFAULT_PROJECT}.{dataset}.orders"

    def scalar(sql: str) -> int:
        [(value,)] = list(bq_client.query(sql).result())
        return value

    def rows() -> int:  # the table named twice
        return scalar(f"SELECT count(*) FROM `{dataset}.orders` AS a JOIN `{dataset}.orders` AS b USING (id)")

    schema = [bigquery.SchemaField("id", "INT64", mode="REQUIRED"), bigquery.SchemaField("note", "STRING")]
    bq_client.create_table(bigquery.Table(table, schema=schema))  # tables.insert
    assert rows() == rows() == 0
    assert bq_client.insert_rows_json(table, [{"id": 1, "note": "a"}]) == []  # tabledata.insertAll
    assert rows() == bq_client.get_table(table).num_rows == 1
    run_sql(f"INSERT INTO `{dataset}.orders` VALUES (2, 'b')")
    assert rows() == bq_client.get_table(table).num_rows == 2
    run_sql(
        f"MERGE `{dataset}.orders` AS t USING (SELECT 3 AS id, 'c' AS note) AS s ON t.id = s.id "
        "WHEN NOT MATCHED THEN INSERT (id, note) VALUES (s.id, s.note)"
    )
    assert rows() == bq_client.get_table(table).num_rows == 3
    run_sql(f"ALTER TABLE `{dataset}.orders` ADD COLUMN placed DATE")
    assert [(f.name, f.mode) for f in bq_client.get_table(table).schema] == [
        ("id", "REQUIRED"),
        ("note", "NULLABLE"),
        ("placed", "NULLABLE"),
    ]
    assert scalar(f"SELECT count(placed) FROM `{dataset}.orders`") == 0
    bq_client.delete_table(table)  # tables.delete
    with pytest.raises(NotFound):
        rows()
    run_sql(f"CREATE VIEW `{dataset}.orders` AS SELECT 7 AS id")
    assert bq_client.get_table(table).table_type == "VIEW"
    assert rows() == 1


def test_the_translations_kept_are_the_newest_ones_used():
    memo = TranslationMemo(limit=2)
    memo.put("a", 1)
    memo.put("b", 2)
    assert memo.get("a") == 1  # used: "b" is now the oldest
    memo.put("c", 3)
    assert (memo.get("a"), memo.get("b"), memo.get("c")) == (1, None, 3)


def test_a_statement_translated_before_answers_for_the_catalog_and_parameters_as_they_are(bq_client, dataset, run_sql):
    from google.api_core.exceptions import BadRequest, NotFound
    from google.cloud import bigquery

    def values(sql: str, **parameters: int) -> list:
        config = bigquery.QueryJobConfig(
            query_parameters=[bigquery.ScalarQueryParameter(name, "INT64", value) for name, value in parameters.items()]
        )
        return [tuple(row.values()) for row in bq_client.query(sql, job_config=config).result()]

    table = f"`{dataset}.amounts`"
    run_sql(f"CREATE TABLE {table} (id INT64, amount NUMERIC)", f"INSERT INTO {table} VALUES (1, 12.50), (2, 3)")
    chosen = f"SELECT CAST(amount AS STRING) FROM {table} WHERE id = @id"
    assert values(chosen, id=1) == values(chosen, id=1) == [("12.5",)]
    assert values(chosen, id=2) == [("3",)]
    run_sql(f"CREATE OR REPLACE TABLE {table} (id INT64, amount STRING)", f"INSERT INTO {table} VALUES (1, 'x')")
    assert values(chosen, id=1) == [("x",)]
    run_sql(f"ALTER TABLE {table} RENAME COLUMN amount TO total")
    with pytest.raises(BadRequest, match="amount"):
        values(chosen, id=1)
    run_sql(f"DROP TABLE {table}")
    with pytest.raises(NotFound, match="amounts"):
        values(chosen, id=1)


def test_a_statement_naming_a_table_that_expires_is_translated_every_time(bq_client, dataset, run_sql):
    import datetime
    import time

    from google.api_core.exceptions import NotFound

    run_sql(f"CREATE TABLE `{dataset}.brief` (id INT64)")
    table = bq_client.get_table(f"{DEFAULT_PROJECT}.{dataset}.brief")
    table.expires = datetime.datetime.now(datetime.UTC) + datetime.timedelta(seconds=3)
    bq_client.update_table(table, ["expires"])
    query = f"SELECT count(*) FROM `{dataset}.brief`"
    assert [row[0] for row in bq_client.query(query).result()] == [0]
    time.sleep(max(0.0, (table.expires - datetime.datetime.now(datetime.UTC)).total_seconds()) + 0.5)
    with pytest.raises(NotFound, match="brief"):
        list(bq_client.query(query).result())
