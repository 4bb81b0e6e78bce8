"""Shared fixtures of the sink tests: one local SparkSession for the whole run, stopped at the end.  It
loads the real spark-bigquery-connector when scripts/setup-bigquery-connector.sh has resolved it."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def spark():
    """A local[2] session shared by every sink test, stopped at the end of the run."""
    pyspark_sql = pytest.importorskip("pyspark.sql", reason="pyspark is not installed")
    from uniview.local.bigquery_connector import find_connector

    builder = (
        pyspark_sql.SparkSession.builder.master("local[2]").appName("uniview-sink-tests")
        .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2")
        .config("spark.ui.showConsoleProgress", "false").config("spark.driver.memory", "1g")
    )
    connector = find_connector()
    for key, value in (connector.spark_settings() if connector else {}).items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
