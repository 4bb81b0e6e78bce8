"""Shared fixtures of the sink tests: the BigQuery emulator as the connector reaches it, one per test module
(the SparkSession, `spark`, is the test process's, from tests/conftest.py)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def connector_stack(spark, tmp_path_factory):
    """The emulator (REST + Storage Write gRPC behind the TLS front); yields (client, --bigquery-options)."""
    from uniview.local.bigquery_connector import connector_emulator, find_connector
    from uniview.local.bigquery_emulator import DEFAULT_PROJECT, emulator_venv_path, find_emulator_venv
    from uniview.warehouse.bigquery import make_client

    files = find_connector()
    if files is None:
        pytest.skip("spark-bigquery-connector not resolved: run scripts/setup-bigquery-connector.sh")
    if find_emulator_venv() is None:
        pytest.skip(
            f"BigQuery emulator not installed in {emulator_venv_path()}: run scripts/setup-bigquery-emulator.sh"
        )
    if str(files.jar) not in (spark.conf.get("spark.jars", "") or ""):
        pytest.skip("this test run's SparkSession started without the connector jar")
    monkeypatch = pytest.MonkeyPatch()
    with connector_emulator(tmp_path_factory.mktemp("bq-connector")) as emulator:
        monkeypatch.setenv("BIGQUERY_EMULATOR_HOST", emulator.host)
        client = make_client(DEFAULT_PROJECT)
        try:
            yield client, tuple(emulator.options.items())
        finally:
            client.close()
            monkeypatch.undo()
