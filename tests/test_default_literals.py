"""The constants `<table>_current` writes a declared default as: each type's canonical text and typed literal,
and the texts that are no constant of their type (unknown), written out by hand."""

from __future__ import annotations

import json

import pytest

from uniview.core.default_literals import default_literal, default_text, is_epoch
from uniview.core.types import parse_type
from uniview.core.version_description import KEY, described_defaults, version_description

LITERALS = [
    # (type, recorded text, literal; None: unknown)
    ("STRING", "it's", "'it\\'s'"),
    ("STRING", "CURRENT_TIMESTAMP", "'CURRENT_TIMESTAMP'"),
    ("INT64", "5", "5"),
    ("INT64", "-9223372036854775808", "-9223372036854775808"),
    ("INT64", "9223372036854775808", None),
    ("INT64", " 5", None),
    ("INT64", "(1+1)", None),
    ("FLOAT64", "2", "CAST(2.0 AS FLOAT64)"),
    ("FLOAT64", "1e300", "CAST(1e+300 AS FLOAT64)"),
    ("FLOAT64", "1e400", None),
    ("FLOAT64", "NaN", None),
    ("NUMERIC", "12.500000000", "NUMERIC '12.5'"),
    ("NUMERIC", "1E+2", "NUMERIC '100'"),
    ("NUMERIC", "99999999999999999999999999999.999999999", "NUMERIC '99999999999999999999999999999.999999999'"),
    ("NUMERIC", "100000000000000000000000000000", None),
    ("NUMERIC", "0.0000000001", None),
    ("NUMERIC(5,2)", "123.45", "NUMERIC '123.45'"),
    ("NUMERIC(5,2)", "1234.5", None),
    ("BIGNUMERIC", "0.00000000000000000000000000000000000001", "BIGNUMERIC '0.00000000000000000000000000000000000001'"),
    ("BOOL", "true", "TRUE"),
    ("BOOL", "FALSE", "FALSE"),
    ("BOOL", "1", None),
    ("DATE", "2024-01-31", "DATE '2024-01-31'"),
    ("DATE", "0000-00-00", None),
    ("DATE", "2024-02-30", None),
    ("DATE", "10000-01-01", None),
    ("DATETIME", "2024-01-31T10:00:00.5", "DATETIME '2024-01-31 10:00:00.500000'"),
    ("DATETIME", "0000-00-00 00:00:00", None),
    ("TIME", "23:59:59.999999", "TIME '23:59:59.999999'"),
    ("TIME", "24:00:00", None),
    ("TIMESTAMP", "2024-01-31 10:00:00+02:00", "TIMESTAMP '2024-01-31 08:00:00+00:00'"),
    ("TIMESTAMP", "2024-01-31 08:00:00+00", "TIMESTAMP '2024-01-31 08:00:00+00:00'"),
    ("TIMESTAMP", "9999-12-31 23:59:59-01:00", None),
    ("TIMESTAMP", "CURRENT_TIMESTAMP", None),
    ("JSON", '{"a": [1, 1.5, null]}', "JSON '{\"a\": [1, 1.5, null]}'"),
    ("JSON", '{"a": NaN}', None),
    ("JSON", '{"a": 1.00000000000000001}', None),
    ("JSON", "(1+1)", None),
    ("BYTES", "AP8Q", "FROM_BASE64('AP8Q')"),
    ("BYTES", "AP8", None),
    ("GEOGRAPHY", "POINT(1 2)", None),
    ("ARRAY<STRING>", '["x"]', None),
]


@pytest.mark.parametrize(("bq_type", "text", "literal"), LITERALS)
def test_a_default_is_written_as_a_typed_literal_or_is_unknown(bq_type, text, literal):
    assert default_literal(text, parse_type(bq_type)) == literal
    if literal is not None:
        assert "CAST('" not in literal  # never a cast of text


def test_recorded_values_read_as_the_text_a_value_is_typed_from():
    assert [default_text(v) for v in ("x", 5, 1.5, True, None, ["x"], {"a": 1})] == [
        "x",
        "5",
        "1.5",
        "true",
        None,
        None,
        None,
    ]
    assert is_epoch("1970-01-01T00:00:00Z") and is_epoch("1970-01-01 00:00:00.000000+00:00") and is_epoch("1970-01-01")
    assert not is_epoch("1970-01-01 00:00:01") and not is_epoch("1970-01-02")


def test_a_description_records_each_default_or_that_it_is_unknown():
    written = version_description("t", [("id", "int")], ["id"], {"s": "open", "c": None})
    assert json.loads(written)[KEY]["typed_defaults"] == {"s": "open", "c": None}
    assert described_defaults(written) == {"s": "open", "c": None}


def test_a_description_written_before_defaults_were_converted_is_read_with_the_epoch_unknown():
    recorded = {"s": "open", "n": 7, "b": True, "c": "1970-01-01 00:00:00.000000+00:00", "d": "1970-01-01", "x": None}
    described = json.dumps({KEY: {"table": "t", "columns": [["id", "int"]], "defaults": recorded}})
    assert described_defaults(described) == {"s": "open", "n": "7", "b": "true", "c": None, "d": None}
