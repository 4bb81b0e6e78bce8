"""GoogleSQL's own answer over landed rows: ZetaSQL's reference implementation runs a family's views (the BigQuery
SQL uniview plans) over the rows its version tables hold, and the answer is compared with DuckDB's.

    with running_analyzer(folder) as analyzer:
        answers = family_answers(analyzer, plan, rows_of)   # {view: rows}, rows_of(dataset, table) -> rows
        assert answers == duckdb_answers(connection, plan)

The landed rows (Python values, as DuckDB returns them) are typed by ZetaSQL itself, one query per table that
casts their text to the column's type (`typed_table`), and handed to the evaluator as the table's content; each
view of the family is evaluated in creation order, its rows becoming the content of the view the next one reads.
Both answers are compared in one form (`canonical`): NaN as text, times with a zone in UTC, JSON with sorted keys,
a NULL array as an empty one (BigQuery never returns a NULL array).
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import math
import re
import subprocess
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from decimal import Context, Decimal
from pathlib import Path
from typing import Any

import duckdb
from analyzer import Analyzer, Catalog, Stubs, install, type_proto

from uniview.core.ddl_renames import DDL_COLUMN
from uniview.core.identifiers import quote, quote_path
from uniview.core.landing_layout import DATABASE, SEQUENCE
from uniview.core.types import Array, BQType, Scalar, Struct
from uniview.local.processes import free_port, stop_process_group
from uniview.planning.plan import FamilyPlan, ViewDefinition
from uniview.warehouse.duckdb_connection import qualified as duckdb_path

#: Enough digits for any NUMERIC or INT64, which `normalize` would otherwise round to 28.
EXACT = Context(prec=80)


@contextmanager
def running_analyzer(folder: Path) -> Iterator[Analyzer]:
    """ZetaSQL's local service on a free port (installed by scripts/setup-zetasql.sh), stopped when the block ends;
    RuntimeError when it cannot be installed."""
    import grpc

    cache = install()
    port = free_port()
    with open(folder / "zetasql-server.log", "wb") as out:
        server = subprocess.Popen(
            [str(cache / "remote_server.so"), "localhost", str(port)],
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        channel = grpc.insecure_channel(f"localhost:{port}")
        grpc.channel_ready_future(channel).result(timeout=30)
        yield Analyzer(Stubs(cache / "python"), channel)
        channel.close()
    finally:
        stop_process_group(server)


def string_literal(text: str) -> str:
    """A GoogleSQL string literal of `text` (quotes, backslashes and control characters escaped)."""
    escaped = "".join(
        "\\\\"
        if ch == "\\"
        else "\\'"
        if ch == "'"
        else f"\\u{ord(ch):04x}"
        if ord(ch) < 0x20 or ord(ch) == 0x7F
        else ch
        for ch in text
    )
    return f"'{escaped}'"


def as_text(value: Any) -> str | None:
    """A landed value as the text `typing_expression` casts back to its type."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf") if math.isinf(value) else repr(value)
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.UTC).replace(tzinfo=None)
        return value.isoformat(sep=" ")
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, bytes | bytearray | memoryview):
        return base64.b64encode(bytes(value)).decode()
    if isinstance(value, dict):  # a STRUCT: each field's text, which `typing_expression` types by its field's type
        return json.dumps({name: as_text(field) for name, field in value.items()})
    if isinstance(value, list):
        return json.dumps(value, default=str)
    return str(value)


def typing_expression(field: str, bq_type: BQType) -> str:
    """GoogleSQL that turns the text `field` into a value of `bq_type`."""
    if isinstance(bq_type, Array):
        element = typing_expression("e", bq_type.element)
        return f"ARRAY(SELECT {element} FROM UNNEST(JSON_VALUE_ARRAY({field})) AS e WITH OFFSET o ORDER BY o)"
    if isinstance(bq_type, Struct):
        fields = ", ".join(
            f"{typing_expression(f'JSON_VALUE({field}, {field_path(f.name)})', f.type)} AS {quote(f.name)}"
            for f in bq_type.fields
        )
        return f"IF({field} IS NULL, NULL, STRUCT({fields}))"
    if not isinstance(bq_type, Scalar):
        raise NotImplementedError(f"landed {bq_type} values are not typed here")
    if bq_type.name == "BYTES":
        return f"FROM_BASE64({field})"
    if bq_type.name == "JSON":
        return f"PARSE_JSON({field}, wide_number_mode => 'round')"
    if bq_type.name == "TIMESTAMP":
        return f"TIMESTAMP({field}, 'UTC')"
    return f"CAST({field} AS {bq_type.base().sql()})"


