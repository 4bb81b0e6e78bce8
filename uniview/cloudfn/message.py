"""Decode a Pub/Sub CloudEvent into its message; the notification in it is read by uniview.core.notification.

A wrong event type, a missing message or data that is not base64 is a MalformedMessageError: a retry
cannot fix it, so the function acks it.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from uniview.core.notification import (  # noqa: F401 - the function's side of the contract
    MAX_DATA_BYTES,
    MalformedMessageError,
    Notification,
    parse_notification,
    shorten,
)

PUBSUB_EVENT_TYPE = "google.cloud.pubsub.topic.v1.messagePublished"
_MAX_BASE64_CHARS = 4 * ((MAX_DATA_BYTES + 2) // 3)
_FRACTION = re.compile(r"(\.\d{6})\d+")


@dataclass(frozen=True)
class PubSubMessage:
    """The parts of a messagePublished CloudEvent the function uses; `data` is decoded."""

    message_id: str | None
    event_id: str | None
    event_time: datetime | None
    data: bytes


def event_ids(event: Any) -> tuple[str | None, str | None]:
    """(Pub/Sub message id, CloudEvent id) as far as they can be read from `event`, for logging."""
    event_id = shorten(_attribute(event, "id"))
    data = _event_data(event)
    message = data.get("message") if isinstance(data, Mapping) else None
    message_id = (message.get("messageId") or message.get("message_id")) if isinstance(message, Mapping) else None
    return shorten(message_id) or event_id, event_id


def message_from_event(event: Any) -> PubSubMessage:
    """The Pub/Sub message inside a messagePublished CloudEvent, its data base64-decoded."""
    event_type = _attribute(event, "type")
    if event_type != PUBSUB_EVENT_TYPE:
        raise MalformedMessageError(
            "wrong_event_type", f"event type {shorten(event_type)!r} is not {PUBSUB_EVENT_TYPE}"
        )
    data = _event_data(event)
    message = data.get("message") if isinstance(data, Mapping) else None
    if not isinstance(message, Mapping):
        raise MalformedMessageError("no_message", "the event carries no Pub/Sub message object")
    message_id, event_id = event_ids(event)
    published = _parse_time(_attribute(event, "time")) or _parse_time(message.get("publishTime"))
    return PubSubMessage(message_id, event_id, published, _decode_data(message.get("data")))


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
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
