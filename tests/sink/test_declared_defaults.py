"""A column's declared default and nullability travel from Debezium's value schema (or metadata.schema) to
the version table's description, where `<table>_current` reads them; records declaring others than their
version's table land in a version of their own."""

from __future__ import annotations

import copy
import json
import shutil
from datetime import UTC, date, datetime, time
from decimal import Decimal
from pathlib import Path

import pytest
from click.testing import CliRunner
from sink_support import query, record, write_ndjson

from uniview.cli.main import main
from uniview.core.version_description import described_defaults, described_not_null
from uniview.sink.debezium import convert_event
from uniview.sink.default_values import SourceColumnType, stored_default
from uniview.sink.job import SinkOptions, run
from uniview.warehouse.url import duckdb_url

EVENTS = json.loads((Path(__file__).parents[1] / "kafka" / "debezium_postgres_events.json").read_text())
FIXTURES = json.loads((Path(__file__).parent / "debezium_fixtures" / "documented_events.json").read_text())


def test_debezium_defaults_are_converted_like_values_and_not_null_is_kept():
    event = json.loads(EVENTS[1]["value"])
    after = next(f for f in event["schema"]["fields"] if f["field"] == "after")
    by_name = {f["field"]: f for f in after["fields"]}
    by_name["name"]["default"] = "open"
    by_name["balance"]["default"] = "MDk="  # Connect's base64 two's complement: 0x3039 = 12345, scale 2
    by_name["born"]["default"] = 1  # epoch days
    entries = {e["name"]: e for e in json.loads(convert_event(json.dumps(event)))["metadata"]["schema"]}
    assert entries["name"]["default"] == "open" and entries["born"]["default"] == "1970-01-02"
    assert entries["balance"]["default"] == "123.45"
    assert entries["id"]["nullable"] is False and "nullable" not in entries["name"]
    assert "default" not in entries["id"]


def test_the_description_records_defaults_and_not_null_and_other_declarations_start_a_version(spark, tmp_path):
    """The version's table records the defaults and nullability its first record declares; a record declaring
    others (the same columns and types) lands in a version of its own, one declaring the same in the first."""
    schema = [{"name": "id", "type": "int", "nullable": False}, {"name": "status", "type": "text", "default": "open"}]
    plain = record("t", {"id": 1, "status": "x"}, [("id", "int"), ("status", "text")], position="1")
    declared, again = (record("t", {"id": n, "status": "y"}, position=str(n)) for n in (2, 3))
    declared["metadata"]["schema"] = again["metadata"]["schema"] = schema
    write_ndjson(tmp_path / "in" / "a.json", [declared])
    write_ndjson(tmp_path / "in2" / "b.json", [plain, again])
    warehouse = tmp_path / "w.duckdb"
    run(spark, SinkOptions(input=str(tmp_path / "in"), warehouse=duckdb_url(warehouse), dataset="cdc"))
    run(spark, SinkOptions(input=str(tmp_path / "in2"), warehouse=duckdb_url(warehouse), dataset="cdc"))
    tables = "SELECT table_name, comment FROM duckdb_tables() WHERE schema_name = 'cdc' AND table_name LIKE 't_v_%'"
    comments = dict(query(warehouse, tables))
    first = next(name for name, comment in comments.items() if described_defaults(comment))
    [other] = set(comments) - {first}
    assert described_defaults(comments[first]) == {"status": "open"} and described_not_null(comments[first]) == ("id",)
    assert described_defaults(comments[other]) == {} and described_not_null(comments[other]) == ()
    assert query(warehouse, f"SELECT id FROM cdc.{first} ORDER BY id") == [(2,), (3,)]
    assert query(warehouse, f"SELECT id FROM cdc.{other} ORDER BY id") == [(1,)]


READDED = [("id", "int"), ("c1", "int"), ("c2", "int")]