def field_path(name: str) -> str:
    """The JSONPath literal of an object's member `name` (quoted: any name)."""
    return string_literal("$." + json.dumps(name))


def rows_literal(columns: int, rows: Sequence[Sequence[Any]]) -> str:
    struct = f"STRUCT<{', '.join(f'v{i} STRING' for i in range(columns))}>"
    cells = [
        "(" + ", ".join("NULL" if text is None else string_literal(text) for text in map(as_text, row)) + ")"
        for row in rows
    ]
    return f"ARRAY<{struct}>[{', '.join(cells)}]"


def flat_name(qualified: str) -> str:
    """The top-level name a `dataset.table` is evaluated under: the service sets the content of top-level tables
    only (it finds each by its name alone)."""
    return qualified.replace(".", "__")


def flattened(sql: str, qualified_names: Sequence[str]) -> str:
    """`sql` reading each `dataset.table` of `qualified_names` (plain, in backticks, or the table alone in backticks)
    by its flat name."""
    for qualified in sorted(qualified_names, key=len, reverse=True):
        dataset, table = map(re.escape, qualified.split(".", 1))
        pattern = (
            rf"`{dataset}`\.`{table}`|`{dataset}\.{table}`|(?<![\w.`]){dataset}\.`{table}`"
            rf"|(?<![\w.`]){dataset}\.{table}(?![\w`])"
        )
        flat = quote_path(flat_name(qualified))
        sql = re.sub(pattern, lambda _, flat=flat: flat, sql)
    return sql


def evaluate_table(analyzer: Analyzer, sql: str, catalog: Catalog, contents: dict[str, Any]):
    """The TableData (rows of ValueProtos) ZetaSQL's reference implementation answers `sql` with, over the tables
    of `catalog` holding `contents` ({"dataset.table": TableData})."""
    stubs = analyzer.stubs
    flat = Catalog({"": {}})
    for dataset, tables in catalog.datasets.items():
        for table, columns in tables.items():
            flat.datasets[""][flat_name(f"{dataset}.{table}")] = columns
    root = analyzer._catalog_proto(Catalog())
    for table, columns in flat.datasets[""].items():
        proto = root.table.add(name=table, full_name=table)
        for name, bq_type in columns:
            proto.column.add(name=name, type=type_proto(stubs, bq_type))
    options = stubs.options.AnalyzerOptionsProto(language_options=analyzer.language, default_timezone="UTC")
    request = stubs.service.EvaluateQueryRequest(
        sql=flattened(sql, list(contents)), options=options, simple_catalog=root
    )
    for name, table_data in contents.items():
        request.table_content[flat_name(name)].table_data.CopyFrom(table_data)
    analyzer.statements += 1
    return analyzer.client.EvaluateQuery(request).content.table_data


def typed_table(analyzer: Analyzer, columns: Sequence[tuple[str, BQType]], rows: Sequence[Sequence[Any]]):
    """`rows` as a table of `columns` in ZetaSQL's values (TableData), typed by ZetaSQL from their text."""
    selected = ", ".join(
        f"{typing_expression(f'v{i}', bq_type)} AS {quote(name)}" for i, (name, bq_type) in enumerate(columns)
    )
    sql = f"SELECT {selected} FROM UNNEST({rows_literal(len(columns), rows)})"
    return evaluate_table(analyzer, sql, Catalog(), {})


def text_expression(column: str, bq_type: BQType) -> str:
    """GoogleSQL giving a value of `bq_type` as the text `from_text` reads."""
    name = bq_type.name if isinstance(bq_type, Scalar) else ""
    if not isinstance(bq_type, Scalar) or name == "JSON":
        return f"TO_JSON_STRING({column})"
    formats = {
        "BYTES": f"TO_BASE64({column})",
        "DATETIME": f"FORMAT_DATETIME('%Y-%m-%d %H:%M:%E6S', {column})",
        "TIMESTAMP": f"FORMAT_TIMESTAMP('%Y-%m-%d %H:%M:%E6S', {column}, 'UTC')",
        "TIME": f"FORMAT_TIME('%H:%M:%E6S', {column})",
    }
    return formats.get(name, f"CAST({column} AS STRING)")


