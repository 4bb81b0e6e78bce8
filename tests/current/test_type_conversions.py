"""A type change that converts the values older rows hold: `<table>_current` shows them as the source converted them.

The changes are those the generative migration test drew (tests/kafka/test_generative_migrations.py): a row
written before `MODIFY c datetime(6) -> date`, `double -> decimal(12,2)`, `decimal(38,10) -> decimal(12,2)`,
`boolean -> int`, `text -> varchar(20)`, and not written since.  The expected values are what MariaDB 10.11 and
PostgreSQL 15 show after the same statements (docs/current-state.md#type-changes-that-convert-older-rows), written
out by hand.  Each case runs with both policies and both kinds of `<table>_current` (a view, a table)."""

from __future__ import annotations

from dataclasses import replace
from datetime import date, datetime
from decimal import Decimal

import duckdb
import pytest
from click.testing import CliRunner
from test_current_state import land

from uniview.cli.main import main
from uniview.core.schema import Column, TableVersion
from uniview.core.types import INT64, STRING, Scalar
from uniview.current.conversions import converted_value
from uniview.warehouse.url import duckdb_url

MODES = [(policy, current) for policy in ("widen", "uniview") for current in ("view", "table")]


def current(path, policy: str, mode: str, columns: str = "id, c") -> list[tuple]:
    arguments = ["refresh", "--warehouse", duckdb_url(path), "--dataset", "cdc", "--table", "t"]
    result = CliRunner().invoke(main, [*arguments, "--policy", policy, "--current", mode])
    assert result.exit_code == 0, result.output
    with duckdb.connect(str(path), read_only=True) as connection:
        return connection.execute(f"SELECT {columns} FROM cdc_unified.t_current ORDER BY id").fetchall()


def typed(values: list, policy: str, unified_is_text: bool) -> list:
    """The values as `<table>_current` types them: as text when the policy unifies the two types to STRING."""
    if not (unified_is_text or policy == "uniview"):
        return values
    return [None if v is None else (str(v).lower() if isinstance(v, bool) else str(v)) for v in values]


def changed(path, before: str, after: str, old_values: list, new_value) -> None:
    """Rows 1.. written in version a (c of type `before`), then a type change to `after` and a write of one more
    row in version b (which carries the new schema)."""
    versions = {"t_v_a": [("id", "INT64"), ("c", before)], "t_v_b": [("id", "INT64"), ("c", after)]}
    changes = [("t_v_a", "db1", "INSERT", {"id": n, "c": v}, None) for n, v in enumerate(old_values, 1)]
    changes.append(("t_v_b", "db1", "INSERT", {"id": 100, "c": new_value}, None))
    land(path, versions, changes)


@pytest.mark.parametrize(("policy", "mode"), MODES)
def test_datetime_to_date_drops_the_time_of_day_even_past_half_a_second_before_midnight(tmp_path, policy, mode):
    path = tmp_path / "w.duckdb"
    old = [datetime(2024, 6, 30, 12, 0, 0, 500000), datetime(9999, 12, 31, 23, 59, 59, 999999), None]
    changed(path, "DATETIME", "DATE", old, date(2020, 1, 1))
    shown = [c for _, c in current(path, policy, mode)]
    if policy == "widen":  # DATE < DATETIME: the unified type is DATETIME
        assert shown == [datetime(2024, 6, 30), datetime(9999, 12, 31), None, datetime(2020, 1, 1)]
    else:
        assert shown == ["2024-06-30", "9999-12-31", None, "2020-01-01"]


@pytest.mark.parametrize(("policy", "mode"), MODES)
def test_double_to_decimal_rounds_half_away_from_zero_at_the_new_scale(tmp_path, policy, mode):
    path = tmp_path / "w.duckdb"
    old = [0.125, 2.675, 0.1, -0.125, 1.005, -2.2250738585072014e-308, 1234567.125]
    changed(path, "FLOAT64", "NUMERIC(12, 2)", old, Decimal("7.50"))
    shown = [c for _, c in current(path, policy, mode)]
    expected = ["0.13", "2.68", "0.10", "-0.13", "1.01", "0.00", "1234567.13", "7.50"]  # MariaDB and PostgreSQL
    if policy == "widen":  # NUMERIC < FLOAT64: the unified type is FLOAT64
        assert shown == [float(v) for v in expected]
    else:
        assert [Decimal(v) for v in shown] == [Decimal(v) for v in expected]


