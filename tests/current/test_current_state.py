"""`<table>_current` is the source table now: unavailable values carried, rows read as of their database's
newest version (dropped, added, and dropped-then-added columns), TRUNCATE, composite keys and key updates.
Each case lands its changes by hand in DuckDB version tables and compares the view with what the source
table holds after those statements, written out by hand."""

from __future__ import annotations

from datetime import UTC, date, datetime

import duckdb
import pytest
from click.testing import CliRunner

from uniview.cli.main import main
from uniview.core.landing_layout import CDC_COLUMNS
from uniview.core.types import parse_type
from uniview.core.version_description import version_description
from uniview.sink.sequence import sequence_of
from uniview.warehouse.duckdb_types import duckdb_type
from uniview.warehouse.url import duckdb_url

#: A change at the same place in the log as the change before it.
AT_PREVIOUS = "at the previous change's position"


def change_rows(changes: list[tuple], after: int = 0) -> list[tuple[str, dict]]:
    """(version table, row) per change of `changes` (as `land` takes them), with the CDC columns."""
    rows, position = [], ""
    for number, (table, database, operation, values, unavailable, *at) in enumerate(changes, after):
        position = position if at == [AT_PREVIOUS] else f"mysql-bin.000001:{1000 + number}"
        cdc = {"_cdc_operation": operation, "_cdc_position": position, "_cdc_database": database}
        rows.append((table, {**values, **cdc, "_cdc_sequence": sequence_of(position), "_cdc_unavailable": unavailable}))
    return rows


def land(
    path,
    versions: dict[str, list[tuple[str, str]]],
    changes: list[tuple],
    key=("id",),
    defaults=None,
    not_null=None,
    after: int = 0,
) -> None:
    """`versions`: {table: [(column, BigQuery type)]} in creation order; `changes`: (table, database,
    operation, {column: value}, unavailable columns or None[, AT_PREVIOUS]), in log order (their position is their
    index, or the previous change's with AT_PREVIOUS: a primary-key UPDATE's delete and create share one);
    `defaults`: {table: {column: declared default}}.  With `after`, the version tables exist and the changes
    follow `after` changes landed before."""
    with duckdb.connect(str(path)) as connection:
        connection.execute("SET TimeZone='UTC'")
        connection.execute("CREATE SCHEMA IF NOT EXISTS cdc")
        for table, columns in versions.items() if not after else ():
            every = columns + list(CDC_COLUMNS)
            connection.execute(
                f"CREATE TABLE cdc.{table} ({', '.join(f'{c} {duckdb_type(parse_type(t))}' for c, t in every)})"
            )
            declared = (defaults or {}).get(table)
            required = (not_null or {}).get(table, ())
            description = version_description("t", columns, key, declared, required).replace("'", "''")
            connection.execute(f"COMMENT ON TABLE cdc.{table} IS '{description}'")
        for table, row in change_rows(changes, after):
            names = list(row)
            connection.execute(
                f"INSERT INTO cdc.{table} ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})",
                [row[n] for n in names],
            )


def current(path, columns: str, key=("id",), mode: str | None = None) -> list[tuple]:
    """`uniview refresh --current [MODE]`, then `columns` of `t_current` with each row's database."""
    arguments = ["refresh", "--warehouse", duckdb_url(path), "--dataset", "cdc", "--table", "t", "--current"]
    result = CliRunner().invoke(main, [*arguments, *([mode] if mode else [])])
    assert result.exit_code == 0, result.output
    with duckdb.connect(str(path), read_only=True) as connection:
        return connection.execute(
            f"SELECT _cdc_database, {columns} FROM cdc_unified.t_current ORDER BY ALL NULLS FIRST"
        ).fetchall()


def unified_count(path) -> int:
    with duckdb.connect(str(path), read_only=True) as connection:
        return connection.execute("SELECT count(*) FROM cdc_unified.t_unified").fetchone()[0]


V1 = [("id", "INT64"), ("name", "STRING"), ("doc", "STRING")]


