"""Shared fixtures of the sink tests: one local SparkSession for the whole run, stopped at the end (it
loads the real spark-bigquery-connector when scripts/setup-bigquery-connector.sh has resolved it), and
the BigQuery emulator as the connector reaches it, one per test module."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def spark():
    """A local[2] session shared by every sink test, stopped at the end of the run."""
    pyspark_sql = pytest.importorskip("pyspark.sql", reason="pyspark is not installed")
    from uniview.local.bigquery_connector import find_connector

    builder = (
        pyspark_sql.SparkSession.builder.master("local[2]")
        .appName("uniview-sink-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", "1g")
    )
    connector = find_connector()
    for key, value in (connector.spark_settings() if connector else {}).items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


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
