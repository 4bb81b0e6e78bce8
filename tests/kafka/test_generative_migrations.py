"""Migrations and writes drawn by Hypothesis, applied to a live MariaDB and a live PostgreSQL at once, streamed by
Debezium through Kafka to one `uniview sink --stream` per warehouse (DuckDB, and the BigQuery emulator with the
real connector), the function (functions-framework over HTTP) refreshing the views after each batch.

A `RuleBasedStateMachine` draws each step from the same choices for both databases (tests/kafka/
generative_support.py): ADD COLUMN of every type with every kind of default (MariaDB's FIRST or AFTER too), under a
drawn name (non-ASCII, mixed case, a keyword, a space: every statement quotes it), DROP, DROP + ADD, RENAME (read
from the DDL for MariaDB, declared in the renames document for both), a type change, TRUNCATE, the table renamed
(MariaDB's RENAME TABLE, PostgreSQL's declared), MariaDB's online schema changes (gh-ost's and
pt-online-schema-change's shadow table, copy and swap), writes of values at the edges of each type, a primary-key
UPDATE, a TOASTed value left unchanged by an UPDATE; PostgreSQL's table is drawn plain or partitioned.  A statement a
database refuses is a no-op step of that database.  After every step, per warehouse and source database,
`<table>_current` must equal `SELECT *` on the source table, every column, and `<table>_unified` must hold each
change once.  DuckDB's `<table>_current` is a view and BigQuery's a table on even seeds, the other way round on
odd ones.  Each example works on a new table; a failure is shrunk to the fewest steps and printed as SQL.

Every example starts with one migration of each family (`migration_families`: ADD COLUMN written by a plain write
and INSERTs at the edges of its type, a type change, a DROP), drawn from lists in an order of the seed's (`seeded`), so even
Hypothesis's simplest example, the suite's only one, draws real migrations.  The same draws also reach the sink as
uniview's own envelope (tests/kafka/envelope_support.py): a record per MariaDB row changed, landed by `uniview sink
--format uniview` into a DuckDB warehouse of its own, whose `<table>_current` must equal MariaDB's table too.

UNIVIEW_GEN_SEED (default 0), UNIVIEW_GEN_EXAMPLES (default 1) and UNIVIEW_GEN_STEPS (default 1) choose the run;
scripts/soak-migrations.sh runs many seeds.  Rules of open defects run only when UNIVIEW_GEN_OPEN_DEFECTS names
them (see OPEN_DEFECTS).
"""

from __future__ import annotations

import base64
import json
import os
import random
import re
import struct
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, field
from decimal import Decimal
from types import SimpleNamespace

import duckdb
import pytest
from cdc_e2e_support import (
    RECOMPARE_SECONDS,
    CdcSource,
    CdcStack,
    OutsideBigQuery,
    SinksPause,
    as_shown,
    bigquery_landing,
    carry_quarantine,
    connectors_added,
    datasets_dropped_after,
    duckdb_landing,
    emulator_rounded,
    function_environments,
    landing_mismatches,
    streaming_sinks,
    unknown_accepted,
    wait_for_events,
    wait_for_log,
    wait_until_sinks_caught_up,
    wait_until_views_match_sources,
)
from envelope_support import EnvelopeLog, EnvelopeSink, SourceColumn, bits_as_numbers
from generative_support import (
    ADDED_ENUM_VALUE,
    CONVERTED_DEFAULTS,
    CONVERTED_MARK,
    DIALECTS,
    ENUM_LIST,
    GENERATIVE_POSTGRES_TYPES,
    MARIADB,
    POSTGRES,
    TYPE_CHANGES,
    TYPES,
    TYPES_BY_NAME,
    Change,
    Quoting,
    SourceType,
    as_script,
    cast_to,
    comparable_rows,
    each,
    literal,
    open_defects_enabled,
    quoted,
    read_interval_as_microseconds,
    read_money_as_decimal,
    read_point_as_wkt,
    read_values_past_python,
)

pymysql = pytest.importorskip("pymysql", reason="PyMySQL is not installed")
psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed")
pytest.importorskip("kafka", reason="kafka-python is not installed")
hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, Phase, note, seed, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.stateful import RuleBasedStateMachine, initialize, precondition, rule, run_state_machine_as_test  # noqa: E402

pytestmark = pytest.mark.timeout(3600)

SEED = int(os.environ.get("UNIVIEW_GEN_SEED", "0"))
#: Hypothesis's first examples are its simplest (the first: a few TRUNCATEs; the second: no step); the rules are
#: drawn in earnest from about the third on, which the soak (scripts/soak-migrations.sh) reaches.
EXAMPLES = int(os.environ.get("UNIVIEW_GEN_EXAMPLES", "1"))
STEPS = int(os.environ.get("UNIVIEW_GEN_STEPS", "1"))
#: The source databases: MariaDB's and PostgreSQL's, named apart so that their datasets are apart.
DATABASE = {MARIADB: "genmy", POSTGRES: "genpg"}
PREFIX = {MARIADB: "genmaria", POSTGRES: "genpg"}
#: Rules of defects still open: off unless UNIVIEW_GEN_OPEN_DEFECTS names them.
OPEN_DEFECTS: dict[str, str] = {}
#: The kinds of default whose value in rows older than the column uniview cannot know, per source
#: (docs/sink.md#declared-defaults): those rows show NULL, the column named in their `_cdc_unavailable`.
#: PostgreSQL's "zero date" is 0001-01-01, a date like any other.
UNKNOWN_DEFAULTS = {MARIADB: {"zero_date", "now", "expression"}, POSTGRES: {"now", "expression"}}
#: Kinds of default Debezium's connectors leave out of the schema they send (MySQL's connector ignores an
#: expression, PostgreSQL's cannot read one): the stream tells such a column from one without a default in no
#: way, so the live path shows NULL in the older rows without naming the column (docs/current-state.md).
DROPPED_BY_CONNECTORS = {"expression"}
#: (source, type, kind of default) that Debezium's connector sends another default for: PostgreSQL stores
#: `boolean DEFAULT 1::boolean` as `(1)::boolean`, which the PostgreSQL connector reads with Java's
#: Boolean.parseBoolean, so the stream declares `false` (pinned by tests/kafka/test_debezium_connector_behaviour.py;
#: docs/sources.md).  Rows older than such a column show what the stream declared, whatever the source holds.
MISREAD_BY_CONNECTORS = {(POSTGRES, "boolean", "number")}
#: (source, type) or (source, type, kind of default) whose DEFAULT the connector does not declare at all:
#: PostgreSQL's unconstrained numeric, and a numeric(p,s) default with more fractional digits than s (pinned by
#: tests/kafka/test_debezium_connector_behaviour.py; docs/sources.md); MySQL's connector, MariaDB's
#: `timestamp(6) NULL DEFAULT CURRENT_TIMESTAMP(6)` (seed 9138; docs/sources.md); PostgreSQL's connector, a money
#: column's (the `year` type's counterpart; seed 9314, read from the change event's schema; docs/sources.md), and an
#: inet column's (the `set` type's counterpart; seed 9810; pinned by tests/kafka/test_debezium_connector_behaviour.py), and
#: a DOMAIN column's (`natural_number`, the unsigned types' counterpart; seed 9812; pinned there too).  Rows
#: older than such a column show NULL, as for a column without a default.  So do those older than a PostgreSQL
#: column of a non-ASCII name: the connector looks the default up by the name the stream mangles and finds none
#: (seed 9610; pinned by tests/kafka/test_debezium_connector_behaviour.py; docs/sources.md).
UNDECLARED_DEFAULTS = {
    (POSTGRES, "free_numeric"),
    (POSTGRES, "decimal", "rounded"),
    (MARIADB, "timestamp", "now"),
    (POSTGRES, "year"),
    (POSTGRES, "set"),
    (POSTGRES, "usmallint"),
}
#: (source, type) whose DEFAULT the connector never declares, which the sink knows: PostgreSQL's arrays (the `bit`
#: type's counterpart, `integer[]`; seed 9703; pinned by tests/kafka/test_debezium_connector_behaviour.py).  Rows
#: older than such a column, with a default or without, show NULL and name it (docs/sources.md).
NEVER_DECLARED = {(POSTGRES, "bit")}
#: MySQL's types whose values pymysql reads as text when they are no date (the zero date `0000-00-00`).
FIELD_TYPE = pymysql.constants.FIELD_TYPE
ZERO_DATES = {FIELD_TYPE.DATE, FIELD_TYPE.NEWDATE, FIELD_TYPE.DATETIME, FIELD_TYPE.TIMESTAMP}
#: The type changes drawn: those of open defects only when they are named.  The other changes that convert the
#: values older rows hold (datetime -> date, double or decimal(38,10) -> decimal(12,2), real -> double) are drawn:
#: `<table>_current` converts them as the source did (docs/current-state.md#type-changes-that-convert-older-rows).
OPEN_TYPE_CHANGES: dict[tuple[str, str], str] = {}
DRAWN_TYPE_CHANGES = tuple(
    change
    for change in TYPE_CHANGES
    if change not in OPEN_TYPE_CHANGES or open_defects_enabled(OPEN_TYPE_CHANGES[change])
)
#: The types ADD COLUMN draws (its migration family's aside): every type, or those UNIVIEW_GEN_TYPES lists
#: (comma-separated; a soak aimed at some types: scripts/soak-migrations.sh --types).
ADDED_TYPES = [t.name for t in TYPES if t.name in (os.environ.get("UNIVIEW_GEN_TYPES") or t.name).split(",")]
#: Whether the run is aimed at some types: each example then also adds a column of each of them first (`aimed_columns`).
AIMED = bool(os.environ.get("UNIVIEW_GEN_TYPES"))
#: Seconds a step may take to reach both warehouses' views before it fails.
WAIT = float(os.environ.get("UNIVIEW_GEN_WAIT", "180"))
BIG = 3000  # characters of a value PostgreSQL keeps out of line (TOAST)


