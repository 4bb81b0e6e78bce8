"""`uniview sink` as a command: one-line errors, the summary, `python -m uniview.sink`."""

from __future__ import annotations

import subprocess
import sys

import pytest
from click.testing import CliRunner
from sink_support import query, record, write_ndjson

from uniview.cli.sink import sink_command
from uniview.sink.versioning import SourceColumn, compute_version
from uniview.warehouse.url import duckdb_url


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--warehouse", "duckdb:///x.duckdb"], 2, "Missing option '--input'"),
        (["--input", "in", "--warehouse", "duckdb:///x.duckdb", "--bogus"], 2, "No such option '--bogus'"),
        (["--input", "in", "--warehouse", "duckdb:///x.duckdb", "--bigquery-option", "nokey"], 2, "is not KEY=VALUE"),
        (["--input", "in", "--warehouse", "mysql://x"], 1, "invalid --warehouse 'mysql://x'"),
        (["--input", "in", "--warehouse", "bigquery://BAD_PROJECT"], 1, "invalid project id"),
        (["--input", "in", "--warehouse", "duckdb:///x.duckdb", "--stream"], 1, "--stream needs --checkpoint"),
        (["--input", "in", "--warehouse", "duckdb:///x.duckdb", "--available-now"], 1, "only used with --stream"),
        (["--input", "in", "--warehouse", "duckdb:///x.duckdb", "--dataset", "my-db"], 1, "invalid --dataset name"),
        (
            ["--input", "in", "--warehouse", "duckdb:///x.duckdb", "--dataset", "cdc", "--dataset-per-database"],
            2,
            "--dataset and --dataset-per-database exclude each other",
        ),
        (
            ["--input", "in", "--warehouse", "duckdb:///x.duckdb", "--fallback-dataset", "lost"],
            2,
            "--fallback-dataset is only used with --dataset-per-database",
        ),
        (["--input", "in", "--warehouse", "duckdb:///x.duckdb", "--notify", "kafka://x"], 1, "invalid --notify"),
        (
            ["--input", "in", "--warehouse", "duckdb:///x.duckdb", "--notify", "pubsub://proj"],
            1,
            "pubsub://PROJECT/TOPIC",
        ),
        (
            ["--input", "in", "--warehouse", "duckdb:///x.duckdb", "--load-memory", "lots"],
            1,
            "invalid --load-memory 'lots'",
        ),
        (
            ["--input", "in", "--warehouse", "bigquery://my-project", "--load-memory", "4GB"],
            1,
            "with a DuckDB --warehouse",
        ),
    ],
)
def test_bad_arguments_are_one_line_on_stderr(args, code, message):
    result = CliRunner().invoke(sink_command, args)
    assert result.exit_code == code
    assert result.stdout == ""
    assert len(result.stderr.splitlines()) == 1 and result.stderr.startswith("uniview sink: error: ")
    assert message in result.stderr


def test_registered_as_uniview_sink():
    from uniview.cli.main import main

    result = CliRunner().invoke(main, ["sink", "--input", "x", "--warehouse", "nowhere"])
    assert result.exit_code == 1 and result.stderr.strip().startswith("uniview sink: error: invalid --warehouse")


def test_missing_input_is_one_line(spark, tmp_path):
    result = CliRunner().invoke(
        sink_command, ["--input", str(tmp_path / "absent"), "--warehouse", duckdb_url(tmp_path / "w.duckdb")]
    )
    assert result.exit_code == 1 and len(result.stderr.splitlines()) == 1
    assert "cannot read --input" in result.stderr


def test_a_run_prints_its_totals(spark, tmp_path):
    write_ndjson(tmp_path / "in" / "a.json", [record("customer", {"id": 1}, [("id", "int")]), "garbage"])
    result = CliRunner().invoke(
        sink_command, ["--input", str(tmp_path / "in"), "--warehouse", duckdb_url(tmp_path / "w.duckdb"), "--quiet"]
    )
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0] == "read=2 written=1 quarantined=1 skipped=0 batches=1 replayed=0"
    assert "unparseable" in result.stdout


