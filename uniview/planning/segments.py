"""The SQL that keeps, of a version table, the changes a table rename leaves to its family
(uniview.core.table_renames): a join to the renames in the control table `_uniview_ddl`, whose length grows with
the lineage's rename statements and not with the number of source databases."""

from __future__ import annotations

from collections.abc import Sequence

from uniview.core.identifiers import identifier_path, string_literal
from uniview.core.render import render
from uniview.core.schema import TableVersion, split_version_table
from uniview.core.segments import Segment


def renamed_rows(source_dataset: str, segment: Segment, alias: str) -> str:
    """The JOIN and WHERE clauses that follow `FROM <version table> AS <alias>`."""
    if not segment.states:
        return "WHERE FALSE"
    return render(
        "renamed_rows.sql.j2",
        numbers=range(1, len(segment.lineage.statements) + 1),
        ddl_tables=[identifier_path(source_dataset, table) for table in segment.ddl_tables],
        texts=[string_literal(text) for text in segment.lineage.texts],
        alias=alias,
        states=segment.states,
    )


def renamed_key(family: str, versions: Sequence[TableVersion]) -> str:
    """Which renames `family`'s changes follow: its version tables of other names, and the lineages (with where each
    database renamed) that choose its changes; "" when none.  A current table is built again when it changes."""
    tables = sorted(v.table_name for v in versions if (split_version_table(v.table_name) or ("",))[0] != family)
    lineages = sorted({v.segment.lineage.key for v in versions if v.segment is not None})
    return " ".join([*tables, *lineages])
