"""The documentation site builds strictly: a broken link, anchor or nav entry, or a page left out of the
nav, fails (mkdocs.yml sets `strict` and the validation levels).  Built into a temporary folder, never
into the repository."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from docs_blocks import ROOT

from uniview.cli.main import main


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "--config-file",
            str(ROOT / "mkdocs.yml"),
            "-d",
            str(out),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    return out


def test_every_page_is_in_the_site(site: Path) -> None:
    pages = sorted(path.relative_to(ROOT / "docs").with_suffix("") for path in (ROOT / "docs").rglob("*.md"))
    built = [site / page / "index.html" if page.name != "index" else site / "index.html" for page in pages]
    assert [str(path) for path in built if not path.is_file()] == []


def test_cli_reference_is_generated_from_every_command(site: Path) -> None:
    """Every command and option `uniview --help` knows, the lazily loaded sink and demo included."""
    html = (site / "cli" / "index.html").read_text(encoding="utf-8")
    context = main.make_context("uniview", [], resilient_parsing=True)
    for name in main.list_commands(context):
        command = main.get_command(context, name)
        assert command is not None and f"uniview {name}" in html, name
        for parameter in command.params:
            for option in parameter.opts:
                assert re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", html), f"uniview {name} {option}"


def test_the_readmes_links_resolve() -> None:
    """The README is not part of the site: its relative links (files, folders, anchors into the docs) are
    checked here, with the anchors the site gives each heading."""
    from markdown.extensions.toc import slugify  # type: ignore[import-untyped]

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)\s]+)\)", readme)
    relative = [link for link in links if not re.match(r"[a-z]+:", link)]
    assert len(relative) >= 20
    broken = []
    for link in relative:
        path, _, anchor = link.partition("#")
        target = ROOT / path
        if not target.exists():
            broken.append(link)
        elif anchor:
            headings = re.findall(r"^#+ (.+)$", target.read_text(encoding="utf-8"), re.M)
            if anchor not in {slugify(heading, "-") for heading in headings}:
                broken.append(link)
    assert broken == []
