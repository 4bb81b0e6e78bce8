"""Notifications not yet delivered, kept until a send succeeds, and retried after every batch.

The DuckDB warehouse keeps them in its own file (written in the batch's transaction); the
BigQuery warehouse keeps them in a JSON file under the streaming checkpoint directory (any
Hadoop path, gs:// included), or in memory for a one-off batch run.
"""

from __future__ import annotations

import json
import logging
from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from uniview.sink.notify import Notification, Notifier, describe_failure

logger = logging.getLogger(__name__)

PENDING_FILE_NAME = "uniview_pending_notifications.json"


class PendingStore(ABC):
    """Where notifications wait until they are delivered."""

    @abstractmethod
    def pending(self) -> list[Notification]: ...

    @abstractmethod
    def add(self, notifications: Iterable[Notification]) -> None: ...

    @abstractmethod
    def remove(self, notification: Notification) -> None: ...


@dataclass
class FlushResult:
    sent: list[Notification] = field(default_factory=list)
    failed: dict[Notification, str] = field(default_factory=dict)


def flush(store: PendingStore, notifier: Notifier) -> FlushResult:
    """Send every pending notification; a delivered one is removed, a failed one stays for the next batch."""
    result = FlushResult()
    if not notifier.enabled:
        return result
    for notification in store.pending():
        try:
            notifier.send(notification)
        except Exception as error:  # any transport or refresh failure leaves it pending; retried later
            result.failed[notification] = describe_failure(error)
            logger.warning(
                "notification %s to %s failed, will retry: %s",
                json.dumps(notification.body()),
                notifier.target,
                result.failed[notification],
            )
            continue
        store.remove(notification)
        result.sent.append(notification)
    return result


class MemoryPendingStore(PendingStore):
    """Pending notifications of one process (a batch run without a checkpoint directory)."""

    def __init__(self) -> None:
        self._items: set[Notification] = set()

    def pending(self) -> list[Notification]:
        return sorted(self._items)

    def add(self, notifications: Iterable[Notification]) -> None:
        self._items.update(notifications)

    def remove(self, notification: Notification) -> None:
        self._items.discard(notification)


class HadoopFilePendingStore(PendingStore):
    """A JSON list in `<directory>/uniview_pending_notifications.json`, through Spark's Hadoop file system."""

    def __init__(self, spark: Any, directory: str) -> None:
        jvm = spark.sparkContext._jvm
        self._path = jvm.org.apache.hadoop.fs.Path(directory.rstrip("/") + "/" + PENDING_FILE_NAME)
        self._fs = self._path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())

    def pending(self) -> list[Notification]:
        if not self._fs.exists(self._path):
            return []
        stream = self._fs.open(self._path)
        try:
            text = bytes(stream.readAllBytes()).decode("utf-8")
        finally:
            stream.close()
        return sorted(Notification.from_record(item) for item in json.loads(text or "[]"))

    def add(self, notifications: Iterable[Notification]) -> None:
        self._write(set(self.pending()) | set(notifications))

    def remove(self, notification: Notification) -> None:
        self._write(set(self.pending()) - {notification})

    def _write(self, items: set[Notification]) -> None:
        text = json.dumps([n.as_record() for n in sorted(items)], ensure_ascii=False)
        stream = self._fs.create(self._path, True)
        try:
            stream.write(bytearray(text.encode("utf-8")))
        finally:
            stream.close()
