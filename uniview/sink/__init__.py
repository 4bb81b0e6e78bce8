"""The PySpark CDC sink: NDJSON binlog records -> typed `<table>_v_<version>` tables, a quarantine, notifications.

Modules: versioning (the version hash spec), mysql_types (source -> BigQuery types),
spark_types (native parsing per type), routing (driver-side decisions), frames (the Spark
pipeline), landing* (warehouses), notify and pending (notifications), job (the run),
command (`uniview sink` and the Dataproc entry point).
"""