def from_text(text: str | None, bq_type: BQType) -> Any:
    """The canonical value of `text_expression`'s text."""
    if text is None:
        return None
    if not isinstance(bq_type, Scalar) or bq_type.name == "JSON":
        return canonical(json.loads(text), bq_type)
    readers: dict[str, Callable[[str], Any]] = {
        "INT64": int,
        "FLOAT64": float,
        "NUMERIC": Decimal,
        "BIGNUMERIC": Decimal,
        "BOOL": lambda t: t == "true",
        "BYTES": base64.b64decode,
        "DATE": dt.date.fromisoformat,
        "DATETIME": dt.datetime.fromisoformat,
        "TIMESTAMP": dt.datetime.fromisoformat,
        "TIME": dt.time.fromisoformat,
    }
    if bq_type.name in ("DATE", "DATETIME", "TIMESTAMP"):  # ZetaSQL writes the year 1 as `1-01-01`, unpadded
        text = re.sub(r"^[0-9]{1,3}-", lambda year: year.group(0).zfill(5), text)
    return canonical(readers.get(bq_type.name, str)(text), bq_type)


def canonical(value: Any, bq_type: BQType) -> Any:
    """One form for ZetaSQL's and DuckDB's values of `bq_type`."""
    if isinstance(bq_type, Array):  # BigQuery returns a NULL array as an empty one; DuckDB keeps NULL
        return tuple(canonical(element, bq_type.element) for element in value or ())
    if value is None:
        return None
    if isinstance(bq_type, Struct):  # ZetaSQL's as TO_JSON_STRING writes it (BYTES in base64), DuckDB's a dict
        fields = json.loads(value) if isinstance(value, str) else value
        return tuple(canonical(fields.get(f.name), f.type) for f in bq_type.fields)
    name = bq_type.name if isinstance(bq_type, Scalar) else ""
    if name == "BYTES" and isinstance(value, str):
        return base64.b64decode(value)
    if name == "JSON" or not isinstance(bq_type, Scalar):
        return json.dumps(json.loads(value) if isinstance(value, str) else value, sort_keys=True, default=str)
    if name == "FLOAT64":
        return "nan" if math.isnan(value) else float(value)
    if name == "BIGNUMERIC":  # DuckDB holds an unparameterized BIGNUMERIC as DOUBLE (docs/duckdb.md)
        return float(value)
    if name in {"NUMERIC", "INT64"}:
        return Decimal(str(value)).normalize(EXACT)  # 0.0 and 0, 1.50 and 1.5 alike (and sorted alike)
    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        return value.astimezone(dt.UTC).replace(tzinfo=None)
    if isinstance(value, bytearray | memoryview):
        return bytes(value)
    return value


Answer = tuple[list[tuple[str, BQType]], list[tuple]]


def view_answer(analyzer: Analyzer, view: ViewDefinition, catalog: Catalog, contents: dict[str, Any]) -> Answer:
    """Evaluate `view` over `contents`: its columns and rows (canonical, sorted); its rows become the view's
    content, for the views that read it."""
    analysis = analyzer.analyze(view.body, catalog)
    assert analysis.error is None, f"{view.qualified_name} rejected by ZetaSQL: {analysis.error}"
    contents[view.qualified_name] = evaluate_table(analyzer, view.body, catalog, contents)
    catalog.add_table(view.dataset, view.name, analysis.columns)
    texts = ", ".join(f"{text_expression(f'`{name}`', bq_type)}" for name, bq_type in analysis.columns)
    answer = evaluate_table(analyzer, f"SELECT {texts} FROM {quote_path(view.dataset, view.name)}", catalog, contents)
    rows = [
        tuple(
            from_text(cell.string_value if cell.WhichOneof("value") else None, bq_type)
            for cell, (_, bq_type) in zip(row.cell, analysis.columns, strict=True)
        )
        for row in answer.row
    ]
    return analysis.columns, sorted(rows, key=repr)


#: The columns of the control table `_uniview_ddl` a renamed table's views read (uniview.planning.segments).
CONTROL_COLUMNS = (DATABASE, SEQUENCE, DDL_COLUMN)


def control_tables(plan: FamilyPlan) -> list[str]:
    """The versions of the control table `_uniview_ddl` whose table renames choose the family's changes."""
    return sorted({table for v in plan.versions if v.segment is not None for table in v.segment.ddl_tables})


