"""`<table>_current` on the BigQuery API emulator: the same history as the DuckDB test, the same rows;
primary keys read from the tables' descriptions through INFORMATION_SCHEMA.TABLE_OPTIONS."""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

from google.cloud import bigquery

sys.path.insert(0, str(Path(__file__).parents[1] / "current"))

from scenario import EXPECTED, FAMILY, rows, tables

from uniview.core.landing_layout import CDC_COLUMNS
from uniview.core.version_description import version_description
from uniview.ops.refresh import RefreshRequest, refresh
from uniview.planning.plan import GeneratorOptions


def field(name, bq_type):
    if bq_type.startswith("ARRAY<"):
        return bigquery.SchemaField(name, bq_type[6:-1], mode="REPEATED")
    return bigquery.SchemaField(name, bq_type)


def create_version(client, dataset, name, family, columns, values, defaults=None, not_null=()):
    """A version table `dataset.name` of `family` with `columns` and the CDC columns, its description the sink's
    (keyed by `id`), holding `values`."""
    every = [*columns, *CDC_COLUMNS]
    table = bigquery.Table(f"{client.project}.{dataset}.{name}", schema=[field(c, t) for c, t in every])
    table.description = version_description(family, columns, ("id",), defaults, not_null)
    client.create_table(table)
    assert client.insert_rows_json(table, values) == []


def load(client, dataset, only=None):
    for name, (columns, description) in tables().items():
        if only and name not in only:
            continue
        table = bigquery.Table(f"{client.project}.{dataset}.{name}", schema=[field(c, t) for c, t in columns])
        table.description = description
        client.create_table(table)
        errors = client.insert_rows_json(
            table, [{c: v for c, v in row.items() if v is not None} for row in rows()[name]]
        )
        assert errors == []


def current_rows(client, dataset):
    found = client.query(f"SELECT _cdc_database, id, name FROM `{dataset}_unified`.{FAMILY}_current").result()
    return sorted([tuple(row.values()) for row in found], key=repr)


def test_current_view_on_the_emulator_returns_exactly_the_latest_rows(bq_client, dataset, limited_warehouse):
    load(bq_client, dataset)
    request = RefreshRequest(dataset, (FAMILY,), options=GeneratorOptions(current=True))
    [outcome] = refresh(limited_warehouse, request)
    assert outcome.error is None and f"{dataset}_unified.{FAMILY}_current" in outcome.replaced
    assert current_rows(bq_client, dataset) == EXPECTED
    [again] = refresh(limited_warehouse, request)
    assert again.error is None and not again.changed


def test_primary_keys_come_from_the_descriptions(bq_client, dataset, warehouse):
    load(bq_client, dataset, only={"customer_v_a1"})
    keys = warehouse.read_primary_keys(dataset, ["customer_v_a1"])
    assert keys == {"customer_v_a1": ("id",)}


def test_renames_read_from_the_ddl_table_and_defaults_on_the_emulator(bq_client, dataset, limited_warehouse):
    """A rename landed in `_uniview_ddl` and a declared default, read back through BigQuery's API: the old
    version's column under the new name, the default in the row older than the column, no view for the table."""
    import json

    def create(name, columns, values, defaults=None, not_null=()):
        create_version(bq_client, dataset, name, "customer", columns, values, defaults, not_null)

    def cdc(sequence):
        return {"_cdc_operation": "INSERT", "_cdc_database": "shop1", "_cdc_sequence": sequence}

    create("customer_v_a", [("id", "INT64"), ("memo", "STRING")], [{"id": 1, "memo": "one", **cdc("01")}])
    create(
        "customer_v_b",
        [("id", "INT64"), ("note", "STRING"), ("status", "STRING"), ("stamp", "TIMESTAMP")],
        [{"id": 2, "note": "two", "status": "closed", "stamp": "2024-05-01 10:00:00", **cdc("03")}],
        {"status": "open"},
        ("stamp",),  # NOT NULL DEFAULT now(): no default in the stream
    )
    ddl = "ALTER TABLE customer CHANGE memo note varchar(20), ADD COLUMN status text DEFAULT 'open'"
    create("_uniview_ddl_v_x", [("ddl", "STRING")], [{"ddl": ddl, **cdc("02")}])
    request = RefreshRequest(dataset, None, options=GeneratorOptions(current=True))
    outcomes = refresh(limited_warehouse, request)
    assert [o.family for o in outcomes] == ["customer"] and outcomes[0].error is None
    found = bq_client.query(
        f"SELECT id, note, status, stamp IS NULL, _cdc_unavailable FROM `{dataset}_unified`.customer_current ORDER BY id"
    ).result()
    assert [tuple(row.values()) for row in found] == [
        (1, "one", "open", True, ["stamp"]),
        (2, "two", "closed", False, []),
    ]
    assert json.dumps(limited_warehouse.read_ddl_renames(dataset)) == json.dumps([["shop1", "02", ddl]])


def test_a_key_change_shows_the_value_the_moved_row_held_on_the_emulator(bq_client, dataset, limited_warehouse):
    """The recursive query that follows primary-key UPDATEs gives on the emulator the rows it gives on DuckDB
    (tests/current/test_current_state.py) and in ZetaSQL's evaluator (tests/zetasql/test_zetasql_current_state.py)."""
    import test_current_state as current_state

    rows = [
        {c: v for c, v in row.items() if v is not None}
        for _, row in current_state.change_rows(current_state.KEY_CHANGES)
    ]
    create_version(bq_client, dataset, "t_v_a", "t", current_state.V1, rows)
    [outcome] = refresh(limited_warehouse, RefreshRequest(dataset, ("t",), options=GeneratorOptions(current=True)))
    assert outcome.error is None
    found = bq_client.query(
        f"SELECT _cdc_database, id, name, doc, _cdc_unavailable FROM `{dataset}_unified`.t_current"
    ).result()
    expected = [(*row[:-1], row[-1] or []) for row in current_state.KEY_CHANGES_CURRENT]  # BigQuery: no NULL array
    assert sorted(tuple(row.values()) for row in found) == expected


