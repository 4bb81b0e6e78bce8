"""The schema-version spec: which version table a record's declared schema belongs to.

A version is lowercase letters and digits, at most 16 characters.  A producer may send its own
(`metadata.table_version`, used as is); otherwise the version is computed from the table name
and the declared source columns, so every producer that implements this spec lands the same
schema in the same table:

    canonical = json.dumps({"table": table_name, "columns": [[name, type], ...]},
                           separators=(",", ":"), ensure_ascii=False)
    version   = sha256(canonical.encode("utf-8")).hexdigest()[:12]

`type` is the declared source type lowercased with every whitespace character removed
(`VARCHAR(255) ` -> `varchar(255)`, `int(10) unsigned` -> `int(10)unsigned`); column names and
the table name are used exactly as declared.  CDC metadata columns are not part of the hash.

A primary key is not part of it either, but for one case: a record declaring another key than the
table of its version (a key redefined in the source, the columns unchanged) lands in the version whose
canonical text also holds that key, `{"table": ..., "columns": ..., "primary_key": [name, ...]}`
(names as declared), so one version keeps one key.

Defaults and nullability are not part of it either, but for one case too: a record declaring other defaults
or another nullability than the version's table records (a column dropped and added again with another
default, the columns otherwise as before) lands in the version whose canonical text also holds its
declarations, `"declared": [[name, default, volatile, nullable], ...]`, so the rows older than the column
show the default the source filled them with.  A table records the digest of its declarations
(`declaration_digest`); one landed before it did records none and is not compared.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from uniview.core.schema import VERSION_ID

HASH_LENGTH = 12
#: SourceColumn.default of a column whose default the source computes when a row is written (metadata.schema's
#: `"default_volatile": true`): its value in rows written before the column is not known.
VOLATILE_DEFAULT = "volatile"


@dataclass(frozen=True)
class SourceColumn:
    """One declared source column: its name and its source type as the producer wrote it."""

    name: str
    declared_type: str
    #: The column's default as JSON text (None: none declared; VOLATILE_DEFAULT: one computed when a row is
    #: written, such as now()), and whether it may be NULL: what the version table's description records
    #: for `<table>_current` (uniview.sink.default_values); neither is part of the version, but for records
    #: declaring others than their version's table (the module docstring).
    default: str | None = field(default=None, compare=False)
    nullable: bool = field(default=True, compare=False)

    @property
    def normalized_type(self) -> str:
        return normalize_source_type(self.declared_type)


def normalize_source_type(declared_type: str) -> str:
    """Lowercase, every whitespace character removed: normalize_source_type('INT(10) Unsigned') == 'int(10)unsigned'."""
    return "".join(declared_type.split()).lower()


class Declared(Protocol):
    """A column with its declarations: SourceColumn, and the sink's LandingColumn."""

    @property
    def name(self) -> str: ...
    @property
    def default(self) -> str | None: ...
    @property
    def nullable(self) -> bool: ...


def canonical_schema(
    table_name: str,
    columns: Sequence[SourceColumn],
    primary_key: Sequence[str] | None = None,
    declared: bool = False,
) -> str:
    """The canonical text the version hash is computed from (see the module docstring); `primary_key` only for
    a key other than the one of the version computed without it, `declared` only for declarations other than
    that version's."""
    pairs = [[column.name, column.normalized_type] for column in columns]
    canonical: dict[str, object] = {"table": table_name, "columns": pairs}
    if primary_key is not None:
        canonical["primary_key"] = list(primary_key)
    if declared:
        canonical["declared"] = declarations(columns)
    return _canonical_json(canonical)


def declarations(columns: Iterable[Declared]) -> list[list[object]]:
    """Each column's [name, default (the JSON value declared, null when none), volatile, nullable]."""
    return [[c.name, *_default_declared(c.default), c.nullable] for c in columns]


def _default_declared(default: str | None) -> tuple[object, bool]:
    """(the declared default's JSON value, None when none or volatile; whether it is volatile)."""
    if default is None or default == VOLATILE_DEFAULT:
        return None, default == VOLATILE_DEFAULT
    return json.loads(default), False


def declaration_digest(columns: Iterable[Declared]) -> str:
    """The first 12 hex digits of the SHA-256 of the columns' canonical declarations: what a version table
    records of them, to tell a record declaring others."""
    return hashlib.sha256(_canonical_json(declarations(columns)).encode("utf-8")).hexdigest()[:HASH_LENGTH]


def _canonical_json(value: object) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def compute_version(
    table_name: str,
    columns: Sequence[SourceColumn],
    primary_key: Sequence[str] | None = None,
    declared: bool = False,
) -> str:
    """The first 12 hex digits of the SHA-256 of the canonical schema text (UTF-8)."""
    canonical = canonical_schema(table_name, columns, primary_key, declared)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:HASH_LENGTH]


def is_valid_version(version: object) -> bool:
    """True for 1-16 lowercase letters or digits, the versions a producer may declare."""
    return isinstance(version, str) and VERSION_ID.fullmatch(version) is not None


def schema_signature(columns: Iterable[SourceColumn]) -> tuple[tuple[str, str], ...]:
    """What makes two declared schemas the same: names in order and normalized types."""
    return tuple((column.name, column.normalized_type) for column in columns)
