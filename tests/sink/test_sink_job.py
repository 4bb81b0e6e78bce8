"""The sink job on a real local SparkSession and a real DuckDB file."""

from __future__ import annotations

import base64
import json
from collections import Counter
from datetime import UTC, date, datetime, time
from decimal import Decimal

import duckdb
import pytest
from sink_support import columns_of, query, record, tables_of, write_ndjson

from uniview.core.types import parse_type
from uniview.sink import slots
from uniview.sink.job import SinkOptions, run
from uniview.sink.landing import BatchKey
from uniview.sink.routing import LandingColumn
from uniview.sink.versioning import SourceColumn, compute_version
from uniview.warehouse.url import duckdb_url

CUSTOMER_V1 = [("id", "int(11)"), ("first_name", "varchar(255)")]
CUSTOMER_V2 = [("id", "int(11)"), ("first_name", "varchar(100)")]
CUSTOMER_DECLARED = [("id", "varchar(36)"), ("email", "varchar(255)")]
ORDERS_V1 = [
    ("id", "bigint(20) unsigned"),
    ("amount", "decimal(10,2)"),
    ("created_at", "datetime"),
    ("paid", "tinyint(1)"),
]
ORDERS_V2 = [("id", "bigint(20) unsigned"), ("amount", "decimal(12,2)"), ("created_at", "timestamp"), ("note", "json")]
PRODUCTS_V1 = [("id", "int"), ("price", "decimal(10,2)"), ("picture", "blob"), ("shipped_at", "timestamp(6)")]
PRODUCTS_V2 = [("id", "int"), ("tags", "set('a','b')")]


def version_of(table, schema):
    return compute_version(table, [SourceColumn(n, t) for n, t in schema])


def good_records():
    """3 tables x 7 versions, 15 rows."""
    return [
        *[
            record(
                "customer",
                {"id": i, "first_name": f"n{i}"},
                CUSTOMER_V1,
                operation="INSERT",
                position=f"mysql-bin.000003:{i}",
                timestamp="2024-05-01T10:00:00Z",
            )
            for i in range(3)
        ],
        *[record("customer", {"id": i, "first_name": None}, CUSTOMER_V2) for i in range(2)],
        *[
            record("customer", {"id": f"c-{i}", "email": f"{i}@x"}, CUSTOMER_DECLARED, version="5b6ffe5fb")
            for i in range(2)
        ],
        record("customer", {"id": "c-9"}, version="5b6ffe5fb"),
        *[
            record(
                "orders",
                {"id": 18446744073709551615 - i, "amount": 12.5, "created_at": "2024-05-01 10:00:00", "paid": 1},
                ORDERS_V1,
            )
            for i in range(2)
        ],
        *[
            record(
                "orders",
                {"id": i, "amount": "99.99", "created_at": "2024-05-01T10:00:00+02:00", "note": None},
                ORDERS_V2,
            )
            for i in range(2)
        ],
        *[record("products", {"id": i}, PRODUCTS_V1) for i in range(2)],
        record("products", {"id": 1, "tags": "a,b"}, PRODUCTS_V2),
    ]


