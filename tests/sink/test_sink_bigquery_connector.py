"""The sink's BigQuery path end to end with the real spark-bigquery-connector (the version Dataproc's
Spark 3.5 images are documented with), writing through the Storage Write API of the local BigQuery
emulator, and everything read back through the BigQuery API."""

from __future__ import annotations

import base64
import json
import threading
from datetime import date, datetime, time, timezone
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from sink_support import record, write_ndjson

from uniview.sink.job import SinkOptions, run
from uniview.sink.versioning import SourceColumn, compute_version

SCHEMA = [
    ("id", "int(11)"), ("amount", "decimal(10,2)"), ("wide", "decimal(30,0)"), ("ratio", "double"),
    ("active", "tinyint(1)"), ("name", "varchar(40)"), ("raw", "varbinary(8)"), ("born", "date"),
    ("at", "datetime(6)"), ("seen", "timestamp"), ("opens", "time"), ("doc", "json"),
    ("address", "STRUCT<street STRING, zip INT64>"), ("tags", "ARRAY<STRING>"),
]
ROW = {"id": 7, "amount": "1234.50", "wide": "12345678901234567890", "ratio": 0.25,
       "active": 1, "name": "Zoë", "raw": base64.b64encode(b"\x00\x01\xff").decode(), "born": "2024-02-29",
       "at": "2024-05-01 10:00:00.123456", "seen": "2024-05-01T10:00:00+02:00", "opens": "09:30:00",
       "doc": {"a": [1, 2]}, "address": {"street": "Main", "zip": 1000}, "tags": ["x", "y"]}
TABLE = f"orders_v_{compute_version('orders', [SourceColumn(n, t) for n, t in SCHEMA])}"


@pytest.fixture(scope="module")
def connector_stack(spark, tmp_path_factory):
    """The emulator (REST + Storage Write gRPC behind the TLS front); yields (client, --bigquery-options)."""
    from uniview.local.bigquery_connector import connector_options, find_connector, tls_front
    from uniview.local.bigquery_emulator import DEFAULT_PROJECT, bigquery_emulator, emulator_venv_path, find_emulator_venv
    from uniview.local.processes import free_port
    from uniview.warehouse.bigquery import make_client

    files = find_connector()
    if files is None:
        pytest.skip("spark-bigquery-connector not resolved: run scripts/setup-bigquery-connector.sh")
    if find_emulator_venv() is None:
        pytest.skip(f"BigQuery emulator not installed in {emulator_venv_path()}: run scripts/setup-bigquery-emulator.sh")
    if str(files.jar) not in (spark.conf.get("spark.jars", "") or ""):
        pytest.skip("this test run's SparkSession started without the connector jar")
    grpc_port = free_port()
    monkeypatch = pytest.MonkeyPatch()
    with bigquery_emulator(tmp_path_factory.mktemp("bq-connector"), grpc_port=grpc_port) as host, \
            tls_front(files, grpc_port) as grpc_host:
        monkeypatch.setenv("BIGQUERY_EMULATOR_HOST", host)
        client = make_client(DEFAULT_PROJECT)
        try:
            yield client, tuple(connector_options(DEFAULT_PROJECT, host, grpc_host).items())
        finally:
            client.close()
            monkeypatch.undo()


class _Receiver(BaseHTTPRequestHandler):
    """Takes the sink's push notifications and looks, at that moment, at the table each one names."""

    client = None
    seen: list = []

    def do_POST(self):  # noqa: N802 (http.server's name)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        message = json.loads(base64.b64decode(body["message"]["data"]))
        table = f"{message['dataset']}.{message['table']['name']}_v_{message['table']['version']}"
        rows = list(self.client.query(f"SELECT count(*) FROM {table}").result())[0][0]
        self.seen.append((table, rows))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def landed(spark, connector_stack, tmp_path_factory):
    client, options = connector_stack
    root = tmp_path_factory.mktemp("connector-input")
    write_ndjson(root / "in" / "a.json", [
        record("orders", ROW, SCHEMA, database="cdc", operation="INSERT", position="mysql-bin.000001:4"),
        record("orders", {name: None for name, _ in SCHEMA} | {"id": 8}, SCHEMA, database="cdc"),
        record("orders", {**ROW, "id": 9, "born": "2024-02-30"}, SCHEMA, database="cdc"),
        "not a record",
    ])
    _Receiver.client, _Receiver.seen = client, []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        result = run(spark, SinkOptions(input=str(root / "in"), warehouse="bigquery://test-project", dataset="cdc",
                                        bigquery_options=options, notify=f"http://127.0.0.1:{server.server_port}/"))
    finally:
        server.shutdown()
    return client, result


