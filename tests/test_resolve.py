"""Cast policies: the full type-pair matrix for both policies, written out, plus nesting rules."""

import itertools

import pytest

from uniview.core.errors import ConfigError
from uniview.core.resolve import convert, null_of, unify, validate_timezone
from uniview.core.types import parse_type

CODES = {
    "I": "INT64",
    "F": "FLOAT64",
    "N": "NUMERIC",
    "B": "BIGNUMERIC",
    "L": "BOOL",
    "S": "STRING",
    "Y": "BYTES",
    "D": "DATE",
    "DT": "DATETIME",
    "T": "TIME",
    "TS": "TIMESTAMP",
    "J": "JSON",
    "G": "GEOGRAPHY",
    "IV": "INTERVAL",
    "R": "RANGE<DATE>",
    "A": "ARRAY<INT64>",
    "ST": "STRUCT<a INT64>",
}

# Row type x column type -> unified type.  Written out by hand; never derived from the code.
UNIVIEW_MATRIX = """
     I  F  N  B  L  S  Y  D  DT T  TS J  G  IV R  A  ST
I    I  S  S  S  S  S  S  S  S  S  S  S  S  S  S  S  S
F    S  F  S  S  S  S  S  S  S  S  S  S  S  S  S  S  S
N    S  S  N  S  S  S  S  S  S  S  S  S  S  S  S  S  S
B    S  S  S  B  S  S  S  S  S  S  S  S  S  S  S  S  S
L    S  S  S  S  L  S  S  S  S  S  S  S  S  S  S  S  S
S    S  S  S  S  S  S  S  S  S  S  S  S  S  S  S  S  S
Y    S  S  S  S  S  S  Y  S  S  S  S  S  S  S  S  S  S
D    S  S  S  S  S  S  S  D  S  S  S  S  S  S  S  S  S
DT   S  S  S  S  S  S  S  S  DT S  TS S  S  S  S  S  S
T    S  S  S  S  S  S  S  S  S  T  S  S  S  S  S  S  S
TS   S  S  S  S  S  S  S  S  TS S  TS S  S  S  S  S  S
J    S  S  S  S  S  S  S  S  S  S  S  J  S  S  S  S  S
G    S  S  S  S  S  S  S  S  S  S  S  S  G  S  S  S  S
IV   S  S  S  S  S  S  S  S  S  S  S  S  S  IV S  S  S
R    S  S  S  S  S  S  S  S  S  S  S  S  S  S  R  S  S
A    S  S  S  S  S  S  S  S  S  S  S  S  S  S  S  A  S
ST   S  S  S  S  S  S  S  S  S  S  S  S  S  S  S  S  ST
"""

WIDEN_MATRIX = """
     I  F  N  B  L  S  Y  D  DT T  TS J  G  IV R  A  ST
I    I  F  N  B  S  S  S  S  S  S  S  S  S  S  S  S  S
F    F  F  F  F  S  S  S  S  S  S  S  S  S  S  S  S  S
N    N  F  N  B  S  S  S  S  S  S  S  S  S  S  S  S  S
B    B  F  B  B  S  S  S  S  S  S  S  S  S  S  S  S  S
L    S  S  S  S  L  S  S  S  S  S  S  S  S  S  S  S  S
S    S  S  S  S  S  S  S  S  S  S  S  S  S  S  S  S  S
Y    S  S  S  S  S  S  Y  S  S  S  S  S  S  S  S  S  S
D    S  S  S  S  S  S  S  D  DT S  TS S  S  S  S  S  S
DT   S  S  S  S  S  S  S  DT DT S  TS S  S  S  S  S  S
T    S  S  S  S  S  S  S  S  S  T  S  S  S  S  S  S  S
TS   S  S  S  S  S  S  S  TS TS S  TS S  S  S  S  S  S
J    S  S  S  S  S  S  S  S  S  S  S  J  S  S  S  S  S
G    S  S  S  S  S  S  S  S  S  S  S  S  G  S  S  S  S
IV   S  S  S  S  S  S  S  S  S  S  S  S  S  IV S  S  S
R    S  S  S  S  S  S  S  S  S  S  S  S  S  S  R  S  S
A    S  S  S  S  S  S  S  S  S  S  S  S  S  S  S  A  S
ST   S  S  S  S  S  S  S  S  S  S  S  S  S  S  S  S  ST
"""