@dataclass
class Sources:
    """Both servers; `apply` runs one dialect's statements, each refused one a no-op, and says how many rows
    the accepted ones touched."""

    mariadb: object
    postgres: object
    refused: list[str] = field(default_factory=list)

    def run(self, dialect: str, statement: str) -> int:
        if dialect == MARIADB:
            with (
                pymysql.connect(
                    unix_socket=str(self.mariadb.socket), user="root", database=DATABASE[MARIADB], autocommit=True
                ) as connection,
                connection.cursor() as cursor,
            ):
                return max(cursor.execute(statement), 0)
        with psycopg.connect(self.postgres.dsn(DATABASE[POSTGRES]), autocommit=True) as connection:
            return max(connection.execute(statement).rowcount, 0)

    def apply(self, dialect: str, statements: list[str]) -> int | None:
        """Rows touched by `statements`, or None when the database refused one (the rest is not run)."""
        touched = 0
        for statement in statements:
            try:
                touched += self.run(dialect, statement)
            except (pymysql.Error, psycopg.Error) as error:
                self.refused.append(f"{dialect}: {statement[:200]} -> {str(error).splitlines()[0][:200]}")
                note(f"refused by {dialect}: {statement[:200]}: {str(error).splitlines()[0][:200]}")
                return None
        return touched

    def rows(self, database: str, table: str) -> list[tuple]:
        dialect = MARIADB if database == DATABASE[MARIADB] else POSTGRES
        if dialect == MARIADB:
            connection = pymysql.connect(unix_socket=str(self.mariadb.socket), user="root", database=database)
            with connection, connection.cursor() as cursor:
                return mariadb_rows(cursor, database, table, " ORDER BY id")
        with psycopg.connect(self.postgres.dsn(database)) as connection:
            read_values_past_python(connection)
            read_money_as_decimal(connection)
            read_interval_as_microseconds(connection)
            read_point_as_wkt(connection)
            cursor = connection.execute(f"SELECT * FROM {quoted(table, POSTGRES)} ORDER BY id")
            return float32_exact(cursor.description, cursor.fetchall())

    def image(self, table: str) -> dict[int, dict]:
        """MariaDB's rows of `table` by key, each as {column: value}: the row images a binlog reader writes."""
        connection = pymysql.connect(unix_socket=str(self.mariadb.socket), user="root", database=DATABASE[MARIADB])
        with connection, connection.cursor() as cursor:
            rows = mariadb_rows(cursor, DATABASE[MARIADB], table)
            names = [column[0] for column in cursor.description]
            return {row[0]: dict(zip(names, row, strict=True)) for row in rows}

    def declared(self, table: str) -> list[SourceColumn]:
        """MariaDB's declared schema of `table`, as information_schema.columns shows it; a generated column's
        expression as its default (the source computes it when a row is written: `default_volatile`)."""
        query = (
            "SELECT column_name, column_type, IF(is_generated = 'ALWAYS', generation_expression, column_default), "
            "is_nullable FROM information_schema.columns "
            "WHERE table_schema = %s AND table_name = %s ORDER BY ordinal_position"
        )
        connection = pymysql.connect(unix_socket=str(self.mariadb.socket), user="root")
        with connection, connection.cursor() as cursor:
            cursor.execute(query, [DATABASE[MARIADB], table])
            columns = key_first(cursor.fetchall())
            return [SourceColumn(name, kind, default, null == "YES") for name, kind, default, null in columns]

    def columns(self, database: str, table: str) -> list[str]:
        query = (
            "SELECT column_name FROM information_schema.columns WHERE table_schema = %s AND table_name = %s "
            "ORDER BY ordinal_position"
        )
        if database == DATABASE[MARIADB]:
            connection = pymysql.connect(unix_socket=str(self.mariadb.socket), user="root")
            with connection, connection.cursor() as cursor:
                cursor.execute(query, [database, table])
                return [row[0] for row in key_first(cursor.fetchall())]
        with psycopg.connect(self.postgres.dsn(database)) as connection:
            return [row[0] for row in connection.execute(query, ["public", table]).fetchall()]

    def copied_columns(self, table: str) -> list[str]:
        """MariaDB's columns of `table` an online migration copies (every one but the generated ones), quoted."""
        query = (
            "SELECT column_name FROM information_schema.columns WHERE table_schema = %s AND table_name = %s "
            "AND is_generated = 'NEVER' ORDER BY ordinal_position"
        )
        connection = pymysql.connect(unix_socket=str(self.mariadb.socket), user="root")
        with connection, connection.cursor() as cursor:
            cursor.execute(query, [DATABASE[MARIADB], table])
            return [quoted(name, MARIADB) for (name,) in cursor.fetchall()]


def copy_triggers(table: str, shadow: str, copied: Sequence[str]) -> dict[str, str]:
    """pt-online-schema-change's triggers, by name: each write to MariaDB's `table` written to `shadow` too."""
    q = Quoting(MARIADB)
    replace = f"REPLACE INTO {q(shadow)} ({', '.join(copied)}) VALUES ({', '.join('NEW.' + c for c in copied)})"
    names = {kind: f"{shadow}_{kind}" for kind in ("ins", "upd", "del")}
    return {
        names["ins"]: f"CREATE TRIGGER {q(names['ins'])} AFTER INSERT ON {q(table)} FOR EACH ROW {replace}",
        names["upd"]: f"CREATE TRIGGER {q(names['upd'])} AFTER UPDATE ON {q(table)} FOR EACH ROW {replace}",
        names["del"]: f"CREATE TRIGGER {q(names['del'])} AFTER DELETE ON {q(table)} FOR EACH ROW "
        f"DELETE IGNORE FROM {q(shadow)} WHERE id = OLD.id",
    }


def key_first(columns: list[tuple]) -> list[tuple]:
    """`columns` (rows of information_schema.columns, the name first) with the key `id` first: the comparison reads
    a row's key from its first column, and `ADD COLUMN ... FIRST` puts another column before it."""
    return sorted(columns, key=lambda column: column[0] != "id")


def mariadb_rows(cursor, database: str, table: str, order: str = "") -> list[tuple]:
    """MariaDB's rows of `table` through `cursor`, each POINT as its WKT, each FLOAT read as a DOUBLE, the float's exact value: the text
    protocol writes a FLOAT with 6 significant digits (1.17549e-38 for the float 1.1754943508222875e-38, which a
    binlog reader and Debezium send whole); zero dates as NULL (`no_zero_dates`); a `boolean` (`tinyint(1)`) as
    both paths land it (`as_boolean`)."""
    cursor.execute(
        "SELECT column_name, data_type, column_type FROM information_schema.columns "
        "WHERE table_schema = %s AND table_name = %s ORDER BY ordinal_position",
        [database, table],
    )
    columns = key_first(cursor.fetchall())
    read_as = {"float": "CAST(`{0}` AS DOUBLE) AS `{0}`", "point": "ST_AsText(`{0}`) AS `{0}`"}
    items = [read_as.get(kind, "`{0}`").format(name) for name, kind, _ in columns]
    booleans = [declared.lower() == "tinyint(1)" for _, _, declared in columns]
    cursor.execute(f"SELECT {', '.join(items)} FROM {quoted(table, MARIADB)}{order}")
    rows = float32_exact(cursor.description, [no_zero_dates(row, cursor.description) for row in cursor.fetchall()])
    return [tuple(as_boolean(v) if boolean else v for v, boolean in zip(row, booleans, strict=True)) for row in rows]


def as_boolean(value: int | None) -> bool | OutsideBigQuery | None:
    """A MariaDB `boolean` (`tinyint(1)`) value as both paths land it: 0 FALSE, 1 TRUE; any other number is not
    compared (an OutsideBigQuery): the envelope path quarantines it (docs/sink.md#values-outside-bigquerys-domains),
    and Debezium's MySQL connector, which sends a column declared `boolean` in a DDL statement as a boolean, sends
    it as TRUE (docs/sources.md): a value lost before uniview."""
    if value is None:
        return None
    return value == 1 if value in (0, 1) else OutsideBigQuery(value)


def no_zero_dates(row: tuple, description) -> tuple:
    """A MariaDB row with each zero date (`0000-00-00`, which a date column that may be NULL holds when a default
    or a write gives it) as NULL: no DATE or DATETIME of BigQuery holds it, Debezium's MySQL connector sends NULL
    for it, and so does the envelope path's binlog reader."""
    return tuple(
        None if isinstance(value, str) and column[1] in ZERO_DATES and value.startswith("0000-00-00") else value
        for value, column in zip(row, description, strict=True)
    )


#: The type codes of a 32-bit float column in a cursor's description: MariaDB's FLOAT, PostgreSQL's real (float4).
FLOAT32_TYPE_CODES = (pymysql.constants.FIELD_TYPE.FLOAT, 700)


