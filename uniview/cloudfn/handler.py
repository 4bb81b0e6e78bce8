"""Handle one Pub/Sub CloudEvent: refresh the announced family's unified view, or explain why not.

Returning acknowledges the message; raising makes Pub/Sub redeliver it (with backoff, up to the
subscription's dead-letter policy).  The decision:

  return  malformed message (MalformedMessageError), wrong event type, event older than
          UNIVIEW_MAX_EVENT_AGE_SECONDS, a family no view can express (PlanError,
          TypeParseError, IdentifierError): a retry would compute the same result
  raise   TransientWarehouseError, NotFoundError (the announced table or dataset is not
          visible yet), any other WarehouseError, ConfigError, unexpected exceptions

Every event logs at least one structured line carrying its Pub/Sub message id.
"""

from __future__ import annotations

import logging
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Iterator

from uniview.cloudfn.config import FunctionConfig, get_config
from uniview.cloudfn.logs import log_event
from uniview.cloudfn.message import (
    MalformedMessageError,
    Notification,
    event_ids,
    message_from_event,
    parse_notification,
)
from uniview.errors import (
    IdentifierError,
    NotFoundError,
    PlanError,
    TransientWarehouseError,
    TypeParseError,
    UniviewError,
)

logger = logging.getLogger("uniview.cloudfn")

#: Failures a redelivery cannot fix: the message is acknowledged.
PERMANENT_ERRORS = (PlanError, TypeParseError, IdentifierError)


@dataclass
class EventResult:
    """What happened to one event.  status: refreshed | unchanged | rejected | expired | unbuildable."""

    status: str
    message_id: str | None
    reason: str | None = None
    outcomes: list[Any] = field(default_factory=list)


def handle_cloud_event(
    event: Any, *, config: FunctionConfig | None = None, warehouse: Any = None, now: datetime | None = None
) -> EventResult:
    """Process one messagePublished CloudEvent; raises only when Pub/Sub should redeliver it.

    `config` defaults to the environment's (get_config); `warehouse`, when given, is used instead
    of opening config.warehouse_url (and left open).
    """
    started = time.monotonic()
    message_id, event_id = event_ids(event)
    ids = {"message_id": message_id, "event_id": event_id}
    config = config or _config(ids)
    try:
        message = message_from_event(event)
        expired = _expired(message.event_time, config, now)
        if expired is not None:
            log_event(logger, logging.WARNING, f"dropped an event {expired:.0f}s old (limit "
                      f"{config.max_event_age_seconds}s)", outcome="expired", reason="expired",
                      age_seconds=round(expired), **ids)
            return EventResult("expired", message_id, "expired")
        notification = parse_notification(message.data)
        request = build_request(config, notification)
    except MalformedMessageError as error:
        log_event(logger, logging.WARNING, f"rejected a malformed message: {error}", outcome="rejected",
                  reason=error.reason, **ids)
        return EventResult("rejected", message_id, error.reason)
    except IdentifierError as error:
        log_event(logger, logging.WARNING, f"rejected a message: {error}", outcome="rejected",
                  reason="invalid_name", **ids)
        return EventResult("rejected", message_id, "invalid_name")
    return _refresh(config, warehouse, request, notification, ids, started)


def build_request(config: FunctionConfig, notification: Notification) -> Any:
    """The RefreshRequest for `notification` under `config` (one family, or all of the dataset)."""
    from uniview.refresh import RefreshRequest

    announced = notification.version_table
    return RefreshRequest(
        dataset=notification.dataset,
        tables=(notification.table,) if notification.table else None,
        target_dataset=config.target_dataset(notification.dataset),
        options=config.options,
        required_tables=(announced,) if announced else (),
    )


