"""The sink's BigQuery path end to end with the real spark-bigquery-connector (the version Dataproc's
Spark 3.5 images are documented with), writing through the Storage Write API of the local BigQuery
emulator, and everything read back through the BigQuery API."""

from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import sys
import threading
from datetime import UTC, date, datetime, time
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest
from sink_support import record, version_table, write_ndjson

from uniview.sink.job import SinkOptions, run

SCHEMA = [
    ("id", "int(11)"),
    ("amount", "decimal(10,2)"),
    ("wide", "decimal(30,0)"),
    ("ratio", "double"),
    ("active", "tinyint(1)"),
    ("name", "varchar(40)"),
    ("raw", "varbinary(8)"),
    ("born", "date"),
    ("at", "datetime(6)"),
    ("seen", "timestamp"),
    ("opens", "time"),
    ("doc", "json"),
    ("address", "STRUCT<street STRING, zip INT64>"),
    ("tags", "ARRAY<STRING>"),
]
ROW = {
    "id": 7,
    "amount": "1234.50",
    "wide": "12345678901234567890",
    "ratio": 0.25,
    "active": 1,
    "name": "Zoë",
    "raw": base64.b64encode(b"\x00\x01\xff").decode(),
    "born": "2024-02-29",
    "at": "2024-05-01 10:00:00.123456",
    "seen": "2024-05-01T10:00:00+02:00",
    "opens": "09:30:00",
    "doc": {"a": [1, 2]},
    "address": {"street": "Main", "zip": 1000},
    "tags": ["x", "y"],
}
TABLE = version_table("orders", SCHEMA)


class _Receiver(BaseHTTPRequestHandler):
    """Takes the sink's push notifications and looks, at that moment, at the table each one names."""

    client = None
    seen: ClassVar[list] = []  # one list for every request the server handles

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        message = json.loads(base64.b64decode(body["message"]["data"]))
        table = f"{message['dataset']}.{message['table']['name']}_v_{message['table']['version']}"
        rows = next(iter(self.client.query(f"SELECT count(*) FROM {table}").result()))[0]
        self.seen.append((table, rows))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def landed(spark, connector_stack, tmp_path_factory):
    client, options = connector_stack
    root = tmp_path_factory.mktemp("connector-input")
    write_ndjson(
        root / "in" / "a.json",
        [
            record("orders", ROW, SCHEMA, database="cdc", operation="INSERT", position="mysql-bin.000001:4"),
            record("orders", {name: None for name, _ in SCHEMA} | {"id": 8}, SCHEMA, database="cdc"),
            record("orders", {**ROW, "id": 9, "born": "2024-02-30"}, SCHEMA, database="cdc"),
            "not a record",
        ],
    )
    _Receiver.client, _Receiver.seen = client, []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        result = run(
            spark,
            SinkOptions(
                input=str(root / "in"),
                warehouse="bigquery://test-project",
                dataset="cdc",
                bigquery_options=options,
                notify=f"http://127.0.0.1:{server.server_port}/",
            ),
        )
    finally:
        server.shutdown()
    return client, result


def test_counts_add_up(landed):
    _, result = landed
    assert (result.counts.read, dict(result.counts.written), dict(result.counts.quarantined)) == (
        4,
        {f"cdc.{TABLE}": 2},
        {"type_mismatch": 1, "unparseable": 1},
    )


def test_every_type_reads_back_as_the_source_value(landed):
    client, _ = landed
    names = ", ".join(name for name, _ in SCHEMA)
    rows = [tuple(row.values()) for row in client.query(f"SELECT {names} FROM cdc.{TABLE} ORDER BY id").result()]
    assert rows[0] == (
        7,
        Decimal("1234.50"),
        Decimal("12345678901234567890"),
        0.25,
        True,
        "Zoë",
        b"\x00\x01\xff",
        date(2024, 2, 29),
        datetime(2024, 5, 1, 10, 0, 0, 123456),
        datetime(2024, 5, 1, 8, 0, tzinfo=UTC),
        time(9, 30),
        {"a": [1, 2]},
        {"street": "Main", "zip": 1000},
        ["x", "y"],
    )
    assert rows[1] == (8, *([None] * 11), None, [])  # a NULL ARRAY reads back as [] in BigQuery


