"""Build the messages the function receives: notification JSON, Pub/Sub push bodies, CloudEvents.

Used to drive a local function (functions-framework) by hand, in benchmarks and in tests.
"""

from __future__ import annotations

import base64
import json
from datetime import datetime, timezone
from typing import Any

from uniview.cloudfn.message import PUBSUB_EVENT_TYPE


def notification(dataset: str, table: str | None = None, version: str | None = None) -> dict[str, Any]:
    """{"dataset", "table": {"name", "version"}} for one new version, or {"dataset", "all": true}."""
    if table is None:
        return {"dataset": dataset, "all": True}
    return {"dataset": dataset, "table": {"name": table, "version": version}}


def rfc3339(moment: datetime | None = None) -> str:
    return (moment or datetime.now(timezone.utc)).astimezone(timezone.utc).isoformat().replace("+00:00", "Z")


def pubsub_message(data: bytes | dict, message_id: str, publish_time: str | None = None) -> dict[str, Any]:
    """A Pub/Sub message as push delivers it: data base64-encoded (a dict is JSON-encoded first)."""
    raw = json.dumps(data).encode("utf-8") if isinstance(data, dict) else data
    return {
        "data": base64.b64encode(raw).decode("ascii"),
        "messageId": message_id,
        "publishTime": publish_time or rfc3339(),
        "attributes": {},
    }


def push_body(data: bytes | dict, message_id: str, subscription: str = "projects/local/subscriptions/uniview") -> dict:
    """The plain JSON body a Pub/Sub push subscription POSTs."""
    return {"subscription": subscription, "message": pubsub_message(data, message_id)}


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
