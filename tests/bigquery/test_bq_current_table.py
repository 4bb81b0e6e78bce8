"""`<table>_current` as a table on the BigQuery API emulator: after every step of a random history (the
DuckDB test's generator, tests/current/current_table_history.py, landed through BigQuery's API) the table
holds exactly the rows and values of the current view; and it stays exact when a transaction fails
half-way, when a job ran but its answer was lost and it is run again, when Pub/Sub delivers one
notification twice to the function, when two refreshes of the family race, when the refresh process
is killed with SIGKILL, after a new version retypes a column to STRING, and after a consolidation.

Every job is held to BigQuery's limits (tests/bigquery_limits.py), which refuse DDL on permanent tables
inside a transaction as BigQuery does (the emulator accepts it).

UNIVIEW_CURRENT_FUZZ_SEED picks the history's seed (default: a fixed one, printed on failure).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from typing import Any

import pytest
import requests
from bigquery_limits import enforce_on_client
from current_table_bq_history import FAMILY, BigQueryHistory, json_value, schema_field
from current_table_history import DATABASES
from google.api_core import exceptions as api_exceptions
from google.cloud import bigquery

from uniview.cloudfn.events import notification, push_body
from uniview.core.landing_layout import CDC_COLUMNS
from uniview.core.version_description import version_description
from uniview.current.table import KILL_AT
from uniview.local.bigquery_emulator import DEFAULT_PROJECT
from uniview.local.function_server import function_server
from uniview.ops.consolidate import ConsolidationRequest, consolidate
from uniview.ops.refresh import FamilyOutcome, RefreshRequest, refresh
from uniview.planning.plan import GeneratorOptions
from uniview.warehouse.bigquery import BigQueryWarehouse, make_client
from uniview.warehouse.bigquery_current import is_retryable, is_serialization_conflict

pytestmark = pytest.mark.emulator

SEED = int(os.environ.get("UNIVIEW_CURRENT_FUZZ_SEED", "20261127"))
STEPS = 4
#: Races of two refreshes, and refreshes killed: each costs several refreshes on the emulator.
RACES = KILLS = 1


# --------------------------------------------------------------------------- helpers


class Faults:
    """A google-cloud-bigquery client whose next script job with a transaction can be made to fail:
    `fail_at(n)` puts `SELECT ERROR(...)` before the transaction's n-th statement; `lose_answer()` runs
    the job to its end and then answers 503, as if the response was lost; `lose_a_race()` refuses it as
    BigQuery refuses the loser of two concurrent transactions on one table."""

    def __init__(self, client: Any, limits: Any) -> None:
        self._client = client
        self._limits = limits
        self.error_before: int | None = None
        self.lose = False
        self.conflict = False
        self.after_commit = False
        self.build = False
        self.transactions = 0

    def fail_at(self, number: int) -> None:
        self.error_before = number

    def lose_answer(self) -> None:
        self.lose = True

    def fail_after_commit(self) -> None:
        """The next script with a transaction fails right after its COMMIT (before what runs outside it)."""
        self.after_commit = True

    def fail_build(self) -> None:
        """The next build fails after the state tables are made, before `<table>_current` is."""
        self.build = True

    def lose_a_race(self) -> None:
        """The next transaction is refused as BigQuery refuses the loser of two concurrent ones."""
        self.conflict = True

    def query(self, sql: str, *args: Any, **kwargs: Any) -> Any:
        if self.build and "CREATE OR REPLACE TABLE" in sql and "BEGIN TRANSACTION" not in sql:
            self.build = False
            last = sql.rindex("CREATE OR REPLACE TABLE")
            sql = sql[:last] + "SELECT ERROR('injected failure before the table');\n" + sql[last:]
        if "BEGIN TRANSACTION;\n" in sql:
            self.transactions += 1
            if self.error_before is not None:
                sql, self.error_before = _with_error(sql, self.error_before), None
            elif self.after_commit:
                self.after_commit = False
                failing = "COMMIT TRANSACTION;\nSELECT ERROR('injected failure after the commit');\n"
                sql = sql.replace("COMMIT TRANSACTION;\n", failing, 1)
            elif self.conflict:
                self.conflict = False
                raise api_exceptions.BadRequest(
                    "Transaction is aborted due to concurrent update against table p:d.t. Transaction ID: x"
                )
            elif self.lose:
                self.lose = False
                job = self._limits(sql, *args, **kwargs)
                job.result()
                raise api_exceptions.ServiceUnavailable("injected: the job ran, its answer was lost")
        return self._limits(sql, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


def _with_error(script: str, number: int) -> str:
    head, rest = script.split("BEGIN TRANSACTION;\n", 1)
    inside, tail = rest.split("COMMIT TRANSACTION;\n", 1)
    statements = [s + ";\n" for s in inside.split(";\n") if s.strip()]
    at = min(number, len(statements))
    statements.insert(at, "SELECT ERROR('injected failure inside the transaction');\n")
    return head + "BEGIN TRANSACTION;\n" + "".join(statements) + "COMMIT TRANSACTION;\n" + tail


@pytest.fixture
def faulty(bq_emulator_host, limits_enforcer):
    """A warehouse on the emulator whose jobs are held to BigQuery's limits and can be made to fail."""
    client = enforce_on_client(make_client(DEFAULT_PROJECT), limits_enforcer)
    faults = Faults(client, client.query)
    with BigQueryWarehouse(DEFAULT_PROJECT, retry_deadline=30, client=faults) as opened:
        yield opened, faults


