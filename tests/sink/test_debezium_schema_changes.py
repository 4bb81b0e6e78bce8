"""Schema-change events of the MySQL/MariaDB connector that concern no table (the snapshot's
`SET character_set_server=...`, with an empty `databaseName` and no `tableChanges`) are counted as skipped, with
their reason in the sink's summary; every event that names a table, however malformed, is landed or quarantined
as before, so read = written + quarantined + skipped still holds.

The events have the shape Debezium documents for the schema-change topic: the example message of
github.com/debezium/debezium@000835d50f24d83823742b8db223333645c9588d:documentation/modules/ROOT/pages/connectors/mysql.adoc
("Example: Message emitted to the MySQL connector schema change topic"; its `tableChanges` cut to the `id`
column, `{debezium-version}` filled in).  The event of no table is that message with the DDL and database the
snapshot records for the server's character set: github.com/debezium/debezium@03aac3b66e2d18fcb86901f76857b8c7bbcc1805:
debezium-connector-mysql/src/main/java/io/debezium/connector/mysql/MySqlSnapshotChangeEventSource.java,
readTableStructure: `addRawSchemaEvent(snapshotContext, "", connection.setStatementFor(...))` (database "", no
table, so an empty `tableChanges`)."""

from __future__ import annotations

import copy
import json
import re

import pytest
from sink_support import query

from uniview.core.ddl_renames import DDL_TABLE
from uniview.sink.debezium import convert_event
from uniview.sink.reasons import SCHEMA_CHANGE_WITHOUT_TABLE
from uniview.warehouse.url import duckdb_url

#: The documented schema-change message (see the module's docstring).
DOCUMENTED = {
    "schema": {},
    "payload": {
        "source": {
            "version": "2.7.0.Final",
            "connector": "mysql",
            "name": "mysql",
            "ts_ms": 1651535750218,
            "snapshot": "false",
            "db": "inventory",
            "sequence": None,
            "table": "customers",
            "server_id": 223344,
            "gtid": None,
            "file": "mysql-bin.000003",
            "pos": 570,
            "row": 0,
            "thread": None,
            "query": None,
        },
        "databaseName": "inventory",
        "schemaName": None,
        "ddl": "ALTER TABLE customers ADD middle_name varchar(255) AFTER first_name",
        "tableChanges": [
            {
                "type": "ALTER",
                "id": '"inventory"."customers"',
                "table": {
                    "defaultCharsetName": "utf8mb4",
                    "primaryKeyColumnNames": ["id"],
                    "columns": [
                        {
                            "name": "id",
                            "jdbcType": 4,
                            "nativeType": None,
                            "typeName": "INT",
                            "typeExpression": "INT",
                            "charsetName": None,
                            "length": None,
                            "scale": None,
                            "position": 1,
                            "optional": False,
                            "autoIncremented": True,
                            "generated": True,
                        }
                    ],
                    "attributes": [{"customAttribute": "attributeValue"}],
                },
            }
        ],
    },
}
SERVER_CHARSET = "SET character_set_server=utf8mb4, collation_server=utf8mb4_general_ci"


def event(ddl: str = SERVER_CHARSET, database: str | None = "", table_changes: list | None = None, **source) -> dict:
    """The documented message with `ddl`, `databaseName` and `tableChanges` (default: the snapshot's server
    character set: no database, no table), its source's db and table as given (default: none)."""
    changed = copy.deepcopy(DOCUMENTED)
    payload = changed["payload"]
    payload.update(ddl=ddl, databaseName=database, tableChanges=[] if table_changes is None else table_changes)
    payload["source"].update({"db": "", "table": None, "snapshot": "true", **source})
    return changed


def converted(value: dict) -> dict:
    return json.loads(convert_event(json.dumps(value)))


@pytest.mark.parametrize("source_db", ["", None])
def test_the_snapshots_server_character_set_is_a_schema_change_of_no_table(source_db):
    record = converted(event(db=source_db))
    assert record["metadata"] == {
        "ingestion_method": "DEBEZIUM_MYSQL",
        "operation": "DDL",
        "position": "mysql-bin.000003:570:0",
    }  # no table_name, no database_name: the sink skips it
    assert record["data"] == {"ddl": SERVER_CHARSET}