def test_cdc_columns_are_written(landed):
    client, _ = landed
    (row,) = client.query(
        f"SELECT _cdc_operation, _cdc_position, _cdc_database, _cdc_sequence FROM cdc.{TABLE} WHERE id = 7"
    ).result()
    assert tuple(row.values()) == (
        "INSERT",
        "mysql-bin.000001:4",
        "cdc",
        "000000000000000000010000000000000000000400000000000000000000",
    )


def test_quarantine_rows_are_written_through_the_connector(landed):
    client, _ = landed
    rows = sorted(
        tuple(r.values())
        for r in client.query("SELECT reason, detail, table_name FROM cdc._uniview_quarantine").result()
    )
    assert rows == [
        ("type_mismatch", "values that do not fit: born (date)", "orders"),
        ("unparseable", "the line is not a JSON object", None),
    ]


def test_the_new_table_is_announced_only_once_its_rows_are_in(landed):
    assert _Receiver.seen == [(f"cdc.{TABLE}", 2)]


TEXT_SCHEMA = [("id", "int"), ("place", "point"), ("huge", "decimal(40,2)")]
ARRAY_SCHEMA = [("id", "int"), ("tags", "ARRAY<INT64>")]


@pytest.fixture(scope="module")
def routed(spark, connector_stack, tmp_path_factory):
    """One batch, one dataset per source database, holding the cases the tests below look at each in its own
    dataset: columns staged as text (`text`), an array with a NULL element (`holes`), and a version whose every
    record is quarantined beside one that lands (`lone`).  One sink run serves them all."""
    client, options = connector_stack
    root = tmp_path_factory.mktemp("connector-routed")
    write_ndjson(
        root / "in" / "a.json",
        [
            record("spots", {"id": 1, "place": "POINT(1 2)", "huge": "12.50"}, TEXT_SCHEMA, database="text"),
            record("arr", {"id": 1, "tags": [1, None]}, ARRAY_SCHEMA, database="holes"),
            record("arr", {"id": 2, "tags": [3]}, ARRAY_SCHEMA, database="holes"),
            record("fine", {"id": 1}, [("id", "int")], database="lone"),
            record("misfit", {"id": "not a number"}, [("id", "int")], database="lone"),
        ],
    )
    result = run(
        spark,
        SinkOptions(
            input=str(root / "in"), warehouse="bigquery://test-project", dataset=None, bigquery_options=options
        ),
    )
    return client, result


def test_one_batch_lands_each_database_in_its_own_dataset(routed):
    _, result = routed
    written = {
        f"text.{version_table('spots', TEXT_SCHEMA)}": 1,
        f"holes.{version_table('arr', ARRAY_SCHEMA)}": 1,
        f"lone.{version_table('fine', [('id', 'int')])}": 1,
    }
    assert (result.counts.read, dict(result.counts.written), dict(result.counts.quarantined)) == (
        5,
        written,
        {"type_mismatch": 2},
    )


def test_columns_staged_as_text_land_in_their_types(routed):
    """GEOGRAPHY and BIGNUMERIC of more than 38 digits travel as text (the connector's direct write refuses
    both for such columns) and are converted by the promotion's SQL."""
    client, _ = routed
    (row,) = client.query(f"SELECT id, ST_ASTEXT(place), huge FROM text.{version_table('spots', TEXT_SCHEMA)}").result()
    assert tuple(row.values()) == (1, "POINT(1 2)", Decimal("12.5"))


def test_an_array_with_a_null_element_is_quarantined_not_landed_without_it(routed):
    """BigQuery's arrays cannot hold NULL (the emulator's can): a record whose array holds one is quarantined
    whole, with its line, instead of landing with the element left out; the batch's other records land."""
    client, _ = routed
    table = version_table("arr", ARRAY_SCHEMA)
    assert [tuple(row.values()) for row in client.query(f"SELECT id, tags FROM holes.{table}").result()] == [(2, [3])]
    (quarantined,) = client.query("SELECT reason, detail, raw_line FROM holes._uniview_quarantine").result()
    assert quarantined["reason"] == "type_mismatch" and "tags" in quarantined["detail"], dict(quarantined)
    assert '"tags": [1, null]' in quarantined["raw_line"]