def test_counts_add_up(landed):
    _, result = landed
    assert (result.counts.read, dict(result.counts.written), dict(result.counts.quarantined)) == (
        4, {f"cdc.{TABLE}": 2}, {"type_mismatch": 1, "unparseable": 1})


def test_every_type_reads_back_as_the_source_value(landed):
    client, _ = landed
    names = ", ".join(name for name, _ in SCHEMA)
    rows = [tuple(row.values()) for row in client.query(f"SELECT {names} FROM cdc.{TABLE} ORDER BY id").result()]
    assert rows[0][6] == base64.b64encode(b"\x00\x01\xff")   # the emulator's difference, see the test below
    assert rows[0][:6] + rows[0][7:] == (
        7, Decimal("1234.50"), Decimal("12345678901234567890"), 0.25, True, "Zoë", date(2024, 2, 29), datetime(2024, 5, 1, 10, 0, 0, 123456),
        datetime(2024, 5, 1, 8, 0, tzinfo=timezone.utc), time(9, 30), {"a": [1, 2]},
        {"street": "Main", "zip": 1000}, ["x", "y"])
    assert rows[1] == (8, *([None] * 11), None, [])   # a NULL ARRAY reads back as [] in BigQuery


def test_cdc_columns_are_written(landed):
    client, _ = landed
    (row,) = client.query(f"SELECT _cdc_operation, _cdc_position, _cdc_database, _cdc_sequence FROM cdc.{TABLE} "
                          "WHERE id = 7").result()
    assert tuple(row.values()) == ("INSERT", "mysql-bin.000001:4", "cdc",
                                   "00000000000000000001" "00000000000000000004" "00000000000000000000")


def test_quarantine_rows_are_written_through_the_connector(landed):
    client, _ = landed
    rows = sorted(tuple(r.values()) for r in client.query(
        "SELECT reason, detail, table_name FROM cdc._uniview_quarantine").result())
    assert rows == [("type_mismatch", "values that do not fit: born (date)", "orders"),
                    ("unparseable", "the line is not a JSON object", None)]


def test_the_new_table_is_announced_only_once_its_rows_are_in(landed):
    assert _Receiver.seen == [(f"cdc.{TABLE}", 2)]


def test_columns_staged_as_text_land_in_their_types(spark, connector_stack, tmp_path):
    """GEOGRAPHY and BIGNUMERIC of more than 38 digits travel as text (the connector's direct write refuses
    both for such columns) and are converted by the promotion's SQL."""
    client, options = connector_stack
    schema = [("id", "int"), ("place", "point"), ("huge", "decimal(40,2)")]
    write_ndjson(tmp_path / "in" / "a.json", [record("spots", {"id": 1, "place": "POINT(1 2)", "huge": "12.50"}, schema,
                                                     database="text")])
    result = run(spark, SinkOptions(input=str(tmp_path / "in"), warehouse="bigquery://test-project",
                                    bigquery_options=options))
    assert result.counts.total_written == 1
    table = f"spots_v_{compute_version('spots', [SourceColumn(n, t) for n, t in schema])}"
    (row,) = client.query(f"SELECT id, ST_ASTEXT(place), huge FROM text.{table}").result()
    assert tuple(row.values()) == (1, "POINT(1 2)", Decimal("12.5"))


def test_emulator_difference_bytes_moved_by_insert_select_keep_their_base64_text(landed):
    """BigQuery copies BYTES values as they are
    (https://cloud.google.com/bigquery/docs/reference/standard-sql/data-types#bytes_type).  The emulator
    stores BYTES that INSERT ... SELECT moves out of a table filled through the Storage Write API as their
    base64 text, so the round trip above reads b'AAH/' for b'\\x00\\x01\\xff'; on BigQuery it reads the bytes."""
    client, _ = landed
    (row,) = client.query(f"SELECT raw, TO_BASE64(raw) FROM cdc.{TABLE} WHERE id = 7").result()
    assert tuple(row.values()) == (b"AAH/", "QUFILw==")
