"""Why a record was quarantined: the `reason` column of `<dataset>._uniview_quarantine`.

Checks run in this order and the first failing one is recorded.
"""

#: Not quarantine reasons: lines that carry no change of any table, counted as skipped and stored nowhere, so
#: read = written + quarantined + skipped.  A Kafka message with a null value (Debezium's tombstone after a delete):
TOMBSTONE = "tombstone"
#: A schema-change record of no table: operation DDL and no table_name, which the Debezium conversion makes of a
#: MySQL/MariaDB schema-change event with no database, no tableChanges and DDL of SET statements only (the
#: snapshot's `SET character_set_server=...`; uniview.sink.debezium).
SCHEMA_CHANGE_WITHOUT_TABLE = "schema_change_without_table"
SKIPPED = frozenset({TOMBSTONE, SCHEMA_CHANGE_WITHOUT_TABLE})
NOT_UTF8 = "not_utf8"  # the line's bytes are not UTF-8 (a latin-1 column, a truncated character): raw_bytes keeps them
TOO_LARGE = "too_large"  # the line is larger than one row of the warehouse takes (BigQuery: MAX_RAW_BYTES of frames.py)
UNPARSEABLE = "unparseable"  # the line is not a JSON object
#: The line is past a limit of BigQuery's JSON type (uniview.sink.json_limits), checked before it is parsed:
JSON_TOO_DEEP = "json_too_deep"  # it nests deeper than 500 levels
JSON_NUMBER_OUT_OF_RANGE = "json_number_out_of_range"  # it holds a number beyond a double (1e999)
#: An object names the same key twice (which value was meant is unknowable): the line's top level or its
#: metadata, or, for a Debezium event, any object of the event (uniview.sink.debezium).
DUPLICATE_KEY = "duplicate_key"
MISSING_METADATA = "missing_metadata"  # no metadata object, no metadata.table_name, or no metadata.database_name
INVALID_METADATA = "invalid_metadata"  # a dataset, table name or table_version that is not valid, or a metadata.timestamp that is not a timestamp
INVALID_SCHEMA = "invalid_schema"  # metadata.schema is not a non-empty list of distinct {name, type} objects (or uses the _cdc_ prefix), or, on BigQuery, has too many columns to type in one statement (about 1,800)
#: metadata.schema names a column BigQuery refuses (flexible column names: a character such as `.`, `$` or `/`, more than
#: 300 characters, or a reserved prefix such as `_PARTITION`), on every warehouse, so that both land the same columns:
INVALID_COLUMN_NAME = "invalid_column_name"
MISSING_SCHEMA = "missing_schema"  # neither the record, another record of its version in the batch, nor an existing table gives the schema
VERSION_CONFLICT = "version_conflict"  # the version is declared with a different schema than its table or than other records of the batch
INVALID_DATA = "invalid_data"  # data is missing or not a JSON object
UNKNOWN_COLUMN = "unknown_column"  # data has keys that the declared schema does not have
TYPE_MISMATCH = "type_mismatch"  # a value cannot be read as its column's declared type
INPUT_CHANGED = (
    "input_changed"  # the record was not there when the batch was routed (its input changed while it was processed)
)

#: The `detail` texts of the data checks (INVALID_DATA, UNKNOWN_COLUMN, TYPE_MISMATCH); the last two are
#: followed by the keys, or the columns' labels (routing.LandingColumn.label), joined by ", ".
DATA_NOT_AN_OBJECT = "data is missing or not a JSON object"
REPEATED_KEY = "data names the same key more than once"
#: The details of JSON_TOO_DEEP and JSON_NUMBER_OUT_OF_RANGE.
JSON_TOO_DEEP_DETAIL = "the line nests deeper than 500 levels, the most a JSON value of BigQuery holds"
JSON_NUMBER_OUT_OF_RANGE_DETAIL = (
    "the line holds a number beyond a double (past 1.7976931348623157e308), which a JSON value of BigQuery cannot hold"
)
#: The detail of DUPLICATE_KEY.
DUPLICATE_KEY_DETAIL = "a JSON object names the same key more than once: the line at its top level, its metadata, or an object of a Debezium event"
UNKNOWN_KEYS = "keys not in the schema: "
MISFITS = "values that do not fit: "
