"""Shared fixtures of the sink tests: one local SparkSession for the whole run, stopped at the end."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def spark():
    """A local[2] session shared by every sink test, stopped at the end of the run."""
    pyspark_sql = pytest.importorskip("pyspark.sql", reason="pyspark is not installed")
    session = (
        pyspark_sql.SparkSession.builder.master("local[2]").appName("uniview-sink-tests")
        .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2")
        .config("spark.ui.showConsoleProgress", "false").config("spark.driver.memory", "1g")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
