"""Check a planned family with the analyzer: every view accepted, every UNION ALL branch and every view
yielding exactly the plan's unified columns and types."""

from __future__ import annotations

import sqlglot
from analyzer import Analyzer, Catalog
from sqlglot import exp

from uniview.core.types import BQType, Scalar
from uniview.current.view import VERSION_COLUMN
from uniview.planning.plan import FamilyPlan


def catalog_of(plan: FamilyPlan) -> Catalog:
    catalog = Catalog()
    for version in plan.versions:
        columns = [(c.stored or c.name, c.type.base()) for c in version.columns]  # a renamed column by its stored name
        catalog.add_table(plan.source_dataset, version.table_name, columns)
    return catalog


def expected_columns(plan: FamilyPlan, source_column: str | None = None) -> list[tuple[str, BQType]]:
    columns = [(c.name, c.type) for c in plan.columns]
    return columns + ([(source_column, Scalar("STRING"))] if source_column else [])


def branches(body: str) -> list[str]:
    """The SELECTs a view UNION ALLs, as BigQuery SQL."""
    tree = sqlglot.parse_one(body, read="bigquery")
    found: list[exp.Expression] = []

    def walk(node: exp.Expression) -> None:
        if isinstance(node, exp.Union):
            walk(node.this)
            walk(node.expression)
        else:
            found.append(node)

    walk(tree)
    return [node.sql(dialect="bigquery") for node in found]


def check_family(
    analyzer: Analyzer, plan: FamilyPlan, source_column: str | None = None, catalog: Catalog | None = None
) -> int:
    """Assert the analyzer accepts every view of `plan` with the unified columns; the statements analyzed."""
    catalog = catalog or catalog_of(plan)
    if source_column is None and (plan.current or plan.current_error or plan.current_note):
        source_column = VERSION_COLUMN  # with --current, the unified view names each row's version table
    expected = [(name.lower(), bq_type) for name, bq_type in expected_columns(plan, source_column)]
    analyzed = 0
    for view in plan.all_views:
        for branch in branches(view.body):
            result = analyzer.analyze(branch, catalog)
            analyzed += 1
            assert result.error is None, f"{view.qualified_name}: branch rejected: {result.error}\n{branch[:2000]}"
            assert result.types == [t for _, t in expected], (
                f"{view.qualified_name}: branch types differ\n{branch[:2000]}"
            )
        result = analyzer.analyze(view.statement, catalog)
        analyzed += 1
        assert result.error is None, f"{view.qualified_name} rejected by the analyzer: {result.error}"
        assert [(n.lower(), t) for n, t in result.columns] == expected, f"{view.qualified_name}: columns differ"
        catalog.add_table(view.dataset, view.name, result.columns)
    return analyzed
