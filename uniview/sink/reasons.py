"""Why a record was quarantined: the `reason` column of `<dataset>._uniview_quarantine`.

Checks run in this order and the first failing one is recorded.
"""

UNPARSEABLE = "unparseable"
MISSING_METADATA = "missing_metadata"
INVALID_METADATA = "invalid_metadata"
INVALID_SCHEMA = "invalid_schema"
MISSING_SCHEMA = "missing_schema"
VERSION_CONFLICT = "version_conflict"
INVALID_DATA = "invalid_data"
UNKNOWN_COLUMN = "unknown_column"
TYPE_MISMATCH = "type_mismatch"
INPUT_CHANGED = "input_changed"

DESCRIPTIONS = {
    UNPARSEABLE: "the line is not a JSON object",
    MISSING_METADATA: "no metadata object, no metadata.table_name, or no dataset (no database_name and no --dataset)",
    INVALID_METADATA: "a dataset, table name or table_version that is not valid, or a metadata.timestamp that is not a timestamp",
    INVALID_SCHEMA: "metadata.schema is not a non-empty list of distinct {name, type} objects (or uses the _cdc_ prefix)",
    MISSING_SCHEMA: "neither the record, another record of its version in the batch, nor an existing table gives the schema",
    VERSION_CONFLICT: "the version is declared with a different schema than its table or than other records of the batch",
    INVALID_DATA: "data is missing or not a JSON object",
    UNKNOWN_COLUMN: "data has keys that the declared schema does not have",
    TYPE_MISMATCH: "a value cannot be read as its column's declared type",
    INPUT_CHANGED: "the record was not there when the batch was routed (its input changed while it was processed)",
}
