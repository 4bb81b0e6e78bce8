"""Every landed row keeps its source database and its place in the source's log; primary keys are recorded;
tables of the older landing layout are refused until `uniview migrate-landing` adds the new columns."""

from __future__ import annotations

import json
import re

import duckdb
import pytest
from click.testing import CliRunner
from sink_support import query, record, write_ndjson

from uniview.cli.main import main
from uniview.core.errors import UniviewError
from uniview.core.version_description import described_primary_key
from uniview.sink import landing_duckdb
from uniview.sink.debezium import convert_event, key_columns
from uniview.sink.job import SinkOptions, run
from uniview.sink.sequence import sequence_of
from uniview.sink.versioning import SourceColumn, compute_version
from uniview.warehouse.url import duckdb_url

SCHEMA = [("id", "int(11)"), ("name", "varchar(20)")]
TABLE = f"customer_v_{compute_version('customer', [SourceColumn(n, t) for n, t in SCHEMA])}"

POSITIONS = [
    ("mysql-bin.000003:1234", "000000000000000000030000000000000000123400000000000000000000"),
    ("mysql-bin.000003:1234:7", "000000000000000000030000000000000000123400000000000000000007"),
    ("binlog.000010:4", "000000000000000000100000000000000000000400000000000000000000"),
    ("23923456", "00000000000023923456"),
    ("0/16B3748", str(0x16B3748).zfill(20)),
    ("1/0", str(1 << 32).zfill(20)),
    ("FFFFFFFF/FFFFFFFF", str((1 << 64) - 1).zfill(20)),
    ("mysql-bin.index", None),
    ("", None),
    ("12:ab", None),
    ("123456789012345678901", None),
    (None, None),
]


@pytest.mark.parametrize("position, expected", POSITIONS)
def test_sequence_of_each_position_shape(position, expected):
    assert sequence_of(position) == expected


def test_sql_expression_equals_the_reference_on_every_shape():
    import duckdb
    from sqlglot import exp

    from uniview.sink.sequence import sequence_sql

    rows = (
        duckdb.connect()
        .execute(
            f"SELECT {sequence_sql(exp.column('p')).sql('duckdb')} FROM (SELECT unnest(?) AS p)",
            [[p for p, _ in POSITIONS]],
        )
        .fetchall()
    )
    assert [row[0] for row in rows] == [sequence_of(p) for p, _ in POSITIONS]


def test_sequences_sort_in_commit_order_across_files_and_within_a_position():
    in_commit_order = [
        "mysql-bin.000009:99999",
        "mysql-bin.000010:4",
        "mysql-bin.000010:4:1",
        "mysql-bin.000010:120",
        "mysql-bin.000100:4",
    ]
    assert sorted(in_commit_order, key=sequence_of) == in_commit_order
    lsns = ["0/FFFFFFFF", "1/0", "1/1", "A/0"]
    assert sorted(lsns, key=sequence_of) == lsns
    assert sequence_of(str(0x1_0000_0001)) == sequence_of("1/1")


@pytest.fixture(scope="module")
def two_tenants(spark, tmp_path_factory):
    root = tmp_path_factory.mktemp("tenants")
    lines = [
        record(
            "customer",
            {"id": 1, "name": f"{db}-one"},
            SCHEMA,
            database=db,
            operation="INSERT",
            position=f"mysql-bin.00000{n}:{100 + n}",
            primary_key=["id"],
        )
        for n, db in enumerate(["customer1", "customer2"], start=1)
    ]
    write_ndjson(root / "in" / "a.json", lines)
    later = [
        record(
            "customer",
            {"id": 2, "name": "other key"},
            SCHEMA,
            database="customer1",
            position="mysql-bin.000001:1",
            primary_key=["name"],
        ),
        record("customer", {"id": 3, "name": "bad key"}, SCHEMA, database="customer1", primary_key=["nope"]),
    ]
    write_ndjson(root / "later" / "b.json", later)
    warehouse = root / "w.duckdb"
    run(spark, SinkOptions(input=str(root / "in"), warehouse=duckdb_url(warehouse), dataset="cdc"))
    result = run(spark, SinkOptions(input=str(root / "later"), warehouse=duckdb_url(warehouse), dataset="cdc"))
    return warehouse, result


def test_rows_of_two_databases_with_the_same_key_stay_distinguishable(two_tenants):
    warehouse, _ = two_tenants
    assert query(warehouse, f'SELECT _cdc_database, id, name, _cdc_sequence FROM cdc."{TABLE}" ORDER BY 1') == [
        ("customer1", 1, "customer1-one", sequence_of("mysql-bin.000001:101")),
        ("customer2", 1, "customer2-one", sequence_of("mysql-bin.000002:102")),
    ]


