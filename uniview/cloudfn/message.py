"""Decode a Pub/Sub CloudEvent into a Notification, rejecting anything malformed with a reason code.

Accepted notifications (the Pub/Sub message data, JSON, at most 10 KB decoded):

    {"dataset": "cdc", "table": {"name": "customer", "version": "5b6ffe5fb"}}
    {"dataset": "cdc", "all": true}

Fields other than these are ignored (reported as `ignored_fields`) so a producer may add some.
Everything else is a MalformedMessageError: a retry cannot fix it, so the function acks it.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Mapping

from uniview.errors import UniviewError
from uniview.identifiers import validate_dataset, validate_table
from uniview.schema import VERSION_ID, split_version_table, version_table_name

PUBSUB_EVENT_TYPE = "google.cloud.pubsub.topic.v1.messagePublished"
MAX_DATA_BYTES = 10 * 1024
_MAX_BASE64_CHARS = 4 * ((MAX_DATA_BYTES + 2) // 3)
_MAX_ID_CHARS = 200
_KNOWN_FIELDS = frozenset({"dataset", "table", "all"})
_KNOWN_TABLE_FIELDS = frozenset({"name", "version"})
_FRACTION = re.compile(r"(\.\d{6})\d+")


class MalformedMessageError(UniviewError):
    """A message no retry can fix; `reason` is a short machine-readable code."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason


@dataclass(frozen=True)
class PubSubMessage:
    """The parts of a messagePublished CloudEvent the function uses; `data` is decoded."""

    message_id: str | None
    event_id: str | None
    event_time: datetime | None
    data: bytes


@dataclass(frozen=True)
class Notification:
    """Refresh one family (`table`, with the version that was announced) or all (`table` None)."""

    dataset: str
    table: str | None = None
    version: str | None = None
    ignored_fields: tuple[str, ...] = field(default=(), compare=False)

    @property
    def version_table(self) -> str | None:
        return version_table_name(self.table, self.version) if self.table and self.version else None


def event_ids(event: Any) -> tuple[str | None, str | None]:
    """(Pub/Sub message id, CloudEvent id) as far as they can be read from `event`, for logging."""
    event_id = _short(_attribute(event, "id"))
    data = _event_data(event)
    message = data.get("message") if isinstance(data, Mapping) else None
    message_id = (message.get("messageId") or message.get("message_id")) if isinstance(message, Mapping) else None
    return _short(message_id) or event_id, event_id


def message_from_event(event: Any) -> PubSubMessage:
    """The Pub/Sub message inside a messagePublished CloudEvent, its data base64-decoded."""
    event_type = _attribute(event, "type")
    if event_type != PUBSUB_EVENT_TYPE:
        raise MalformedMessageError("wrong_event_type", f"event type {_short(event_type)!r} is not {PUBSUB_EVENT_TYPE}")
    data = _event_data(event)
    message = data.get("message") if isinstance(data, Mapping) else None
    if not isinstance(message, Mapping):
        raise MalformedMessageError("no_message", "the event carries no Pub/Sub message object")
    message_id, event_id = event_ids(event)
    published = _parse_time(_attribute(event, "time")) or _parse_time(message.get("publishTime"))
    return PubSubMessage(message_id, event_id, published, _decode_data(message.get("data")))


def parse_notification(data: bytes) -> Notification:
    """Validate the JSON notification in `data` (already base64-decoded)."""
    document = _load_json(data)
    if not isinstance(document, dict):
        raise MalformedMessageError("not_an_object", "the notification is not a JSON object")
    dataset = _valid(validate_dataset, _required(document, "dataset", str), "dataset")
    ignored = tuple(sorted(_short(key, 64) for key in document if key not in _KNOWN_FIELDS))[:20]
    if "all" in document:
        if "table" in document:
            raise MalformedMessageError("ambiguous", 'give either "table" or "all", not both')
        if document["all"] is not True:
            raise MalformedMessageError("wrong_type", '"all" must be true')
        return Notification(dataset, ignored_fields=ignored)
    table = _required(document, "table", dict)
    ignored += tuple(f"table.{_short(key, 64)}" for key in sorted(table) if key not in _KNOWN_TABLE_FIELDS)[:20]
    name = _valid(validate_table, _required(table, "name", str, "table.name"), "table")
    version = _required(table, "version", str, "table.version")
    if not VERSION_ID.fullmatch(version):
        detail = f"table.version {_short(version, 80)!r} is not 1-64 lowercase letters or digits"
        raise MalformedMessageError("invalid_name", detail)
    full_name = _valid(validate_table, version_table_name(name, version), "version table")
    if split_version_table(full_name) != (name, version):
        detail = f"{_short(full_name, 80)!r} does not split back into table {_short(name, 80)!r}"
        raise MalformedMessageError("invalid_name", detail)
    return Notification(dataset, name, version, ignored)