def readded_record(row: int, values: dict, position: int, c2_default: int | None = None, op: str = "UPDATE") -> dict:
    """A binlog record of table t, its columns READDED (c2 without `c2_default`) or id and c1 (c2 absent)."""
    columns = READDED if "c2" in values else READDED[:2]
    at = f"2024-05-01T10:{position // 60:02d}:{position % 60:02d}Z"
    line = record(
        "t", {"id": row, **values}, columns, position=f"mysql-bin.000001:{position}", operation=op, timestamp=at
    )
    line["metadata"]["primary_key"] = ["id"]
    line["metadata"]["schema"][0]["nullable"] = False
    if c2_default is not None and "c2" in values:
        line["metadata"]["schema"][2]["default"] = c2_default
    return line


@pytest.mark.parametrize("readded_default", [None, 5, 7])
def test_a_column_added_again_shows_its_new_default_where_the_first_life_had_another(spark, tmp_path, readded_default):
    """`c2 int DEFAULT 5` over rows 1 to 4, `DROP c2`, a write of row 1, `ADD c2 int` (no default, or DEFAULT 5 or
    7): the table's shape is its first version's again, but rows 2 to 4 show what the source filled them with when
    c2 was added again, in the view and the table; their value 5 came from c2's first life."""
    first = [readded_record(n, {"c1": None, "c2": 5}, 100 + n, 5, "INSERT") for n in range(1, 5)]
    dropped = readded_record(1, {"c1": -6}, 200)
    readded = readded_record(1, {"c1": -6, "c2": readded_default}, 300, readded_default)
    write_ndjson(tmp_path / "in" / "a.json", [*first, dropped, readded])
    warehouse = tmp_path / "w.duckdb"
    run(spark, SinkOptions(input=str(tmp_path / "in"), warehouse=duckdb_url(warehouse), dataset="cdc"))
    expected = [(1, -6, readded_default)] + [(n, None, readded_default) for n in (2, 3, 4)]
    for mode in ("view", "table"):
        assert refreshed(warehouse, mode, "t", "id, c1, c2") == expected, mode


def test_a_truncate_declaring_no_key_empties_the_table_after_a_key_and_its_nullability_changed(spark, tmp_path):
    """MariaDB's `DROP PRIMARY KEY, ADD PRIMARY KEY (id, c0)` makes c0 NOT NULL: the records after it declare
    another key and another nullability.  A truncate event after it declares that nullability and no key (Debezium
    sends it without one): it must not start a version recording no key, and `<table>_current` then holds no row,
    in the view and the table (found by the generative soak, seed 9743)."""
    columns = [("id", "int"), ("c0", "int")]

    def line(row: int | None, position: int, operation: str, key: list[str] | None, c0_nullable: bool) -> dict:
        data = {} if row is None else {"id": row, "c0": 0}
        at = f"2024-05-01T10:{position // 60:02d}:{position % 60:02d}Z"
        changed = record("t", data, columns, position=f"mysql-bin.000001:{position}", operation=operation, timestamp=at)
        if key is not None:
            changed["metadata"]["primary_key"] = key
        changed["metadata"]["schema"][0]["nullable"] = False
        if not c0_nullable:
            changed["metadata"]["schema"][1]["nullable"] = False
        return changed

    first = [line(n, 100 + n, "INSERT", ["id"], True) for n in range(1, 5)]
    rekeyed = line(1, 200, "UPDATE", ["id", "c0"], False)
    write_ndjson(tmp_path / "in" / "a.json", [*first, rekeyed])
    write_ndjson(tmp_path / "in2" / "b.json", [line(None, 300, "TRUNCATE", None, False)])
    warehouse = tmp_path / "w.duckdb"
    url = duckdb_url(warehouse)
    for mode in ("view", "table"):  # refreshed after each batch, as the function does
        warehouse.unlink(missing_ok=True)
        for folder in ("in", "in2"):
            run(spark, SinkOptions(input=str(tmp_path / folder), warehouse=url, dataset="cdc"))
            arguments = ["refresh", "--warehouse", url, "--dataset", "cdc", "--table", "t", "--current", mode]
            result = CliRunner().invoke(main, arguments)
            assert result.exit_code == 0, result.output
        assert query(warehouse, "SELECT id FROM cdc_unified.t_current") == [], mode


