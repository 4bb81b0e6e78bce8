"""The PySpark CDC sink: NDJSON binlog records -> typed `<table>_v_<version>` tables, a quarantine, notifications.

Modules: versioning (the version hash spec), mysql_types (source -> BigQuery types), routing (driver-side
decisions), frames (the lines Spark stages), load_typing, load_dialect and load_sql (the load step's SQL:
one set of type rules for both warehouses), landing* (warehouses), bigquery_typing and bigquery_promotion
(BigQuery's load step), notify and pending (notifications), job (the run), command (`uniview sink` and the
Dataproc entry point).
"""
