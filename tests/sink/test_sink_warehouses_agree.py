"""Both warehouses land the same rows and the same quarantine: the real sink run once into DuckDB and once into
the local BigQuery emulator through the real spark-bigquery-connector, on the same input files.

The input: every value of typing_cases.VALUES declared as every type of typing_cases.TYPES (one record each,
in one version whose columns are the types), the VERDICT_SCHEMA/VERDICT_DATA records, the odd lines of
typing_cases.ENVELOPE_LINES (not JSON, an array, metadata missing, null or not an object, a bad timestamp,
a bad `unavailable`...) and lines that are not UTF-8; and, in a second run in its own dataset, Debezium's
documented change events as kcat prints them (a tombstone among them: a null payload) and four bad events.
Every column of every version table and of the quarantine is compared, as
comparable Python values, and so are the counts each run reports.  The differences BigQuery itself forces
are listed in FORCED_DIFFERENCES with their reason, and the test checks each still occurs; nothing else may
differ.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb
import pytest
from sink_support import record
from test_debezium_documented import FIXTURES, kcat_line
from test_sink_bad_bytes import event
from typing_cases import (
    AT_DEPTH_LIMIT,
    ENVELOPE_LINES,
    LIMITS_SCHEMA,
    PAST_JSON_LIMITS,
    REPEATED_KEYS,
    SCHEMA_CHANGES_WITHOUT_TABLE,
    TYPES,
    VALUES,
    VERDICT_DATA,
    VERDICT_SCHEMA,
    WITHIN_JSON_LIMITS,
)

from uniview.core.landing_layout import CDC_COLUMNS, INGESTED_AT, QUARANTINE_TABLE
from uniview.core.types import Array, BQType, Scalar, Struct, parse_type
from uniview.sink.frames import QUARANTINE_COLUMNS
from uniview.sink.job import RunResult, SinkOptions, run
from uniview.sink.landing import BatchCounts
from uniview.sink.mysql_types import bigquery_type
from uniview.warehouse.url import duckdb_url

pytestmark = pytest.mark.timeout(600)

DATASET = "cdc"
#: Each run's dataset and record format: uniview's envelope, and a small run of Debezium's change events.
FORMATS = {DATASET: "uniview", "dbz": "debezium"}
#: One version whose column c<t> is declared as TYPES[t]; each record sets one column to one value.
TYPED_SCHEMA = [(f"c{t}", declared) for t, declared in enumerate(TYPES)]
#: Lines that are not UTF-8: a latin-1 byte in a value, a truncated character.
NOT_UTF8 = [
    json.dumps(record("latin", {"id": 1, "name": "é"}, [("id", "INT64"), ("name", "STRING")]), ensure_ascii=False)
    .encode()
    .replace("é".encode(), bad)
    for bad in (b"\xe9", b"\xc3")
]
#: The Debezium messages with a null value: counted as skipped, stored nowhere.
TOMBSTONES = sum(fixture["value"] is None for fixture in FIXTURES)
#: Every line counted as skipped, stored nowhere: the tombstones and the schema-change records of no table.
SKIPPED = {"tombstone": TOMBSTONES, "schema_change_without_table": len(SCHEMA_CHANGES_WITHOUT_TABLE)}
#: The quarantine's columns compared (batch and quarantined_at name the run, not the line).
QUARANTINE_COMPARED = tuple(name for name, _ in QUARANTINE_COLUMNS if name not in ("batch", "quarantined_at"))

_NAN_LINE = '{"data": {"x": NaN}, "metadata": {"table_name": "t"}}'
#: Cases whose outcome BigQuery itself forces to differ from DuckDB's, and why.  A case is (declared type, JSON
#: value) for the typed records, ("verdict", data) for VERDICT_DATA, ("line", text) for the odd lines.
FORCED_DIFFERENCES = {
    # BigQuery's arrays cannot hold NULL: BigQuery's landing quarantines such a record (it never lands it without
    # the element); DuckDB's arrays hold NULL, so it lands there.
    ("ARRAY<INT64>", "[1, null]"): "null element",
    # BigQuery lands a GEOGRAPHY only from text ST_GEOGFROMTEXT reads, and quarantines any other value as
    # type_mismatch; DuckDB has no geography type and lands the text.
    **{("GEOGRAPHY", value): "geography" for value in VALUES if value not in ('"POINT(1 2)"', "null")},
    # NaN is not JSON: BigQuery's parser refuses the line (unparseable), DuckDB's lets it through to the checks
    # after it.
    ("line", _NAN_LINE): "NaN",
}

#: Cases where DuckDB differs, and why: its JSON functions read a number through a double, so a number's text is the
#: double's (1.5 for 1.50, 100.0 for 1e2, rounded past 15 digits), where BigQuery's give the text as written: a
#: STRING lands that text.  A BIGNUMERIC too wide for a 38-digit decimal is read from its text, plain or with an
#: exponent, so 1e2 and 2.5E-3 land alike there; its 40-digit value lands on DuckDB (the double's text,
#: 1.2345678901234568e+29) as on BigQuery (test_zetasql_load_typing.py), and the emulator, which keeps a BIGNUMERIC
#: in DuckDB's DECIMAL(38), quarantines it.
_WIDE = "123456789012345678901234567890.0123456789"
_NUMBER_TEXT = ("1.50", "12345678901234567.125", _WIDE, "1e2", "2.5E-3")
DUCKDB_DIFFERENCES = {
    **{("STRING", value): "number text" for value in _NUMBER_TEXT},
    ("STRING", '[{"d": "2024-01-01", "n": 123456789012345678.25}]'): "number text",
    **{(declared, _WIDE): "the emulator's DECIMAL(38)" for declared in ("BIGNUMERIC", "BIGNUMERIC(48, 10)")},
}


#: Column names BigQuery allows (flexible column names), each landing as spelled, and names it refuses, each
#: quarantined as invalid_column_name on both warehouses: one table per name.
ALLOWED_NAMES = ("größe", "名前", "1st")
REFUSED_NAMES = ("price$", "a.b", "_PARTITIONTIME")


def _envelope(table: str, data: str | None, schema: list[tuple[str, str]], position: str) -> str:
    metadata = record(table, None, schema, operation="INSERT", position=position, timestamp="2024-05-01T10:00:00Z")
    metadata = metadata["metadata"]
    return (
        json.dumps({"metadata": metadata})
        if data is None
        else '{"data": %s, "metadata": %s}' % (data, json.dumps(metadata))
    )


def input_lines() -> dict[bytes, tuple[str, str]]:
    """{line's bytes: its case}: the typed records, the verdicts, the odd lines (a file holds text, one line per
    line: the NULL line and one holding a line break are left out)."""
    lines: dict[bytes, tuple[str, str]] = {}
    for t, declared in enumerate(TYPES):
        for v, value in enumerate(VALUES):
            line = _envelope("typed", '{"c%d": %s}' % (t, value), TYPED_SCHEMA, f"mysql-bin.000001:{t * 1000 + v}")
            lines[line.encode()] = (declared, value)
    for number, data in enumerate(VERDICT_DATA):
        line = _envelope("verdicts", data, VERDICT_SCHEMA, f"mysql-bin.000002:{number}")
        lines[line.encode()] = ("verdict", str(data))
    for odd in ENVELOPE_LINES:
        if odd is not None and "\n" not in odd:
            lines.setdefault(odd.encode(), ("line", odd))
    for raw in NOT_UTF8:
        lines[raw] = ("line", raw.decode("utf-8", "replace"))
    lines[AT_DEPTH_LIMIT.encode()] = ("line", AT_DEPTH_LIMIT)
    for number, name in enumerate(ALLOWED_NAMES + REFUSED_NAMES):
        data = json.dumps({"id": 1, name: 2}, ensure_ascii=False)
        line = _envelope(f"named{number}", data, [("id", "int"), (name, "int")], f"mysql-bin.000003:{number}")
        lines[line.encode()] = ("column name", name)
    for number, default in enumerate(DECLARED_DEFAULTS):
        line = _envelope(
            "declared", '{"id": %d, "c": 1}' % number, [("id", "int"), ("c", "int")], f"mysql-bin.000009:{number}"
        )
        with_default = json.loads(line)
        with_default["metadata"]["schema"][1]["default"] = default
        lines[json.dumps(with_default).encode()] = ("declared default", f"{number}: {default}")
    return lines


#: The defaults of column c in records of table "declared", its columns and types the same: one version per
#: declaration (the first record's is the computed version's; another starts a version of its own).
DECLARED_DEFAULTS = (5, None, 5, 7)


def debezium_lines() -> dict[bytes, tuple[str, str]]:
    """{line's bytes: its case}: Debezium's documented messages as kcat prints them (a tombstone, which a file
    holds as a null payload, among them), an event that is not UTF-8, one whose schema is not an object, and two
    that name a key twice (in `after`, in `source`)."""
    lines = {kcat_line(n, e).encode(): ("debezium", f"{n}: {e['origin'][-60:]}") for n, e in enumerate(FIXTURES)}
    lines[json.dumps(event(3, "é")).encode().replace(b"\\u00e9", b"\xe9")] = ("debezium", "not UTF-8")
    lines[json.dumps({**event(5), "schema": 5}).encode()] = ("debezium", "a schema that is not an object")
    twice = json.dumps(event(6)).replace('"id": 6', '"id": 6, "id": 7')
    lines[twice.encode()] = ("debezium", "a key named twice in after")
    twice = json.dumps(event(8)).replace('"table": "customer"', '"table": "customer", "table": "order"')
    lines[twice.encode()] = ("debezium", "a key named twice in source")
    return lines


#: {column name: its BigQuery type}, for every column of the versions the input lands.
COLUMN_TYPES: dict[str, BQType] = {
    **{name: parse_type(bq) for name, bq in CDC_COLUMNS},
    **{name: bigquery_type(declared).bq_type for name, declared in [*TYPED_SCHEMA, *VERDICT_SCHEMA, ("id", "int")]},
    **{column["name"]: bigquery_type(column["type"]).bq_type for column in LIMITS_SCHEMA},
}


def canonical(value: Any, bq_type: BQType | None) -> Any:
    """A landed value in one form for both warehouses.  BigQuery reads a NULL ARRAY back as []; DuckDB holds
    a BIGNUMERIC as a DOUBLE (so both are compared as floats); a JSON value is compared parsed, its numbers
    as Decimal; a GEOGRAPHY as its WKT text.  (A column of Debezium's events has no type here: its value is
    compared as read.)"""
    if isinstance(bq_type, Array):
        return [canonical(element, bq_type.element) for element in value or []]
    if value is None:
        return None
    if isinstance(bq_type, Struct):
        return {item.name: canonical(value.get(item.name), item.type) for item in bq_type.fields}
    name = bq_type.name if isinstance(bq_type, Scalar) else ""
    if name == "JSON":
        return json.loads(value, parse_float=Decimal, parse_int=Decimal) if isinstance(value, str) else value
    if name in ("FLOAT64", "BIGNUMERIC"):
        number = float(value)
        return "NaN" if math.isnan(number) else number
    if name in ("INT64", "NUMERIC"):
        return Decimal(value)
    if name == "TIMESTAMP" and isinstance(value, datetime):
        return value.astimezone(UTC)
    return value


def _row(values: dict[str, Any]) -> tuple:
    return tuple(
        (name, canonical(value, COLUMN_TYPES.get(name))) for name, value in values.items() if name != INGESTED_AT
    )


def _quarantined(values: dict[str, Any]) -> tuple:
    values = {**values, "source_file": Path(values["source_file"] or "").name}
    return ("quarantined", *(values[name] for name in QUARANTINE_COMPARED))


def outcomes(tables: dict[str, list[dict[str, Any]]], lines: dict[bytes, tuple[str, str]]) -> dict:
    """{case: sorted outcomes of its lines}: ("landed", table, row) or ("quarantined", *QUARANTINE_COMPARED).
    A landed row is the case of its position when one line has that position, else ("row", table, position)."""
    by_position = Counter(_position(line) for line in lines)
    cases_at = {_position(line): case for line, case in lines.items()}
    found: dict[tuple, list] = {}
    for table, rows in tables.items():
        for values in rows:
            if table.endswith(f".{QUARANTINE_TABLE}"):
                case = lines.get(bytes(values["raw_bytes"]), ("unknown line", repr(values["raw_bytes"])))
                found.setdefault(case, []).append(_quarantined(values))
                continue
            position = values["_cdc_position"]
            case = cases_at[position] if by_position[position] == 1 else ("row", f"{table} at {position}")
            found.setdefault(case, []).append(("landed", table, _row(values)))
    return {case: sorted(found[case], key=repr) for case in found}


def _position(line: bytes) -> str | None:
    try:
        metadata = json.loads(line)["metadata"]
        return metadata.get("position") if isinstance(metadata, dict) else None
    except (ValueError, TypeError, KeyError, RecursionError):  # a line nested past Python's parser: no position
        return None


def reported(results: list[RunResult]) -> dict[str, int]:
    """{"read": n, "written <table>": n, "quarantined <reason>": n, "skipped <kind>": n} the runs report together
    (one flat dict, so that a failure shows only the counts that differ)."""
    counts = BatchCounts()
    for result in results:
        counts.add(result.counts)
    return flat(counts.read, counts.written, counts.quarantined, counts.skipped)


def flat(read: int, written: dict, quarantined: dict, skipped: dict) -> dict[str, int]:
    kinds = {"written": written, "quarantined": quarantined, "skipped": skipped}
    return {"read": read, **{f"{kind} {key}": n for kind, counted in kinds.items() for key, n in counted.items() if n}}


def tally(found: dict) -> tuple[dict, dict]:
    """(written per table, quarantined per reason) as the tables hold them."""
    written: Counter = Counter()
    quarantined: Counter = Counter()
    for outcome in (item for items in found.values() for item in items):
        if outcome[0] == "landed":
            written[outcome[1]] += 1
        else:
            quarantined[outcome[2]] += 1
    return dict(written), dict(quarantined)


def _compared(name: str) -> bool:
    """A version table or the quarantine (not the sink's other tables: its ledger, staging, notifications)."""
    return not name.startswith("_uniview_") or name == QUARANTINE_TABLE


def duckdb_tables(path: Path) -> dict[str, list[dict[str, Any]]]:
    """{dataset.table: its rows as {column: value}} of every dataset of FORMATS."""
    tables = {}
    with duckdb.connect(str(path), read_only=True) as connection:
        connection.execute("SET TimeZone = 'UTC'")
        names = connection.execute(
            "SELECT schema_name, table_name FROM duckdb_tables() WHERE list_contains(?, schema_name)", [list(FORMATS)]
        ).fetchall()
        for dataset, name in names:
            if _compared(name):
                cursor = connection.execute(f'SELECT * FROM "{dataset}"."{name}"')
                columns = [item[0] for item in cursor.description]
                tables[f"{dataset}.{name}"] = [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]
    return tables


def bigquery_tables(client: Any) -> dict[str, list[dict[str, Any]]]:
    """{dataset.table: its rows as {column: value}} of every dataset of FORMATS."""
    tables = {}
    for dataset in FORMATS:
        for item in client.list_tables(dataset):
            if _compared(item.table_id):
                key = f"{dataset}.{item.table_id}"
                selected = ", ".join(_selected(field.name, field.field_type) for field in client.get_table(key).schema)
                tables[key] = [dict(row.items()) for row in client.query(f"SELECT {selected} FROM {key}").result()]
    return tables


def _selected(name: str, field_type: str) -> str:
    """A column as selected from BigQuery: JSON as its text (the client would parse numbers as floats),
    GEOGRAPHY as WKT."""
    if field_type == "JSON":
        return f"TO_JSON_STRING(`{name}`) AS `{name}`"
    if field_type == "GEOGRAPHY":
        return f"ST_ASTEXT(`{name}`) AS `{name}`"
    return f"`{name}`"


@pytest.fixture(scope="module")
def runs(spark: Any, connector_stack: tuple, tmp_path_factory: pytest.TempPathFactory) -> tuple:
    """The sink run per warehouse over the same files, one run per format of FORMATS: ({case: outcomes}, the
    RunResults, the tables it holds) of DuckDB, then of BigQuery, and the input {line: case}."""
    client, options = connector_stack
    root = tmp_path_factory.mktemp("warehouses-agree")
    inputs = {DATASET: input_lines(), "dbz": debezium_lines()}
    for dataset, given in inputs.items():
        (root / dataset).mkdir()
        (root / dataset / f"{dataset}.json").write_bytes(b"\n".join(given) + b"\n")
    lines = {line: case for given in inputs.values() for line, case in given.items()}
    warehouse = root / "w.duckdb"
    duck, bigquery = [
        [
            run(
                spark,
                SinkOptions(
                    input=str(root / dataset), warehouse=url, dataset=dataset, format=form, bigquery_options=settings
                ),
            )
            for dataset, form in FORMATS.items()
        ]
        for url, settings in ((duckdb_url(warehouse), ()), ("bigquery://test-project", options))
    ]
    duck_tables, bigquery_tables_ = duckdb_tables(warehouse), bigquery_tables(client)
    return (
        (outcomes(duck_tables, lines), duck, set(duck_tables)),
        (outcomes(bigquery_tables_, lines), bigquery, set(bigquery_tables_)),
        lines,
    )


def _brief(found: list) -> Any:
    """An outcome as a failure message shows it: the landed value(s) of the case, or the quarantine's verdict."""
    shown: list[Any] = []
    for outcome in found:
        if outcome[0] == "landed":
            shown.append(
                {name: value for name, value in outcome[2] if not name.startswith("_cdc_") and value not in (None, [])}
            )
        else:
            shown.append((outcome[2], outcome[3]))
    return shown[0] if len(shown) == 1 else shown


def differences(duck: dict, bigquery: dict) -> dict:
    return {
        case: (duck.get(case, []), bigquery.get(case, []))
        for case in {*duck, *bigquery}
        if duck.get(case, []) != bigquery.get(case, [])
    }


def test_every_line_lands_or_is_quarantined_alike(runs: tuple) -> None:
    (duck, _, _), (bigquery, _, _), lines = runs
    assert sum(map(len, duck.values())) == len(lines) - sum(SKIPPED.values())  # a skipped line is stored nowhere
    differing = differences(duck, bigquery)
    unexpected = {case: pair for case, pair in differing.items() if case not in FORCED_DIFFERENCES | DUCKDB_DIFFERENCES}
    listing = "\n".join(
        f"{case[0]} {case[1]}: duckdb {_brief(d)!r} | bigquery {_brief(b)!r}"
        for case, (d, b) in sorted(unexpected.items(), key=repr)
    )
    assert not unexpected, f"{len(unexpected)} cases differ:\n{listing}"
    assert set(FORCED_DIFFERENCES) <= set(differing), set(FORCED_DIFFERENCES) - set(differing)
    assert set(DUCKDB_DIFFERENCES) <= set(differing), set(DUCKDB_DIFFERENCES) - set(differing)


def test_bigquery_lands_a_json_number_as_written_where_duckdb_lands_its_double(runs: tuple) -> None:
    """DuckDB's differences: BigQuery lands a STRING given a JSON number as the number's text as written, where
    DuckDB sees the double's text; the emulator refuses a 40-digit BIGNUMERIC, which DuckDB lands."""
    (duck, _, _), (bigquery, _, _), _ = runs
    for declared, value in DUCKDB_DIFFERENCES:
        found = bigquery[(declared, value)]
        if declared == "STRING":
            assert [outcome[0] for outcome in found] == ["landed"], found
            assert json.loads(dict(found[0][2])[f"c{TYPES.index(declared)}"], parse_float=str) == json.loads(
                value, parse_float=str
            )
        else:
            assert [outcome[:3:2] for outcome in found] == [("quarantined", "type_mismatch")], found
            assert [outcome[0] for outcome in duck[(declared, value)]] == ["landed"]


def _holds_null(value: Any) -> bool:
    if isinstance(value, list):
        return any(element is None or _holds_null(element) for element in value)
    return isinstance(value, dict) and any(_holds_null(item) for item in value.values())


def test_bigquery_holds_no_array_with_a_null_element(runs: tuple) -> None:
    """BigQuery's INSERT refuses an ARRAY holding NULL, at any depth, where the emulator stores it: no row landed
    on BigQuery may hold one (a JSON value may: it is no ARRAY)."""
    _, (bigquery, _, _), _ = runs
    holding = {
        (case, name): value
        for case, found in bigquery.items()
        for outcome in found
        if outcome[0] == "landed"
        for name, value in outcome[2]
        if not _is_json(COLUMN_TYPES.get(name)) and _holds_null(value)
    }
    assert holding == {}


def _is_json(bq_type: BQType | None) -> bool:
    return isinstance(bq_type, Scalar) and bq_type.name == "JSON"


def test_each_forced_difference_is_a_bigquery_quarantine(runs: tuple) -> None:
    """Where BigQuery forces a difference, it is BigQuery that quarantines the line (nothing is lost)."""
    (duck, _, _), (bigquery, _, _), _ = runs
    for case in FORCED_DIFFERENCES:
        assert [outcome[0] for outcome in bigquery.get(case, [])] == ["quarantined"], (case, bigquery.get(case))
        assert len(duck.get(case, [])) == 1, (case, duck.get(case))


def test_a_column_name_lands_as_spelled_when_bigquery_allows_it_and_is_quarantined_when_it_does_not(
    runs: tuple,
) -> None:
    """BigQuery's flexible column names decide on both warehouses: `größe` lands as spelled, `price$` is quarantined
    as invalid_column_name (DuckDB takes any name, the emulator too: the sink enforces BigQuery's rule itself)."""
    (duck, _, _), (bigquery, _, _), _ = runs
    reason = QUARANTINE_COMPARED.index("reason") + 1
    for found in (duck, bigquery):
        for name in ALLOWED_NAMES:
            [outcome] = found[("column name", name)]
            assert outcome[0] == "landed" and (name, 2) in outcome[2], outcome
        for name in REFUSED_NAMES:
            [outcome] = found[("column name", name)]
            assert outcome[0] == "quarantined" and outcome[reason] == "invalid_column_name", outcome


def test_a_key_named_twice_is_a_duplicate_key_with_its_bytes_on_both_warehouses(runs: tuple) -> None:
    """A line naming a key twice at its top level or in its metadata, and a Debezium event naming one twice in
    `after` or `source`, are quarantined as duplicate_key, each once, keeping the line (the event) as read."""
    (duck, _, _), (bigquery, _, _), lines = runs
    cases = [("line", line) for line in REPEATED_KEYS]
    cases += [("debezium", f"a key named twice in {where}") for where in ("after", "source")]
    read = {case: line for line, case in lines.items()}
    raw_bytes, reason = QUARANTINE_COMPARED.index("raw_bytes") + 1, QUARANTINE_COMPARED.index("reason") + 1
    for found in (duck, bigquery):
        for case in cases:
            [outcome] = found[case]
            assert outcome[0] == "quarantined" and outcome[reason] == "duplicate_key", (case, outcome)
            assert bytes(outcome[raw_bytes]) == read[case]


def test_a_line_past_a_limit_of_bigquerys_json_is_quarantined_with_its_bytes_on_both_warehouses(runs: tuple) -> None:
    """In one batch with good lines: a line nested 1,000 deep or holding 1e999 is quarantined with its bytes and the
    reason naming the limit, a JSON column given "-1e999" as type_mismatch; the lines at the limits land, and an
    object landed as STRING is the same text on both warehouses, its strings escaped as GoogleSQL writes them."""
    (duck, _, _), (bigquery, _, _), _ = runs
    raw_bytes, reason = QUARANTINE_COMPARED.index("raw_bytes") + 1, QUARANTINE_COMPARED.index("reason") + 1
    for found in (duck, bigquery):
        for line, why in PAST_JSON_LIMITS.items():
            [outcome] = found[("line", line)]
            assert outcome[0] == "quarantined" and outcome[reason] == why, (line[:80], outcome[:4])
            assert bytes(outcome[raw_bytes]) == line.encode()
        for line in [AT_DEPTH_LIMIT, *WITHIN_JSON_LIMITS]:
            assert [outcome[0] for outcome in found[("line", line)]] == ["landed"], line[:80]
        [(_, _, row)] = found[("line", WITHIN_JSON_LIMITS[-1])]
        assert dict(row)["s"] == '{"k":"a\\u001fb\x7f\\u2028/","n":[true,"\\\\u001F"]}'


def test_records_declaring_other_defaults_land_in_a_version_of_their_own_on_both_warehouses(runs: tuple) -> None:
    for found, _, _ in runs[:2]:
        tables = [found[("declared default", f"{n}: {d}")][0][1] for n, d in enumerate(DECLARED_DEFAULTS)]
        assert len(set(tables)) == 3 and tables[0] == tables[2], tables


def test_the_runs_report_the_same_counts_and_make_the_same_tables(runs: tuple) -> None:
    """Each run reports what its tables hold, and both report the same but for the forced differences."""
    (duck, duck_result, duck_tables), (bigquery, bigquery_result, bigquery_tables_), lines = runs
    assert duck_tables == bigquery_tables_
    assert reported(duck_result) == flat(len(lines), *tally(duck), SKIPPED)
    forced = FORCED_DIFFERENCES | DUCKDB_DIFFERENCES
    as_bigquery_forces = {**duck, **{case: bigquery.get(case, []) for case in forced}}
    assert reported(bigquery_result) == flat(len(lines), *tally(as_bigquery_forces), SKIPPED)
    assert [sorted(r.warnings) for r in duck_result] == [sorted(r.warnings) for r in bigquery_result]
