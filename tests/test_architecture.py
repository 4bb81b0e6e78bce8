"""uniview/'s tree is its architecture: each package imports only the packages below it, no module
imports itself back through others, and docs/development.md describes every package."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from architecture import LAYERS, TOP_LEVEL_MODULES, cycles, imports, violations

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "uniview"


@pytest.fixture(scope="module")
def found():
    return imports(PACKAGE)


def test_every_package_imports_only_the_packages_below_it(found):
    assert violations(found) == []


def test_no_module_imports_itself_back_through_others(found):
    assert cycles(found) == []


def test_the_top_level_holds_the_packages_of_the_contract_and_no_other_module():
    packages = {path.parent.name for path in PACKAGE.glob("*/__init__.py")}
    top_modules = {path.stem for path in PACKAGE.glob("*.py")}
    assert packages == set(LAYERS)
    assert top_modules <= TOP_LEVEL_MODULES


def test_the_development_page_describes_every_package():
    page = (ROOT / "docs" / "development.md").read_text()
    missing = [name for name in LAYERS if f"`uniview/{name}/`" not in page]
    assert missing == []


@pytest.mark.parametrize(
    ("module", "wrong_import", "expected"),
    [
        ("core/types.py", "from uniview.warehouse.duckdb import DuckDBWarehouse", "uniview.core.types:"),
        ("warehouse/base.py", "from uniview.ops.refresh import refresh", "uniview.warehouse.base:"),
        ("sink/routing.py", "import uniview.cli.main", "uniview.sink.routing:"),
    ],
)
def test_a_deliberately_wrong_import_is_reported(tmp_path, module, wrong_import, expected):
    copy = tmp_path / "uniview"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    target = copy / module
    target.write_text(target.read_text() + f"\n\ndef _late() -> None:\n    {wrong_import}\n")
    reported = violations(imports(copy))
    assert len(reported) == 1 and reported[0].startswith(expected), reported


def test_a_deliberate_circle_is_reported(tmp_path):
    copy = tmp_path / "uniview"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    errors = copy / "core" / "errors.py"
    errors.write_text(errors.read_text() + "\n\nif False:\n    from uniview.core import types\n")
    assert ["uniview.core.errors", "uniview.core.identifiers", "uniview.core.types"] in cycles(imports(copy))
