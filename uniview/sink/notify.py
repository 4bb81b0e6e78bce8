"""Tell the view refresher that a new version table exists.

Targets (`--notify`): `pubsub://PROJECT/TOPIC` (google-cloud-pubsub; honours
PUBSUB_EMULATOR_HOST), `http://HOST:PORT/PATH` (a Pub/Sub push-format POST, for a local
function), `inline` (refresh the family's view in this process) or `none`.  The message data
is the JSON `{"dataset": "cdc", "table": {"name": "customer", "version": "5b6ffe5fb"}}`.
Sending a notification twice is harmless: a refresh of an up-to-date view changes nothing.
"""

from __future__ import annotations

import base64
import json
import logging
import urllib.error
import urllib.request
import uuid
from abc import ABC, abstractmethod
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Callable
from urllib.parse import urlparse

from uniview.errors import ConfigError
from uniview.identifiers import validate_project
from uniview.schema import version_table_name

logger = logging.getLogger(__name__)

PUSH_SUBSCRIPTION = "projects/local/subscriptions/uniview-sink"
TIMEOUT_SECONDS = 30.0


@dataclass(frozen=True, order=True)
class Notification:
    """A new version table: `<dataset>.<table>_v_<version>`."""

    dataset: str
    table: str
    version: str

    @property
    def table_name(self) -> str:
        return version_table_name(self.table, self.version)

    def body(self) -> dict:
        return {"dataset": self.dataset, "table": {"name": self.table, "version": self.version}}

    def data(self) -> bytes:
        """The message data: the body as JSON text, UTF-8."""
        return json.dumps(self.body(), ensure_ascii=False).encode("utf-8")


class Notifier(ABC):
    """Sends one notification; raises on failure (the notification stays pending)."""

    target: str

    @abstractmethod
    def send(self, notification: Notification) -> None: ...

    @property
    def enabled(self) -> bool:
        return True


class NoNotifier(Notifier):
    target = "none"

    def send(self, notification: Notification) -> None:
        return None

    @property
    def enabled(self) -> bool:
        return False


class PubSubNotifier(Notifier):
    """Publishes to a Pub/Sub topic and waits for the server's acknowledgement."""

    def __init__(self, project: str, topic: str) -> None:
        self.project, self.topic = project, topic
        self.target = f"pubsub://{project}/{topic}"
        self._publisher = None

    def send(self, notification: Notification) -> None:
        if self._publisher is None:
            from google.cloud import pubsub_v1

            self._publisher = pubsub_v1.PublisherClient()
        path = self._publisher.topic_path(self.project, self.topic)
        self._publisher.publish(path, notification.data()).result(timeout=TIMEOUT_SECONDS)


class HttpNotifier(Notifier):
    """POSTs a Pub/Sub push body to a function URL; any 2xx answer is success."""

    def __init__(self, url: str) -> None:
        self.target = self.url = url

    def send(self, notification: Notification) -> None:
        body = json.dumps(push_body(notification)).encode("utf-8")
        request = urllib.request.Request(self.url, data=body, method="POST",
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as response:
            if not 200 <= response.status < 300:
                raise urllib.error.HTTPError(self.url, response.status, response.reason, response.headers, None)


class InlineNotifier(Notifier):
    """Refreshes the family's unified view in this process (uniview.refresh)."""

    target = "inline"

    def __init__(self, warehouse_url: str) -> None:
        self.warehouse_url = warehouse_url

    def send(self, notification: Notification) -> None:
        from uniview.refresh import RefreshRequest, refresh
        from uniview.warehouse import open_warehouse

        request = RefreshRequest(notification.dataset, tables=(notification.table,),
                                 required_tables=(notification.table_name,))
        with open_warehouse(self.warehouse_url) as warehouse:
            refresh(warehouse, request)


def push_body(notification: Notification, now: Callable[[], datetime] = lambda: datetime.now(timezone.utc)) -> dict:
    """The body Pub/Sub push delivers to an endpoint, carrying `notification`."""
    return {
        "message": {
            "data": base64.b64encode(notification.data()).decode("ascii"),
            "messageId": uuid.uuid4().hex,
            "publishTime": now().strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
            "attributes": {},
        },
        "subscription": PUSH_SUBSCRIPTION,
    }


def make_notifier(target: str, warehouse_url: str) -> Notifier:
    """The notifier for a --notify value; ConfigError for anything else."""
    if target == "none":
        return NoNotifier()
    if target == "inline":
        return InlineNotifier(warehouse_url)
    parsed = urlparse(target)
    if parsed.scheme in ("http", "https") and parsed.netloc:
        return HttpNotifier(target)
    if parsed.scheme == "pubsub":
        topic = parsed.path.strip("/")
        if not parsed.netloc or not topic or "/" in topic:
            raise ConfigError(f"invalid --notify {target!r}: expected pubsub://PROJECT/TOPIC")
        validate_project(parsed.netloc)
        return PubSubNotifier(parsed.netloc, topic)
    raise ConfigError(
        f"invalid --notify {target!r}: expected pubsub://PROJECT/TOPIC, http://HOST:PORT/PATH, inline or none"
    )


def describe_failure(error: BaseException) -> str:
    """One line for a failed send."""
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0] if text else ''}"[:500]