@pytest.mark.parametrize(
    "named",
    [
        pytest.param(event(ddl="ALTER TABLE customers ADD middle_name varchar(255)"), id="a table in the DDL"),
        pytest.param(event(ddl="DROP TABLE IF EXISTS `inventory`.`customers`"), id="a qualified table in the DDL"),
        pytest.param(event(ddl="SET @n = (SELECT count(*) FROM customers)"), id="a table in a SET"),
        pytest.param(event(table_changes=DOCUMENTED["payload"]["tableChanges"]), id="tableChanges"),
        pytest.param(event(table="customers"), id="source.table"),
        pytest.param(event(db="inventory"), id="source.db"),
        pytest.param(event(database="inventory"), id="databaseName"),
        pytest.param(event(ddl="SET character_set_server=utf8mb4; ALTER TABLE t ADD x int"), id="a SET, then DDL"),
        pytest.param(event(ddl="not ) SQL"), id="DDL that is not SQL"),
    ],
)
def test_an_event_that_names_a_table_or_a_database_is_landed_or_quarantined_as_before(named):
    record = converted(named)
    assert record["metadata"]["table_name"] == DDL_TABLE  # a record of `_uniview_ddl`: never skipped


def test_an_event_with_no_source_is_no_record():
    malformed = event()
    del malformed["payload"]["source"]
    assert convert_event(json.dumps(malformed)) == json.dumps(malformed)  # quarantined: no metadata object


def kcat(offset: int, value: dict) -> str:
    """The message as `kcat -C -J` prints it (the schema-change topic's key is the database name)."""
    key = json.dumps({"databaseName": value["payload"]["databaseName"]})
    return json.dumps({"topic": "mysql", "partition": 0, "offset": offset, "key": key, "payload": json.dumps(value)})


@pytest.fixture(scope="module")
def landed(spark, tmp_path_factory):
    """The documented ALTER, the snapshot's two server-level SET events, and a malformed ALTER of no database,
    through the sink into DuckDB with one dataset per source database (each event's database is its dataset)."""
    from uniview.sink.job import SinkOptions, run

    root = tmp_path_factory.mktemp("schema-changes")
    lines = [
        kcat(0, DOCUMENTED),
        kcat(1, event()),
        kcat(2, event(db=None, pos=571)),
        kcat(3, event(ddl="ALTER TABLE customers ADD nickname varchar(20)", pos=572)),
    ]
    (root / "in").mkdir()
    (root / "in" / "events.json").write_text("\n".join(lines) + "\n")
    warehouse = root / "w.duckdb"
    options = SinkOptions(input=str(root / "in"), warehouse=duckdb_url(warehouse), dataset=None, format="debezium")
    return warehouse, run(spark, options), lines


def test_schema_changes_of_no_table_are_skipped_and_every_line_is_accounted_for(landed):
    warehouse, result, lines = landed
    counts = result.counts
    assert dict(counts.skipped) == {SCHEMA_CHANGE_WITHOUT_TABLE: 2}
    assert dict(counts.quarantined) == {"missing_metadata": 1}  # the ALTER of no database: no dataset for it
    assert [table.split("_v_")[0] for table in counts.written] == [f"inventory.{DDL_TABLE}"]
    assert counts.read == len(lines) == counts.total_written + counts.total_quarantined + counts.total_skipped
    quarantined = query(warehouse, "SELECT raw_line, reason FROM uniview._uniview_quarantine")
    assert quarantined == [(lines[3], "missing_metadata")]  # the SET events are stored nowhere
    [ddl] = [t for (t,) in query(warehouse, "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'inventory'")]
    assert query(warehouse, f'SELECT ddl FROM inventory."{ddl}"') == [(DOCUMENTED["payload"]["ddl"],)]


def test_the_summary_names_the_reason_they_were_skipped(landed, capsys):
    from uniview.sink.summary import print_summary, summary_document

    _, result, _ = landed
    document = summary_document(result)
    assert document["skipped_by_kind"] == {SCHEMA_CHANGE_WITHOUT_TABLE: 2}
    assert (document["read"], document["written"], document["quarantined"], document["skipped"]) == (4, 1, 1, 2)
    print_summary(result)
    printed = capsys.readouterr().out
    assert printed.startswith("read=4 written=1 quarantined=1 skipped=2")
    (row,) = [line for line in printed.splitlines() if SCHEMA_CHANGE_WITHOUT_TABLE in line]
    assert re.search(rf"{SCHEMA_CHANGE_WITHOUT_TABLE}\W+2\W*$", row), row  # the skipped table: kind, rows
