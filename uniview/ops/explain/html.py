"""`uniview explain --html`: one self-contained page (inline CSS, no script, nothing fetched) with the
family's history as a picture: versions across, columns down, each cell coloured by its type's kind,
conflicting columns marked with a red bar, renamed cells with a magenta bar and their stored name.

Nothing is cut off at any family width: every label takes its text's width, up to a limit past which it
wraps, and the grid scrolls inside its own box (the versions' header and the columns' names held in view)
instead of running past the page.
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
#: Pixels: the conflict mark at the left of a column's name.
MARK_WIDTH = 8


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
            mark_width=MARK_WIDTH,
            legend=[kind for kind in KIND_COLOURS if kind != "absent"],
        )
    )
