"""Every default `<table>_current` can write is a constant BigQuery evaluates: for every column type and every
kind of declared default (none, a literal, NULL, MySQL's zero date, CURRENT_TIMESTAMP, a default computed when
a row is written, an expression, a boolean written as a number, a number written as text, a value out of
range), the sink records the default (uniview.sink.default_values, through the description it writes), and
the view and the table of a family with such a column evaluate over rows landed in it, with GoogleSQL's
reference implementation (ZetaSQL), to what DuckDB shows: the default where it is known, else NULL and the
column named in `_cdc_unavailable`."""

from __future__ import annotations

import base64
import json
import re
import shutil
from dataclasses import replace
from datetime import UTC, date, datetime, time
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb
from click.testing import CliRunner
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st
from test_zetasql_load_typing import evaluate

from uniview.cli.main import main
from uniview.core.default_literals import canonical_default
from uniview.core.identifiers import identifier_path, string_literal
from uniview.core.landing_layout import CDC_COLUMNS
from uniview.core.types import BQType, Scalar, parse_type
from uniview.core.version_description import described_defaults, described_not_null
from uniview.current.view import VERSION_COLUMN, current_rules
from uniview.ops.refresh import RefreshRequest, plan_families
from uniview.planning.plan import FamilyPlan, GeneratorOptions, plan_family
from uniview.sink.landing import source_schema_comment
from uniview.sink.routing import LandingColumn, VersionRoute
from uniview.sink.sequence import sequence_of
from uniview.sink.versioning import VOLATILE_DEFAULT
from uniview.warehouse import open_warehouse
from uniview.warehouse.duckdb_types import duckdb_type
from uniview.warehouse.url import duckdb_url

#: Every type a default can be declared for (GEOGRAPHY is left out: the reference implementation has no
#: geography functions; its default is unknown as an ARRAY's is).
TYPES = (
    "STRING",
    "INT64",
    "FLOAT64",
    "NUMERIC",
    "BIGNUMERIC",
    "BOOL",
    "DATE",
    "DATETIME",
    "TIME",
    "TIMESTAMP",
    "JSON",
    "BYTES",
    "ARRAY<STRING>",
)
#: A value of each type as a source declares it.
LITERALS: dict[str, list[Any]] = {
    "STRING": ["open", 'it\'s \\ "quoted"', ""],
    "INT64": [7, "-12", 9223372036854775807, -9223372036854775808],
    "FLOAT64": [1.5, -0.25, 1e300, "2"],
    "NUMERIC": ["12.50", 3, "-99999999999999999999999999999.999999999"],
    "BIGNUMERIC": ["123456789012345678901234567890.123", "0.00000000000000000000000000000000000001"],
    "BOOL": [True, "false"],
    "DATE": ["2024-01-31", "0001-01-01", "9999-12-31"],
    "DATETIME": ["2024-01-31 10:00:00.5", "2024-01-31T23:59:59.999999"],
    "TIME": ["10:00:00", "23:59:59.999999"],
    "TIMESTAMP": ["2024-01-31T10:00:00+02:00", "2024-01-31 10:00:00Z", "1970-01-01 00:00:01"],
    "JSON": [{"a": [1, "x", None]}, '{"b": 1.5}', "[]"],
    "BYTES": ["AP8Q", ""],
    "ARRAY<STRING>": [["x"]],
}
#: Each kind of default -> the declared values drawn for it, whatever the column's type.
KINDS: dict[str, list[Any]] = {
    "none": [],
    "null": [None],
    "zero date": ["0000-00-00 00:00:00", "0000-00-00"],
    "now": ["CURRENT_TIMESTAMP", "current_timestamp()", "now()"],
    "volatile": [VOLATILE_DEFAULT],
    "expression": ["(1+1)", "uuid()", "nextval('t_id_seq'::regclass)", "'x'::text"],
    "boolean as number": [0, 1, 2, -1],
    "number as text": ["5", "-3", "1.5", " 5"],
    "out of range": ["10000-01-01", "9223372036854775808", "1e400", "1" * 40, "0001-01-01 00:00:00-01:00"],
}
#: Kinds whose default is never known in a column of a type other than STRING (which holds any text).
NEVER_KNOWN = ("zero date", "now", "expression")


