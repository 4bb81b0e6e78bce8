"""Declared renames (uniview.core.renames): versions written before a rename expose the old column under the new
name, in `<table>_unified` and `<table>_current`, through a later type change, a re-added old name and a rename
back; a bad renames document is one clear error that changes nothing."""

from __future__ import annotations

import json

import duckdb
import pytest
from click.testing import CliRunner
from test_current_state import land

from uniview.cli.main import main
from uniview.core.errors import ConfigError
from uniview.core.renames import Rename, parse_renames
from uniview.warehouse.url import duckdb_url


def document(*renames: tuple[str, str]) -> str:
    return json.dumps({"uniview_renames": 1, "renames": [{"table": "t", "from": a, "to": b} for a, b in renames]})


def refresh(path, renames_file, *extra) -> list:
    result = CliRunner().invoke(
        main,
        ["refresh", "--warehouse", duckdb_url(path), "--dataset", "cdc", "--table", "t", "--current"]
        + (["--renames", str(renames_file)] if renames_file else [])
        + list(extra),
    )
    return result


def read(path, sql) -> list[tuple]:
    with duckdb.connect(str(path), read_only=True) as connection:
        return connection.execute(sql).fetchall()


def columns(path, view) -> list[str]:
    return [r[0] for r in read(path, f"DESCRIBE cdc_unified.{view}") if not r[0].startswith("_cdc_")]


def test_a_rename_reads_old_versions_under_the_new_name_through_a_type_change_and_a_readded_old_name(tmp_path):
    path = tmp_path / "w.duckdb"
    versions = {
        "t_v_a": [("id", "INT64"), ("memo", "STRING")],
        "t_v_b": [("id", "INT64"), ("note", "STRING")],  # RENAME COLUMN memo TO note
        "t_v_c": [("id", "INT64"), ("note", "STRING"), ("memo", "INT64")],  # ADD COLUMN memo (a new column)
        "t_v_d": [("id", "INT64"), ("note", "INT64"), ("memo", "INT64")],  # note becomes a number
    }
    changes = [
        ("t_v_a", "db1", "INSERT", {"id": 1, "memo": "one"}, None),
        ("t_v_a", "db1", "INSERT", {"id": 2, "memo": "two"}, None),
        ("t_v_b", "db1", "UPDATE", {"id": 2, "note": "two-b"}, None),
        ("t_v_c", "db1", "INSERT", {"id": 3, "note": "three", "memo": 3}, None),
        ("t_v_d", "db1", "INSERT", {"id": 4, "note": 4, "memo": 40}, None),
    ]
    land(path, versions, changes)
    renames = tmp_path / "renames.json"
    renames.write_text(document(("memo", "note")))
    result = refresh(path, renames)
    assert result.exit_code == 0, result.output
    assert columns(path, "t_unified") == ["id", "note", "memo"]
    assert read(path, "SELECT id, note, memo FROM cdc_unified.t_current ORDER BY id") == [
        (1, "one", None),
        (2, "two-b", None),
        (3, "three", 3),
        (4, "4", 40),
    ]
    assert read(path, "SELECT note FROM cdc_unified.t_unified ORDER BY _cdc_sequence") == [
        ("one",),
        ("two",),
        ("two-b",),
        ("three",),
        ("4",),
    ]


def test_a_rename_back_reads_every_version_under_the_name_of_today(tmp_path):
    path = tmp_path / "w.duckdb"
    versions = {
        "t_v_a": [("id", "INT64"), ("memo", "STRING")],
        "t_v_b": [("id", "INT64"), ("note", "STRING")],
        "t_v_c": [("id", "INT64"), ("memo", "STRING")],
    }
    changes = [
        ("t_v_a", "db1", "INSERT", {"id": 1, "memo": "a"}, None),
        ("t_v_b", "db1", "INSERT", {"id": 2, "note": "b"}, None),
        ("t_v_c", "db1", "INSERT", {"id": 3, "memo": "c"}, None),
    ]
    land(path, versions, changes)
    renames = tmp_path / "renames.json"
    renames.write_text(document(("memo", "note"), ("note", "memo")))
    assert refresh(path, renames).exit_code == 0
    assert columns(path, "t_current") == ["id", "memo"]
    assert read(path, "SELECT id, memo FROM cdc_unified.t_current ORDER BY id") == [(1, "a"), (2, "b"), (3, "c")]
    # without the renames, the history keeps the names as written: the views are replaced
    assert refresh(path, None).exit_code == 0
    assert columns(path, "t_current") == ["id", "memo", "note"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("not json", "not JSON"),
        ('{"renames": []}', '"uniview_renames": 1'),
        ('{"uniview_renames": 1, "renames": {}}', 'needs a list under "renames"'),
        ('{"uniview_renames": 1, "renames": [{"table": "t", "from": "a"}]}', 'exactly "table", "from" and "to"'),
        ('{"uniview_renames": 1, "renames": [{"table": "t", "from": "a", "to": "A"}]}', "renames 'a' to itself"),
        ('{"uniview_renames": 1, "renames": [{"table": "t", "from": "a.b", "to": "c"}]}', "invalid"),
        ('{"uniview_renames": 1, "renames": [{"table": "t", "from": "_cdc_x", "to": "c"}]}', "cannot be renamed"),
    ],
)
def test_a_bad_renames_document_is_one_error_naming_the_problem(text, message):
    with pytest.raises(ConfigError, match="--renames") as raised:
        parse_renames(text)
    assert message in str(raised.value)


def test_a_bad_renames_file_changes_nothing(tmp_path):
    path = tmp_path / "w.duckdb"
    land(path, {"t_v_a": [("id", "INT64"), ("memo", "STRING")]}, [("t_v_a", "db1", "INSERT", {"id": 1}, None)])
    renames = tmp_path / "renames.json"
    renames.write_text('{"uniview_renames": 2}')
    result = refresh(path, renames)
    assert result.exit_code == 1 and "uniview: error: --renames" in result.output
    assert read(path, "SELECT count(*) FROM duckdb_views() WHERE schema_name = 'cdc_unified'") == [(0,)]
    assert parse_renames(document(("a", "b"))) == (Rename("t", "a", "b"),)
