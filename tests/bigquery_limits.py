"""BigQuery's query limits, enforced on what tests send to lenient servers (the local BigQuery emulator
and DuckDB enforce none of them), so a test fails where BigQuery would, with BigQuery's wording.

`LimitEnforcer` sees every job's SQL text: it refuses a job over 1,024K characters, a view body over
256K, and, for a query, a resolved length over 12 MB (the query plus every view it reaches, expanded),
more than 1,000 unique tables and views, or views nested more than 15 deep; and a transaction that
mutates more than 100 tables or holds DDL on a permanent table (the emulator runs it).  It learns view
bodies from the CREATE VIEW statements it sees.  The messages follow BigQuery's ("The query is too large...").
"""

from __future__ import annotations

import re

from google.api_core.exceptions import BadRequest

from uniview.core import limits

_CREATE_VIEW = re.compile(r"CREATE (?:OR REPLACE )?VIEW (?:IF NOT EXISTS )?(\S+)(?:\s*OPTIONS\(.*?\))? AS\n", re.S)
_DROP_VIEW = re.compile(r"DROP VIEW (?:IF EXISTS )?(\S+)")
_NAME = r"(?:`(?:[^`\\]|\\.)+`|[A-Za-z_][\w-]*)"
_REFERENCE = re.compile(rf"\b(?:FROM|JOIN)\s+({_NAME}(?:\.{_NAME}){{1,2}})", re.I)
_MUTATED = re.compile(
    rf"^\s*(?:INSERT\s+INTO|DELETE\s+FROM|UPDATE|MERGE(?:\s+INTO)?)\s+({_NAME}(?:\.{_NAME}){{1,2}})", re.I | re.M
)
#: BigQuery: inside a transaction, DDL only on temporary entities (docs/transactions#statements_supported_in_transactions);
#: the emulator accepts any.  A temporary table is named without a dataset.
_DDL = re.compile(r"\s*(?:CREATE|DROP|ALTER)\b", re.I)
_TEMPORARY_DDL = re.compile(
    rf"\s*(?:CREATE\s+(?:OR\s+REPLACE\s+)?TEMP(?:ORARY)?\s+(?:TABLE|FUNCTION)\b"
    rf"|DROP\s+(?:TABLE|FUNCTION)\s+(?:IF\s+EXISTS\s+)?{_NAME}\s*$)",
    re.I,
)
#: BigQuery: a multi-statement transaction mutates at most 100 tables.
MAX_TABLES_PER_TRANSACTION = 100


def normalized(path: str) -> str:
    """`p`.`ds`.`t` / ds.t -> "ds.t" (lower case; the project dropped)."""
    parts = [part.strip("`") for part in re.findall(_NAME, path)]
    return ".".join(parts[-2:]).lower()


def statements_of(script: str) -> list[str]:
    """The statements of a uniview script (each ends with ';' at a line's end)."""
    return [s for s in re.split(r";\n", script) if s.strip()]