def float32_exact(description, rows) -> list[tuple]:
    """`rows` with each 32-bit float column's value as the float's exact value: the driver reads the server's
    shortest decimal of it (3.4e38), the sink lands the float itself (3.3999999521443642e38, what the source shows
    once the column is widened to double; docs/sink.md#debezium), and a binlog reader gets the float's 4 bytes."""
    floats = [column[1] in FLOAT32_TYPE_CODES for column in description]
    return [
        tuple(
            struct.unpack("<f", struct.pack("<f", value))[0] if is_float and isinstance(value, float) else value
            for value, is_float in zip(row, floats, strict=True)
        )
        for row in rows
    ]


@pytest.fixture(scope="module")
def sources(mariadb, postgres_server):
    with pymysql.connect(unix_socket=str(mariadb.socket), user="root", autocommit=True) as connection:
        connection.cursor().execute(f"CREATE DATABASE {DATABASE[MARIADB]}")
    with psycopg.connect(postgres_server.dsn(), autocommit=True) as connection:
        connection.execute(f"CREATE DATABASE {DATABASE[POSTGRES]}")
    with psycopg.connect(postgres_server.dsn(DATABASE[POSTGRES]), autocommit=True) as connection:
        for statement in GENERATIVE_POSTGRES_TYPES:
            connection.execute(statement)
    return Sources(mariadb, postgres_server)


def connectors(sources: Sources, bootstrap: str) -> list[dict]:
    from uniview.local.kafka import mysql_connector
    from uniview.local.postgres_publication import captured_connector

    server = sources.mariadb
    return [
        mysql_connector(
            PREFIX[MARIADB],
            server.host,
            server.port,
            (DATABASE[MARIADB],),
            server.connector_user,
            server.connector_password,
            bootstrap,
            server_id=5402,
        ),
        captured_connector(sources.postgres, PREFIX[POSTGRES], DATABASE[POSTGRES]),
    ]


def current_modes() -> tuple[str, str]:
    """UNIVIEW_CURRENT of DuckDB's function and of BigQuery's: a view and a table, swapped on odd seeds; both the
    mode UNIVIEW_GEN_CURRENT names (`view` or `table`: a soak of the one mode, scripts/soak-migrations.sh --current)."""
    only = os.environ.get("UNIVIEW_GEN_CURRENT", "")
    if only:
        assert only in ("view", "table"), f"UNIVIEW_GEN_CURRENT={only!r}: view or table"
        return (only, only)
    return ("view", "table") if SEED % 2 == 0 else ("table", "view")


class Functions:
    """One function per warehouse, restarted on its port with a new renames document when a rename is drawn."""

    def __init__(self, stack: CdcStack, environments: list[dict[str, str]]) -> None:
        self.stack, self.environments = stack, environments
        self.running = [ExitStack() for _ in environments]
        self.ports = [0 for _ in environments]
        self.renames: list[dict[str, str]] = []

    def start(self) -> None:
        from uniview.local.function_server import function_server
        from uniview.local.processes import free_port

        document = json.dumps({"uniview_renames": 1, "renames": self.renames}) if self.renames else ""
        for place, (landing, environment) in enumerate(zip(self.stack.landings, self.environments, strict=True)):
            self.running[place].close()
            self.ports[place] = self.ports[place] or free_port()
            folder = self.stack.work / f"{landing.name}-{len(self.renames)}"
            folder.mkdir(exist_ok=True)
            renames = {"UNIVIEW_RENAMES": document} if document else {}
            server = function_server(folder, {**environment, **renames}, port=self.ports[place])
            landing.notify = self.running[place].enter_context(server).url

    def declare(self, table: str, old: str, new: str) -> None:
        self.renames.append({"table": table, "from": old, "to": new})
        self.start()

    def declare_table(self, old: str, new: str) -> None:
        """Table `old` renamed to `new`: the column renames declared for it are declared under its new name
        (docs/current-state.md#a-declared-table-rename-postgresql), then the table rename."""
        for rename in self.renames:
            if rename["table"] == old and "from" in rename:
                rename["table"] = new
        self.renames.append({"table": old, "to": new})
        self.start()

    def options(self, landing: str):
        """The GeneratorOptions the function of `landing` plans with."""
        from uniview.core.renames import parse_renames
        from uniview.planning.plan import GeneratorOptions

        place = [landing_.name for landing_ in self.stack.landings].index(landing)
        renames = parse_renames(json.dumps({"uniview_renames": 1, "renames": self.renames}), "renames")
        return GeneratorOptions(policy="widen", current=self.environments[place]["UNIVIEW_CURRENT"], renames=renames)

    def stop(self) -> None:
        for running in self.running:
            running.close()


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """ZetaSQL's reference implementation (tests/zetasql/reference.py), to evaluate each family's BigQuery views."""
    from reference import running_analyzer

    try:
        with running_analyzer(tmp_path_factory.mktemp("zetasql")) as analyzer:
            yield analyzer
    except RuntimeError as error:
        pytest.skip(f"the ZetaSQL analyzer could not be installed: {error}")


@pytest.fixture(scope="module")
def generative_stack(sources, kafka_connect, connector_emulator_env, tmp_path_factory):
    work = tmp_path_factory.mktemp("generative")
    source = CdcSource(
        databases=(DATABASE[MARIADB], DATABASE[POSTGRES]),
        tables=(),
        topic_prefixes=tuple(PREFIX.values()),
        input_pattern=f"{PREFIX[MARIADB]}\\.{DATABASE[MARIADB]}\\..*|{PREFIX[MARIADB]}|{PREFIX[POSTGRES]}\\.public\\..*",
        run=lambda database, *statements: None,
        rows=sources.rows,
        columns=sources.columns,
        normalize=comparable_rows,
    )
    warehouse = work / "warehouse.duckdb"
    stack = CdcStack(
        kafka_connect.bootstrap, source, [duckdb_landing(warehouse), bigquery_landing(connector_emulator_env)], work
    )
    base = {"UNIVIEW_POLICY": "widen"}
    environments = function_environments(warehouse, connector_emulator_env, base, current_modes())
    functions = Functions(stack, environments)
    snapshot = "Snapshot ended with SnapshotResult [status=COMPLETED"
    with ExitStack() as running:
        running.enter_context(datasets_dropped_after(connector_emulator_env[2]))
        running.enter_context(
            connectors_added(
                kafka_connect,
                connectors(sources, kafka_connect.bootstrap),
                ready=lambda since: wait_for_log(kafka_connect, snapshot, since),
            )
        )
        functions.start()
        running.callback(functions.stop)
        sinks = running.enter_context(streaming_sinks(stack))
        pause = SinksPause(sinks)  # between the comparisons: a step's writes land in one micro-batch of each sink
        running.callback(pause.resume)
        yield stack, pause, functions


@pytest.fixture(scope="module")
def envelope_sink(spark, tmp_path_factory):
    """The envelope path's sink, which `uniview sink` runs in the test process's Spark session (tests/conftest.py),
    and whose `<table>_current` is the other kind than the live DuckDB's."""
    return EnvelopeSink(tmp_path_factory.mktemp("envelope"), current_modes()[1], EnvelopeLog(DATABASE[MARIADB]))


def seeded(label: str, values) -> list:
    """`values` in an order of this seed's: Hypothesis's simplest draw is the first, so each seed's first example
    draws other types, defaults and edge values (and shrinks towards this seed's first)."""
    values = list(values)
    return random.Random(f"{SEED}:{label}").sample(values, len(values))


def _how_unknown(kind: str) -> str:
    """How the live path shows a cell whose default uniview cannot know (tests/kafka/cdc_e2e_support.py's
    unknown_accepted)."""
    return "any" if kind == "misread" else "null" if kind in DROPPED_BY_CONNECTORS or kind == "undeclared" else "named"


@dataclass
class Column:
    name: str
    type_name: str
    #: MariaDB's DEFAULT clause of the column (" DEFAULT 7", or "").
    default: str = ""


TABLES = iter(range(1, 1_000_000))
#: The names a new column is given: plain, and the kinds every query must quote (non-ASCII, mixed case, a keyword, a
#: space; docs/sink.md#column-names), `{}` the column's number.
NAME_STYLES = ("c{}", "größe{}", "CamelCase{}", "order", "with space {}")
#: The names a new table is given, `{}` its number (Kafka's topic names replace what they do not allow).  No
#: non-ASCII one: PostgreSQL's connector sends no key for such a table (docs/sources.md), so it has no
#: `<table>_current`.
TABLE_NAME_STYLES = ("g{}", "CamelCase{}", "with space {}")
#: The types a type change applies to (the ADD COLUMN of the migration families draws one).
CHANGEABLE = sorted({before for before, _ in DRAWN_TYPE_CHANGES})