def matrix_cases(policy, table):
    lines = [line.split() for line in table.strip().splitlines()]
    header = lines[0]
    for row in lines[1:]:
        for column, expected in zip(header, row[1:], strict=True):
            yield pytest.param(policy, CODES[row[0]], CODES[column], CODES[expected], id=f"{policy}-{row[0]}-{column}")


@pytest.mark.parametrize(
    ("policy", "left", "right", "expected"),
    [*matrix_cases("uniview", UNIVIEW_MATRIX), *matrix_cases("widen", WIDEN_MATRIX)],
)
def test_pair_matrix(policy, left, right, expected):
    assert str(unify([parse_type(left), parse_type(right)], policy)) == expected


@pytest.mark.parametrize("policy", ["uniview", "widen"])
def test_result_does_not_depend_on_order(policy):
    types = [parse_type(t) for t in CODES.values()]
    for triple in itertools.combinations(types, 3):
        results = {str(unify(list(order), policy)) for order in itertools.permutations(triple)}
        assert len(results) == 1, (triple, results)


@pytest.mark.parametrize(
    ("types", "policy", "expected"),
    [
        (["STRING(10)", "STRING(20)"], "uniview", "STRING"),
        (["NUMERIC(10, 2)", "NUMERIC(12, 4)"], "uniview", "NUMERIC"),
        (["BYTES(4)", "BYTES"], "widen", "BYTES"),
        (["STRUCT<a INT64>", "STRUCT<a INT64, b STRING>"], "uniview", "STRUCT<a INT64, b STRING>"),
        (["STRUCT<a INT64, b DATE>", "STRUCT<A STRING>"], "uniview", "STRUCT<A STRING, b DATE>"),
        (["STRUCT<a DATETIME>", "STRUCT<a TIMESTAMP>"], "uniview", "STRUCT<a TIMESTAMP>"),
        (["STRUCT<s STRUCT<x INT64>>", "STRUCT<s STRUCT<y BOOL>>"], "uniview", "STRUCT<s STRUCT<x INT64, y BOOL>>"),
        (["STRUCT<a INT64>", "STRUCT<a NUMERIC>"], "widen", "STRUCT<a NUMERIC>"),
        (["STRUCT<a INT64>", "STRUCT<a ARRAY<INT64>>"], "uniview", "STRUCT<a STRING>"),
        (["ARRAY<INT64>", "ARRAY<STRING>"], "uniview", "ARRAY<STRING>"),
        (["ARRAY<INT64>", "ARRAY<FLOAT64>"], "widen", "ARRAY<FLOAT64>"),
        (["ARRAY<INT64>", "ARRAY<FLOAT64>"], "uniview", "ARRAY<STRING>"),
        (["ARRAY<STRUCT<a INT64>>", "ARRAY<STRUCT<b DATE>>"], "uniview", "ARRAY<STRUCT<a INT64, b DATE>>"),
        (["ARRAY<STRUCT<a INT64>>", "ARRAY<INT64>"], "uniview", "ARRAY<STRING>"),
        (["ARRAY<INT64>", "INT64"], "widen", "STRING"),
        (["STRUCT<a INT64>", "INT64"], "widen", "STRING"),
        (["RANGE<DATE>", "RANGE<DATETIME>"], "widen", "STRING"),
        (["DATE", "DATETIME", "TIMESTAMP", "DATE"], "widen", "TIMESTAMP"),
        (["INT64", "NUMERIC(5, 1)", "BIGNUMERIC(40, 2)"], "widen", "BIGNUMERIC"),
        (["INT64"], "uniview", "INT64"),
    ],
)
def test_nested_and_parameterized(types, policy, expected):
    assert str(unify([parse_type(t) for t in types], policy)) == expected


def test_unknown_policy_is_a_config_error():
    with pytest.raises(ConfigError, match="unknown policy 'loose'"):
        unify([parse_type("INT64")], "loose")


