"""The Jinja environment over sql_templates/: layout only, every variable required.

Templates ship inside the package (uniview/sql_templates in a built wheel or the function's
zip, read through the package loader, so a zipped wheel on Dataproc's --py-files works too);
in a source checkout they are read from the repository's top-level sql_templates/.
"""

from __future__ import annotations

from functools import cache, lru_cache
from pathlib import Path

import jinja2

_PACKAGE_DIR = Path(__file__).resolve().parents[1]  # uniview/


def templates_dir() -> Path:
    """uniview/sql_templates when installed from a wheel, else <checkout>/sql_templates."""
    for candidate in (_PACKAGE_DIR / "sql_templates", _PACKAGE_DIR.parent / "sql_templates"):
        if (candidate / "union_view.sql.j2").is_file():
            return candidate
    raise FileNotFoundError(f"uniview's SQL templates are missing next to {_PACKAGE_DIR}")


def _loader() -> jinja2.BaseLoader:
    try:
        return jinja2.PackageLoader("uniview", "sql_templates")
    except ValueError:  # a source checkout: the templates sit beside the package
        return jinja2.FileSystemLoader(str(templates_dir()))


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=_loader(),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=False,
        trim_blocks=False,
        lstrip_blocks=False,
        auto_reload=False,  # the templates ship with the code: no stat of the file on every render
    )


def render(template_name: str, **variables: object) -> str:
    """Render one template; a missing variable raises jinja2.UndefinedError."""
    return _template(template_name).render(**variables)


@cache
def _template(template_name: str) -> jinja2.Template:
    """Each template loaded once (a plan renders one per version: Jinja's own lookup cost a tenth of that)."""
    return environment().get_template(template_name)
