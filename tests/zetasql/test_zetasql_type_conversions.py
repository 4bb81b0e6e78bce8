"""ZetaSQL's reference implementation computes `<table>_current` after a value-converting type change as DuckDB
does, and the analyzer accepts the conversions: datetime -> date, double or a wide decimal -> a narrower decimal,
boolean -> int, a decimal -> text, text -> a shorter varchar, and two changes in a row (tests/current/test_type_conversions.py holds
the values the sources show)."""

from __future__ import annotations

import sys
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path

import pytest
from checks import check_family
from click.testing import CliRunner
from reference import duckdb_family_differences

sys.path.insert(0, str(Path(__file__).parents[1] / "current"))
from test_current_state import land

from uniview.cli.main import main
from uniview.core.landing_layout import CDC_COLUMNS
from uniview.core.schema import Column, TableVersion
from uniview.core.types import parse_type
from uniview.planning.plan import GeneratorOptions, plan_family
from uniview.warehouse.url import duckdb_url

#: (types of c along the versions, values of c each version wrote): one row per value, the last version's last.
CASES = {
    "datetime to date": (
        ["DATETIME", "DATE"],
        [
            [datetime(2024, 6, 30, 12, 0, 0, 500000), datetime(9999, 12, 31, 23, 59, 59, 999999), None],
            [date(2020, 1, 1)],
        ],
    ),
    "double to decimal": (
        ["FLOAT64", "NUMERIC(12, 2)"],
        [[0.125, 2.675, 0.1, -0.125, 1.005, -2.2250738585072014e-308, float("nan")], [Decimal("7.50")]],
    ),
    "wide decimal to decimal": (
        ["BIGNUMERIC(38, 10)", "NUMERIC(12, 2)"],
        [[Decimal("-0.0000000001"), Decimal("0.005"), Decimal("-1.245")], [Decimal("3.14")]],
    ),
    "decimal rounded up past numeric's range": (
        ["NUMERIC(38, 9)", "BIGNUMERIC(38, 2)"],
        [[Decimal("99999999999999999999999999999.999999999"), Decimal("-1.005")], [Decimal("1.25")]],
    ),
    "boolean to int": (["BOOL", "INT64"], [[True, False, None], [7]]),
    "decimal to text": (
        ["NUMERIC(12, 2)", "STRING"],
        [[Decimal("1.5"), Decimal("10"), Decimal("-0.01"), Decimal("9999999999.99"), None], ["0.00000010"]],
    ),
    "datetime to date to datetime": (
        ["DATETIME", "DATE", "DATETIME"],
        [[datetime(2024, 6, 30, 12, 0)], [date(2020, 1, 1)], [datetime(2021, 5, 6, 7, 8, 9)]],
    ),
}


def landed(path: Path, types: list[str], values: list[list]) -> None:
    versions = {f"t_v_{n}": [("id", "INT64"), ("c", bq_type)] for n, bq_type in enumerate(types)}
    changes, key = [], 0
    for table, written in zip(versions, values, strict=True):
        for value in written:
            key += 1
            changes.append((table, "db1", "INSERT", {"id": key, "c": value}, None))
    land(path, versions, changes)


@pytest.mark.parametrize("policy", ["widen", "uniview"])
@pytest.mark.parametrize("case", list(CASES))
def test_zetasql_computes_the_converted_values_as_duckdb_does(zetasql, tmp_path, case, policy):
    path = tmp_path / "w.duckdb"
    landed(path, *CASES[case])
    arguments = ["refresh", "--warehouse", duckdb_url(path), "--dataset", "cdc", "--table", "t", "--current"]
    result = CliRunner().invoke(main, [*arguments, "view", "--policy", policy])
    assert result.exit_code == 0, result.output
    options = GeneratorOptions(policy=policy, current="view")
    assert duckdb_family_differences(zetasql, path, "cdc", "t", options) == []


def test_the_analyzer_accepts_a_cut_to_a_shorter_string_and_each_conversion_in_one_family(zetasql):
    """Parameterized types as BigQuery's version tables keep them (STRING(20)), every conversion at once."""
    steps = [
        {"d": "DATETIME", "n": "FLOAT64", "w": "BIGNUMERIC(38, 10)", "b": "BOOL", "s": "STRING"},
        {"d": "DATE", "n": "NUMERIC(12, 2)", "w": "NUMERIC(12, 2)", "b": "INT64", "s": "STRING(20)"},
        {"d": "DATETIME", "n": "NUMERIC(12, 2)", "w": "NUMERIC(12, 2)", "b": "INT64", "s": "STRING(20)"},
    ]
    versions = [
        TableVersion(
            f"t_v_{n}",
            "t",
            str(n),
            n,
            tuple(Column(name, parse_type(t)) for name, t in [("id", "INT64"), *types.items(), *CDC_COLUMNS]),
            primary_key=("id",),
        )
        for n, types in enumerate(steps)
    ]
    for policy in ("widen", "uniview"):
        planned = plan_family("cdc", "cdc_unified", versions, GeneratorOptions(policy=policy, current="view"))
        assert planned.current is not None
        assert "SUBSTR(" in planned.current.body and "AS NUMERIC(12, 2))" in planned.current.body
        check_family(zetasql, planned)