def family_answers(
    analyzer: Analyzer, plan: FamilyPlan, rows_of: Callable[[str, str], Sequence[Sequence[Any]]]
) -> dict[str, Answer]:
    """{view: (its columns, its rows)} for every view of `plan` (unified parts, top view, `<table>_current` view), evaluated by
    ZetaSQL's reference implementation over `rows_of(dataset, version table)` (in each version's column order), and
    over `rows_of(dataset, control table)` (CONTROL_COLUMNS) for a family a table rename read from the DDL chooses."""
    catalog = Catalog()
    contents: dict[str, Any] = {}
    inputs = {v.table_name: [(c.stored or c.name, c.type.base()) for c in v.columns] for v in plan.versions}
    inputs |= {table: [(name, Scalar("STRING")) for name in CONTROL_COLUMNS] for table in control_tables(plan)}
    for table_name, columns in inputs.items():
        catalog.add_table(plan.source_dataset, table_name, columns)
        rows = rows_of(plan.source_dataset, table_name)
        contents[f"{plan.source_dataset}.{table_name}"] = typed_table(analyzer, columns, rows)
    return {view.qualified_name: view_answer(analyzer, view, catalog, contents) for view in plan.all_views}


def duckdb_answers(read: Callable[[str], Sequence[Sequence[Any]]], answers: dict[str, Answer]) -> dict[str, Answer]:
    """The same views as DuckDB answers them (`read(sql)` on the warehouse holding them), in the same form: the
    columns ZetaSQL gave each view, read by name from DuckDB's view of the same name."""
    found = {}
    for view, (columns, _) in answers.items():
        names = ", ".join(f'"{name}"' for name, _ in columns)
        rows = [
            tuple(canonical(value, bq_type) for value, (_, bq_type) in zip(row, columns, strict=True))
            for row in read(f"SELECT {names} FROM {duckdb_path(*view.split('.', 1))}")
        ]
        found[view] = (columns, sorted(rows, key=repr))
    return found


def read_only(path: Path, attempts: int = 100) -> duckdb.DuckDBPyConnection:
    """A read-only connection to a DuckDB file other processes write (retried while one holds its lock)."""
    for _ in range(attempts - 1):
        try:
            return duckdb.connect(str(path), read_only=True)
        except duckdb.Error:
            time.sleep(0.2)
    return duckdb.connect(str(path), read_only=True)


def duckdb_family_differences(analyzer: Analyzer, path: Path, dataset: str, table: str, options: Any) -> list:
    """Plan the family `table` of `dataset` in the DuckDB warehouse at `path` (with `<table>_current` as a view),
    evaluate its BigQuery views with ZetaSQL over the rows its version tables hold, and compare every view with
    DuckDB's of the same name (`<table>_current` may be DuckDB's table); per view that differs, its columns and
    the rows (at most 5) only ZetaSQL's answer holds and those only DuckDB's holds."""
    from uniview.ops.refresh import RefreshRequest, plan_families
    from uniview.warehouse.duckdb import DuckDBWarehouse

    warehouse = DuckDBWarehouse(path)
    try:
        as_views = replace(options, current="view") if options.keeps_current else options
        plans = plan_families(warehouse, RefreshRequest(dataset, (table,), options=as_views))
        (plan,) = [plan for plan in plans if plan.family == table]  # a renamed table's lineage plans the others too
    finally:
        warehouse.close()
    with read_only(path) as connection:
        connection.execute("SET TimeZone = 'UTC'")
        tables = {
            version.table_name: connection.execute(
                f"SELECT * FROM {duckdb_path(dataset, version.table_name)}"
            ).fetchall()
            for version in plan.versions
        }
        listed = ", ".join(CONTROL_COLUMNS)
        for table in control_tables(plan):
            tables[table] = connection.execute(f"SELECT {listed} FROM {duckdb_path(dataset, table)}").fetchall()
    answers = family_answers(analyzer, plan, lambda _, name: tables[name])
    with read_only(path) as connection:
        connection.execute("SET TimeZone = 'UTC'")
        found = duckdb_answers(lambda sql: connection.execute(sql).fetchall(), answers)
    return [
        (
            view,
            [name for name, _ in answers[view][0]],
            [row for row in answers[view][1] if row not in found[view][1]][:5],  # rows only ZetaSQL gives
            [row for row in found[view][1] if row not in answers[view][1]][:5],  # rows only DuckDB gives
        )
        for view in answers
        if answers[view] != found[view]
    ]