BAD_LINES = [
    ("not json", "unparseable"),
    ("[1, 2]", "unparseable"),
    ("   ", "unparseable"),
    (json.dumps({"data": {"id": 1}}), "missing_metadata"),
    (json.dumps({"data": {"id": 1}, "metadata": {"database_name": "shop"}}), "missing_metadata"),
    (json.dumps(record("customer", {"id": 1, "first_name": "x"}, CUSTOMER_V1, database=None)), "missing_metadata"),
    (json.dumps(record("bad;name", {"id": 1}, [("id", "int")])), "invalid_metadata"),
    (json.dumps(record("customer", {"id": 1}, [("id", "int")], version="UPPER")), "invalid_metadata"),
    (
        json.dumps(record("customer", {"id": 1, "first_name": "x"}, CUSTOMER_V1, timestamp="yesterday")),
        "invalid_metadata",
    ),
    (json.dumps(record("customer", {"id": 1}, [("id", "int")], database="my-db")), "invalid_metadata"),
    (json.dumps(record("customer", {"id": 1}, [])), "invalid_schema"),
    (json.dumps(record("customer", {"id": 1}, [("id", "int"), ("id", "int")])), "invalid_schema"),
    (json.dumps(record("customer", {"id": 1}, version="deadbeef")), "missing_schema"),
    (json.dumps(record("customer", {"id": 1}, [("id", "int")], version="c0ffee")), "version_conflict"),
    (json.dumps(record("customer", {"id": 1}, [("id", "bigint")], version="c0ffee")), "version_conflict"),
    (json.dumps(record("customer", None, CUSTOMER_V1)), "invalid_data"),
    (json.dumps(record("customer", [1, 2], CUSTOMER_V1)), "invalid_data"),
    (json.dumps({"metadata": record("customer", None, CUSTOMER_V1)["metadata"]}), "invalid_data"),
    (json.dumps(record("customer", {"id": 5, "first_name": "x", "age": 3}, CUSTOMER_V1)), "unknown_column"),
    (json.dumps(record("customer", {"id": "abc", "first_name": "x"}, CUSTOMER_V1)), "type_mismatch"),
    (json.dumps(record("customer", {"id": 1.5, "first_name": "x"}, CUSTOMER_V1)), "type_mismatch"),
    (
        json.dumps(record("orders", {"id": 1, "amount": "12.345.6", "created_at": None, "paid": 0}, ORDERS_V1)),
        "type_mismatch",
    ),
    (
        json.dumps(record("orders", {"id": 1, "amount": 1, "created_at": "2024-02-30 10:00:00", "paid": 0}, ORDERS_V1)),
        "type_mismatch",
    ),
    (
        json.dumps(record("orders", {"id": 1, "amount": 1, "created_at": None, "paid": "maybe"}, ORDERS_V1)),
        "type_mismatch",
    ),
]


class RecordingConnection:
    """A DuckDB connection that records the SQL of every statement it executes in `statements`."""

    def __init__(self, connection, statements):
        self._connection, self._statements = connection, statements

    def execute(self, sql, *parameters):
        self._statements.append(sql)
        return self._connection.execute(sql, *parameters)

    def __getattr__(self, name):
        return getattr(self._connection, name)


@pytest.fixture(scope="module")
def mixed_run(spark, tmp_path_factory):
    """One batch run over good records of 3 tables x 7 versions and one bad line per quarantine case, one dataset
    per source database (the records' `shop`; the lines that name no usable one in `uniview`): the warehouse,
    the run's result and the SQL of every statement the landing executed."""
    from uniview.sink import landing_duckdb

    root = tmp_path_factory.mktemp("mixed")
    write_ndjson(root / "in" / "good.json", good_records())
    write_ndjson(root / "in" / "bad.json", [line for line, _ in BAD_LINES])
    warehouse = root / "w.duckdb"
    statements: list[str] = []
    open_connection = landing_duckdb.open_connection
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(
            landing_duckdb, "open_connection", lambda *a, **k: RecordingConnection(open_connection(*a, **k), statements)
        )
        result = run(spark, SinkOptions(input=str(root / "in"), warehouse=duckdb_url(warehouse), dataset=None))
    return warehouse, result, statements


@pytest.fixture(scope="module")
def mixed(mixed_run):
    """The warehouse and the result of `mixed_run`."""
    warehouse, result, _ = mixed_run
    return warehouse, result


def test_a_batch_reads_its_staged_lines_once(mixed_run):
    """Every line's envelope is read by one statement, which both the routing keys and the routed lines use: a
    batch of a million lines pays one JSON pass over them, not one per step."""
    _, result, statements = mixed_run
    assert result.counts.read == len(good_records()) + len(BAD_LINES)
    assert sum("read_parquet(" in sql for sql in statements) == 1


def test_three_tables_times_several_versions_route_in_one_batch(mixed):
    warehouse, result = mixed
    expected = {
        f"customer_v_{version_of('customer', CUSTOMER_V1)}": 3,
        f"customer_v_{version_of('customer', CUSTOMER_V2)}": 2,
        "customer_v_5b6ffe5fb": 3,
        f"orders_v_{version_of('orders', ORDERS_V1)}": 2,
        f"orders_v_{version_of('orders', ORDERS_V2)}": 2,
        f"products_v_{version_of('products', PRODUCTS_V1)}": 2,
        f"products_v_{version_of('products', PRODUCTS_V2)}": 1,
    }
    assert dict(result.counts.written) == {f"shop.{name}": rows for name, rows in expected.items()}
    assert tables_of(warehouse, "shop") == sorted([*expected, "_uniview_quarantine"])
    for name, rows in expected.items():
        assert query(warehouse, f'SELECT count(*) FROM shop."{name}"') == [(rows,)]