class Migrations(RuleBasedStateMachine):
    """One table in each database, changed step by step; after each step the views must match both sources."""

    def __init__(
        self, sources: Sources, stack: CdcStack, pause: SinksPause, functions: Functions, reference, events: dict, log
    ):
        super().__init__()
        self.sources, self.stack, self.functions = sources, stack, functions
        self.pause, self.sinks = pause, pause.sinks
        self.reference, self.envelope = reference
        self.events, self.log = events, log
        self.table = f"g{next(TABLES)}"
        self.columns: list[Column] = []
        self.next_id = 1
        self.ids: list[int] = []
        #: The rows whose `doc` was given a value PostgreSQL keeps out of line (TOAST), while they live.
        self.toasted: set[int] = set()
        #: Whether the PostgreSQL table's replica identity is FULL (`replica_identity_full`).
        self.identity_full = False
        self.names = iter(range(1, 1_000_000))
        self.touches = iter(range(-1, -1_000_000, -1))  # values no drawn write gives c0: each touch changes the row
        #: Per source, {key: {column: kind of default}}: the cells of rows older than a column added with a default
        #: uniview cannot know (UNKNOWN_DEFAULTS), not written since.
        self.unknown: dict[str, dict[int, dict[str, str]]] = {dialect: {} for dialect in DIALECTS}
        self.stack.source.unknown = self.unknown_cells
        #: The columns that were ever of a type BigQuery holds as a BIGNUMERIC (decimal(38,10), decimal(65,30)), and
        #: the fewest integer digits their types keep: their unified type is BIGNUMERIC, a DOUBLE on DuckDB and the
        #: emulator (docs/duckdb.md#known-differences-from-bigquery).
        self.bignumeric: dict[str, int] = {}
        self.stack.source.approximate = lambda database, table: dict(self.bignumeric) if table == self.table else {}
        #: Per source, the primary key's columns (`redefine_key` adds c0 to MariaDB's).
        self.key: dict[str, tuple[str, ...]] = dict.fromkeys(DIALECTS, ("id",))
        #: PostgreSQL's partitions of the table, when it is partitioned (`create_table`).
        self.partitions: list[str] = []
        #: (database, table) of the names a table no longer has (renamed away, an online migration's shadow table):
        #: their `<table>_current` must hold no row.
        self.gone: list[tuple[str, str]] = []
        #: The names MariaDB's table no longer has whose changes the envelope path landed.
        self.envelope_gone: list[str] = []
        #: When the last comparison ended (`compare`'s timing: a step's statements run from then).
        self.checked = time.monotonic()

    # -- applying a drawn change to both sources ----------------------------------------------------------------
    def apply(self, change: Change) -> dict[str, int]:
        """Apply `change` to both sources: {dialect: rows its statements touched} of the sources that accepted it."""
        accepted: dict[str, int] = {}
        self.log.append((change.label, change))
        print(f"drawn: {change.label}")
        note("\n".join(f"[{dialect}] {sql}" for dialect in DIALECTS for sql in change.statements(dialect)))
        for dialect in DIALECTS:
            writes = change.writes_rows(dialect)
            own = change.table is None  # a write of the example's table (not of a shadow table)
            before = self.sources.image(self.table) if dialect == MARIADB and writes and own else None
            touched = self.sources.apply(dialect, change.statements(dialect))
            if touched is None:
                continue
            accepted[dialect] = touched
            if dialect == MARIADB and own:
                self.publish_envelope(change, before)
            key = (DATABASE[dialect], change.table or self.table)
            count = (1 if change.truncate else 0) + (touched * change.events(dialect) if writes else 0)
            self.events[key] = self.events.get(key, 0) + count
        return accepted

    # -- the cells whose value uniview cannot know ---------------------------------------------------------------
    def unknown_cells(self, database: str, table: str) -> dict[int, dict[str, str]]:
        """The live path's cells of `database` that may show as unknown: NULL named in `_cdc_unavailable`, NULL
        alone for a default the connectors drop (DROPPED_BY_CONNECTORS), or any value for a default a connector
        misreads (MISREAD_BY_CONNECTORS)."""
        dialect = MARIADB if database == DATABASE[MARIADB] else POSTGRES
        if table != self.table:
            return {}
        return {
            key: {column: _how_unknown(kind) for column, kind in cells.items()}
            for key, cells in self.unknown[dialect].items()
        }

    def written(self, row: int, accepted: dict[str, int]) -> None:
        """Row `row` was written (its change sent with every column) in the sources whose statement touched it."""
        for dialect, touched in accepted.items():
            if touched:
                self.unknown[dialect].pop(row, None)
                for held in (self.stack.held_keys, self.stack.emulator_held_keys):
                    held.get((DATABASE[dialect], self.table), set()).discard(row)

    def column_gone(self, name: str, new: str | None = None) -> None:
        """Column `name` dropped (its cells known again: whatever the column holds next is written or NULL), or
        renamed to `new`."""
        for cells in (cell for rows in self.unknown.values() for cell in rows.values()):
            kind = cells.pop(name, None)
            if kind is not None and new is not None:
                cells[new] = kind
        if name in self.bignumeric and new is not None:  # the older versions' column is read under its new name
            self.became(new, self.bignumeric[name])  # (a dropped one's versions stay in the family: its name stays)

    def became(self, name: str, digits: int | None) -> None:
        """Column `name` is (or was) of a type BigQuery holds as a BIGNUMERIC keeping `digits` integer digits."""
        if digits is not None:
            self.bignumeric[name] = min(digits, self.bignumeric.get(name, digits))

    def publish_envelope(self, change: Change, before: dict | None) -> None:
        """MariaDB's accepted statement as a binlog reader writes it: a record per changed row, or a TRUNCATE."""
        if before is not None:
            self.envelope.log.changes(
                self.table, before, self.sources.image(self.table), self.sources.declared(self.table)
            )
        elif change.truncate:
            self.envelope.log.truncate(self.table, self.sources.declared(self.table))

    def check(self) -> None:
        """`compare`, and the difference printed at once (shrinking replays the steps before it is reported)."""
        try:
            self.compare()
        except AssertionError as error:
            print(f"difference: {str(error)[:4000]}")
            raise

    def compare(self) -> None:
        """The views of both warehouses equal both sources, and the envelope path's DuckDB views MariaDB;
        ZetaSQL answers DuckDB's family's views as DuckDB does.  The envelope batch lands while the live path
        is awaited, and the checks that read DuckDB alone (ZetaSQL's, the envelope path's) run once DuckDB's views
        match, while BigQuery's batch still lands.  The sinks, paused since the last comparison, go on once the
        step's change events are in Kafka, and are paused again after it."""
        self.stack.source.tables = (self.table,)
        started = time.monotonic()
        with ThreadPoolExecutor(max_workers=1) as pool:
            envelope = pool.submit(self.envelope.land, self.functions.renames)

            def duckdb_alone() -> None:
                self.check_reference()
                envelope.result()
                self.check_envelope()

            wait_for_events(self.stack, sum(self.events.values()))
            self.pause.resume()
            kafka = time.monotonic()
            wait_until_views_match_sources(
                self.stack, self.sinks, self.events, timeout=WAIT, matched={"duckdb": duckdb_alone}
            )
        views = time.monotonic()
        self.check_gone()
        self.pause.pause()
        print(
            f"timing: step {time.monotonic() - self.checked:.1f}s: statements {started - self.checked:.1f}s, "
            f"kafka {kafka - started:.1f}s, views {views - kafka:.1f}s, gone {time.monotonic() - views:.1f}s"
        )
        self.checked = time.monotonic()

    def check_gone(self) -> None:
        """Every name the table no longer has (`gone`) shows no row in `<table>_current` (or has none), in both
        warehouses and the envelope path's: a rename empties it at the refresh that moves its rows
        (docs/current-state.md#table-renames); waits for the refresh as the comparison does."""
        deadline = time.monotonic() + WAIT
        while (held := self.rows_of_gone_names()) and time.monotonic() < deadline:
            time.sleep(RECOMPARE_SECONDS)
        assert not held, ("a name the table no longer has shows rows", held)

    def rows_of_gone_names(self) -> list[tuple]:
        shown = [(landing.name, database, table) for landing in self.stack.landings for database, table in self.gone]
        shown += [("envelope", DATABASE[MARIADB], table) for table in self.envelope_gone]
        # the envelope path's landing is a DuckDB one too, named "duckdb": it is keyed apart, never in the live one's place
        landings = {landing.name: landing for landing in self.stack.landings}
        landings["envelope"] = self.envelope.landing
        found = []
        for name, database, table in shown:
            landing, view = landings[name], f"{table}_current"
            if landing.name == "duckdb":  # the envelope path's too
                listed = f"information_schema.tables WHERE table_schema = '{database}_unified' AND"
            else:
                listed = f"{database}_unified.INFORMATION_SCHEMA.TABLES WHERE"
            ((present,),) = landing.read(f"SELECT count(*) FROM {listed} table_name = '{view}'")
            if not present:  # absent: no row either
                continue
            ((count,),) = landing.read(f"SELECT count(*) FROM {database}_unified.{landing.quote(view)}")
            if count:
                found.append((name, database, table, count))
        return found

    def check_envelope(self) -> None:
        schema = self.sources.declared(self.table)
        columns = [column.name for column in schema]
        rows = [
            bits_as_numbers(dict(zip(columns, row, strict=True)), schema)
            for row in self.sources.rows(DATABASE[MARIADB], self.table)
        ]
        expected = comparable_rows([tuple(row.values()) for row in rows])
        unknown = {key: dict.fromkeys(cells, "named") for key, cells in self.unknown[MARIADB].items()}
        differences = self.envelope.differences(
            self.table, columns, expected, comparable_rows, unknown, set(self.bignumeric)
        )
        assert not differences, differences

    def check_reference(self) -> None:
        from reference import duckdb_family_differences

        options = self.functions.options(self.stack.landings[0].name)
        for database in self.stack.source.databases:
            if self.events.get((database, self.table)):
                differences = duckdb_family_differences(
                    self.reference, self.stack.work / "warehouse.duckdb", database, self.table, options
                )
                assert not differences, ("ZetaSQL and DuckDB answer differently", differences)

    def q(self, dialect: str) -> str:
        """The table's name quoted as `dialect` quotes it."""
        return quoted(self.table, dialect)

    def column_name(self, style: str = "c{}") -> str:
        """A new column's name in `style` (NAME_STYLES); the keyword `order` once per table."""
        name = style.format(next(self.names))
        return name if name.lower() not in {c.name.lower() for c in self.columns} else f"{name}{next(self.names)}"

    # -- the table ------------------------------------------------------------------------------------------
    @initialize(data=st.data())
    def create(self, data) -> None:
        """The table, two rows, then the migration families every example draws (`migration_families`)."""
        partitioned = data.draw(st.sampled_from(seeded("partitioned", [False, True])), label="partitioned")
        style = data.draw(st.sampled_from(seeded("table name", TABLE_NAME_STYLES)), label="table name")
        self.table = style.format(self.table[1:])
        self.create_table(partitioned)
        self.migration_families(data)
        if AIMED:
            self.aimed_columns(data)

    def aimed_columns(self, data) -> None:
        """ADD COLUMN of each type the run is aimed at (UNIVIEW_GEN_TYPES), in an order of the seed's, each with a
        drawn kind of default over the rows already there: the drawn steps then work on a table holding them all."""
        for type_name in seeded("aimed types", ADDED_TYPES):
            self.add(type_name, data)

    def migration_families(self, data) -> None:
        """ADD COLUMN of a drawn type (one a type change applies to) with a drawn default, written by two INSERTs of
        drawn values at the edges of its type; its type change; its DROP.  So even Hypothesis's simplest example
        (the suite's only one) draws a migration of each family, and the seed chooses which (`seeded`)."""
        type_name = data.draw(st.sampled_from(seeded("family type", CHANGEABLE)), label="family type")
        column = self.add(type_name, data, edges=True)
        self.retype(column, data)
        self.drop(column)

    def insert_edges_of(self, column: Column, data) -> None:
        """`write_after_ddl`'s write, then two INSERTs of distinct drawn values at the edges of `column`'s type, then
        the check.  An edge value may be refused by both sources (`2023-02-29`), or refused by one and beyond
        BigQuery's domains in the other (`10000-01-01`: quarantined), so only the first write surely carries the
        new schema to the views (seed 9811)."""
        self.write_after_ddl(check=False)
        values = seeded(column.type_name, TYPES_BY_NAME[column.type_name].values)
        edges = data.draw(st.lists(st.sampled_from(values), min_size=2, max_size=2, unique_by=repr), label="edges")
        for value in edges:
            self.insert_rows(1, {column.name: {d: literal(value, d) for d in DIALECTS}}, check=False)
        self.check()

    def create_table(self, partitioned: bool) -> None:
        """The table; PostgreSQL's partitioned by range of the key when `partitioned` (one family named after the
        root, docs/sources.md): the first two rows in one partition, the rows inserted later and every key an UPDATE
        gives (`update_key`) in the other, so a key change moves a row between partitions."""
        self.columns = [Column("c0", "int"), Column("doc", "text")]
        create = {
            MARIADB: [f"CREATE TABLE {self.q(MARIADB)} (id int PRIMARY KEY, c0 int, doc mediumtext)"],
            POSTGRES: [f"CREATE TABLE {self.q(POSTGRES)} (id int PRIMARY KEY, c0 integer, doc text)"],
        }
        if partitioned:
            self.partitions = [f"{self.table}_p0", f"{self.table}_p1"]
            create[POSTGRES] = [
                create[POSTGRES][0] + " PARTITION BY RANGE (id)",
                f"CREATE TABLE {quoted(self.partitions[0], POSTGRES)} PARTITION OF {self.q(POSTGRES)} "
                "FOR VALUES FROM (MINVALUE) TO (3)",
                f"CREATE TABLE {quoted(self.partitions[1], POSTGRES)} PARTITION OF {self.q(POSTGRES)} "
                "FOR VALUES FROM (3) TO (MAXVALUE)",
            ]
        label = f"create '{self.table}'" + (", PostgreSQL's partitioned" if partitioned else "")
        self.apply(Change(label, create))
        storage = f"ALTER TABLE {self.q(POSTGRES)} ALTER COLUMN doc SET STORAGE EXTERNAL"
        self.apply(Change("storage", {POSTGRES: [storage]}))
        self.insert_rows(2, check=False)  # the first check is the migration families' first step's

    def insert_rows(self, count: int, values: dict[str, dict[str, str]] | None = None, check: bool = True) -> None:
        rows = []
        for _ in range(count):
            rows.append(self.next_id)
            self.ids.append(self.next_id)
            self.next_id += 1
        for row in rows:
            names = ["id", *(values or {})]
            sql = {
                dialect: [
                    f"INSERT INTO {self.q(dialect)} ({', '.join(quoted(n, dialect) for n in names)}) VALUES "
                    f"({', '.join([str(row), *(v[dialect] for v in (values or {}).values())])})"
                ]
                for dialect in DIALECTS
            }
            self.apply(Change("insert", sql))
        if check:
            self.check()

    # -- migrations -------------------------------------------------------------------------------------------
    @rule(type_name=st.sampled_from(ADDED_TYPES), data=st.data())
    def add_column(self, type_name: str, data) -> None:
        self.add(type_name, data)

    def add(self, type_name: str, data, edges: bool = False) -> Column:
        """ADD COLUMN of `type_name` with a drawn kind of default, then a write (INSERTs at its type's edges when
        `edges`)."""
        source_type = TYPES_BY_NAME[type_name]
        kinds = seeded(
            f"default {type_name}", ["none", *([] if source_type.generated else ["null"]), *source_type.defaults]
        )
        kind = data.draw(st.sampled_from(kinds), label="default")
        # MariaDB's ADD COLUMN ... AFTER or FIRST (before the key)
        places = ["", " AFTER id", " AFTER c0", " FIRST"]
        place = data.draw(st.sampled_from(seeded("place", places)), label="place")
        name = self.column_name(data.draw(st.sampled_from(seeded("column name", NAME_STYLES)), label="name"))
        default = dict.fromkeys(DIALECTS, "")
        if kind == "null":
            default = dict.fromkeys(DIALECTS, " DEFAULT NULL")
        elif kind != "none":
            default = {d: f" DEFAULT {source_type.defaults[kind][d]}" for d in DIALECTS}
        sql = {
            d: [f"ALTER TABLE {self.q(d)} ADD COLUMN {quoted(name, d)} {source_type.ddl[d]}{default[d]}"]
            for d in DIALECTS
        }
        sql[MARIADB] = [sql[MARIADB][0] + place]
        converted = CONVERTED_MARK if (type_name, kind) in CONVERTED_DEFAULTS else ""
        named = "" if re.fullmatch("c[0-9]+", name) else f" named '{name}'"
        accepted = self.apply(Change(f"add {type_name} default {kind}{place.lower()}{named}{converted}", sql))
        self.generated_over_older_rows(source_type, name, accepted)
        for dialect in accepted:
            misread = (dialect, type_name, kind) in MISREAD_BY_CONNECTORS
            undeclared = kind not in ("none", "null") and (
                bool({(dialect, type_name), (dialect, type_name, kind)} & UNDECLARED_DEFAULTS)
                or (dialect == POSTGRES and not name.isascii())  # the connector finds no column of the mangled name
            )
            never = (dialect, type_name) in NEVER_DECLARED
            if (
                kind in UNKNOWN_DEFAULTS[dialect] or misread or undeclared or never
            ):  # rows already there: a value uniview
                for row in self.ids:  # cannot know
                    marked = "misread" if misread else "undeclared" if undeclared else "never" if never else kind
                    self.unknown[dialect].setdefault(row, {})[name] = marked
        column = Column(name, type_name, default[MARIADB])
        self.became(name, source_type.bignumeric_digits)
        self.columns.append(column)
        if edges:
            self.insert_edges_of(column, data)
        else:
            self.write_after_ddl()
        return column

    def generated_over_older_rows(self, source_type: SourceType, name: str, accepted: dict[str, int]) -> None:
        """A generated column added over rows already there (MariaDB): the source computed their values and logged
        no change of them, so they are not known: NULL, named in `_cdc_unavailable` (docs/current-state.md)."""
        if source_type.generated and MARIADB in accepted:  # PostgreSQL's counterpart is a plain column
            for row in self.ids:
                self.unknown[MARIADB].setdefault(row, {})[name] = "generated"

    def write_after_ddl(self, check: bool = True) -> None:
        """A write after the DDL: the change that carries the new schema to the sink (a DDL alone publishes no
        change event); then the check, unless not `check`."""
        if self.ids:
            self.written(self.ids[0], self.apply(self.touch(self.ids[0])))
            if check:
                self.check()
        else:
            self.insert_rows(1, check=check)

    def touch(self, row: int, label: str = "touch") -> Change:
        """An UPDATE of c0 of `row`, to a value no drawn write gives it: where c0 is part of the key (`redefine_key`)
        the connector publishes a delete and a create."""
        events = {d: 2 if "c0" in self.key[d] else 1 for d in DIALECTS}
        value = next(self.touches)
        return Change(
            label, each(lambda q: f"UPDATE {q(self.table)} SET c0 = {value} WHERE id = {row}"), events_per_row=events
        )

    def pick_column(self, data) -> Column:
        return data.draw(st.sampled_from([c for c in self.columns if c.name not in {"c0", "doc"}]), label="column")

    @precondition(lambda self: len(self.columns) > 2)
    @rule(data=st.data())
    def drop_column(self, data) -> None:
        self.drop(self.pick_column(data))

    def dropped(self, name: str) -> dict[str, list[str]]:
        """DROP COLUMN `name`, in each dialect."""
        return each(lambda q: f"ALTER TABLE {q(self.table)} DROP COLUMN {q(name)}")

    def drop(self, column: Column) -> None:
        self.apply(Change(f"drop {column.name}", self.dropped(column.name)))
        self.columns.remove(column)
        self.column_gone(column.name)
        self.write_after_ddl()

    @precondition(lambda self: len(self.columns) > 2)
    @rule(data=st.data(), write_between=st.booleans(), type_name=st.sampled_from(ADDED_TYPES))
    def drop_and_add(self, data, write_between: bool, type_name: str) -> None:
        """DROP and ADD of the same name, the same type or another, with or without a write in between."""
        column = self.pick_column(data)
        if data.draw(st.booleans(), label="same type"):
            type_name = column.type_name
        if not write_between and self.sources.declared(self.table)[-1].name == column.name:
            # the last column dropped and added again with nothing written between is, in the stream, a type change or
            # no change at all: undecidable, the older rows show the old values (docs/current-state.md), so a write
            # goes between, as the docs advise (seed 5002: older rows showed the first life's DEFAULT, the source NULL)
            write_between = True
        self.apply(Change(f"drop {column.name}", self.dropped(column.name)))
        self.column_gone(column.name)
        if write_between:
            self.write_after_ddl()
        new_type = TYPES_BY_NAME[type_name]
        accepted = self.apply(
            Change(
                f"add again {column.name} {type_name}",
                each(lambda q: f"ALTER TABLE {q(self.table)} ADD COLUMN {q(column.name)} {new_type.ddl[q.dialect]}"),
            )
        )
        self.generated_over_older_rows(new_type, column.name, accepted)
        self.became(column.name, new_type.bignumeric_digits)
        column.type_name, column.default = type_name, ""
        self.write_after_ddl()

    @precondition(lambda self: len(self.columns) > 2)
    @rule(data=st.data())
    def rename_column(self, data) -> None:
        column = self.pick_column(data)
        new = f"{column.name}r"
        rename = each(lambda q: f"ALTER TABLE {q(self.table)} RENAME COLUMN {q(column.name)} TO {q(new)}")
        self.apply(Change(f"rename {column.name}", rename))
        self.functions.declare(self.table, column.name, new)
        self.column_gone(column.name, new)
        column.name = new
        self.write_after_ddl()

    @precondition(lambda self: any(c.type_name in CHANGEABLE for c in self.columns[2:]))
    @rule(data=st.data())
    def change_type(self, data) -> None:
        candidates = [c for c in self.columns[2:] if c.type_name in CHANGEABLE]
        self.retype(data.draw(st.sampled_from(candidates), label="column"), data)

    def retype(self, column: Column, data, new_name: str | None = None) -> None:
        """A type change of `column` to a drawn target type (widening, narrowing or incompatible), then a write;
        with `new_name`, a rename too: MariaDB's CHANGE COLUMN, PostgreSQL's RENAME COLUMN then ALTER COLUMN TYPE
        (declared in the renames document, as `rename_column`'s)."""
        targets = seeded(f"target {column.type_name}", [b for a, b in DRAWN_TYPE_CHANGES if a == column.type_name])
        target = TYPES_BY_NAME[data.draw(st.sampled_from(targets), label="target")]
        # MariaDB's MODIFY declares the column anew: without its DEFAULT the default is gone (rows keep their values)
        dropped = data.draw(st.sampled_from(seeded("modify default", [True, False])), label="MODIFY drops the DEFAULT")
        kept = "" if dropped else column.default
        name = new_name or column.name
        table, quoted_name = {d: quoted(self.table, d) for d in DIALECTS}, {d: quoted(name, d) for d in DIALECTS}
        sql = {
            MARIADB: [f"ALTER TABLE {table[MARIADB]} MODIFY {quoted_name[MARIADB]} {target.ddl[MARIADB]}{kept}"],
            POSTGRES: [
                f"ALTER TABLE {table[POSTGRES]} ALTER COLUMN {quoted_name[POSTGRES]} TYPE {target.ddl[POSTGRES]} "
                f"USING {cast_to(target, POSTGRES, quoted_name[POSTGRES])}"
            ],
        }
        label = f"type {column.name} {column.type_name} -> {target.name}"
        if new_name:
            old = {d: quoted(column.name, d) for d in DIALECTS}
            sql[MARIADB] = [
                f"ALTER TABLE {table[MARIADB]} CHANGE COLUMN {old[MARIADB]} {quoted_name[MARIADB]} "
                f"{target.ddl[MARIADB]}{kept}"
            ]
            sql[POSTGRES].insert(
                0, f"ALTER TABLE {table[POSTGRES]} RENAME COLUMN {old[POSTGRES]} TO {quoted_name[POSTGRES]}"
            )
            label = f"change {column.name} to {new_name} {column.type_name} -> {target.name}"
        self.apply(Change(label, sql))
        if new_name:
            self.functions.declare(self.table, column.name, new_name)
            self.column_gone(column.name, new_name)
            column.name = new_name
        column.type_name = target.name
        self.became(column.name, target.bignumeric_digits)
        column.default = "" if kept == "" else column.default
        self.write_after_ddl()

    @precondition(lambda self: any(c.type_name in CHANGEABLE for c in self.columns[2:]))
    @rule(data=st.data())
    def change_column(self, data) -> None:
        """MariaDB's CHANGE COLUMN: a rename and a type change in one statement."""
        candidates = [c for c in self.columns[2:] if c.type_name in CHANGEABLE]
        column = data.draw(st.sampled_from(candidates), label="column")
        self.retype(column, data, new_name=f"{column.name}x")

    @precondition(lambda self: self.key[MARIADB] == ("id",) and bool(self.ids))
    @rule()
    def redefine_key(self) -> None:
        """MariaDB's key redefined (`DROP PRIMARY KEY, ADD PRIMARY KEY (id, c0)`, docs/current-state.md#a-redefined-
        key): c0 filled where NULL first (a key part is NOT NULL), then a touch, a key-part UPDATE from then on."""
        fill = self.apply(Change("fill c0", {MARIADB: [f"UPDATE {self.q(MARIADB)} SET c0 = 0 WHERE c0 IS NULL"]}))
        redefine = f"ALTER TABLE {self.q(MARIADB)} MODIFY c0 int NOT NULL DEFAULT 0, DROP PRIMARY KEY, ADD PRIMARY KEY (id, c0)"
        if MARIADB in fill and MARIADB in self.apply(Change("redefine key (id, c0)", {MARIADB: [redefine]})):
            self.key[MARIADB] = ("id", "c0")
        self.write_after_ddl()

    @precondition(lambda self: any(c.type_name == "enum" for c in self.columns[2:]))
    @rule(data=st.data())
    def enum_value_added(self, data) -> None:
        """A value added to an enum: PostgreSQL's ALTER TYPE ... ADD VALUE, MariaDB's MODIFY with the longer list
        (its DEFAULT kept)."""
        column = data.draw(st.sampled_from([c for c in self.columns[2:] if c.type_name == "enum"]), label="column")
        values = f"{ENUM_LIST},{ADDED_ENUM_VALUE}"
        sql = {
            MARIADB: [
                f"ALTER TABLE {self.q(MARIADB)} MODIFY {quoted(column.name, MARIADB)} enum({values}){column.default}"
            ],
            POSTGRES: [f"ALTER TYPE size_kind ADD VALUE IF NOT EXISTS {ADDED_ENUM_VALUE}"],
        }
        self.apply(Change(f"enum {column.name} value added", sql))
        self.write_after_ddl()

    @rule()
    def truncate(self) -> None:
        self.apply(Change("truncate", each(lambda q: f"TRUNCATE TABLE {q(self.table)}"), truncate=True))
        self.ids.clear()
        self.toasted.clear()
        for rows in self.unknown.values():
            rows.clear()
        for database in DATABASE.values():
            self.stack.held_keys.pop((database, self.table), None)
            self.stack.emulator_held_keys.pop((database, self.table), None)
        self.check()

    @precondition(lambda self: not self.partitions)
    @rule()
    def rename_table(self) -> None:
        """The table renamed: MariaDB's RENAME TABLE (read from its DDL), PostgreSQL's ALTER TABLE ... RENAME TO
        (declared: docs/current-state.md#a-declared-table-rename-postgresql), then a write to the new name.  The new
        name's `<table>_current` is the table, the rows written under the old name included; the old name's holds
        no row.  Not drawn for PostgreSQL's partitioned table, whose changes the connector goes on sending under the
        old name (docs/sources.md)."""
        old, new = self.table, f"{self.table}r"
        sql = {
            MARIADB: [f"RENAME TABLE {quoted(old, MARIADB)} TO {quoted(new, MARIADB)}"],
            POSTGRES: [f"ALTER TABLE {quoted(old, POSTGRES)} RENAME TO {quoted(new, POSTGRES)}"],
        }
        accepted = self.apply(Change(f"rename table {old}", sql))
        assert set(accepted) == set(DIALECTS), self.sources.refused[-1:]
        self.functions.declare_table(old, new)
        self.moved(old, new, DIALECTS)
        self.write_after_ddl()

    def moved(self, old: str, new: str, dialects: Sequence[str]) -> None:
        """Table `old` of the `dialects`' sources is now called `new`: its changes are the new name's."""
        self.landed()
        for dialect in dialects:
            before, after = (DATABASE[dialect], old), (DATABASE[dialect], new)
            carry_quarantine(self.stack, DATABASE[dialect], old, new)
            self.events[after] = self.events.pop(before, 0)
            for held in (self.stack.held_keys, self.stack.emulator_held_keys):
                held[after] = held.pop(before, set())
            if self.events[after]:  # a name that landed changes has views, which must hold nothing now
                self.gone.append(before)
        if MARIADB in dialects and self.envelope.moved(old, new):
            self.envelope_gone.append(old)
        self.table = new

    @rule(tool=st.sampled_from(["gh-ost", "pt-online-schema-change"]))
    def online_migration(self, tool: str) -> None:
        """An ADD COLUMN as MariaDB's online schema-change tools run it: a shadow table with the new column, every row
        copied into it, a write to the table copied too (gh-ost replays it from the binary log,
        pt-online-schema-change's triggers write it), then the swap `RENAME TABLE t TO _t_del, _t_gho TO t`
        (pt-online-schema-change's `_t_old`, `_t_new`) and the old table dropped.  PostgreSQL adds the column in
        place.  `<table>_current` is the table at every step; the shadow table's name holds no row after the swap."""
        table, name = self.table, self.column_name()
        shadow, old = (f"_{table}_gho", f"_{table}_del") if tool == "gh-ost" else (f"_{table}_new", f"_{table}_old")
        q = Quoting(MARIADB)
        copied = self.sources.copied_columns(table)
        shadowed = [
            f"CREATE TABLE {q(shadow)} LIKE {q(table)}",
            f"ALTER TABLE {q(shadow)} ADD COLUMN {q(name)} int DEFAULT 5",
        ]
        triggers = copy_triggers(table, shadow, copied) if tool != "gh-ost" else {}
        self.apply(Change(f"{tool}: shadow table", {MARIADB: [*shadowed, *triggers.values()]}))
        copy = f"INSERT INTO {q(shadow)} ({', '.join(copied)}) SELECT {', '.join(copied)} FROM {q(table)}"
        self.apply(Change(f"{tool}: copy", {MARIADB: [copy]}, table=shadow))
        self.shadow_write(tool, shadow)
        swap = [f"RENAME TABLE {q(table)} TO {q(old)}, {q(shadow)} TO {q(table)}"]
        swap += [f"DROP TRIGGER {q(trigger)}" for trigger in triggers]
        sql = {
            MARIADB: [*swap, f"DROP TABLE {q(old)}"],
            POSTGRES: [f"ALTER TABLE {quoted(table, POSTGRES)} ADD COLUMN {quoted(name, POSTGRES)} integer DEFAULT 5"],
        }
        self.apply(Change(f"{tool}: swap", sql))
        self.swapped(shadow, old)
        self.columns.append(Column(name, "int", " DEFAULT 5"))
        self.write_after_ddl()

    def shadow_write(self, tool: str, shadow: str) -> None:
        """A write to the table while it is copied, which the tool copies to the shadow table: an UPDATE of a row
        there (pt-online-schema-change's trigger REPLACEs it, one update; gh-ost replays the UPDATE)."""
        if not self.ids or self.key[MARIADB] != ("id",):
            return
        row = self.ids[0]
        self.written(row, self.apply(self.touch(row, f"{tool}: write while copying")))
        if tool == "gh-ost":
            q = Quoting(MARIADB)
            replayed = f"UPDATE {q(shadow)} s JOIN {q(self.table)} t ON t.id = s.id SET s.c0 = t.c0 WHERE s.id = {row}"
            self.apply(Change(f"{tool}: replayed", {MARIADB: [replayed]}, table=shadow))
        else:
            self.events[(DATABASE[MARIADB], shadow)] += 1  # the trigger's REPLACE of a copied row: an update

    def swapped(self, shadow: str, old: str) -> None:
        """MariaDB's shadow table is the table now, and the old table `old` (dropped): the copied rows are the
        table's, each written whole (none of its cells unknown any more), and the envelope path writes each."""
        database = DATABASE[MARIADB]
        self.landed()
        carry_quarantine(self.stack, database, shadow, self.table)
        self.events[(database, old)] = self.events.pop((database, self.table), 0)
        self.events[(database, self.table)] = self.events.pop((database, shadow), 0)
        for held in (self.stack.held_keys, self.stack.emulator_held_keys):
            held.pop((database, self.table), None)
        if self.events[(database, self.table)]:
            self.gone.append((database, shadow))
        self.unknown[MARIADB].clear()
        self.envelope.log.changes(self.table, {}, self.sources.image(self.table), self.sources.declared(self.table))

    def landed(self) -> None:
        """Until the sinks have landed every change sent so far (each quarantined record under its name then); they
        are paused again after."""
        wait_for_events(self.stack, sum(self.events.values()))
        self.pause.resume()
        wait_until_sinks_caught_up(self.stack, self.sinks, WAIT)
        self.pause.pause()

    # -- writes ---------------------------------------------------------------------------------------------
    def edge_value(self, data, column: Column) -> dict[str, str]:
        values = seeded(column.type_name, [*TYPES_BY_NAME[column.type_name].values, "NULL"])
        value = data.draw(st.sampled_from(values), label=column.name)
        return {d: literal(value, d) for d in DIALECTS}

    @rule(data=st.data())
    def insert_edges(self, data) -> None:
        columns = data.draw(
            st.lists(st.sampled_from(self.columns[2:] or self.columns[:1]), max_size=3, unique_by=lambda c: c.name)
        )
        self.insert_rows(1, {c.name: self.edge_value(data, c) for c in columns})

    @precondition(lambda self: bool(self.ids) and len(self.columns) > 2)
    @rule(data=st.data())
    def update_edges(self, data) -> None:
        column = self.pick_column(data)
        row = data.draw(st.sampled_from(self.ids), label="row")
        value = self.edge_value(data, column)
        accepted = self.apply(
            Change(
                f"update {column.name}",
                each(lambda q: f"UPDATE {q(self.table)} SET {q(column.name)} = {value[q.dialect]} WHERE id = {row}"),
            )
        )
        self.written(row, accepted)
        self.check()

    @precondition(lambda self: bool(self.ids))
    @rule(data=st.data())
    def delete_row(self, data) -> None:
        row = data.draw(st.sampled_from(self.ids), label="row")
        self.apply(Change("delete", each(lambda q: f"DELETE FROM {q(self.table)} WHERE id = {row}")))
        self.ids.remove(row)
        self.toasted.discard(row)
        self.written(row, dict.fromkeys(DIALECTS, 1))
        self.check()

    @precondition(lambda self: not self.identity_full)
    @rule()
    def replica_identity_full(self) -> None:
        """PostgreSQL's `REPLICA IDENTITY FULL` (docs/sources.md): the WAL holds the whole old row, and an UPDATE
        of the key sends an unchanged TOASTed value itself."""
        tables = [self.table, *self.partitions]  # a partition's own replica identity is the one its changes use
        identity = [f"ALTER TABLE {quoted(t, POSTGRES)} REPLICA IDENTITY FULL" for t in tables]
        self.apply(Change("identity full", {POSTGRES: identity}))
        self.identity_full = True

    @precondition(lambda self: bool(self.ids))
    @rule(data=st.data())
    def update_key(self, data) -> None:
        """A primary-key UPDATE of any row; one whose value PostgreSQL keeps out of line moves with it
        (docs/current-state.md#a-key-change-moves-the-row), so such a row is drawn half the time."""
        toasted = sorted(self.toasted)
        rows = toasted if toasted and data.draw(st.booleans(), label="a TOASTed row") else self.ids
        row = data.draw(st.sampled_from(rows), label="row")
        self.apply(
            Change(
                "key",
                each(lambda q: f"UPDATE {q(self.table)} SET id = {self.next_id} WHERE id = {row}"),
                events_per_row=2,
            )
        )
        self.ids[self.ids.index(row)] = self.next_id
        if row in self.toasted:
            self.toasted.remove(row)
            self.toasted.add(self.next_id)
        self.written(row, dict.fromkeys(DIALECTS, 1))  # its new key's row is sent whole
        self.next_id += 1
        self.check()

    @precondition(lambda self: bool(self.ids))
    @rule(data=st.data())
    def toasted_value_left_unchanged(self, data) -> None:
        """A value stored out of line, then an UPDATE of another column: PostgreSQL (REPLICA IDENTITY DEFAULT)
        does not log the unchanged value and Debezium sends its placeholder."""
        row = data.draw(st.sampled_from(self.ids), label="row")
        big = {MARIADB: f"REPEAT('t', {BIG})", POSTGRES: f"repeat('t', {BIG})"}
        set_big = each(lambda q: f"UPDATE {q(self.table)} SET doc = {big[q.dialect]} WHERE id = {row}")
        self.written(row, self.apply(Change("big", set_big)))
        self.toasted.add(row)
        self.written(row, self.apply(self.touch(row, "beside big")))
        self.check()