def test_a_version_whose_every_record_is_quarantined_creates_no_table_and_stops_nothing(routed):
    """A route whose every record is quarantined writes no row: its version table is not created, and the
    promotion has no INSERT into it (one failed the whole batch with "Table ... was not found")."""
    client, _ = routed
    tables = {row[0] for row in client.query("SELECT table_name FROM lone.INFORMATION_SCHEMA.TABLES").result()}
    assert not any(name.startswith("misfit_v_") for name in tables), tables
    assert version_table("fine", [("id", "int")]) in tables, tables
    (reason,) = [row[0] for row in client.query("SELECT reason FROM lone._uniview_quarantine").result()]
    assert reason == "type_mismatch"


def test_a_batch_whose_typing_misses_a_line_writes_nothing(spark, connector_stack, tmp_path, monkeypatch):
    """The load step's counts are checked against the lines staged: were a version left out of the typing
    without its records being rejected (here: typing told every version is too wide, routing told none is),
    its lines would be in no typed table, and the batch fails before it writes anything."""
    from uniview.core.errors import WarehouseError
    from uniview.sink import bigquery_typing, landing_bigquery

    client, options = connector_stack
    write_ndjson(
        tmp_path / "in" / "a.json", [record("kept", {"id": n}, [("id", "int")], database="missed") for n in range(3)]
    )
    typing = bigquery_typing.typing_scripts
    monkeypatch.setattr(landing_bigquery, "too_wide", lambda routes: {})
    monkeypatch.setattr(landing_bigquery, "typing_scripts", lambda *args: typing(*args, max_chars=20_500))
    sink_options = SinkOptions(
        input=str(tmp_path / "in"), warehouse="bigquery://test-project", dataset="missed", bigquery_options=options
    )
    with pytest.raises(WarehouseError, match="3 lines were staged but 0 were typed; nothing was written"):
        run(spark, sink_options)
    tables = [table.table_id for table in client.list_tables("missed")]
    assert not any(name.startswith(("kept_v_", "_uniview_staging_")) for name in tables), tables
    assert list(client.query("SELECT * FROM missed._uniview_batches").result()) == []


FILES, ROWS_PER_FILE = 3, 10
KILL_SCHEMA = [("id", "int(11)"), ("name", "varchar(20)")]


def _sink_process(tmp_path, options, dataset: str, kill_at: str | None) -> subprocess.Popen:
    from uniview.local.bigquery_connector import find_connector
    from uniview.sink.failpoints import VARIABLE

    java = find_connector().spark_settings()["spark.driver.extraJavaOptions"]
    env = {**os.environ, "JAVA_TOOL_OPTIONS": java}  # `uniview sink` adds the connector jar itself
    env.pop(VARIABLE, None)
    if kill_at:
        env[VARIABLE] = kill_at
    command = [
        sys.executable,
        "-m",
        "uniview.sink",
        "--input",
        str(tmp_path / "in"),
        "--warehouse",
        "bigquery://test-project",
        "--stream",
        "--checkpoint",
        str(tmp_path / "checkpoint"),
        "--available-now",
        "--max-files-per-trigger",
        "1",
        "--master",
        "local[1]",
        "--dataset",
        dataset,
        "--quiet",
        *[item for key, value in options for item in ("--bigquery-option", f"{key}={value}")],
    ]
    with open(tmp_path / "sink.log", "ab") as log:
        return subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env)