# What a binlog reader's envelope declares, as information_schema spells each default (MySQL 8 / MariaDB), and
# what `<table>_current` shows for a row written before the columns: the default converted as a value of its
# column, or NULL with the column named in `_cdc_unavailable` where it is not known.
BINLOG_DEFAULTS = [
    # (column, declared type, schema entry beyond name and type, shown, named in _cdc_unavailable)
    ("zero", "datetime", {"default": "0000-00-00 00:00:00", "nullable": False}, None, True),
    ("created", "timestamp", {"default": "CURRENT_TIMESTAMP", "nullable": False}, None, True),
    ("created2", "timestamp", {"default": "current_timestamp()"}, None, True),
    ("flag", "tinyint(1)", {"default": 2, "nullable": False}, None, True),
    ("one", "tinyint(1)", {"default": 1}, True, False),
    ("off", "tinyint(1)", {"default": "0"}, False, False),
    ("n", "int", {"default": "5"}, 5, False),
    ("expr", "int", {"default": "(1+1)"}, None, True),
    ("u", "varchar(36)", {"default_volatile": True}, None, True),
    ("note", "text", {"default": None}, None, False),
    ("label", "varchar(10)", {"default": "it's"}, "it's", False),
    ("since", "date", {"default": "2024-01-31"}, date(2024, 1, 31), False),
    ("far", "date", {"default": "10000-01-01"}, None, True),
    ("big", "bigint", {"default": "9223372036854775808"}, None, True),
    ("price", "decimal(5,2)", {"default": "1.5"}, Decimal("1.50"), False),
]


def refreshed(warehouse: Path, mode: str, table: str, columns: str) -> list[tuple]:
    """`<table>_current` after `uniview refresh --current MODE` (on a copy of the warehouse)."""
    copy = warehouse.with_name(f"{warehouse.stem}_{mode}.duckdb")
    shutil.copy(warehouse, copy)
    result = CliRunner().invoke(
        main, ["refresh", "--warehouse", duckdb_url(copy), "--dataset", "cdc", "--table", table, "--current", mode]
    )
    assert result.exit_code == 0, result.output
    return query(copy, f"SELECT {columns} FROM cdc_unified.{table}_current ORDER BY id")


def test_binlog_defaults_follow_the_value_rules_of_their_column(spark, tmp_path):
    """A version adds columns whose defaults MySQL and MariaDB spell as the zero date, CURRENT_TIMESTAMP, a
    boolean as a number, a number as text, an expression, a value out of range: the view and the table
    show each older row what the value rules give, or NULL and the column's name, and never fail."""
    base = [("id", "int"), ("name", "text")]
    older = record("t", {"id": 1, "name": "a"}, base, position="mysql-bin.000001:100", primary_key=["id"])
    newer = record("t", {"id": 2, "name": "b"}, position="mysql-bin.000001:200", primary_key=["id"])
    added = [{"name": name, "type": declared, **extra} for name, declared, extra, _, _ in BINLOG_DEFAULTS]
    newer["metadata"]["schema"] = [{"name": n, "type": t} for n, t in base] + added
    write_ndjson(tmp_path / "in" / "a.json", [older, newer])
    warehouse = tmp_path / "w.duckdb"
    run(spark, SinkOptions(input=str(tmp_path / "in"), warehouse=duckdb_url(warehouse), dataset="cdc"))
    names = [name for name, *_ in BINLOG_DEFAULTS]
    shown = tuple(row[3] for row in BINLOG_DEFAULTS)
    unknown = [name for name, *_, named in BINLOG_DEFAULTS if named]
    for mode in ("view", "table"):
        rows = refreshed(warehouse, mode, "t", f"id, {', '.join(names)}, _cdc_unavailable")
        assert rows == [(1, *shown, unknown), (2, *[None] * len(names), None)], mode


