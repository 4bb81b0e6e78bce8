"""The ZetaSQL analyzer accepts `<table>_current` in every shape the latest-state rules give it: values carried
over unavailable changes, columns dropped, added and added back with declared defaults of every scalar type
(cast to a unified type that differs), and a family read through declared renames."""

from __future__ import annotations

import json

from checks import check_family

from uniview.core.landing_layout import CDC_COLUMNS
from uniview.core.renames import Rename, apply_renames
from uniview.core.schema import Column, TableVersion
from uniview.core.types import parse_type
from uniview.planning.plan import GeneratorOptions, plan_family

DEFAULTS = {
    "s": ("STRING", "open"),
    "i": ("INT64", 7),
    "f": ("FLOAT64", 1.5),
    "n": ("NUMERIC", "12.50"),
    "b": ("BOOL", True),
    "d": ("DATE", "2024-01-31"),
    "dt": ("DATETIME", "2024-01-31 10:00:00"),
    "t": ("TIME", "10:00:00"),
    "ts": ("TIMESTAMP", "2024-01-31 10:00:00+00:00"),
    "j": ("JSON", '{"a": 1}'),
    "y": ("BYTES", "AP8Q"),
}


def version(number: int, columns: list[tuple[str, str]], defaults: dict | None = None, not_null=()) -> TableVersion:
    every = [*columns, *CDC_COLUMNS]
    return TableVersion(
        f"t_v_{number}",
        "t",
        str(number),
        number,
        tuple(Column(name, parse_type(bq_type)) for name, bq_type in every),
        primary_key=("id",),
        defaults=tuple((name, json.dumps(value)) for name, value in (defaults or {}).items()),
        not_null=tuple(not_null),
    )


def test_columns_added_with_defaults_of_every_type_dropped_and_added_back(zetasql):
    base = [("id", "INT64"), ("doc", "STRING"), ("tags", "ARRAY<STRING>"), ("st", "STRUCT<a INT64>")]
    added = [(name, bq_type) for name, (bq_type, _) in DEFAULTS.items()]
    versions = [
        version(1, base),
        version(2, base + added, {name: value for name, (_, value) in DEFAULTS.items()}),
        version(3, base[:1] + added),  # doc, tags and st dropped
        version(4, base + [(name, "STRING") for name, _ in added], {"s": "x", "i": "7"}, ("f", "n")),  # all text
    ]
    planned = plan_family("cdc", "cdc_unified", versions, GeneratorOptions(current=True))
    assert planned.current is not None
    body = planned.current.body
    assert (
        "CASE _uniview_newest WHEN 1 THEN" in body
        and "ARRAY_CONCAT(_cdc_unavailable, SPLIT(" in body
        and "LAST_VALUE(IF('doc' IN UNNEST(_cdc_unavailable)" in body
    )
    check_family(zetasql, planned)


def test_a_family_read_through_renames(zetasql):
    versions = [
        version(1, [("id", "INT64"), ("memo", "STRING")]),
        version(2, [("id", "INT64"), ("note", "STRING")]),
        version(3, [("id", "INT64"), ("note", "INT64"), ("memo", "DATE")]),
    ]
    renamed = apply_renames(versions, [Rename("t", "memo", "note")])
    assert [c.stored for c in renamed[0].columns[:2]] == [None, "memo"]
    planned = plan_family("cdc", "cdc_unified", renamed, GeneratorOptions(current=True))
    assert "memo AS note" in planned.top_view.body
    check_family(zetasql, planned)
