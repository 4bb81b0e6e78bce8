"""A filter on the partitioning or clustering columns of the version tables, written against `<table>_unified`,
reaches every version table as a filter on that table's own column, so BigQuery prunes partitions and blocks.

BigQuery pushes a filter on a UNION ALL view into each branch; it can prune a branch's table only when the
branch's column is the table's column itself, not an expression of it (CAST(id AS STRING) = '7' prunes
nothing).  The analyzer's resolved AST says, for each branch, whether each output column is a bare column of
its table or a computed one.  For every version table of a family the generator plans, each column of its
layout (partitioning, clustering: landing_layout.table_layout, as the sink creates it) is bare in its branch
exactly when its type in that version is the unified type: a key column whose type changes across versions
is cast in the versions of the other types, and pruning on it stops there (docs/sink.md)."""

from __future__ import annotations

from dataclasses import replace

from checks import catalog_of

from uniview.core.landing_layout import CDC_COLUMNS, DATABASE, PARTITION_COLUMN, table_layout
from uniview.core.schema import Column, TableVersion
from uniview.core.types import parse_type
from uniview.planning.plan import FamilyPlan, GeneratorOptions, plan_family
from uniview.sink.mysql_types import bigquery_type
from uniview.sink.versioning import SourceColumn, compute_version

KEY = ("tenant", "id")
#: One family's versions as the sink lands them from MySQL: columns added and retyped, the key kept ...
STABLE = [
    [("tenant", "varchar(20)"), ("id", "int(11)"), ("amount", "int(11)")],
    [("tenant", "varchar(40)"), ("id", "int(11)"), ("amount", "int(11)"), ("note", "text")],
    [("tenant", "varchar(40)"), ("id", "bigint"), ("amount", "decimal(10,2)"), ("note", "text")],  # amount widens
    [("tenant", "varchar(40)"), ("id", "bigint"), ("amount", "varchar(20)")],  # amount becomes text, note dropped
]
#: ... and then the key column `id` becomes text: the unified `id` is STRING.
RETYPED_KEY = [*STABLE, [("tenant", "varchar(40)"), ("id", "varchar(36)"), ("amount", "varchar(20)")]]


def landed_version(index: int, schema: list[tuple[str, str]]) -> TableVersion:
    """The version table the sink creates for `schema`: its name, BigQuery types and CDC columns, its key."""
    version = compute_version("orders", [SourceColumn(name, declared) for name, declared in schema])
    columns = [(name, bigquery_type(declared).bq_type) for name, declared in schema]
    columns += [(name, parse_type(bq_type)) for name, bq_type in CDC_COLUMNS]
    return TableVersion(
        f"orders_v_{version}", "orders", version, float(index), tuple(Column(n, t) for n, t in columns), KEY
    )


def bare_columns(zetasql, plan: FamilyPlan) -> dict[str, dict[str, bool]]:
    """{version table: {unified column: True when its branch gives the table's column as it is}} of the
    unified view, from the analyzer's resolved AST."""
    assert not plan.parts, "a family small enough for one view"
    resolved = zetasql.resolve(plan.top_view.body, catalog_of(plan))
    (union,) = nodes(resolved, "ResolvedSetOperationScanProto")
    names = [column.name.lower() for column in plan.columns]
    found = {}
    for item in union.input_item_list:
        (scan,) = nodes(item.scan, "ResolvedTableScanProto")
        table_columns = {column.column_id for column in scan.parent.column_list}
        computed = {c.column.column_id: c.expr for c in nodes(item.scan, "ResolvedComputedColumnProto")}
        found[scan.table.name] = {
            name: column.column_id in table_columns or _column_ref(computed.get(column.column_id), table_columns)
            for name, column in zip(names, item.output_column_list, strict=False)
        }
    return found


def _column_ref(expr, table_columns: set[int]) -> bool:
    """A computed column that only renames a table column (memo AS note) is that column too."""
    if expr is None or expr.WhichOneof("node") != "resolved_column_ref_node":
        return False
    return expr.resolved_column_ref_node.column.column_id in table_columns


def nodes(message, kind: str) -> list:
    """Every node of the proto type `kind` under `message`, depth first."""
    found = [message] if message.DESCRIPTOR.name == kind else []
    for descriptor, value in message.ListFields():
        if descriptor.message_type is None:
            continue
        for child in [value] if hasattr(value, "DESCRIPTOR") else value:  # one message, or a repeated field
            found += nodes(child, kind)
    return found


def layout_columns(version: TableVersion) -> list[str]:
    layout = table_layout([(c.name, c.type) for c in version.columns], version.primary_key)
    return [name.lower() for name in (layout.partition_column, *layout.clustering) if name]


def assert_prunable_where_types_agree(zetasql, plan: FamilyPlan) -> dict[str, set[str]]:
    """Every layout column of every version is bare in its branch exactly when its type is the unified one;
    {version table: its layout columns that are cast}."""
    unified = {column.name.lower(): column.type.base() for column in plan.columns}
    bare = bare_columns(zetasql, plan)
    assert sorted(bare) == sorted(v.table_name for v in plan.versions)  # the view reads every version
    cast = {}
    for version in plan.versions:
        types = {column.name.lower(): column.type.base() for column in version.columns}
        layout = layout_columns(version)
        assert {PARTITION_COLUMN, DATABASE.lower(), *KEY} <= set(layout)
        for name in layout:
            assert bare[version.table_name][name] == (types[name] == unified[name]), (version.table_name, name)
        cast[version.table_name] = {name for name in layout if not bare[version.table_name][name]}
    return cast


def test_a_filter_on_ingestion_time_database_or_key_reaches_every_version_as_its_own_column(zetasql):
    versions = [landed_version(i, schema) for i, schema in enumerate(STABLE)]
    for options in (GeneratorOptions(), GeneratorOptions(current=True)):
        plan = plan_family("shop", "shop_unified", versions, options)
        assert "CAST(amount AS STRING)" in plan.top_view.body  # non-key columns are cast ...
        cast = assert_prunable_where_types_agree(zetasql, plan)
        assert cast == {v.table_name: set() for v in versions}  # ... the layout's columns never


def test_a_key_column_whose_type_changes_is_cast_in_the_older_versions_and_prunes_only_in_the_others(zetasql):
    versions = [landed_version(i, schema) for i, schema in enumerate(RETYPED_KEY)]
    plan = plan_family("shop", "shop_unified", versions, GeneratorOptions())
    assert {c.name: c.type for c in plan.columns}["id"] == parse_type("STRING")
    cast = assert_prunable_where_types_agree(zetasql, plan)
    assert cast == {**{v.table_name: {"id"} for v in versions[:-1]}, versions[-1].table_name: set()}


def test_a_renamed_key_column_still_prunes(zetasql):
    from uniview.core.renames import Rename, apply_renames

    renamed = [
        replace(version, primary_key=("tenant", "ident"))
        for version in [landed_version(0, [("tenant", "varchar(20)"), ("ident", "int(11)")])]
    ] + [landed_version(1, [("tenant", "varchar(20)"), ("id", "int(11)")])]
    renamed = apply_renames(renamed, [Rename("orders", "ident", "id")])
    plan = plan_family("shop", "shop_unified", renamed, GeneratorOptions())
    assert "ident AS id" in plan.top_view.body
    bare = bare_columns(zetasql, plan)
    assert all(bare[v.table_name]["id"] and bare[v.table_name][PARTITION_COLUMN] for v in renamed)