def test_every_line_is_written_or_quarantined_with_its_reason(mixed):
    warehouse, result = mixed
    assert result.counts.read == len(good_records()) + len(BAD_LINES)
    assert result.counts.read == result.counts.total_written + result.counts.total_quarantined
    assert dict(result.counts.quarantined) == dict(Counter(reason for _, reason in BAD_LINES))
    stored = query(warehouse, "SELECT reason, count(*) FROM shop._uniview_quarantine GROUP BY 1") + query(
        warehouse, "SELECT reason, count(*) FROM uniview._uniview_quarantine GROUP BY 1"
    )
    merged = Counter()
    for reason, rows in stored:
        merged[reason] += rows
    assert merged == Counter(reason for _, reason in BAD_LINES)


def test_quarantine_rows_keep_the_line_file_and_detail(mixed):
    warehouse, _ = mixed
    rows = query(
        warehouse,
        "SELECT raw_line, detail, source_file, table_name, table_version FROM shop._uniview_quarantine "
        "WHERE reason = 'type_mismatch' ORDER BY raw_line",
    )
    lines = dict(BAD_LINES)
    assert all(lines[raw] == "type_mismatch" for raw, *_ in rows) and len(rows) == 5
    by_line = {raw: (detail, source, table, version) for raw, detail, source, table, version in rows}
    abc = json.dumps(record("customer", {"id": "abc", "first_name": "x"}, CUSTOMER_V1))
    assert by_line[abc] == (
        "values that do not fit: id (int(11))",
        by_line[abc][1],
        "customer",
        version_of("customer", CUSTOMER_V1),
    )
    assert by_line[abc][1].endswith("/in/bad.json")
    orphans = query(warehouse, "SELECT reason FROM uniview._uniview_quarantine ORDER BY 1")
    assert orphans == [
        ("invalid_metadata",),
        ("missing_metadata",),
        ("missing_metadata",),
        ("unparseable",),
        ("unparseable",),
        ("unparseable",),
    ]


def test_all_null_columns_keep_their_declared_types(mixed):
    warehouse, _ = mixed
    assert columns_of(warehouse, "shop", f"products_v_{version_of('products', PRODUCTS_V1)}") == [
        ("id", "BIGINT"),
        ("price", "DECIMAL(10,2)"),
        ("picture", "BLOB"),
        ("shipped_at", "TIMESTAMP WITH TIME ZONE"),
        ("_cdc_ingestion_method", "VARCHAR"),
        ("_cdc_operation", "VARCHAR"),
        ("_cdc_position", "VARCHAR"),
        ("_cdc_timestamp", "TIMESTAMP WITH TIME ZONE"),
        ("_cdc_ingested_at", "TIMESTAMP WITH TIME ZONE"),
        ("_cdc_database", "VARCHAR"),
        ("_cdc_sequence", "VARCHAR"),
        ("_cdc_unavailable", "VARCHAR[]"),
    ]
    assert columns_of(warehouse, "shop", f"orders_v_{version_of('orders', ORDERS_V2)}")[:4] == [
        ("id", "DECIMAL(20,0)"),
        ("amount", "DECIMAL(12,2)"),
        ("created_at", "TIMESTAMP WITH TIME ZONE"),
        ("note", "JSON"),
    ]


def test_values_and_cdc_columns_land_typed(mixed):
    warehouse, _ = mixed
    orders = query(
        warehouse,
        f'SELECT id, amount, created_at, paid FROM shop."orders_v_{version_of("orders", ORDERS_V1)}" ORDER BY id',
    )
    assert orders == [
        (Decimal("18446744073709551614"), Decimal("12.50"), datetime(2024, 5, 1, 10), True),
        (Decimal("18446744073709551615"), Decimal("12.50"), datetime(2024, 5, 1, 10), True),
    ]
    zoned = query(warehouse, f'SELECT DISTINCT created_at FROM shop."orders_v_{version_of("orders", ORDERS_V2)}"')
    assert zoned == [(datetime(2024, 5, 1, 8, tzinfo=UTC),)]
    cdc = query(
        warehouse,
        f"SELECT _cdc_ingestion_method, _cdc_operation, _cdc_position, _cdc_timestamp FROM "
        f'shop."customer_v_{version_of("customer", CUSTOMER_V1)}" WHERE id = 2',
    )
    assert cdc == [("BINLOG", "INSERT", "mysql-bin.000003:2", datetime(2024, 5, 1, 10, tzinfo=UTC))]