def test_an_unavailable_value_shows_the_last_value_its_key_sent_in_its_database(tmp_path):
    path = tmp_path / "w.duckdb"
    changes = [
        ("t_v_a", "db1", "INSERT", {"id": 1, "name": "a", "doc": "big"}, None),
        ("t_v_a", "db1", "UPDATE", {"id": 1, "name": "a2", "doc": None}, ["doc"]),
        ("t_v_a", "db1", "UPDATE", {"id": 1, "name": "a3", "doc": None}, ["doc"]),
        ("t_v_a", "db1", "INSERT", {"id": 2, "name": "b", "doc": "x"}, []),
        ("t_v_a", "db1", "UPDATE", {"id": 2, "name": "b", "doc": None}, []),  # set to NULL: NULL is a value
        ("t_v_a", "db1", "UPDATE", {"id": 2, "name": "b2", "doc": None}, ["doc"]),
        ("t_v_a", "db2", "UPDATE", {"id": 1, "name": "c", "doc": None}, ["doc"]),  # nothing earlier in db2
        ("t_v_a", "db1", "UPDATE", {"id": 3, "name": None, "doc": "kept"}, ["name"]),
    ]
    land(path, {"t_v_a": V1}, changes)
    assert current(path, "id, name, doc") == [
        ("db1", 1, "a3", "big"),
        ("db1", 2, "b2", None),
        ("db1", 3, None, "kept"),
        ("db2", 1, "c", None),
    ]


ANOTHER_ROW_OF_THE_KEY = [
    ("t_v_a", "db1", "INSERT", {"id": 2, "name": "gone", "doc": "before truncate"}, None),
    ("t_v_a", "db1", "TRUNCATE", {}, None),
    ("t_v_a", "db1", "INSERT", {"id": 1, "name": "a", "doc": "big"}, None),
    ("t_v_a", "db1", "DELETE", {"id": 1, "name": None, "doc": None}, None),  # UPDATE ... SET id = 2
    ("t_v_a", "db1", "INSERT", {"id": 2, "name": "a", "doc": None}, ["doc"]),
    ("t_v_a", "db2", "INSERT", {"id": 4, "name": "old", "doc": "old row"}, None),
    ("t_v_a", "db2", "DELETE", {"id": 4, "name": "old", "doc": "old row"}, None),  # identity FULL then
    ("t_v_a", "db2", "INSERT", {"id": 3, "name": "b", "doc": "big"}, None),
    ("t_v_a", "db2", "DELETE", {"id": 3, "name": None, "doc": None}, None),  # UPDATE ... SET id = 4
    ("t_v_a", "db2", "INSERT", {"id": 4, "name": "b", "doc": None}, ["doc"]),
    ("t_v_a", "db2", "UPDATE", {"id": 4, "name": "b2", "doc": None}, ["doc"]),  # still the moved row's
    ("t_v_a", "db3", "INSERT", {"id": 5, "name": "c", "doc": "kept"}, None),
    ("t_v_a", "db3", "UPDATE", {"id": 5, "name": "c2", "doc": None}, ["doc"]),  # carried within the row
]


@pytest.mark.parametrize("mode", ["view", "table"])
def test_a_value_is_never_carried_from_another_row_of_the_same_key(tmp_path, mode):
    """A create starts a new row: a value it did not send is not carried from an earlier row of its key.  A
    primary-key UPDATE of a row with an unchanged TOASTed value is a create that leaves it out; the key it
    moves to may have held another row before a TRUNCATE (which writes no delete per key), or before a delete
    whose old row carried the value (REPLICA IDENTITY FULL at the time).  The source holds the moved row's value,
    which the stream never sent: NULL, named in `_cdc_unavailable`, never the other row's (docs/current-state.md)."""
    path = tmp_path / "w.duckdb"
    land(path, {"t_v_a": V1}, ANOTHER_ROW_OF_THE_KEY)
    assert current(path, "id, name, doc, _cdc_unavailable", mode=mode) == [
        ("db1", 2, "a", None, ["doc"]),
        ("db2", 4, "b2", None, ["doc"]),
        ("db3", 5, "c2", "kept", ["doc"]),
    ]