@pytest.fixture
def views_dataset(dataset, bq_client):
    """Where the current VIEW the table is compared with lives (the table lives in <dataset>_unified)."""
    name = f"{dataset}_view"
    yield name
    bq_client.query(f"DROP SCHEMA IF EXISTS `{name}` CASCADE").result()


def refreshed(
    warehouse: BigQueryWarehouse, dataset: str, mode: str = "table", target: str | None = None
) -> FamilyOutcome:
    (outcome,) = refresh(warehouse, RefreshRequest(dataset, (FAMILY,), target, GeneratorOptions(current=mode)))
    return outcome


def rows_of(client: Any, relation: str) -> list[str]:
    return sorted(
        json.dumps(dict(row.items()), default=str, sort_keys=True) for row in client.query(f"SELECT * FROM {relation}")
    )


def assert_table_equals_view(client: Any, warehouse: BigQueryWarehouse, dataset: str, views: str, context: str) -> None:
    outcome = refreshed(warehouse, dataset, "view", views)
    assert outcome.error is None, outcome.error
    table = client.get_table(f"{dataset}_unified.{FAMILY}_current")
    view = client.get_table(f"{views}.{FAMILY}_current")
    assert table.table_type == "TABLE" and view.table_type == "VIEW"
    assert [(f.name, f.field_type, f.mode) for f in table.schema] == [
        (f.name, f.field_type, f.mode) for f in view.schema
    ], f"{context}: columns differ"
    in_table, in_view = (
        rows_of(client, f"`{dataset}_unified.{FAMILY}_current`"),
        rows_of(client, f"`{views}.{FAMILY}_current`"),
    )
    missing, extra = sorted(set(in_view) - set(in_table)), sorted(set(in_table) - set(in_view))
    assert in_table == in_view, f"{context}: rows differ; missing {missing[:3]}, extra {extra[:3]}"


def state(client: Any, dataset: str) -> list[tuple[str, str | None, list[str]]]:
    """The current table and its state tables: names, descriptions, rows."""
    target = f"{dataset}_unified"
    names = sorted(
        t.table_id
        for t in client.list_tables(target)
        if t.table_id.startswith("_uniview_current_") or t.table_id == f"{FAMILY}_current"
    )
    return [
        (name, client.get_table(f"{target}.{name}").description, rows_of(client, f"`{target}.{name}`"))
        for name in names
    ]


def ok(outcome: FamilyOutcome) -> FamilyOutcome:
    assert outcome.error is None, outcome.error
    return outcome


def land_version(
    client: Any, dataset: str, history: BigQueryHistory, name: str, columns: list[tuple[str, str]]
) -> None:
    """A version `item_v_<name>` of `columns` (and the CDC columns), with a change of a key in every database,
    newer than everything landed."""
    every = [*columns, *CDC_COLUMNS]
    table = bigquery.Table(
        f"{client.project}.{dataset}.{FAMILY}_v_{name}", schema=[schema_field(c, t) for c, t in every]
    )
    table.description = version_description(FAMILY, [(c, t.lower()) for c, t in columns], ("id",))
    client.create_table(table)
    stamp = history.newest_ingested + dt.timedelta(hours=1)
    history.newest_ingested = stamp + dt.timedelta(seconds=len(DATABASES))
    rows = []
    for number, database in enumerate(DATABASES):
        cdc = history._cdc(database, "UPDATE", stamp + dt.timedelta(seconds=number))
        values = {column: (number if bq_type == "INT64" else f"{name} {number}") for column, bq_type in columns}
        rows.append({**values, **cdc})
    encoded = [{k: json_value(v) for k, v in row.items() if v is not None} for row in rows]
    assert client.insert_rows_json(table, encoded) == []