def test_version_tables_record_their_declared_schema(mixed):
    warehouse, _ = mixed
    comment = query(warehouse, "SELECT comment FROM duckdb_tables() WHERE table_name = 'customer_v_5b6ffe5fb'")[0][0]
    columns = [["id", "varchar(36)"], ["email", "varchar(255)"]]
    # printf '%s' '[["id",null,false,true],["email",null,false,true]]' | sha256sum | cut -c1-12
    declaration = "6a2fa22a0763"  # no default, nullable: the digest of what the records declared
    assert json.loads(comment) == {
        "uniview_source_schema": {"table": "customer", "columns": columns, "declaration": declaration}
    }


ALL_TYPES = [
    ("i", "int(11)"),
    ("flag", "tinyint(1)"),
    ("big", "bigint(20) unsigned"),
    ("price", "decimal(10,2)"),
    ("wide", "decimal(50,10)"),
    ("ratio", "double"),
    ("name", "varchar(20)"),
    ("raw", "varbinary(16)"),
    ("d", "date"),
    ("dt", "datetime(6)"),
    ("ts", "timestamp"),
    ("t", "time"),
    ("y", "year"),
    ("bits", "bit(8)"),
    ("doc", "json"),
    ("place", "point"),
    ("address", "STRUCT<street STRING, zip INT64>"),
    ("tags", "ARRAY<STRING>"),
]


def test_every_type_parses_natively(spark, tmp_path):
    row = {
        "i": -7,
        "flag": 0,
        "big": "18446744073709551615",
        "price": 1234.5,
        "wide": "12345678901234567890123.0123456789",
        "ratio": 0.25,
        "name": 42,
        "raw": base64.b64encode(b"\x00\x01\xff").decode(),
        "d": "2024-02-29",
        "dt": "2024-05-01T10:00:00.123456",
        "ts": "2024-05-01 10:00:00",
        "t": "23:59:59.5",
        "y": 2024,
        "bits": 255,
        "doc": {"a": [1, 2]},
        "place": "POINT(1 2)",
        "address": {"street": "Main", "zip": 1000},
        "tags": ["a", "b"],
    }
    write_ndjson(
        tmp_path / "in" / "types.json",
        [record("everything", row, ALL_TYPES), record("everything", {name: None for name, _ in ALL_TYPES}, ALL_TYPES)],
    )
    warehouse = tmp_path / "cdc.duckdb"  # a catalog named like the dataset: every name must be fully qualified
    result = run(spark, SinkOptions(input=str(tmp_path / "in"), warehouse=duckdb_url(warehouse), dataset="cdc"))
    assert result.counts.total_written == 2 and result.counts.total_quarantined == 0
    table = f"everything_v_{version_of('everything', ALL_TYPES)}"
    assert [t for _, t in columns_of(warehouse, "cdc", table)][: len(ALL_TYPES)] == [
        "BIGINT",
        "BOOLEAN",
        "DECIMAL(20,0)",
        "DECIMAL(10,2)",
        "DOUBLE",
        "DOUBLE",
        "VARCHAR",
        "BLOB",
        "DATE",
        "TIMESTAMP",
        "TIMESTAMP WITH TIME ZONE",
        "TIME",
        "BIGINT",
        "BIGINT",
        "JSON",
        "VARCHAR",
        "STRUCT(street VARCHAR, zip BIGINT)",
        "VARCHAR[]",
    ]
    names = ", ".join(name for name, _ in ALL_TYPES)
    values = query(warehouse, f"SELECT {names} FROM cdc.cdc.{table} ORDER BY i NULLS LAST")
    assert values[0] == (
        -7,
        False,
        Decimal("18446744073709551615"),
        Decimal("1234.50"),
        12345678901234567890123.0123456789,
        0.25,
        "42",
        b"\x00\x01\xff",
        date(2024, 2, 29),
        datetime(2024, 5, 1, 10, 0, 0, 123456),
        datetime(2024, 5, 1, 10, tzinfo=UTC),
        time(23, 59, 59, 500000),
        2024,
        255,
        '{"a":[1,2]}',
        "POINT(1 2)",
        {"street": "Main", "zip": 1000},
        ["a", "b"],
    )
    assert values[1] == (None,) * len(ALL_TYPES)


