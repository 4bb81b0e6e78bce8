"""Run statements on a real BigQuery emulator, then a comparison script over its data folder in the emulator's own
venv, which imports uniview's shim (`SHIM`) beside the emulator: how the shim's answers are held to the emulator's."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Sequence
from pathlib import Path

import pytest

import uniview.local
from uniview.local.bigquery_emulator import DEFAULT_PROJECT, bigquery_emulator, find_emulator_venv

SHIM = Path(uniview.local.__file__).parent / "bigquery_emulator_shim.py"


def compared_answers(tmp_path: Path, statements: Sequence[str], compare: str, *arguments: str) -> list:
    """The JSON list `compare` (a Python script, run with the shim's path, the data folder, the project and
    `arguments`) prints last, after `statements` ran on an emulator over a new data folder."""
    venv = find_emulator_venv()
    if venv is None:
        pytest.skip("the BigQuery emulator is not installed: run scripts/setup-bigquery-emulator.sh")
    from google.auth.credentials import AnonymousCredentials
    from google.cloud import bigquery

    data = tmp_path / "data"
    with bigquery_emulator(tmp_path / "log", data_dir=data) as host:
        client = bigquery.Client(
            project=DEFAULT_PROJECT,
            credentials=AnonymousCredentials(),
            client_options={"api_endpoint": f"http://{host}"},
        )
        for statement in statements:
            client.query(statement).result()
        client.close()
    completed = subprocess.run(
        [str(venv / "bin" / "python"), "-c", compare, str(SHIM), str(data), DEFAULT_PROJECT, *arguments],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "HOME": str(venv / "home")},
        check=False,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    return json.loads(completed.stdout.splitlines()[-1])