# --------------------------------------------------------------------------- the random history


def test_the_table_equals_the_view_after_every_step_a_failed_transaction_changes_nothing_and_a_rerun_is_exact(
    bq_client, dataset, views_dataset, faulty
):
    warehouse, faults = faulty
    rng = random.Random(SEED * 31)
    history = BigQueryHistory(bq_client, dataset, SEED)
    actions = []
    for step in range(1, STEPS + 1):
        history.step()
        context = f"seed {SEED} (UNIVIEW_CURRENT_FUZZ_SEED), step {step}"
        if step > 1 and rng.random() < 0.5:  # a transaction failing before a random statement changes nothing
            before = state(bq_client, dataset)
            faults.fail_at(rng.randrange(0, 12))
            failed = refreshed(warehouse, dataset)
            if failed.error is not None:
                assert "injected failure" in str(failed.error)
                assert state(bq_client, dataset) == before, f"{context}: a failed transaction left changes"
        transactions = faults.transactions
        if step == 2:  # refused as the loser of a race: run again whole
            faults.lose_a_race()
        if step == 3:  # the job runs to its end, its answer is lost, it is run again whole
            faults.lose_answer()
        actions.append(ok(refreshed(warehouse, dataset)).current_table.action)
        if step in (2, 3):
            assert faults.transactions == transactions + 2 or actions[-1] != "maintain", "the job was not run again"
        assert_table_equals_view(bq_client, warehouse, dataset, views_dataset, context)
    assert actions[0] == "create" and "maintain" in actions
    # score is INT64 in every other version, STRING in this one
    land_version(bq_client, dataset, history, "e5", [("id", "INT64"), ("name", "STRING"), ("score", "STRING")])
    assert ok(refreshed(warehouse, dataset)).current_table.action == "rebuild"  # the state's shape changed
    assert_table_equals_view(bq_client, warehouse, dataset, views_dataset, f"seed {SEED}: score retyped to STRING")
    before = state(bq_client, dataset)
    assert ok(refreshed(warehouse, dataset)).current_table.action == "maintain"
    assert state(bq_client, dataset) == before, "a refresh with nothing new changed the table or its state"


# --------------------------------------------------------------------------- concurrency and faults


def test_a_key_change_arriving_in_pieces_rebuilds_the_table_through_its_scripts_check(
    bq_client, dataset, views_dataset, warehouse
):
    """The maintenance script's check (an ERROR() in its first MERGE) stops it, in its transaction, when its
    window holds a key change's create, a delete a create waits for, or a change older than a key change of its
    key; the table is then rebuilt and shows what the view shows (the same steps as
    tests/current/test_current_table_key_changes.py on DuckDB).  A maintenance counts the changes it read by
    its INSERT of them into the state (@@row_count), with no query of its own."""
    from test_current_table_key_changes import change, land

    history = BigQueryHistory(bq_client, dataset, SEED)
    read: list[int] = []

    def step(*changes: tuple[str, dict]) -> tuple[str, dict[int, str | None]]:
        land(history, *changes)
        done = ok(refreshed(warehouse, dataset)).current_table
        action = done.action
        read.append(done.changes_read)
        assert_table_equals_view(bq_client, warehouse, dataset, views_dataset, f"after {action}")
        found = bq_client.query(f"SELECT id, note FROM `{dataset}_unified.{FAMILY}_current`").result()
        return action, {row["id"]: row["note"] for row in found}

    assert step(change(1, "INSERT", 100, "a", "big"), change(1, "UPDATE", 200, "a2", left_out=["note"])) == (
        "create",
        {1: "big"},
    )
    assert step(change(2, "INSERT", 300, "a2", left_out=["note"])) == ("rebuild", {1: "big", 2: None})
    assert step(change(1, "DELETE", 300)) == ("rebuild", {2: "big"})
    assert step(change(1, "UPDATE", 250, "a2", "late")) == ("rebuild", {2: "late"})
    assert step(change(2, "UPDATE", 400, "a3", left_out=["note"])) == ("maintain", {2: "late"})
    assert read[-1] == 1
    assert ok(refreshed(warehouse, dataset)).current_table.changes_read == 0  # nothing new: nothing read


