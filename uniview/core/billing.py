"""What BigQuery bills on demand for a script: its statements, the tables each references, the floor.

A script is parsed with sqlglot (BigQuery's dialect); each statement is its own child job and is billed on
its own.  A statement that references tables is billed the bytes it reads, rounded up to the next MB, and at
least 10 MB per table it references and 10 MB in all; one that references none (transaction control, DROP,
CREATE VIEW, TRUNCATE, a SELECT of literals) is billed nothing.  A view is expanded to the tables it
reads (`view_tables`), a temporary table counts as a table, a CTE does not.  A DML statement references
its target (INSERT, UPDATE, DELETE, MERGE: a DML job is billed at least 10 MB for its target); CREATE TABLE
... AS SELECT writes its target as a query writes its destination, and references only what it reads.
Where a table's size is known, it is the bytes read of that table (an upper bound: BigQuery reads only
the columns and partitions a statement needs; the target of an INSERT is not read at all).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.tokens import Tokenizer, TokenType

#: BigQuery's billing units are binary: a MB is 2**20 bytes, a TiB 2**40.
MB = 2**20
TIB = 2**40
#: On demand, each statement is billed at least this much per table it references, and in all.
MIN_BYTES_PER_TABLE = 10 * MB
MIN_BYTES_PER_STATEMENT = 10 * MB
#: The on-demand price of a TiB processed (US multi-region).
USD_PER_TIB = 6.25

#: One CREATE VIEW statement: it reads no table, so it is billed nothing, and that is known without parsing
#: its body (a unified view's part is up to 256K characters, which sqlglot takes seconds to parse).
_ONE_VIEW_DDL = re.compile(r"\s*(?:--[^\n]*\n\s*)*CREATE\s+(?:OR\s+REPLACE\s+)?VIEW\s[^;]*;?\s*", re.IGNORECASE)

#: Statements that read no table whatever they name: no query runs.
_FREE = (exp.Drop, exp.Transaction, exp.Commit, exp.Rollback, exp.TruncateTable, exp.Command)


@dataclass(frozen=True)
class StatementBill:
    """One statement: its kind (sqlglot's key), the tables it references, views expanded, and its bytes."""

    kind: str
    tables: tuple[str, ...]
    billed_bytes: int

    @property
    def floor_bytes(self) -> int:
        """What it is billed however little it reads."""
        return statement_bytes(self.tables, {}, ())


@dataclass(frozen=True)
class ScriptBill:
    """Every statement of a script, and their sums."""

    statements: tuple[StatementBill, ...]

    @property
    def billed_statements(self) -> int:
        """The statements that are billed at all (that reference a table)."""
        return sum(1 for statement in self.statements if statement.tables)

    @property
    def table_references(self) -> int:
        return sum(len(statement.tables) for statement in self.statements)

    @property
    def floor_bytes(self) -> int:
        return sum(statement.floor_bytes for statement in self.statements)

    @property
    def billed_bytes(self) -> int:
        return sum(statement.billed_bytes for statement in self.statements)


def bill_script(
    sql: str, views: Mapping[str, Sequence[str]] | None = None, sizes: Mapping[str, int] | None = None
) -> ScriptBill:
    """The bill of `sql` (one statement or a script): `views` maps a view to the tables and views its body
    reads (`view_tables`), `sizes` a table to its bytes where known.  Names are `dataset.table`, or the bare
    name of a temporary table."""
    if _ONE_VIEW_DDL.fullmatch(sql):
        return ScriptBill((StatementBill("create", (), 0),))
    expansions = views or {}
    known = sizes or {}
    bills = []
    for statement in statements(sql):
        tables = expand(read_tables(statement), expansions)
        unread = _unread_target(statement)
        bills.append(StatementBill(statement.key, tables, statement_bytes(tables, known, unread)))
    return ScriptBill(tuple(bills))


def bill_scripts(
    scripts: Iterable[str], views: Mapping[str, Sequence[str]] | None = None, sizes: Mapping[str, int] | None = None
) -> ScriptBill:
    """The bill of several scripts run one after the other, as one."""
    return ScriptBill(tuple(s for sql in scripts for s in bill_script(sql, views, sizes).statements))


def statements(sql: str) -> list[exp.Expr]:
    """The statements of a script, as BigQuery runs them: the condition of an `IF ... THEN` (a query of its own,
    as `SELECT <condition>`) and the statements inside the block.  sqlglot reads a procedural IF as a
    Command holding the condition and the block's first statement; it is split here."""
    found: list[exp.Expr] = []
    with _quiet_fallbacks():
        parsed = sqlglot.parse(sql, read="bigquery")
    for statement in parsed:
        if isinstance(statement, exp.Command) and statement.name.upper() in ("IF", "ELSEIF"):
            condition, block = _split_condition(str(statement.args.get("expression") or ""))
            found.append(sqlglot.parse_one(f"SELECT {condition}", read="bigquery"))
            found.extend(statements(block) if block.split(maxsplit=1)[:1] not in ([], ["RAISE"]) else [])
        elif statement is not None:
            found.append(statement)
    return found


def _split_condition(text: str) -> tuple[str, str]:
    """`cond THEN rest` split at its THEN (the first outside parentheses and CASE ... END)."""
    depth = 0
    for token in Tokenizer(dialect="bigquery").tokenize(text):
        if token.token_type in (TokenType.L_PAREN, TokenType.CASE):
            depth += 1
        elif token.token_type in (TokenType.R_PAREN, TokenType.END):
            depth -= 1
        elif token.token_type == TokenType.THEN and depth == 0:
            return text[: token.start], text[token.end + 1 :]
    raise ValueError(f"an IF without THEN: {text[:200]}")


@contextmanager
def _quiet_fallbacks() -> Iterator[None]:
    """sqlglot warns of every procedural statement it reads as a Command; those are expected here."""
    log = logging.getLogger("sqlglot")
    level = log.level
    log.setLevel(logging.ERROR)
    try:
        yield
    finally:
        log.setLevel(level)


def statement_bytes(tables: Sequence[str], sizes: Mapping[str, int], unread: Collection[str] = ()) -> int:
    """What one statement referencing `tables` is billed: per table its size (none for an `unread` one) or
    10 MB, whichever is more; at least 10 MB in all; rounded up to the next MB; nothing without a table."""
    if not tables:
        return 0
    read = sum(max(MIN_BYTES_PER_TABLE, 0 if table in unread else sizes.get(table, 0)) for table in tables)
    return -(-max(MIN_BYTES_PER_STATEMENT, read) // MB) * MB


def on_demand_usd(billed_bytes: float) -> float:
    """The on-demand price of `billed_bytes`."""
    return billed_bytes / TIB * USD_PER_TIB


def size_text(size: float) -> str:
    """A byte count in BigQuery's binary units: 0 B, 310 MB, 9.1 GB, 2.3 TB."""
    for unit, scale in (("PB", 2**50), ("TB", TIB), ("GB", 2**30), ("MB", MB), ("KB", 2**10)):
        if size >= scale:
            amount = size / scale
            return f"{amount:.0f} {unit}" if amount >= 100 or amount == int(amount) else f"{amount:.1f} {unit}"
    return f"{size:.0f} B"


def table_name(table: exp.Table) -> str:
    """`dataset.table` (the project left out), or the bare name of a temporary table."""
    return f"{table.db}.{table.name}" if table.db else table.name


def read_tables(statement: exp.Expr) -> tuple[str, ...]:
    """The tables and views `statement` reads, each once, in the order first named; CTEs left out."""
    if isinstance(statement, _FREE) or _is_view_ddl(statement):
        return ()
    written = _written_target(statement)
    ctes = {cte.alias_or_name for cte in statement.find_all(exp.CTE)}
    found: dict[str, None] = {}
    for table in statement.find_all(exp.Table):
        if table is written or (not table.db and table.name in ctes) or not table.name:
            continue
        found[table_name(table)] = None
    return tuple(found)


def _is_view_ddl(statement: exp.Expr) -> bool:
    return isinstance(statement, exp.Create) and str(statement.args.get("kind", "")).upper() == "VIEW"


def _written_target(statement: exp.Expr) -> exp.Table | None:
    """The table `statement` writes without referencing it: the target of CREATE TABLE ... AS SELECT."""
    return _target(statement) if isinstance(statement, exp.Create) else None


def _target(statement: exp.Expr) -> exp.Table | None:
    target = statement.this
    if isinstance(target, exp.Schema):
        target = target.this
    return target if isinstance(target, exp.Table) else None


def _unread_target(statement: exp.Expr) -> tuple[str, ...]:
    """The target a DML statement references without reading it: of INSERT, and of an insert-only MERGE."""
    insert_only = isinstance(statement, exp.Merge) and not _merge_reads_target(statement)
    target = _target(statement) if isinstance(statement, exp.Insert) or insert_only else None
    return (table_name(target),) if target is not None else ()


def _merge_reads_target(merge: exp.Merge) -> bool:
    """A MERGE with an UPDATE or DELETE clause reads its target (BigQuery bills q + t)."""
    whens = merge.args.get("whens")
    clauses = whens.expressions if isinstance(whens, exp.Whens) else merge.expressions
    return any(not isinstance(clause.args.get("then"), exp.Insert) for clause in clauses)


def view_tables(bodies: Mapping[str, str]) -> dict[str, tuple[str, ...]]:
    """Per view (`dataset.view`), the tables and views its body (a SELECT) reads."""
    return {name: read_tables(sqlglot.parse_one(body, read="bigquery")) for name, body in bodies.items()}


def expand(tables: Sequence[str], views: Mapping[str, Sequence[str]]) -> tuple[str, ...]:
    """`tables` with every view replaced by the tables it reads, views of views too; each table once."""
    found: dict[str, None] = {}
    pending = list(reversed(tables))
    seen: set[str] = set()
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        if name in views:
            pending.extend(reversed(views[name]))
        else:
            found[name] = None
    return tuple(found)