def test_the_primary_key_is_recorded_a_redefined_key_starts_a_version_and_unknown_keys_are_quarantined(two_tenants):
    warehouse, result = two_tenants
    comment = query(warehouse, "SELECT comment FROM duckdb_tables() WHERE table_name = ?", [TABLE])[0][0]
    assert described_primary_key(comment) == ("id",)
    keyed = f"customer_v_{compute_version('customer', [SourceColumn(n, t) for n, t in SCHEMA], ['name'])}"
    comment = query(warehouse, "SELECT comment FROM duckdb_tables() WHERE table_name = ?", [keyed])[0][0]
    assert described_primary_key(comment) == ("name",)
    assert query(warehouse, f'SELECT id, name FROM cdc."{keyed}"') == [(2, "other key")]
    assert dict(result.counts.quarantined) == {"invalid_metadata": 1}
    details = dict(query(warehouse, "SELECT reason, detail FROM cdc._uniview_quarantine"))
    assert details["invalid_metadata"] == "metadata.primary_key names columns not in metadata.schema: nope"


def test_a_table_of_the_older_layout_stops_the_batch_until_it_is_migrated(spark, tmp_path):
    warehouse = tmp_path / "w.duckdb"
    with duckdb.connect(str(warehouse)) as connection:
        connection.execute("CREATE SCHEMA cdc")
        connection.execute(
            f'CREATE TABLE cdc."{TABLE}" (id BIGINT, name VARCHAR, _cdc_ingestion_method VARCHAR, '
            "_cdc_operation VARCHAR, _cdc_position VARCHAR, _cdc_timestamp TIMESTAMPTZ, "
            "_cdc_ingested_at TIMESTAMPTZ)"
        )
        connection.execute(f"INSERT INTO cdc.\"{TABLE}\" VALUES (1, 'old', 'BINLOG', 'INSERT', NULL, NULL, NULL)")
    write_ndjson(tmp_path / "in" / "a.json", [record("customer", {"id": 2, "name": "new"}, SCHEMA, database="db1")])
    options = SinkOptions(input=str(tmp_path / "in"), warehouse=duckdb_url(warehouse), dataset="cdc")
    with pytest.raises(
        UniviewError,
        match=re.escape(
            "lacks _cdc_database, _cdc_sequence; nothing was written. Run `uniview "
            "migrate-landing --dataset cdc --apply`"
        ),
    ):
        run(spark, options)
    assert query(warehouse, f'SELECT count(*) FROM cdc."{TABLE}"') == [(1,)]
    assert query(warehouse, "SELECT count(*) FROM duckdb_tables() WHERE table_name = '_uniview_quarantine'") == [(0,)]

    url = duckdb_url(warehouse)
    dry = CliRunner().invoke(main, ["migrate-landing", "--warehouse", url, "--dataset", "cdc"])
    assert f"cdc.{TABLE}: add _cdc_database STRING, _cdc_sequence STRING" in dry.output
    assert "--apply" in dry.output and query(
        warehouse, f"SELECT count(*) FROM duckdb_columns() WHERE table_name = '{TABLE}'"
    ) == [(7,)]
    applied = CliRunner().invoke(main, ["migrate-landing", "--warehouse", url, "--dataset", "cdc", "--apply"])
    assert applied.exit_code == 0, applied.output
    again = CliRunner().invoke(main, ["migrate-landing", "--warehouse", url, "--dataset", "cdc"])
    assert "every version table in cdc has today's landing layout" in again.output

    run(spark, options)
    assert query(warehouse, f'SELECT id, name, _cdc_database FROM cdc."{TABLE}" ORDER BY id') == [
        (1, "old", None),
        (2, "new", "db1"),
    ]


DEBEZIUM_VALUE = {
    "op": "c",
    "before": None,
    "after": {"id": 1},
    "ts_ms": 1,
    "source": {"connector": "postgresql", "db": "shop", "table": "customer", "lsn": 24023128},
}


@pytest.mark.parametrize(
    "key, expected",
    [
        (
            {
                "schema": {
                    "type": "struct",
                    "fields": [{"field": "id", "type": "int32"}, {"field": "region", "type": "string"}],
                },
                "payload": {"id": 1, "region": "eu"},
            },
            ["id", "region"],
        ),
        ({"id": 1}, ["id"]),
        (None, None),
        ("not an object", None),
        ({}, None),
    ],
)
def test_debezium_primary_key_comes_from_the_message_key(key, expected):
    key_text = None if key is None else json.dumps(key)
    assert key_columns(key_text) == expected
    converted = json.loads(convert_event(json.dumps(DEBEZIUM_VALUE), key_text))
    assert converted["metadata"].get("primary_key") == expected
    assert converted["metadata"]["position"] == "24023128"


TENANTS = 150