def key_change(database: str, old: int, new: int, name: str, doc=None, left_out=("doc",)) -> list:
    """A primary-key UPDATE as Debezium sends it: the old key's delete (its key only: REPLICA IDENTITY DEFAULT)
    and the new key's create, at one place in the log; the create leaves out the TOASTed `doc` it did not change."""
    return [
        ("t_v_a", database, "DELETE", {"id": old, "name": None, "doc": None}, None),
        ("t_v_a", database, "INSERT", {"id": new, "name": name, "doc": doc}, list(left_out), AT_PREVIOUS),
    ]


KEY_CHANGES = [
    # db1: a chain of two key changes, with an UPDATE that left the value out before it and one after it
    ("t_v_a", "db1", "INSERT", {"id": 1, "name": "a", "doc": "big"}, None),
    ("t_v_a", "db1", "UPDATE", {"id": 1, "name": "a2", "doc": None}, ["doc"]),
    *key_change("db1", 1, 2, "a2"),
    *key_change("db1", 2, 3, "a2"),
    ("t_v_a", "db1", "UPDATE", {"id": 3, "name": "a3", "doc": None}, ["doc"]),
    # db2: the old key's row began before the stream did (nothing sent): not known
    *key_change("db2", 7, 8, "h"),
    # db2: the value sent last, by an UPDATE, moves; the old key holds a new row afterwards, which changes nothing
    ("t_v_a", "db2", "INSERT", {"id": 4, "name": "d", "doc": "x"}, None),
    ("t_v_a", "db2", "UPDATE", {"id": 4, "name": "d", "doc": "y"}, []),
    *key_change("db2", 4, 5, "d"),
    ("t_v_a", "db2", "INSERT", {"id": 4, "name": "again", "doc": "new"}, None),
    # db2: a value set to NULL is a value
    ("t_v_a", "db2", "INSERT", {"id": 9, "name": "n", "doc": "z"}, None),
    ("t_v_a", "db2", "UPDATE", {"id": 9, "name": "n", "doc": None}, []),
    *key_change("db2", 9, 10, "n"),
    # db3: a key change whose create sent the value (changed), then one that left it out
    ("t_v_a", "db3", "INSERT", {"id": 1, "name": "p", "doc": "p"}, None),
    *key_change("db3", 1, 2, "q", doc="q", left_out=()),
    *key_change("db3", 2, 3, "q"),
    # db3: the new key held another row before, the old key's value is the one shown
    ("t_v_a", "db3", "INSERT", {"id": 11, "name": "r", "doc": "r"}, None),
    ("t_v_a", "db3", "INSERT", {"id": 12, "name": "s", "doc": "s"}, None),
    ("t_v_a", "db3", "DELETE", {"id": 12, "name": None, "doc": None}, None),
    *key_change("db3", 11, 12, "r"),
    # db4: two deletes at one place in the log (no source writes that): which row moved is not known
    ("t_v_a", "db4", "INSERT", {"id": 1, "name": "u", "doc": "u"}, None),
    ("t_v_a", "db4", "INSERT", {"id": 2, "name": "w", "doc": "w"}, None),
    *key_change("db4", 2, 3, "w"),
    ("t_v_a", "db4", "DELETE", {"id": 1, "name": None, "doc": None}, None, AT_PREVIOUS),
]


#: (database, id, name, doc, _cdc_unavailable) of `t_current` after KEY_CHANGES, as the source table holds them.
KEY_CHANGES_CURRENT = [
    ("db1", 3, "a3", "big", ["doc"]),
    ("db2", 4, "again", "new", None),
    ("db2", 5, "d", "y", ["doc"]),
    ("db2", 8, "h", None, ["doc"]),  # not known
    ("db2", 10, "n", None, ["doc"]),
    ("db3", 3, "q", "q", ["doc"]),
    ("db3", 12, "r", "r", ["doc"]),
    ("db4", 3, "w", None, ["doc"]),  # not known
]