@st.composite
def declared_columns(draw) -> list[tuple[str, str, Any, bool]]:
    """(type, kind, declared default or the kind's marker, NOT NULL) for a few columns."""
    count = draw(st.integers(min_value=1, max_value=6))
    columns = []
    for _ in range(count):
        bq_type = draw(st.sampled_from(TYPES))
        kind = draw(st.sampled_from([*KINDS, "literal"]))
        values = LITERALS[bq_type] if kind == "literal" else KINDS[kind]
        value = draw(st.sampled_from(values)) if values else None
        columns.append((bq_type, kind, value, draw(st.booleans())))
    return columns


def landing_column(name: str, bq_type: str, kind: str, value: Any, not_null: bool) -> LandingColumn:
    """The column as routing hands it to the landing (SourceColumn.default: JSON text or VOLATILE_DEFAULT)."""
    default = None if kind in ("none", "null") else VOLATILE_DEFAULT if kind == "volatile" else json.dumps(value)
    return LandingColumn(name, bq_type, parse_type(bq_type), default, not not_null)


def land(path: Path, columns: list[LandingColumn]) -> str:
    """Version a (id) and b (id and `columns`, created as the sink creates it), a row of db1 in each; the
    description the sink gave b."""
    identity = LandingColumn("id", "INT64", parse_type("INT64"), None, False)
    routes = [VersionRoute("cdc", "t", "a", (identity,), False, ("id",))]
    routes.append(VersionRoute("cdc", "t", "b", (identity, *columns), False, ("id",)))
    with duckdb.connect(str(path)) as connection:
        connection.execute("SET TimeZone='UTC'")
        connection.execute("CREATE SCHEMA IF NOT EXISTS cdc")
        for number, route in enumerate(routes):
            every = [(c.name, c.bq_type) for c in route.columns] + [(n, parse_type(t)) for n, t in CDC_COLUMNS]
            definitions = ", ".join(f'"{name}" {duckdb_type(bq_type)}' for name, bq_type in every)
            connection.execute(f"CREATE TABLE cdc.{route.table_name} ({definitions})")
            description = source_schema_comment(route).replace("'", "''")
            connection.execute(f"COMMENT ON TABLE cdc.{route.table_name} IS '{description}'")
            position = f"mysql-bin.000001:{1000 + number}"
            connection.execute(
                f"INSERT INTO cdc.{route.table_name} (id, _cdc_operation, _cdc_position, _cdc_database, _cdc_sequence) "
                "VALUES (?, 'INSERT', ?, 'db1', ?)",
                [number + 1, position, sequence_of(position)],
            )
    return source_schema_comment(routes[1])


def duckdb_current(path: Path, mode: str, columns: list[LandingColumn], plan: FamilyPlan) -> list[tuple]:
    """`<table>_current` as DuckDB shows it after `uniview refresh --current MODE`, each value canonical in
    its type in the plan."""
    types = {c.name: c.type for c in plan.columns}
    result = CliRunner().invoke(
        main, ["refresh", "--warehouse", duckdb_url(path), "--dataset", "cdc", "--table", "t", "--current", mode]
    )
    assert result.exit_code == 0, result.output
    names = ", ".join(f'"{c.name}"' for c in columns)
    with duckdb.connect(str(path), read_only=True) as connection:
        connection.execute("SET TimeZone='UTC'")
        rows = connection.execute(f"SELECT id, {names}, _cdc_unavailable FROM cdc_unified.t_current ORDER BY id")
        return [
            (str(row[0]), *(canonical(v, types[c.name]) for v, c in zip(row[1:-1], columns, strict=True)), row[-1])
            for row in rows.fetchall()
        ]


def canonical(value: Any, bq_type: BQType) -> str | None:
    """A value DuckDB returned, or ZetaSQL's text of it, as the canonical text of its type."""
    if value is None or not isinstance(bq_type, Scalar):
        return None if value is None else json.dumps(value)
    if bq_type.name == "JSON":
        return json.dumps(json.loads(value), sort_keys=True)
    if isinstance(value, bool):
        value = "true" if value else "false"
    elif isinstance(value, bytes):
        value = base64.b64encode(value).decode()
    elif isinstance(value, datetime):
        value = value.astimezone(UTC).isoformat(sep=" ") if value.tzinfo else value.isoformat(sep=" ")
    elif isinstance(value, (date, time)):
        value = value.isoformat()
    elif isinstance(value, (int, float, Decimal)):
        value = str(value)
    text = canonical_default(value, bq_type)
    assert text is not None, f"{value!r} is no {bq_type}"
    return text


