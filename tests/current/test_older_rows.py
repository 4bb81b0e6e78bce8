"""The default a row older than a column shows in a database that dropped the column and added it again is the
one of the version it entered then (uniview.current.older_rows), not the column's first version's.

MariaDB 10.11 and PostgreSQL 15 show what each case expects (the generative test's seed 900 found the first);
the first two are cases the life's first version got wrong.  Each runs with both policies and both kinds of
`<table>_current` (a view, a table); tests/zetasql/test_zetasql_older_rows.py evaluates them in GoogleSQL's
reference implementation."""

from __future__ import annotations

import shutil
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

    def land(self, path, first: int | None = None) -> None:
        """Land the changes (the first `first` of them only, when given)."""
        land(path, self.versions, self.changes[:first], defaults=self.defaults)

    def land_rest(self, path, first: int) -> None:
        land(path, self.versions, self.changes[first:], defaults=self.defaults, after=first)


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
    # db1 entered the life at its second version (no write between the ADD and the MODIFY), then dropped c and
    # added it again as int: it came back (it had a change in the life before), so its older rows hold NULL;
    # telling so takes the oldest change of t_v_b, not only its newest
    "a database coming back to the version it entered at": Case(
        VERSIONS,
        DEFAULTS,
        [
            ("t_v_p", "db1", "INSERT", {"id": 1}, None),
            ("t_v_a", "db2", "INSERT", {"id": 1, "c": True}, None),
            ("t_v_b", "db1", "INSERT", {"id": 2, "c": 5}, None),
            ("t_v_p", "db1", "INSERT", {"id": 3}, None),
            ("t_v_b", "db1", "INSERT", {"id": 4, "c": 8}, None),
        ],
        [("db1", 1, None), ("db1", 2, None), ("db1", 3, None), ("db1", 4, "8"), ("db2", 1, "true")],
    ),
}


@pytest.mark.parametrize(("policy", "mode"), MODES)
@pytest.mark.parametrize("case", list(CASES))
def test_older_rows_show_the_default_of_the_version_the_column_was_added_with(tmp_path, case, policy, mode):
    path = tmp_path / "w.duckdb"
    CASES[case].land(path)
    assert sorted(current(path, policy, mode, "_cdc_database, id, c")) == CASES[case].expected


@pytest.mark.parametrize("case", list(CASES))
def test_the_current_table_keeps_the_version_entered_across_refreshes(tmp_path, case):
    """The changes land one at a time, the table refreshed after each (maintained, not rebuilt): its facts keep
    each version's oldest change, so after every refresh its rows equal the view's over the same rows (one
    policy: which version a database entered does not depend on it)."""
    policy = "uniview"
    path, copy = tmp_path / "w.duckdb", tmp_path / "copy.duckdb"
    chosen = CASES[case]
    chosen.land(path, first=1)
    for landed in range(1, len(chosen.changes) + 1):
        if landed > 1:
            land(path, chosen.versions, chosen.changes[landed - 1 : landed], defaults=chosen.defaults, after=landed - 1)
        table = sorted(current(path, policy, "table", "_cdc_database, id, c"))
        shutil.copyfile(path, copy)
        assert table == sorted(current(copy, policy, "view", "_cdc_database, id, c")), landed
    assert table == chosen.expected