def test_a_key_change_shows_the_value_the_moved_row_held(tmp_path):
    """A primary-key UPDATE of a row whose TOASTed value it left unchanged is a delete and a create at one place
    in the log, the create leaving the value out: the new key shows what the old key's row held before the delete,
    through chains of key changes; NULL where that is not known.  `_cdc_unavailable` is the latest change's list."""
    path = tmp_path / "w.duckdb"
    land(path, {"t_v_a": V1}, KEY_CHANGES)
    assert current(path, "id, name, doc, _cdc_unavailable") == KEY_CHANGES_CURRENT


def test_a_chain_of_key_changes_is_followed_up_to_its_bound(tmp_path, monkeypatch):
    """Past LINK_DEPTH key changes in a row, the value is not known: NULL, named (BigQuery stops a recursive
    query at 500 iterations with an error, so the view never follows a chain further than its bound)."""
    monkeypatch.setattr("uniview.current.view.LINK_DEPTH", 3)
    path = tmp_path / "w.duckdb"
    changes = [("t_v_a", "db1", "INSERT", {"id": 1, "name": "a", "doc": "big"}, None)]
    changes += [("t_v_a", "db2", "INSERT", {"id": 1, "name": "b", "doc": "big"}, None)]
    for step in range(1, 4):
        changes += key_change("db1", step, step + 1, "a")
    for step in range(1, 5):
        changes += key_change("db2", step, step + 1, "b")
    land(path, {"t_v_a": V1}, changes)
    assert current(path, "id, doc") == [("db1", 4, "big"), ("db2", 5, None)]


def test_rows_are_read_as_of_their_databases_newest_version(tmp_path):
    path = tmp_path / "w.duckdb"
    versions = {
        "t_v_a": V1,
        "t_v_b": [("id", "INT64"), ("name", "STRING")],  # DROP COLUMN doc
        "t_v_c": [("id", "INT64"), ("name", "STRING"), ("doc", "STRING")],  # ADD COLUMN doc again
        "t_v_d": [("id", "INT64"), ("name", "STRING"), ("doc", "STRING"), ("status", "STRING")],  # ADD status
    }
    changes = [
        ("t_v_a", "db1", "INSERT", {"id": 1, "name": "a", "doc": "old"}, None),
        ("t_v_a", "db1", "INSERT", {"id": 2, "name": "b", "doc": "old"}, None),
        ("t_v_a", "db2", "INSERT", {"id": 1, "name": "a", "doc": "kept"}, None),  # db2 never dropped doc
        ("t_v_b", "db1", "UPDATE", {"id": 2, "name": "b2"}, None),
        ("t_v_b", "db3", "INSERT", {"id": 1, "name": "z"}, None),  # db3 is at the version without doc
        ("t_v_a", "db3", "INSERT", {"id": 2, "name": "y", "doc": "late"}, None),  # ... then back at doc's
        ("t_v_c", "db1", "INSERT", {"id": 3, "name": "c", "doc": "new"}, None),
        ("t_v_d", "db1", "UPDATE", {"id": 3, "name": "c", "doc": "new", "status": "open"}, None),
        ("t_v_d", "db1", "INSERT", {"id": 4, "name": "d", "doc": None, "status": "s"}, None),
    ]
    land(path, versions, changes)
    assert current(path, "id, name, doc, status") == [
        ("db1", 1, "a", None, None),  # written before doc was dropped and added again: the source has NULL
        ("db1", 2, "b2", None, None),
        ("db1", 3, "c", "new", "open"),
        ("db1", 4, "d", None, "s"),
        ("db2", 1, "a", "kept", None),  # db2 is still at the first version
        ("db3", 1, "z", None, None),  # written without doc, before doc came back
        ("db3", 2, "y", "late", None),
    ]
    assert unified_count(path) == len(changes)


