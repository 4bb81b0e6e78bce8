"""The notification contract between the sink and the Cloud Function: one owner for the message.

The sink announces a new version table, and, after every committed batch, per family it wrote rows
to, that rows landed (the batch: its stream, its id, and the `_cdc_ingested_at` range its rows were
stamped with); the scheduled self-healing run asks for every family.  Pub/Sub message data (JSON, at
most 10 KB):

    {"dataset": "cdc", "table": {"name": "customer", "version": "5b6ffe5fb"}}
    {"dataset": "cdc", "landed": {"name": "customer", "stream": "/ckpt", "batch": 7, "datasets": ["cdc"],
                                  "from": "2026-01-02T03:04:05.000001+00:00", "to": "2026-01-02T03:04:05.000001+00:00"}}
    {"dataset": "cdc", "all": true}

A `landed` message is one per family per batch (never per tenant or per row): `datasets` names every
dataset the batch wrote the family's rows to (`dataset` is the first); only a batch whose datasets
would not fit in one message's 10 KB sends them in several messages.  A reader that does not keep
`<table>_current` as a table has nothing to do for it.  Messages written before `landed` existed
read as they always did.

`Notification.data()` writes it, `parse_notification(data)` reads and validates it (fields other
than these are ignored and reported as `ignored_fields`, so a producer may add some), and
`push_body()` wraps data the way a Pub/Sub push subscription delivers it.  Anything malformed is a
MalformedMessageError with a short reason code: no retry can fix it.
"""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, overload

from uniview.core.errors import UniviewError
from uniview.core.identifiers import validate_dataset, validate_table
from uniview.core.schema import VERSION_ID, VERSION_RULE, split_version_table, version_table_name

MAX_DATA_BYTES = 10 * 1024
_MAX_ID_CHARS = 200
_KNOWN_FIELDS = frozenset({"dataset", "table", "all", "landed"})
_KNOWN_TABLE_FIELDS = frozenset({"name", "version"})
_KNOWN_LANDED_FIELDS = frozenset({"name", "stream", "batch", "from", "to", "datasets"})
#: A landed message's datasets are sent in chunks that keep each message well under MAX_DATA_BYTES.
LANDED_DATASETS_BYTES = 6 * 1024
_MAX_STREAM_CHARS = 1000
PUSH_SUBSCRIPTION = "projects/local/subscriptions/uniview"