def _refresh(
    config: FunctionConfig, warehouse: Any, request: Any, notification: Notification, ids: dict, started: float
) -> EventResult:
    from uniview.refresh import refresh

    scope = {"dataset": notification.dataset, "family": notification.table, "announced_version": notification.version,
             "ignored_fields": list(notification.ignored_fields) or None, **ids}
    try:
        if warehouse is not None:
            outcomes = refresh(warehouse, request)
        else:
            with warehouse_for(config.warehouse_url) as opened:
                outcomes = refresh(opened, request)
    except PERMANENT_ERRORS as error:
        log_event(logger, logging.ERROR, f"cannot build the unified view, acknowledging: {error}",
                  outcome="unbuildable", reason=type(error).__name__, duration_ms=_ms(started), **scope)
        return EventResult("unbuildable", ids["message_id"], type(error).__name__)
    except UniviewError as error:
        level = logging.WARNING if isinstance(error, (TransientWarehouseError, NotFoundError)) else logging.ERROR
        log_event(logger, level, f"refresh failed, Pub/Sub will redeliver: {error}", outcome="retry",
                  reason=type(error).__name__, duration_ms=_ms(started), **scope)
        raise
    except Exception as error:
        logger.exception(f"refresh failed unexpectedly, Pub/Sub will redeliver: {type(error).__name__}: {error}",
                         extra={"fields": {"outcome": "retry", "reason": type(error).__name__, **scope}})
        raise
    duration = _ms(started)
    retry: UniviewError | None = None
    unbuildable: UniviewError | None = None
    for outcome in outcomes:
        if outcome.failed and not isinstance(outcome.error, PERMANENT_ERRORS):
            retry = retry or outcome.error
        elif outcome.failed:
            unbuildable = unbuildable or outcome.error
        _log_outcome(outcome, scope, duration)
    if retry is not None:  # the families that succeeded are unchanged on redelivery: no DDL for them
        raise retry
    if unbuildable is not None:
        return EventResult("unbuildable", ids["message_id"], type(unbuildable).__name__, outcomes)
    status = "refreshed" if any(outcome.changed for outcome in outcomes) else "unchanged"
    return EventResult(status, ids["message_id"], None, outcomes)


def _log_outcome(outcome: Any, scope: dict, duration_ms: int) -> None:
    family_scope = {**scope, "family": outcome.family}
    if outcome.failed:
        permanent = isinstance(outcome.error, PERMANENT_ERRORS)
        message = (f"cannot build the unified view of {scope['dataset']}.{outcome.family}, acknowledging: "
                   if permanent else f"refresh of {scope['dataset']}.{outcome.family} failed, Pub/Sub will redeliver: ")
        log_event(logger, logging.ERROR if permanent else logging.WARNING, message + str(outcome.error),
                  **family_scope, outcome="unbuildable" if permanent else "retry",
                  reason=type(outcome.error).__name__, versions=list(outcome.versions),
                  version_count=len(outcome.versions), jobs=list(outcome.jobs), duration_ms=duration_ms)
        return
    changed = [*outcome.replaced, *outcome.dropped]
    summary = f"{'refreshed' if outcome.changed else 'unchanged'} {scope['dataset']}.{outcome.family}"
    log_event(
        logger, logging.INFO, f"{summary}: {len(outcome.versions)} versions, {len(changed)} views changed",
        **family_scope, outcome="refreshed" if outcome.changed else "unchanged",
        versions=list(outcome.versions), version_count=len(outcome.versions), views_replaced=list(outcome.replaced),
        views_dropped=list(outcome.dropped), jobs=list(outcome.jobs), rounds=outcome.rounds, duration_ms=duration_ms,
    )


def _config(ids: dict) -> FunctionConfig:
    try:
        return get_config()
    except UniviewError as error:
        log_event(logger, logging.CRITICAL, f"{error}; Pub/Sub will redeliver", outcome="retry",
                  reason=type(error).__name__, **ids)
        raise


def _expired(event_time: datetime | None, config: FunctionConfig, now: datetime | None) -> float | None:
    """The event's age in seconds when it is over the limit, else None (also when it has no time)."""
    if event_time is None:
        return None
    age = ((now or datetime.now(timezone.utc)) - event_time).total_seconds()
    return age if age > config.max_event_age_seconds else None


def _ms(started: float) -> int:
    return round((time.monotonic() - started) * 1000)


_shared_warehouses: dict[str, Any] = {}
_shared_lock = threading.Lock()


@contextmanager
def warehouse_for(url: str) -> Iterator[Any]:
    """A warehouse for one event: BigQuery's is shared by the process (its client is thread-safe);
    a DuckDB file is opened for the event and closed after it, so other processes may open it."""
    from uniview.warehouse.url import open_warehouse

    if url.startswith("bigquery://"):
        with _shared_lock:
            if url not in _shared_warehouses:
                _shared_warehouses[url] = open_warehouse(url)
            warehouse = _shared_warehouses[url]
        yield warehouse
        return
    with open_warehouse(url) as warehouse:
        yield warehouse