def test_values_outside_a_type_are_quarantined(spark, tmp_path):
    cases = {
        "t": "24:00:00",
        "d": "0000-00-00",
        "raw": "not base64!",
        "doc": "{broken",
        "wide": "1e40",  # 41 integer digits in a decimal(50,10)
        "big": "123456789012345678901",
        "i": 2**63,
        "address": "Main St",
    }
    # i and y share the first two INT64 staged columns; d's comes after: the detail follows the declared order
    several = record("everything", {"y": "abc", "d": "2024-13-01", "i": "x"}, ALL_TYPES)
    write_ndjson(
        tmp_path / "in" / "bad.json",
        [record("everything", {name: value}, ALL_TYPES) for name, value in cases.items()] + [several],
    )
    warehouse = tmp_path / "w.duckdb"
    result = run(spark, SinkOptions(input=str(tmp_path / "in"), warehouse=duckdb_url(warehouse), dataset="cdc"))
    assert dict(result.counts.quarantined) == {"type_mismatch": len(cases) + 1}
    details = sorted(row[0] for row in query(warehouse, "SELECT detail FROM cdc._uniview_quarantine"))
    declared = dict(ALL_TYPES)
    assert details == sorted(
        [f"values that do not fit: {name} ({declared[name]})" for name in cases]
        + ["values that do not fit: i (int(11)), d (date), y (year)"]
    )


EARLY = [("d", "date"), ("ts", "timestamp"), ("item", "STRUCT<qty INT64, at DATE>"), ("days", "ARRAY<DATE>")]


def test_dates_back_to_year_one_land_and_nested_values_that_do_not_fit_are_quarantined(spark, tmp_path):
    """BigQuery's dates start at 0001-01-01; a nested value that does not fit quarantines its record, never
    lands as NULL, and never fails the batch."""
    early = {
        "d": "0001-01-01",
        "ts": "0001-01-01 00:00:00Z",
        "item": {"qty": 1, "at": "1582-10-04"},
        "days": ["0001-01-01", "1582-10-15"],
    }
    misfits = [{"item": {"qty": 1.5}}, {"item": {"at": "2024-13-01"}}, {"days": ["2024-02-30"]}, {"days": [1]}]
    write_ndjson(
        tmp_path / "in" / "early.json",
        [record("early", early, EARLY), *[record("early", data, EARLY) for data in misfits]],
    )
    warehouse = tmp_path / "w.duckdb"
    result = run(spark, SinkOptions(input=str(tmp_path / "in"), warehouse=duckdb_url(warehouse), dataset="cdc"))
    assert result.counts.total_written == 1 and dict(result.counts.quarantined) == {"type_mismatch": len(misfits)}
    table = f"early_v_{version_of('early', EARLY)}"
    assert query(warehouse, f"SELECT d, ts, item, days FROM cdc.{table}") == [
        (
            date(1, 1, 1),
            datetime(1, 1, 1, tzinfo=UTC),
            {"qty": 1, "at": date(1582, 10, 4)},
            [date(1, 1, 1), date(1582, 10, 15)],
        )
    ]
    details = sorted(row[0] for row in query(warehouse, "SELECT detail FROM cdc._uniview_quarantine"))
    assert details == sorted(
        ["values that do not fit: item (STRUCT<qty INT64, at DATE>)"] * 2
        + ["values that do not fit: days (ARRAY<DATE>)"] * 2
    )


def _shape(*types: str) -> tuple[LandingColumn, ...]:
    return tuple(LandingColumn(f"c{i}", None, parse_type(t)) for i, t in enumerate(types))


