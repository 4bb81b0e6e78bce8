"""`_cdc_sequence`: the position of a change in its source database's log, as text that sorts in commit order.

Every shape is fixed-width decimal digits, so plain string order (BigQuery's and DuckDB's
byte order) is commit order, across binlog files and within one position:

| position as the record carries it            | source                          | `_cdc_sequence`                                   |
|----------------------------------------------|---------------------------------|---------------------------------------------------|
| `mysql-bin.000003:1234` or `...:1234:2`       | MySQL/MariaDB binlog file:pos[:row] (uniview envelope, Debezium MySQL) | file number, position, row index: 20 digits each (row 0 when absent) |
| `23923456` (digits only)                      | PostgreSQL LSN as a number (Debezium PostgreSQL), or any log offset | the number in 20 digits                            |
| `0/16B3748`                                   | PostgreSQL LSN in its text form | the LSN as a number in 20 digits                  |

Anything else gives NULL (documented: such changes sort before every sequenced change of
their key).  Sequences compare only within one source database and one source kind.  The
SQL expression (for either warehouse) and the Python function below are built from the same
patterns; the tests hold them to each other.
"""

from __future__ import annotations

import re

from sqlglot import exp

from uniview.sink.load_dialect import DUCKDB, LoadDialect, function_call

WIDTH = 20
#: binlog `<name>.<number>:<pos>[:<row>]`; the file's number is the digits after its last dot.
BINLOG = r"^(?:.*\.)?([0-9]{1,20}):([0-9]{1,20})(?::([0-9]{1,20}))?$"
#: an unsigned number, e.g. a PostgreSQL LSN as Debezium sends it.
NUMBER = r"^([0-9]{1,20})$"
#: a PostgreSQL LSN as PostgreSQL prints it: two hexadecimal halves of 32 bits.
LSN_TEXT = r"^([0-9A-Fa-f]{1,8})/([0-9A-Fa-f]{1,8})$"
#: The names of BINLOG's groups in `binlog_groups`' struct.
_BINLOG_GROUPS = ("file", "pos", "row")


def sequence_of(position: str | None) -> str | None:
    """The `_cdc_sequence` of one position text (the reference the SQL expression follows).  Each pattern must
    match the whole text, as in the warehouses' RE2, whose `$` is the text's end; Python's `$` alone also matches
    before a final newline (`"0\\n"` is no position)."""
    if position is None:
        return None
    if match := re.fullmatch(BINLOG, position):
        return "".join(part.zfill(WIDTH) for part in (match[1], match[2], match[3] or "0"))
    if match := re.fullmatch(NUMBER, position):
        return match[1].zfill(WIDTH)
    if match := re.fullmatch(LSN_TEXT, position):
        return str((int(match[1], 16) << 32) | int(match[2], 16)).zfill(WIDTH)
    return None


def binlog_groups(position: exp.Expr) -> exp.Expr:
    """DuckDB: BINLOG's three groups of `position` in one extraction, as a struct (`file`, `pos`, `row`), each ''
    where it took no part (all three when the position is no binlog position).  Computed once per line as a
    column of its own and given to `sequence_sql`, it spares the three extractions of the binlog pattern."""
    names = exp.Array(expressions=[exp.Literal.string(name) for name in _BINLOG_GROUPS])
    return function_call("regexp_extract", position.copy(), exp.Literal.string(BINLOG), names)


def sequence_sql(position: exp.Expr, dialect: LoadDialect = DUCKDB, binlog: exp.Expr | None = None) -> exp.Expr:
    """The SQL expression of `sequence_of` over a position (sqlglot, for a warehouse's load step, in `dialect`).
    `binlog`: the position's `binlog_groups` (DuckDB), read instead of matching and extracting BINLOG again."""

    def group(pattern: str, number: int) -> exp.Expr:
        if pattern == BINLOG and binlog is not None:
            return function_call("struct_extract", binlog.copy(), exp.Literal.string(_BINLOG_GROUPS[number - 1]))
        return dialect.regexp_group(position, pattern, number)

    def padded(value: exp.Expr) -> exp.Expr:
        return function_call("lpad", value, exp.Literal.number(WIDTH), exp.Literal.string("0"))

    row = group(BINLOG, 3)
    binlog_sequence = exp.DPipe(
        this=exp.DPipe(this=padded(group(BINLOG, 1)), expression=padded(group(BINLOG, 2))),
        expression=padded(
            exp.Case()
            .when(exp.EQ(this=row, expression=exp.Literal.string("")), exp.Literal.string("0"))
            .else_(row.copy())
        ),
    )
    # the file's number is never empty in a match: with `binlog`, a position matches BINLOG when it is not ''
    is_binlog = (
        dialect.matches(position, BINLOG)
        if binlog is None
        else exp.NEQ(this=group(BINLOG, 1), expression=exp.Literal.string(""))
    )
    lsn = dialect.lsn_number(group(LSN_TEXT, 1), group(LSN_TEXT, 2))
    return (
        exp.Case()
        .when(is_binlog, binlog_sequence)
        .when(dialect.matches(position, NUMBER), padded(group(NUMBER, 1)))
        .when(dialect.matches(position, LSN_TEXT), padded(lsn))
    )