def debezium_line(offset: int, key: dict, value: dict) -> str:
    """A Kafka message as `kcat -C -J` prints it."""
    return json.dumps(
        {"topic": "t", "partition": 0, "offset": offset, "key": json.dumps(key), "payload": json.dumps(value)}
    )


def with_fields(event: dict, fields: list[dict], after: dict, position: dict) -> dict:
    """The event with `fields` added to its row schema (before and after), its row's values and source position."""
    event = copy.deepcopy(event)
    for struct in event["schema"]["fields"][:2]:
        struct["fields"] = struct["fields"] + fields
    event["payload"]["op"] = "c"
    event["payload"]["after"] = {**event["payload"]["after"], **after}
    event["payload"]["source"].update(position)
    return event


def landed_debezium(spark, tmp_path: Path, lines: list[str]) -> Path:
    """The DuckDB file the sink lands Debezium's `lines` in (dataset cdc)."""
    write_ndjson(tmp_path / "in" / "events.json", lines)
    warehouse = tmp_path / "w.duckdb"
    options = SinkOptions(input=str(tmp_path / "in"), warehouse=duckdb_url(warehouse), dataset="cdc", format="debezium")
    run(spark, options)
    return warehouse


def test_debezium_computed_defaults_are_unknown_and_literal_ones_shown(spark, tmp_path):
    """PostgreSQL `ADD COLUMN created timestamptz DEFAULT now()` and MariaDB's `ADD COLUMN created_at timestamp
    NOT NULL DEFAULT CURRENT_TIMESTAMP` reach the value schema as the epoch (Debezium's placeholder for a
    computed default): older rows show NULL and name the column, never 1970-01-01.  `DEFAULT 'x'::text` arrives
    as 'x' and `DEFAULT 3` as 3, which older rows show."""
    postgres = json.loads(EVENTS[1]["value"])  # an event of a live PostgreSQL connector
    key = json.loads(EVENTS[1]["key"])
    first = with_fields(postgres, [], {}, {"lsn": 100})
    pg_added = [
        {
            "type": "string",
            "optional": True,
            "name": "io.debezium.time.ZonedTimestamp",
            "version": 1,
            "default": "1970-01-01T00:00:00Z",
            "field": "created",
        },
        {"type": "string", "optional": True, "default": "x", "field": "kind"},
        {"type": "int32", "optional": True, "default": 3, "field": "level"},
        {
            "type": "int64",
            "optional": False,
            "name": "io.debezium.time.MicroTimestamp",
            "version": 1,
            "default": 0,
            "field": "stamped",
        },
    ]
    second = with_fields(
        postgres,
        pg_added,
        {"id": 2, "created": "2026-11-28T10:00:00Z", "kind": "y", "level": 1, "stamped": 1},
        {"lsn": 200},
    )
    mysql = FIXTURES[0]["value"]  # Debezium's own example of its MySQL connector (MariaDB's events are alike)
    mysql_key = {
        "schema": {"type": "struct", "fields": [{"type": "int32", "optional": False, "field": "id"}]},
        "payload": {"id": 1004},
    }
    mysql_added = [
        {
            "type": "string",
            "optional": False,
            "name": "io.debezium.time.ZonedTimestamp",
            "version": 1,
            "default": "1970-01-01T00:00:00Z",
            "field": "created_at",
        },
        {"type": "int16", "optional": False, "default": 0, "field": "visits"},
    ]
    mysql_first = with_fields(mysql, [], {}, {"pos": 100})
    mysql_second = with_fields(
        mysql, mysql_added, {"id": 1005, "created_at": "2026-11-28T10:00:00Z", "visits": 4}, {"pos": 200}
    )
    lines = [
        debezium_line(0, key, first),
        debezium_line(1, {**key, "payload": {"id": 2}}, second),
        debezium_line(2, mysql_key, mysql_first),
        debezium_line(3, {**mysql_key, "payload": {"id": 1005}}, mysql_second),
    ]
    warehouse = landed_debezium(spark, tmp_path, lines)
    for mode in ("view", "table"):
        rows = refreshed(warehouse, mode, "customer", "id, created, kind, level, stamped, _cdc_unavailable")
        assert rows == [
            (1, None, "x", 3, None, ["created", "stamped"]),
            (2, datetime(2026, 11, 28, 10, tzinfo=UTC), "y", 1, datetime(1970, 1, 1, 0, 0, 0, 1), None),
        ], mode
        rows = refreshed(warehouse, mode, "customers", "id, created_at, visits, _cdc_unavailable")
        assert rows == [
            (1004, None, 0, ["created_at"]),
            (1005, datetime(2026, 11, 28, 10, tzinfo=UTC), 4, None),
        ], mode


