"""Driver-side routing: datasets, versions, schemas, conflicts (no Spark needed)."""

import json
from datetime import UTC

import pytest

from uniview.core.errors import WarehouseError
from uniview.core.types import Scalar
from uniview.sink import reasons
from uniview.sink.routing import KnownVersion, RecordKey, VersionRoute, parse_schema, plan_routes, redirected
from uniview.sink.versioning import SourceColumn, compute_version

SCHEMA = [["id", "int(11)"], ["name", "varchar(10)"]]


def schema_text(pairs):
    return json.dumps([{"name": n, "type": t} for n, t in pairs])


def key(table="customer", version=None, pairs=SCHEMA, database="shop"):
    return RecordKey(database, table, version, None if pairs is None else schema_text(pairs))


def no_tables(tables):
    return {}


def test_computed_version_routes_to_a_new_table():
    plan = plan_routes([key()], None, "uniview", no_tables)
    version = compute_version("customer", [SourceColumn(n, t) for n, t in SCHEMA])
    decision = plan.decisions[key()]
    route = plan.routes[decision.route]
    assert (route.dataset, route.table_name, route.exists) == ("shop", f"customer_v_{version}", False)
    assert [(c.name, str(c.bq_type)) for c in route.columns] == [("id", "INT64"), ("name", "STRING")]


def test_dataset_option_overrides_database_name():
    plan = plan_routes([key()], "cdc", "uniview", no_tables)
    assert plan.routes[0].dataset == "cdc"


def test_declared_version_is_used_as_is_and_schemaless_records_follow_it():
    with_schema, without = key(version="5b6ffe5fb"), key(version="5b6ffe5fb", pairs=None)
    plan = plan_routes([with_schema, without], None, "uniview", no_tables)
    assert plan.decisions[with_schema].route == plan.decisions[without].route == 0
    assert plan.routes[0].table_name == "customer_v_5b6ffe5fb"


def test_two_schemas_for_one_new_version_reject_both():
    first, second = key(version="v1"), key(version="v1", pairs=[["id", "bigint"]])
    plan = plan_routes([first, second], None, "uniview", no_tables)
    assert plan.routes == []
    assert {plan.decisions[k].reason for k in (first, second)} == {reasons.VERSION_CONFLICT}


def test_existing_table_wins_over_a_conflicting_declaration():
    recorded = tuple(SourceColumn(n, t) for n, t in SCHEMA)
    known = {("shop", "customer_v_v1"): KnownVersion(recorded, (("id", Scalar("INT64")), ("name", Scalar("STRING"))))}
    same, other, bare = (
        key(version="v1", pairs=[["id", "INT(11)"], ["name", "VARCHAR(10)"]]),
        key(version="v1", pairs=[["id", "bigint"], ["name", "text"]]),
        key(version="v1", pairs=None),
    )
    plan = plan_routes([same, other, bare], None, "uniview", lambda tables: known)
    assert plan.decisions[same].route == plan.decisions[bare].route == 0 and plan.routes[0].exists
    assert plan.decisions[other].reason == reasons.VERSION_CONFLICT


def test_schemaless_version_without_a_table_is_missing_schema():
    bare = key(version="abc", pairs=None)
    assert plan_routes([bare], None, "uniview", no_tables).decisions[bare].reason == reasons.MISSING_SCHEMA


def test_rejections_name_their_dataset():
    cases = {
        RecordKey(None, "customer", None, schema_text(SCHEMA)): ("uniview", reasons.MISSING_METADATA),
        RecordKey("my-db", "customer", None, schema_text(SCHEMA)): ("uniview", reasons.INVALID_METADATA),
        RecordKey("shop", None, None, schema_text(SCHEMA)): ("shop", reasons.MISSING_METADATA),
        RecordKey("shop", "bad;name", None, schema_text(SCHEMA)): ("shop", reasons.INVALID_METADATA),
        RecordKey("shop", "customer", "Not-Valid", schema_text(SCHEMA)): ("shop", reasons.INVALID_METADATA),
        RecordKey("shop", "customer", None, None): ("shop", reasons.MISSING_SCHEMA),
        RecordKey("shop", "customer", None, "[]"): ("shop", reasons.INVALID_SCHEMA),
        RecordKey("shop", "customer", None, schema_text([["_cdc_x", "int"]])): ("shop", reasons.INVALID_SCHEMA),
    }
    plan = plan_routes(cases, None, "uniview", no_tables)
    assert {k: (d.dataset, d.reason) for k, d in plan.decisions.items()} == cases


