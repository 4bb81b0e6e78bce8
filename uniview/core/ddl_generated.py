"""Generated columns added to a table that has rows, read from the source's DDL (the control table
`_uniview_ddl`, uniview.core.ddl_renames): `ALTER TABLE t ADD c ... AS (expr) STORED` (or `VIRTUAL`, or
MariaDB's `PERSISTENT`, or `GENERATED ALWAYS AS`).  The source computes the column for every row it holds and
logs no change of them, so the value a row written before it shows is not known: the generator marks the
column in the versions that have it as one added NOT NULL without a default, which `<table>_current` shows as
NULL named in `_cdc_unavailable` in the older rows (uniview.current.older_rows); the rows written since carry
the value as sent."""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import replace

from uniview.core.ddl_renames import parsed_alters
from uniview.core.schema import TableVersion

#: DDL that may add a generated column (it says AS); anything else is not parsed.
_MAY_GENERATE = re.compile(r"\bAS\b", re.IGNORECASE)


def generated_in_ddl(ddl: str) -> list[tuple[str, str]]:
    """The (table, column) pairs of the generated columns a MySQL/MariaDB DDL text adds to existing tables."""
    from sqlglot import exp

    if not _MAY_GENERATE.search(ddl):
        return []
    found = []
    for statement in parsed_alters(ddl):
        for action in statement.args.get("actions") or []:
            if isinstance(action, exp.ColumnDef) and action.find(exp.ComputedColumnConstraint) is not None:
                found.append((statement.this.name, action.this.name))
    return found


def generated_columns(rows: Iterable[tuple[str | None, str | None, str | None]]) -> frozenset[tuple[str, str]]:
    """The lowercased (table, column) pairs of the generated columns the control table's rows ((database,
    _cdc_sequence, ddl)) add."""
    return frozenset((t.lower(), c.lower()) for _, _, ddl in rows for t, c in generated_in_ddl(ddl or ""))


def with_generated(
    family: str, versions: Sequence[TableVersion], generated: Collection[tuple[str, str]]
) -> list[TableVersion]:
    """`versions` with each generated column `generated` names for `family` recorded as NOT NULL where present."""
    names = {column for table, column in generated if table == family.lower()}
    if not names:
        return list(versions)
    marked = []
    for version in versions:
        has = [c.name for c in version.columns if c.name.lower() in names and c.name not in version.not_null]
        marked.append(replace(version, not_null=(*version.not_null, *has)) if has else version)
    return marked
