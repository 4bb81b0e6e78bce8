"""Consolidation's bookkeeping on BigQuery, as SQL (pure; docs/consolidation.md, Warehouses).

The registry `_uniview_folds` lives in the sink's control dataset, next to its ledger, so that a
sink batch reads one table whatever the number of datasets it writes, and checks it again inside
each promotion transaction.  A folded table leaves discovery by a label, `uniview-folded`, which
consolidation sets once the table is empty and settled: INFORMATION_SCHEMA lists it with the
table, so discovery needs no setting naming the control dataset.
"""

from __future__ import annotations

from collections.abc import Iterable

from uniview.core.identifiers import quote_path, string_literal
from uniview.planning.consolidation import REDIRECTED_STATES

FOLDS_TABLE = "_uniview_folds"
FOLDED_LABEL = "uniview-folded"
#: The message a promotion transaction raises when a table it writes was folded meanwhile.
FOLDED_MESSAGE = "uniview: a version this batch writes was folded meanwhile"


def registry_ddl(project: str, control: str) -> str:
    return (
        f"CREATE TABLE IF NOT EXISTS {quote_path(project, control, FOLDS_TABLE)} (dataset STRING, family STRING, "
        "version_table STRING, consolidated_table STRING, successor_table STRING, state STRING, "
        "rows_moved INT64, recorded_at TIMESTAMP)"
    )


def not_folded(options_view: str, table_name: str) -> str:
    """A condition true for a table without the folded label (`options_view`: the dataset's
    INFORMATION_SCHEMA.TABLE_OPTIONS; `table_name`: the SQL of the table's name)."""
    return (
        f"NOT EXISTS (SELECT 1 FROM {options_view} AS folded WHERE folded.table_name = {table_name} "
        f"AND folded.option_name = 'labels' AND STRPOS(folded.option_value, '\"{FOLDED_LABEL}\"') > 0)"
    )


def redirected_query(project: str, control: str, targets: Iterable[tuple[str, str]]) -> str:
    """dataset, version_table, successor_table of the `targets` ((dataset, table)) the sink must not write."""
    keys = ", ".join(string_literal(f"{dataset}.{table}") for dataset, table in sorted(set(targets)))
    states = ", ".join(map(string_literal, REDIRECTED_STATES))
    return (
        f"SELECT dataset, version_table, successor_table FROM {quote_path(project, control, FOLDS_TABLE)} "
        f"WHERE state IN ({states}) AND CONCAT(dataset, '.', version_table) IN ({keys or 'NULL'})"
    )


def folded_guard(project: str, control: str, targets: Iterable[tuple[str, str]]) -> str:
    """The statement a promotion transaction starts with: it fails the transaction when one of its
    target tables was folded after the batch read the registry."""
    return (
        f"IF EXISTS ({redirected_query(project, control, targets)}) THEN "
        f"RAISE USING MESSAGE = {string_literal(FOLDED_MESSAGE)}; END IF"
    )
