"""Generated values at the edges of every landed type, typed by both renderings of the sink's rules: BigQuery's run by
ZetaSQL's reference implementation of GoogleSQL, DuckDB's by DuckDB.  For every value: (a) both land it or both
quarantine it, with the same reason and detail; (b) a landed value is the same on both (canonical form); (c) it is
the value BigQuery's documented rules give (typing_oracle: within range, decimals rounded once half away from
zero); (d) no statement fails while it runs.

Hypothesis draws the values from a fixed seed (derandomized) and shrinks a failure to its smallest batch, which
it prints.  UNIVIEW_SOAK_EXAMPLES=N draws N batches instead of the CI's few.
"""

from __future__ import annotations

import base64
import json
import os
import re
import sys
from datetime import time
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlglot import exp
from test_zetasql_load_typing import _lines, _literal, bigquery_outcome, canonical, duckdb_outcome, evaluate
from typing_oracle import QUARANTINED, UNCHECKED, expected, rounded_at_38_places

from uniview.sink.json_limits import MAX_NESTING_DEPTH
from uniview.sink.load_dialect import BIGQUERY, DUCKDB
from uniview.sink.load_sql import limited_lines
from uniview.sink.load_typing import typed_json
from uniview.sink.mysql_types import bigquery_type
from uniview.sink.routing import LandingColumn

sys.path.insert(0, str(Path(__file__).parents[1] / "sink"))
from typing_cases import TYPES