def test_truncate_empties_its_database_and_the_history_keeps_every_row(tmp_path):
    path = tmp_path / "w.duckdb"
    changes = [
        ("t_v_a", "db1", "INSERT", {"id": 1, "name": "a", "doc": None}, None),
        ("t_v_a", "db1", "INSERT", {"id": 2, "name": "b", "doc": None}, None),
        ("t_v_a", "db2", "INSERT", {"id": 1, "name": "other", "doc": None}, None),
        ("t_v_a", "db1", "TRUNCATE", {}, None),
        ("t_v_a", "db1", "INSERT", {"id": 2, "name": "after", "doc": None}, None),
    ]
    land(path, {"t_v_a": V1}, changes)
    assert current(path, "id, name") == [("db1", 2, "after"), ("db2", 1, "other")]
    assert unified_count(path) == len(changes)


def test_a_composite_key_and_a_key_update(tmp_path):
    path = tmp_path / "w.duckdb"
    key = ("a", "b")
    columns = [("a", "INT64"), ("b", "STRING"), ("v", "STRING")]
    changes = [
        ("t_v_a", "db1", "INSERT", {"a": 1, "b": "x", "v": "1x"}, None),
        ("t_v_a", "db1", "INSERT", {"a": 1, "b": "y", "v": "1y"}, None),
        ("t_v_a", "db1", "INSERT", {"a": 2, "b": "x", "v": "2x"}, None),
        # UPDATE ... SET b = 'z' WHERE a = 2: Debezium sends a delete of the old key (and a tombstone) and a create
        ("t_v_a", "db1", "DELETE", {"a": 2, "b": "x", "v": "2x"}, None),
        ("t_v_a", "db1", "INSERT", {"a": 2, "b": "z", "v": "2x"}, None),
        ("t_v_a", "db1", "UPDATE", {"a": 1, "b": "y", "v": "1y-upd"}, None),
    ]
    land(path, {"t_v_a": columns}, changes, key)
    assert current(path, "a, b, v", key) == [("db1", 1, "x", "1x"), ("db1", 1, "y", "1y-upd"), ("db1", 2, "z", "2x")]


def test_a_column_added_with_a_default_shows_it_for_older_rows_per_database(tmp_path):
    path = tmp_path / "w.duckdb"
    v1 = [("id", "INT64"), ("name", "STRING")]
    v2 = [*v1, ("status", "STRING"), ("n", "INT64"), ("since", "DATE")]  # ADD COLUMN ... DEFAULT
    v3 = [*v1, ("status", "STRING"), ("n", "STRING"), ("since", "DATE")]  # n becomes text
    versions = {"t_v_a": v1, "t_v_b": v2, "t_v_c": v3}
    defaults = {
        "t_v_b": {"status": "open", "n": 7, "since": "2024-01-31"},
        "t_v_c": {"status": "open", "n": "7", "since": "2024-01-31"},
    }
    changes = [
        ("t_v_a", "db1", "INSERT", {"id": 1, "name": "a"}, None),
        ("t_v_a", "db2", "INSERT", {"id": 1, "name": "a"}, None),
        ("t_v_a", "db3", "INSERT", {"id": 1, "name": "a"}, None),
        ("t_v_b", "db1", "INSERT", {"id": 2, "name": "b", "status": "closed", "n": 1, "since": None}, None),
        ("t_v_c", "db3", "INSERT", {"id": 2, "name": "b", "status": None, "n": "x", "since": None}, None),
    ]
    land(path, versions, changes, defaults=defaults)
    assert current(path, "id, name, status, n, since") == [
        ("db1", 1, "a", "open", "7", date(2024, 1, 31)),  # older than the column: its default
        ("db1", 2, "b", "closed", "1", None),  # written with the column: its value, NULL included
        ("db2", 1, "a", None, None, None),  # db2 is still at the version without the columns
        ("db3", 1, "a", "open", "7", date(2024, 1, 31)),
        ("db3", 2, "b", None, "x", None),
    ]


