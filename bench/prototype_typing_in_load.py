"""A prototype of the sink with typing in the warehouse's load step, measured against the sink and the job.

    python bench/prototype_typing_in_load.py INPUT STAGING DUCKDB_FILE [MASTER]

For measuring a design, not for landing data.  Spark parses each line's metadata once (the declared
schema kept as text) and writes Parquet partitioned by table and version, holding the line and its
metadata.  DuckDB then reads the routing keys from those files, the sink's own `plan_routes` routes them,
and DuckDB parses each version's `data` from its lines and types it vectorized with the sink's type
rules as SQL (uniview.sink.load_typing), writing the rows that fit into their version table and the
others into the quarantine with the sink's reasons and details.  It leaves out rejected routing keys,
Debezium's conversions, the batch ledger and its transaction (it stops when its counts do not add up).
Prints one JSON line: the counts and the seconds of each phase.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import duckdb
from sqlglot import exp
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from uniview.sink.frames import METADATA_SCHEMA  # noqa: E402
from uniview.sink.job import JVM_OPTIONS, SESSION_SETTINGS  # noqa: E402
from uniview.sink.routing import RecordKey, VersionRoute, plan_routes  # noqa: E402
from uniview.sink.load_typing import (  # noqa: E402
    DataObject, computed, data_object, data_of, data_verdict, typed_column, value_texts,
)
from uniview.warehouse.duckdb_connection import quote_identifier as quote_ident  # noqa: E402
from uniview.warehouse.duckdb_connection import string_literal as quote_string  # noqa: E402

#: The metadata only (the sink's own schema of it): Spark skips `data`, which DuckDB parses from the staged line.
_ENVELOPE = T.StructType([T.StructField("metadata", METADATA_SCHEMA), T.StructField("corrupt", T.StringType())])
_SEQUENCE = (r"lpad(regexp_extract(position, 'mysql-bin\.([0-9]+):([0-9]+)', 1), 20, '0') || "
             r"lpad(regexp_extract(position, 'mysql-bin\.([0-9]+):([0-9]+)', 2), 20, '0')")


def stage(source: str, staging: str, master: str) -> None:
    """The one Spark job: every line's metadata parsed once, the line staged by table and version."""
    spark = (SparkSession.builder.master(master).appName("prototype").config("spark.ui.enabled", "false")
             .config("spark.driver.extraJavaOptions", JVM_OPTIONS).getOrCreate())
    for key, value in SESSION_SETTINGS.items():
        spark.conf.set(key, value)
    lines = spark.read.text(source)
    parsed = lines.select("value", F.from_json("value", _ENVELOPE, {"columnNameOfCorruptRecord": "corrupt"}).alias("m"))
    (parsed.select(F.col("value").alias("raw_line"), "m.metadata.*",
                   F.col("m.corrupt").alias("corrupt"))
     .write.mode("overwrite").partitionBy("table_name", "table_version").parquet(staging))
    spark.stop()