def test_drawn_migrations_keep_the_views_equal_to_both_sources(sources, generative_stack, reference, envelope_sink):
    stack, pause, functions = generative_stack
    events: dict = {}
    log: list = []

    def machine() -> Migrations:
        log.clear()
        return Migrations(sources, stack, pause, functions, (reference, envelope_sink), events, log)

    run_settings = settings(
        max_examples=EXAMPLES,
        stateful_step_count=STEPS,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
        phases=[Phase.generate, Phase.shrink] if os.environ.get("UNIVIEW_GEN_SHRINK", "1") == "1" else [Phase.generate],
    )
    try:
        run_state_machine_as_test(seed(SEED)(machine), settings=run_settings)
    except BaseException:
        for dialect in DIALECTS:
            print(f"-- the last example's steps as {dialect} ran them (seed {SEED}):\n{as_script(log, dialect)}")
        raise
    finally:
        print(f"refused statements (no-op steps): {len(sources.refused)}")


def test_the_comparison_reads_as_unknown_only_the_cells_the_model_names():
    """A cell is read as unknown only where the model says it may be (a row older than a column added with a default
    uniview cannot know) and the view shows it so; an unchanged TOASTed value the view fails to carry, named in
    `_cdc_unavailable` too, stays a difference, and so does a known cell uniview leaves NULL."""
    columns = ["id", "c1", "doc", "c2"]
    expected = [(1, 42, "big", 7), (2, 42, "two", 7), (3, 42, "three", 7)]
    current = [(1, None, None, None), (2, None, "two", 7), (3, None, "three", 7)]
    unavailable = [["doc", "C1"], None, ["c2"]]
    cells = {1: {"c1": "named", "c2": "named"}, 2: {"c1": "named"}, 3: {"c1": "null"}}
    assert unknown_accepted(expected, current, unavailable, columns, cells) == [
        (1, None, "big", 7),  # c1 named: unknown; doc named but no cell of the model: the carry failed; c2 unnamed
        (2, 42, "two", 7),  # NULL without the name: a difference
        (3, None, "three", 7),  # a default the connector drops: NULL alone
    ]
    assert unknown_accepted(expected, current, unavailable, columns, {}) == expected


