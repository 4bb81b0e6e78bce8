"""Table renames read from the source's DDL (MySQL, MariaDB): `RENAME TABLE a TO b[, c TO d ...]` and
`ALTER TABLE a RENAME [TO] b`, as the control table `_uniview_ddl` holds them (uniview.core.ddl_renames).

A family is the table a name stands for now, and the table carries its changes with it.  Per source database,
the changes of one version table belong to a family by log position: after `RENAME TABLE a TO b` at position P
(the DDL row's `_cdc_sequence`), family `b` is `a`'s changes before P and `b`'s after P; `b`'s own changes
before P (an earlier table named `b`, the old table of a swap) follow that table wherever it was renamed to,
and family `a` is empty until a new table named `a` is written.  The renames of a statement apply in its order,
so the swaps of gh-ost (`RENAME TABLE t TO _t_del, _t_gho TO t`) and pt-online-schema-change
(`RENAME TABLE t TO _t_old, _t_new TO t`) move the shadow table's changes to `t` and the old table's away.

The table names a chain of renames touches form one lineage.  Each database of the dataset runs the lineage's
renames in one order (the statements' texts, in the order of its log), and a database that has run fewer has
run the first ones: the migrations of a fleet.  A change then belongs to the family its table name reaches
through the renames after it, and which renames those are depends only on two numbers of its database: how
many of the lineage's renames it has run (`done`) and how many of them are before the change (`before`).  The
views look both up in the control table (`rows_of`), so a view's length grows with the lineage's statements,
never with the number of databases.  A database whose renames are in another order is refused, naming it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from uniview.core.errors import PlanError
from uniview.core.segments import Lineage, Segment

#: A table rename statement: what a DDL text must start with to be read as one (case-insensitive).
_RENAME_TABLE = ("RENAME TABLE", "RENAME TABLES")


def moves_in_ddl(ddl: str) -> tuple[tuple[str, str], ...]:
    """The (old, new) table names a DDL text renames, in order; () when it renames no table."""
    text = ddl.strip().rstrip(";").strip()
    if text.upper().startswith(_RENAME_TABLE):
        return _rename_table_moves(text.split(None, 2)[2] if len(text.split(None, 2)) == 3 else "")
    from uniview.core.ddl_renames import parsed_alters

    if "RENAME" not in text.upper():
        return ()
    moves = []
    for statement in parsed_alters(text):
        for action in statement.args.get("actions") or []:
            if type(action).__name__ == "AlterRename" and action.this is not None:
                moves.append((statement.this.name, action.this.name))
    return tuple(moves)


def _rename_table_moves(pairs: str) -> tuple[tuple[str, str], ...]:
    """The moves of `a TO b, c TO d` (names may be quoted or qualified by their database)."""
    import sqlglot
    from sqlglot.errors import SqlglotError
    from sqlglot.tokens import TokenType

    try:
        tokens = sqlglot.tokenize(pairs, read="mysql")
    except SqlglotError:
        return ()
    moves: list[tuple[str, str]] = []
    names: list[str] = []  # the last part of each name of the current pair
    for token in [*tokens, None]:
        if token is None or token.token_type == TokenType.COMMA:
            if len(names) == 2:
                moves.append((names[0], names[1]))
            names = []
        elif token.token_type == TokenType.DOT:
            names.pop()
        elif token.text.upper() != "TO":
            names.append(token.text)
    return tuple(moves)


def lineages(rows: Iterable[tuple[str | None, str | None, str | None]]) -> list[Lineage]:
    """The lineages of the control table's rows ((database, _cdc_sequence, ddl)); PlanError when a database
    ran a lineage's renames in another order than the others.  The rows of one log position are one statement:
    Debezium sends `RENAME TABLE t TO _t_del, _t_gho TO t` as one event per pair, at one position.  A row without
    a log position (`_cdc_sequence` NULL) cannot be placed and is not read."""
    positions: dict[tuple[str, str], set[str]] = {}
    for database, sequence, ddl in rows:
        if sequence is not None and ddl and moves_in_ddl(ddl):
            positions.setdefault((database or "", sequence), set()).add(ddl)
    statements = [
        (database, sequence, tuple(sorted(texts))) for (database, sequence), texts in sorted(positions.items())
    ]
    groups: list[set[str]] = []
    for _, _, texts in statements:
        touched = _names(texts)
        joined = [group for group in groups if group & touched]
        groups = [group for group in groups if not group & touched] + [touched.union(*joined)]
    return [_lineage(group, [row for row in statements if _names(row[2]) & group]) for group in groups]


def _names(texts: Sequence[str]) -> set[str]:
    return {name for text in texts for move in moves_in_ddl(text) for name in move}


def _lineage(names: set[str], statements: Sequence[tuple[str, str, tuple[str, ...]]]) -> Lineage:
    by_database: dict[str, list[tuple[str, ...]]] = {}
    for database, _, texts in statements:
        by_database.setdefault(database, []).append(texts)
    order = max(by_database.values(), key=len)
    for database, done in by_database.items():
        if done != order[: len(done)]:
            raise PlanError(
                f"tables {', '.join(sorted(names))}: database {database!r} renamed them in another order than "
                f"the other databases ({done} against {order}); uniview reads table renames run in one order"
            )
    return Lineage(
        tuple(dict.fromkeys(text for texts in order for text in texts)),
        tuple(freeing_first([move for text in texts for move in moves_in_ddl(text)]) for texts in order),
        tuple((database, sequence) for database, sequence, _ in statements),
    )


def freeing_first(moves: Sequence[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    """The moves of one statement in an order the server can have run them: a table's name is moved away before
    another table takes it (`t TO _t_del` before `_t_gho TO t`).  A circle of moves (through a name the
    statement itself creates) keeps the order given."""
    pending, ordered = list(moves), []
    while pending:
        free = [move for move in pending if not any(other[0] == move[1] for other in pending if other is not move)]
        chosen = free[0] if free else pending[0]
        pending.remove(chosen)
        ordered.append(chosen)
    return tuple(ordered)


def family_segments(lineage: Lineage, sources: Iterable[str]) -> dict[str, list[tuple[str, Segment]]]:
    """{family: [(source table name, the segment of its changes that belongs to the family)]} of every family
    the lineage's tables (those of `sources`, the names with version tables) reach."""
    found: dict[str, list[tuple[str, Segment]]] = {}
    for source in sorted(set(sources) & lineage.names):
        reached = {
            lineage.family_of(source, before, done)
            for done in range(len(lineage.statements) + 1)
            for before in range(done + 1)
        }
        for family in sorted(reached):
            found.setdefault(family, []).append((source, Segment(lineage, lineage.states(source, family))))
    for name in lineage.names:
        found.setdefault(name, [])
    return found
