"""`uniview explain --html` at any family width, measured in headless Chromium: every text the page shows
(version ids, source databases, column names, types, stored names, unified types, rules) is drawn whole,
inside its box, over no other text, and within the page's width unless a scroll container lets the
reader scroll to it. Families of 1 to 300 versions and 1 to 200 columns, ids of up to 16 of the widest
letters, names of up to 300 characters, rules of hundreds."""

from __future__ import annotations

import string
from collections.abc import Sequence

import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st
from page_layout import measure_layout

from uniview.core.schema import Column, TableVersion
from uniview.core.types import parse_type
from uniview.ops.explain.html import render_html
from uniview.ops.explain.model import Explanation, explain_family
from uniview.warehouse.status_reads import TableActivity

ID_LETTERS = string.ascii_lowercase + string.digits
NAME_LETTERS = string.ascii_lowercase + string.digits + "_"
SCALARS = ("INT64", "STRING", "FLOAT64", "NUMERIC", "DATE", "DATETIME", "TIMESTAMP", "BOOL", "BYTES", "JSON")


def struct_of(fields: Sequence[str]) -> str:
    return "STRUCT<" + ", ".join(f"{field} STRING" for field in fields) + ">"


def family(
    ids: Sequence[str],
    columns: Sequence[tuple[str, Sequence[str | None], str | None]],
    databases: Sequence[str] = (),
    name: str = "fam",
) -> Explanation:
    """Versions `ids`; each column (name, its type in version i at i modulo the list's length (None: absent),
    the name it is stored under in the first version, or None); the first column is in every version.  Version
    i was written by the databases[:i] (at most 8)."""
    versions, activity = [], {}
    for index, version in enumerate(ids):
        present = []
        for place, (column, types, stored) in enumerate(columns):
            kind = types[index % len(types)] or ("INT64" if place == 0 else None)
            if kind is not None:
                present.append(Column(column, parse_type(kind), stored if index == 0 else None))
        table = f"{name}_v_{version}"
        versions.append(TableVersion(table, name, version, float(index), tuple(present)))
        activity[table] = TableActivity(1, None, None, frozenset(databases[: index % 9]))
    return explain_family(versions, "uniview", activity)


names = st.text(NAME_LETTERS, min_size=1, max_size=300).map(lambda name: "c" + name)
types = st.one_of(
    st.sampled_from(SCALARS),
    st.just("ARRAY<INT64>"),
    st.lists(names, min_size=1, max_size=6, unique=True).map(struct_of),
)
column_shapes = st.tuples(names, st.lists(st.none() | types, min_size=1, max_size=4), st.none() | names)


@st.composite
def families(draw: st.DrawFn) -> Explanation:
    count = draw(st.integers(1, 60))
    ids = draw(st.lists(st.text(ID_LETTERS, min_size=1, max_size=16), min_size=count, max_size=count, unique=True))
    columns = draw(st.lists(column_shapes, min_size=1, max_size=25, unique_by=lambda shape: shape[0]))
    databases = draw(st.lists(st.text(NAME_LETTERS, min_size=1, max_size=40), max_size=8, unique=True))
    return family(ids, columns, databases, draw(st.text(NAME_LETTERS, min_size=1, max_size=120).map(lambda n: "f" + n)))


def widest_ids(count: int) -> list[str]:
    """Ids of 16 of the widest letters the ids may have (w and m, the bits of their place)."""
    return [format(index, "016b").replace("0", "w").replace("1", "m") for index in range(count)]


MANY_VERSIONS = family(
    widest_ids(300),
    [
        ("id", ["INT64", "INT64", "STRING"], None),
        ("customer_" + "address_" * 30, ["STRING", None], "street_" * 40),
        ("payload", [struct_of([f"field_{n}_" + "x" * 60 for n in range(8)]), "STRING", "JSON"], None),
    ],
    [f"source_database_{n}" * 3 for n in range(8)],
    "customer_" * 40,
)
ONE_VERSION = family(["a1"], [("id", ["INT64"], None)])
MANY_COLUMNS = family(
    ["a1b2c3d4e5f6", "0123456789ab"],
    [(f"column_{n}" * (1 + n % 9), ["INT64", "STRING"] if n % 3 else ["DATE"], None) for n in range(200)],
)


def shown_texts(explanation: Explanation) -> set[str]:
    """What the page must show: every version id, column name, type, stored name, unified type and rule."""
    texts = {version.version for version in explanation.versions} | {explanation.family}
    texts |= {", ".join(version.databases) for version in explanation.versions if version.databases}
    for column in explanation.columns:
        texts |= {column.name, column.unified, column.rule}
        texts |= {cell.type for cell in column.cells if cell.type} | {
            c.renamed_from for c in column.cells if c.renamed_from
        }
    return texts


def summary(problems: list[dict]) -> str:
    lines = [f"{len(problems)} texts cut off, drawn over others or out of reach, e.g.:"]
    for problem in problems[:12]:
        lines.append(f"  {problem['text'][:48]!r}: {problem['why']}")
    return "\n".join(lines)


@settings(
    max_examples=3,
    derandomize=True,  # a fixed seed: the same families on every run
    deadline=None,
    phases=[Phase.explicit, Phase.generate],  # no shrinking: each example is a Chromium run
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(explanation=families(), width=st.sampled_from([800, 1200, 1600]))
@example(explanation=MANY_VERSIONS, width=1200)
@example(explanation=ONE_VERSION, width=800)
@example(explanation=MANY_COLUMNS, width=1200)
def test_every_text_of_the_page_is_shown_whole_at_any_family_width(
    explanation: Explanation, width: int, tmp_path_factory: pytest.TempPathFactory
) -> None:
    measured = measure_layout(render_html(explanation), tmp_path_factory.mktemp("page"), width=width)
    assert not measured["problems"], summary(measured["problems"])
    missing = shown_texts(explanation) - {text["text"] for text in measured["texts"]}
    assert not missing, f"not shown as a text of its own: {sorted(missing)[:5]}"