def test_a_postgresql_array_added_over_older_rows_is_unknown_there(spark, tmp_path):
    """PostgreSQL's connector declares no DEFAULT for an array column (`integer[] DEFAULT '{7}'` reaches the value
    schema without one; pinned by tests/kafka/test_debezium_connector_behaviour.py), so nothing tells one added with
    a default from one added without: older rows show NULL and name the column, where a scalar column the
    connector declares no default for shows NULL unnamed (it had none)."""
    postgres = json.loads(EVENTS[1]["value"])
    key = json.loads(EVENTS[1]["key"])
    added = [
        {"type": "array", "items": {"type": "int32", "optional": True}, "optional": True, "field": "labels"},
        {"type": "int32", "optional": True, "field": "level"},
    ]
    lines = [
        debezium_line(0, key, with_fields(postgres, [], {}, {"lsn": 100})),
        debezium_line(
            1,
            {**key, "payload": {"id": 2}},
            with_fields(postgres, added, {"id": 2, "labels": [7], "level": 1}, {"lsn": 200}),
        ),
    ]
    warehouse = landed_debezium(spark, tmp_path, lines)
    for mode in ("view", "table"):
        rows = refreshed(warehouse, mode, "customer", "id, labels, level, _cdc_unavailable")
        assert rows == [(1, None, None, ["labels"]), (2, [7], 1, None)], mode


def test_a_version_landed_before_defaults_were_converted_is_read_through_the_same_rules():
    """A description that records the defaults as the records carried them (`defaults`) is read as the sink
    reads a default now: the epoch Debezium wrote for now() is unknown, a literal stays."""
    from uniview.core.version_description import KEY

    described = json.dumps(
        {KEY: {"table": "t", "columns": [["id", "int"]], "defaults": {"s": "open", "c": "1970-01-01 00:00:00+00:00"}}}
    )
    assert described_defaults(described) == {"s": "open", "c": None}


COMPUTED = json.loads((Path(__file__).parent / "debezium_fixtures" / "postgres_computed_defaults.json").read_text())


def test_postgres_computed_defaults_as_debezium_sends_them(spark, tmp_path):
    """Debezium's own events (COMPUTED["origin"] says how they were captured): columns added with now() (a
    timestamptz and a NOT NULL timestamp), gen_random_uuid() and CURRENT_DATE reach the value schema as the
    epoch and the nil UUID, which older rows never show; 'x'::text, 3 and true are shown.  nextval() and
    CURRENT_TIME arrive as 0 and midnight, which nothing tells from the literals 0 and '00:00' (documented)."""
    lines = [
        debezium_line(n, json.loads(event["key"]), json.loads(event["value"]))
        for n, event in enumerate(COMPUTED["events"])
    ]
    warehouse = landed_debezium(spark, tmp_path, lines)
    [(comment,)] = query(
        warehouse, "SELECT comment FROM duckdb_tables() WHERE schema_name = 'cdc' AND comment LIKE '%uid%'"
    )
    recorded = described_defaults(comment)
    assert recorded == {
        "created": None,
        "stamped": None,
        "kind": "x",
        "level": "3",
        "seq": "0",
        "uid": None,
        "day": None,
        "opens": "00:00:00",
        "flag": "true",
    }
    columns = "id, created, stamped, kind, level, seq, uid, day, opens, flag, _cdc_unavailable"
    for mode in ("view", "table"):
        rows = refreshed(warehouse, mode, "item", columns)
        older = ["created", "stamped", "uid", "day"]
        assert rows[:2] == [(n, None, None, "x", 3, 0, None, None, time(0), True, older) for n in (1, 2)], mode
        assert rows[2][:2] == (3, datetime(2026, 11, 28, 14, 8, 9, 258832, tzinfo=UTC)) and rows[2][-1] is None


