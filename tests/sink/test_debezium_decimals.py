"""A Connect decimal (`decimal.handling.mode=precise`: the unscaled integer's big-endian two's-complement bytes, in
base64, and its scale) lands with every digit: MariaDB's and PostgreSQL's `decimal(38,10)` hold 38 significant
digits, more than the 28 of Python's default decimal context (found by the generative test, seeds 502 and 503:
9999999999999999999999999999.9999999999 was rounded to 1E+28, past the column's 28 integer digits, and
quarantined).  It is written in plain digits, as the source writes it: Python's str(Decimal) writes
-0.0000000001 as -1E-10, and a decimal that lands as STRING (an unconstrained numeric) would show that text."""

from __future__ import annotations

import base64
import json
from decimal import Decimal

import pytest

from uniview.sink.debezium import convert_event

SOURCE = {"db": "shop", "table": "t", "connector": "postgresql", "ts_ms": 1}


def encoded(unscaled: int) -> str:
    length = (unscaled.bit_length() + 8) // 8
    return base64.b64encode(unscaled.to_bytes(length, "big", signed=True)).decode()


def landed(field: dict, value: object) -> object:
    fields = [{"field": "id", "type": "int32"}, {**field, "field": "d", "optional": True}]
    schema = {"type": "struct", "fields": [{"field": "after", "type": "struct", "fields": fields}]}
    event = {"schema": schema, "payload": {"op": "c", "source": SOURCE, "after": {"id": 1, "d": value}}}
    return json.loads(convert_event(json.dumps(event)) or "null")["data"]["d"]


def decimal_field(precision: int, scale: int) -> dict:
    parameters = {"scale": str(scale), "connect.decimal.precision": str(precision)}
    return {"type": "bytes", "name": "org.apache.kafka.connect.data.Decimal", "version": 1, "parameters": parameters}


@pytest.mark.parametrize(
    ("precision", "scale", "text"),
    [
        (38, 10, "9999999999999999999999999999.9999999999"),
        (38, 10, "-9999999999999999999999999999.9999999999"),
        (38, 10, "1234567890123456789012345678.1234567891"),
        (38, 10, "-0.0000000001"),
        (38, 0, "99999999999999999999999999999999999999"),
        (65, 30, "12345678901234567890123456789012345.123456789012345678901234567890"),
        (10, 2, "0.00"),
    ],
)
def test_every_digit_of_a_decimal_lands(precision, scale, text):
    unscaled = int(Decimal(text).scaleb(scale, context=None if len(text) < 28 else _wide()))
    value = landed(decimal_field(precision, scale), encoded(unscaled))
    assert Decimal(value) == Decimal(text) and Decimal(value).as_tuple() == Decimal(text).as_tuple()
    assert "E" not in value.upper()


def test_a_variable_scale_decimal_lands_with_every_digit():
    field = {"type": "struct", "name": "io.debezium.data.VariableScaleDecimal", "fields": []}
    unscaled = 12345678901234567890123456789012345678901
    assert landed(field, {"scale": 5, "value": encoded(unscaled)}) == "123456789012345678901234567890123456.78901"


def _wide():
    from decimal import Context

    return Context(prec=100)


@pytest.mark.parametrize(
    ("scale", "unscaled", "text"),
    [
        (7, 1, "0.0000001"),
        (10, -12, "-0.0000000012"),
        (3, 0, "0.000"),
        (8, 10, "0.00000010"),
        (0, 10**30, "1" + "0" * 30),
    ],
)
def test_a_variable_scale_decimal_is_written_as_postgresql_writes_it(scale, unscaled, text):
    """An unconstrained `numeric` lands as STRING: its text is PostgreSQL's (`SELECT 0.0000001::numeric` gives
    0.0000001), never the exponent form of Python's str(Decimal) (1E-7), and keeps the trailing zeros of its scale."""
    field = {"type": "struct", "name": "io.debezium.data.VariableScaleDecimal", "fields": []}
    assert landed(field, {"scale": scale, "value": encoded(unscaled)}) == text
