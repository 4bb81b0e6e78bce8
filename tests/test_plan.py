"""Planning: column superset and order, select lists, golden SQL, the two-level split, limits."""

import os
import re
from pathlib import Path

import pytest
import sqlglot

from uniview.core.errors import ConfigError, PlanError
from uniview.core.limits import LimitError
from uniview.core.schema import Column, TableVersion
from uniview.core.types import parse_type
from uniview.planning.plan import GeneratorOptions, is_family_view, is_part_view_name, part_view_name, plan_family

EXPECTED = Path(__file__).parent / "expected"


def version(family, version_id, created, columns):
    return TableVersion(
        f"{family}_v_{version_id}",
        family,
        version_id,
        created,
        tuple(Column(name, parse_type(data_type)) for name, data_type in columns),
    )


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


def assert_golden(name, text):
    path = EXPECTED / name
    if os.environ.get("UNIVIEW_UPDATE_GOLDEN"):
        path.write_text(text)
    assert text == path.read_text(), f"{path} differs; rerun with UNIVIEW_UPDATE_GOLDEN=1 if the change is intended"


def test_seed_example_columns_and_golden_sql():
    plan = plan_family("cdc", "cdc_unified", SEED, GeneratorOptions())
    assert [(c.name, str(c.type)) for c in plan.columns] == [
        ("id", "STRING"),
        ("first_name", "STRING"),
        ("last_name", "STRING"),
        ("full_name", "STRING"),
        ("email", "STRING"),
    ]
    assert [v.qualified_name for v in plan.views] == ["cdc_unified.customer_unified"]
    assert_golden("customer_unified.sql", plan.top_view.statement + "\n")


def test_seed_example_with_source_column_golden_sql():
    plan = plan_family("cdc", "cdc_unified", SEED, GeneratorOptions(source_column="_uniview_source"))
    assert_golden("customer_unified_source_column.sql", plan.top_view.statement + "\n")


def test_same_input_renders_byte_identical_sql():
    first = plan_family("cdc", "cdc_unified", SEED, GeneratorOptions()).top_view.statement
    assert plan_family("cdc", "cdc_unified", list(SEED), GeneratorOptions()).top_view.statement == first


def test_columns_match_case_insensitively_and_keep_the_newest_spelling():
    versions = [
        version("t", "a", 1, [("Email", "STRING"), ("ID", "INT64")]),
        version("t", "b", 2, [("id", "INT64"), ("email", "STRING"), ("zip", "STRING")]),
    ]
    plan = plan_family("ds", "ds_unified", versions, GeneratorOptions())
    assert [c.name for c in plan.columns] == ["email", "id", "zip"]
    body = plan.top_view.body
    assert "  Email AS email," in body and "  ID AS id," in body


def test_column_order_is_first_appearance_by_creation_then_ordinal():
    versions = [
        version("t", "new", 2, [("c", "INT64"), ("a", "INT64"), ("d", "INT64")]),
        version("t", "old", 1, [("a", "INT64"), ("b", "INT64")]),
    ]
    ordered = sorted(versions, key=lambda v: v.created)
    assert [c.name for c in plan_family("ds", "ds_unified", ordered, GeneratorOptions()).columns] == [
        "a",
        "b",
        "c",
        "d",
    ]


ODD_NAMES = ["select", "from", "a b", "a-b", "ünïcode", "数据", "x`y", "back\\slash", "order", "_PARTITIONTIME2"]


def test_reserved_and_odd_names_are_quoted_and_parse():
    versions = [
        version("my-family ü", "1", 1, [(name, "INT64") for name in ODD_NAMES]),
        version("my-family ü", "2", 2, [(name, "STRING") for name in ODD_NAMES]),
    ]
    plan = plan_family("ds", "ds_unified", versions, GeneratorOptions())
    statement = plan.top_view.statement
    assert "CREATE OR REPLACE VIEW ds_unified.`my-family ü_unified` AS" in statement
    assert "CAST(`x\\`y` AS STRING) AS `x\\`y`" in statement
    assert "CAST(`select` AS STRING) AS `select`" in statement and "CAST(`a b` AS STRING)" in statement
    assert "CAST(_PARTITIONTIME2 AS STRING) AS _PARTITIONTIME2" in statement
    assert "FROM ds.`my-family ü_v_1` AS v" in statement
    selected = [
        e.alias_or_name
        for e in sqlglot.parse_one(plan.top_view.body, read="bigquery").find(sqlglot.exp.Select).expressions
    ]
    assert selected == ODD_NAMES


def wide_family(count, columns=30):
    return [
        version(
            "wide",
            f"{index:04d}",
            index,
            [(f"col_{c}", "INT64" if (index + c) % 5 else "STRING") for c in range(columns)],
        )
        for index in range(count)
    ]


def test_split_keeps_every_view_within_budget_and_every_version_reachable():
    versions = wide_family(90)
    options = GeneratorOptions(max_view_chars=20_000)
    plan = plan_family("ds", "ds_unified", versions, options)
    parts, top = plan.views[:-1], plan.top_view
    assert len(parts) >= 3
    assert all(len(view.body) <= 20_000 for view in plan.views)
    assert [p.name for p in parts] == [part_view_name("wide", p.body) for p in parts]
    assert all(is_part_view_name(p.name) and is_family_view("wide", p.name) for p in parts)
    referenced = [t for part in parts for t in _tables_in(part.body)]
    assert referenced == [f"ds.{v.table_name}" for v in versions]
    assert _tables_in(top.body) == [f"ds_unified.{p.name}" for p in parts]


