"""A batch read, routed, typed and judged in the warehouse's load step, as SQL over the staged lines.

Spark stages each batch's lines as they are (`value`, the line as read when it was rewritten,
`source_file`).  The load step then reads every line's envelope (its metadata, and the reason a line is not
a record), joins each line to its routing key's decision, and types each route's data with the sink's type
rules (uniview.sink.load_typing): vectorized, in the warehouse.  Every statement renders for DuckDB (the
default) or BigQuery (`dialect=BIGQUERY`, used by uniview.sink.bigquery_typing), from one definition.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import astuple

import sqlglot
from sqlglot import exp

from uniview.core.identifiers import quote_path, string_literal
from uniview.core.landing_layout import CDC_COLUMNS
from uniview.core.types import Array, Scalar, Struct
from uniview.sink import reasons
from uniview.sink.frames import (
    METADATA_FIELDS,
    NOT_UTF8_DETAIL,
    TOO_LARGE_DETAIL,
    TOO_LARGE_SHA256,
    TOO_LARGE_SIZE,
)
from uniview.sink.json_limits import LIMITS
from uniview.sink.load_dialect import BIGQUERY, DUCKDB, LoadDialect
from uniview.sink.load_typing import (
    DataObject,
    TypedColumn,
    computed,
    data_object,
    data_of,
    data_verdict,
    exact_data,
    function_call,
    trailing_comma,
    typed_column,
    value_texts,
)
from uniview.sink.routing import FirstSeen, LandingColumn, RecordKey, RoutingPlan, VersionRoute
from uniview.sink.sequence import binlog_groups, sequence_sql
from uniview.sink.value_patterns import METADATA_TIMESTAMP
from uniview.warehouse.duckdb_connection import quote_identifier as quote
from uniview.warehouse.duckdb_connection import string_literal as literal

#: The routing key's columns, in RecordKey's order.
KEY_COLUMNS = ("database_name", "table_name", "table_version", "schema", "primary_key")
#: The columns of the decisions table: the key, then where its records go (routing.Decision).
_DECISION_TYPES = {
    **{f"key_{name}": "VARCHAR" for name in KEY_COLUMNS},
    "dataset": "VARCHAR",
    "route": "INTEGER",
    "reject": "VARCHAR",
    "reject_detail": "VARCHAR",
    "version": "VARCHAR",
}
_TEXT = exp.Literal.string
#: The line as read, which the quarantine keeps: the staged line, or the line it was rewritten from.
RAW_LINE = "coalesce(_original_line, value)"
#: The line's bytes as read: those of a line that is not UTF-8 (frames.LINE_BYTES), else its text's.
RAW_BYTES = f"coalesce(_bytes, encode({RAW_LINE}))"
#: Where each _cdc_ column of a version table comes from, in an envelopes row `l` (ingested: when the load's
#: transaction started, the same for every row of the batch).
_CDC_SOURCES = {
    "_cdc_ingestion_method": "l.ingestion_method",
    "_cdc_operation": "l.operation",
    "_cdc_position": "l.position",
    "_cdc_timestamp": "l._cdc_timestamp",
    "_cdc_ingested_at": "current_timestamp",
    "_cdc_database": "l.database_name",
    "_cdc_sequence": "l._cdc_sequence",
    "_cdc_unavailable": "l._cdc_unavailable",
}


def envelopes(source: str, rewritten: bool, dialect: LoadDialect = DUCKDB, bounded: bool = False) -> str:
    """A SELECT of one row per staged line in `source` (a FROM item), in `dialect`: its metadata fields, `value`,
    `_original_line` (the line as read when `rewritten`, else NULL: see RAW_LINE), `source_file`, the
    typed `_cdc_timestamp` and `_cdc_sequence`, and `_reason`/`_detail` for a line that is not a record (too
    large, a tombstone, not a JSON object or a metadata that is not one, no metadata object).  `bounded`: the
    lines were staged by frames.bounded_lines (BigQuery), so `source` has TOO_LARGE_SIZE and TOO_LARGE_SHA256,
    which every row passes on (NULL but for a line too large to stage)."""
    if dialect is BIGQUERY:
        return _bigquery_envelopes(source, rewritten, bounded)
    return _duckdb_envelopes(source, rewritten)


def _envelope_reasons(dialect: LoadDialect, bounded: bool = False) -> tuple[str, str]:
    """The CASE branches of a line's `_reason` and `_detail` over `value`, `_bytes`, `_limit` (the JSON limit the
    line breaches: limited_lines), `_object` (the line is a
    JSON object), `_repeated` (its top level or its metadata names a key twice: _repeated_keys), `_metadata_kind` ('OBJECT', 'NULL' or 'ABSENT' for a line that may be a record), the
    metadata fields `operation` and `table_name` (a DDL record of no table is skipped), and, when
    `bounded`, TOO_LARGE_SIZE (a line staged without its text).  Texts are written as `dialect`'s literals."""
    literal = dialect.literal
    cases = [
        ("value IS NULL", reasons.TOMBSTONE, "a message with a null value (tombstone)"),
        ("_bytes IS NOT NULL", reasons.NOT_UTF8, NOT_UTF8_DETAIL),
        *((f"_limit = {literal(limit.reason)}", limit.reason, limit.detail) for limit in LIMITS),
        (
            "_object IS NOT true OR _metadata_kind NOT IN ('OBJECT', 'NULL', 'ABSENT')",
            reasons.UNPARSEABLE,
            "the line is not a JSON object",
        ),
        ("_repeated", reasons.DUPLICATE_KEY, reasons.DUPLICATE_KEY_DETAIL),
        ("_metadata_kind <> 'OBJECT'", reasons.MISSING_METADATA, "no metadata object"),
        (
            "operation = 'DDL' AND table_name IS NULL",
            reasons.SCHEMA_CHANGE_WITHOUT_TABLE,
            "a schema change of no table",
        ),
    ]
    reason = " ".join(f"WHEN {condition} THEN {literal(text)}" for condition, text, _ in cases)
    detail = " ".join(f"WHEN {condition} THEN {literal(text)}" for condition, _, text in cases)
    if bounded:
        too_large = f"WHEN {TOO_LARGE_SIZE} IS NOT NULL THEN "
        reason = f"{too_large}{literal(reasons.TOO_LARGE)} {reason}"
        size = f"CONCAT({literal(TOO_LARGE_DETAIL)}, CAST({TOO_LARGE_SIZE} AS STRING), ' bytes')"
        detail = f"{too_large}{size} {detail}"
    return reason, detail


