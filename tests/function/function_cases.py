"""The hostile-message corpus: Pub/Sub deliveries the function must acknowledge without DDL.

Each case is (case id, expected reason, message fields, event overrides): `message` holds the
Pub/Sub message fields other than messageId (`data` already base64-encoded, or absent);
`event` overrides CloudEvent attributes (type, time) or replaces the event data wholesale.
Valid notifications in here name dataset `hostile`, family `customer`, version `abc`.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from uniview.cloudfn.events import rfc3339
from uniview.cloudfn.message import PUBSUB_EVENT_TYPE

DATASET = "hostile"
VALID = {"dataset": DATASET, "table": {"name": "customer", "version": "abc"}}


def b64(data: bytes | str | object) -> str:
    raw = data if isinstance(data, bytes) else (data if isinstance(data, str) else json.dumps(data)).encode("utf-8")
    return base64.b64encode(raw).decode("ascii")


@dataclass(frozen=True)
class Case:
    id: str
    reason: str
    message: dict
    event: dict = field(default_factory=dict)

    @property
    def has_data(self) -> bool:
        return isinstance(self.message.get("data"), str)


def data_case(case_id: str, reason: str, payload: bytes | str | object) -> Case:
    return Case(case_id, reason, {"data": b64(payload)})


CASES: list[Case] = [
    Case("not-base64", "not_base64", {"data": "%%% not base64 %%%"}),
    data_case("not-utf8", "not_utf8", b"\xff\xfe\xfd"),
    data_case("not-json", "not_json", "dataset=cdc&table=customer"),
    data_case("json-array", "not_an_object", "[1, 2]"),
    data_case("json-string", "not_an_object", '"hostile"'),
    data_case("json-null", "not_an_object", "null"),
    data_case("empty-object", "missing_field", {}),
    data_case("dataset-number", "wrong_type", {"dataset": 5, "all": True}),
    data_case("no-table-no-all", "missing_field", {"dataset": DATASET}),
    data_case("all-false", "wrong_type", {"dataset": DATASET, "all": False}),
    data_case("all-string", "wrong_type", {"dataset": DATASET, "all": "true"}),
    data_case("table-and-all", "ambiguous", {**VALID, "all": True}),
    data_case("table-string", "wrong_type", {"dataset": DATASET, "table": "customer"}),
    data_case("no-version", "missing_field", {"dataset": DATASET, "table": {"name": "customer"}}),
    data_case("version-number", "wrong_type", {"dataset": DATASET, "table": {"name": "customer", "version": 5}}),
    data_case(
        "version-uppercase", "invalid_name", {"dataset": DATASET, "table": {"name": "customer", "version": "ABC"}}
    ),
    data_case(
        "version-injection",
        "invalid_name",
        {"dataset": DATASET, "table": {"name": "customer", "version": "abc; DROP TABLE hostile.customer_v_abc"}},
    ),
    data_case(
        "name-backtick-injection",
        "invalid_name",
        {"dataset": DATASET, "table": {"name": "customer`; DROP SCHEMA hostile; --", "version": "abc"}},
    ),
    data_case(
        "dataset-backtick-injection",
        "invalid_name",
        {"dataset": "hostile`.`customer_v_abc", "table": {"name": "customer", "version": "abc"}},
    ),
    data_case("dataset-semicolon", "invalid_name", {"dataset": "hostile; DROP SCHEMA hostile", "all": True}),
    data_case(
        "name-newline", "invalid_name", {"dataset": DATASET, "table": {"name": "customer\nDROP", "version": "abc"}}
    ),
    data_case("name-empty", "invalid_name", {"dataset": DATASET, "table": {"name": "", "version": "abc"}}),
    data_case("dataset-too-long", "invalid_name", {"dataset": "d" * 1025, "all": True}),
    data_case("oversize", "oversize", {"dataset": DATASET, "all": True, "padding": "x" * 11_000}),
    data_case("duplicate-keys", "duplicate_field", '{"dataset": "hostile", "dataset": "cdc", "all": true}'),
    data_case("nan", "not_json", '{"dataset": "hostile", "all": NaN}'),
    data_case("deep-nesting", "not_json", "[" * 4000 + "]" * 4000),
    data_case("homoglyph-dataset", "invalid_name", {"dataset": "hostіle", "all": True}),  # noqa: RUF001 (a Cyrillic letter in a Latin name is the case)
    data_case(
        "name-too-long", "invalid_name", {"dataset": DATASET, "table": {"name": "c" * 1020, "version": "abcdef"}}
    ),
    data_case(
        "version-too-long", "invalid_name", {"dataset": DATASET, "table": {"name": "customer", "version": "a" * 65}}
    ),
    data_case("name-comment", "invalid_name", {"dataset": DATASET, "table": {"name": "customer/*", "version": "abc"}}),
    data_case("name-null", "wrong_type", {"dataset": DATASET, "table": {"name": None, "version": "abc"}}),
    Case("data-empty", "no_data", {"data": ""}),
    Case("data-number", "not_base64", {"data": 12345}),
    Case("data-missing", "no_data", {"attributes": {"dataset": DATASET}}),
    Case(
        "wrong-event-type",
        "wrong_event_type",
        {"data": b64(VALID)},
        {"type": "google.cloud.storage.object.v1.finalized"},
    ),
    Case("expired", "expired", {"data": b64(VALID)}, {"time": rfc3339(datetime.now(UTC) - timedelta(days=3))}),
    Case("message-not-object", "no_message", {}, {"data": {"message": "customer_v_abc"}}),
]


def event_attributes(case: Case, message_id: str) -> dict:
    return {
        "specversion": "1.0",
        "type": case.event.get("type", PUBSUB_EVENT_TYPE),
        "source": "//pubsub.googleapis.com/projects/local/topics/uniview",
        "id": message_id,
        "time": case.event.get("time", rfc3339()),
    }


def event_data(case: Case, message_id: str) -> dict:
    if "data" in case.event:
        return case.event["data"]
    return {"message": {**case.message, "messageId": message_id}, "subscription": "uniview"}


def http_delivery(case: Case, index: int, message_id: str) -> tuple[dict, bytes]:
    """(headers, body) posting `case` to a function: a push body, a structured or a binary CloudEvent.

    Push bodies need data and the default event attributes (functions-framework makes them up).
    """
    form = index % 3
    if form == 0 and case.has_data and not case.event:
        body = {
            "subscription": "projects/local/subscriptions/uniview",
            "message": {**case.message, "messageId": message_id, "publishTime": rfc3339()},
        }
        return {"Content-Type": "application/json"}, json.dumps(body).encode()
    attributes = event_attributes(case, message_id)
    if form == 1:
        structured = {**attributes, "datacontenttype": "application/json", "data": event_data(case, message_id)}
        return {"Content-Type": "application/cloudevents+json"}, json.dumps(structured).encode()
    headers = {f"ce-{key}": value for key, value in attributes.items()}
    return {**headers, "Content-Type": "application/json"}, json.dumps(event_data(case, message_id)).encode()
