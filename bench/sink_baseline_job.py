"""The hand-written job the sink is measured against: what a data engineer writes for the same input.

    python bench/sink_baseline_job.py INPUT OUTPUT [MASTER]

One parse with a fixed envelope schema (`data` as MAP<STRING,STRING>, so every record's values are
parsed), then Parquet partitioned by table and version.  No typing per declared schema, no
quarantine, no accounting: the essential work of reading and splitting CDC records, nothing more.
"""

from __future__ import annotations

import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

ENVELOPE = T.StructType(
    [
        T.StructField("data", T.MapType(T.StringType(), T.StringType())),
        T.StructField(
            "metadata",
            T.StructType(
                [
                    T.StructField(name, T.StringType())
                    for name in (
                        "ingestion_method",
                        "database_name",
                        "table_name",
                        "table_version",
                        "operation",
                        "position",
                        "timestamp",
                    )
                ]
            ),
        ),
    ]
)


def main(source: str, target: str, master: str = "local[2]") -> None:
    spark = (
        SparkSession.builder.master(master)
        .appName("baseline")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    records = spark.read.schema(ENVELOPE).json(source)
    (
        records.select("data", "metadata.*")
        .withColumn("table", F.col("table_name"))
        .withColumn("version", F.coalesce("table_version", F.lit("none")))
        .write.mode("overwrite")
        .partitionBy("table", "version")
        .parquet(target)
    )
    spark.stop()


if __name__ == "__main__":
    main(*sys.argv[1:])