@pytest.mark.parametrize(
    ("source", "target", "expected"),
    [
        ("INT64", "INT64", "`c`"),
        ("STRING(10)", "STRING", "`c`"),
        ("INT64", "STRING", "CAST(`c` AS STRING)"),
        ("FLOAT64", "STRING", "CAST(`c` AS STRING)"),
        ("INTERVAL", "STRING", "CAST(`c` AS STRING)"),
        ("RANGE<DATE>", "STRING", "CAST(`c` AS STRING)"),
        ("BYTES", "STRING", "SAFE_CONVERT_BYTES_TO_STRING(`c`)"),
        ("JSON", "STRING", "IF(`c` IS NULL, NULL, TO_JSON_STRING(`c`))"),
        ("ARRAY<INT64>", "STRING", "IF(`c` IS NULL, NULL, TO_JSON_STRING(`c`))"),
        ("STRUCT<a INT64>", "STRING", "IF(`c` IS NULL, NULL, TO_JSON_STRING(`c`))"),
        ("GEOGRAPHY", "STRING", "ST_ASTEXT(`c`)"),
        ("DATETIME", "TIMESTAMP", "CAST(`c` AS TIMESTAMP)"),
        ("DATE", "DATETIME", "CAST(`c` AS DATETIME)"),
        ("INT64", "BIGNUMERIC", "CAST(`c` AS BIGNUMERIC)"),
        ("NUMERIC(10, 2)", "FLOAT64", "CAST(`c` AS FLOAT64)"),
        (
            "STRUCT<a INT64>",
            "STRUCT<a STRING, `b c` DATE>",
            "IF(`c` IS NULL, NULL, STRUCT(CAST(`c`.`a` AS STRING) AS `a`, CAST(NULL AS DATE) AS `b c`))",
        ),
        (
            "ARRAY<INT64>",
            "ARRAY<STRING>",
            "IF(`c` IS NULL, NULL, ARRAY(SELECT CAST(__uv_e0 AS STRING) FROM UNNEST(`c`) AS __uv_e0 "
            "WITH OFFSET AS __uv_o0 ORDER BY __uv_o0))",
        ),
        (
            "STRUCT<xs ARRAY<STRUCT<ys ARRAY<INT64>>>>",
            "STRUCT<xs ARRAY<STRUCT<ys ARRAY<STRING>>>>",
            "IF(`c` IS NULL, NULL, STRUCT(IF(`c`.`xs` IS NULL, NULL, ARRAY(SELECT IF(__uv_e0 IS NULL, NULL, "
            "STRUCT(IF(__uv_e0.`ys` IS NULL, NULL, ARRAY(SELECT CAST(__uv_e1 AS STRING) FROM UNNEST(__uv_e0.`ys`) "
            "AS __uv_e1 WITH OFFSET AS __uv_o1 ORDER BY __uv_o1)) AS `ys`)) FROM UNNEST(`c`.`xs`) AS __uv_e0 "
            "WITH OFFSET AS __uv_o0 ORDER BY __uv_o0)) AS `xs`))",
        ),
    ],
)
def test_conversion_expressions(source, target, expected):
    assert convert("`c`", parse_type(source), parse_type(target)) == expected


def test_datetime_in_a_named_zone_falls_back_to_utc_at_the_range_ends():
    assert convert("`c`", parse_type("DATETIME"), parse_type("TIMESTAMP"), "Europe/Paris") == (
        "COALESCE(SAFE.TIMESTAMP(`c`, 'Europe/Paris'), CAST(`c` AS TIMESTAMP))"
    )


def test_typed_null_keeps_the_full_nested_type():
    assert null_of(parse_type("ARRAY<STRUCT<`a b` INT64, c STRUCT<d DATE>>>")) == (
        "CAST(NULL AS ARRAY<STRUCT<`a b` INT64, `c` STRUCT<`d` DATE>>>)"
    )


@pytest.mark.parametrize("zone", ["Mars/Olympus", "UTC'; DROP", "../../etc/passwd", ""])
def test_bad_time_zones_are_rejected(zone):
    with pytest.raises(ConfigError):
        validate_timezone(zone)


def test_good_time_zone_is_kept():
    assert validate_timezone("America/New_York") == "America/New_York"