@pytest.mark.parametrize(("policy", "mode"), MODES)
def test_a_narrower_decimal_rounds_half_away_from_zero(tmp_path, policy, mode):
    path = tmp_path / "w.duckdb"
    old = [Decimal("-0.0000000001"), Decimal("0.005"), Decimal("-0.005"), Decimal("1.235"), Decimal("-1.245")]
    changed(path, "BIGNUMERIC(38, 10)", "NUMERIC(12, 2)", old, Decimal("3.14"))
    shown = [Decimal(str(c)) for _, c in current(path, policy, mode)]
    assert shown == [Decimal(v) for v in ("0.00", "0.01", "-0.01", "1.24", "-1.25", "3.14")]


@pytest.mark.parametrize(("policy", "mode"), MODES)
def test_boolean_to_int_is_one_and_zero(tmp_path, policy, mode):
    path = tmp_path / "w.duckdb"
    changed(path, "BOOL", "INT64", [True, False, None], 7)
    shown = [c for _, c in current(path, policy, mode)]
    assert shown == ["1", "0", None, "7"]  # BOOL with INT64 unifies to STRING in both policies


@pytest.mark.parametrize(("policy", "mode"), MODES)
def test_a_decimal_to_text_keeps_every_digit_of_its_scale(tmp_path, policy, mode):
    """PostgreSQL's `numeric(12,2)` -> `numeric` (Debezium: a STRING of its exact text) or `text`, and MariaDB's
    `decimal(12,2)` -> `varchar`, write 1.50, 10.00, -0.01: the scale's digits, not BigQuery's CAST's 1.5."""
    path = tmp_path / "w.duckdb"
    old = [Decimal("1.5"), Decimal("10"), Decimal("-0.01"), None, Decimal("9999999999.99"), Decimal("0")]
    changed(path, "NUMERIC(12, 2)", "STRING", old, "0.00000010")
    shown = [c for _, c in current(path, policy, mode)]
    assert shown == ["1.50", "10.00", "-0.01", None, "9999999999.99", "0.00", "0.00000010"]


def test_text_to_a_shorter_varchar_keeps_its_first_characters_where_the_versions_record_the_length():
    """PostgreSQL's text::varchar(20) cuts a longer text (MariaDB refuses the change); versions that declare the
    length (BigQuery's STRING(20), or a description's `varchar(20)` where DuckDB's VARCHAR keeps none) show the
    cut; versions without it do not see the change (docs/current-state.md)."""
    versions = [
        TableVersion("t_v_a", "t", "a", 1.0, (Column("id", INT64), Column("c", STRING))),
        TableVersion("t_v_b", "t", "b", 2.0, (Column("id", INT64), Column("c", Scalar("STRING", (20,))))),
    ]
    value = converted_value("c", versions, "c", STRING)
    assert value == "CASE WHEN (_uniview_version = 0) AND (_uniview_newest = 1) THEN SUBSTR(c, 1, 20) ELSE c END"
    same = [versions[0], replace(versions[1], columns=(Column("id", INT64), Column("c", STRING)))]
    assert converted_value("c", same, "c", STRING) == "c"


@pytest.mark.parametrize(("policy", "mode"), MODES)
def test_a_row_written_after_the_change_and_a_database_still_at_the_old_version_keep_their_values(
    tmp_path, policy, mode
):
    path = tmp_path / "w.duckdb"
    versions = {"t_v_a": [("id", "INT64"), ("c", "DATETIME")], "t_v_b": [("id", "INT64"), ("c", "DATE")]}
    noon = datetime(2024, 6, 30, 12, 0)
    changes = [
        ("t_v_a", "db1", "INSERT", {"id": 1, "c": noon}, None),
        ("t_v_a", "db2", "INSERT", {"id": 1, "c": noon}, None),  # db2 never changed the type
        ("t_v_b", "db1", "INSERT", {"id": 2, "c": date(2020, 1, 1)}, None),
    ]
    land(path, versions, changes)
    shown = current(path, policy, mode, "_cdc_database, id, c")
    noon_shown, midnight = (noon, datetime(2024, 6, 30)) if policy == "widen" else (str(noon), "2024-06-30")
    first = datetime(2020, 1, 1) if policy == "widen" else "2020-01-01"
    assert sorted(shown, key=repr) == sorted(
        [("db1", 1, midnight), ("db1", 2, first), ("db2", 1, noon_shown)], key=repr
    )