def test_a_shared_dataset_takes_any_database_name_and_rejects_a_record_that_names_none():
    named, hyphenated = key(database="shop"), key(database="my-db")
    unnamed, empty = key(database=None), key(database="")
    plan = plan_routes([named, hyphenated, unnamed, empty], "cdc", "uniview", no_tables)
    assert plan.decisions[named].route == plan.decisions[hyphenated].route == 0
    assert [(route.dataset, route.exists) for route in plan.routes] == [("cdc", False)]
    for orphan in (unnamed, empty):
        decision = plan.decisions[orphan]
        assert (decision.dataset, decision.reason) == ("cdc", reasons.MISSING_METADATA)
        assert (
            decision.detail
            == "no metadata.database_name: every row of the shared dataset 'cdc' names its source database"
        )


#: BigQuery's flexible column names: any Unicode letter, mark or number, `_`, `-`, a space and `& % = + : ' < > # |`.
ACCEPTED_COLUMN_NAMES = ["größe", "名前", "with space", "1st", "a-b", "Δt", "a&b%c=d+e:f'g<h>i#j|k", "x" * 300]
#: ... and not `. $ / ? ! ( ) , ; @ [ ] ^ { } ~ \` nor a quote, a tab, more than 300 characters or a reserved prefix.
REFUSED_COLUMN_NAMES = [
    "a.b",
    "price$",
    "a/b",
    "why?",
    "f(x)",
    "tab\tname",
    'say"',
    "x" * 301,
    "_PARTITIONTIME",
    "_table_x",
]


def test_a_column_name_bigquery_refuses_is_quarantined_and_one_it_allows_routes():
    accepted = {
        name: RecordKey("shop", "t", None, schema_text([["id", "int"], [name, "int"]]))
        for name in ACCEPTED_COLUMN_NAMES
    }
    refused = {
        name: RecordKey("shop", "t", None, schema_text([["id", "int"], [name, "int"]])) for name in REFUSED_COLUMN_NAMES
    }
    plan = plan_routes([*accepted.values(), *refused.values()], None, "uniview", no_tables)
    assert {name: plan.decisions[k].reason for name, k in accepted.items()} == dict.fromkeys(ACCEPTED_COLUMN_NAMES)
    assert {name: plan.decisions[k].reason for name, k in refused.items()} == dict.fromkeys(
        REFUSED_COLUMN_NAMES, reasons.INVALID_COLUMN_NAME
    )
    assert "'$'" in plan.decisions[refused["price$"]].detail
    assert "300 characters" in plan.decisions[refused["x" * 301]].detail
    assert "_PARTITION" in plan.decisions[refused["_PARTITIONTIME"]].detail


def test_records_without_a_dataset_go_to_the_dataset_option_when_given():
    orphan = RecordKey(None, None, None, None)
    assert plan_routes([orphan], "cdc", "cdc", no_tables).decisions[orphan].dataset == "cdc"


def test_schema_parsing_rejects_bad_shapes():
    for text, message in [
        ("{", "not JSON"),
        ('{"a": 1}', "non-empty list"),
        ('[{"name": "a"}]', "name and type"),
        ('[{"name": "a", "type": "int"}, {"name": "A", "type": "int"}]', "twice"),
    ]:
        try:
            parse_schema(text)
        except ValueError as error:
            assert message in str(error)
        else:
            raise AssertionError(f"{text} was accepted")


def test_unknown_types_warn_once():
    pairs = [["a", "uuid"], ["b", "int"]]
    plan = plan_routes([key(pairs=pairs), key(version="zz", pairs=pairs)], None, "uniview", no_tables)
    assert plan.warnings == ["column 'a': unknown source type 'uuid': landed as STRING"]