#: Records of two source databases, one that names none and one whose name is no dataset name.
FLEET_RECORDS = [
    record("customer", {"id": 1}, [("id", "int")], database="shop1"),
    record("customer", {"id": 1}, [("id", "int")], database="shop2"),
    record("customer", {"id": 2}, [("id", "int")], database=None),
    record("customer", {"id": 3}, [("id", "int")], database="shop-3"),
]


def landed(warehouse):
    """{dataset: sorted (table, _cdc_database, id)} of every version table, and the quarantine's (dataset, reason)."""
    tables = query(warehouse, "SELECT schema_name, table_name FROM duckdb_tables() WHERE contains(table_name, '_v_')")
    rows = {
        dataset: sorted(query(warehouse, f'SELECT \'{table}\', _cdc_database, id FROM "{dataset}"."{table}"'))
        for dataset, table in tables
    }
    quarantines = query(warehouse, "SELECT schema_name FROM duckdb_tables() WHERE table_name = '_uniview_quarantine'")
    rejected = sorted(
        (dataset, reason)
        for (dataset,) in quarantines
        for (reason,) in query(warehouse, f'SELECT reason FROM "{dataset}"._uniview_quarantine')
    )
    return rows, rejected


def test_every_record_lands_in_one_shared_dataset_unless_one_per_database_is_asked_for(spark, tmp_path):
    """The default: one dataset `cdc`, the tenant in _cdc_database (a database name that is no dataset name is a
    tenant like any other); a record that names no database is quarantined there, never landed without its
    tenant.  --dataset-per-database routes by database_name, its rejections in the fallback dataset."""
    write_ndjson(tmp_path / "in" / "a.json", FLEET_RECORDS)
    table = f"customer_v_{compute_version('customer', [SourceColumn('id', 'int')])}"
    for extra in ([], ["--dataset-per-database"]):
        warehouse = tmp_path / f"w{len(extra)}.duckdb"
        arguments = ["--input", str(tmp_path / "in"), "--warehouse", duckdb_url(warehouse), "--quiet", *extra]
        result = CliRunner().invoke(sink_command, arguments)
        assert result.exit_code == 0, result.output
        if not extra:
            assert landed(warehouse) == (
                {"cdc": [(table, "shop-3", 3), (table, "shop1", 1), (table, "shop2", 1)]},
                [("cdc", "missing_metadata")],
            )
        else:
            assert landed(warehouse) == (
                {"shop1": [(table, "shop1", 1)], "shop2": [(table, "shop2", 1)]},
                [("uniview", "invalid_metadata"), ("uniview", "missing_metadata")],
            )