class LimitEnforcer:
    def __init__(self) -> None:
        self.views: dict[str, tuple[int, list[str]]] = {}  # name -> (body bytes, referenced names)
        self.jobs_checked = 0

    def check_job(self, sql: str) -> None:
        self.jobs_checked += 1
        if len(sql) > limits.MAX_QUERY_CHARS:
            raise BadRequest(
                f"The query is too large. The maximum standard SQL query length is 1024.00K characters, "
                f"including comments and white space characters. ({len(sql):,} characters)"
            )
        for statement in statements_of(sql):
            self.check_statement(statement)
        for transaction in re.findall(r"BEGIN TRANSACTION;(.*?)COMMIT TRANSACTION;", sql, re.S):
            for statement in statements_of(transaction):
                if _DDL.match(statement) and not _TEMPORARY_DDL.match(statement):
                    raise BadRequest(
                        "DDL statements are not supported in a transaction, except for those creating or dropping "
                        f"temporary tables or temporary functions: {statement.strip()[:80]}"
                    )
            mutated = {normalized(name) for name in _MUTATED.findall(transaction)}
            if len(mutated) > MAX_TABLES_PER_TRANSACTION:
                raise BadRequest(
                    f"Transaction is mutating too many tables: {len(mutated)} (at most {MAX_TABLES_PER_TRANSACTION})"
                )

    def check_statement(self, statement: str) -> None:
        created = _CREATE_VIEW.search(statement)
        if created:
            body = statement[created.end() :]
            if len(body) > limits.MAX_VIEW_CHARS:
                raise BadRequest(f"View definition is too long: {len(body):,} characters; the limit is 256K")
            self.views[normalized(created[1])] = (len(body.encode()), [normalized(r) for r in _REFERENCE.findall(body)])
            self.check_query(body, own=len(statement.encode()))
            return
        dropped = _DROP_VIEW.match(statement.strip())
        if dropped:
            self.views.pop(normalized(dropped[1]), None)
            return
        self.check_query(statement)

    def check_query(self, sql: str, own: int | None = None) -> None:
        """A query's resolved length, resources and view nesting, as BigQuery measures them."""
        resolved = own if own is not None else len(sql.encode())
        reached: set[str] = set()
        depth = 0
        frontier = [(normalized(r), 1) for r in _REFERENCE.findall(sql)]
        while frontier:
            name, level = frontier.pop()
            if name in reached:
                continue
            reached.add(name)
            if name in self.views:
                size, references = self.views[name]
                resolved += size
                depth = max(depth, level)
                frontier.extend((reference, level + 1) for reference in references)
        if resolved > limits.MAX_RESOLVED_BYTES:
            raise BadRequest(
                f"The query is too large. The maximum resolved query length is 12.00M characters, "
                f"including comments and white space characters. ({resolved:,} characters)"
            )
        if len(reached) > limits.MAX_QUERY_RESOURCES:
            raise BadRequest(
                f"Too many tables, views and user-defined functions referenced by the query: "
                f"{len(reached):,} (at most 1,000)"
            )
        if depth > limits.MAX_VIEW_NESTING - 1:
            raise BadRequest(f"Views nested {depth} levels deep; at most {limits.MAX_VIEW_NESTING - 1} can be queried")


def enforce_on_client(client, enforcer: LimitEnforcer):
    """Wrap a google.cloud.bigquery.Client so every query job passes the enforcer first."""
    original = client.query

    def query(sql, *args, **kwargs):
        enforcer.check_job(sql)
        return original(sql, *args, **kwargs)

    client.query = query
    return client


#: BigQuery: clustering columns are at most 4, top-level, not REPEATED, of these types; a time-unit partitioning
#: column is a top-level DATE, DATETIME or TIMESTAMP (https://cloud.google.com/bigquery/docs/clustered-tables,
#: https://cloud.google.com/bigquery/docs/partitioned-tables).  The emulator accepts any of them.
MAX_CLUSTERING_FIELDS = 4
CLUSTERING_TYPES = {"BIGNUMERIC", "BOOL", "BOOLEAN", "DATE", "DATETIME", "GEOGRAPHY", "INT64", "INTEGER", "NUMERIC"}
CLUSTERING_TYPES |= {"RANGE", "STRING", "TIMESTAMP"}
PARTITIONING_TYPES = {"DATE": ("DAY", "MONTH", "YEAR"), "DATETIME": ("HOUR", "DAY", "MONTH", "YEAR")}
PARTITIONING_TYPES["TIMESTAMP"] = PARTITIONING_TYPES["DATETIME"]


def check_table_layout(resource: dict) -> None:
    """BadRequest, worded as BigQuery's, when a table resource (tables.insert or tables.get) has a partitioning
    or clustering BigQuery refuses."""
    fields = {field["name"].lower(): field for field in resource.get("schema", {}).get("fields", [])}
    clustering = (resource.get("clustering") or {}).get("fields") or []
    if len(clustering) > MAX_CLUSTERING_FIELDS:
        raise BadRequest(f"Too many clustering fields: {len(clustering)}, only {MAX_CLUSTERING_FIELDS} allowed")
    for name in clustering:
        field = fields.get(name.lower())
        if field is None or field.get("mode") == "REPEATED" or field["type"] not in CLUSTERING_TYPES:
            kind = "missing" if field is None else f"{field.get('mode', 'NULLABLE')} {field['type']}"
            raise BadRequest(f"Field {name} is of type {kind} which is not supported for clustering")
    partitioning = resource.get("timePartitioning")
    if partitioning and partitioning.get("field"):
        field = fields.get(partitioning["field"].lower())
        allowed = PARTITIONING_TYPES.get(field["type"], ()) if field and field.get("mode") != "REPEATED" else ()
        if partitioning.get("type", "DAY") not in allowed:
            raise BadRequest(
                f"The field specified for time partitioning can only be of type TIMESTAMP, DATE or DATETIME, "
                f"and {partitioning.get('type', 'DAY')} partitioning fits {partitioning['field']!r} of "
                f"{'no type' if field is None else field['type']}"
            )