@pytest.mark.timeout(900)  # six sink processes, each a JVM with the connector
def test_kill_9_at_each_step_in_turn_then_restart_lands_every_row_once(connector_stack, tmp_path):
    """One stream killed at every point of the landing in turn, each restart dying at the next point on
    the residue of the kill before it, then a clean restart: every row lands once, whatever sequence of
    crashes came before.  (One process per point: each is a JVM start with the connector.)"""
    from uniview.sink.failpoints import POINTS

    client, options = connector_stack
    for k in range(FILES):
        lines = [
            record("people", {"id": k * ROWS_PER_FILE + i, "name": f"p{i}"}, KILL_SCHEMA) for i in range(ROWS_PER_FILE)
        ]
        write_ndjson(tmp_path / "in" / f"part-{k}.json", [*lines, f"broken {k}"])
    dataset = "killed_in_turn"
    for kill_at in POINTS:
        killed = _sink_process(tmp_path, options, dataset, kill_at)
        assert killed.wait(timeout=240) == -signal.SIGKILL, (kill_at, (tmp_path / "sink.log").read_text()[-3000:])
    restarted = _sink_process(tmp_path, options, dataset, None)
    assert restarted.wait(timeout=240) == 0, (tmp_path / "sink.log").read_text()[-3000:]

    table = version_table("people", KILL_SCHEMA)
    ids = [row[0] for row in client.query(f"SELECT id FROM {dataset}.{table} ORDER BY id").result()]
    assert ids == list(range(FILES * ROWS_PER_FILE))
    (quarantined,) = client.query(
        f"SELECT count(*), count(DISTINCT raw_line) FROM {dataset}._uniview_quarantine"
    ).result()
    assert tuple(quarantined.values()) == (FILES, FILES)
    (ledger,) = client.query(f"SELECT count(*), count(DISTINCT batch_id) FROM {dataset}._uniview_batches").result()
    assert tuple(ledger.values()) == (FILES, FILES)
    staging = [t.table_id for t in client.list_tables(dataset) if t.table_id.startswith("_uniview_staging_")]
    assert staging == []


def _two_batches(spark, options, folder, databases: int):
    """Two batches of one stream into the same `databases` tables: (Spark jobs, BigQuery requests) of each."""
    from uniview.sink.job import Sink, open_landing
    from uniview.sink.landing import BatchKey
    from uniview.sink.notify import NoNotifier

    write_ndjson(
        folder / "a.json",
        [record("wide", {"id": n}, [("id", "int")], database=f"{folder.name}{n % databases:03d}") for n in range(60)],
    )
    sink_options = SinkOptions(  # one dataset per source database: `databases` tables
        input=str(folder), warehouse="bigquery://test-project", dataset=None, bigquery_options=options
    )
    landing = open_landing(spark, sink_options)
    sink = Sink(spark, sink_options, landing, NoNotifier())
    tracker = spark.sparkContext.statusTracker()
    costs = []
    try:
        for batch_id in (0, 1):
            jobs, requests = set(tracker.getJobIdsForGroup(None)), landing.api_calls["request"]
            lines = spark.read.text(str(folder)).selectExpr(
                "value", "CAST(NULL AS STRING) AS key", "_metadata.file_path AS source_file"
            )
            sink.process(lines, BatchKey(f"stream-{folder.name}", batch_id))
            costs.append((len(set(tracker.getJobIdsForGroup(None)) - jobs), landing.api_calls["request"] - requests))
    finally:
        landing.close()
    return costs


def test_a_batch_costs_the_same_spark_jobs_and_requests_for_1_or_30_tables(spark, connector_stack, tmp_path):
    """The first batch creates the tables (a few requests per new table); later batches of the stream cost
    the same whatever the number of tables they feed: 6 requests (ledger read, staging drop, routing keys, the
    typing script, which reads the registry and the plan of an earlier attempt too, one promotion transaction per
    99 tables, the ledger with the staging drop); a batch that creates no table records no plan."""
    _, options = connector_stack
    one = _two_batches(spark, options, tmp_path / "one", 1)
    many = _two_batches(spark, options, tmp_path / "many", 30)
    print(f"(Spark jobs, BigQuery requests) per batch, first and second: 1 table {one}; 30 tables {many}")
    assert [jobs for jobs, _ in many] == [jobs for jobs, _ in one]
    assert many[1][1] == one[1][1] == 6
