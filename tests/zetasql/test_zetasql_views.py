"""Every view the generator emits, type-checked by Google's ZetaSQL analyzer (BigQuery's front end):
accepted, every UNION ALL branch yielding exactly the unified types, and the view's columns equal to the plan's."""

from __future__ import annotations

import itertools
from dataclasses import replace

import pytest
from checks import check_family

from uniview.core.resolve import POLICIES
from uniview.core.schema import Column, TableVersion
from uniview.core.types import parse_type
from uniview.planning.plan import GeneratorOptions, plan_family

TYPES = [
    "INT64",
    "FLOAT64",
    "NUMERIC",
    "BIGNUMERIC",
    "BOOL",
    "STRING",
    "BYTES",
    "DATE",
    "DATETIME",
    "TIME",
    "TIMESTAMP",
    "JSON",
    "GEOGRAPHY",
    "INTERVAL",
    "RANGE<DATE>",
    "ARRAY<INT64>",
    "STRUCT<a INT64>",
]


def version(family, version_id, created, columns):
    return TableVersion(
        f"{family}_v_{version_id}",
        family,
        version_id,
        created,
        tuple(Column(name, parse_type(data_type)) for name, data_type in columns),
    )


def plan(versions, **options):
    return plan_family("cdc", "cdc_unified", versions, GeneratorOptions(**options))


SEED = [
    version(
        "customer",
        "abc",
        1,
        [("id", "INT64"), ("first_name", "STRING"), ("last_name", "STRING"), ("full_name", "STRING")],
    ),
    version(
        "customer", "def", 2, [("id", "STRING"), ("first_name", "STRING"), ("last_name", "STRING"), ("email", "STRING")]
    ),
]


@pytest.mark.parametrize("source_column", [None, "_uniview_source"])
def test_golden_family(zetasql, source_column):
    check_family(zetasql, plan(SEED, source_column=source_column), source_column)


@pytest.mark.parametrize("policy", sorted(POLICIES))
@pytest.mark.parametrize(
    "left, right", list(itertools.product(TYPES, TYPES)), ids=[f"{a}+{b}" for a, b in itertools.product(TYPES, TYPES)]
)
def test_type_pair_with_a_version_lacking_the_column(zetasql, policy, left, right):
    versions = [
        version("pair", "a", 1, [("id", "INT64"), ("c", left)]),
        version("pair", "b", 2, [("id", "INT64"), ("c", right)]),
        version("pair", "c", 3, [("id", "INT64")]),
    ]
    check_family(zetasql, plan(versions, policy=policy))


NESTED = [
    ("STRUCT<a INT64, b STRING>", "STRUCT<A STRING, c DATE>"),
    ("STRUCT<a INT64, s STRUCT<x DATETIME, y ARRAY<INT64>>>", "STRUCT<a INT64, s STRUCT<x TIMESTAMP, z BYTES>>"),
    ("ARRAY<STRUCT<x INT64>>", "ARRAY<STRUCT<x FLOAT64, y STRING>>"),
    ("ARRAY<INT64>", "ARRAY<NUMERIC>"),
    ("ARRAY<STRUCT<j JSON, g GEOGRAPHY>>", "ARRAY<STRUCT<j STRING, g GEOGRAPHY, b BYTES>>"),
    ("STRUCT<`select` INT64, `my field` STRING>", "STRUCT<`select` STRING>"),
    ("ARRAY<STRUCT<a ARRAY<STRUCT<b DATE>>>>", "ARRAY<STRUCT<a ARRAY<STRUCT<b DATETIME, c TIME>>>>"),
    ("STRUCT<r RANGE<TIMESTAMP>, i INTERVAL>", "STRUCT<r RANGE<DATE>>"),
]


@pytest.mark.parametrize("policy", sorted(POLICIES))
@pytest.mark.parametrize("left, right", NESTED)
def test_nested_struct_and_array_merges(zetasql, policy, left, right):
    versions = [
        version("nest", "a", 1, [("n", left)]),
        version("nest", "b", 2, [("n", right)]),
        version("nest", "c", 3, [("other", "STRING")]),
    ]
    check_family(zetasql, plan(versions, policy=policy))


ODD_COLUMNS = ["select", "from", "Group", "my col", "a-b", "Ünïcode", "back`tick", "_PARTITION_x", "1st", "order"]


def test_reserved_and_odd_names(zetasql):
    versions = [
        version("order-items", "1", 1, [(name, "INT64") for name in ODD_COLUMNS]),
        version("order-items", "2", 2, [(name, "STRING") for name in ODD_COLUMNS[::2]]),
    ]
    check_family(zetasql, plan(versions))


def test_reserved_word_family(zetasql):
    versions = [version("select", "1", 1, [("from", "INT64")]), version("select", "2", 2, [("where", "DATE")])]
    check_family(zetasql, plan(versions))


def test_source_column(zetasql):
    versions = [version("t", "1", 1, [("a", "INT64")]), version("t", "2", 2, [("a", "DATE"), ("b", "JSON")])]
    check_family(zetasql, plan(versions, source_column="_src"), "_src")


