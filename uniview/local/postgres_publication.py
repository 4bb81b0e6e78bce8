"""The publication a PostgreSQL database is captured through, and the connector that reads it.

The publication is created by uniview, not by Debezium (`publication.autocreate.mode=disabled`), because only
its creator can ask for `publish_via_partition_root`: a change to a partition of a partitioned table is then
published as a change of the root table, so the whole partitioned table is one family named after its root.
Debezium's snapshot reads every table it captures, the root (whose SELECT returns every partition's rows) and
each partition again: the partitions are left out of the capture (`table.exclude.list`), so no row is read twice.
"""

from __future__ import annotations

from collections.abc import Sequence

from uniview.local.kafka import postgres_connector, postgres_publication
from uniview.local.postgres import PostgresServer

#: The leaf and intermediate partitions of the database's partitioned tables, as `schema.table`.
PARTITIONS_SQL = (
    "SELECT n.nspname || '.' || c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
    "WHERE c.relispartition ORDER BY 1"
)


def publication_sql(publication: str, tables: Sequence[str] = ()) -> str:
    """CREATE PUBLICATION of every table (or of `tables`), publishing a partition's changes as its root's."""
    scope = f"TABLE {', '.join(tables)}" if tables else "ALL TABLES"
    return f"CREATE PUBLICATION {publication} FOR {scope} WITH (publish_via_partition_root = true)"


def captured_connector(
    server: PostgresServer, name: str, database: str, *, tables: Sequence[str] = (), signal_table: str | None = None
) -> dict[str, object]:
    """Create the publication of connector `name` in `database` (kept if it exists) and return the connector's
    settings, with the partitions that exist now left out of its capture (a partition created later publishes
    nothing of its own: its changes are the root's)."""
    import psycopg

    publication = postgres_publication(name)
    with psycopg.connect(server.dsn(database), autocommit=True) as connection:
        found = connection.execute("SELECT 1 FROM pg_publication WHERE pubname = %s", [publication]).fetchone()
        if found is None:
            connection.execute(publication_sql(publication, tables))
        partitions = [row[0] for row in connection.execute(PARTITIONS_SQL).fetchall()]
    return postgres_connector(
        name,
        server.host,
        server.port,
        database,
        server.user,
        tables=tables,
        partitions=partitions,
        signal_table=signal_table,
    )
