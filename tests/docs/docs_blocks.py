"""The shell blocks of README.md and docs/*.md, and the `uniview` commands they show.

Every ```bash or ```console block carries a marker on the line before its fence:

    <!-- docs-test: run -->                 its `uniview` commands run against a small DuckDB warehouse
    <!-- docs-test: skip: <reason> -->      they need GCP, Spark, a server...: only parsed by the CLI

The marker is an HTML comment, so neither GitHub nor the site shows it.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHELL_LANGUAGES = ("bash", "console", "sh", "shell")
_FENCE = re.compile(r"^(?P<indent> *)(?P<fence>```+|~~~+)\s*(?P<lang>[\w-]*)")
_MARKER = re.compile(r"^\s*<!--\s*docs-test:\s*(?P<kind>run|skip)\s*(?::\s*(?P<reason>.*?))?\s*-->\s*$")
_OPERATORS = {"&&", "||", ";", "|", "&"}
#: Words a line of an unmarked, untagged block starts with when it is a command someone would run.
_COMMAND_WORDS = re.compile(r"^\s*(\$ )?(uniview|\.venv/bin/|python3? |gcloud |terraform |bash |curl |gsutil )")


@dataclass(frozen=True)
class Block:
    path: Path
    line: int  # of the opening fence, 1-based
    language: str
    text: str
    marker: str | None  # "run", "skip", or None
    reason: str

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


@dataclass(frozen=True)
class Command:
    """One `uniview` command of a block: its arguments after `uniview`."""

    block: Block
    args: tuple[str, ...]

    @property
    def where(self) -> str:
        return f"{self.block.where}: uniview {shlex.join(self.args)}"[:160]


def documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def blocks(path: Path) -> Iterator[Block]:
    """Every fenced block of one Markdown file, with the marker on the line before it."""
    lines = path.read_text(encoding="utf-8").splitlines()
    index = 0
    while index < len(lines):
        opening = _FENCE.match(lines[index])
        if not opening:
            index += 1
            continue
        fence = opening["fence"]
        end = index + 1
        while end < len(lines) and not lines[end].strip().startswith(fence):
            end += 1
        marker = _MARKER.match(lines[index - 1]) if index else None
        yield Block(
            path,
            index + 1,
            opening["lang"].lower(),
            "\n".join(line[len(opening["indent"]) :] for line in lines[index + 1 : end]),
            marker["kind"] if marker else None,
            (marker["reason"] or "") if marker else "",
        )
        index = end + 1


def shell_blocks() -> list[Block]:
    return [block for path in documents() for block in blocks(path) if block.language in SHELL_LANGUAGES]


def untagged_command_blocks() -> list[Block]:
    """Blocks without a language whose lines look like commands: they escape the checks, so tag them."""
    return [
        block
        for path in documents()
        for block in blocks(path)
        if not block.language and any(_COMMAND_WORDS.match(line) for line in block.text.splitlines())
    ]


def shell_lines(text: str) -> Iterator[str]:
    """Logical lines: continuations and quoted newlines joined, heredoc bodies and a console's output
    lines (those without the `$ ` prompt) dropped."""
    prompt = any(line.startswith("$ ") for line in text.splitlines())
    joined = re.sub(r"\\\n", " ", text)
    pending, heredoc = "", None
    for line in joined.splitlines():
        if heredoc is not None:
            heredoc = None if line.strip() == heredoc else heredoc
            continue
        if prompt and not pending:
            if not line.startswith("$ "):
                continue
            line = line[2:]
        pending = f"{pending}\n{line}" if pending else line
        if not _complete(pending):
            continue
        if pending.strip():
            yield pending
        opening = _HEREDOC.search(pending)
        heredoc = opening["word"] if opening else None
        pending = ""
    if pending.strip():
        yield pending


_HEREDOC = re.compile(r"<<-?\s*['\"]?(?P<word>\w+)['\"]?")


def _complete(line: str) -> bool:
    try:
        shlex.split(line, comments=True)
    except ValueError:  # a quotation still open: the command goes on on the next line
        return False
    return True


def _simple_commands(line: str) -> Iterator[list[str]]:
    lexer = shlex.shlex(line, posix=True, punctuation_chars="&|;")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    current: list[str] = []
    for token in lexer:
        if token in _OPERATORS:
            if current:
                yield current
            current = []
        else:
            current.append(token)
    if current:
        yield current


def _uniview_args(words: list[str]) -> tuple[str, ...] | None:
    while words and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", words[0]):
        words = words[1:]  # VAR=value before the command
    if not words:
        return None
    if words[0].rsplit("/", 1)[-1] == "uniview":
        return tuple(words[1:])
    if words[0].rsplit("/", 1)[-1].startswith("python") and words[1:3] in (
        ["-m", "uniview"],
        ["-m", "uniview.cli.main"],
    ):
        return tuple(words[3:])
    if words[0].rsplit("/", 1)[-1].startswith("python") and words[1:3] == ["-m", "uniview.sink"]:
        return ("sink", *words[3:])
    if any(word.endswith("uniview_sink.py") for word in words) and "--" in words:
        return ("sink", *words[words.index("--") + 1 :])  # Dataproc: the arguments after -- are the sink's
    return None


def commands(block: Block) -> list[Command]:
    found = []
    for line in shell_lines(block.text):
        for words in _simple_commands(line):
            args = _uniview_args(words)
            if args is not None:
                found.append(Command(block, args))
    return found


def all_commands() -> list[Command]:
    return [command for block in shell_blocks() for command in commands(block)]