@pytest.mark.parametrize("zone", [None, "America/New_York", "Asia/Kolkata", "UTC"])
def test_datetime_timezone(zetasql, zone):
    versions = [
        version("ev", "1", 1, [("at", "DATETIME"), ("d", "DATE")]),
        version("ev", "2", 2, [("at", "TIMESTAMP"), ("d", "TIMESTAMP")]),
    ]
    check_family(zetasql, plan(versions, policy="widen", datetime_timezone=zone))


def test_split_family_with_part_views_registered_as_tables(zetasql):
    types = ["INT64", "STRING", "NUMERIC", "DATETIME", "TIMESTAMP", "STRUCT<a INT64>"]
    versions = [
        version("wide", f"{n:03d}", n, [(f"c{i}", types[(n + i) % len(types)]) for i in range(12)]) for n in range(40)
    ]
    planned = plan(versions, max_view_chars=4_000, source_column="_src")
    assert len(planned.views) > 3, "the family must be split for this test to mean anything"
    check_family(zetasql, planned, "_src")


def test_a_column_named_like_its_version_table_reads_the_column_not_the_row(zetasql):
    """Unaliased, BigQuery reads `orders_v_1` as a STRUCT of the whole row
    (https://cloud.google.com/bigquery/docs/schemas#column_names); the table alias keeps it a column."""
    versions = [
        version("orders", "1", 1, [("id", "INT64"), ("orders_v_1", "INT64")]),
        version("orders", "2", 2, [("id", "INT64"), ("orders_v_1", "INT64"), ("v", "STRING")]),
    ]
    planned = plan(versions)
    check_family(zetasql, planned)
    assert "FROM cdc.orders_v_2 AS v_" in planned.top_view.body  # `v` is a column of version 2


CDC = [
    (name, bq_type) for name, bq_type in __import__("uniview.core.landing_layout", fromlist=["CDC_COLUMNS"]).CDC_COLUMNS
]


def keyed(family, version_id, created, columns, key):
    return replace(version(family, version_id, created, columns + CDC), primary_key=key)


@pytest.mark.parametrize(
    "key_types",
    [
        ("INT64", "INT64"),
        ("INT64", "STRING"),
        ("NUMERIC", "BIGNUMERIC"),
        ("DATE", "DATETIME"),
        ("DATETIME", "TIMESTAMP"),
        ("BYTES", "BYTES"),
        ("BOOL", "INT64"),
    ],
)
def test_current_view_over_keys_whose_type_changes(zetasql, key_types):
    versions = [
        keyed("customer", "a", 1, [("id", key_types[0]), ("name", "STRING")], ("id",)),
        keyed("customer", "b", 2, [("ID", key_types[1]), ("email", "STRING")], ("ID",)),
    ]
    planned = plan(versions, current=True)
    assert planned.current is not None and "PARTITION BY _cdc_database, ID" in planned.current.body
    check_family(zetasql, planned)


def test_current_view_with_a_compound_key_of_odd_names_and_a_reserved_family(zetasql):
    versions = [
        keyed("select", "1", 1, [("from", "INT64"), ("my col", "STRING"), ("v", "DATE")], ("from", "my col")),
        keyed("select", "2", 2, [("from", "INT64"), ("my col", "STRING")], ("from", "my col")),
    ]
    check_family(zetasql, plan(versions, current=True, source_column="_src"), "_src")


def test_current_view_over_a_split_family(zetasql):
    versions = [
        keyed("wide", f"{n:03d}", n, [("id", "INT64")] + [(f"c{i}", "STRING") for i in range(12)], ("id",))
        for n in range(60)
    ]
    planned = plan(versions, current=True, max_view_chars=10_000)  # the current view reads only the top view
    assert len(planned.views) >= 3, "the family must be split for this test to mean anything"
    assert planned.current is not None
    check_family(zetasql, planned)


@pytest.mark.parametrize("key_type", TYPES)
def test_key_types_refused_for_current_views_are_exactly_those_the_analyzer_cannot_partition_by(zetasql, key_type):
    from analyzer import Catalog

    versions = [keyed("k", "1", 1, [("id", key_type)], ("id",))]
    planned = plan(versions, current=True)
    refused = planned.current_error is not None
    assert not refused or "cannot partition by" in str(planned.current_error)
    assert refused == (planned.current is None)
    catalog = Catalog()
    catalog.add_table("cdc", "k_v_1", [("id", parse_type(key_type))])
    result = zetasql.analyze("SELECT ROW_NUMBER() OVER (PARTITION BY id) AS n FROM cdc.k_v_1", catalog)
    if key_type.startswith(("ARRAY", "STRUCT")):
        # The analyzer (every feature on) partitions by these; uniview refuses them on purpose: BigQuery's
        # grouping of ARRAY and STRUCT is newer than many projects' settings, and a key is never one.
        assert refused and result.error is None
    else:
        assert refused == (result.error is not None), result.error
