"""The commands the README and the docs show still work.

Every shell block is marked (tests/docs/docs_blocks.py): `run` blocks are run, command by command, with
the real CLI against a small DuckDB warehouse (any --warehouse, BigQuery's too, becomes that file);
`skip` blocks say why they cannot run here (GCP, Spark, a server), and their `uniview` commands are still
parsed by the current CLI, so a renamed or removed option fails.  The error messages docs/faq.md
explains are checked against the code.
"""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import click
import duckdb
import pytest
from click.testing import CliRunner
from docs_blocks import (
    ROOT,
    Block,
    Command,
    all_commands,
    blocks,
    commands,
    shell_blocks,
    shell_lines,
    untagged_command_blocks,
)

from uniview.cli.main import main
from uniview.core.landing_layout import CDC_COLUMNS
from uniview.core.types import parse_type
from uniview.core.version_description import version_description
from uniview.warehouse.duckdb import DEFAULT_LOCK_TIMEOUT_SECONDS
from uniview.warehouse.duckdb_types import duckdb_type
from uniview.warehouse.url import duckdb_url

SHELL_BLOCKS = shell_blocks()
RUNNABLE = [block for block in SHELL_BLOCKS if block.marker == "run"]
COMMANDS = all_commands()

#: The seed's two versions of `customer` (the README's example): (name, declared type, BigQuery type), one row.
_NAMES = (("first_name", "varchar(255)", "STRING"), ("last_name", "varchar(255)", "STRING"))
_VERSIONS: dict[str, tuple[tuple[tuple[str, str, str], ...], dict[str, object]]] = {
    "customer_v_abc": (
        (("id", "int(11)", "INT64"), *_NAMES, ("full_name", "varchar(255)", "STRING")),
        {"id": 1, "first_name": "John", "last_name": "Doe", "full_name": "John Doe", "_cdc_sequence": "1"},
    ),
    "customer_v_def": (
        (("id", "varchar(20)", "STRING"), *_NAMES, ("email", "varchar(255)", "STRING")),
        {"id": "c-3", "first_name": "Ann", "last_name": "Lee", "email": "ann@example.com", "_cdc_sequence": "2"},
    ),
}


@pytest.fixture(scope="module")
def seed_warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Dataset `cdc` with the two versions of `customer`, each recording its primary key, as the sink writes them."""
    path = tmp_path_factory.mktemp("docs-warehouse") / "warehouse.duckdb"
    with duckdb.connect(str(path)) as connection:
        connection.execute("CREATE SCHEMA cdc")
        for table, (columns, row) in _VERSIONS.items():
            typed = [(name, bq) for name, _, bq in columns] + list(CDC_COLUMNS)
            ddl = ", ".join(f"{name} {duckdb_type(parse_type(bq))}" for name, bq in typed)
            connection.execute(f"CREATE TABLE cdc.{table} ({ddl})")
            description = version_description("customer", [(name, declared) for name, declared, _ in columns], ["id"])
            quoted = description.replace("'", "''")
            connection.execute(f"COMMENT ON TABLE cdc.{table} IS '{quoted}'")
            values = {**row, "_cdc_operation": "INSERT", "_cdc_database": "customer1"}
            marks = ", ".join("?" for _ in values)
            connection.execute(f"INSERT INTO cdc.{table} ({', '.join(values)}) VALUES ({marks})", list(values.values()))
    return path


def test_every_shell_block_is_marked_run_or_skip_with_a_reason() -> None:
    unmarked = [block.where for block in SHELL_BLOCKS if block.marker is None]
    unexplained = [block.where for block in SHELL_BLOCKS if block.marker == "skip" and len(block.reason) < 10]
    assert not unmarked, f"mark these blocks <!-- docs-test: run --> or <!-- docs-test: skip: why -->: {unmarked}"
    assert not unexplained, f"say why these blocks cannot run: {unexplained}"
    assert len(RUNNABLE) >= 3  # the generator's, consolidation's and the operations' commands at least


def test_blocks_of_commands_say_they_are_shell() -> None:
    assert not [block.where for block in untagged_command_blocks()], "tag these blocks ```bash"


def test_run_blocks_hold_only_uniview_commands() -> None:
    """A runnable block runs whole: a line that is not a `uniview` command would be silently left out."""
    for block in RUNNABLE:
        assert commands(block), f"{block.where}: no uniview command to run"
        others = [line for line in _lines_without_comments(block) if not line.lstrip().startswith("uniview ")]
        assert not others, f"{block.where}: mark it skip, or move these lines out: {others}"


def _lines_without_comments(block: Block) -> list[str]:
    return [line.split(" #")[0] for line in shell_lines(block.text) if not line.lstrip().startswith("#")]


@pytest.mark.parametrize("command", COMMANDS, ids=[command.where for command in COMMANDS])
def test_shown_command_parses_with_the_current_cli(command: Command) -> None:
    assert command.args, "a bare `uniview`"
    group_context = main.make_context("uniview", [], resilient_parsing=True)
    name, *rest = command.args
    subcommand = main.get_command(group_context, name)
    assert subcommand is not None, f"no command {name!r}"
    assert not (subcommand.help or "").startswith("(unavailable"), subcommand.help
    try:
        context = subcommand.make_context(name, list(rest), parent=group_context)
    except click.exceptions.Exit:  # --help or --version
        return
    except click.ClickException as error:
        pytest.fail(f"{command.where}\n{error.format_message()}")
    assert context.command is subcommand


def test_commands_are_found_where_the_docs_show_them() -> None:
    """The collector sees through the shapes the docs use: continuations, env prefixes, Dataproc's `--`."""
    shown = {command.args[0] for command in COMMANDS}
    assert {"plan", "refresh", "consolidate", "migrate-landing", "sink", "demo"} <= shown
    dataproc = [c for c in COMMANDS if "gs://" in " ".join(c.args) and c.args[0] == "sink"]
    assert dataproc, "the Dataproc submits' sink arguments are checked too"