def test_only_each_views_first_branch_names_the_columns():
    """BigQuery matches UNION ALL branches by position and names the columns after the first branch: each part
    view's first branch names every unified column, the later ones are bare expressions, one per column, and
    the top view reads the parts with SELECT *, so every view has the plan's columns in the plan's order."""
    versions = wide_family(90)
    plan = plan_family("ds", "ds_unified", versions, GeneratorOptions(max_view_chars=20_000, source_column="_src"))
    names = [c.name for c in plan.columns] + ["_src"]
    assert len(plan.parts) >= 3
    branches = 0
    for view in plan.parts:
        first, *later = _selects(view.body)
        assert [e.alias_or_name for e in first.expressions] == names
        assert later and all(len(select.expressions) == len(names) for select in later)
        assert not any(isinstance(e, sqlglot.exp.Alias) for select in later for e in select.expressions)
        assert len(re.findall(r"^SELECT \S.* FROM ds\.wide_v_\d+ AS v$", view.body, flags=re.M)) == len(later)
        branches += 1 + len(later)
    assert branches == len(versions)
    assert all(select.is_star for select in _selects(plan.top_view.body))


def test_a_later_branch_reads_another_spelling_bare():
    versions = [
        version("t", "a", 1, [("email", "STRING"), ("id", "INT64")]),
        version("t", "b", 2, [("Email", "STRING"), ("ID", "STRING"), ("zip", "DATE")]),
    ]
    body = plan_family("ds", "ds_unified", versions, GeneratorOptions()).top_view.body
    assert "  email AS Email,\n  CAST(id AS STRING) AS ID,\n  CAST(NULL AS DATE) AS zip\n" in body
    assert body.endswith("\nSELECT Email,ID,zip FROM ds.t_v_b AS v\n")


def _selects(body):
    """The SELECTs a view UNION ALLs, in order."""
    tree = sqlglot.parse_one(body, read="bigquery")
    return [tree] if isinstance(tree, sqlglot.exp.Select) else [*_selects_of(tree)]


def _selects_of(node):
    if isinstance(node, sqlglot.exp.Union):
        yield from _selects_of(node.this)
        yield from _selects_of(node.expression)
    else:
        yield node


def test_unsplit_view_just_fits_its_budget():
    versions = wide_family(3)
    length = len(plan_family("ds", "ds_unified", versions, GeneratorOptions()).top_view.body)
    assert len(plan_family("ds", "ds_unified", versions, GeneratorOptions(max_view_chars=length)).views) == 1
    assert len(plan_family("ds", "ds_unified", versions, GeneratorOptions(max_view_chars=length - 1)).views) > 1


def _tables_in(body):
    """Tables in text order: the FROM of each branch."""
    return [m.replace("`", "") for m in re.findall(r"\bFROM (\S+)(?: AS v)?$", body, flags=re.M)]


def test_a_single_version_too_wide_for_the_budget_is_an_error():
    versions = [version("t", "1", 1, [(f"column_with_a_long_name_{i}", "INT64") for i in range(200)])]
    with pytest.raises(
        PlanError,
        match=r"'t_v_1' alone needs [\d,]+ characters of SQL, over the 1,000-character view budget: raise --max-view-chars",
    ):
        plan_family("ds", "ds_unified", versions, GeneratorOptions(max_view_chars=1_000))


def test_more_tables_and_views_than_a_query_may_reference_is_an_error():
    # 1,000 per query less a reserve of 10 for the reader's query: 989 versions + 1 view fit, 990 do not.
    plan_family("ds", "ds_unified", wide_family(989, columns=2), GeneratorOptions())
    with pytest.raises(LimitError, match="would reference 991 tables and views, over 990"):
        plan_family("ds", "ds_unified", wide_family(990, columns=2), GeneratorOptions())
    assert (
        len(
            plan_family(
                "ds", "ds_unified", wide_family(990, columns=2), GeneratorOptions(enforce_query_limits=False)
            ).versions
        )
        == 990
    )


def test_source_column_must_not_clash_with_a_data_column():
    with pytest.raises(PlanError, match="clashes"):
        plan_family("cdc", "cdc_unified", SEED, GeneratorOptions(source_column="EMAIL"))


@pytest.mark.parametrize(
    "options",
    [
        {"policy": "strict"},
        {"max_view_chars": 999},
        {"max_view_chars": 256_001},
        {"datetime_timezone": "Nowhere/Land"},
        {"source_column": "bad.name"},
        {"source_column": "x$"},
        {"datetime_timezone": "localtime"},
        {"datetime_timezone": "posix/Europe/Paris"},
        {"datetime_timezone": "right/UTC"},
        {"datetime_timezone": "Factory"},
        {"source_column": "_PARTITIONTIME"},
        {"source_column": "_table_x"},
        {"source_column": "_FILE_x"},
        {"source_column": "__ROOT__x"},
        {"source_column": "_ROW_TIMESTAMPx"},
        {"source_column": "_COLIDENTIFIERx"},
        {"source_column": "x" * 301},
    ],
)
def test_invalid_options_are_config_errors(options):
    with pytest.raises(ConfigError):
        GeneratorOptions(**options)


@pytest.mark.parametrize(
    ("view", "expected"),
    [
        ("customer_unified", True),
        ("customer_unified_part_001", True),
        ("customer_unified_part_1", False),
        ("customer_unified_part_0123456789ab", True),
        ("customer_unified_part_0123456789abc", False),
        ("customer_unified_unified", False),
        ("customer_v_unified", False),
        ("customer_unified_part_001x", False),
    ],
)
def test_family_views_are_recognised_exactly(view, expected):
    assert is_family_view("customer", view) is expected