def _repeated_keys(keys: Sequence[exp.Expr], dialect: LoadDialect) -> str:
    """Whether one of the lists `keys` (an object's keys as written, repeats included: the line's top level and
    its metadata) names a key twice, as data_verdict finds a key named twice in data: fewer once distinct."""
    repeated = [
        exp.NEQ(this=dialect.length(listed), expression=dialect.length(dialect.distinct(listed))) for listed in keys
    ]
    return dialect.sql(exp.func("coalesce", exp.or_(*repeated), exp.false()))


def _duckdb_repeated_keys(keys: Sequence[tuple[exp.Expr, Sequence[str]]]) -> str:
    """_repeated_keys in DuckDB, each list of `keys` given with the names in the order a record usually writes
    them (none for the top level): a list of at most two keys is compared at once, and one that begins that
    order (names each once) names none twice; only another list is made distinct, a set built per line."""

    def repeated(listed: exp.Expr, usual: Sequence[str]) -> exp.Expr:
        size = DUCKDB.length(listed)
        first, second = (function_call("list_extract", listed.copy(), exp.Literal.number(n)) for n in (1, 2))
        check = exp.Case().when(
            exp.LTE(this=size, expression=exp.Literal.number(2)),
            exp.func("coalesce", exp.EQ(this=first, expression=second), exp.false()),
        )
        if usual:
            names = exp.Array(expressions=[_TEXT(name) for name in usual])
            begins = function_call("list_slice", names, exp.Literal.number(1), size.copy())
            check = check.when(exp.EQ(this=listed.copy(), expression=begins), exp.false())
        return check.else_(exp.NEQ(this=size.copy(), expression=DUCKDB.length(DUCKDB.distinct(listed))))

    return DUCKDB.sql(exp.func("coalesce", exp.or_(*(repeated(listed, usual) for listed, usual in keys)), exp.false()))


