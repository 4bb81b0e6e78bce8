"""The current table's one sortable ordering string sorts exactly like the current view's ORDER BY.

Random change tuples (`_cdc_sequence`, `_cdc_timestamp`, `_cdc_ingested_at`, `_cdc_position`,
`_cdc_operation`, NULLs included, texts that are prefixes of one another or hold any character) are
ranked on DuckDB twice: by the view's `newest_first` and by `ordering_key()` descending, both through
the translation every view body takes.  The ranks must be the same for every row: ties included.
"""

from __future__ import annotations

import datetime as dt

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from uniview.core.types import parse_type
from uniview.current.order import newest_first_order, ordering_key
from uniview.warehouse.duckdb_sql import to_duckdb
from uniview.warehouse.duckdb_types import duckdb_type

_COLUMNS = {
    "_cdc_sequence": "STRING",
    "_cdc_timestamp": "TIMESTAMP",
    "_cdc_ingested_at": "TIMESTAMP",
    "_cdc_position": "STRING",
    "_cdc_operation": "STRING",
}
_TEXT = st.one_of(
    st.none(),
    st.text(alphabet="0123456789", max_size=6),  # digits of several widths: prefixes of one another
    st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\x00"), max_size=4),
)
_MOMENT = st.one_of(
    st.none(),
    st.sampled_from(
        [dt.datetime(1, 1, 1, tzinfo=dt.UTC), dt.datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=dt.UTC)]
    ),
    st.datetimes(min_value=dt.datetime(1, 1, 1), max_value=dt.datetime(9999, 12, 31), timezones=st.just(dt.UTC)),
    st.sampled_from(
        [dt.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=dt.UTC), dt.datetime(1970, 1, 1, tzinfo=dt.UTC)]
    ),
)
_CHANGE = st.tuples(
    _TEXT, _MOMENT, _MOMENT, _TEXT, st.sampled_from([None, "INSERT", "UPDATE", "DELETE", "SNAPSHOT", "TRUNCATE"])
)


@pytest.fixture(scope="module")
def connection():
    with duckdb.connect() as connection:
        connection.execute("SET TimeZone='UTC'")
        connection.execute("CREATE SCHEMA cdc")
        columns = ", ".join(f"{name} {duckdb_type(parse_type(kind))}" for name, kind in _COLUMNS.items())
        connection.execute(f"CREATE TABLE cdc.changes (n INTEGER, {columns})")
        yield connection


def _types(dataset: str, table: str) -> dict:
    return {name: parse_type(kind) for name, kind in _COLUMNS.items()} if table == "changes" else None


_RANKS = to_duckdb(
    f"SELECT n, RANK() OVER (ORDER BY {', '.join(newest_first_order())}) AS by_view, "
    f"RANK() OVER (ORDER BY {ordering_key()} DESC) AS by_key FROM cdc.changes",
    _types,
)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(_CHANGE, min_size=2, max_size=12))
def test_the_ordering_string_ranks_changes_as_the_view_orders_them(connection, changes):
    connection.execute("DELETE FROM cdc.changes")
    connection.executemany(
        "INSERT INTO cdc.changes VALUES (?, ?, ?, ?, ?, ?)", [[n, *change] for n, change in enumerate(changes)]
    )
    ranks = connection.execute(_RANKS).fetchall()
    assert [(n, by_view) for n, by_view, _ in sorted(ranks)] == [(n, by_key) for n, _, by_key in sorted(ranks)], changes
