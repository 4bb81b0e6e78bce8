"""Which BigQuery failures are retried, how retries end, and SchemaField -> data_type conversion
(google-api-core's and google-cloud-bigquery's own classes; no server needed)."""

from __future__ import annotations

import pytest
import requests
from google.api_core import exceptions as api
from google.cloud.bigquery import SchemaField
from google.cloud.bigquery.schema import FieldElementType

from uniview.core.errors import ConfigError, NotFoundError, TransientWarehouseError, WarehouseError
from uniview.warehouse.base import fingerprint
from uniview.warehouse.bigquery import make_client
from uniview.warehouse.bigquery_retry import call_with_retry, describe, is_transient
from uniview.warehouse.bigquery_schema import field_type, record_from_row
from uniview.warehouse.bigquery_views import canonical_fingerprint, description_for, stored_fingerprint


def reason(exception_class, message, why):
    return exception_class(message, errors=[{"reason": why, "message": message}])


@pytest.mark.parametrize(
    ("error", "transient"),
    [
        (reason(api.Forbidden, "Exceeded rate limits: too many table update operations", "rateLimitExceeded"), True),
        (api.TooManyRequests("slow down"), True),
        (api.InternalServerError("backend"), True),
        (api.ServiceUnavailable("unavailable"), True),
        (api.BadGateway("bad gateway"), True),
        (reason(api.BadRequest, "Failed to commit: Failed to commit DuckLake transaction.", "invalidQuery"), True),
        (reason(api.BadRequest, "Transaction Conflict: another transaction changed the view", "invalidQuery"), True),
        (reason(api.BadRequest, "job failed", "backendError"), True),
        (api.Conflict("Already Exists: Dataset p:cdc_unified"), True),
        (requests.exceptions.ConnectionError("reset"), True),
        (reason(api.BadRequest, "Unrecognized name: conflicting_column", "invalidQuery"), False),
        (reason(api.Forbidden, "Access Denied: Dataset p:cdc", "accessDenied"), False),
        (api.NotFound("Not found: Table p:cdc.x"), False),
        (ValueError("not a BigQuery error"), False),
    ],
)
def test_is_transient(error, transient):
    assert is_transient(error) is transient


def failing(errors, result="done"):
    calls = []

    def call():
        calls.append(1)
        if len(calls) <= len(errors):
            raise errors[len(calls) - 1]
        return result

    return call, calls


def test_rate_limit_is_retried_until_it_passes():
    call, calls = failing([reason(api.Forbidden, "Exceeded rate limits", "rateLimitExceeded")] * 2)
    assert call_with_retry("apply views", call, deadline=10, initial=0.01) == "done"
    assert len(calls) == 3


def test_transient_failure_past_the_deadline_is_transient_warehouse_error():
    call, calls = failing([api.ServiceUnavailable("backend unavailable")] * 1000)
    with pytest.raises(TransientWarehouseError, match="backend unavailable"):
        call_with_retry("apply views", call, deadline=0.3, initial=0.01)
    assert len(calls) > 1


def test_refused_statement_fails_at_once_with_bigquery_message():
    call, calls = failing([reason(api.BadRequest, "Syntax error: Unexpected keyword", "invalidQuery")])
    with pytest.raises(WarehouseError, match="Syntax error: Unexpected keyword") as raised:
        call_with_retry("apply views", call, deadline=10)
    assert type(raised.value) is WarehouseError and len(calls) == 1


def test_not_found_is_not_found_error():
    call, _ = failing([api.NotFound("GET https://bigquery.googleapis.com/x: Not found: Dataset p:cdc")])
    with pytest.raises(NotFoundError, match="Not found: Dataset p:cdc") as raised:
        call_with_retry("read columns", call, deadline=10)
    assert "https://" not in str(raised.value)
    assert describe(api.NotFound("Not found: x")) == "404 Not found: x"


@pytest.mark.parametrize(
    ("field", "data_type"),
    [
        (SchemaField("a", "INTEGER"), "INT64"),
        (SchemaField("a", "INT64", mode="REQUIRED"), "INT64"),
        (SchemaField("a", "FLOAT"), "FLOAT64"),
        (SchemaField("a", "BOOLEAN"), "BOOL"),
        (SchemaField("a", "STRING", max_length=10), "STRING(10)"),
        (SchemaField("a", "BYTES"), "BYTES"),
        (SchemaField("a", "NUMERIC", precision=10, scale=2), "NUMERIC(10, 2)"),
        (SchemaField("a", "NUMERIC(10, 2)"), "NUMERIC(10, 2)"),
        (SchemaField("a", "BIGNUMERIC", precision=50), "BIGNUMERIC(50, 0)"),
        (SchemaField("a", "TIMESTAMP", mode="REPEATED"), "ARRAY<TIMESTAMP>"),
        (SchemaField("a", "JSON"), "JSON"),
        (SchemaField("a", "GEOGRAPHY"), "GEOGRAPHY"),
        (
            SchemaField(
                "a", "RECORD", fields=[SchemaField("x", "INTEGER"), SchemaField("y", "STRING", mode="REPEATED")]
            ),
            "STRUCT<x INT64, y ARRAY<STRING>>",
        ),
        (
            SchemaField("a", "RECORD", mode="REPEATED", fields=[SchemaField("k", "STRING"), SchemaField("v", "FLOAT")]),
            "ARRAY<STRUCT<k STRING, v FLOAT64>>",
        ),
        (SchemaField("a", "RANGE", range_element_type=FieldElementType("DATE")), "RANGE<DATE>"),
    ],
)
def test_schema_field_to_data_type(field, data_type):
    assert str(field_type(field)) == data_type


def test_pseudo_and_hidden_columns_are_marked_hidden():
    base = {
        "table_name": "t_v_a",
        "column_name": "c",
        "data_type": "INT64",
        "creation_time": None,
        "is_hidden": "NO",
        "is_system_defined": "NO",
        "ordinal_position": 1,
    }
    assert not record_from_row(base).is_hidden
    assert record_from_row({**base, "column_name": "_PARTITIONTIME", "ordinal_position": None}).is_hidden
    assert record_from_row({**base, "is_hidden": "YES"}).is_hidden
    assert record_from_row({**base, "is_system_defined": "YES"}).is_hidden


BODY = "-- Generated by uniview.\nSELECT\n  CAST(`id` AS STRING) AS `id`\nFROM `cdc`.`customer_v_a1`\n"


def test_stored_fingerprint_survives_reformatting_but_not_edits():
    description = description_for(BODY)
    reformatted = "/* Generated by uniview. */ SELECT CAST(`id` AS STRING) AS `id` FROM `cdc`.`customer_v_a1`"
    edited = "SELECT CAST(`id` AS STRING) AS `id` FROM `cdc`.`customer_v_b2`"
    assert stored_fingerprint(BODY, description) == fingerprint(BODY)
    assert stored_fingerprint(reformatted, description) == fingerprint(BODY)
    assert stored_fingerprint(edited, description) == fingerprint(edited) != fingerprint(BODY)
    assert stored_fingerprint(reformatted, None) == fingerprint(reformatted)
    assert canonical_fingerprint("SELECT (") == canonical_fingerprint("SELECT   (")


def test_emulator_host_must_be_host_and_port(monkeypatch):
    monkeypatch.setenv("BIGQUERY_EMULATOR_HOST", "http://localhost:9050/path")
    with pytest.raises(ConfigError, match="BIGQUERY_EMULATOR_HOST"):
        make_client("my-project")