def test_a_default_that_cannot_be_known_is_null_and_named_in_cdc_unavailable(tmp_path):
    """ADD COLUMN stamp timestamptz NOT NULL DEFAULT now(): the connector carries no default, so the older rows'
    value is not known; the view shows NULL and names the column in the row's `_cdc_unavailable`."""
    path = tmp_path / "w.duckdb"
    v1 = [("id", "INT64"), ("name", "STRING")]
    v2 = [*v1, ("stamp", "TIMESTAMP"), ("kind", "STRING"), ("tags", "ARRAY<STRING>")]
    changes = [
        ("t_v_a", "db1", "INSERT", {"id": 1, "name": "a"}, ["name"]),
        ("t_v_a", "db1", "INSERT", {"id": 2, "name": "b"}, None),
        ("t_v_b", "db1", "INSERT", {"id": 3, "name": "c", "stamp": "2024-05-01 10:00:00+00", "kind": "k"}, None),
    ]
    land(
        path,
        {"t_v_a": v1, "t_v_b": v2},
        changes,
        defaults={"t_v_b": {"tags": ["x"]}},
        not_null={"t_v_b": ["stamp", "kind"]},
    )
    # ids 1 and 2 predate the three columns: stamp and kind have no known default, tags's (["x"]) no literal
    assert current(path, "id, stamp, kind, tags, _cdc_unavailable") == [
        ("db1", 1, None, None, None, ["name", "stamp", "kind", "tags"]),
        ("db1", 2, None, None, None, ["stamp", "kind", "tags"]),
        ("db1", 3, datetime(2024, 5, 1, 10, tzinfo=UTC), "k", None, None),
    ]


#: ADD COLUMN n smallint DEFAULT -5 and tag DEFAULT 'x' (t_v_b); MariaDB's MODIFY n int without the DEFAULT and
#: MODIFY tag with DEFAULT 'y' (t_v_c: the same places); DROP n and ADD n int DEFAULT 9 (t_v_d: n appended).
RESTATED = {
    "t_v_a": [("id", "INT64"), ("name", "STRING")],
    "t_v_b": [("id", "INT64"), ("name", "STRING"), ("n", "INT64"), ("tag", "STRING")],
    "t_v_c": [("id", "INT64"), ("name", "STRING"), ("n", "INT64"), ("tag", "STRING")],
    "t_v_d": [("id", "INT64"), ("name", "STRING"), ("tag", "STRING"), ("n", "INT64")],
}
RESTATED_DEFAULTS = {"t_v_b": {"n": -5, "tag": "x"}, "t_v_c": {"tag": "y"}, "t_v_d": {"n": 9, "tag": "y"}}
RESTATED_CHANGES = [
    ("t_v_a", "db1", "INSERT", {"id": 1, "name": "a"}, None),
    ("t_v_b", "db1", "INSERT", {"id": 2, "name": "b", "n": 1, "tag": "b"}, None),
    ("t_v_c", "db1", "INSERT", {"id": 3, "name": "c", "n": 2, "tag": "c"}, None),
    ("t_v_a", "db3", "INSERT", {"id": 1, "name": "a"}, None),
    ("t_v_b", "db3", "INSERT", {"id": 2, "name": "b", "n": 3, "tag": "t"}, None),
    ("t_v_d", "db3", "INSERT", {"id": 3, "name": "c", "tag": "u", "n": 4}, None),
]


@pytest.mark.parametrize("mode", ["view", "table"])
def test_older_rows_show_the_default_the_column_was_added_with_not_a_later_versions(tmp_path, mode):
    """A type change that restates the column with another default, or none, leaves the rows older than the
    column as the source filled them when it was added; a DROP and ADD fills them again, with the new default."""
    path = tmp_path / "w.duckdb"
    land(path, RESTATED, RESTATED_CHANGES, defaults=RESTATED_DEFAULTS)
    assert current(path, "id, n, tag, _cdc_unavailable", mode=mode) == [
        ("db1", 1, -5, "x", None),  # older than n and tag: their defaults in t_v_b, not t_v_c's (none, 'y')
        ("db1", 2, 1, "b", None),
        ("db1", 3, 2, "c", None),
        ("db3", 1, 9, "x", None),  # n dropped and added again with DEFAULT 9: every older row has 9
        ("db3", 2, 9, "t", None),
        ("db3", 3, 4, "u", None),
    ]


