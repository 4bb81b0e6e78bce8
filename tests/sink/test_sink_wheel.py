"""The Dataproc artifact: a wheel with the sink and the SQL templates, and the entry script run by
spark-submit with that wheel in --py-files (as `gcloud dataproc jobs submit pyspark` does)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from sink_support import query, record, write_ndjson

from uniview.warehouse.url import duckdb_url

ROOT = Path(__file__).resolve().parents[2]
SPARK_SUBMIT = Path(sys.executable).parent / "spark-submit"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if built.returncode != 0 and "Could not find a version that satisfies the requirement hatchling" in built.stderr:
        pytest.skip("the build backend (hatchling) cannot be fetched: no package index reachable")
    assert built.returncode == 0, built.stderr
    (path,) = out.glob("uniview-*-py3-none-any.whl")
    return path


def test_wheel_contains_the_sink_and_the_templates(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    sink_modules = {p.name for p in (ROOT / "uniview" / "sink").glob("*.py")}
    assert {f"uniview/sink/{name}" for name in sink_modules} <= names
    templates = {p.name for p in (ROOT / "sql_templates").glob("*.j2")}
    assert templates and {f"uniview/sql_templates/{name}" for name in templates} <= names
    assert not any("__pycache__" in name or name.startswith("tests/") for name in names)


def test_spark_submit_runs_the_entry_script_from_the_wheel(wheel, tmp_path):
    """The driver imports uniview only from --py-files: the interpreter below cannot import it otherwise."""
    site_packages = next(p for p in sys.path if p.endswith("site-packages"))
    python = tmp_path / "python-without-uniview"
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" -S "$@"\n')
    python.chmod(python.stat().st_mode | stat.S_IEXEC)
    env = {
        **os.environ,
        "PYSPARK_PYTHON": str(python),
        "PYSPARK_DRIVER_PYTHON": str(python),
        "PYTHONPATH": site_packages,
    }
    probe = subprocess.run([str(python), "-c", "import uniview.sink"], env=env, cwd=tmp_path, capture_output=True)
    assert probe.returncode != 0, "uniview is importable without the wheel; the test would prove nothing"
    write_ndjson(tmp_path / "in" / "a.json", [record("customer", {"id": 1}, [("id", "int")]), "junk"])
    warehouse = tmp_path / "w.duckdb"
    done = subprocess.run(
        [
            str(SPARK_SUBMIT),
            "--master",
            "local[1]",
            "--conf",
            "spark.ui.enabled=false",
            "--py-files",
            str(wheel),
            str(ROOT / "dataproc" / "uniview_sink.py"),
            "--input",
            str(tmp_path / "in"),
            "--warehouse",
            duckdb_url(warehouse),
            "--dataset",
            "cdc",
            "--quiet",
        ],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "read=2 written=1 quarantined=1" in done.stdout
    assert query(warehouse, "SELECT count(*) FROM cdc._uniview_quarantine") == [(1,)]