EXAMPLES = int(os.environ.get("UNIVIEW_SOAK_EXAMPLES") or 15)
#: Every landed type but GEOGRAPHY (ZetaSQL's reference implementation has no geography functions).
GENERATED_TYPES = [declared for declared in TYPES if declared != "GEOGRAPHY"]
#: A BIGNUMERIC wider than DuckDB's 38-digit DECIMAL lands as a DOUBLE there (documented): its JSON numbers are
#: drawn as integers of at most 15 digits (DuckDB reads a number's text through a double) and its values compared
#: as doubles.
_WIDE = {"BIGNUMERIC", "BIGNUMERIC(48, 10)"}
#: A JSON string, and a JSON number outside strings (the limits' oracle reads them).
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_JSON_NUMBER = re.compile(r"-?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
#: A value that is a JSON number (not a string), at the start of a record's column.
_NUMBER_VALUE = re.compile(r'^\{"c": -?[0-9]')
#: A number written with an exponent, in a record's text.
_EXPONENT_NUMBER = re.compile(r"[+-]?[0-9.]+[eE][+-]?[0-9]+")


def _quoted(text: str) -> str:
    """A JSON string with its characters as they are (as Debezium writes them: a character past U+FFFF escaped as
    a surrogate pair is read otherwise by ZetaSQL's JSON_VALUE than by DuckDB, a difference not drawn here)."""
    return json.dumps(text, ensure_ascii=False)


_digits = st.text("0123456789", min_size=0, max_size=45)
#: Tails that decide a rounding: ...4999... and ...5000... past the scale.
_tails = st.sampled_from(["", "5", "4999999999999999999999999999999999999999999", "5000000000000000000001", "49"])


@st.composite
def decimal_texts(draw) -> str:
    """A NUMBER's text: sign, integer digits, fraction (with a rounding tail), exponent."""
    sign = draw(st.sampled_from(["", "-", "+"]))
    whole = draw(_digits)
    fraction = draw(_digits) + draw(_tails)
    exponent = draw(st.sampled_from(["", "", "", "e5", "E-3", "e+2", "e-40", "e-60", "e38", "e400"]))
    number = (whole or "0") + ("." + fraction if fraction else "")
    return sign + number + exponent


@st.composite
def json_numbers(draw) -> str:
    """A JSON number's text (no '+', no bare '.')."""
    text = draw(decimal_texts()).lstrip("+")
    whole = text.lstrip("-").split(".")[0].split("e")[0].split("E")[0]
    return text if whole == "0" or not whole.startswith("0") else text.replace(whole, whole.lstrip("0") or "0", 1)


_FLOAT_WORDS = ["NaN", "nan", "-nan", "Infinity", "-Infinity", "+Infinity", "inf", "-inf", "INF", "infinity"]
_FLOAT_ODD = [" 1.5", "1.5 ", "\t1", "1.", ".5", "0x10", "1_000", "+1", "1e400", "-1e400", "1e-400", "1d", "1f", ""]


@st.composite
def moments(draw) -> str:
    """A date, datetime or timestamp's text at and past BigQuery's ranges, with odd offsets."""
    year = draw(st.sampled_from([0, 1, 2, 999, 1970, 2024, 9998, 9999, 10000]))
    month, day = draw(st.integers(0, 13)), draw(st.integers(0, 32))
    text = f"{year:04d}-{month:02d}-{day:02d}"
    if draw(st.booleans()):
        hour, minute, second = draw(st.integers(0, 24)), draw(st.integers(0, 60)), draw(st.integers(0, 60))
        fraction = draw(st.sampled_from(["", ".5", ".123456", ".1234567", ".999999"]))
        separator = draw(st.sampled_from([" ", "T"]))
        text += f"{separator}{hour:02d}:{minute:02d}:{second:02d}{fraction}"
        zone = draw(st.sampled_from(["", "Z", "offset", "offset"]))
        if zone == "offset":
            sign = draw(st.sampled_from("+-"))
            zone_hour, zone_minute = draw(st.integers(0, 25)), draw(st.sampled_from([0, 30, 59, 60, 61]))
            colon = draw(st.sampled_from([":", ":", ""]))
            zone = f"{sign}{zone_hour:02d}{colon}{zone_minute:02d}"
        text += zone
    return text


@st.composite
def clocks(draw) -> str:
    hour, minute, second = draw(st.integers(0, 25)), draw(st.integers(0, 60)), draw(st.integers(0, 60))
    fraction = draw(st.sampled_from(["", ".5", ".999999", ".1234567"]))
    return f"{hour:02d}:{minute:02d}:{second:02d}{fraction}"


_unicode = st.text(st.characters(exclude_categories=("Cs",)), max_size=12)
_base64 = st.binary(max_size=12).map(lambda raw: base64.b64encode(raw).decode())
_small_integers = st.integers(-(10**15), 10**15).map(str)


def _common() -> st.SearchStrategy[str]:
    """Values any column may be given: null, booleans, small numbers, strings of any kind.  Numbers a STRING column
    may hold are integers, whose text DuckDB writes as written (not -0, which it writes 0: a JSON number's text
    there has been through a double, a documented difference)."""
    return st.one_of(
        st.sampled_from(["null", "true", "false", "0", "1", '""', '"true"', '"0"', "[]", "{}"]),
        _small_integers,
        _unicode.map(_quoted),
    )


def scalar_values(declared: str) -> st.SearchStrategy[str]:
    """JSON texts at the edges of the scalar type `declared`."""
    name = declared.split("(")[0]
    integers = st.integers(-(2**64), 2**64).map(str)
    by_type: dict[str, st.SearchStrategy[str]] = {
        "INT64": st.one_of(integers, integers.map(_quoted), json_numbers(), st.just("-0")),
        "FLOAT64": st.one_of(
            st.floats().map(lambda number: repr(number) if number == number and abs(number) != float("inf") else "0"),
            json_numbers(),
            st.sampled_from(_FLOAT_WORDS + _FLOAT_ODD).map(_quoted),
            decimal_texts().map(_quoted),
        ),
        "BOOL": st.one_of(integers, st.sampled_from(["TRUE", "False", "yes", "1.0", "-00", " true"]).map(_quoted)),
        "STRING": _unicode.map(_quoted),
        "BYTES": st.one_of(
            _base64.map(_quoted), st.integers(0, 10**12).map(str), st.sampled_from(["1234", '"aGVsbG8"', '"aGVs bG8="'])
        ),
        "DATE": moments().map(_quoted),
        "DATETIME": moments().map(_quoted),
        "TIMESTAMP": moments().map(_quoted),
        "TIME": clocks().map(_quoted),
        "JSON": st.one_of(
            st.sampled_from(['{"a": [1, 2.5, "x"]}', '"[1,]"', '"{\\"a\\": 1}"', '"NaN"', '"caf\\u00e9"']),
            _unicode.map(lambda text: _quoted(_quoted(text))),
        ),
    }
    if name in ("NUMERIC", "BIGNUMERIC"):
        if declared in _WIDE:
            return st.one_of(decimal_texts().map(_quoted), _common())
        return st.one_of(decimal_texts().map(_quoted), json_numbers())
    return st.one_of(by_type[name], _common())


#: The nested types' fields and elements, drawn from their scalars' values.
_NESTED = {
    "STRUCT<a INT64, b STRING>": lambda: st.one_of(
        st.fixed_dictionaries({}, optional={"a": scalar_values("INT64"), "b": scalar_values("STRING")}).map(
            lambda fields: "{" + ", ".join(f'"{key}": {value}' for key, value in fields.items()) + "}"
        ),
        _common(),
    ),
    "ARRAY<INT64>": lambda: st.one_of(
        st.lists(scalar_values("INT64"), max_size=4).map(lambda items: "[" + ", ".join(items) + "]"), _common()
    ),
    "ARRAY<STRUCT<d DATE, n NUMERIC(20, 2)>>": lambda: st.lists(
        st.fixed_dictionaries({}, optional={"d": scalar_values("DATE"), "n": scalar_values("NUMERIC(20, 2)")}).map(
            lambda fields: "{" + ", ".join(f'"{key}": {value}' for key, value in fields.items()) + "}"
        ),
        max_size=3,
    ).map(lambda items: "[" + ", ".join(items) + "]"),
}


def values_of(declared: str) -> st.SearchStrategy[str]:
    return _NESTED[declared]() if declared in _NESTED else scalar_values(declared)


def _nested(depth: int, kind: str) -> str:
    return "[" * depth + "]" * depth if kind == "array" else '{"a": ' * depth + "1" + "}" * depth


#: Numbers at and past what BigQuery's JSON holds: a double's largest, beyond it, and 1e309 written in digits.
_MAGNITUDES = ["1e308", "-1.7976931348623157e308", "1.8e308", "1e999", "-1e999", "1" + "0" * 308, "1" + "0" * 309]


def past_limits() -> st.SearchStrategy[str]:
    """Values at and past the limits of BigQuery's JSON type for any column: an array or object nested up to the
    500 levels a line may nest (the value is two levels inside its line) and past them, a string holding JSON
    text as deep, numbers at and past a double's range, inline and as strings."""
    depths = st.sampled_from([1, 250, 497, 498, 499, 1000])
    return st.one_of(
        st.builds(_nested, depths, st.sampled_from(["array", "object"])),
        st.sampled_from([499, 500, 501]).map(lambda depth: _quoted(_nested(depth, "array"))),
        st.sampled_from(_MAGNITUDES),
        st.sampled_from(_MAGNITUDES).map(_quoted),
    )


@st.composite
def data_objects(draw, declared: str) -> str:
    """The data object of one record: its column `c`, sometimes named twice or with a key of another case, or a
    value at or past the limits of BigQuery's JSON type."""
    shape = draw(st.sampled_from(["plain"] * 8 + ["twice", "other case", "limit"]))
    value = draw(past_limits() if shape == "limit" else values_of(declared))
    if shape == "twice":
        return '{"c": %s, "c": %s}' % (value, draw(values_of(declared)))
    if shape == "other case":
        return '{"C": %s}' % value
    return '{"c": %s}' % value


#: The operations a record is drawn with (None: no metadata.operation), DELETE the most often.
_OPERATIONS = ["DELETE", "DELETE", "INSERT", "UPDATE", "SNAPSHOT", None]
#: The primary keys a batch is drawn with: none, its column `c`, or another column `k` (c is then outside the key,
#: and a DELETE lands a value of c that does not fit as NULL).
_KEYS: list[tuple[str, ...] | None] = [None, ("c",), ("k",)]


@st.composite
def batches(draw) -> tuple[str, list[str], tuple[str, ...] | None, list[str | None]]:
    """A type, records of one column `c` of it, the version's primary key, and each record's operation."""
    declared = draw(st.sampled_from(GENERATED_TYPES))
    data = draw(st.lists(data_objects(declared), min_size=1, max_size=8))
    key = draw(st.sampled_from(_KEYS))
    return declared, data, key, [draw(st.sampled_from(_OPERATIONS)) for _ in data]


def _comparable(value, declared: str):
    """A landed value as compared across warehouses: a wide BIGNUMERIC as a double (DuckDB's column is one), a TIME
    in one form (DuckDB's typing gives its text as written, `00:00:00.5`; BigQuery's JSON `00:00:00.500`)."""
    if value is None:
        return None
    if declared == "TIME":
        return time.fromisoformat(value).isoformat()
    return float(value) if declared in _WIDE else value


def check_batch(
    zetasql,
    declared: str,
    data: list[str],
    key: tuple[str, ...] | None = None,
    operations: list[str | None] | None = None,
) -> None:
    """Type the records `data` of column `c` (and `k`, an INT64 the records leave out, when it is the primary
    `key`), each with its operation, on both warehouses, and check (a) to (d)."""
    columns = [LandingColumn("c", declared, bigquery_type(declared).bq_type)]
    if key == ("k",):
        columns.append(LandingColumn("k", "INT64", bigquery_type("INT64").bq_type))
    given = operations or [None] * len(data)
    positions = {str(number): text for number, text in enumerate(data)}
    every_line = _lines(positions, {str(number): operation for number, operation in enumerate(given)})
    past = limits_breached(zetasql, every_line)  # a line past BigQuery's JSON limits is read no further
    lines = {position: line for position, line in every_line.items() if past[position] is None}
    if not lines:
        return
    bigquery = bigquery_outcome(zetasql, lines, columns, key)  # (d): a statement that fails raises here
    duck = duckdb_outcome(lines, columns, key)
    for position, text in enumerate(data):
        if past[str(position)] is not None:
            continue
        if declared == "STRING" and _NUMBER_VALUE.search(text):  # DuckDB's text of a number: documented
            continue
        if "NUMERIC" in declared and any(map(rounded_at_38_places, _EXPONENT_NUMBER.findall(text))):
            continue
        if declared.startswith("ARRAY") and _null_element(text):  # BigQuery's arrays cannot hold NULL (documented)
            continue
        bq, dk = bigquery[str(position)], duck[str(position)]
        where = f"{declared} data {text} ({given[position]}, key {key}): BigQuery {bq}, DuckDB {dk}"
        assert bq[:2] == dk[:2], f"(a) land or quarantine differs: {where}"
        assert _comparable(bq[2], declared) == _comparable(dk[2], declared), f"(b) landed value differs: {where}"
        assert bq[3:] == dk[3:], f"(b) the columns landed NULL differ: {where}"
        excused = given[position] == "DELETE" and key == ("k",)
        _check_oracle(columns[0], text, bq, where, excused)


def limits_breached(zetasql, lines: dict[str, str]) -> dict[str, str | None]:
    """{position: the JSON limit its line breaches (its quarantine reason), None within them}: the same on both
    warehouses (BigQuery's rendering run by ZetaSQL's reference implementation, a statement that fails raising
    here) and as the limits say (_limit_oracle)."""
    literals = ", ".join(_literal(line) for line in lines.values())
    staged = f"(SELECT value FROM UNNEST([{literals}]) AS value)"
    bigquery = dict(evaluate(zetasql, f"SELECT value, _limit FROM ({limited_lines(staged, BIGQUERY)})"))
    duck = dict(
        duckdb.connect()
        .execute(
            f"SELECT value, _limit FROM ({limited_lines('(SELECT unnest(?) AS value)', DUCKDB)})", [[*lines.values()]]
        )
        .fetchall()
    )
    oracle = {line: _limit_oracle(line) for line in lines.values()}
    assert bigquery == duck == oracle, {line[:60]: (bigquery[line], duck[line], oracle[line]) for line in oracle}
    return {position: oracle[line] for position, line in lines.items()}


def _limit_oracle(line: str) -> str | None:
    """The limit a line breaches, by the rules of BigQuery's JSON type: nested deeper than 500 levels (counted over
    its brackets outside strings), or a number that is no finite double."""
    outside = _JSON_STRING.sub('""', line)
    depth = deepest = 0
    for bracket in re.sub(r"[^\[\]{}]", "", outside):
        depth += 1 if bracket in "[{" else -1
        deepest = max(deepest, depth)
    if deepest > MAX_NESTING_DEPTH:
        return "json_too_deep"
    if any(abs(float(number)) == float("inf") for number in _JSON_NUMBER.findall(outside)):
        return "json_number_out_of_range"
    return None


def _check_oracle(column: LandingColumn, text: str, outcome: tuple, where: str, excused: bool = False) -> None:
    """(c): a record with one key `c` lands what BigQuery's rules give, or is quarantined when they refuse it; a
    DELETE whose `c` is outside the primary key (`excused`) lands it NULL instead, named among its unfit columns."""
    try:
        data = json.loads(text, parse_float=Decimal, parse_int=Decimal, object_pairs_hook=_pairs)
    except ValueError:
        return
    if list(data) != ["c"]:
        return
    value_text = text[text.index(":") + 1 : -1].strip()
    want = expected(column.bq_type, data["c"], value_text)
    reason, _, landed, *unfit = outcome
    if excused:
        assert reason is None, f"(c) a DELETE lands whatever its non-key values: {where}"
    if want == UNCHECKED:
        return
    landed = _comparable(landed, column.declared_type or "")
    if want == QUARANTINED and excused:
        assert landed is None and unfit == [["c"]], f"(c) a DELETE lands a value that does not fit NULL: {where}"
    elif want == QUARANTINED:
        assert reason == "type_mismatch", f"(c) BigQuery's rules refuse it: {where}"
    else:
        assert reason is None and landed == want, f"(c) BigQuery's rules land {want!r}: {where}"
        assert unfit in ([], [None], [[]]), f"(c) a value that fits is not named unfit: {where}"


def _null_element(text: str) -> bool:
    """The record's data holds an array with a JSON null element, at any depth."""

    def holds(value: object) -> bool:
        if isinstance(value, list):
            return any(item is None or holds(item) for item in value)
        return isinstance(value, dict) and any(holds(item) for item in value.values())

    try:
        return holds(json.loads(text))
    except ValueError:
        return False


def _pairs(pairs: list) -> dict:
    keys = [key for key, _ in pairs]
    return dict(pairs) if len(set(keys)) == len(keys) else {"": None}


@settings(
    max_examples=EXAMPLES,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
    print_blob=True,
)
@given(batch=batches())
def test_generated_values_land_alike_and_as_bigquery_rules_say(zetasql, batch):
    check_batch(zetasql, *batch)


@pytest.mark.parametrize(
    ("declared", "data"),
    [
        # a JSON number of many digits reached a narrow DECIMAL through a double on DuckDB (0.125, then 0.13)
        ("NUMERIC(10, 2)", '{"c": 0.12499999999999999999}'),
        # rounded twice on BigQuery: first to BIGNUMERIC's 38 places (0.1245), then to the scale (0.125)
        ("NUMERIC(20, 3)", '{"c": "0.1244999999999999999999999999999999999999"}'),
        ("NUMERIC", '{"c": 0.4999999999999999999999999999999999999999999}'),
        ("NUMERIC(10, 2)", '{"c": "1.2499999999999999999999999999999999999999999e-1"}'),
        # DuckDB refused a decimal written with an exponent whose digits outnumber the precision (found generated)
        ("NUMERIC(10, 2)", '{"c": "100000000E-3"}'),
        # a JSON number (not a string) with a long mantissa and an exponent: DuckDB's text of it has been through a
        # double, so the long-mantissa guard must not read it there (found generated)
        ("ARRAY<STRUCT<d DATE, n NUMERIC(20, 2)>>", '{"c": [{"n": 1000.0000000000005000000000000000000001e5}]}'),
        ("NUMERIC(10, 2)", '{"c": "1234567890123456789012345678901234567890e-33"}'),
        # dates and datetimes of year 0000 landed on DuckDB (1 BC)
        ("DATE", '{"c": "0000-12-31"}'),
        ("DATETIME", '{"c": "0000-12-31 23:00:00"}'),
        # an offset took a timestamp past BigQuery's range on DuckDB, or brought year 0000 into it
        ("TIMESTAMP", '{"c": "0001-01-01 00:00:00+01:00"}'),
        ("TIMESTAMP", '{"c": "9999-12-31 23:59:59-01:00"}'),
        ("TIMESTAMP", '{"c": "0000-12-31 23:00:00-02:00"}'),
        # impossible offsets were read on DuckDB
        ("TIMESTAMP", '{"c": "2024-01-01 00:00:00+25:00"}'),
        ("TIMESTAMP", '{"c": "2024-01-01 00:00:00+14:61"}'),
        ("TIMESTAMP", '{"c": "2024-01-01 00:00:00+14:01"}'),
        ("TIMESTAMP", '{"c": "2024-01-01 00:00:00+0960"}'),
        # a number or true given for BYTES was decoded as base64
        ("BYTES", '{"c": 1234}'),
        ("BYTES", '{"c": true}'),
        # FLOAT64 text no source writes, read leniently (and differently) by each warehouse
        ("FLOAT64", '{"c": "0x10"}'),
        ("FLOAT64", '{"c": "1_000"}'),
        ("FLOAT64", '{"c": " 1.5"}'),
        ("FLOAT64", '{"c": "inf"}'),
        ("FLOAT64", '{"c": "nan"}'),
        ("FLOAT64", '{"c": "1e400"}'),
        ("FLOAT64", '{"c": "-Infinity"}'),
        # a key named twice
        ("INT64", '{"c": 1, "c": 2}'),
        # past the limits of BigQuery's JSON: a line 1,002 levels deep failed BigQuery's statement; a number beyond a
        # double landed on DuckDB (inline, or as a string into a JSON column) where BigQuery refused it
        ("INT64", '{"c": %s}' % _nested(1000, "array")),
        ("JSON", '{"c": %s}' % _nested(499, "object")),
        ("JSON", '{"c": 1e999}'),
        ("JSON", '{"c": "-1e999"}'),
        ("JSON", '{"c": %s}' % ("1" + "0" * 309)),
        # an object landed as STRING: its strings escaped as GoogleSQL writes them on both
        ("STRING", '{"c": {"k": "a\\u001Fb\\u2028"}}'),
    ],
)
def test_each_defect_found_stays_fixed(zetasql, declared, data):
    check_batch(zetasql, declared, [data])


#: Differences the generator does not draw, each documented in docs/sink.md, and checked to still occur.
KNOWN_DIFFERENCES = [
    # a character past U+FFFF as a surrogate-pair escape: ZetaSQL's JSON_VALUE decodes each half alone
    ("STRING", '{"c": "\\ud800\\udc00"}'),
    # digits past 38 places behind an exponent: BigQuery's BIGNUMERIC rounds them at 38 places first
    ("NUMERIC(20, 3)", '{"c": "499999999999999999999999999999999995e-39"}'),
]


@pytest.mark.parametrize(("declared", "data"), KNOWN_DIFFERENCES)
def test_each_known_difference_still_occurs(zetasql, declared, data):
    column = LandingColumn("c", declared, bigquery_type(declared).bq_type)
    lines = _lines({"0": data})
    assert bigquery_outcome(zetasql, lines, [column]) != duckdb_outcome(lines, [column])


@pytest.mark.parametrize(
    ("declared", "value"),
    [
        ("NUMERIC(10, 2)", "0.12499999999999999999"),
        ("DATE", '"0000-01-01"'),
        ("TIMESTAMP", '"2024-01-01 00:00:00+14:00"'),
        ("BYTES", "1234"),
        ("FLOAT64", '"-Infinity"'),
        ("ARRAY<INT64>", "[1, 2]"),
    ],
)
def test_one_value_on_its_own_is_typed_by_the_same_rules(zetasql, declared, value):
    """load_typing.typed_json: one JSON value (a declared DEFAULT's) typed alike on both warehouses, as the same
    value in a record's column is."""
    column = LandingColumn("c", declared, bigquery_type(declared).bq_type)
    typed = {dialect: typed_json(exp.Literal.string(value), column.bq_type, dialect) for dialect in (DUCKDB, BIGQUERY)}
    duck = duckdb.connect()
    duck.execute("SET TimeZone = 'UTC'")
    ((landed, fits),) = duck.execute(
        f"SELECT {typed[DUCKDB].value.sql('duckdb')}, {typed[DUCKDB].fits.sql('duckdb')}"
    ).fetchall()
    bigquery = typed[BIGQUERY]
    ((text, bq_fits),) = evaluate(
        zetasql,
        f"SELECT TO_JSON_STRING({bigquery.value.sql('bigquery')}), CAST({bigquery.fits.sql('bigquery')} AS STRING)",
    )
    from_bigquery = (
        None if text == "null" else canonical(json.loads(text, parse_float=Decimal), column.bq_type, parsed=True)
    )
    assert (from_bigquery, bq_fits) == (canonical(landed, column.bq_type), str(fits).lower())
    record = bigquery_outcome(zetasql, _lines({"0": '{"c": %s}' % value}), [column])["0"]
    assert record[2] == from_bigquery and (record[0] is None) == fits