def _bigquery_envelopes(source: str, rewritten: bool, bounded: bool) -> str:
    """envelopes in BigQuery: the line is strict JSON when SAFE.PARSE_JSON reads it (and it has no trailing
    comma, as on DuckDB); GoogleSQL's JSON_QUERY gives SQL NULL for a JSON null, so a metadata that is null
    reads as absent (both are missing_metadata)."""
    dialect = BIGQUERY
    within, line = exp.column("_within"), exp.column("_json")
    strict = exp.and_(dialect.one_json_value(within), exp.not_(trailing_comma(within, dialect)))
    valid = f"SELECT *, IF({dialect.sql(strict)}, _within, NULL) AS _json FROM ({limited_lines(source, dialect)})"
    metadata_kind = (
        exp.Case()
        .when(dialect.kind_is(line, ("metadata",), "OBJECT"), _TEXT("OBJECT"))
        .when(exp.Is(this=dialect.extract(line, ("metadata",)), expression=exp.null()), _TEXT("ABSENT"))
        .else_(_TEXT("OTHER"))
    )
    # each list of keys is read once, then judged
    keys = (
        f"SELECT *, {dialect.sql(dialect.keys(line))} AS _top_keys, "
        f"{dialect.sql(dialect.keys(dialect.extract(line, ('metadata',))))} AS _metadata_keys FROM ({valid})"
    )
    repeated = _repeated_keys([exp.column("_top_keys"), exp.column("_metadata_keys")], dialect)
    kind = (
        f"SELECT *, {dialect.sql(dialect.kind_is(line, (), 'OBJECT'))} AS _object, "
        f"{dialect.sql(metadata_kind)} AS _metadata_kind, {repeated} AS _repeated FROM ({keys})"
    )
    named = ", ".join(
        f"IF(_metadata_kind = 'OBJECT', {dialect.sql(dialect.value_text(line, ('metadata', name)))}, NULL) "
        f"AS {quote_path(name)}"
        for name in METADATA_FIELDS
    )
    timestamp = exp.column("timestamp")
    cdc_timestamp = exp.Case().when(
        dialect.matches(timestamp, METADATA_TIMESTAMP), dialect.try_cast(timestamp, Scalar("TIMESTAMP"))
    )
    reason, detail = _envelope_reasons(dialect, bounded)
    original = "_original_line" if rewritten else "CAST(NULL AS STRING)"
    too_large = (
        f"{TOO_LARGE_SIZE}, {TOO_LARGE_SHA256}"
        if bounded
        else f"CAST(NULL AS INT64) AS {TOO_LARGE_SIZE}, CAST(NULL AS STRING) AS {TOO_LARGE_SHA256}"
    )
    return f"""SELECT value, {original} AS _original_line, source_file, _bytes, {too_large},
      {", ".join(quote_path(name) for name in METADATA_FIELDS)},
      {dialect.sql(cdc_timestamp)} AS _cdc_timestamp,
      {dialect.sql(sequence_sql(exp.column("position"), dialect))} AS _cdc_sequence,
      {_unavailable("unavailable", dialect)} AS _cdc_unavailable,
      CASE {reason} END AS _reason, CASE {detail} END AS _detail
    FROM (SELECT *, {named} FROM ({kind}))"""


def limited_lines(source: str, dialect: LoadDialect) -> str:
    """Every line of `source` (a FROM item) with `_limit`, the reason of the first of BigQuery's limits of a JSON
    value (json_limits.LIMITS) it breaches (NULL within them), and `_within`, the line when it is within them: the
    only text the JSON functions read (none meets a text nested past what it reads)."""
    limit = exp.Case()
    for each in LIMITS:
        limit = limit.when(each.breached(exp.column("value"), dialect), exp.Literal.string(each.reason))
    limited = f"SELECT *, {dialect.sql(limit)} AS _limit FROM {source}"
    return f"SELECT *, CASE WHEN _limit IS NULL THEN value END AS _within FROM ({limited})"