def test_a_renamed_table_counts_the_records_quarantined_under_each_of_its_names(tmp_path):
    """The quarantine keeps each record under the table's name when it was sent: after `t` is renamed `t2` (its
    one quarantined record sent as `t`), `t2_unified` holds the changes sent less that one; after a swap into the
    name `t` (gh-ost's), the records quarantined under the earlier `t` are not the new table's."""
    warehouse = tmp_path / "warehouse.duckdb"
    with duckdb.connect(str(warehouse)) as connection:
        connection.execute(
            "CREATE SCHEMA db; CREATE SCHEMA db_unified; "
            "CREATE TABLE db._uniview_quarantine AS SELECT * FROM (VALUES ('t', 'type_mismatch'), "
            "('t', 'type_mismatch'), ('_t_gho', 'type_mismatch')) AS q(table_name, reason)"
        )
        for table, changes in (("t2", 2), ("t", 2)):
            connection.execute(
                f"CREATE TABLE db_unified.{table}_unified AS SELECT i AS id, i AS _cdc_sequence, 'INSERT' AS "
                f"_cdc_operation, 'db' AS _cdc_database FROM range(1, {changes + 1}) AS r(i)"
            )
            connection.execute(f"CREATE VIEW db_unified.{table}_current AS SELECT id FROM db_unified.{table}_unified")
    source = CdcSource(
        ("db",), ("t2",), ("db",), "db[.].*", lambda *_: None, lambda database, table: [(1,), (2,)],
        lambda database, table: ["id"],
    )  # fmt: skip
    stack = CdcStack("", source, [duckdb_landing(warehouse)], tmp_path, held_back={("db", "t")})
    carry_quarantine(stack, "db", "t", "t2")  # two sent as `t`, both quarantined, two landed as `t2`
    assert landing_mismatches(stack, stack.landings[0], {("db", "t2"): 4}) == []
    source.tables = ("t",)
    carry_quarantine(stack, "db", "_t_gho", "t")  # the shadow's one quarantined; the earlier `t`'s two are not its
    assert landing_mismatches(stack, stack.landings[0], {("db", "t"): 3}) == []


