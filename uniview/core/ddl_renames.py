"""Column renames read from the source's DDL: Debezium's MySQL and MariaDB connectors publish each DDL
statement as a schema-change event (the topic named after the connector's `topic.prefix`).

The sink lands every schema-change event (its DDL text, the database and the log position) as one row
of the control table `_uniview_ddl` of its dataset (a version table like any other:
`_uniview_ddl_v_<version>`, one column `ddl` and the CDC columns), and the generator reads those rows
back (Warehouse.read_ddl_renames), finds the column renames with sqlglot (MySQL dialect: `ALTER TABLE t
RENAME COLUMN a TO b`, `ALTER TABLE t CHANGE [COLUMN] a b <type>`, several actions or statements in
one event), and applies the renames in the
order of the source's log (`_cdc_sequence`), before the declared ones (uniview.core.renames).  The table is
the generator's input, not a family: no view is made for it.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from typing import Any

from uniview.core.renames import Rename

DDL_TABLE = "_uniview_ddl"
#: DDL that may rename a column (it says RENAME or CHANGE); anything else is not parsed.
_MAY_RENAME = re.compile(r"\b(RENAME|CHANGE)\b", re.IGNORECASE)
_PERSISTENT = re.compile(r"\)\s*PERSISTENT\b", re.IGNORECASE)
#: The control table's one source column, as metadata.schema declares it.
DDL_COLUMN = "ddl"


def renames_in_ddl(ddl: str) -> list[Rename]:
    """The column renames a MySQL/MariaDB DDL text makes, in order ([] when it makes none or is not
    SQL sqlglot reads).  A change of a name's case only is no rename (MySQL's names are case-insensitive)."""
    from sqlglot import exp

    if not _MAY_RENAME.search(ddl):
        return []
    statements = parsed_alters(ddl)
    found = []
    for statement in statements:
        table = statement.this.name
        for action in statement.args.get("actions") or []:
            if isinstance(action, exp.RenameColumn):
                old, new = action.this.name, action.args["to"].name
            elif isinstance(action, exp.ModifyColumn) and action.args.get("rename_from") is not None:
                old, new = action.args["rename_from"].name, action.this.this.name
            else:
                continue
            if old and new and old.lower() != new.lower():
                found.append(Rename(table, old, new))
    return found


def parsed_alters(ddl: str) -> list[Any]:
    """The `ALTER TABLE` statements of a MySQL/MariaDB DDL text as sqlglot reads them ([] when it is not SQL
    sqlglot reads).  MariaDB's `PERSISTENT` (a stored generated column) is read as MySQL's `STORED`."""
    import sqlglot
    from sqlglot import exp
    from sqlglot.errors import SqlglotError

    logger = logging.getLogger("sqlglot")  # it warns of every statement it reads as an opaque command
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        statements = sqlglot.parse(_PERSISTENT.sub(") STORED", ddl), read="mysql")
    except SqlglotError:
        return []
    finally:
        logger.setLevel(level)
    return [
        statement
        for statement in statements
        if isinstance(statement, exp.Alter) and str(statement.args.get("kind") or "").upper() == "TABLE"
    ]


def ordered_renames(rows: Iterable[tuple[str | None, str | None, str | None]]) -> tuple[Rename, ...]:
    """The renames of the control table's rows ((database, _cdc_sequence, ddl)), in the log's order
    (rows without a sequence first, then by database for a stable order)."""
    ordered = sorted(rows, key=lambda row: (row[1] is not None, row[1] or "", row[0] or ""))
    return tuple(rename for _, _, ddl in ordered for rename in renames_in_ddl(ddl or ""))