def _duckdb_envelopes(source: str, rewritten: bool) -> str:
    """A SELECT of one row per staged line in `source` (a FROM item): its metadata fields, `value`,
    `_original_line` (the line as read when `rewritten`, else NULL: see RAW_LINE), `source_file`, the
    typed `_cdc_timestamp` and `_cdc_sequence`, and `_reason`/`_detail` for a line that is not a record (a tombstone, not a JSON
    object or a metadata that is not one, no metadata object)."""
    fields = exp.Array(expressions=[_TEXT(f"$.metadata.{name}") for name in METADATA_FIELDS])
    # The first parse reads the keys of the line's top level and of its metadata, and tells whether it is JSON
    # at all (the parse fails: try gives NULL); a second reads the metadata fields; a line with none of them is
    # parsed again for its kinds (is it an object, is its metadata one).  The JSON functions are given NULL
    # where the line is not strict JSON.
    strict = trailing_comma(exp.column("_within")).sql("duckdb")
    keys = (
        f"SELECT *, CASE WHEN NOT {strict} THEN try(json_keys(_within, ['$', '$.metadata'])) END AS _keys "
        f"FROM ({limited_lines(source, DUCKDB)})"
    )
    valid = f"SELECT *, CASE WHEN _keys IS NOT NULL THEN _within END AS _json FROM ({keys})"
    read = f"SELECT *, {function_call('json_extract_string', exp.column('_json'), fields).sql('duckdb')} AS _m FROM ({valid})"
    some = f"coalesce({', '.join(f'_m[{number + 1}]' for number in range(len(METADATA_FIELDS)))}) IS NOT NULL"
    kinds = f"""SELECT *, CASE WHEN {some} THEN ['OBJECT', 'OBJECT']
                               ELSE json_type(_json, ['$', '$.metadata']) END AS _kinds FROM ({read})"""
    top, metadata = (sqlglot.parse_one(f"_keys[{number}]", read="duckdb") for number in (1, 2))
    repeated = _duckdb_repeated_keys([(top, ()), (metadata, METADATA_FIELDS)])
    kind = f"""SELECT *, _kinds[1] = 'OBJECT' AS _object, coalesce(_kinds[2], 'ABSENT') AS _metadata_kind,
               {repeated} AS _repeated FROM ({kinds})"""
    with_fields = f"SELECT *, CASE WHEN _metadata_kind = 'OBJECT' THEN _m END AS _fields FROM ({kind})"
    named = ", ".join(f"_fields[{number + 1}] AS {quote(name)}" for number, name in enumerate(METADATA_FIELDS))
    timestamp = exp.column("timestamp")
    cdc_timestamp = exp.Case().when(
        exp.RegexpLike(this=timestamp, expression=_TEXT(METADATA_TIMESTAMP)),
        exp.TryCast(this=timestamp.copy(), to=exp.DataType.build("TIMESTAMPTZ")),
    )
    # the binlog pattern's groups are extracted once, into a column of their own (DuckDB computes an expression
    # again at each place it is written)
    binlog = binlog_groups(exp.column("position"))
    sequence = sequence_sql(exp.column("position"), binlog=exp.column("_binlog"))
    reason, detail = _envelope_reasons(DUCKDB)
    return f"""SELECT value, {"_original_line" if rewritten else "NULL::VARCHAR"} AS _original_line, source_file, _bytes,
      NULL::BIGINT AS {TOO_LARGE_SIZE}, NULL::VARCHAR AS {TOO_LARGE_SHA256},
      {", ".join(quote(name) for name in METADATA_FIELDS)},
      {cdc_timestamp.sql("duckdb")} AS _cdc_timestamp, {sequence.sql("duckdb")} AS _cdc_sequence,
      {_unavailable("unavailable")} AS _cdc_unavailable,
      CASE {reason} END AS _reason, CASE {detail} END AS _detail
    FROM (SELECT *, {binlog.sql("duckdb")} AS _binlog FROM (SELECT *, {named} FROM ({with_fields})))"""


def _unavailable(column: str, dialect: LoadDialect = DUCKDB) -> str:
    """metadata.unavailable (JSON text of a list of column names) as a list; NULL when it is not one."""
    return dialect.sql(dialect.string_list(exp.column(*reversed(column.split(".")))))


def routing_keys(lines: str, dialect: LoadDialect = DUCKDB) -> str:
    """The distinct routing keys of the records in `lines` (envelopes), each with its earliest timestamp and
    earliest sequence (`first_seen_of`)."""
    keys = ", ".join(dialect.quote(name) for name in KEY_COLUMNS)
    grouped = "ALL" if dialect is DUCKDB else ", ".join(str(number + 1) for number in range(len(KEY_COLUMNS)))
    return f"SELECT {keys}, min(_cdc_timestamp), min(_cdc_sequence) FROM ({lines}) WHERE _reason IS NULL GROUP BY {grouped}"