# How each source stores a declared default in the column's type (uniview.sink.default_values.stored_default), with
# the examples of the sources' documentation where it gives them, and what the live servers did.
STORED = [
    # (connector, source type, length, scale, default as the connector declares it, as the source stores it)
    # PostgreSQL's character types: `character(4)` holds 'ok' as 'ok  '; `varchar(5)` holds 'good      ' as 'good '
    ("postgresql", "BPCHAR", 4, 0, "ok", "ok  "),
    ("postgresql", "BPCHAR", 3, 0, "ab    ", "ab "),
    ("postgresql", "BPCHAR", 3, 0, "abcd", "abcd"),  # refused by PostgreSQL: no row holds it
    ("postgresql", "VARCHAR", 5, 0, "good      ", "good "),
    ("postgresql", "VARCHAR", 5, 0, "ok", "ok"),
    # timestamp(p), timestamptz(p), time(p): rounded, a tie away from 2000-01-01 (AdjustTimestampForTypmod)
    ("postgresql", "TIMESTAMP", 22, 0, "2021-05-06 07:08:09.500000", "2021-05-06 07:08:10"),
    ("postgresql", "TIMESTAMP", 22, 0, "1999-12-31 23:59:59.500000", "1999-12-31 23:59:59"),
    ("postgresql", "TIMESTAMP", 22, 0, "1999-12-31 23:59:59.500001", "2000-01-01 00:00:00"),
    ("postgresql", "TIMESTAMP", 26, 3, "2021-05-06 07:08:09.123500", "2021-05-06 07:08:09.124"),
    ("postgresql", "TIMESTAMPTZ", 28, 3, "2021-05-06 07:08:59.999600+00:00", "2021-05-06 07:09:00.000+00:00"),
    ("postgresql", "TIMESTAMP", 26, 6, "2021-05-06 07:08:09.123500", "2021-05-06 07:08:09.123500"),
    ("postgresql", "TIME", 8, 0, "07:08:09.500000", "07:08:10"),
    ("postgresql", "TIME", 8, 0, "23:59:59.500000", "24:00:00"),  # PostgreSQL's 24:00: no BigQuery TIME
    ("postgresql", "TIMESTAMP", 22, 0, "9999-12-31 23:59:59.500000", "9999-12-31 23:59:59.500000"),  # past DATETIME
    # numeric(p,s): rounded to s, ties away from zero (PostgreSQL's `round(42.5)` is 43)
    ("postgresql", "NUMERIC", 12, 0, "42.5", "43"),
    ("postgresql", "NUMERIC", 12, 2, "-1.555", "-1.56"),
    ("postgresql", "NUMERIC", 12, None, "1.555", "1.555"),  # numeric without a scale: as written
    # MariaDB's CHAR: 'Maria   ' reads back as 'Maria'
    ("mysql", "CHAR", 10, None, "Maria   ", "Maria"),
    ("mariadb", "CHAR", 5, None, "ab      ", "ab"),
    ("mysql", "VARCHAR", 10, None, "Maria   ", "Maria   "),
    # datetime(p), timestamp(p), time(p): cut to p (MySQL's manual inserts '2018-09-08 17:51:04.777' into DATETIME(2)
    # and rounds to .78; MariaDB, without TIME_ROUND_FRACTIONAL, keeps .77); p not declared is 0
    ("mysql", "DATETIME", 2, None, "2018-09-08 17:51:04.777000", "2018-09-08 17:51:04.77"),
    ("mysql", "TIME", 2, None, "17:51:04.777000", "17:51:04.77"),
    ("mysql", "TIMESTAMP", None, None, "2021-05-06 07:08:09.500000+00:00", "2021-05-06 07:08:09+00:00"),
    ("mysql", "DATETIME", 0, None, "2021-05-06 07:08:59.999999", "2021-05-06 07:08:59"),
    # DECIMAL: rounded half away from zero (MySQL's manual: 2.5 into DECIMAL(10,0) is 3)
    ("mysql", "DECIMAL", 10, 0, "2.5", "3"),
    ("mysql", "DECIMAL", 10, 0, "-2.5", "-3"),
    ("mysql", "DECIMAL", 6, 1, "-0.25", "-0.3"),
    # texts no rule reads, types no rule concerns, sources without rules: as they came
    ("postgresql", "TIMESTAMP", 22, 0, "CURRENT_TIMESTAMP", "CURRENT_TIMESTAMP"),
    ("postgresql", "NUMERIC", 12, 2, "NaN", "NaN"),
    ("postgresql", "TEXT", None, None, "x  ", "x  "),
    ("sqlserver", "CHAR", 5, None, "x", "x"),
]