def test_shapes_share_typed_columns_by_type():
    both = slots.assign_slots([_shape("INT64", "STRING"), _shape("INT64", "STRING", "INT64")], [0, 1])
    assert [(s.column, str(s.bq_type), s.members) for s in both] == [
        ("x0", "INT64", ((0, 0), (1, 0))),
        ("x1", "INT64", ((1, 2),)),
        ("x2", "STRING", ((0, 1), (1, 1))),
    ]
    assert slots.slot_fields(both) == {(0, 0): "x0", (1, 0): "x0", (1, 2): "x1", (0, 1): "x2", (1, 1): "x2"}
    assert slots.chunk_shapes([_shape("INT64", "STRING")] * 3, 3) == [[0, 1, 2]]
    assert slots.chunk_shapes([_shape("INT64", "STRING"), _shape("DATE", "BOOL"), _shape("INT64")], 3) == [[0], [1, 2]]
    assert slots.chunk_shapes([_shape("INT64", "STRING", "DATE", "BOOL")], 3) == [[0]]


def test_a_replayed_batch_is_skipped_and_a_conflicting_version_is_quarantined(spark, tmp_path):
    from uniview.sink.job import Sink, open_landing
    from uniview.sink.notify import NoNotifier

    first = write_ndjson(tmp_path / "a" / "1.json", [record("t", {"id": 1}, [("id", "int")], version="v1")])
    second = write_ndjson(
        tmp_path / "b" / "2.json",
        [
            record("t", {"id": 2}, [("id", "int")], version="v1"),
            record("t", {"id": "x"}, [("id", "varchar(5)")], version="v1"),
            record("t", {"id": 3}, version="v1"),
        ],
    )
    options = SinkOptions(input=str(first), warehouse=duckdb_url(tmp_path / "w.duckdb"))
    landing = open_landing(spark, options)
    sink = Sink(spark, options, landing, NoNotifier())
    lines = spark.read.text(str(first)).selectExpr("value", "_metadata.file_path AS source_file")
    assert sink.process(lines, BatchKey("s", 0)).replayed is False
    assert sink.process(lines, BatchKey("s", 0)).replayed is True
    later = spark.read.text(str(second)).selectExpr("value", "_metadata.file_path AS source_file")
    counts = sink.process(later, BatchKey("s", 1))
    landing.close()
    assert (counts.total_written, dict(counts.quarantined)) == (2, {"version_conflict": 1})
    assert query(tmp_path / "w.duckdb", "SELECT id FROM cdc.t_v_v1 ORDER BY id") == [(1,), (2,), (3,)]
    assert query(
        tmp_path / "w.duckdb", "SELECT stream, batch_id, read, written FROM main._uniview_batches ORDER BY 2"
    ) == [("s", 0, 1, 1), ("s", 1, 3, 2)]


def test_json_numbers_of_more_digits_than_a_double_holds_land_exactly(spark, tmp_path):
    schema = [
        ("id", "int"),
        ("amount", "decimal(20,2)"),
        ("total", "decimal(38,9)"),
        ("small", "decimal(12,2)"),
        ("item", "STRUCT<price NUMERIC(20, 2)>"),
    ]
    metadata = json.dumps(record("money", None, schema)["metadata"])
    lines = [  # written by hand: json.dumps would round these numbers through a double first
        '{"data": {"id": 1, "amount": 12345678901234567.89, "total": 12345678901234567890123456789.123456789, '
        '"small": 1234567890.12, "item": {"price": 98765432109876543.21}}, "metadata": ' + metadata + "}",
        '{"data": {"id": 2, "amount": 1}, "metadata": ' + metadata + "}",
        '{"data": {"id": 3, "id": 4}, "metadata": ' + metadata + "}",  # which id was meant cannot be known
    ]
    write_ndjson(tmp_path / "in" / "exact.json", lines)
    warehouse = tmp_path / "w.duckdb"
    result = run(spark, SinkOptions(input=str(tmp_path / "in"), warehouse=duckdb_url(warehouse), dataset="cdc"))
    assert (result.counts.total_written, dict(result.counts.quarantined)) == (2, {"invalid_data": 1})
    assert query(warehouse, "SELECT detail FROM cdc._uniview_quarantine") == [
        ("data names the same key more than once",)
    ]
    table = f"money_v_{version_of('money', schema)}"
    assert query(warehouse, f"SELECT id, amount, total, small, item.price FROM cdc.{table} ORDER BY id") == [
        (
            1,
            Decimal("12345678901234567.89"),
            Decimal("12345678901234567890123456789.123456789"),
            Decimal("1234567890.12"),
            Decimal("98765432109876543.21"),
        ),
        (2, Decimal("1.00"), None, None, None),
    ]


