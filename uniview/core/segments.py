"""Which changes of a version table belong to its family once tables were renamed: the lineage of renames it went
through and the states of its database in which a change stays (uniview.core.table_renames reads them from the
source's DDL; uniview.planning.segments renders them as SQL)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass


@dataclass(frozen=True)
class Lineage:
    """The renames a lineage's tables went through: the distinct statement texts, and the statements (each
    the moves it makes, in order) in the order every database runs them."""

    texts: tuple[str, ...]
    statements: tuple[tuple[tuple[str, str], ...], ...]
    #: Where each database ran them ((database, _cdc_sequence) of each statement): a current table kept from
    #: the family's changes is built again when one more database renames (uniview.current.table's state).
    positions: tuple[tuple[str, str], ...]

    @property
    def key(self) -> str:
        """What the lineage is: its statements and where each database ran them."""
        text = json.dumps([self.texts, self.positions], separators=(",", ":"))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]

    def family_of(self, name: str, before: int, done: int) -> str:
        """The family a change of table `name` belongs to, in a database that has run `done` of the renames,
        `before` of them before the change."""
        for statement in self.statements[before:done]:
            for old, new in statement:
                if name == old:
                    name = new
        return name

    def states(self, name: str, family: str) -> tuple[int, ...]:
        """The states (`done * (renames + 1) + before`) in which a change of table `name` belongs to `family`."""
        count = len(self.statements)
        return tuple(
            done * (count + 1) + before
            for done in range(count + 1)
            for before in range(done + 1)
            if self.family_of(name, before, done) == family
        )

    @property
    def names(self) -> frozenset[str]:
        return frozenset(name for statement in self.statements for move in statement for name in move)


@dataclass(frozen=True)
class Segment:
    """The changes of a version table that belong to a family: those in one of `states` of `lineage`."""

    lineage: Lineage
    states: tuple[int, ...]
    #: The version tables of the control table `_uniview_ddl`, where the views look the renames up.
    ddl_tables: tuple[str, ...] = ()


#: The segment of a table none of whose changes stays with it: declared renamed (uniview.core.renames.TableRename).
NO_CHANGES = Segment(Lineage((), (), ()), ())
