"""The hand-written job the sink's BigQuery path is measured against: what a data engineer writes to land
the same input in one BigQuery table with the connector Dataproc ships.

    python bench/sink_bigquery_baseline_job.py INPUT PROJECT.DATASET.TABLE [KEY=VALUE ...]

The same parse as bench/sink_baseline_job.py (a fixed envelope schema, `data` as MAP<STRING,STRING>, so
every record's values are parsed), then ONE connector write (`writeMethod=direct`, the Storage Write API)
of every parsed row into one table, which the connector creates.  No typing per declared schema, no
table per version, no quarantine, no exactly-once ledger: the essential Spark work, nothing more.
KEY=VALUE are connector options (the emulator's endpoints); the dataset must exist.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path

from pyspark.sql import SparkSession

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.sink_baseline_job import ENVELOPE


def land(spark: SparkSession, source: str, table: str, options: Mapping[str, str]) -> None:
    """Parse the NDJSON lines under `source` and append them to `table` with one connector write."""
    records = spark.read.schema(ENVELOPE).json(source)
    (
        records.select("data", "metadata.*")
        .write.format("bigquery")
        .options(**{"writeMethod": "direct", **options, "table": table})
        .mode("append")
        .save()
    )


def main(argv: list[str]) -> None:
    from uniview.local.bigquery_connector import find_connector

    source, table, *pairs = argv
    builder = SparkSession.builder.master("local[2]").appName("baseline").config("spark.ui.enabled", "false")
    connector = find_connector()
    for key, value in (connector.spark_settings() if connector else {}).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    try:
        land(spark, source, table, dict(pair.split("=", 1) for pair in pairs))
    finally:
        spark.stop()


if __name__ == "__main__":
    main(sys.argv[1:])