@pytest.fixture(scope="module")
def many_tenants(spark, tmp_path_factory):
    """One table at one schema in TENANTS source databases, each landing in its own dataset (one dataset per
    source database, `--dataset-per-database`), in two runs:
    the second appends to the tables the first created."""
    root = tmp_path_factory.mktemp("many")
    first = [record("customer", {"id": n, "name": f"t{n}"}, SCHEMA, database=f"tenant{n:03d}") for n in range(TENANTS)]
    second = [
        record("customer", {"id": n + 1000, "name": f"t{n}-again"}, SCHEMA, database=f"tenant{n:03d}")
        for n in range(TENANTS)
    ]
    write_ndjson(root / "first" / "a.json", [*first, "junk"])
    write_ndjson(root / "second" / "b.json", second)
    warehouse = root / "w.duckdb"
    typings = []
    typed_routes = landing_duckdb.typed_routes
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(
            landing_duckdb,
            "typed_routes",
            lambda routed, indexes, columns, **options: (
                typings.append(len(indexes)) or typed_routes(routed, indexes, columns, **options)
            ),
        )
        results = [
            run(spark, SinkOptions(input=str(root / folder), warehouse=duckdb_url(warehouse), dataset=None))
            for folder in ("first", "second")
        ]
    return spark, root, warehouse, results, typings


def test_duckdb_types_one_version_in_many_datasets_in_one_statement(many_tenants):
    *_, typings = many_tenants
    assert typings == [TENANTS, TENANTS]  # one typing statement per run for the TENANTS routes of one shape


def test_bigquery_types_one_version_in_many_datasets_in_one_select():
    """BigQuery's load step: the routes of one version in TENANTS datasets share one typed SELECT, and one staged
    column per column of the version."""
    from uniview.sink.bigquery_typing import typing_scripts
    from uniview.sink.mysql_types import bigquery_type
    from uniview.sink.routing import LandingColumn, VersionRoute

    columns = tuple(LandingColumn(name, declared, bigquery_type(declared).bq_type) for name, declared in SCHEMA)
    routes = [VersionRoute(f"tenant{n:03d}", "customer", "v1", columns, exists=True) for n in range(TENANTS)]
    chunks, scripts = typing_scripts("p", "ctl", "`p.ctl.lines`", False, routes, "uniview", "s#0", "staged_")
    assert len(chunks) == len(scripts) == 1 and chunks[0].routes == list(range(TENANTS))
    assert len(set(chunks[0].fields.values())) == len(columns)
    assert scripts[0].sql.count("UNION ALL\n") == 1  # the version's SELECT, and the lines rejected before typing
    assert f"_route IN ({', '.join(map(str, range(TENANTS)))})" in scripts[0].sql


def test_every_tenant_gets_exactly_its_own_rows_in_its_own_dataset(many_tenants):
    _, _, warehouse, (first, second), _ = many_tenants
    assert (first.counts.total_written, dict(first.counts.quarantined)) == (TENANTS, {"unparseable": 1})
    assert len(first.counts.created) == TENANTS and second.counts.created == []
    assert second.counts.total_written == TENANTS
    for n in (0, 77, TENANTS - 1):
        assert query(warehouse, f'SELECT id, name, _cdc_database FROM tenant{n:03d}."{TABLE}" ORDER BY id') == [
            (n, f"t{n}", f"tenant{n:03d}"),
            (n + 1000, f"t{n}-again", f"tenant{n:03d}"),
        ]
    assert query(
        warehouse, "SELECT count(DISTINCT schema_name) FROM duckdb_tables() WHERE table_name = ?", [TABLE]
    ) == [(TENANTS,)]
    assert query(warehouse, "SELECT count(*), count(DISTINCT dataset) FROM _uniview.created_tables") == [
        (TENANTS, TENANTS)
    ]


def test_a_batchs_announcements_are_recorded_in_one_statement_however_many_tables_it_created():
    """The pending announcements of a batch that created a table in each of 1,000 datasets: one statement, not one
    per table; an announcement recorded again is kept once."""
    from counting_connection import CountingConnection

    from uniview.core.landing_layout import PENDING_TABLE
    from uniview.sink.notify import Notification

    created = [Notification(f"tenant{n:04d}", "customer", "v1") for n in range(1000)]
    with duckdb.connect() as connection:
        catalog = landing_duckdb.catalog_of(connection)
        pending = landing_duckdb.path(catalog, "main", PENDING_TABLE)
        connection.execute(landing_duckdb._PENDING_DDL.format(table=pending))
        counting = CountingConnection(connection)
        landing_duckdb._record_pending(counting, catalog, created)
        landing_duckdb._record_pending(counting, catalog, created[:10])
        rows = connection.execute(f"SELECT dataset, table_name, version FROM {pending} ORDER BY dataset").fetchall()
    assert rows == [(n.dataset, n.table, n.version) for n in created]
    assert counting.statements == 2
