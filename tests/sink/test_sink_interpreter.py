"""`uniview sink --format debezium` run as the README runs it: `.venv/bin/uniview` from a folder outside the
checkout, nothing activated.  Spark's Python workers (which run the Debezium conversion) use the interpreter
uniview runs in, unless the user chose another with PYSPARK_PYTHON, and are forked by uniview's daemon module."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from sink_support import query

import uniview

CHECKOUT = Path(uniview.__file__).resolve().parent.parent
EVENT = {
    "schema": {
        "type": "struct",
        "fields": [{"field": "after", "type": "struct", "fields": [{"field": "id", "type": "int32"}]}],
    },
    "payload": {"op": "c", "source": {"db": "shop", "table": "t", "connector": "postgresql"}, "after": {"id": 7}},
}


def run_from_elsewhere(folder: Path, **env: str) -> subprocess.CompletedProcess:
    """`<venv>/bin/uniview sink --format debezium` in `folder`, with no venv on PATH, no VIRTUAL_ENV and no
    PYTHONPATH: a worker started as `python3` from PATH would not find uniview."""
    (folder / "events.json").write_text(json.dumps(EVENT) + "\n")
    clean = {k: v for k, v in os.environ.items() if k not in {"VIRTUAL_ENV", "PYTHONPATH", "PYSPARK_PYTHON"}}
    bin_dir = str(Path(sys.executable).parent)
    clean["PATH"] = os.pathsep.join(p for p in clean.get("PATH", "").split(os.pathsep) if p != bin_dir)
    command = [str(Path(sys.executable).with_name("uniview")), "sink", "--format", "debezium"]
    command += ["--input", "events.json", "--warehouse", "duckdb:///" + str(folder / "w.duckdb")]
    return subprocess.run(command, cwd=folder, env={**clean, **env}, capture_output=True, text=True, timeout=300)


def test_the_workers_use_unviews_interpreter_from_any_folder(tmp_path):
    assert not tmp_path.is_relative_to(CHECKOUT)
    done = run_from_elsewhere(tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "ModuleNotFoundError" not in done.stderr
    assert query(tmp_path / "w.duckdb", "SELECT id FROM cdc.t_v_f3120e234cc6") == [(7,)]


def test_the_users_pyspark_python_is_kept(tmp_path):
    used = tmp_path / "used"
    wrapper = tmp_path / "python"
    wrapper.write_text(f'#!/bin/sh\necho "$@" >> {used}\nexec {sys.executable} "$@"\n')
    wrapper.chmod(0o755)
    done = run_from_elsewhere(tmp_path, PYSPARK_PYTHON=str(wrapper))
    assert done.returncode == 0, done.stderr[-2000:]
    assert "-m uniview.local.spark_daemon" in used.read_text()  # the daemon of a session uniview starts itself