def decisions_json(plan: RoutingPlan) -> str:
    """The plan's decisions as one JSON text for `decisions_table` (one parameter however many keys)."""
    return json.dumps(
        [
            {
                **{f"key_{name}": value for name, value in zip(KEY_COLUMNS, astuple(key), strict=True)},
                "dataset": d.dataset,
                "route": d.route,
                "reject": d.reason,
                "reject_detail": d.detail,
                "version": d.version,
            }
            for key, d in plan.decisions.items()
        ]
    )


def decisions_table(name: str) -> str:
    """CREATE the temporary table `name` of decisions from the JSON text bound as its one parameter."""
    return (
        f"CREATE TEMPORARY TABLE {name} AS SELECT unnest(from_json(?, {literal(json.dumps([_DECISION_TYPES]))}), "
        "recursive := true)"
    )


def bigquery_decisions(parameter: str) -> str:
    """A FROM item of the decisions in BigQuery, read from `parameter` (decisions_json's text: a query
    parameter such as @decisions, or a literal), with the columns of DuckDB's decisions table."""
    columns = ", ".join(
        f"JSON_VALUE(d, {string_literal('$.' + name)}) AS {name}"
        if kind == "VARCHAR"
        else f"CAST(JSON_VALUE(d, {string_literal('$.' + name)}) AS INT64) AS {name}"
        for name, kind in _DECISION_TYPES.items()
    )
    return f"(SELECT {columns} FROM UNNEST(JSON_QUERY_ARRAY({parameter})) AS d)"


def routed_lines(lines: str, decisions: str, fallback_dataset: str, dialect: LoadDialect = DUCKDB) -> str:
    """Each line of `lines` with its key's decision: `_dataset`, `_route`, `_version` (the version its
    quarantine row records), and `_reason`/`_detail`: the envelope's, the routing's rejection, or a
    metadata.timestamp that is not a timestamp (invalid_metadata).  A record whose key has no decision
    cannot happen (routing reads the same lines), and would be quarantined as input_changed."""
    quote, literal = dialect.quote, dialect.literal
    joined = " AND ".join(f"l.{quote(name)} IS NOT DISTINCT FROM d.key_{name}" for name in KEY_COLUMNS)
    stamp = f"l.{quote('timestamp')}"
    bad_timestamp = f"{stamp} IS NOT NULL AND l._cdc_timestamp IS NULL"
    bad_unavailable = f"l.unavailable IS NOT NULL AND {_unavailable('l.unavailable', dialect)} IS NULL"
    cdc = ", ".join(f"{_CDC_SOURCES[name]} AS {name}" for name, _ in CDC_COLUMNS)
    return f"""SELECT l.value, l._original_line, l._bytes, l.{TOO_LARGE_SIZE}, l.{TOO_LARGE_SHA256}, l.source_file,
      l.table_name, {cdc},
      coalesce(d.dataset, {literal(fallback_dataset)}) AS _dataset, d.route AS _route,
      coalesce(d.version, l.table_version) AS _version,
      coalesce(l._reason, d.reject,
               CASE WHEN {bad_timestamp} OR {bad_unavailable} THEN {literal(reasons.INVALID_METADATA)} END,
               CASE WHEN d.route IS NULL THEN {literal(reasons.INPUT_CHANGED)} END) AS _reason,
      CASE WHEN l._reason IS NOT NULL THEN l._detail WHEN d.reject IS NOT NULL THEN d.reject_detail
           WHEN {bad_timestamp} THEN 'metadata.timestamp is not a timestamp: ' || {stamp}
           WHEN {bad_unavailable} THEN 'metadata.unavailable is not a list of column names: ' || l.unavailable
           WHEN d.route IS NULL THEN 'this record was not read when the batch was routed' END AS _detail
    FROM ({lines}) l LEFT JOIN {decisions} d ON {joined}"""


