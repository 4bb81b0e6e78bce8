"""Families after the source's table renames (uniview.core.table_renames): each family of a lineage is made of
the segments of the version tables its changes were written to, under whatever name the table had then."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from uniview.core.renames import TableRename
from uniview.core.schema import TableVersion
from uniview.core.segments import NO_CHANGES, Lineage
from uniview.core.table_renames import family_segments


def renamed_families(
    families: Mapping[str, list[TableVersion]], lineages: Sequence[Lineage], ddl_tables: Sequence[str]
) -> dict[str, list[TableVersion]]:
    """`families` (name: versions in creation order) with the families of every lineage made of the segments
    of their sources; a family no change reaches has no versions and is left out."""
    renamed = frozenset().union(*(lineage.names for lineage in lineages))
    result = {name: versions for name, versions in families.items() if name not in renamed}
    for lineage in lineages:
        for family, sources in family_segments(lineage, families).items():
            members = [
                replace(version, family=family, segment=replace(segment, ddl_tables=tuple(ddl_tables)))
                for source, segment in sources
                for version in families[source]
            ]
            if members:
                result[family] = sorted(members, key=lambda version: (version.created, version.table_name))
    return result


def declared_families(
    families: Mapping[str, list[TableVersion]], renames: Sequence[TableRename]
) -> dict[str, list[TableVersion]]:
    """`families` with the declared table renames applied in order: every change of `old` is one of `new`'s, and
    `old` keeps its versions with none of their changes (its views show no row).  A version keeps the segment its
    changes already have (the renames read from the DDL, applied first: `renamed_families`), so a table renamed in
    one database's DDL and declared too gives each change to `new` once: the changes the DDL moved are `new`'s
    already, and those still `old`'s move now."""
    result = dict(families)
    for rename in renames:
        old = result.get(rename.old, [])
        moved = [replace(version, family=rename.new) for version in old]
        if old:
            result[rename.old] = [replace(version, segment=NO_CHANGES) for version in old]
        if moved:
            merged = _joined([*result.get(rename.new, []), *moved])
            result[rename.new] = sorted(merged, key=lambda version: (version.created, version.table_name))
    return result


def _joined(versions: Sequence[TableVersion]) -> list[TableVersion]:
    """`versions` with the segments of one version table in one lineage joined: its changes in either belong to the
    family (no version table is read twice)."""
    joined: dict[tuple[str, Lineage | None], TableVersion] = {}
    for version in versions:
        key = (version.table_name, version.segment.lineage if version.segment is not None else None)
        earlier = joined.get(key)
        if earlier is not None and earlier.segment is not None and version.segment is not None:
            states = tuple(sorted({*earlier.segment.states, *version.segment.states}))
            version = replace(earlier, segment=replace(earlier.segment, states=states))
        elif earlier is not None and earlier.segment is None:
            version = earlier  # every change already
        joined[key] = version
    return list(joined.values())


def lineage_tables(
    tables: Sequence[str] | None, lineages: Sequence[Lineage], control: str, declared: Sequence[TableRename] = ()
) -> tuple[str, ...] | None:
    """The tables to read for a refresh of `tables` (None: all): with the tables of each lineage one of them belongs
    to (or of every lineage, when the control table `control` is asked for) and the control table, where the
    renames are, and both names of each declared rename of one of them."""
    if tables is None:
        return None
    touched = [lineage for lineage in lineages if control in tables or lineage.names & set(tables)]
    names = [*tables, *sorted({name for lineage in touched for name in lineage.names}), *([control] if touched else [])]
    for rename in [*declared, *reversed(declared)]:
        if rename.new in names or rename.old in names:
            names += [rename.old, rename.new]
    return tuple(dict.fromkeys(names))
