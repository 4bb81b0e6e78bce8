"""`uniview sink` as a command: one-line errors, the summary, `python -m uniview.sink`."""

from __future__ import annotations

import subprocess
import sys

import pytest
from click.testing import CliRunner
from sink_support import record, write_ndjson

from uniview.sink.command import sink_command
from uniview.warehouse.url import duckdb_url


@pytest.mark.parametrize(("args", "code", "message"), [
    (["--warehouse", "duckdb:///x.duckdb"], 2, "Missing option '--input'"),
    (["--input", "in", "--warehouse", "duckdb:///x.duckdb", "--bogus"], 2, "No such option '--bogus'"),
    (["--input", "in", "--warehouse", "duckdb:///x.duckdb", "--bigquery-option", "nokey"], 2, "is not KEY=VALUE"),
    (["--input", "in", "--warehouse", "mysql://x"], 1, "invalid --warehouse 'mysql://x'"),
    (["--input", "in", "--warehouse", "bigquery://BAD_PROJECT"], 1, "invalid project id"),
    (["--input", "in", "--warehouse", "duckdb:///x.duckdb", "--stream"], 1, "--stream needs --checkpoint"),
    (["--input", "in", "--warehouse", "duckdb:///x.duckdb", "--available-now"], 1, "only used with --stream"),
    (["--input", "in", "--warehouse", "duckdb:///x.duckdb", "--dataset", "my-db"], 1, "invalid --dataset name"),
    (["--input", "in", "--warehouse", "duckdb:///x.duckdb", "--notify", "kafka://x"], 1, "invalid --notify"),
    (["--input", "in", "--warehouse", "duckdb:///x.duckdb", "--notify", "pubsub://proj"], 1, "pubsub://PROJECT/TOPIC"),
])
def test_bad_arguments_are_one_line_on_stderr(args, code, message):
    result = CliRunner().invoke(sink_command, args)
    assert result.exit_code == code
    assert result.stdout == ""
    assert len(result.stderr.splitlines()) == 1 and result.stderr.startswith("uniview sink: error: ")
    assert message in result.stderr


def test_registered_as_uniview_sink():
    from uniview.cli import main

    result = CliRunner().invoke(main, ["sink", "--input", "x", "--warehouse", "nowhere"])
    assert result.exit_code == 1 and result.stderr.strip().startswith("uniview sink: error: invalid --warehouse")


def test_missing_input_is_one_line(spark, tmp_path):
    result = CliRunner().invoke(sink_command, ["--input", str(tmp_path / "absent"), "--warehouse",
                                               duckdb_url(tmp_path / "w.duckdb")])
    assert result.exit_code == 1 and len(result.stderr.splitlines()) == 1
    assert "cannot read --input" in result.stderr


def test_a_run_prints_its_totals(spark, tmp_path):
    write_ndjson(tmp_path / "in" / "a.json", [record("customer", {"id": 1}, [("id", "int")]), "garbage"])
    result = CliRunner().invoke(sink_command, ["--input", str(tmp_path / "in"), "--warehouse",
                                               duckdb_url(tmp_path / "w.duckdb"), "--quiet"])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0] == "read=2 written=1 quarantined=1 batches=1 replayed=0"
    assert "unparseable" in result.stdout


def test_python_dash_m_runs_the_command():
    done = subprocess.run([sys.executable, "-m", "uniview.sink", "--input", "in", "--warehouse", "duckdb:///x.duckdb",
                           "--stream"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert done.stderr == "uniview sink: error: --stream needs --checkpoint DIR (where Spark records its progress)\n"
    help_text = subprocess.run([sys.executable, "-m", "uniview.sink", "--help"], capture_output=True, text=True, timeout=60)
    assert help_text.returncode == 0 and "--available-now" in help_text.stdout
