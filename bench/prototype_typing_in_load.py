"""A prototype of the sink with typing in the warehouse's load step, measured against the sink and the job.

    python bench/prototype_typing_in_load.py INPUT STAGING DUCKDB_FILE [MASTER]

For measuring a design, not for landing data.  Spark parses each line's metadata once (the declared
schema kept as text) and writes Parquet partitioned by table and version, holding the line and its
metadata.  DuckDB then reads the routing keys from those files, the sink's own `plan_routes` routes them,
and DuckDB parses each version's `data` from its lines and types it vectorized with the sink's guards
written as SQL, writing the rows that fit into their version table and the others into the quarantine.
It types the declared types of bench/bench_sink.py only, and leaves out rejected routing keys, the
quarantine's detail texts, repeated keys, decimals of more than 15 digits, nested types, Debezium's
conversions, the batch ledger and its transaction (it stops when its counts do not add up).
Prints one JSON line: the counts and the seconds of each phase.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import duckdb
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from uniview.sink.frames import METADATA_SCHEMA  # noqa: E402
from uniview.sink.job import JVM_OPTIONS, SESSION_SETTINGS  # noqa: E402
from uniview.sink.routing import RecordKey, VersionRoute, plan_routes  # noqa: E402
from uniview.types import decimal_parameters  # noqa: E402
from uniview.warehouse.duckdb_connection import quote_identifier as quote_ident  # noqa: E402
from uniview.warehouse.duckdb_connection import string_literal as quote_string  # noqa: E402

#: The metadata only (the sink's own schema of it): Spark skips `data`, which DuckDB parses from the staged line.
_ENVELOPE = T.StructType([T.StructField("metadata", METADATA_SCHEMA), T.StructField("corrupt", T.StringType())])
_DATETIME = r"[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,6})?"
#: The sink's guards (uniview/sink/spark_types.py) as DuckDB SQL: {BigQuery type: (pattern or None, value)}.
_TYPING = {
    "INT64": (r"-?[0-9]{1,19}", "TRY_CAST({v} AS BIGINT)"),
    "FLOAT64": (None, "TRY_CAST({v} AS DOUBLE)"),
    "NUMERIC": (r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?", "TRY_CAST({v} AS DECIMAL({p}, {s}))"),
    "DATE": (r"[0-9]{4}-[0-9]{2}-[0-9]{2}", "TRY_CAST({v} AS DATE)"),
    "DATETIME": (_DATETIME, "TRY_CAST({v} AS TIMESTAMP)"),
    "TIMESTAMP": (_DATETIME + r"(Z|[+-][0-9]{2}:?[0-9]{2})?", "TRY_CAST({v} AS TIMESTAMPTZ)"),
    "BOOL": (None, "CASE WHEN lower({v}) = 'true' THEN true WHEN lower({v}) = 'false' THEN false "
                   r"WHEN regexp_full_match({v}, '-?[0-9]+') THEN NOT regexp_full_match({v}, '-?0+') END"),
    "JSON": (None, "CASE WHEN json_valid({v}) THEN {v} END"),
    "STRING": (None, "{v}"),
}
_DATA_IS_OBJECT = "json_type(raw_line, '$.data') = 'OBJECT'"
_SEQUENCE = (r"lpad(regexp_extract(position, 'mysql-bin\.([0-9]+):([0-9]+)', 1), 20, '0') || "
             r"lpad(regexp_extract(position, 'mysql-bin\.([0-9]+):([0-9]+)', 2), 20, '0')")


def typed(bq_type, value: str) -> str:
    """DuckDB SQL for the landing value of `value` (text) as `bq_type`: NULL when it does not fit."""
    pattern, template = _TYPING[bq_type.name]
    precision, scale = decimal_parameters(bq_type) if bq_type.name == "NUMERIC" else (0, 0)
    cast = template.format(v=value, p=precision, s=scale)
    return cast if pattern is None else f"CASE WHEN regexp_full_match({value}, {quote_string(pattern)}) THEN {cast} END"


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
    """Type one version's staged rows: those that fit go to its table, the others to the quarantine."""
    names = [column.name for column in route.columns]
    raw = [f"fields[{j + 1}]" for j in range(len(names))]
    paths = "[" + ", ".join(quote_string(f'$."{name}"') for name in names) + "]"
    values = ", ".join(f"{r} AS r{j}, {typed(c.bq_type, r)} AS t{j}" for j, (r, c) in enumerate(zip(raw, route.columns)))
    misfit = " OR ".join(f"(r{j} IS NOT NULL AND t{j} IS NULL)" for j in range(len(names)))
    files = f"{staging}/table_name={route.table}/table_version={route.version}/*.parquet"
    connection.execute(
        f"CREATE OR REPLACE TEMP TABLE typed AS SELECT *, NOT known AS unknown, {misfit} AS misfit FROM ("
        f"SELECT raw_line, list_has_all([{', '.join(quote_string(n) for n in names)}], json_keys(data)) AS known, "
        f"{values}, operation, position, {_SEQUENCE} AS change_sequence, "
        "TRY_CAST(\"timestamp\" AS TIMESTAMPTZ) AS changed_at "
        f"FROM (SELECT *, json_extract_string(data, {paths}) AS fields FROM (SELECT *, json_extract(raw_line, '$.data') "
        f"AS data FROM read_parquet({quote_string(files)}) WHERE schema = ?)))", [schema_text])
    columns = ", ".join(f"t{j} AS {quote_ident(name)}" for j, name in enumerate(names))
    connection.execute(
        f"CREATE TABLE shop.{quote_ident(route.table_name)} AS SELECT {columns}, operation AS _cdc_operation, "
        "position AS _cdc_position, change_sequence AS _cdc_sequence, changed_at AS _cdc_timestamp "
        "FROM typed WHERE NOT unknown AND NOT misfit")
    connection.execute("INSERT INTO shop.quarantine SELECT raw_line, CASE WHEN unknown THEN 'unknown_column' "
                       "ELSE 'type_mismatch' END FROM typed WHERE unknown OR misfit")


def land(staging: str, database: str) -> dict:
    """Route from the staged files and land every version; returns the counts."""
    connection = duckdb.connect(database)
    every = f"read_parquet({quote_string(staging + '/*/*/*.parquet')}, hive_partitioning = true)"
    keys = connection.execute(f"SELECT DISTINCT database_name, table_name, table_version, schema, primary_key FROM {every} "
                              f"WHERE corrupt IS NULL AND {_DATA_IS_OBJECT}").fetchall()
    plan = plan_routes([RecordKey(*key) for key in keys], "shop", "shop", lambda tables: {})
    schema_of = {decision.route: key.schema_text for key, decision in plan.decisions.items() if decision.route is not None}
    connection.execute("CREATE SCHEMA shop")
    connection.execute("CREATE TABLE shop.quarantine (raw_line VARCHAR, reason VARCHAR)")
    for index, route in enumerate(plan.routes):
        land_route(connection, staging, route, schema_of[index])
    connection.execute(f"INSERT INTO shop.quarantine SELECT raw_line, 'unparseable' FROM {every} "
                       f"WHERE corrupt IS NOT NULL OR NOT coalesce({_DATA_IS_OBJECT}, false)")
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