def test_python_dash_m_runs_the_command():
    done = subprocess.run(
        [sys.executable, "-m", "uniview.sink", "--input", "in", "--warehouse", "duckdb:///x.duckdb", "--stream"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert done.stderr == "uniview sink: error: --stream needs --checkpoint DIR (where Spark records its progress)\n"
    help_text = subprocess.run(
        [sys.executable, "-m", "uniview.sink", "--help"], capture_output=True, text=True, timeout=60
    )
    assert help_text.returncode == 0 and "--available-now" in help_text.stdout


def test_notify_inline_takes_the_same_view_options_as_refresh(spark, tmp_path):
    write_ndjson(
        tmp_path / "in" / "a.json", [record("price", {"id": 1, "amount": 5}, [("id", "int"), ("amount", "int")])]
    )
    write_ndjson(
        tmp_path / "in" / "b.json",
        [record("price", {"id": 2, "amount": "2.50"}, [("id", "int"), ("amount", "decimal(10,2)")])],
    )
    warehouse = tmp_path / "w.duckdb"
    result = CliRunner().invoke(
        sink_command,
        [
            "--input",
            str(tmp_path / "in"),
            "--warehouse",
            duckdb_url(warehouse),
            "--dataset",
            "shop",
            "--quiet",
            "--notify",
            "inline",
            "--policy",
            "widen",
            "--source-column",
            "_src",
            "--target-dataset",
            "views",
        ],
    )
    assert result.exit_code == 0, result.output
    types = dict(
        query(
            warehouse,
            "SELECT column_name, data_type FROM information_schema.columns "
            "WHERE table_schema = 'views' AND table_name = 'price_unified'",
        )
    )
    assert types["amount"].startswith("DECIMAL") and "_src" in types  # widened, not STRING; source column kept
    assert query(warehouse, "SELECT id, CAST(amount AS VARCHAR) FROM views.price_unified ORDER BY id") == [
        (1, "5.000000000"),
        (2, "2.500000000"),
    ]


def test_a_bad_view_option_is_named_as_the_flag():
    result = CliRunner().invoke(
        sink_command,
        [
            "--input",
            "in",
            "--warehouse",
            "duckdb:///x.duckdb",
            "--notify",
            "inline",
            "--datetime-timezone",
            "localtime",
        ],
    )
    assert result.exit_code == 1 and result.stderr.startswith("uniview sink: error: --datetime-timezone: unknown")


BLOCK_OPTIONAL_PACKAGES = """
import sys
class Absent:
    # What `pip install '.[spark]'` alone does not install cannot be imported here.
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {"google", "functions_framework", "cloudevents", "requests"}:
            raise ImportError(f"{name} is not installed with the spark extra")
        return None
sys.meta_path.insert(0, Absent())
from uniview.cli.sink import main
main(sys.argv[1:])
"""


def test_the_spark_extra_alone_runs_the_sink_into_duckdb(tmp_path):
    """Only pyspark and the base dependencies: the sink lands into DuckDB and refreshes inline."""
    write_ndjson(tmp_path / "in" / "a.json", [record("customer", {"id": 1}, [("id", "int")])])
    warehouse = tmp_path / "w.duckdb"
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            BLOCK_OPTIONAL_PACKAGES,
            "--input",
            str(tmp_path / "in"),
            "--warehouse",
            duckdb_url(warehouse),
            "--notify",
            "inline",
            "--quiet",
            "--master",
            "local[1]",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert query(warehouse, "SELECT id FROM cdc_unified.customer_unified") == [(1,)]


LOCAL_JVM_ARGUMENTS = """
from uniview.cli.sink import _new_session
spark = _new_session("local[1]")
print("\\n".join(spark._jvm.java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments()))
spark.stop()
"""


def test_a_local_session_starts_its_jvm_with_the_sinks_options():
    """Spark's generated code may pass HotSpot's JIT size limit: the JVM must allow compiling it."""
    from uniview.sink.job import JVM_OPTIONS

    done = subprocess.run([sys.executable, "-c", LOCAL_JVM_ARGUMENTS], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert JVM_OPTIONS in done.stdout.splitlines()


def test_the_summary_of_a_run_over_many_tables_fits_a_terminal_and_json_lists_them_all(spark, tmp_path):
    import json

    from uniview.sink.summary import SHOWN

    lines = [record("customer", {"id": n}, [("id", "int")], database=f"db{n % 25:02d}") for n in range(60)]
    write_ndjson(tmp_path / "in" / "a.json", lines)
    arguments = ["--input", str(tmp_path / "in"), "--quiet", "--notify", "none", "--dataset-per-database"]  # 25 tables
    shown = CliRunner().invoke(sink_command, [*arguments, "--warehouse", duckdb_url(tmp_path / "a.duckdb")])
    assert shown.exit_code == 0, shown.output
    output = shown.stdout.splitlines()
    assert output[0] == "read=60 written=60 quarantined=0 skipped=0 batches=1 replayed=0"
    assert f"the {SHOWN} largest of 25" in shown.stdout and "15 more (--json lists them all)" in shown.stdout
    assert len(output) < 25 and "db00.customer_v_" in shown.stdout  # db00..db09 have 3 rows, the rest 2
    listed = CliRunner().invoke(sink_command, [*arguments, "--json", "--warehouse", duckdb_url(tmp_path / "b.duckdb")])
    document = json.loads(listed.stdout)
    assert (document["read"], document["written"], len(document["written_by_table"])) == (60, 60, 25)
    assert sorted(set(document["written_by_table"].values())) == [2, 3]
    assert sum(document["written_by_table"].values()) == 60