def zetasql_text(expression: str, bq_type: BQType) -> str:
    """`expression` as STRING in GoogleSQL (BigQuery's own text of each type), NULL when it is NULL."""
    if not isinstance(bq_type, Scalar) or bq_type.name == "JSON":
        return f"IF({expression} IS NULL, NULL, TO_JSON_STRING({expression}))"
    if bq_type.name == "BYTES":
        return f"TO_BASE64({expression})"
    return f"CAST({expression} AS STRING)"


def unified_rows(plan: FamilyPlan, extra: dict[str, tuple[str, list[str]]] | None = None) -> str:
    """The two rows landed, as the unified view reads them (`extra`: more columns, name -> (type, values))."""
    fields = [(c.name, c.type.sql()) for c in plan.columns] + [(VERSION_COLUMN, "STRING")]
    fields += [(name, bq_type) for name, (bq_type, _) in (extra or {}).items()]
    rows = []
    for number, table in enumerate(("t_v_a", "t_v_b")):
        position = f"mysql-bin.000001:{1000 + number}"
        given = {
            "id": str(number + 1),
            "_cdc_operation": "'INSERT'",
            "_cdc_position": string_literal(position),
            "_cdc_database": "'db1'",
            "_cdc_sequence": string_literal(sequence_of(position)),
            VERSION_COLUMN: string_literal(table),
            **{name: values[number] for name, (_, values) in (extra or {}).items()},
        }
        rows.append("(" + ", ".join(given.get(name, "NULL") for name, _ in fields) + ")")
    struct = ", ".join(f"`{name}` {bq_type}" for name, bq_type in fields)
    return f"(SELECT * FROM UNNEST(ARRAY<STRUCT<{struct}>>[{', '.join(rows)}]))"


def zetasql_rows(zetasql, select: str, plan: FamilyPlan, columns: list[LandingColumn]) -> list[tuple]:
    types = {c.name: c.type for c in plan.columns}
    texts = ", ".join(zetasql_text(f"`{c.name}`", types[c.name]) for c in columns)
    sql = f"SELECT CAST(id AS STRING), {texts}, _cdc_unavailable FROM ({select}) ORDER BY id"
    sql = sql.replace("_cdc_unavailable FROM", "ARRAY_TO_STRING(_cdc_unavailable, ',') FROM", 1)
    rows = evaluate(zetasql, sql)
    return [
        (
            row[0],
            *(
                None if text is None else canonical(text, types[c.name])
                for text, c in zip(row[1:-1], columns, strict=True)
            ),
            None if row[-1] is None else row[-1].split(","),
        )
        for row in rows
    ]


def zetasql_view(zetasql, plan: FamilyPlan, columns: list[LandingColumn]) -> list[tuple]:
    """The current view's SQL, evaluated by ZetaSQL over the landed rows."""
    assert plan.current is not None
    unified = identifier_path(plan.target_dataset, plan.top_view.name)
    assert unified in plan.current.body
    return zetasql_rows(zetasql, plan.current.body.replace(unified, unified_rows(plan)), plan, columns)


def zetasql_table(zetasql, plan: FamilyPlan, columns: list[LandingColumn]) -> list[tuple]:
    """The current table's select items (uniview.current.table presents them over its kept facts), evaluated
    by ZetaSQL over the landed rows with those facts: the first row older than the columns, the second not."""
    unified = {c.name: c.type for c in plan.columns}
    rules = current_rules("t", unified, ("id",), plan.versions, VERSION_COLUMN, carried_value=lambda name: name)
    text = " ".join(rules.outputs)
    facts: dict[str, tuple[str, list[str]]] = {
        "_uniview_place": ("INT64", ["1", "2"]),
        "_uniview_newest": ("INT64", ["1", "1"]),
        "_uniview_version": ("INT64", ["0", "1"]),
    }
    for name, _ in rules.gone:
        facts[name] = ("INT64", ["1", "1"])  # the newest place of a version lacking the column: the first row
    for name, column, *_ in rules.carried:
        facts[name] = (unified[column].sql(), ["NULL", "NULL"])
    missing = set(re.findall(r"\b_uniview_\w+", text)) - set(facts)
    assert not missing, f"facts the table keeps that this test does not give: {missing}"
    select = f"SELECT {', '.join(rules.outputs)} FROM {unified_rows(plan, facts)}"
    return zetasql_rows(zetasql, select, plan, columns)