def test_a_gh_ost_swap_on_the_emulator_gives_the_table_the_shadow_tables_rows_once(
    bq_client, dataset, limited_warehouse
):
    """gh-ost's swap read from `_uniview_ddl`: `t_current` is the shadow table's rows and those written after the
    swap, the shadow table's family holds none, the old table's rows are `_t_del`'s."""
    columns, wider = [("id", "INT64"), ("v", "STRING")], [("id", "INT64"), ("v", "STRING"), ("extra", "INT64")]

    def change(key, value, sequence, operation="INSERT", **more):
        return {
            "id": key,
            "v": value,
            **more,
            "_cdc_operation": operation,
            "_cdc_database": "shop1",
            "_cdc_sequence": sequence,
        }

    old = [change(1, "a", "100"), change(2, "b", "110"), change(2, "b2", "140", "UPDATE")]
    create_version(bq_client, dataset, "t_v_1", "t", columns, old)
    copied = [change(1, "a", "120", extra=0), change(2, "b", "130", extra=0), change(2, "b2", "141", "UPDATE", extra=0)]
    create_version(bq_client, dataset, "_t_gho_v_1", "_t_gho", wider, copied)
    swap = {"ddl": "RENAME TABLE t TO _t_del, _t_gho TO t", "_cdc_database": "shop1", "_cdc_sequence": "150"}
    create_version(bq_client, dataset, "_uniview_ddl_v_x", "_uniview_ddl", [("ddl", "STRING")], [swap])
    create_version(bq_client, dataset, "t_v_2", "t", wider, [change(3, "c", "200", extra=7)])
    outcomes = refresh(
        limited_warehouse, RefreshRequest(dataset, ("_uniview_ddl",), options=GeneratorOptions(current=True))
    )
    assert sorted(o.family for o in outcomes) == ["_t_del", "_t_gho", "t"] and not [o for o in outcomes if o.error]

    def current(family, columns):
        found = bq_client.query(f"SELECT {columns} FROM `{dataset}_unified`.{family}_current ORDER BY id").result()
        return [tuple(row.values()) for row in found]

    assert current("t", "id, v, extra") == [(1, "a", 0), (2, "b2", 0), (3, "c", 7)]
    assert current("_t_gho", "id") == []
    assert current("_t_del", "id, v") == [(1, "a"), (2, "b2")]


def test_the_old_names_of_a_table_renamed_twice_are_not_maintained_again_on_the_emulator(
    bq_client, dataset, limited_warehouse
):
    """t0 renamed to t1, then t2: the refresh that reads the renames builds every name's `<table>_current` (the old
    ones empty); a refresh of t2 then runs the jobs of t2's maintenance alone, none for the old names, and one of the
    control table with no new rename maintains none."""
    names = ["t0", "t1", "t2"]
    columns, options = [("id", "INT64"), ("v", "STRING")], GeneratorOptions(current="table")

    def change(key, value, sequence, operation="INSERT"):
        return {"id": key, "v": value, "_cdc_operation": operation, "_cdc_database": "shop1", "_cdc_sequence": sequence}

    create_version(bq_client, dataset, "t0_v_1", "t0", columns, [change(1, "a", "100"), change(2, "b", "110")])
    renames = [
        {"ddl": f"RENAME TABLE {old} TO {new}", "_cdc_database": "shop1", "_cdc_sequence": f"{150 + number}"}
        for number, (old, new) in enumerate(itertools.pairwise(names))
    ]
    create_version(bq_client, dataset, "_uniview_ddl_v_x", "_uniview_ddl", [("ddl", "STRING")], renames)
    create_version(bq_client, dataset, "t2_v_1", "t2", columns, [change(3, "c", "200")])

    def refreshed(table, version_table):
        request = RefreshRequest(dataset, (table,), options=options, required_tables=(version_table,))
        before = limited_warehouse.jobs_started
        outcomes = refresh(limited_warehouse, request)
        assert not [outcome.error for outcome in outcomes if outcome.error]
        actions = {outcome.family: outcome.current_table.action for outcome in outcomes if outcome.current_table}
        return actions, limited_warehouse.jobs_started - before

    def current(family):
        found = bq_client.query(f"SELECT id, v FROM `{dataset}_unified`.{family}_current ORDER BY id").result()
        return [tuple(row.values()) for row in found]

    assert refreshed("_uniview_ddl", "_uniview_ddl_v_x")[0] == dict.fromkeys(names, "create")
    assert [current(name) for name in names[:2]] == [[], []]
    table = bq_client.get_table(f"{dataset}.t2_v_1")
    assert bq_client.insert_rows_json(table, [change(2, "b2", "300", "UPDATE")]) == []
    actions, jobs = refreshed("t2", "t2_v_1")
    assert actions == {"t2": "maintain", "t0": "untouched", "t1": "untouched"}
    # the metadata's three reads (listings, descriptions, renames) and t2's maintenance, two jobs (its window, its
    # script); each old name's maintenance would be two more
    assert jobs < 3 + 2 * 2
    assert current("t2") == [(1, "a"), (2, "b2"), (3, "c")]
    actions, jobs = refreshed("_uniview_ddl", "_uniview_ddl_v_x")  # no rename since the tables were built
    assert actions == dict.fromkeys(names, "untouched") and jobs < 3 + 2
