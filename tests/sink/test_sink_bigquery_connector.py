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
    assert rows[0] == (
        7, Decimal("1234.50"), Decimal("12345678901234567890"), 0.25, True, "Zoë",
        b"\x00\x01\xff", date(2024, 2, 29), datetime(2024, 5, 1, 10, 0, 0, 123456),
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


@pytest.mark.parametrize("declared", ["point", "decimal(40,10)"])
def test_columns_the_direct_write_refuses_stop_the_batch_before_anything_is_written(spark, connector_stack, tmp_path,
                                                                                      declared):
    """The connector's direct write refuses GEOGRAPHY text ("cannot write source type: STRING to destination
    type: GEOGRAPHY") and decimals over 38 digits ("BigNumeric precision is too wide"): the sink says so first."""
    from uniview.errors import WarehouseError

    client, options = connector_stack
    write_ndjson(tmp_path / "in" / "a.json", [record("spots", {"id": 1, "v": "1"}, [("id", "int"), ("v", declared)],
                                                     database="refused")])
    with pytest.raises(WarehouseError, match=r"direct write cannot write refused\.spots_v_\w+\.v .*writeMethod=indirect"):
        run(spark, SinkOptions(input=str(tmp_path / "in"), warehouse="bigquery://test-project",
                               bigquery_options=options))
    assert [d.dataset_id for d in client.list_datasets() if d.dataset_id == "refused"] == []


def test_emulator_difference_bignumeric_holds_fewer_integer_digits_than_bigquery(spark, connector_stack, tmp_path):
    """BigQuery's BIGNUMERIC holds 38 integer digits
    (https://cloud.google.com/bigquery/docs/reference/standard-sql/data-types#decimal_types); the emulator
    stores at most 20 (NUMERIC takes 29), so the round trip above uses 20 and 21 are refused.  The strict
    commit of the emulator shim turns that into the connector's error instead of silently missing rows."""
    from pyspark.errors import PySparkException
    from py4j.protocol import Py4JJavaError

    _, options = connector_stack
    write_ndjson(tmp_path / "in" / "a.json", [record("big", {"v": "1" * 21}, [("v", "decimal(30,0)")], database="wide")])
    with pytest.raises((PySparkException, Py4JJavaError), match="Cannot convert value to bignumeric"):
        run(spark, SinkOptions(input=str(tmp_path / "in"), warehouse="bigquery://test-project", bigquery_options=options))