def test_a_point_compares_by_its_coordinates_on_every_side():
    """The source's WKT, Debezium's STRUCT in the views (its x and y, or its WKB where they are NULL, as bytes or
    base64) and the envelope path's WKT text are one point; another point differs."""
    wkb = struct.pack("<BIdd", 1, 1, 123456.789, -0.001)
    sides = [
        "POINT(123456.789 -0.001)",
        {"x": 123456.789, "y": -0.001, "wkb": wkb, "srid": None},
        {"x": None, "y": None, "wkb": wkb, "srid": 0},
        {"wkb": base64.b64encode(wkb).decode(), "srid": None},
    ]
    assert len({repr(row) for row in comparable_rows([(side,) for side in sides])}) == 1
    assert comparable_rows([("POINT(1 2)",)]) != comparable_rows([("POINT(2 1)",)])


def test_the_envelope_path_of_an_empty_table_is_compared_without_the_columns_no_record_carried(tmp_path):
    """A column added to a table holding no row (an online migration swapping an empty table) reaches the envelope
    path's views with the first record that carries it: an empty source table matches a `<table>_current` without
    it, and the changes its `<table>_unified` holds are still counted."""
    sink = EnvelopeSink(tmp_path, "view", EnvelopeLog("db"))
    with duckdb.connect(str(sink.warehouse)) as connection:
        connection.execute(
            "CREATE SCHEMA db_unified; CREATE TABLE db_unified.t_unified AS SELECT * FROM (VALUES (1, 7), (1, 8)) "
            "AS u(id, c0); CREATE VIEW db_unified.t_current AS SELECT id, c0, NULL::VARCHAR[] AS _cdc_unavailable "
            "FROM db_unified.t_unified WHERE FALSE"
        )
    sink.log.landed["t"] = 2
    assert sink.differences("t", ["id", "c0", "c2"], [], comparable_rows) == []
    sink.log.landed["t"] = 3
    assert sink.differences("t", ["id", "c0", "c2"], [], comparable_rows) == [("envelope: changes", 2, 3)]


