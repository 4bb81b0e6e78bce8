"""The emulator's listing of a dataset's tables and views, as uniview's shim reads it from the DuckLake catalog's
metadata, gives exactly the rows of the emulator's own duckdb_tables()/duckdb_views() query: on a catalog with
created, filled, partly deleted, replaced and dropped tables, views, a dropped dataset and a dataset of the same
table names, for every dataset and every name (and a missing one).  Whether a dataset exists is the emulator's
duckdb_schemas() answer too."""

from __future__ import annotations

import textwrap

import pytest
from emulator_shim_support import compared_answers

pytest.importorskip("google.cloud.bigquery")

STATEMENTS = (
    "CREATE SCHEMA first",
    "CREATE SCHEMA second",
    "CREATE SCHEMA dropped",
    "CREATE TABLE first.orders (id INT64, note STRING)",
    "INSERT INTO first.orders VALUES (1, 'a'), (2, 'b'), (3, 'c')",
    "DELETE FROM first.orders WHERE id = 2",
    "CREATE TABLE first.empty_table (id INT64)",
    "CREATE TABLE first.gone (id INT64)",
    "DROP TABLE first.gone",
    "CREATE OR REPLACE TABLE first.replaced AS SELECT 1 AS id",
    "CREATE OR REPLACE TABLE first.replaced AS SELECT 1 AS id UNION ALL SELECT 2",
    "CREATE VIEW first.orders_view AS SELECT id FROM first.orders",
    "CREATE TABLE second.orders (id INT64)",
    "INSERT INTO second.orders VALUES (7)",
    "CREATE TABLE dropped.orders (id INT64)",
    "DROP SCHEMA dropped CASCADE",
)

#: Run by the emulator's interpreter: both listings of every (dataset, name) of the stopped emulator's data.
COMPARE = textwrap.dedent(
    """
    import json, pathlib, runpy, sys
    from local_bigquery.settings import settings
    shim_path, settings.data_dir, settings.default_project_id = sys.argv[1], pathlib.Path(sys.argv[2]), sys.argv[3]
    shim = runpy.run_path(shim_path)  # its patches applied, as `serve` runs them
    database = shim["database"]
    project = settings.default_project_id
    names = [None, "orders", "empty_table", "gone", "replaced", "orders_view", "missing"]
    answers = [
        [dataset, name, shim["_emulator_objects"](project, dataset, name), database.objects(project, dataset, name)]
        for dataset in ("first", "second", "dropped", "absent")
        for name in names
    ]
    schemas = ["first", "second", "dropped", "absent", "FIRST", "main", "information_schema", "pg_catalog"]
    found = [[name, shim["_emulator_dataset_exists"](project, name), shim["datasets"].exists(project, name)]
             for name in schemas]
    print(json.dumps([answers, found]))
    """
)


def test_the_shims_listing_is_the_emulators(tmp_path):
    answers, schemas = compared_answers(tmp_path, STATEMENTS, COMPARE)
    assert [s for s in schemas if s[1] != s[2]] == []
    assert [name for name, emulator, _ in schemas if emulator] == ["first", "second", "main"]
    assert [a for a in answers if a[2] != a[3]] == []
    listed = {(dataset, name): emulator for dataset, name, emulator, _ in answers}
    assert listed[("first", None)] == [
        ["empty_table", "TABLE", 0],
        ["orders", "TABLE", 3],  # the catalog's record count: duckdb_tables() counts a deleted row too
        ["orders_view", "VIEW", 0],
        ["replaced", "TABLE", 2],
    ]
    assert listed[("second", "orders")] == [["orders", "TABLE", 1]]
    assert listed[("dropped", None)] == listed[("first", "missing")] == []
