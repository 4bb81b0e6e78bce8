"""Declared column renames: a version's column read under the name the source gives it now.

A rename is declared in uniview's renames document (JSON, versioned by its first key):

    {"uniview_renames": 1,
     "renames": [{"table": "customer", "from": "memo", "to": "note"},
                 {"table": "customer", "from": "note", "to": "memo"}]}

given to `uniview plan/refresh` and `uniview sink --notify inline` as `--renames FILE`, to the
Cloud Function as UNIVIEW_RENAMES (the document itself), and in Terraform as `renames`.

A table rename, `{"table": "orders", "to": "purchase"}`, reads every change written to `orders` as
`purchase`'s: the source (PostgreSQL, whose stream carries no DDL) renamed the table, and its changes
arrive under the new name from then on (uniview.planning.renamed_families).

The renames of a family apply in the order declared, before anything is planned.  A rename
`a -> b` names column `a` of a version `b` when that version has `a`, lacks `b`, and was created
before the family's first version that has `b` and lacks `a` (the first version written after
the rename; when none exists yet, every version).  Names match case-insensitively.  So the
versions written before the rename expose their `a` as `b`, in `<table>_unified` and
`<table>_current`, and the unified type of `b` covers both; a later version that adds a new
column `a` keeps it as `a`; a later type change of `b` is a version like any other; and a rename
back (`b -> a`, declared after `a -> b`) names every earlier version's column `a` again.
The recorded primary key, defaults and NOT NULL columns follow the rename, and the renamed column keeps
its name in the table (`Column.stored`): the changes written before the rename name it so in
`_cdc_unavailable`, where `<table>_current` looks a carried value up (uniview.current.view).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from uniview.core.errors import ConfigError, UniviewError
from uniview.core.identifiers import validate_column_name, validate_table
from uniview.core.landing_layout import CDC_PREFIX
from uniview.core.schema import Column, TableVersion

FORMAT_KEY = "uniview_renames"
FORMAT_VERSION = 1


@dataclass(frozen=True)
class Rename:
    """Column `old` of family `table` is now called `new`."""

    table: str
    old: str
    new: str


@dataclass(frozen=True)
class TableRename:
    """Table `old` is now called `new`: every change written to `old` is read as `new`'s."""

    old: str
    new: str


def parse_renames(text: str, setting: str = "--renames") -> tuple[Rename | TableRename, ...]:
    """The renames of a renames document; ConfigError naming `setting` and what is wrong."""
    try:
        document = json.loads(text)
    except ValueError as error:
        raise ConfigError(f"{setting}: not JSON ({error})") from None
    if not isinstance(document, dict) or document.get(FORMAT_KEY) != FORMAT_VERSION:
        raise ConfigError(
            f'{setting}: must be a JSON object starting {{"{FORMAT_KEY}": {FORMAT_VERSION}, "renames": [...]}}'
        )
    unknown = sorted(set(document) - {FORMAT_KEY, "renames"})
    entries = document.get("renames")
    if unknown or not isinstance(entries, list):
        raise ConfigError(f'{setting}: needs a list under "renames"{" and no other keys than it" if unknown else ""}')
    return tuple(_rename(entry, number, setting) for number, entry in enumerate(entries, start=1))


def _rename(entry: object, number: int, setting: str) -> Rename | TableRename:
    where = f"{setting}: rename {number}"
    if isinstance(entry, dict) and set(entry) == {"table", "to"}:
        return _table_rename(entry, where)
    if not isinstance(entry, dict) or set(entry) != {"table", "from", "to"}:
        raise ConfigError(
            f'{where} must be an object with exactly "table", "from" and "to" (a column), or "table" and "to" '
            "(the table)"
        )
    try:
        table = validate_table(entry["table"], "table")
        old, new = (validate_column_name(entry[key], f'"{key}" column') for key in ("from", "to"))
    except UniviewError as error:
        raise ConfigError(f"{where}: {error}") from None
    if old.lower() == new.lower():
        raise ConfigError(f"{where}: renames {old!r} to itself")
    if any(name.lower().startswith(CDC_PREFIX) for name in (old, new)):
        raise ConfigError(f"{where}: the {CDC_PREFIX} columns are uniview's and cannot be renamed")
    return Rename(table, old, new)


def _table_rename(entry: dict, where: str) -> TableRename:
    try:
        old, new = (validate_table(entry[key], f'"{key}" table') for key in ("table", "to"))
    except UniviewError as error:
        raise ConfigError(f"{where}: {error}") from None
    if old == new:
        raise ConfigError(f"{where}: renames table {old!r} to itself")
    return TableRename(old, new)


def read_renames_file(path: str | None) -> tuple[Rename | TableRename, ...]:
    """The renames of the document at `path` (None: no renames)."""
    if path is None:
        return ()
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except OSError as error:
        raise ConfigError(f"--renames: cannot read {path}: {error.strerror}") from None
    return parse_renames(text, f"--renames {path}")


def apply_renames(versions: Sequence[TableVersion], renames: Iterable[Rename | TableRename]) -> list[TableVersion]:
    """The family's versions (in creation order) with the column renames of its family applied, in order."""
    result = list(versions)
    family = result[0].family if result else None
    for rename in (r for r in renames if isinstance(r, Rename) and r.table == family):
        old, new = rename.old.lower(), rename.new.lower()
        boundary = next((n for n, v in enumerate(result) if _has(v, new) and not _has(v, old)), len(result))
        result = [
            _renamed(v, rename) if n < boundary and _has(v, old) and not _has(v, new) else v
            for n, v in enumerate(result)
        ]
    return result


def _has(version: TableVersion, lowered: str) -> bool:
    return any(column.name.lower() == lowered for column in version.columns)


def _renamed(version: TableVersion, rename: Rename) -> TableVersion:
    def name(text: str) -> str:
        return rename.new if text.lower() == rename.old.lower() else text

    columns = tuple(
        Column(rename.new, c.type, c.stored or c.name) if c.name.lower() == rename.old.lower() else c
        for c in version.columns
    )
    return replace(
        version,
        columns=columns,
        primary_key=tuple(map(name, version.primary_key)) if version.primary_key else version.primary_key,
        defaults=tuple((name(column), value) for column, value in version.defaults),
        not_null=tuple(map(name, version.not_null)),
    )
