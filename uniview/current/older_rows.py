"""What `<table>_current` shows for a column in a row older than the column: the default the source filled
the row with when the column was added (converted by every type change since), NULL when it declared none, or
NULL named in `_cdc_unavailable` when the default cannot be known.

The default is the one recorded by the version that added the column: the life's first version (a database
that enters the life at a later version is taken to have run the migrations that made the first, as the
databases of a fleet do, whether or not it wrote in between), except in a database that left the life and came
back (it had changes in the life's versions before its last change in a version lacking the column,
`_uniview_gone_N`): the column was added again, and its default is the one of the version the database entered
then.  That version may be one the life already had: `ADD c boolean DEFAULT false`, `MODIFY c int`, `DROP c`,
`ADD c int` gives the second version's shape again, and rows older than the last ADD hold NULL, not 0.  Only
for columns where the version matters does the plan compute, per database, `_uniview_entered_N`: from per
(database, version) spans (the oldest and newest change), the version of the oldest change among the life's
versions that have changes after the gone point, so it is a min/max fact the current table keeps too.  What
the stream cannot tell (docs/current-state.md): a database that added the column with another declaration than
the life's first version, and one that came back through another version of the life first.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from uniview.core.default_literals import default_literal, default_text
from uniview.core.resolve import convert, null_of
from uniview.core.schema import TableVersion
from uniview.core.types import BQType
from uniview.current.conversions import among, converted_defaults

#: {newest version number: the value a row older than the column shows}, and whether it is unknown.
_Shown = tuple[tuple[tuple[int, str], ...], bool]


@dataclass(frozen=True)
class OlderRows:
    """Column `name`'s rule for rows older than it, over the view's `_uniview_newest`, `_uniview_gone_N`
    and (when `entered` is not empty) `_uniview_entered_N`."""

    #: The value such a row shows, in the column's unified type.
    value: str
    #: The condition that the value is unknown (the column is then named in `_cdc_unavailable`); None: never.
    unknown: str | None
    #: (_uniview_entered_N[_L], an aggregate over version spans joined with the database's gone points).
    entered: tuple[tuple[str, str], ...]


def older_rows(
    versions: Sequence[TableVersion],
    lives: Sequence[Sequence[int]],
    name: str,
    bq_type: BQType,
    gone: Sequence[str],
) -> OlderRows:
    """The rule of column `name` (unified type `bq_type`) whose `lives` (uniview.current.view._lives) have the
    gone points named `gone` (one per life)."""
    shown = [{entry: _shown(versions, life, entry, name, bq_type) for entry in life} for life in lives]
    if all(len(set(entries.values())) == 1 for entries in shown):  # entered anywhere, the same: the first
        firsts = [entries[life[0]] for life, entries in zip(lives, shown, strict=True)]
        unknown = [n for life, (_, is_unknown) in zip(lives, firsts, strict=True) if is_unknown for n in life]
        value = _by_newest([pair for pairs, _ in firsts for pair in pairs], bq_type)
        return OlderRows(value, among("_uniview_newest", unknown) if unknown else None, ())
    names = [g.replace("_uniview_gone_", "_uniview_entered_", 1) for g in gone]
    entered = of_newest(names, lives)
    digits = len(str(len(versions)))
    groups: dict[_Shown, list[int]] = {}
    for entries in shown:
        for entry, result in entries.items():
            groups.setdefault(result, []).append(entry)
    whens = [
        f"WHEN {among(entered, entries)} THEN {_by_newest(pairs, bq_type)}"
        for (pairs, _), entries in groups.items()
        if pairs
    ]
    unknown = [entry for (_, is_unknown), entries in groups.items() if is_unknown for entry in entries]
    return OlderRows(
        f"CASE {' '.join(whens)} END" if whens else null_of(bq_type),
        among(entered, unknown) if unknown else None,
        tuple((n, _entered_aggregate(life, g, digits)) for n, life, g in zip(names, lives, gone, strict=True)),
    )


def of_newest(names: Sequence[str], lives: Sequence[Sequence[int]]) -> str:
    """The one of `names` (one per life) of the life the database's newest version is in (the last life when it
    is unknown)."""
    if len(names) == 1:
        return names[0]
    whens = " ".join(
        f"WHEN {among('_uniview_newest', life)} THEN {name}" for name, life in zip(names, lives, strict=True)
    )
    return f"(CASE {whens} ELSE {names[-1]} END)"


def _entered_aggregate(life: Sequence[int], gone: str, digits: int) -> str:
    """The number of the version of `life` whose default the database's rows older than the column show: when it
    had changes in the life's versions before its gone point `gone` (it left the life and came back: the column
    was added again), the version it entered after `gone`: of the life's versions with a change after it, the
    one whose oldest change is oldest; else the life's first version (it added the column with the migration
    that made that version, as every database of a fleet does, whether or not it wrote in between).  Each
    span's `_uniview_min` and `_uniview_max` are ordering keys: prefix-free, so a key with text appended sorts
    as the key; `_uniview_version_text` is the version's number as text of `digits` digits."""
    in_life = among("_uniview_version", life)
    pair = "CONCAT(_uniview_min, ' ', _uniview_version_text)"
    entered = f"CAST(SUBSTR(MIN(IF({in_life} AND _uniview_max > {gone}, {pair}, NULL)), -{digits}) AS INT64)"
    returned = f"MAX(IF({in_life} AND _uniview_min < {gone}, 1, 0)) = 1"
    return f"IF({returned}, {entered}, {life[0]})"


def _by_newest(pairs: Sequence[tuple[int, str]], bq_type: BQType) -> str:
    whens = " ".join(f"WHEN {number} THEN {value}" for number, value in pairs)
    return f"CASE _uniview_newest {whens} END" if whens else null_of(bq_type)


def _shown(versions: Sequence[TableVersion], life: Sequence[int], entry: int, name: str, bq_type: BQType) -> _Shown:
    """What a row older than column `name` shows, per newest version of `life`, in a database that entered the
    life at version `entry`: the default `entry` records, cast to the unified type; a type change converts it
    as it converts every value (uniview.current.conversions: `tinyint(1) DEFAULT 0` then `MODIFY int` shows 0,
    not FALSE).  A later version's default (a type change restating the column with another default, or none)
    does not change the rows the source filled when the column was added."""
    literal, own, unknown = added_default(versions[entry], name)
    if literal is None:
        return (), unknown
    value = literal if own == bq_type else convert(literal, own, bq_type)
    converted = converted_defaults(literal, versions, name, bq_type, entry)
    return tuple((number, converted.get(number, value)) for number in life), unknown


def added_default(adding: TableVersion, name: str) -> tuple[str | None, BQType, bool]:
    """The default of column `name` in `adding` (the version that added it) as a typed literal of its own type (None
    when it declares none or the default is unknown), that type, and whether the default is unknown: NOT NULL
    without a default the stream carried (a volatile default such as now()), or a default no literal can write."""
    recorded = {n.lower(): text for n, text in adding.defaults}
    own = next(c.type.base() for c in adding.columns if c.name.lower() == name.lower())
    if name.lower() not in recorded:
        return None, own, name.lower() in {n.lower() for n in adding.not_null}
    literal = _literal(json.loads(recorded[name.lower()]), own)
    return literal, own, literal is None


def _literal(value: Any, bq_type: BQType) -> str | None:
    """A recorded default (as JSON gives it: the sink's canonical text, null when unknown, or what a version
    landed before the sink converted defaults recorded) as a typed literal of its column's type, a constant
    no query fails on (uniview.core.default_literals); None when it is unknown."""
    text = default_text(value)
    return None if text is None else default_literal(text, bq_type)