def test_new_versions_are_ordered_by_their_first_timestamp_then_their_first_log_position():
    from datetime import datetime

    early, late, undated = key(pairs=[["a", "int"]]), key(pairs=[["b", "int"]]), key(pairs=[["c", "int"]])
    seen = {
        late: (datetime(2024, 5, 2, tzinfo=UTC), "00000000000000000001"),
        early: (datetime(2024, 5, 1, tzinfo=UTC), "00000000000000000009"),
        undated: (None, None),
    }
    plan = plan_routes([undated, late, early], None, "uniview", no_tables, first_seen=seen)
    assert [route.columns[0].name for route in plan.routes] == ["a", "b", "c"]
    # within one millisecond, the log position orders them, whatever their names
    same_time = datetime(2024, 5, 1, tzinfo=UTC)
    for first, second in ((early, late), (late, early)):
        seen = {first: (same_time, "00000000000000000100"), second: (same_time, "00000000000000000102")}
        plan = plan_routes([second, first], None, "uniview", no_tables, first_seen=seen)
        column = {early: "a", late: "b"}
        assert [route.columns[0].name for route in plan.routes] == [column[first], column[second]]


def test_two_primary_keys_for_one_new_version_reject_both_and_an_existing_key_wins():
    first = RecordKey("shop", "customer", "v1", schema_text(SCHEMA), json.dumps(["id"]))
    second = RecordKey("shop", "customer", "v1", schema_text(SCHEMA), json.dumps(["name"]))
    plan = plan_routes([first, second], None, "uniview", no_tables)
    assert plan.routes == [] and {plan.decisions[k].reason for k in (first, second)} == {reasons.VERSION_CONFLICT}
    recorded = tuple(SourceColumn(n, t) for n, t in SCHEMA)
    known = {
        ("shop", "customer_v_v1"): KnownVersion(
            recorded, (("id", Scalar("INT64")), ("name", Scalar("STRING"))), ("ID",)
        )
    }
    plan = plan_routes([first, second], None, "uniview", lambda tables: known)
    assert plan.decisions[first].route == 0 and plan.routes[0].primary_key == ("ID",)
    assert plan.decisions[second].reason == reasons.VERSION_CONFLICT


def test_a_route_follows_its_folded_versions_to_the_last_successor():
    route = VersionRoute("shop", "customer", "v1", (), exists=True)
    folded = {("shop", "customer_v_v1"): "customer_v_v2", ("shop", "customer_v_v2"): "customer_v_v3"}
    assert redirected(route, folded) == VersionRoute("shop", "customer", "v3", (), exists=False)


def test_a_successor_that_is_not_a_version_table_is_one_clear_error():
    route = VersionRoute("shop", "customer", "v1", (), exists=True)
    with pytest.raises(WarehouseError, match="'customer_v1', which is not a version table"):
        redirected(route, {("shop", "customer_v_v1"): "customer_v1"})


def test_a_key_redefined_with_the_same_columns_starts_a_version_of_its_own():
    columns = [SourceColumn(n, t) for n, t in SCHEMA]
    plain, keyed = compute_version("customer", columns), compute_version("customer", columns, ["name"])
    by_id = RecordKey("shop", "customer", None, schema_text(SCHEMA), json.dumps(["id"]))
    by_name = RecordKey("shop", "customer", None, schema_text(SCHEMA), json.dumps(["name"]))
    known = {
        ("shop", f"customer_v_{plain}"): KnownVersion(
            tuple(columns), (("id", Scalar("INT64")), ("name", Scalar("STRING"))), ("id",)
        )
    }
    plan = plan_routes([by_id, by_name], None, "uniview", lambda tables: {t: known[t] for t in tables if t in known})
    routes = {k: plan.routes[plan.decisions[k].route] for k in (by_id, by_name)}
    assert [(r.table_name, r.exists, r.primary_key) for r in routes.values()] == [
        (f"customer_v_{plain}", True, ("id",)),
        (f"customer_v_{keyed}", False, ("name",)),
    ]
    # one batch with both keys and no table yet: the key seen first keeps the version computed without a key
    from datetime import datetime

    seen = {by_name: (datetime(2024, 5, 2, tzinfo=UTC), None), by_id: (datetime(2024, 5, 1, tzinfo=UTC), None)}
    plan = plan_routes([by_name, by_id], None, "uniview", no_tables, first_seen=seen)
    assert [(r.table_name, r.primary_key) for r in plan.routes] == [
        (f"customer_v_{plain}", ("id",)),
        (f"customer_v_{keyed}", ("name",)),
    ]
    assert keyed != plain and all(d.reason is None for d in plan.decisions.values())
