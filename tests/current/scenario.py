"""One family's change history for the current-view tests, shared by DuckDB and the BigQuery emulator.

Two versions of `customer` (id INT64, then id STRING with a new column), two source databases
with the same keys, and every case the latest-state rule has to get right.  EXPECTED is written
out by hand, not derived: it is what the documented rule says a reader must see.
"""

from __future__ import annotations

from uniview.core.landing_layout import CDC_COLUMNS
from uniview.core.version_description import version_description
from uniview.sink.sequence import sequence_of

FAMILY = "customer"
V1 = ("customer_v_a1", [("id", "INT64"), ("name", "STRING")])
V2 = ("customer_v_b2", [("id", "STRING"), ("name", "STRING"), ("email", "STRING")])
PRIMARY_KEY = ("id",)

# (version table, database, id, name, operation, position, ingested at (minute))
CHANGES = [
    # db1 id 1: updated in a later binlog file, at a smaller position: the file number decides
    (V1, "db1", 1, "a1", "INSERT", "mysql-bin.000001:100", 1),
    (V1, "db1", 1, "a1-upd", "UPDATE", "mysql-bin.000001:200", 1),
    (V2, "db1", "1", "a1-v2", "UPDATE", "mysql-bin.000002:50", 2),
    # db1 id 2: deleted
    (V1, "db1", 2, "a2", "INSERT", "mysql-bin.000001:110", 1),
    (V1, "db1", 2, "a2", "DELETE", "mysql-bin.000001:300", 1),
    # db1 id 3: deleted, then inserted again under the new version
    (V1, "db1", 3, "a3", "INSERT", "mysql-bin.000001:120", 1),
    (V1, "db1", 3, "a3", "DELETE", "mysql-bin.000001:130", 1),
    (V2, "db1", "3", "a3-again", "INSERT", "mysql-bin.000002:10", 2),
    # db1 id 4: out of order - a later batch carries an older change
    (V2, "db1", "4", "final", "UPDATE", "mysql-bin.000003:5", 2),
    (V2, "db1", "4", "stale", "UPDATE", "mysql-bin.000002:500", 3),
    # db1 id 5: an update and a delete at the same place in the log: the delete wins the tie
    (V2, "db1", "5", "a5", "INSERT", "mysql-bin.000002:600", 2),
    (V2, "db1", "5", "a5-upd", "UPDATE", "mysql-bin.000002:700:0", 2),
    (V2, "db1", "5", "a5-upd", "DELETE", "mysql-bin.000002:700:0", 2),
    # db1 id 6: two rows of one binlog event: the row index decides
    (V2, "db1", "6", "r0", "UPDATE", "mysql-bin.000002:800:0", 2),
    (V2, "db1", "6", "r1", "UPDATE", "mysql-bin.000002:800:1", 2),
    # db2: the same key as db1 is another row
    (V1, "db2", 1, "b1", "INSERT", "mysql-bin.000001:100", 1),
    # db2: NULL keys are one key
    (V1, "db2", None, "null-old", "INSERT", "mysql-bin.000001:150", 1),
    (V2, "db2", None, "null-key", "UPDATE", "mysql-bin.000001:160", 2),
    # db2 id 7: a change without a position sorts before every sequenced change
    (V2, "db2", "7", "new", "UPDATE", "mysql-bin.000001:170", 2),
    (V2, "db2", "7", "unsequenced", "UPDATE", None, 3),
]

#: (database, id as the unified view types it, name): the rows `customer_current` must return.
EXPECTED = sorted(
    [
        ("db1", "1", "a1-v2"),
        ("db1", "3", "a3-again"),
        ("db1", "4", "final"),
        ("db1", "6", "r1"),
        ("db2", "1", "b1"),
        ("db2", None, "null-key"),
        ("db2", "7", "new"),
    ],
    key=repr,
)


def tables() -> dict[str, tuple[list[tuple[str, str]], str]]:
    """{version table: (columns with BigQuery types, CDC columns included; description)}."""
    return {
        name: (columns + list(CDC_COLUMNS), version_description(FAMILY, [(c, t) for c, t in columns], PRIMARY_KEY))
        for name, columns in (V1, V2)
    }


def rows() -> dict[str, list[dict]]:
    """{version table: rows as column -> value (timestamps as ISO text)}."""
    by_table: dict[str, list[dict]] = {V1[0]: [], V2[0]: []}
    first_at: dict[tuple, int] = {}
    for number, (version, database, key, name, operation, position, minute) in enumerate(CHANGES):
        number = first_at.setdefault((database, str(key), position), number)  # one change time per log position
        row = {
            "id": key,
            "name": name,
            "_cdc_ingestion_method": "BINLOG",
            "_cdc_operation": operation,
            "_cdc_position": position,
            "_cdc_timestamp": f"2024-05-01 10:00:{number:02d}+00",
            "_cdc_ingested_at": f"2024-05-01 11:{minute:02d}:00+00",
            "_cdc_database": database,
            "_cdc_sequence": sequence_of(position),
            "_cdc_unavailable": None,
        }
        if version is V2:
            row["email"] = None
        by_table[version[0]].append(row)
    return by_table