def land_route(connection, staging: str, route: VersionRoute, schema_text: str) -> None:
    """Type one version's staged rows: those that fit go to its table, the others to the quarantine with the
    sink's reason and detail."""
    names = [column.name for column in route.columns]
    line, data = exp.column("raw_line"), exp.column("data")
    # sqlglot's lists count from 0; it renders DuckDB's from 1
    texts = [exp.Bracket(this=exp.column("fields"), expressions=[exp.Literal.number(j)]) for j in range(len(names))]
    typed = [typed_column(data, column.name, column.bq_type, line, text=text) for column, text in zip(route.columns, texts)]
    values = ", ".join(f"{text.sql('duckdb')} AS r{j}, {c.value.sql('duckdb')} AS t{j}"
                       for j, (text, c) in enumerate(zip(texts, typed)))
    judged = [computed(c, column.bq_type, exp.column(f"r{j}"), exp.column(f"t{j}"))
              for j, (c, column) in enumerate(zip(typed, route.columns))]
    verdict = data_verdict(DataObject(exp.column("kind"), exp.column("keys")), route.columns, judged)
    source = f"{staging}/table_name={route.table}/table_version={route.version}/*.parquet"
    with_data = f"SELECT *, {data_of(line).sql('duckdb')} AS data FROM read_parquet({quote_string(source)}) WHERE schema = ?"
    with_texts = f"SELECT *, {value_texts(data, names).sql('duckdb')} AS fields FROM ({with_data})"
    objects = data_object(data)
    # only what the inserts read is kept: the data, texts and keys stay in the pipeline
    kept = ", ".join(f"t{j}" for j in range(len(names)))
    connection.execute(
        f"CREATE OR REPLACE TEMP TABLE typed AS SELECT raw_line, {kept}, operation, position, "
        f"{_SEQUENCE} AS change_sequence, TRY_CAST(\"timestamp\" AS TIMESTAMPTZ) AS changed_at, "
        f"{verdict.reason.sql('duckdb')} AS reason, {verdict.detail.sql('duckdb')} AS detail FROM ("
        f"SELECT *, {values}, {objects.kind.sql('duckdb')} AS kind, {objects.keys.sql('duckdb')} AS keys "
        f"FROM ({with_texts}))", [schema_text])
    columns = ", ".join(f"t{j} AS {quote_ident(name)}" for j, name in enumerate(names))
    connection.execute(
        f"CREATE TABLE shop.{quote_ident(route.table_name)} AS SELECT {columns}, operation AS _cdc_operation, "
        "position AS _cdc_position, change_sequence AS _cdc_sequence, changed_at AS _cdc_timestamp "
        "FROM typed WHERE reason IS NULL")
    connection.execute("INSERT INTO shop.quarantine SELECT raw_line, reason, detail FROM typed WHERE reason IS NOT NULL")


def land(staging: str, database: str) -> dict:
    """Route from the staged files and land every version; returns the counts."""
    connection = duckdb.connect(database)
    connection.execute("SET TimeZone = 'UTC'")
    every = f"read_parquet({quote_string(staging + '/*/*/*.parquet')}, hive_partitioning = true)"
    keys = connection.execute(f"SELECT DISTINCT database_name, table_name, table_version, schema, primary_key FROM {every} "
                              "WHERE corrupt IS NULL").fetchall()
    plan = plan_routes([RecordKey(*key) for key in keys], "shop", "shop", lambda tables: {})
    schema_of = {decision.route: key.schema_text for key, decision in plan.decisions.items() if decision.route is not None}
    connection.execute("CREATE SCHEMA shop")
    connection.execute("CREATE TABLE shop.quarantine (raw_line VARCHAR, reason VARCHAR, detail VARCHAR)")
    for index, route in enumerate(plan.routes):
        land_route(connection, staging, route, schema_of[index])
    connection.execute(f"INSERT INTO shop.quarantine SELECT raw_line, 'unparseable', NULL FROM {every} "
                       "WHERE corrupt IS NOT NULL")
    written = sum(connection.execute(f"SELECT count(*) FROM shop.{quote_ident(route.table_name)}").fetchone()[0]
                  for route in plan.routes)
    counts = {"read": connection.execute(f"SELECT count(*) FROM {every}").fetchone()[0], "written": written,
              "quarantined": connection.execute("SELECT count(*) FROM shop.quarantine").fetchone()[0]}
    connection.close()
    if counts["read"] != written + counts["quarantined"]:
        raise SystemExit(f"the prototype does not account for every line (it does not quarantine rejected routing "
                         f"keys): {counts}")
    return counts


def main(source: str, staging: str, database: str, master: str = "local[2]") -> None:
    started = time.perf_counter()
    stage(source, staging, master)
    staged = time.perf_counter()
    counts = land(staging, database)
    print(json.dumps({**counts, "spark_seconds": round(staged - started, 1),
                      "duckdb_seconds": round(time.perf_counter() - staged, 1)}))


if __name__ == "__main__":
    main(*sys.argv[1:])