def test_a_batch_larger_than_the_load_memory_spills_and_lands_whole(spark, tmp_path, monkeypatch):
    from uniview.sink import landing_duckdb

    records = [record("customer", {"id": i, "first_name": f"{i:06d}" + "x" * 2000}, CUSTOMER_V1) for i in range(150000)]
    write_ndjson(tmp_path / "in" / "big.json", records)
    spilled = []
    load_routes = landing_duckdb._load_routes

    def observed(connection, *arguments):  # the lines are read, with their decisions, before the routes load
        spilled.append(connection.execute("SELECT coalesce(sum(size), 0) FROM duckdb_temporary_files()").fetchone()[0])
        load_routes(connection, *arguments)

    monkeypatch.setattr(landing_duckdb, "_load_routes", observed)
    staging = tmp_path / "staging"
    warehouse = tmp_path / "w.duckdb"
    result = run(
        spark,
        SinkOptions(
            input=str(tmp_path / "in"), warehouse=duckdb_url(warehouse), staging_dir=str(staging), load_memory="512MB"
        ),
    )  # DuckDB's working set is about 300 MB
    [spilled_bytes] = spilled
    assert spilled_bytes > 0  # ~300 MB of lines did not all fit: on disk, not in memory
    table = f"customer_v_{version_of('customer', CUSTOMER_V1)}"
    assert dict(result.counts.written) == {f"cdc.{table}": 150000}
    assert query(warehouse, f"SELECT count(*), count(DISTINCT id), min(length(first_name)) FROM cdc.{table}") == [
        (150000, 150000, 2006)
    ]
    assert list(staging.iterdir()) == []  # the spilled blocks went with the batch's staging directory


def test_an_interrupted_load_rolls_back_and_lands_nothing(spark, tmp_path, monkeypatch):
    import threading

    from uniview.core.errors import WarehouseError
    from uniview.sink import landing_duckdb
    from uniview.sink.job import Sink, open_landing
    from uniview.sink.notify import NoNotifier

    write_ndjson(tmp_path / "in" / "a.json", good_records())
    warehouse = tmp_path / "w.duckdb"
    options = SinkOptions(input=str(tmp_path / "in"), warehouse=duckdb_url(warehouse))
    landing = open_landing(spark, options)
    load_routes = landing_duckdb._load_routes

    def interrupted_after_the_rows(connection, *arguments):
        load_routes(connection, *arguments)  # the version tables are written, in the batch's transaction
        threading.Timer(0.3, landing.interrupt).start()  # as Ctrl-C's handler does, from its own thread
        connection.execute("SELECT count(*) FROM range(1000000000000)").fetchall()

    monkeypatch.setattr(landing_duckdb, "_load_routes", interrupted_after_the_rows)
    lines = spark.read.text(str(tmp_path / "in")).selectExpr("value", "_metadata.file_path AS source_file")
    with pytest.raises(WarehouseError, match="nothing was written"):
        Sink(spark, options, landing, NoNotifier()).process(lines, BatchKey("s", 0))
    landing.interrupt()  # no batch loading: nothing to stop
    landing.close()
    assert query(warehouse, "SELECT schema_name, table_name FROM duckdb_tables()") == []


@pytest.mark.parametrize(
    ("physical_gib", "limit"), [(2, "1024MiB"), (8, "1024MiB"), (12, "1536MiB"), (16, "2048MiB"), (256, "2048MiB")]
)
def test_the_default_load_memory_is_an_eighth_of_the_machine_between_1_and_2_gb(monkeypatch, physical_gib, limit):
    from uniview.sink import landing_duckdb

    pages = {"SC_PAGE_SIZE": 4096, "SC_PHYS_PAGES": physical_gib * (1 << 30) // 4096}
    monkeypatch.setattr(landing_duckdb.os, "sysconf", pages.__getitem__)
    assert landing_duckdb.load_memory_limit() == limit
    with duckdb.connect() as connection:  # a size DuckDB reads
        connection.execute(f"SET memory_limit = '{limit}'")
        assert (
            connection.execute("SELECT current_setting('memory_limit')")
            .fetchone()[0]
            .startswith(("1.0 GiB", "1.5 GiB", "2.0 GiB"))
        )
