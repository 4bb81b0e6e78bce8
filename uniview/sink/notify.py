"""Tell the view refresher that a new version table exists, and that a batch landed rows.

Targets (`--notify`): `pubsub://PROJECT/TOPIC` (google-cloud-pubsub; honours
PUBSUB_EMULATOR_HOST), `http://HOST:PORT/PATH` (a Pub/Sub push-format POST, for a local
function), `inline` (refresh the family's view in this process) or `none`.  The message is
uniview.core.notification's: `{"dataset": "cdc", "table": {"name": "customer", "version": "5b6ffe5fb"}}`,
and after every batch, per family it wrote rows to (but not where that batch's announcement of a new version of
the family was delivered: its refresh maintains the family), `{"dataset": "cdc", "landed": {"name": "customer", ...}}`
(inline: `<table>_current` maintained when it is kept as a table, nothing otherwise).
Sending a notification twice is harmless: a refresh of an up-to-date view changes nothing, and a
maintenance reads only the batches it has not applied.
"""

from __future__ import annotations

import json
import logging
import urllib.error
import urllib.request
from abc import ABC, abstractmethod
from typing import Any
from urllib.parse import urlparse

from uniview.core.errors import ConfigError
from uniview.core.identifiers import validate_project
from uniview.core.notification import Notification, push_body

__all__ = ["Notification", "Notifier", "describe_failure", "make_notifier"]

logger = logging.getLogger(__name__)

PUSH_SUBSCRIPTION = "projects/local/subscriptions/uniview-sink"
TIMEOUT_SECONDS = 30.0


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
        self._publisher: Any = None  # a google.cloud.pubsub_v1.PublisherClient (untyped), made on first use

    def send(self, notification: Notification) -> None:
        if self._publisher is None:
            from google.cloud.pubsub_v1 import PublisherClient

            self._publisher = PublisherClient()
        path = self._publisher.topic_path(self.project, self.topic)
        self._publisher.publish(path, notification.data()).result(timeout=TIMEOUT_SECONDS)


class HttpNotifier(Notifier):
    """POSTs a Pub/Sub push body to a function URL; any 2xx answer is success."""

    def __init__(self, url: str) -> None:
        self.target = self.url = url

    def send(self, notification: Notification) -> None:
        body = json.dumps(push_body(notification.data(), subscription=PUSH_SUBSCRIPTION)).encode("utf-8")
        request = urllib.request.Request(
            self.url, data=body, method="POST", headers={"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as response:
            if not 200 <= response.status < 300:
                raise urllib.error.HTTPError(self.url, response.status, response.reason, response.headers, None)


class InlineNotifier(Notifier):
    """Refreshes the family's unified view in this process (uniview.ops.refresh)."""

    target = "inline"

    def __init__(self, warehouse_url: str, options: Any = None, target_dataset: str | None = None) -> None:
        self.warehouse_url = warehouse_url
        self.options = options
        self.target_dataset = target_dataset

    def send(self, notification: Notification) -> None:
        from uniview.ops.refresh import RefreshRequest, refresh
        from uniview.planning.plan import GeneratorOptions
        from uniview.warehouse import open_warehouse

        table, version_table = notification.table, notification.table_name
        options = self.options or GeneratorOptions()
        if notification.landed is not None and not options.current_table:
            return  # rows landed: a view follows them by itself
        requests = [
            RefreshRequest(
                dataset,
                tables=None if table is None else (table,),  # a notification of the whole dataset: every family
                target_dataset=self.target_dataset,
                options=options,
                required_tables=() if version_table is None else (version_table,),
            )
            for dataset in notification.datasets
        ]
        with open_warehouse(self.warehouse_url) as warehouse:
            outcomes = [outcome for request in requests for outcome in refresh(warehouse, request)]
        for outcome in outcomes:
            if outcome.error is not None:
                raise outcome.error


def make_notifier(target: str, warehouse_url: str, options: Any = None, target_dataset: str | None = None) -> Notifier:
    """The notifier for a --notify value; ConfigError for anything else.  `inline` refreshes with the
    given generator options (a uniview.planning.plan.GeneratorOptions) into `target_dataset`."""
    if target == "none":
        return NoNotifier()
    if target == "inline":
        return InlineNotifier(warehouse_url, options, target_dataset)
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
