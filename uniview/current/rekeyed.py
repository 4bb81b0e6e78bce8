"""The rows `<table>_current` reads when a family's primary key was redefined: each run of versions that records
another key than the newest version is reduced to the rows its key held at its end, and those rows go on under
the next run's key, so the current rules key every row by the newest key.

A source that redefines its key (`DROP PRIMARY KEY, ADD PRIMARY KEY (code)`) changes no row: the rows last
written under the old key are what the table held then, one per old key (deleted keys left out, TRUNCATEs kept,
as they hide what came before them).  Read under the new key, they are carried over as the source holds them;
the changes after the redefinition, keyed by the new key, come after them.  Without this, the newest key would
partition the old rows too, and an old change of a column that is now the key would show as a row of its own.
"""

from __future__ import annotations

from collections.abc import Sequence

from uniview.core import landing_layout as layout
from uniview.core.identifiers import identifier, string_literal
from uniview.core.render import render
from uniview.core.schema import TableVersion
from uniview.current.order import database_key, ordering_key


def key_runs(versions: Sequence[TableVersion]) -> list[tuple[tuple[str, ...], list[TableVersion]]]:
    """The versions (in family order) grouped into runs of one recorded key (lowercased), oldest run first."""
    runs: list[tuple[tuple[str, ...], list[TableVersion]]] = []
    for version in versions:
        key = tuple(name.lower() for name in version.primary_key or ())
        if runs and runs[-1][0] == key:
            runs[-1][1].append(version)
        else:
            runs.append((key, [version]))
    return runs


def rekeyed_source(unified: str, versions: Sequence[TableVersion], spelled: dict[str, str], version_column: str) -> str:
    """`unified` (a quoted view path) itself when every version records the newest version's key; else a subquery
    over it with the same columns: the rows of the newest key's run, and the rows the runs before it held at their
    end (`spelled`: lowercased unified column name -> its spelling)."""
    runs = key_runs(versions)
    if len(runs) == 1:
        return unified
    version = identifier(version_column)

    def among(run: list[TableVersion]) -> str:
        return f"{version} IN ({', '.join(string_literal(v.table_name) for v in run)})"

    return render(
        "current_rekeyed.sql.j2",
        unified=unified,
        runs=[(among(run), [identifier(spelled[name]) for name in key]) for key, run in runs[:-1]],
        newest=among(runs[-1][1]),
        place=ordering_key(),
        database_key=database_key(),
        operation=identifier(layout.OPERATION),
    )
