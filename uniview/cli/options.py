"""Command-line options shared by `uniview plan`, `uniview refresh` and `uniview sink` (for --notify inline)."""

from __future__ import annotations

from collections.abc import Callable

import click

from uniview.core.renames import read_renames_file
from uniview.core.resolve import POLICIES
from uniview.planning.plan import CURRENT_MODES, DEFAULT_MAX_VIEW_CHARS, DEFAULT_POLICY, GeneratorOptions


def generator_options(command: Callable) -> Callable:
    """How views are generated: the options `plan`, `refresh` and `sink --notify inline` share."""
    options = [
        click.option("--target-dataset", default=None, help="Where views go [default: <dataset>_unified]."),
        click.option(
            "--policy",
            type=click.Choice(list(POLICIES)),
            default=DEFAULT_POLICY,
            show_default=True,
            help="uniview: DATETIME+TIMESTAMP->TIMESTAMP, other conflicts->STRING; widen: lossless widening first.",
        ),
        click.option(
            "--max-view-chars",
            type=int,
            default=DEFAULT_MAX_VIEW_CHARS,
            show_default=True,
            help="Split into part views beyond this many characters of SQL per view.",
        ),
        click.option(
            "--datetime-timezone",
            default=None,
            help="Read DATETIME as this IANA zone when it becomes TIMESTAMP [default: UTC].",
        ),
        click.option("--source-column", default=None, help="Add a column naming each row's version table."),
        click.option(
            "--current",
            type=click.Choice(list(CURRENT_MODES)),
            is_flag=False,
            flag_value="view",
            default="off",
            show_default=True,
            help="Also keep <table>_current: the latest row per (_cdc_database, primary key), deletes left out. "
            "--current keeps it as a view; --current table as a table maintained incrementally "
            "(docs/current-state.md#the-current-table).",
        ),
        click.option(
            "--renames",
            default=None,
            metavar="FILE",
            help="Declared column renames (JSON, docs/current-state.md#renames): old versions' columns read under "
            "their new names.",
        ),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def make_generator_options(
    policy: str,
    max_view_chars: int,
    datetime_timezone: str | None,
    source_column: str | None,
    current: bool | str = "off",
    renames: str | None = None,
) -> GeneratorOptions:
    """GeneratorOptions from the command line's options (`renames`: the path of a renames document)."""
    return GeneratorOptions(
        policy=policy,
        max_view_chars=max_view_chars,
        datetime_timezone=datetime_timezone,
        source_column=source_column,
        current=current,
        renames=read_renames_file(renames),
        caller="cli",
    )
