"""Bad input to `uniview consolidate`: one clear line, exit code 1 or 2, nothing changed."""

from __future__ import annotations

import hashlib

import pytest
from click.testing import CliRunner
from consolidation_support import build_family

from uniview.cli.main import main
from uniview.warehouse.url import duckdb_url


@pytest.fixture
def small_family(tmp_path):
    path = tmp_path / "warehouse.duckdb"
    build_family(path, 5)
    assert (
        CliRunner().invoke(main, ["plan", "--warehouse", duckdb_url(path), "--dataset", "cdc", "--all"]).exit_code == 0
    )
    return path  # the first read has recorded the tables' creation order


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--table", "customer", "--idle-for", "30 days"], "invalid duration '30 days'"),
        (["--table", "customer", "--idle-for", "0s", "--retention", "soon"], "invalid duration 'soon'"),
        (["--table", "customer", "--idle-for", "0s", "--max-versions", "1"], "--max-versions must be at least 2"),
        (["--table", "nosuch", "--idle-for", "0s"], "no version tables for 'nosuch'"),
        (["--table", "customer", "--all", "--idle-for", "0s"], "either --table NAME (repeatable) or --all"),
    ],
)
def test_bad_input_is_one_clear_error_and_changes_nothing(small_family, extra, message):
    digest = hashlib.sha256(small_family.read_bytes()).hexdigest()
    result = CliRunner().invoke(
        main, ["consolidate", "--warehouse", duckdb_url(small_family), "--dataset", "cdc", *extra, "--apply"]
    )
    assert result.exit_code in (1, 2) and message in result.output, result.output
    assert hashlib.sha256(small_family.read_bytes()).hexdigest() == digest
