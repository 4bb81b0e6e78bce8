"""`uniview explain --html`: one self-contained page (inline CSS, no script, nothing fetched) with the
family's history as a picture: versions across, columns down, each cell coloured by its type's kind,
conflicting columns marked with a red bar, renamed cells with a magenta bar and their stored name.

The grid has a fixed geometry (GEOMETRY), so a cell's place on the page follows from its row and
version: the test opens the page in headless Chromium and reads the screenshot's pixels there.
"""

from __future__ import annotations

from functools import lru_cache

import jinja2

from uniview.core.render import templates_dir
from uniview.ops.explain.model import Explanation

TEMPLATE = "explain_report.html.j2"
#: Colours of the kinds of types (uniview.ops.explain.model.KINDS); an absent column is left white.
KIND_COLOURS = {
    "integer": "#4e79a7",
    "float": "#59a14f",
    "decimal": "#76b7b2",
    "string": "#bab0ac",
    "bool": "#edc948",
    "time": "#f28e2b",
    "bytes": "#9c755f",
    "json": "#b07aa1",
    "struct": "#8cd17d",
    "array": "#ff9da7",
    "other": "#79706e",
    "absent": "#ffffff",
}
CONFLICT_COLOUR = "#d62728"
RENAME_COLOUR = "#e6007e"
#: Pixels: the page's title block, the versions' header, the column names, each cell, the marks' width.
GEOMETRY = {
    "title_height": 64,
    "header_height": 72,
    "name_width": 220,
    "cell_width": 96,
    "row_height": 26,
    "mark_width": 8,
    "unified_width": 170,
}


@lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        undefined=jinja2.StrictUndefined,
        autoescape=True,  # names and types come from the warehouse: every value is escaped
    )


def render_html(explanation: Explanation) -> str:
    return (
        _environment()
        .get_template(TEMPLATE)
        .render(
            x=explanation,
            colours=KIND_COLOURS,
            conflict=CONFLICT_COLOUR,
            rename=RENAME_COLOUR,
            g=GEOMETRY,
            legend=[kind for kind in KIND_COLOURS if kind != "absent"],
        )
    )


def cell_origin(row: int, version: int) -> tuple[int, int]:
    """The top-left pixel of the cell of column `row` in version `version` (both from 0)."""
    return (
        GEOMETRY["name_width"] + version * GEOMETRY["cell_width"],
        GEOMETRY["title_height"] + GEOMETRY["header_height"] + row * GEOMETRY["row_height"],
    )


def name_origin(row: int) -> tuple[int, int]:
    """The top-left pixel of column `row`'s name (its conflict mark is at its left edge)."""
    return 0, GEOMETRY["title_height"] + GEOMETRY["header_height"] + row * GEOMETRY["row_height"]