@pytest.mark.parametrize(("policy", "mode"), MODES)
def test_two_type_changes_convert_at_each(tmp_path, policy, mode):
    """datetime -> date -> datetime: the source truncated at the first change, and the second keeps the date."""
    path = tmp_path / "w.duckdb"
    versions = {
        "t_v_a": [("id", "INT64"), ("c", "DATETIME")],
        "t_v_b": [("id", "INT64"), ("c", "DATE")],
        "t_v_c": [("id", "INT64"), ("c", "DATETIME")],
    }
    changes = [
        ("t_v_a", "db1", "INSERT", {"id": 1, "c": datetime(2024, 6, 30, 12, 0)}, None),
        ("t_v_b", "db1", "INSERT", {"id": 2, "c": date(2020, 1, 1)}, None),
        ("t_v_c", "db1", "INSERT", {"id": 3, "c": datetime(2021, 5, 6, 7, 8, 9)}, None),
    ]
    land(path, versions, changes)
    shown = [c for _, c in current(path, policy, mode)]
    expected = [datetime(2024, 6, 30), datetime(2020, 1, 1), datetime(2021, 5, 6, 7, 8, 9)]
    assert shown == (expected if policy == "widen" else [str(v) for v in expected])


@pytest.mark.parametrize("policy", ["widen", "uniview"])
def test_the_current_table_converts_its_stored_rows_when_a_new_version_brings_the_change(tmp_path, policy):
    """The table was kept before the change; the change's version arrives in a later refresh: the stored rows of
    its database are presented again, converted, and another database's are left as they were."""
    path = tmp_path / "w.duckdb"
    noon = datetime(2024, 6, 30, 12, 0)
    before = [("t_v_a", db, "INSERT", {"id": 1, "c": noon}, None) for db in ("db1", "db2")]
    land(path, {"t_v_a": [("id", "INT64"), ("c", "DATETIME")]}, before)
    assert sorted(current(path, policy, "table", "_cdc_database, id, c")) == [("db1", 1, noon), ("db2", 1, noon)]
    # positions restart at the first change of a landing: the new version's change comes last in db1's log
    later = [("t_v_b", "db1", "INSERT", {"id": 2, "c": date(2020, 1, 1)}, None) for _ in range(len(before) + 1)]
    land(path, {"t_v_b": [("id", "INT64"), ("c", "DATE")]}, later)
    midnight, first = (datetime(2024, 6, 30), datetime(2020, 1, 1))
    expected = [("db1", 1, midnight), ("db1", 2, first), ("db2", 1, noon)]
    if policy == "uniview":
        expected = [(db, key, str(value.date()) if db == "db1" else str(value)) for db, key, value in expected]
    assert sorted(current(path, policy, "table", "_cdc_database, id, c")) == expected


@pytest.mark.parametrize(("policy", "mode"), MODES)
@pytest.mark.parametrize(
    ("added", "default", "after", "expected"),
    [
        # MariaDB: ADD COLUMN c boolean DEFAULT false, MODIFY c int: the older rows hold 0
        ("BOOL", "false", "INT64", {"widen": "0", "uniview": "0"}),
        # ADD COLUMN c datetime DEFAULT '2024-06-30 12:00:00', MODIFY c date: the older rows hold the date
        ("DATETIME", "2024-06-30 12:00:00", "DATE", {"widen": datetime(2024, 6, 30), "uniview": "2024-06-30"}),
        # ADD COLUMN c numeric(12,2) DEFAULT 1.5, ALTER COLUMN c TYPE numeric: the older rows hold 1.50
        ("NUMERIC(12, 2)", "1.5", "STRING", {"widen": "1.50", "uniview": "1.50"}),
    ],
)
def test_the_default_rows_older_than_the_column_show_is_converted_by_a_later_type_change(
    tmp_path, policy, mode, added, default, after, expected
):
    """Row 1 is older than column c, which the source filled with c's default when it was added; a type change
    then converted it, as it converted every value (found by the generative test, seed 7: `boolean DEFAULT false`
    then `MODIFY int` showed 'false' where MariaDB shows 0)."""
    path = tmp_path / "w.duckdb"
    versions = {
        "t_v_a": [("id", "INT64")],
        "t_v_b": [("id", "INT64"), ("c", added)],
        "t_v_c": [("id", "INT64"), ("c", after)],
    }
    changes = [("t_v_a", "db1", "INSERT", {"id": 1}, None), ("t_v_c", "db1", "INSERT", {"id": 2, "c": None}, None)]
    land(path, versions, changes, defaults={"t_v_b": {"c": default}})
    assert current(path, policy, mode) == [(1, expected[policy]), (2, None)]
