"""The lint and type gates, run as the suite runs: ruff's rules and its formatting over the whole tree,
and mypy over uniview/ and functions/, each with its configuration in pyproject.toml (docs/development.md
says what each checks and why).  A failure shows the tool's own report."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: The tools of the environment running the tests (the dev extra pins them).
BIN = Path(sys.executable).parent

GATES = {
    "ruff check": ["ruff", "check", "."],
    "ruff format": ["ruff", "format", "--check", "."],
    # The cache (.mypy_cache, git-ignored) makes a run after the first take seconds.
    "mypy": ["mypy", "uniview", "functions"],
}


def run(command: list[str], cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    tool = BIN / command[0]
    assert tool.exists(), f"{tool} is missing: install the dev extra (pip install -e '.[dev]')"
    return subprocess.run([str(tool), *command[1:]], cwd=cwd, capture_output=True, text=True, timeout=280)


@pytest.mark.parametrize("gate", GATES)
def test_gate_passes(gate):
    result = run(GATES[gate])
    assert result.returncode == 0, f"{' '.join(GATES[gate])} failed:\n{result.stdout}{result.stderr}"


def test_mypy_is_strict_about_none_and_signatures(tmp_path):
    """The configuration catches what the gate is there for: an attribute read on a value that may be
    None, a `str | None` passed where a `str` is required, and a function without annotations."""
    snippet = tmp_path / "optional_misuse.py"
    snippet.write_text(
        "import re\n\n\n"
        "def first_word(text: str) -> str:\n"
        "    return re.match(r'\\w+', text).group(0)\n\n\n"
        "def shout(text: str) -> str:\n"
        "    return text.upper()\n\n\n"
        "def shout_maybe(text: str | None) -> str:\n"
        "    return shout(text)\n\n\n"
        "def untyped(text):\n"
        "    return text\n"
    )
    config, cache = str(ROOT / "pyproject.toml"), str(ROOT / ".mypy_cache")
    result = run(["mypy", "--config-file", config, "--cache-dir", cache, str(snippet)], cwd=tmp_path)
    report = result.stdout + result.stderr
    assert result.returncode == 1, report
    assert 'error: Item "None" of "Match[str] | None" has no attribute "group"  [union-attr]' in report
    assert 'error: Argument 1 to "shout" has incompatible type "str | None"; expected "str"  [arg-type]' in report
    assert "error: Function is missing a type annotation  [no-untyped-def]" in report
