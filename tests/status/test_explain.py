"""`uniview explain` on DuckDB through the real CLI: each column's types across versions (runs folded), the
unified type and its rule, renames, the versions' source databases; and the --html page, opened in headless
Chromium, checked on its screenshot's pixels where Chromium lays each cell out."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner
from page_layout import measure_layout, screenshot
from screenshot_png import pixel, read_png
from status_scenario import DATASET, Table, ago, create_duckdb

from uniview.cli.main import main
from uniview.ops.explain.html import CONFLICT_COLOUR, KIND_COLOURS, MARK_WIDTH, RENAME_COLOUR
from uniview.ops.explain.model import KINDS
from uniview.warehouse.url import duckdb_url

VERSIONS = [
    Table(
        "customer_v_a1",
        (("id", "INT64"), ("name", "STRING"), ("memo", "STRING"), ("born", "DATE"), ("addr", "STRUCT<city STRING>")),
        (("db1", ago(days=3)),),
    ),
    Table(
        "customer_v_b2",
        (("id", "INT64"), ("name", "STRING"), ("memo", "STRING"), ("born", "DATETIME")),
        (("db2", ago(days=2)),),
    ),
    Table(
        "customer_v_c3",
        (("id", "STRING"), ("name", "STRING"), ("note", "STRING"), ("born", "TIMESTAMP")),
        (("db1", ago(days=1)), ("db3", ago(hours=1))),
    ),
    Table(
        "customer_v_d4",
        (
            ("id", "STRING"),
            ("name", "STRING"),
            ("note", "STRING"),
            ("born", "TIMESTAMP"),
            ("addr", "STRUCT<zip STRING>"),
        ),
        (("db3", ago(minutes=5)),),
    ),
]
RENAMES = {"uniview_renames": 1, "renames": [{"table": "customer", "from": "memo", "to": "note"}]}


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("explain")
    path = folder / "warehouse.duckdb"
    with duckdb.connect(str(path)) as connection:
        connection.execute("SET TimeZone = 'UTC'")
        connection.execute(f"CREATE SCHEMA {DATASET}")
        create_duckdb(connection, VERSIONS)
    renames = folder / "renames.json"
    renames.write_text(json.dumps(RENAMES))
    return path, renames


def explain(path, *args):
    return CliRunner().invoke(main, ["explain", "--warehouse", duckdb_url(path), "--dataset", DATASET, *args])


def test_each_column_has_its_types_by_version_its_unified_type_and_the_rule(warehouse):
    path, renames = warehouse
    result = explain(path, "--table", "customer", "--json", "--renames", str(renames))
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert [(v["version"], v["source_databases"]) for v in document["versions"]] == [
        ("a1", ["db1"]),
        ("b2", ["db2"]),
        ("c3", ["db1", "db3"]),
        ("d4", ["db3"]),
    ]
    columns = {c["name"]: c for c in document["columns"]}
    assert list(columns)[:5] == ["id", "name", "note", "born", "addr"]
    assert columns["id"]["runs"] == [
        {"versions": ["a1", "b2"], "type": "INT64", "renamed_from": None},
        {"versions": ["c3", "d4"], "type": "STRING", "renamed_from": None},
    ]
    assert (columns["id"]["unified_type"], columns["id"]["conflict"]) == ("STRING", True)
    assert columns["id"]["rule"] == "policy uniview: INT64 and STRING conflict, read as STRING"
    assert columns["name"]["rule"] == "one type in every version" and not columns["name"]["conflict"]
    assert columns["note"]["runs"][0] == {"versions": ["a1", "b2"], "type": "STRING", "renamed_from": "memo"}
    assert columns["note"]["rule"] == "one type in every version; rename: memo read as note"
    assert columns["born"]["rule"].startswith("policy uniview: DATE and DATETIME and TIMESTAMP conflict")
    assert columns["addr"]["unified_type"] == "STRUCT<city STRING, zip STRING>"
    assert columns["addr"]["rule"].startswith("STRUCT merge")
    assert columns["addr"]["runs"][1] == {"versions": ["b2", "c3"], "type": None, "renamed_from": None}


def test_the_widen_policy_names_its_rule(warehouse):
    path, _ = warehouse
    document = json.loads(explain(path, "--table", "customer", "--json", "--policy", "widen").stdout)
    born = next(c for c in document["columns"] if c["name"] == "born")
    assert born["unified_type"] == "TIMESTAMP" and born["rule"].startswith("widening (policy widen)")
    assert "memo" in {c["name"] for c in document["columns"]}  # no renames given: memo stays memo


def test_the_terminal_folds_runs_of_versions(warehouse):
    path, renames = warehouse
    result = explain(path, "--table", "customer", "--renames", str(renames))
    assert result.exit_code == 0, result.output
    assert "a1..b2: INT64; c3..d4: STRING" in result.stdout
    assert "a1..b2: STRING (stored as memo)" in result.stdout


def test_an_unknown_family_is_one_clear_error(warehouse):
    path, _ = warehouse
    result = explain(path, "--table", "nothing")
    assert result.exit_code == 1
    assert result.stderr.startswith("uniview: error: no version tables for 'nothing'")


def test_the_html_page_shows_types_conflicts_and_renames_in_a_real_browser(warehouse, tmp_path):
    path, renames = warehouse
    page = tmp_path / "customer.html"
    result = explain(path, "--table", "customer", "--renames", str(renames), "--html", str(page))
    assert result.exit_code == 0, result.output
    html = page.read_text()
    assert "://" not in html and "<script" not in html  # self-contained: nothing fetched, nothing run
    assert set(KIND_COLOURS) == {*KINDS, "absent"}
    boxes = measure_layout(html, tmp_path)["boxes"]  # where Chromium draws each cell and each column's name
    shot = tmp_path / "customer.png"
    screenshot(page, shot)
    image = read_png(shot)
    inset = 4

    def cell(row, version):
        left, _, _, bottom = boxes[f"cell-{row}-{version}"]
        return pixel(image, int(left) + inset, int(bottom) - inset)

    def top_of(row, version):
        left, top, right, _ = boxes[f"cell-{row}-{version}"]
        return pixel(image, int((left + right) / 2), int(top) + 3)

    def mark(row):
        left, top, _, bottom = boxes[f"name-{row}"]
        return pixel(image, int(left) + MARK_WIDTH // 2, int((top + bottom) / 2))

    id_row, name_row, note_row, born_row, addr_row = range(5)
    assert [cell(id_row, v) for v in range(4)] == [KIND_COLOURS["integer"]] * 2 + [KIND_COLOURS["string"]] * 2
    assert [cell(born_row, v) for v in range(4)] == [KIND_COLOURS["time"]] * 4
    assert [cell(addr_row, v) for v in range(4)] == [
        KIND_COLOURS["struct"],
        KIND_COLOURS["absent"],
        KIND_COLOURS["absent"],
        KIND_COLOURS["struct"],
    ]
    assert (mark(id_row), mark(born_row), mark(addr_row)) == (CONFLICT_COLOUR,) * 3
    assert (mark(name_row), mark(note_row)) == ("#ffffff", "#ffffff")
    assert (top_of(note_row, 0), top_of(note_row, 2)) == (RENAME_COLOUR, KIND_COLOURS["string"])
