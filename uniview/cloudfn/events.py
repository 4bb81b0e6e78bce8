"""Build the messages the function receives: notification JSON, Pub/Sub push bodies, CloudEvents.

Used to drive a local function (functions-framework) by hand, in benchmarks and in tests.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from uniview.cloudfn.message import PUBSUB_EVENT_TYPE
from uniview.core import notification as contract
from uniview.core.notification import Notification


def notification(dataset: str, table: str | None = None, version: str | None = None) -> dict[str, Any]:
    """{"dataset", "table": {"name", "version"}} for one new version, or {"dataset", "all": true}."""
    return Notification(dataset, table, version).body()


def rfc3339(moment: datetime | None = None) -> str:
    return (moment or datetime.now(UTC)).astimezone(UTC).isoformat().replace("+00:00", "Z")


def pubsub_message(data: bytes | dict, message_id: str, publish_time: str | None = None) -> dict[str, Any]:
    """A Pub/Sub message as push delivers it: data base64-encoded (a dict is JSON-encoded first)."""
    message = contract.pubsub_message(_raw(data), message_id)
    return {**message, "publishTime": publish_time or message["publishTime"]}


def push_body(data: bytes | dict, message_id: str, subscription: str = contract.PUSH_SUBSCRIPTION) -> dict:
    """The plain JSON body a Pub/Sub push subscription POSTs."""
    return contract.push_body(_raw(data), message_id, subscription)


def _raw(data: bytes | dict) -> bytes:
    return json.dumps(data).encode("utf-8") if isinstance(data, dict) else data


def cloud_event(data: bytes | dict, message_id: str, time: str | None = None, topic: str = "uniview") -> Any:
    """A messagePublished cloudevents.http.CloudEvent carrying `data`, as Eventarc delivers it."""
    from cloudevents.http import CloudEvent

    attributes = {
        "type": PUBSUB_EVENT_TYPE,
        "source": f"//pubsub.googleapis.com/projects/local/topics/{topic}",
        "id": message_id,
        "time": time or rfc3339(),
    }
    return CloudEvent(attributes, {"message": pubsub_message(data, message_id, time), "subscription": "uniview"})