@pytest.mark.parametrize("mode", ["view", "table"])
def test_an_unknown_default_stays_unknown_after_a_type_change_restates_the_column(tmp_path, mode):
    """stamp added NOT NULL DEFAULT now() (no default the stream carries), then restated with a literal
    default: the older rows still hold the value now() gave them, which is not known.  k added with DEFAULT 7,
    then restated NOT NULL without one: the older rows still hold 7."""
    path = tmp_path / "w.duckdb"
    v1 = [("id", "INT64"), ("name", "STRING")]
    v2 = [*v1, ("stamp", "TIMESTAMP"), ("k", "INT64")]
    changes = [
        ("t_v_a", "db1", "INSERT", {"id": 1, "name": "a"}, None),
        ("t_v_b", "db1", "INSERT", {"id": 2, "name": "b", "stamp": "2024-05-01 10:00:00+00", "k": 1}, None),
        ("t_v_c", "db1", "INSERT", {"id": 3, "name": "c", "stamp": "2024-05-02 10:00:00+00", "k": 2}, None),
    ]
    defaults = {"t_v_b": {"k": 7}, "t_v_c": {"stamp": "2024-01-01 00:00:00+00:00"}}
    land(path, {"t_v_a": v1, "t_v_b": v2, "t_v_c": v2}, changes, defaults=defaults, not_null={"t_v_b": ["stamp"]})
    assert current(path, "id, stamp, k, _cdc_unavailable", mode=mode) == [
        ("db1", 1, None, 7, ["stamp"]),
        ("db1", 2, datetime(2024, 5, 1, 10, tzinfo=UTC), 1, None),
        ("db1", 3, datetime(2024, 5, 2, 10, tzinfo=UTC), 2, None),
    ]


@pytest.mark.parametrize("mode", ["view", "table"])
def test_a_source_column_named_like_the_current_states_own_columns_is_one_clear_error(tmp_path, mode):
    """`<table>_current` computes `_uniview_place`, `_uniview_gone_N`, ...: a source column of that prefix would
    be read in their place.  The refresh says so for that family, and still keeps its unified view."""
    path = tmp_path / "w.duckdb"
    versions = {"t_v_a": [("id", "INT64"), ("_uniview_place", "STRING")]}
    land(path, versions, [("t_v_a", "db1", "INSERT", {"id": 1, "_uniview_place": "x"}, None)])
    arguments = ["refresh", "--warehouse", duckdb_url(path), "--dataset", "cdc", "--table", "t", "--current", mode]
    result = CliRunner().invoke(main, arguments)
    assert result.exit_code == 1
    assert "column '_uniview_place' starts with _uniview_, which t_current uses" in " ".join(result.output.split())
    with duckdb.connect(str(path), read_only=True) as connection:
        assert connection.execute("SELECT id, _uniview_place FROM cdc_unified.t_unified").fetchall() == [(1, "x")]
        tables = connection.execute("SELECT table_name FROM information_schema.tables WHERE table_name = 't_current'")
        assert tables.fetchall() == []


def test_the_current_table_follows_a_key_change_as_the_view_does(tmp_path):
    """`--current table` shows what the view shows after key changes, built whole or kept step by step, whatever
    the order the changes arrive in: a maintenance whose changes hold a key change's create, a delete a create
    waits for, or a change older than a key change of its key rebuilds the table (docs/current-state.md)."""
    path = tmp_path / "w.duckdb"
    land(path, {"t_v_a": V1}, KEY_CHANGES)
    assert current(path, "id, name, doc, _cdc_unavailable", mode="table") == KEY_CHANGES_CURRENT
