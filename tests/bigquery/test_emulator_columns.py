"""A table's columns as uniview's shim reads them (which are NOT NULL from the DuckLake catalog's metadata or a result
table's pragma_table_info(), whether it has the ingestion-time column) are exactly the emulator's own answers, read
with duckdb_columns(): on a catalog whose tables were altered, dropped and created again under the same name with
other NOT NULL columns, a dataset dropped and made again, a view, an ingestion-time partitioned table and the tables
of query results. The last state of a name is the answer, never an earlier one."""

from __future__ import annotations

import textwrap

import pytest
from emulator_shim_support import compared_answers

pytest.importorskip("google.cloud.bigquery")

STATEMENTS = (
    "CREATE SCHEMA first",
    "CREATE SCHEMA again",
    "CREATE TABLE first.orders (id INT64 NOT NULL, note STRING, item STRUCT<sku STRING, qty INT64>)",
    "INSERT INTO first.orders VALUES (1, 'a', STRUCT('x', 2))",
    "ALTER TABLE first.orders ADD COLUMN placed DATE",
    "ALTER TABLE first.orders RENAME COLUMN note TO remark",
    "CREATE TABLE first.reborn (id INT64 NOT NULL, note STRING)",
    "DROP TABLE first.reborn",
    "CREATE TABLE first.reborn (id INT64, note STRING NOT NULL)",
    "CREATE TABLE first.replaced (id INT64 NOT NULL)",
    "CREATE OR REPLACE TABLE first.replaced (id INT64, code STRING NOT NULL)",
    "CREATE TABLE first.trimmed (id INT64 NOT NULL, gone STRING NOT NULL, kept STRING)",
    "ALTER TABLE first.trimmed DROP COLUMN gone",
    "CREATE VIEW first.orders_view AS SELECT id, remark FROM first.orders",
    "CREATE TABLE first.ingested (id INT64) PARTITION BY _PARTITIONDATE",
    "CREATE TABLE again.orders (id INT64 NOT NULL)",
    "DROP SCHEMA again CASCADE",
    "CREATE SCHEMA again",
    "CREATE TABLE again.orders (id INT64, code STRING NOT NULL)",
    "SELECT id, remark FROM first.orders",
)
NAMES = ("orders", "reborn", "replaced", "trimmed", "orders_view", "ingested", "missing")

#: Run by the emulator's interpreter: both answers for every table of the stopped emulator's data.
COMPARE = textwrap.dedent(
    """
    import json, pathlib, runpy, sys
    from local_bigquery.settings import settings
    shim_path, settings.data_dir, settings.default_project_id = sys.argv[1], pathlib.Path(sys.argv[2]), sys.argv[3]
    shim = runpy.run_path(shim_path)  # its patches applied, as `serve` runs them
    database, tables, exp = shim["database"], shim["tables"], shim["exp"]
    project = settings.default_project_id
    database.connection()
    results = [name for (name,) in database.fetch("SELECT table_name FROM duckdb_tables() WHERE schema_name = '_results'")]

    def answer(function, *args):
        try:
            return [field.dump() for field in function(*args)]
        except Exception as error:
            return type(error).__name__ + ": " + str(error)

    def listed(catalog, schema, name):  # the emulator's own reading: duckdb_columns()
        rows = database.fetch(
            "SELECT column_name, is_nullable FROM duckdb_columns() "
            "WHERE database_name = ? AND schema_name = ? AND table_name = ?",
            [catalog, schema, name],
        )
        return dict(rows) or None

    def hidden(function, catalog, schema, name):
        return function(exp.table_(name, db=schema, catalog=catalog, quoted=True))

    names = [(project, dataset, name) for dataset in ("first", "again", "absent") for name in sys.argv[4].split(",")]
    names += [(name.split(":")[0], tables.RESULTS, name.split(":", 1)[1]) for name in results]
    answers = [
        [
            list(key),
            answer(shim["_emulator_columns"], *key),
            answer(tables.columns, *key),
            shim["_table_columns"](*tables.physical(*key)),
            listed(*tables.physical(*key)),
            hidden(shim["_emulator_hidden"], *tables.physical(*key)),
            hidden(shim["partitions"]._hidden, *tables.physical(*key)),
        ]
        for key in names
    ]
    print(json.dumps(answers))
    """
)


def modes(fields: list[dict]) -> dict[str, str]:
    return {field["name"]: field.get("mode", "NULLABLE") for field in fields}


def test_the_shims_columns_are_the_emulators(tmp_path):
    answers = compared_answers(tmp_path, STATEMENTS, COMPARE, ",".join(NAMES))
    assert [a for a in answers if a[1] != a[2] or a[5] != a[6]] == []
    # every column the shim reads from the metadata, and whether it takes NULL, is the one duckdb_columns() lists
    assert [a for a in answers if a[3] is not None and a[3] != a[4]] == []
    by_name = {
        tuple(key[1:]): (columns, read_from_metadata, hidden)
        for key, columns, _, read_from_metadata, _, hidden, _ in answers
    }
    # the answers are the last state of each name, read from the metadata for a table, left to the emulator otherwise
    assert modes(by_name[("first", "orders")][0]) == {
        "id": "REQUIRED",
        "remark": "NULLABLE",
        "item": "NULLABLE",
        "placed": "NULLABLE",
    }
    assert modes(by_name[("first", "reborn")][0]) == {"id": "NULLABLE", "note": "REQUIRED"}
    assert modes(by_name[("first", "replaced")][0]) == {"id": "NULLABLE", "code": "REQUIRED"}
    assert modes(by_name[("first", "trimmed")][0]) == {"id": "REQUIRED", "kept": "NULLABLE"}
    assert modes(by_name[("again", "orders")][0]) == {"id": "NULLABLE", "code": "REQUIRED"}
    assert all(by_name[("first", name)][1] for name in ("orders", "reborn", "replaced", "trimmed", "ingested"))
    assert not by_name[("first", "orders_view")][1] and not by_name[("first", "missing")][1]
    assert by_name[("first", "ingested")][2] and not by_name[("first", "orders")][2]
    results = [value for key, value in by_name.items() if key[0] == "_results"]
    assert results and all(read_from_metadata for _, read_from_metadata, _ in results)
    assert "Not found" in str(by_name[("first", "missing")][0])