def typed_routes(
    routed: str,
    indexes: Sequence[int],
    columns: Sequence[LandingColumn],
    dialect: LoadDialect = DUCKDB,
    key: Sequence[str] | None = None,
) -> str:
    """A SELECT of the records in `routed` of the routes `indexes`, which share their `columns` and primary `key`
    (one version landing in many datasets is typed once), that no earlier check rejected: `_route`, each column
    typed (`t0`, `t1`, ... in the columns' order), the _cdc_ columns, the line, and the verdict on its data
    (`reason`/`detail`, NULL for a row to write).  A DELETE's non-key columns that do not fit (typed_records) are
    named in its `_cdc_unavailable` after the names metadata.unavailable gives."""
    mine = f"(SELECT * FROM {routed} WHERE _route IN ({', '.join(map(str, indexes))}) AND _reason IS NULL)"
    kept = "".join(f"t{j}, " for j in range(len(columns)))
    raw_bytes = RAW_BYTES if dialect is DUCKDB else f"coalesce(_bytes, {dialect.to_bytes(RAW_LINE)})"
    unavailable: exp.Expr = exp.column("_cdc_unavailable")
    if excused_columns(columns, key):
        unavailable = with_unfit(unavailable, exp.column("unfit"), dialect)
    cdc = ", ".join(
        f"{dialect.sql(unavailable)} AS {name}" if name == "_cdc_unavailable" else name for name, _ in CDC_COLUMNS
    )
    typed = typed_records(mine, columns, dialect, key, exp.column("_cdc_operation"))
    return f"""SELECT _route, _dataset, {kept}{cdc}, CASE WHEN reason IS NOT NULL THEN {RAW_LINE} END AS raw_line,
      CASE WHEN reason IS NOT NULL THEN {raw_bytes} END AS raw_bytes,
      source_file, table_name, _version, reason, detail
    FROM ({typed})"""


def excused_columns(columns: Sequence[LandingColumn], key: Sequence[str] | None) -> list[int]:
    """The positions of the columns a DELETE may land NULL when their values do not fit: those outside the primary
    `key` (names, compared without case); none when there is no key (or one naming a column the version lacks): a
    row without one is known by all its values, so a DELETE without a key is typed as every other record."""
    keyed = {name.lower() for name in key or ()}
    names = [column.name.lower() for column in columns]
    if not keyed or not keyed <= set(names):
        return []
    return [j for j, name in enumerate(names) if name not in keyed]


def with_unfit(unavailable: exp.Expr, unfit: exp.Expr, dialect: LoadDialect = DUCKDB) -> exp.Expr:
    """The list `unavailable` (metadata.unavailable's names, or NULL) followed by the names of `unfit` it does not
    hold; `unavailable` itself when `unfit` is empty."""
    given = exp.func("coalesce", unavailable.copy(), dialect.no_texts())
    merged = dialect.concat(given, dialect.not_among(unfit, given))
    some = exp.GT(this=dialect.length(unfit), expression=exp.Literal.number(0))
    return exp.Case().when(some, merged).else_(unavailable.copy())