def _decode_data(encoded: object) -> bytes:
    if encoded is None or encoded == "":
        raise MalformedMessageError("no_data", "the Pub/Sub message has no data")
    if not isinstance(encoded, str):
        raise MalformedMessageError("not_base64", "the Pub/Sub message data is not a base64 string")
    if len(encoded) > _MAX_BASE64_CHARS:
        raise MalformedMessageError("oversize", f"the message data is over {MAX_DATA_BYTES} bytes")
    try:
        decoded = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        raise MalformedMessageError("not_base64", "the Pub/Sub message data is not valid base64") from None
    if len(decoded) > MAX_DATA_BYTES:
        raise MalformedMessageError("oversize", f"the message data is over {MAX_DATA_BYTES} bytes")
    return decoded


def _load_json(data: bytes) -> object:
    if len(data) > MAX_DATA_BYTES:
        raise MalformedMessageError("oversize", f"the message data is over {MAX_DATA_BYTES} bytes")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise MalformedMessageError("not_utf8", "the message data is not UTF-8 text") from None
    try:
        return json.loads(text, object_pairs_hook=_unique_keys, parse_constant=_reject_constant)
    except MalformedMessageError:
        raise
    except (ValueError, RecursionError):
        raise MalformedMessageError("not_json", "the message data is not JSON") from None


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [key for key, _ in pairs]
    if len(set(keys)) != len(keys):
        raise MalformedMessageError("duplicate_field", "the notification repeats a field name")
    return dict(pairs)


def _reject_constant(name: str) -> object:
    raise MalformedMessageError("not_json", f"{name} is not JSON")


def _required(document: Mapping[str, Any], key: str, kind: type, label: str | None = None) -> Any:
    label = label or key
    if key not in document:
        raise MalformedMessageError("missing_field", f'the notification has no "{label}"')
    value = document[key]
    if not isinstance(value, kind) or isinstance(value, bool):
        expected = "an object" if kind is dict else "a string"
        raise MalformedMessageError("wrong_type", f'"{label}" must be {expected}')
    return value


def _valid(validate: Any, value: str, label: str) -> str:
    try:
        return validate(value, label)
    except UniviewError as error:
        raise MalformedMessageError("invalid_name", _short(str(error), 300)) from None


def _attribute(event: Any, name: str) -> Any:
    try:
        return event[name]
    except (KeyError, TypeError, AttributeError):
        getter = getattr(event, "get", None)
        return getter(name) if callable(getter) else None


def _event_data(event: Any) -> object:
    data = getattr(event, "data", None)
    if isinstance(data, (bytes, str)) and len(data) <= 4 * MAX_DATA_BYTES:
        try:
            return json.loads(data)
        except (ValueError, RecursionError):
            return None
    return data


def _parse_time(value: object) -> datetime | None:
    """An RFC 3339 timestamp (nanoseconds allowed) as an aware datetime, else None."""
    if not isinstance(value, str) or len(value) > 64:
        return None
    try:
        parsed = datetime.fromisoformat(_FRACTION.sub(r"\1", value.strip()).replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)


def _short(value: object, limit: int = _MAX_ID_CHARS) -> str | None:
    if value is None:
        return None
    text = value if isinstance(value, str) else str(value)
    return text if len(text) <= limit else text[:limit] + "..."
