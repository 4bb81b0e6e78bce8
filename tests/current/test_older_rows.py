"""The default a row older than a column shows in a database that dropped the column and added it again is the
one of the version it entered then (uniview.current.older_rows), not the column's first version's.

MariaDB 10.11 and PostgreSQL 15 show what each case expects (the generative test's seed 900 found the first);
the first two are cases the life's first version got wrong.  Each runs with both policies and both kinds of
`<table>_current` (a view, a table); tests/zetasql/test_zetasql_older_rows.py evaluates them in GoogleSQL's
reference implementation."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from test_current_state import land
from test_type_conversions import MODES, current

#: ADD COLUMN c boolean DEFAULT false (t_v_a), then MODIFY c int without a default (t_v_b).
VERSIONS = {
    "t_v_p": [("id", "INT64")],
    "t_v_a": [("id", "INT64"), ("c", "BOOL")],
    "t_v_b": [("id", "INT64"), ("c", "INT64")],
}
DEFAULTS = {"t_v_a": {"c": "false"}}


@dataclass(frozen=True)
class Case:
    versions: dict[str, list[tuple[str, str]]]
    defaults: dict[str, dict[str, str]]
    #: (version table, database, operation, values, unavailable), in log order.
    changes: list[tuple]
    #: (database, id, c as text): `<table>_current`, sorted.
    expected: list[tuple]

    def land(self, path) -> None:
        land(path, self.versions, self.changes, defaults=self.defaults)


CASES = {
    # ADD c boolean DEFAULT false, MODIFY c int, DROP c, ADD c int: the last shape is t_v_b again, and every row
    # older than the last ADD holds NULL (before: 0, the life's first default, converted)
    "added again with an earlier version's shape": Case(
        VERSIONS,
        DEFAULTS,
        [
            ("t_v_p", "db1", "INSERT", {"id": 1}, None),
            ("t_v_a", "db1", "INSERT", {"id": 2, "c": True}, None),
            ("t_v_b", "db1", "INSERT", {"id": 3, "c": 5}, None),
            ("t_v_p", "db1", "INSERT", {"id": 4}, None),  # DROP c: the first version's shape again
            ("t_v_b", "db1", "INSERT", {"id": 5, "c": 7}, None),  # ADD c int: t_v_b's shape again
        ],
        [("db1", 1, None), ("db1", 2, None), ("db1", 3, None), ("db1", 4, None), ("db1", 5, "7")],
    ),
    # ... ADD c int DEFAULT 9: c is the last column, so the new shape keeps its place (one life), and the sources
    # fill every older row with 9 (before: 0)
    "added again in place with another default": Case(
        {**VERSIONS, "t_v_d": [("id", "INT64"), ("c", "INT64")]},
        {**DEFAULTS, "t_v_d": {"c": "9"}},
        [
            ("t_v_p", "db1", "INSERT", {"id": 1}, None),
            ("t_v_a", "db1", "INSERT", {"id": 2, "c": True}, None),
            ("t_v_b", "db1", "INSERT", {"id": 3, "c": 5}, None),
            ("t_v_p", "db1", "INSERT", {"id": 4}, None),
            ("t_v_d", "db1", "INSERT", {"id": 5, "c": 7}, None),
        ],
        [("db1", 1, "9"), ("db1", 2, "9"), ("db1", 3, "9"), ("db1", 4, "9"), ("db1", 5, "7")],
    ),
    # db2 ran db1's two migrations without a write in between, so its first change with c is in the second
    # version: its older row holds 0 (the life's first version's default, converted); db1 then drops c and adds
    # it again as int, so its older rows hold NULL
    "a database entering the life later, another coming back": Case(
        VERSIONS,
        DEFAULTS,
        [
            ("t_v_p", "db1", "INSERT", {"id": 1}, None),
            ("t_v_p", "db2", "INSERT", {"id": 1}, None),
            ("t_v_a", "db1", "INSERT", {"id": 2, "c": True}, None),
            ("t_v_b", "db1", "INSERT", {"id": 3, "c": 5}, None),
            ("t_v_b", "db2", "INSERT", {"id": 2, "c": 6}, None),
            ("t_v_p", "db1", "INSERT", {"id": 4}, None),
            ("t_v_b", "db1", "INSERT", {"id": 5, "c": 8}, None),
        ],
        [*[("db1", n, None) for n in range(1, 5)], ("db1", 5, "8"), ("db2", 1, "0"), ("db2", 2, "6")],
    ),
}


@pytest.mark.parametrize(("policy", "mode"), MODES)
@pytest.mark.parametrize("case", list(CASES))
def test_older_rows_show_the_default_of_the_version_the_column_was_added_with(tmp_path, case, policy, mode):
    path = tmp_path / "w.duckdb"
    CASES[case].land(path)
    assert sorted(current(path, policy, mode, "_cdc_database, id, c")) == CASES[case].expected