def test_two_refreshes_racing_both_end_and_the_table_is_exact(bq_client, dataset, views_dataset, warehouse):
    history = BigQueryHistory(bq_client, dataset, SEED + 2)
    history.step()
    ok(refreshed(warehouse, dataset))
    for round_number in range(RACES):
        history.step()
        start = threading.Barrier(2)
        outcomes: list[FamilyOutcome] = []

        def race(start: threading.Barrier = start, outcomes: list[FamilyOutcome] = outcomes) -> None:
            with BigQueryWarehouse(DEFAULT_PROJECT, retry_deadline=30) as own:
                start.wait()
                outcomes.append(refreshed(own, dataset))

        threads = [threading.Thread(target=race) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert [o.error for o in outcomes] == [None, None], [str(o.error) for o in outcomes]
        assert_table_equals_view(bq_client, warehouse, dataset, views_dataset, f"race {round_number}")


def test_the_emulator_aborts_the_loser_of_two_transactions_with_bigquerys_words(bq_client, dataset):
    bq_client.query(
        f"CREATE TABLE `{dataset}.t` AS SELECT x AS id, 0 AS n FROM UNNEST(GENERATE_ARRAY(1, 500)) AS x"
    ).result()
    script = (
        "BEGIN TRANSACTION;\n"
        f"MERGE `{dataset}.t` AS d USING (SELECT x AS id FROM UNNEST(GENERATE_ARRAY(1, 500)) AS x) AS s ON d.id = s.id "
        "WHEN MATCHED THEN UPDATE SET n = d.n + 1;\n"
        f"DELETE FROM `{dataset}.t` WHERE id = 0;\n"
        "COMMIT TRANSACTION;\n"
    )
    errors: list[BaseException] = []

    def run() -> None:
        for _ in range(2):
            try:
                bq_client.query(script).result()
            except api_exceptions.GoogleAPICallError as error:
                errors.append(error)

    threads = [threading.Thread(target=run) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    (committed,) = bq_client.query(f"SELECT DISTINCT n FROM `{dataset}.t`").result()
    assert committed[0] == 6 - len(errors)  # every transaction whole or not at all: MERGE inside one included
    assert errors and all(is_serialization_conflict(error) for error in errors), [str(e)[:200] for e in errors]


def test_a_refresh_killed_with_sigkill_is_finished_by_the_next(bq_client, dataset, views_dataset, bq_emulator_host):
    history = BigQueryHistory(bq_client, dataset, SEED + 3)
    history.step()
    with BigQueryWarehouse(DEFAULT_PROJECT, retry_deadline=30) as warehouse:
        ok(refreshed(warehouse, dataset))
        rng = random.Random(SEED)
        command = [sys.executable, "-m", "uniview.cli.main", "refresh", "--warehouse", f"bigquery://{DEFAULT_PROJECT}"]
        command += ["--dataset", dataset, "--table", FAMILY, "--current", "table"]
        for _ in range(KILLS):
            history.step()
            process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(rng.uniform(1.0, 4.0))  # planning, the views, or the table's job under way
            process.send_signal(signal.SIGKILL)
            assert process.wait() in (-signal.SIGKILL, 0)
            ok(refreshed(warehouse, dataset))
            assert_table_equals_view(bq_client, warehouse, dataset, views_dataset, "after a SIGKILL")


def test_a_rebuild_killed_once_its_job_ran_leaves_no_state_of_the_earlier_hash(
    bq_client, dataset, views_dataset, bq_emulator_host
):
    """The build script drops the earlier state hash's tables itself: killed right after the rebuild's job ran,
    nothing of the earlier hash is left, and the next maintenance keeps only the current hash's tables."""
    history = BigQueryHistory(bq_client, dataset, SEED + 7)
    history.step()
    with BigQueryWarehouse(DEFAULT_PROJECT, retry_deadline=30) as warehouse:
        ok(refreshed(warehouse, dataset))
        earlier = {name for name, _, _ in state(bq_client, dataset) if name.startswith("_uniview_current_")}
        land_version(bq_client, dataset, history, "e5", [("id", "INT64"), ("name", "STRING"), ("score", "STRING")])
        command = [sys.executable, "-m", "uniview.cli.main", "refresh", "--warehouse", f"bigquery://{DEFAULT_PROJECT}"]
        command += ["--dataset", dataset, "--table", FAMILY, "--current", "table"]
        environment = {**os.environ, KILL_AT: "after-build"}
        killed = subprocess.run(command, env=environment, capture_output=True, check=False)
        assert killed.returncode == -signal.SIGKILL, killed.stderr.decode()[-2000:]
        after_kill = {name for name, _, _ in state(bq_client, dataset)}
        assert not after_kill & earlier, (
            f"the earlier hash's state outlived its rebuild: {sorted(after_kill & earlier)}"
        )
        stray = (
            f"{dataset}_unified._uniview_current_facts_{FAMILY}_{'0' * 12}"  # another hash's, found by a maintenance
        )
        bq_client.create_table(bigquery.Table(f"{bq_client.project}.{stray}", schema=[schema_field("x", "INT64")]))
        assert ok(refreshed(warehouse, dataset)).current_table.action == "maintain"
        names = [name for name, _, _ in state(bq_client, dataset) if name.startswith("_uniview_current_")]
        assert len(names) == 1 and names[0].startswith(f"_uniview_current_state_{FAMILY}_"), names
        assert_table_equals_view(bq_client, warehouse, dataset, views_dataset, "after a rebuild killed once it ran")


class SlowRebuild:
    """A client on which the next build reads its window, then `meanwhile` runs, then the build installs what it
    read: the window's statement runs first into a scratch table, which the build's script then reads."""

    def __init__(self, client: Any, scratch: str) -> None:
        self._client = client
        self._scratch = scratch
        self.meanwhile: Any = None

    def query(self, sql: str, *args: Any, **kwargs: Any) -> Any:
        window = "CREATE OR REPLACE TEMP TABLE _uniview_window AS\n"
        if self.meanwhile is not None and sql.startswith(window) and "BEGIN TRANSACTION" not in sql:
            first, rest = sql.split(";\n", 1)
            self._client.query(f"CREATE OR REPLACE TABLE {self._scratch} AS\n{first[len(window) :]}").result()
            meanwhile, self.meanwhile = self.meanwhile, None
            meanwhile()
            sql = f"{window}SELECT * FROM {self._scratch};\n{rest}"
        return self._client.query(sql, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


def test_a_slow_rebuild_does_not_undo_a_maintenance_that_committed_while_it_read(
    bq_client, dataset, views_dataset, warehouse, limits_enforcer
):
    """A rebuild reads the history, a maintenance of a newer batch commits, then the rebuild replaces the state
    with what it read: the maintenance after the build applies the newer batch again."""
    history = BigQueryHistory(bq_client, dataset, SEED + 8)
    history.key_changes = history.move_chance = 0  # the newer batch is maintained, not rebuilt for
    history.step()
    ok(refreshed(warehouse, dataset))
    slow = SlowRebuild(enforce_on_client(make_client(DEFAULT_PROJECT), limits_enforcer), f"`{dataset}.slow_window`")

    def newer_batch_maintained() -> None:
        history.step()
        assert ok(refreshed(warehouse, dataset)).current_table.action == "maintain"
        assert_table_equals_view(bq_client, warehouse, dataset, views_dataset, "the newer batch maintained")

    slow.meanwhile = newer_batch_maintained
    with BigQueryWarehouse(DEFAULT_PROJECT, retry_deadline=30, client=slow) as rebuilding:
        (outcome,) = refresh(
            rebuilding,
            RefreshRequest(dataset, (FAMILY,), options=GeneratorOptions(current="table"), rebuild_current=True),
        )
    assert ok(outcome).current_table.action == "rebuild" and slow.meanwhile is None
    assert_table_equals_view(bq_client, warehouse, dataset, views_dataset, "a slow rebuild and a newer maintenance")


def test_a_duplicate_pubsub_delivery_through_the_function_changes_nothing(
    tmp_path, bq_client, dataset, views_dataset, bq_emulator_host
):
    history = BigQueryHistory(bq_client, dataset, SEED + 4)
    history.step()
    environment = {
        "UNIVIEW_WAREHOUSE": f"bigquery://{DEFAULT_PROJECT}",
        "BIGQUERY_EMULATOR_HOST": bq_emulator_host,
        "UNIVIEW_CURRENT": "table",
    }
    with function_server(tmp_path, environment) as served:
        body = push_body(notification(dataset, FAMILY, "a1"), "current-1")
        assert requests.post(served.url, json=body, timeout=180).status_code == 200
        history.step()
        body = push_body(notification(dataset, FAMILY, "a1"), "current-2")
        assert requests.post(served.url, json=body, timeout=180).status_code == 200
        after_first = state(bq_client, dataset)
        assert requests.post(served.url, json=body, timeout=180).status_code == 200  # delivered again
        assert state(bq_client, dataset) == after_first
        logged = [json.loads(line) for line in served.log_path.read_text().splitlines() if line.startswith("{")]
        lines = {key: [line for line in logged if line.get("message_id") == key] for key in ("current-1", "current-2")}
        assert [line["current_table_action"] for line in lines["current-1"]] == ["create"]
        assert len(lines["current-2"]) == 2 and lines["current-2"][-1]["current_table_action"] == "maintain"
        assert {line["outcome"] for line in lines["current-2"]} <= {"refreshed", "unchanged"}
    with BigQueryWarehouse(DEFAULT_PROJECT, retry_deadline=30) as warehouse:
        assert_table_equals_view(bq_client, warehouse, dataset, views_dataset, "after a duplicate delivery")


def test_a_consolidation_then_a_refresh(bq_client, dataset, views_dataset, bq_emulator_host):
    history = BigQueryHistory(bq_client, dataset, SEED + 5)
    for version in range(3):  # versions a1, b2 and c3, each written by every database
        history.version_of = dict.fromkeys(DATABASES, version)
        history.step()
    with BigQueryWarehouse(DEFAULT_PROJECT, retry_deadline=30) as warehouse:
        ok(refreshed(warehouse, dataset))
        options = GeneratorOptions(current="table")
        request = ConsolidationRequest(
            dataset, (FAMILY,), dt.timedelta(0), 2, True, options=options, settle=dt.timedelta(0)
        )
        (done,) = consolidate(warehouse, request)
        assert done.applied and done.moved_rows > 0, done
        ok(refreshed(warehouse, dataset))  # consolidation refreshed the family already: its own options
        assert_table_equals_view(bq_client, warehouse, dataset, views_dataset, "after a consolidation")
        history.step()
        ok(refreshed(warehouse, dataset))
        assert_table_equals_view(bq_client, warehouse, dataset, views_dataset, "a step after a consolidation")


def test_switching_between_the_table_and_the_view(bq_client, dataset, views_dataset, faulty):
    """--current replaces the table (and drops its state) with the view; --current table replaces the view.
    Then a re-presentation stopped between its commit and the table's replacement is done again by the next."""
    warehouse, faults = faulty
    history = BigQueryHistory(bq_client, dataset, SEED + 6)
    history.step()
    ok(refreshed(warehouse, dataset))
    ok(refreshed(warehouse, dataset, "view"))
    target = f"{dataset}_unified"
    assert bq_client.get_table(f"{target}.{FAMILY}_current").table_type == "VIEW"
    assert [t.table_id for t in bq_client.list_tables(target) if t.table_id.startswith("_uniview_current_")] == []
    faults.fail_build()  # the view is dropped, the state made, the table not: the next refresh builds again
    assert "injected failure before the table" in str(refreshed(warehouse, dataset).error)
    assert ok(refreshed(warehouse, dataset)).current_table.action == "create"
    assert_table_equals_view(bq_client, warehouse, dataset, views_dataset, "the view replaced by the table again")
    # a version with columns the family has, of the types it has: the state is kept, the table presented again
    land_version(bq_client, dataset, history, "f6", [("id", "INT64"), ("name", "STRING")])
    faults.fail_after_commit()
    assert "injected failure after the commit" in str(refreshed(warehouse, dataset).error)
    assert ok(refreshed(warehouse, dataset)).current_table.action == "re-present"
    assert_table_equals_view(bq_client, warehouse, dataset, views_dataset, "a version keeping the unified types")


@pytest.mark.parametrize(
    ("message", "retried"),
    [
        ("Transaction is aborted due to concurrent update against table p:d.t. Transaction ID: 61e3", True),
        ("Could not serialize access to table p:d.t due to concurrent update", True),
        ("Syntax error: Unexpected keyword DECLARE at [1:1]", False),
        ("injected failure inside the transaction", False),
    ],
)
def test_which_refusals_run_the_job_again(message, retried):
    assert is_retryable(api_exceptions.BadRequest(message)) is retried