def expected_rows(description: str, declared: list[tuple[str, str, Any, bool]], plan: FamilyPlan) -> list[tuple]:
    """What the source shows: the second row written with the columns (NULL); the first row older than them,
    showing each column's default where the description records a known one (in the column's type in `plan`),
    else NULL, named in `_cdc_unavailable` where the default is not known (recorded as unknown, or NOT NULL
    without one)."""
    recorded = described_defaults(description)
    not_null = set(described_not_null(description))
    types = {c.name: c.type for c in plan.columns}
    older: list[str | None] = []
    unknown = []
    for number, (bq_type, kind, _, _) in enumerate(declared):
        name = f"c{number}"
        text = recorded.get(name)
        known = None if text is None else canonical_default(text, parse_type(bq_type))
        if (name in recorded and known is None) or (name not in recorded and name in not_null):
            unknown.append(name)
        if kind == "volatile" or (kind in NEVER_KNOWN and bq_type != "STRING"):
            assert known is None, f"{kind} default of a {bq_type} column recorded as {text!r}"
        older.append(None if known is None else canonical(known, types[name]))
    return [("1", *older, unknown or None), ("2", *[None] * len(declared), None)]


def bigquery_plan(plan: FamilyPlan, columns: list[LandingColumn]) -> FamilyPlan:
    """The family planned with its columns in the BigQuery types the sink gives them (DuckDB's tables hold a
    BIGNUMERIC as a DOUBLE, which its warehouse reads back as FLOAT64)."""
    types = {c.name: c.bq_type for c in columns}
    versions = [
        replace(v, columns=tuple(replace(c, type=types.get(c.name, c.type)) for c in v.columns)) for v in plan.versions
    ]
    return plan_family("cdc", "cdc_unified", versions, GeneratorOptions(current="view"))


def check_family(
    zetasql, folder: Path, declared: list[tuple[str, str, Any, bool]], modes: tuple[str, ...]
) -> list[tuple]:
    """Land a family with `declared` columns; its view and table agree with the expectation in ZetaSQL (with
    BigQuery's types) and in DuckDB (each `--current` mode of `modes`, on a copy of the warehouse)."""
    columns = [landing_column(f"c{n}", *column) for n, column in enumerate(declared)]
    description = land(folder / "w.duckdb", columns)
    for mode in modes:
        shutil.copy(folder / "w.duckdb", folder / f"{mode}.duckdb")
    [plan] = plan_families(
        open_warehouse(duckdb_url(folder / "w.duckdb")),
        RefreshRequest("cdc", ("t",), options=GeneratorOptions(current="view")),
    )
    bigquery = bigquery_plan(plan, columns)
    assert bigquery.current is not None and "CAST('" not in bigquery.current.body  # no cast of text, anywhere
    expected = expected_rows(description, declared, bigquery)
    assert zetasql_view(zetasql, bigquery, columns) == expected
    assert zetasql_table(zetasql, bigquery, columns) == expected
    expected = expected_rows(description, declared, plan)
    for mode in modes:
        assert duckdb_current(folder / f"{mode}.duckdb", mode, columns, plan) == expected, mode
    return expected


@seed(20261128)
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(declared=declared_columns())
def test_every_default_literal_evaluates_in_zetasql_and_agrees_with_duckdb(zetasql, tmp_path_factory, declared):
    check_family(zetasql, tmp_path_factory.mktemp("defaults"), declared, ("view", "table"))


def test_every_type_with_every_kind_of_default_at_once(zetasql, tmp_path):
    """The whole matrix in one family: each (type, kind, value) is a column of its own."""
    declared = [
        (bq_type, kind, value, kind == "none")
        for bq_type in TYPES
        for kind in [*KINDS, "literal"]
        for value in ((LITERALS[bq_type] if kind == "literal" else KINDS[kind]) or [None])
    ]
    older = check_family(zetasql, tmp_path, declared, ("view",))[0]
    known = [column for column, value in zip(declared, older[1:-1], strict=True) if value is not None]
    assert {bq_type for bq_type, _, _, _ in known} == set(TYPES) - {"ARRAY<STRING>"}
    assert ("BOOL", "boolean as number", 1, False) in known and ("INT64", "number as text", "5", False) in known
    assert ("BOOL", "boolean as number", 2, False) not in known  # a tinyint(1)'s 2 is no BOOL: unknown
    # NOT NULL without a default (the "none" columns here) is unknown too; a NULL default is known: NULL
    assert len(older[-1]) == len(declared) - len(known) - sum(kind == "null" for _, kind, _, _ in declared)