class MalformedMessageError(UniviewError):
    """A message no retry can fix; `reason` is a short machine-readable code."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason


@dataclass(frozen=True, order=True)
class LandedBatch:
    """One committed batch of the sink: its stream (checkpoint directory), its id, and the range of the
    `_cdc_ingested_at` its rows were stamped with (ISO 8601 UTC text, None when unknown)."""

    stream: str
    batch_id: int
    ingested_from: str | None = None
    ingested_to: str | None = None
    #: Every dataset the batch wrote the family's rows to (empty: the notification's dataset only).
    datasets: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return f"{self.stream}#{self.batch_id}"


@dataclass(frozen=True, order=True)
class Notification:
    """Refresh one family (`table`, with the version that was announced), all of `dataset` (`table`
    None), or tell that `landed` (a batch) wrote rows to the family `table` (`version` None)."""

    dataset: str
    table: str | None = None
    version: str | None = None
    ignored_fields: tuple[str, ...] = field(default=(), compare=False, repr=False)
    landed: LandedBatch | None = None

    @classmethod
    def of_batch(cls, datasets: list[str], family: str, batch: LandedBatch) -> list[Notification]:
        """The announcements that `batch` wrote rows of `family` in `datasets`: one, unless the datasets do
        not fit in one message."""
        chunks: list[list[str]] = [[]]
        size = 0
        for dataset in sorted(set(datasets)):
            if chunks[-1] and size + len(dataset) + 4 > LANDED_DATASETS_BYTES:
                chunks.append([])
                size = 0
            chunks[-1].append(dataset)
            size += len(dataset.encode("utf-8")) + 4
        return [cls(chunk[0], family, landed=replace(batch, datasets=tuple(chunk))) for chunk in chunks if chunk]

    @property
    def datasets(self) -> tuple[str, ...]:
        """The datasets this notification is about."""
        return (self.landed.datasets if self.landed is not None else ()) or (self.dataset,)

    @property
    def version_table(self) -> str | None:
        return version_table_name(self.table, self.version) if self.table and self.version else None

    @property
    def table_name(self) -> str | None:
        """The announced version table (the sink's name for `version_table`)."""
        return self.version_table

    def body(self) -> dict[str, Any]:
        """The message as a JSON object."""
        if self.table is None:
            return {"dataset": self.dataset, "all": True}
        if self.landed is not None:
            batch = self.landed
            landed = {"name": self.table, "stream": batch.stream, "batch": batch.batch_id}
            landed.update({"from": batch.ingested_from, "to": batch.ingested_to, "datasets": list(self.datasets)})
            return {"dataset": self.dataset, "landed": landed}
        return {"dataset": self.dataset, "table": {"name": self.table, "version": self.version}}

    def data(self) -> bytes:
        """The Pub/Sub message data: the body as JSON text, UTF-8."""
        return json.dumps(self.body(), ensure_ascii=False).encode("utf-8")

    def as_record(self) -> dict[str, Any]:
        """The fields a ledger keeps: Notification.from_record(record) builds it again."""
        record: dict[str, Any] = {"dataset": self.dataset, "table": self.table, "version": self.version}
        if self.landed is not None:
            record["landed"] = [
                self.landed.stream,
                self.landed.batch_id,
                self.landed.ingested_from,
                self.landed.ingested_to,
                list(self.landed.datasets),
            ]
        return record

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Notification:
        """The notification `as_record` kept (records written before `landed` existed included)."""
        landed = record.get("landed")
        batch = LandedBatch(landed[0], int(landed[1]), landed[2], landed[3], tuple(landed[4])) if landed else None
        return cls(record["dataset"], record.get("table"), record.get("version"), landed=batch)


def pubsub_message(data: bytes, message_id: str | None = None, publish_time: datetime | None = None) -> dict[str, Any]:
    """A Pub/Sub message as push delivers it: data base64-encoded."""
    moment = (publish_time or datetime.now(UTC)).astimezone(UTC)
    return {
        "data": base64.b64encode(data).decode("ascii"),
        "messageId": message_id or uuid.uuid4().hex,
        "publishTime": moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        "attributes": {},
    }


def push_body(
    data: bytes,
    message_id: str | None = None,
    subscription: str = PUSH_SUBSCRIPTION,
    publish_time: datetime | None = None,
) -> dict[str, Any]:
    """The plain JSON body a Pub/Sub push subscription POSTs to its endpoint."""
    return {"subscription": subscription, "message": pubsub_message(data, message_id, publish_time)}


def parse_notification(data: bytes) -> Notification:
    """Validate the JSON notification in `data` (already base64-decoded)."""
    document = _load_json(data)
    if not isinstance(document, dict):
        raise MalformedMessageError("not_an_object", "the notification is not a JSON object")
    dataset = _valid(validate_dataset, _required(document, "dataset", str), "dataset")
    ignored = tuple(sorted(shorten(key, 64) for key in document if key not in _KNOWN_FIELDS))[:20]
    if "all" in document:
        if "table" in document:
            raise MalformedMessageError("ambiguous", 'give either "table" or "all", not both')
        if document["all"] is not True:
            raise MalformedMessageError("wrong_type", '"all" must be true')
        return Notification(dataset, ignored_fields=ignored)
    if "landed" in document:
        if "table" in document:
            raise MalformedMessageError("ambiguous", 'give either "table" or "landed", not both')
        return _parse_landed(dataset, _required(document, "landed", dict), ignored)
    table = _required(document, "table", dict)
    ignored += tuple(f"table.{shorten(key, 64)}" for key in sorted(table) if key not in _KNOWN_TABLE_FIELDS)[:20]
    name = _valid(validate_table, _required(table, "name", str, "table.name"), "table")
    version = _required(table, "version", str, "table.version")
    if not VERSION_ID.fullmatch(version):
        detail = f"table.version {shorten(version, 80)!r} is not {VERSION_RULE}"
        raise MalformedMessageError("invalid_name", detail)
    full_name = _valid(validate_table, version_table_name(name, version), "version table")
    if split_version_table(full_name) != (name, version):
        detail = f"{shorten(full_name, 80)!r} does not split back into table {shorten(name, 80)!r}"
        raise MalformedMessageError("invalid_name", detail)
    return Notification(dataset, name, version, ignored)


def _parse_landed(dataset: str, landed: Mapping[str, Any], ignored: tuple[str, ...]) -> Notification:
    """The `landed` object: the family, the batch's stream and id, its ingestion range (optional)."""
    ignored += tuple(f"landed.{shorten(key, 64)}" for key in sorted(landed) if key not in _KNOWN_LANDED_FIELDS)[:20]
    name = _valid(validate_table, _required(landed, "name", str, "landed.name"), "table")
    stream = _required(landed, "stream", str, "landed.stream")
    if not stream or len(stream) > _MAX_STREAM_CHARS:
        raise MalformedMessageError("wrong_type", f'"landed.stream" must be 1 to {_MAX_STREAM_CHARS} characters')
    batch_id = landed.get("batch")
    if not isinstance(batch_id, int) or isinstance(batch_id, bool) or batch_id < 0:
        raise MalformedMessageError("wrong_type", '"landed.batch" must be a non-negative integer')
    bounds = [_instant(landed.get(end), f"landed.{end}") for end in ("from", "to")]
    listed = landed.get("datasets", [dataset])
    if not isinstance(listed, list) or not listed or not all(isinstance(item, str) for item in listed):
        raise MalformedMessageError("wrong_type", '"landed.datasets" must be a non-empty list of strings')
    datasets = tuple(_valid(validate_dataset, item, "dataset") for item in listed)
    batch = LandedBatch(stream, batch_id, bounds[0], bounds[1], datasets)
    return Notification(dataset, name, None, ignored, batch)


def _instant(value: object, label: str) -> str | None:
    """An ISO 8601 timestamp with its offset (None: not given)."""
    if value is None:
        return None
    try:
        parsed = datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        parsed = None
    if parsed is None or parsed.tzinfo is None:
        raise MalformedMessageError("wrong_type", f'"{label}" must be an ISO 8601 timestamp with its offset')
    return value if isinstance(value, str) else None


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
        raise MalformedMessageError("invalid_name", shorten(str(error), 300)) from None


@overload
def shorten(value: str, limit: int = ...) -> str: ...


@overload
def shorten(value: object, limit: int = ...) -> str | None: ...


def shorten(value: object, limit: int = _MAX_ID_CHARS) -> str | None:
    """`value` as text of at most `limit` characters (and "..."); None stays None."""
    if value is None:
        return None
    text = value if isinstance(value, str) else str(value)
    return text if len(text) <= limit else text[:limit] + "..."
