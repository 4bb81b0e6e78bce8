"""How a batch's staged lines become typed staging tables in BigQuery: the load step's statements (pure, no I/O).

The sink stages a batch's lines as they are, in one connector write.  A typing script reads them once into a
temporary table, each line with its envelope and its routing key's decision (uniview.sink.load_sql's
routed_lines, the decisions bound as the query parameter @decisions), then types the records of each shape
with the sink's rules rendered for BigQuery (load_sql.typed_routes) into typed staging tables: the same
rules, reasons and details as DuckDB's load step.  A typed staging table holds the rows of many shapes in
columns they share by type (uniview.sink.slots), each row either a version table's row (`_reason` NULL) or
a quarantine row, as the promotion (uniview.sink.bigquery_promotion) moves them; the first also holds the
lines rejected before typing.  A script stays under MAX_SCRIPT_CHARS, so a batch of many wide shapes is
typed by several scripts, each ending with the rows of its tables per route, reason and dataset.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from uniview.core.identifiers import quote_path, string_literal
from uniview.core.landing_layout import CDC_COLUMNS
from uniview.sink.bigquery_promotion import MAX_SCRIPT_CHARS, TypedChunk
from uniview.sink.frames import QUARANTINE_COLUMNS, TOO_LARGE_SHA256, TOO_LARGE_SIZE
from uniview.sink.load_dialect import BIGQUERY
from uniview.sink.load_sql import RAW_LINE, bigquery_decisions, envelopes, routed_lines, routing_keys, typed_routes
from uniview.sink.routing import VersionRoute, distinct_shapes, route_shapes
from uniview.sink.slots import Shape, Slot, assign_slots, chunk_shapes, slot_fields

#: The query parameter holding the batch's routing decisions (load_sql.decisions_json's text).
DECISIONS_PARAMETER = "decisions"
#: The script's temporary table of routed lines.
ROUTED = "_uniview_routed"
#: The route of the count row that gives the lines staged (no route's index is negative).
STAGED_ROUTE = -1
#: The columns a typed staging table has besides its slots, in order: which route and dataset a row is for and
#: why it is not written (NULL: it is), the version table's _cdc_ columns, and the quarantine row's columns.
_CDC_NAMES = [name for name, _ in CDC_COLUMNS]
_QUARANTINE_NAMES = [name for name, _ in QUARANTINE_COLUMNS]
#: Characters a slot takes in each SELECT of a typed staging table (its value or typed NULL, and its name).
_SLOT_CHARS = 48


@dataclass(frozen=True)
class TypingScript:
    """One script: it creates the typed staging tables `tables` (names in the control dataset) and returns their
    rows per (`_route`, `_reason`, `_dataset`) with a count and a NULL detail, then the rows of the batch's reads
    (typing_scripts' `reads`)."""

    sql: str
    tables: list[str]


def keys_query(lines: str, rewritten: bool) -> str:
    """The distinct routing keys of the staged lines `lines` (a table path), each with its earliest timestamp."""
    return routing_keys(envelopes(lines, rewritten, BIGQUERY, bounded=True), BIGQUERY)


def typing_scripts(
    project: str,
    control: str,
    lines: str,
    rewritten: bool,
    routes: Sequence[VersionRoute],
    fallback_dataset: str,
    batch_label: str,
    prefix: str,
    reads: Sequence[str] = (),
    max_chars: int = MAX_SCRIPT_CHARS,
) -> tuple[list[TypedChunk], list[TypingScript]]:
    """The typed staging tables of a batch (named `prefix` + their number) and the scripts that create them.
    `lines`: the staged lines' table path; `fallback_dataset`: the quarantine of lines that reach no dataset.
    A route of a shape too wide to type (too_wide) is left out: its records must be rejected by routing.
    `reads`: queries of the batch's own (route, text, text, number, detail) rows, their route below STAGED_ROUTE,
    answered by the last script with its counts (by a query of their own when they do not fit in it): one job
    fewer per read."""
    routed = routed_lines(
        envelopes(lines, rewritten, BIGQUERY, bounded=True),
        bigquery_decisions(f"@{DECISIONS_PARAMETER}"),
        fallback_dataset,
        BIGQUERY,
    )
    prologue = f"CREATE OR REPLACE TEMP TABLE {ROUTED} AS\n{routed};\n"
    shapes, members, typed = _typed_shapes(routes)
    budget = _budget(max_chars)
    fitting = [shape for shape in range(len(shapes)) if _chars(typed, [shape], assign_slots(shapes, [shape])) <= budget]
    chunks, statements = [], []
    for number, (group, slots) in enumerate(_groups(shapes, fitting, typed, budget)):
        table = f"{prefix}{number}"
        branches = [_typed_branch(typed[shape], shape, slots, batch_label) for shape in group]
        if number == 0:
            branches.append(_rejected_branch(slots, batch_label))
        create = f"CREATE OR REPLACE TABLE {quote_path(project, control, table)} AS\n"
        statements.append((table, create + "\nUNION ALL\n".join(branches)))
        chunks.append(TypedChunk([i for shape in group for i in members[shape]], table, slot_fields(slots)))
    return chunks, _scripts(project, control, prologue, statements, reads, max_chars)


def too_wide(routes: Sequence[VersionRoute], max_chars: int = MAX_SCRIPT_CHARS) -> dict[int, str]:
    """{route index: why} for the routes whose version's typing alone takes more SQL than a BigQuery statement
    holds (about 1,800 columns: more than a MySQL or PostgreSQL table has): BigQuery cannot type their records,
    which routing rejects as invalid_schema instead (uniview.sink.routing.reject_routes)."""
    shapes, members, typed = _typed_shapes(routes)
    budget = _budget(max_chars)
    wide: dict[int, str] = {}
    for shape, columns in enumerate(shapes):
        chars = _chars(typed, [shape], assign_slots(shapes, [shape]))
        if chars > budget:
            why = (
                f"typing its {len(columns):,} columns takes {chars:,} characters of SQL, over the {budget:,} a "
                "BigQuery statement leaves (1,024K per query)"
            )
            wide.update((index, why) for index in members[shape])
    return wide


def _typed_shapes(routes: Sequence[VersionRoute]) -> tuple[list[Shape], dict[int, list[int]], dict[int, str]]:
    """The routes' shapes, each shape's routes, and each shape's typed records (load_sql.typed_routes)."""
    shapes, shape_of = distinct_shapes(routes), route_shapes(routes)
    members = {shape: [i for i, of in enumerate(shape_of) if of == shape] for shape in range(len(shapes))}
    typed = {
        shape: typed_routes(ROUTED, indexes, shapes[shape], BIGQUERY, routes[indexes[0]].primary_key)
        for shape, indexes in members.items()
    }
    return shapes, members, typed


def _budget(max_chars: int) -> int:
    """The characters a typed staging table's statement may take in a script of at most `max_chars`: what the
    routed lines' statement (about 12K, whatever the batch: the decisions are a parameter) and the counts leave."""
    return max_chars - 20_000


def _groups(
    shapes: Sequence[Shape], fitting: Sequence[int], typed: Mapping[int, str], budget: int
) -> list[tuple[list[int], list[Slot]]]:
    """The `fitting` shapes grouped into typed staging tables, each with its slots: at most
    slots.MAX_STAGED_COLUMNS slots (unless one shape needs more) and a statement under `budget` characters (every
    SELECT of a table lists all its slots).  At least one group (the rejected lines' table)."""
    groups: list[tuple[list[int], list[Slot]]] = []
    for chunk in chunk_shapes([shapes[shape] for shape in fitting]):
        group: list[int] = []
        for shape in (fitting[position] for position in chunk):
            if group and _chars(typed, [*group, shape], assign_slots(shapes, [*group, shape])) > budget:
                groups.append((group, assign_slots(shapes, group)))
                group = []
            group.append(shape)
        groups.append((group, assign_slots(shapes, group)))
    return groups


def _chars(typed: Mapping[int, str], group: Sequence[int], slots: Sequence[Slot]) -> int:
    return sum(len(typed[shape]) + 1_000 + _SLOT_CHARS * len(slots) for shape in group)


def _typed_branch(typed: str, shape: int, slots: Sequence[Slot], batch_label: str) -> str:
    """One shape's typed records (load_sql.typed_routes) as rows of a typed staging table: each value in its
    slot, unless the record is quarantined (BigQuery refuses to write some misfits' values, such as an array
    with a NULL element)."""
    values = [
        next(
            (f"IF(reason IS NULL, t{position}, NULL)" for member, position in slot.members if member == shape),
            _null(slot),
        )
        for slot in slots
    ]
    quarantine = _quarantine_row("reason", "raw_line", "raw_bytes", "detail", batch_label)
    quarantine["source_file"] = "IF(reason IS NULL, NULL, source_file)"
    return _select(values, slots, quarantine, f"({typed})")


def _rejected_branch(slots: Sequence[Slot], batch_label: str) -> str:
    """The lines rejected before typing (by their envelope, routing or metadata) as rows of a typed staging table:
    quarantine rows (a line too large to stage has neither text nor bytes, but its size and SHA-256), and
    tombstones, which are counted and not written."""
    raw_bytes = f"COALESCE(_bytes, CAST({RAW_LINE} AS BYTES))"
    quarantine = _quarantine_row("_reason", RAW_LINE, raw_bytes, "_detail", batch_label)
    quarantine["raw_size"] = f"COALESCE({TOO_LARGE_SIZE}, {quarantine['raw_size']})"
    quarantine["raw_sha256"] = f"COALESCE({TOO_LARGE_SHA256}, {quarantine['raw_sha256']})"
    rejected = f"(SELECT * FROM {ROUTED} WHERE _reason IS NOT NULL)"
    return _select([_null(slot) for slot in slots], slots, quarantine, rejected)


def _null(slot: Slot) -> str:
    return f"CAST(NULL AS {slot.bq_type.base().sql()})"


def _quarantine_row(reason: str, raw_line: str, raw_bytes: str, detail: str, batch_label: str) -> dict[str, str]:
    """{quarantine column: its expression} over a row whose verdict is `reason` (NULL: it is written)."""
    return {
        "raw_line": raw_line,
        "reason": reason,
        "detail": detail,
        "source_file": "source_file",
        "table_name": "table_name",
        "table_version": "_version",
        "batch": string_literal(batch_label),
        "quarantined_at": "CURRENT_TIMESTAMP()",
        "raw_bytes": raw_bytes,
        "raw_size": f"BYTE_LENGTH({raw_bytes})",
        "raw_sha256": f"TO_HEX(SHA256({raw_bytes}))",
    }


def _select(values: Sequence[str], slots: Sequence[Slot], quarantine: Mapping[str, str], source: str) -> str:
    """A SELECT of typed staging rows from `source`: `_route`, `_dataset`, `_reason`, the slots' `values`, the
    _cdc_ columns and the quarantine columns (QUARANTINE_COLUMNS' order)."""
    selected = [
        "_route",
        "_dataset",
        f"{quarantine['reason']} AS _reason",
        *(f"{value} AS {slot.column}" for value, slot in zip(values, slots, strict=True)),
        *_CDC_NAMES,
        *(f"{quarantine[name]} AS {name}" for name in _QUARANTINE_NAMES),
    ]
    return f"SELECT {', '.join(selected)}\nFROM {source}"


def _scripts(
    project: str,
    control: str,
    prologue: str,
    statements: Sequence[tuple[str, str]],
    reads: Sequence[str],
    max_chars: int,
) -> list[TypingScript]:
    """The statements grouped into scripts under `max_chars`, each after `prologue` and ending with its counts; the
    last one answers the `reads` too, or a query of their own does when they would take it over `max_chars`."""
    scripts: list[TypingScript] = []
    group: list[tuple[str, str]] = []
    for table, statement in statements:
        if group and len(_script(project, control, prologue, [*group, (table, statement)])) > max_chars:
            scripts.append(TypingScript(_script(project, control, prologue, group), [t for t, _ in group]))
            group = []
        group.append((table, statement))
    last = _script(project, control, prologue, group, reads)
    if reads and len(last) > max_chars:
        scripts.append(TypingScript(_script(project, control, prologue, group), [t for t, _ in group]))
        scripts.append(TypingScript(" UNION ALL ".join(f"({read})" for read in reads), []))
    else:
        scripts.append(TypingScript(last, [t for t, _ in group]))
    return scripts


def _script(
    project: str, control: str, prologue: str, statements: Sequence[tuple[str, str]], reads: Sequence[str] = ()
) -> str:
    """The script: the routed lines, the typed staging tables, then their rows per route, reason and dataset,
    the lines staged (as the row of route STAGED_ROUTE), which the landing checks against them, and the rows of
    `reads`."""
    tallied = " UNION ALL ".join(
        f"SELECT _route, _reason, _dataset FROM {quote_path(project, control, table)}" for table, _ in statements
    )
    body = "".join(f"{statement};\n" for _, statement in statements)
    counts = f"SELECT _route, _reason, _dataset, COUNT(*), CAST(NULL AS STRING) FROM ({tallied}) GROUP BY 1, 2, 3"
    staged = f"SELECT {STAGED_ROUTE}, CAST(NULL AS STRING), CAST(NULL AS STRING), COUNT(*), CAST(NULL AS STRING) FROM {ROUTED}"
    answered = "\nUNION ALL ".join(f"({query})" for query in [counts, staged, *reads])
    return f"{prologue}{body}{answered};"