def typed_records(
    records: str,
    columns: Sequence[LandingColumn],
    dialect: LoadDialect = DUCKDB,
    key: Sequence[str] | None = None,
    operation: exp.Expr | None = None,
) -> str:
    """A SELECT of every row of `records` (a FROM item whose `value` is a record's line) with its data's
    `columns` typed as `t0`, `t1`, ... and the verdict on its data, `reason` and `detail` (NULL for a row to
    write), in `dialect`.  Each row's data object, texts, values, kind and keys are computed once, and the
    detail only for a row with a reason.

    A DELETE (`operation`: its expression over `records`, by default the line's metadata.operation) lands its
    before image: a value of a column outside the primary `key` that does not fit lands NULL instead of
    quarantining the delete, and the row's `unfit` lists those columns (only when the key leaves such columns:
    excused_columns).  Its key columns must fit; every other operation, and a DELETE without a key, is judged
    by every column.  The detail of a quarantined row names every value that does not fit."""
    line, data = exp.column("value"), exp.column("data")
    listed, texts = value_texts(data, [c.name for c in columns], dialect)
    exact = exact_data(line, columns, dialect)  # every decimal column's exact value from one parse of the line
    with_exact = "" if exact is None else f", {dialect.sql(exact)} AS _exact"
    with_data = f"SELECT *, {dialect.sql(data_of(line, dialect=dialect))} AS data{with_exact} FROM {records}"
    if listed is None:  # each text read on its own: once, as r<j>, which the values then read
        read = ", ".join(f"{dialect.sql(text)} AS r{j}" for j, text in enumerate(texts))
        with_texts = f"SELECT *, {read} FROM ({with_data})" if read else with_data
        texts = [exp.column(f"r{j}") for j in range(len(columns))]
    else:
        with_texts = f"SELECT *, {dialect.sql(listed)} AS texts FROM ({with_data})"
    exact_record = None if exact is None else exp.column("_exact")
    typed = [
        typed_column(data, c.name, c.bq_type, line, text=text, dialect=dialect, exact_record=exact_record)
        for c, text in zip(columns, texts, strict=True)
    ]
    nested = [isinstance(c.bq_type, (Array, Struct)) for c in columns]
    excused = excused_columns(columns, key)
    # an excused STRUCT or ARRAY's value is NULL where it does not fit: typed as u<j>, then t<j> once f<j> is known
    late = [deep and j in excused for j, deep in enumerate(nested)]
    values = ", ".join(
        ("" if listed is None else f"{dialect.sql(text)} AS r{j}, ")
        + f"{dialect.sql(c.value)} AS {'u' if postponed else 't'}{j}"
        + (f", {dialect.sql(c.fits)} AS f{j}" * deep)
        for j, (text, c, deep, postponed) in enumerate(zip(texts, typed, nested, late, strict=True))
    )
    if excused:
        given = operation if operation is not None else dialect.value_text(line, ("metadata", "operation"))
        deleting = exp.func("coalesce", exp.EQ(this=given.copy(), expression=_TEXT("DELETE")), exp.false())
        values += f"{', ' if values else ''}{dialect.sql(deleting)} AS _deleting"
    # a STRUCT or ARRAY fits when every field and element does: computed once, as f<j>
    judged = [
        computed(c, column.bq_type, exp.column(f"r{j}"), exp.column(f"t{j}"), exp.column(f"f{j}") if deep else None)
        for j, (c, column, deep) in enumerate(zip(typed, columns, nested, strict=True))
    ]
    objects = data_object(data, dialect)
    typed_rows = (
        f"SELECT *, {values}{', ' if values else ''}{dialect.sql(objects.kind)} AS kind, "
        f"{dialect.sql(objects.keys)} AS keys FROM ({with_texts})"
    )
    reason, detail, settled = _judged(columns, judged, excused, late, dialect)
    judged_rows = f"SELECT *, {reason} AS reason{settled} FROM ({typed_rows})"
    return f"SELECT *, {detail} AS detail FROM ({judged_rows})"


def _judged(
    columns: Sequence[LandingColumn],
    judged: Sequence[TypedColumn],
    excused: Sequence[int],
    late: Sequence[bool],
    dialect: LoadDialect,
) -> tuple[str, str, str]:
    """The verdict's reason and detail over typed rows (typed_records), and the columns settled with the reason:
    the excused STRUCTs and ARRAYs (t<j>) and the DELETE's `unfit` columns.  On a DELETE an excused column's misfit
    does not count toward the reason; the detail still names it."""
    computed_object = DataObject(exp.column("kind"), exp.column("keys"))
    deleting = exp.column("_deleting")
    excusing = [
        TypedColumn(c.text, c.value, exp.or_(c.fits.copy(), deleting.copy())) if j in excused else c
        for j, c in enumerate(judged)
    ]
    given = exp.column("reason")
    reason = data_verdict(computed_object, columns, excusing, reason=given, dialect=dialect).reason
    detail = data_verdict(computed_object, columns, judged, reason=given, dialect=dialect).detail
    settled = "".join(
        f", {dialect.sql(exp.Case().when(exp.column(f'f{j}'), exp.column(f'u{j}')))} AS t{j}"
        for j, postponed in enumerate(late)
        if postponed
    )
    if excused:
        names = [exp.Case().when(judged[j].misfit, _TEXT(columns[j].name)) for j in excused]
        settled += f", {dialect.sql(dialect.present(names))} AS unfit"
    return dialect.sql(reason), dialect.sql(detail), settled


def route_values(route: VersionRoute) -> str:
    """The select list of a version table's row from `typed_routes`' columns."""
    return ", ".join(route_value_names(route))


def route_value_names(route: VersionRoute) -> list[str]:
    """`typed_routes`' columns holding a version table's row, in the table's column order: its declared columns',
    then the CDC columns."""
    return [f"t{j}" for j in range(len(route.columns))] + [name for name, _ in CDC_COLUMNS]


def key_of(row: Sequence) -> RecordKey:
    """A routing key from a `routing_keys` row."""
    return RecordKey(*row[: len(KEY_COLUMNS)])


def first_seen_of(row: Sequence) -> FirstSeen:
    """When the batch first saw a `routing_keys` row's key."""
    return row[len(KEY_COLUMNS)], row[len(KEY_COLUMNS) + 1]
