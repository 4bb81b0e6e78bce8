"""`--current` / UNIVIEW_CURRENT: off, view or table, with the older true/false spellings still read."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from uniview.cli.options import generator_options
from uniview.core.errors import ConfigError
from uniview.planning.plan import GeneratorOptions


@pytest.mark.parametrize(
    ("given", "mode"),
    [
        (True, "view"),
        (False, "off"),
        (None, "off"),
        ("true", "view"),
        ("FALSE", "off"),
        ("", "off"),
        ("1", "view"),
        ("view", "view"),
        ("Table", "table"),
        (" table ", "table"),
        ("off", "off"),
    ],
)
def test_every_spelling_reads_as_one_mode(given, mode):
    options = GeneratorOptions(current=given)
    assert options.current == mode
    assert options.keeps_current == (mode != "off")
    assert options.current_table == (mode == "table")
    assert options.current_view == (mode == "view")


@pytest.mark.parametrize(("caller", "name"), [("cli", "--current"), ("function", "UNIVIEW_CURRENT")])
def test_an_unknown_mode_is_one_error_naming_the_setting_as_the_caller_spells_it(caller, name):
    with pytest.raises(ConfigError, match=rf"{name}: must be one of off, view, table .* not 'tables'"):
        GeneratorOptions(current="tables", caller=caller)


@click.command()
@generator_options
def _command(current: str, **_: object) -> None:
    click.echo(current)


@pytest.mark.parametrize(
    ("arguments", "mode"),
    [
        ([], "off"),
        (["--current"], "view"),
        (["--current", "table"], "table"),
        (["--current", "--policy", "widen"], "view"),
    ],
)
def test_the_flag_alone_means_the_view_and_takes_table(arguments, mode):
    result = CliRunner().invoke(_command, arguments)
    assert result.exit_code == 0, result.output
    assert result.output.strip() == mode