@pytest.mark.parametrize(("connector", "name", "length", "scale", "declared", "stored"), STORED)
def test_a_default_is_stored_as_its_source_stores_it_in_the_column(connector, name, length, scale, declared, stored):
    assert stored_default(declared, connector, SourceColumnType(name, length, scale)) == stored


def propagated(field: dict, source_type: str, length: str | None = None, scale: str | None = None) -> dict:
    """A Connect field with the parameters `datatype.propagate.source.type` adds."""
    parameters = {"__debezium.source.column.type": source_type, "__debezium.source.column.name": field["field"]}
    if length is not None:
        parameters["__debezium.source.column.length"] = length
    if scale is not None:
        parameters["__debezium.source.column.scale"] = scale
    return {**field, "parameters": {**field.get("parameters", {}), **parameters}}


def test_debezium_defaults_are_stored_as_their_source_stores_them():
    """As the live connectors sent them (PostgreSQL's from the catalog, MariaDB's from the DDL of the binary log):
    each default reaches metadata.schema as the source stores it; without the propagated type, as sent."""
    timestamp = {"type": "int64", "optional": True, "name": "io.debezium.time.Timestamp", "version": 1}
    zoned = {"type": "string", "optional": True, "name": "io.debezium.time.ZonedTimestamp", "version": 1}
    micro_time = {"type": "int64", "optional": True, "name": "io.debezium.time.MicroTime", "version": 1}
    text = {"type": "string", "optional": True}
    cases = {
        "postgresql": [
            (propagated({**text, "field": "c", "default": "x"}, "BPCHAR", "5", "0"), "x    "),
            (
                propagated({**timestamp, "field": "t0", "default": 1620284889500}, "TIMESTAMP", "22", "0"),
                "2021-05-06 07:08:10",
            ),
            (
                propagated({**zoned, "field": "z3", "default": "2021-05-06T07:08:09.1235Z"}, "TIMESTAMPTZ", "28", "3"),
                "2021-05-06 07:08:09.124+00:00",
            ),
            ({**text, "field": "plain", "default": "x"}, "x"),
        ],
        "mysql": [
            (propagated({**text, "field": "c", "default": "ab    "}, "CHAR", "5"), "ab"),
            (propagated({**timestamp, "field": "t0", "default": 1620284889500}, "DATETIME"), "2021-05-06 07:08:09"),
            (propagated({**micro_time, "field": "h3", "default": 25689123500}, "TIME", "3"), "07:08:09.123"),
        ],
    }
    for connector, fields in cases.items():
        event = {
            "schema": {
                "type": "struct",
                "fields": [{"type": "struct", "field": "after", "fields": [f for f, _ in fields]}],
            },
            "payload": {"op": "c", "after": {}, "source": {"connector": connector, "db": "d", "table": "t"}},
        }
        entries = json.loads(convert_event(json.dumps(event)))["metadata"]["schema"]
        assert [entry["default"] for entry in entries] == [stored for _, stored in fields], connector