def test_bytes_in_a_column_the_views_unify_to_string_compare_as_safe_convert_bytes_to_string_gives_them():
    """MariaDB's `bit(8)` added where an earlier column of its name had another type: the unified column is STRING,
    and the views show each value as SAFE_CONVERT_BYTES_TO_STRING gives it (an ill-formed byte becomes U+FFFD);
    where the view shows bytes they are compared as bytes (seed 9810)."""
    source = [(1, b"\x01", b"\xa5", b"\xe2\x82"), (2, b"\x01", b"\xa5", None)]
    view = [(1, "\x01", "\ufffd", "\ufffd\ufffd"), (2, b"\x01", b"\xa5", None)]
    assert as_shown(source, view) == view


def test_a_bignumeric_compares_on_the_emulator_at_the_places_it_keeps():
    """The emulator keeps 18 fraction digits of a BIGNUMERIC where BigQuery keeps 38: on its landing the source's
    `decimal(65,30)` -1E-30 compares as 0, and 1.5E-18 as 2E-18; DuckDB's landing compares them as they are (seed
    9764)."""
    rows = [(1, Decimal("-1E-30"), Decimal("-1E-30")), (2, Decimal("1.5E-18"), None)]
    columns, doubles = ["id", "c2", "c3"], {"c2": 35}
    emulated = emulator_rounded(SimpleNamespace(name="bigquery"), rows, columns, doubles)
    assert emulated == [(1, 0, Decimal("-1E-30")), (2, Decimal("2E-18"), None)]
    assert emulator_rounded(SimpleNamespace(name="duckdb"), rows, columns, doubles) == rows


def test_the_envelope_path_counts_the_records_quarantined_under_a_renamed_tables_old_name(tmp_path):
    """The envelope path's quarantine keeps a record under the table's name when it was sent: after `t` (one record
    quarantined, two landed) is renamed `t2` and one more lands, `t2_unified` holds 3 of the 4 changes sent (seed
    9747: a `tinyint(1)` value that does not fit, then `RENAME TABLE`)."""
    sink = EnvelopeSink(tmp_path, "view", EnvelopeLog("db"))
    with duckdb.connect(str(sink.warehouse)) as connection:
        connection.execute(
            "CREATE SCHEMA db; CREATE SCHEMA db_unified; CREATE TABLE db._uniview_quarantine AS SELECT * FROM "
            "(VALUES ('t', 'type_mismatch')) AS q(table_name, reason); CREATE TABLE db_unified.t2_unified AS SELECT "
            "* FROM (VALUES (1, 7), (2, 8), (1, 9)) AS u(id, c0); CREATE VIEW db_unified.t2_current AS SELECT id, "
            "c0, NULL::VARCHAR[] AS _cdc_unavailable FROM db_unified.t2_unified QUALIFY row_number() OVER "
            "(PARTITION BY id ORDER BY c0 DESC) = 1"
        )
    sink.log.landed["t"] = 3
    assert sink.moved("t", "t2")
    sink.log.landed["t2"] += 1
    assert sink.differences("t2", ["id", "c0"], [(1, 9), (2, 8)], comparable_rows) == []
    sink.log.landed["t2"] += 1
    assert sink.differences("t2", ["id", "c0"], [(1, 9), (2, 8)], comparable_rows) == [("envelope: changes", 3, 4)]