def _runnable(args: tuple[str, ...], warehouse: Path) -> list[str]:
    """The command against the test warehouse."""
    out = list(args)
    for index, word in enumerate(out):
        if word == "--warehouse" and index + 1 < len(out):
            out[index + 1] = duckdb_url(warehouse)
        elif word.startswith("--warehouse="):
            out[index] = f"--warehouse={duckdb_url(warehouse)}"
    return out


@pytest.mark.parametrize("block", RUNNABLE, ids=[block.where for block in RUNNABLE])
def test_run_block_runs_against_a_duckdb_warehouse(
    block: Block, seed_warehouse: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    warehouse = tmp_path / "warehouse.duckdb"
    shutil.copy(seed_warehouse, warehouse)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("UNIVIEW_WAREHOUSE", raising=False)
    for command in commands(block):
        args = _runnable(command.args, warehouse)
        assert duckdb_url(warehouse) in args or "--warehouse" not in " ".join(command.args), args
        result = CliRunner().invoke(
            main, args, catch_exceptions=False, env={"UNIVIEW_WAREHOUSE": duckdb_url(warehouse)}
        )
        assert result.exit_code == 0, f"{command.where}\n{result.output}"


# --- docs/faq.md quotes messages the code can print --------------------------------------------------------

_CODE_SPAN = re.compile(r"^(``?) ?(?P<text>uniview(?: sink)?: (?:error|note): .*?) ?\1$", re.M)


def _normalized_source() -> str:
    """uniview's code with adjacent string literals joined and f-string fields as `…`."""
    text = "\n".join(path.read_text(encoding="utf-8") for path in (ROOT / "uniview").rglob("*.py"))
    text = re.sub(r"""["']\s*\n\s*[rfb]*["']""", "", text)
    text = text.replace("{{", "{").replace("}}", "}")  # an f-string's escaped braces
    return re.sub(r"\{[^{}\n]*\}", "…", text)


def test_faq_messages_are_messages_the_code_prints() -> None:
    faq = (ROOT / "docs" / "faq.md").read_text(encoding="utf-8")
    messages = [match["text"] for match in _CODE_SPAN.finditer(faq)]
    assert len(messages) >= 30
    source = _normalized_source()
    stale = [(message, missing) for message in messages if (missing := _unprinted(message, source))]
    assert not stale, "docs/faq.md quotes messages the code no longer prints:\n" + "\n".join(map(str, stale))


def _unprinted(message: str, source: str) -> list[str]:
    """The literal pieces of a quoted message that the code does not hold: names, numbers and options
    quoted in it (`…`, `1,000`, `--table`) stand for fields; a piece of up to four words may be
    composed from several literals (`invalid {what} name`)."""
    body = message.split(": ", 2)[2].replace("'…'", "…")
    body = re.sub(r"--[a-z][a-z-]*|\d[\d,]*", "…", body)
    pieces = [piece.strip(" ,;:.()") for part in body.split("…") for piece in part.split(": ")]
    return [
        piece
        for piece in pieces
        if len(piece) >= 4
        and piece not in source
        and not (len(piece.split()) <= 4 and all(word in source for word in piece.split()))
    ]


def test_the_view_the_readme_and_concepts_show_is_the_one_the_generator_renders() -> None:
    """The seed example's SQL, as tests/test_plan.py holds it (its golden file, without the CREATE line)."""
    golden = (ROOT / "tests" / "expected" / "customer_unified.sql").read_text(encoding="utf-8")
    body = golden.split("\n", 1)[1].strip()
    for page in (ROOT / "README.md", ROOT / "docs" / "concepts.md"):
        shown = [
            block.text.strip() for block in blocks(page) if block.language == "sql" and "Generated by" in block.text
        ]
        assert shown == [body], page


_REPO_PATH = re.compile(
    r"^(?:\./)?((?:bench|scripts|dataproc|functions|terraform|tests|sql_templates|uniview)/[\w./-]*)$"
)


def test_files_and_modules_the_commands_name_exist() -> None:
    """`bench/bench_sink.py`, `-m bench.run_all`, `scripts/setup-checkov.sh`: renamed or removed, the block is stale."""
    missing = []
    for block in SHELL_BLOCKS:
        for line in shell_lines(block.text):
            words = shlex.split(line, comments=True)
            for index, word in enumerate(words):
                module = words[index + 1] if word == "-m" and index + 1 < len(words) else None
                if module and module.split(".")[0] in ("bench", "uniview"):
                    path = ROOT / (module.replace(".", "/") + ".py")
                    package = ROOT / module.replace(".", "/") / "__main__.py"
                    if not (path.is_file() or package.is_file()):
                        missing.append(f"{block.where}: -m {module}")
                match = _REPO_PATH.match(word)
                if match and not (ROOT / match[1]).exists() and not any(c in word for c in "*$"):
                    missing.append(f"{block.where}: {word}")
    assert missing == []


# --- the pages state the DuckDB lock wait the code has --------------------------------------------------------


def test_the_lock_wait_the_pages_state_is_the_warehouses_constant() -> None:
    """docs/function.md and docs/duckdb.md give the seconds a refresh waits for a locked DuckDB file: the value of
    uniview.warehouse.duckdb.DEFAULT_LOCK_TIMEOUT_SECONDS, the one owner of that wait."""
    owners = [
        path.relative_to(ROOT).as_posix()
        for path in sorted((ROOT / "uniview").rglob("*.py"))
        if re.search(r"^DEFAULT_LOCK_TIMEOUT_SECONDS\b.*=", path.read_text(encoding="utf-8"), re.M)
    ]
    assert owners == ["uniview/warehouse/duckdb.py"], "one constant owns the lock wait"
    seconds = f"{DEFAULT_LOCK_TIMEOUT_SECONDS:g}"
    function = (ROOT / "docs" / "function.md").read_text(encoding="utf-8")
    duckdb_page = (ROOT / "docs" / "duckdb.md").read_text(encoding="utf-8")
    stated = {
        "function.md": re.findall(r"DuckDB lock still held after (\d+(?:\.\d+)?) s", function),
        "duckdb.md, the default": re.findall(r"lock_timeout=(\d+(?:\.\d+)?)\)", duckdb_page),
        "duckdb.md, the message": re.findall(r"gave up after waiting (\d+(?:\.\d+)?) s", duckdb_page),
    }
    assert {page: [f"{float(value):g}" for value in values] for page, values in stated.items()} == {
        page: [seconds] for page in stated
    }
