"""Handle one Pub/Sub CloudEvent: refresh the announced family's unified view, or explain why not.

A `landed` message (a sink batch wrote rows to a family) maintains `<table>_current` in each dataset it
names when UNIVIEW_CURRENT=table; otherwise it is acknowledged at once, with no warehouse call (a view
follows new rows by itself).  Duplicates, reordering and late delivery are harmless: a maintenance
reads exactly the batches its table has not applied, whichever message asked for it.

Returning acknowledges the message; raising makes Pub/Sub redeliver it (with backoff, up to the
subscription's dead-letter policy).  Every exception is decided by one table, ACK_OR_RETRY; an
event older than UNIVIEW_MAX_EVENT_AGE_SECONDS is acknowledged without a refresh.

Every event logs at least one structured line carrying its Pub/Sub message id.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from uniview.cloudfn.config import FunctionConfig, ScheduledConsolidation, get_config
from uniview.cloudfn.logs import log_event
from uniview.cloudfn.message import (
    MalformedMessageError,
    Notification,
    event_ids,
    message_from_event,
    parse_notification,
)
from uniview.core.errors import (
    ConfigError,
    IdentifierError,
    NotFoundError,
    PlanError,
    TransientWarehouseError,
    TypeParseError,
    UniviewError,
)

logger = logging.getLogger("uniview.cloudfn")


@dataclass(frozen=True)
class Verdict:
    """What an exception means for the message: acknowledge it (a retry cannot help) or let Pub/Sub
    redeliver it; `status` is the event's status when acknowledged."""

    ack: bool
    status: str


class StalenessDeferred(UniviewError):
    """A `landed` announcement younger than UNIVIEW_MAX_STALENESS: Pub/Sub brings it back later, when it is
    applied once for every announcement of the interval (or found applied already)."""


#: The one ack-or-retry table: the first row whose class matches the exception decides.
ACK_OR_RETRY: tuple[tuple[type[BaseException], Verdict], ...] = (
    (StalenessDeferred, Verdict(False, "deferred")),  # inside the staleness bound: redelivered after it
    (MalformedMessageError, Verdict(True, "rejected")),  # not base64/UTF-8/JSON, wrong fields: always so
    (IdentifierError, Verdict(True, "rejected")),  # a hostile or invalid name in the message
    (PlanError, Verdict(True, "unbuildable")),  # no view can express the family (limits included)
    (TypeParseError, Verdict(True, "unbuildable")),  # a column type uniview cannot read
    (NotFoundError, Verdict(False, "retry")),  # the announced table is not visible yet
    (TransientWarehouseError, Verdict(False, "retry")),  # 5xx, 429, rate limits, a locked DuckDB file
    (ConfigError, Verdict(False, "retry")),  # fixed by a deploy; until then the message waits
    (UniviewError, Verdict(False, "retry")),  # other warehouse errors (permissions, ...)
    (Exception, Verdict(False, "retry")),  # unexpected: redelivered, then dead-lettered
)


def verdict(error: BaseException) -> Verdict:
    """The ack-or-retry decision for `error`."""
    return next(v for kind, v in ACK_OR_RETRY if isinstance(error, kind))


def reason_of(error: BaseException) -> str:
    """The reason logged: a malformed message's code, 'invalid_name', else the exception class."""
    if isinstance(error, MalformedMessageError):
        return error.reason
    if isinstance(error, IdentifierError):
        return "invalid_name"
    return type(error).__name__


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
            log_event(
                logger,
                logging.WARNING,
                f"dropped an event {expired:.0f}s old (limit {config.max_event_age_seconds}s)",
                outcome="expired",
                reason="expired",
                age_seconds=round(expired),
                **ids,
            )
            return EventResult("expired", message_id, "expired")
        notification = parse_notification(message.data)
        if notification.landed is not None and not config.options.current_table:
            log_event(
                logger,
                logging.INFO,
                f"rows landed in {notification.dataset}.{notification.table}: nothing to do, "
                "<table>_current is not kept as a table",
                outcome="unchanged",
                reason="not_a_current_table",
                family=notification.table,
                **ids,
            )
            return EventResult("unchanged", message_id, "not_a_current_table")
        _defer_within_staleness(notification, message.event_time, config, now, ids)
        requests = [build_request(config, notification, dataset) for dataset in notification.datasets]
    except (MalformedMessageError, IdentifierError) as error:
        log_event(
            logger,
            logging.WARNING,
            f"rejected a message: {error}",
            outcome=verdict(error).status,
            reason=reason_of(error),
            **ids,
        )
        return EventResult(verdict(error).status, message_id, reason_of(error))
    results = [_refresh(config, warehouse, request, notification, ids, started) for request in requests]
    if len(results) == 1:
        return results[0]
    outcomes = [outcome for result in results for outcome in result.outcomes]
    worst = next((result for result in results if result.status not in ("refreshed", "unchanged")), None)
    if worst is not None:
        return EventResult(worst.status, message_id, worst.reason, outcomes)
    status = "refreshed" if any(result.status == "refreshed" for result in results) else "unchanged"
    return EventResult(status, message_id, None, outcomes)


def build_request(config: FunctionConfig, notification: Notification, dataset: str | None = None) -> Any:
    """The RefreshRequest for `notification` under `config` (one family, or all of the dataset) in
    `dataset` (default: the notification's)."""
    from uniview.ops.refresh import RefreshRequest

    announced = notification.version_table
    dataset = dataset or notification.dataset
    batch = notification.landed
    return RefreshRequest(
        dataset=dataset,
        tables=(notification.table,) if notification.table else None,
        target_dataset=config.target_dataset(dataset),
        options=config.options,
        required_tables=(announced,) if announced else (),
        announced_batch=(batch.stream, batch.batch_id) if batch is not None and config.max_staleness else None,
    )


def _defer_within_staleness(
    notification: Notification, published: datetime | None, config: FunctionConfig, now: datetime | None, ids: dict
) -> None:
    """Raise StalenessDeferred for a `landed` announcement published less than UNIVIEW_MAX_STALENESS ago.

    The rule: an announcement is acted on only once it is that old, and then only when the family's current
    table has not applied its batch yet.  The first announcement of a burst to come of age maintains the table,
    which applies every batch landed so far; the others find their batch applied and are acknowledged.  None
    is acknowledged before its batch is applied, so the last one of a burst is never lost: Pub/Sub keeps
    bringing it back (its retry policy's backoff) until then."""
    if notification.landed is None or not config.max_staleness or published is None:
        return
    age = (now or datetime.now(UTC)) - published
    if age >= config.max_staleness:
        return
    wait = (config.max_staleness - age).total_seconds()
    log_event(
        logger,
        logging.INFO,
        f"rows landed in {notification.dataset}.{notification.table}: deferred {wait:.0f}s more "
        f"(UNIVIEW_MAX_STALENESS {config.max_staleness.total_seconds():.0f}s), Pub/Sub will redeliver",
        outcome="deferred",
        reason="max_staleness",
        family=notification.table,
        **ids,
    )
    raise StalenessDeferred(f"within UNIVIEW_MAX_STALENESS: {wait:.0f}s to go")


def _refresh(
    config: FunctionConfig, warehouse: Any, request: Any, notification: Notification, ids: dict, started: float
) -> EventResult:
    from uniview.ops.refresh import refresh

    scope = {
        "dataset": request.dataset,
        "family": notification.table,
        "announced_version": notification.version,
        "ignored_fields": list(notification.ignored_fields) or None,
        **ids,
    }

    def consolidate_then_refresh(opened: Any) -> list:
        if config.consolidation is not None and notification.table is None:
            _consolidate(opened, config.consolidation, config, request, scope)
        return refresh(opened, request)

    try:
        if warehouse is not None:
            outcomes = consolidate_then_refresh(warehouse)
        else:
            with warehouse_for(config.warehouse_url) as opened:
                outcomes = consolidate_then_refresh(opened)
    except Exception as error:
        decided = verdict(error)
        if decided.ack:
            log_event(
                logger,
                logging.ERROR,
                f"cannot build the unified view, acknowledging: {error}",
                outcome=decided.status,
                reason=reason_of(error),
                duration_ms=_ms(started),
                **scope,
            )
            return EventResult(decided.status, ids["message_id"], reason_of(error))
        level = logging.WARNING if isinstance(error, (TransientWarehouseError, NotFoundError)) else logging.ERROR
        log_event(
            logger,
            level,
            f"refresh failed, Pub/Sub will redeliver: {type(error).__name__}: {error}",
            outcome="retry",
            reason=reason_of(error),
            duration_ms=_ms(started),
            **scope,
        )
        raise
    duration = _ms(started)
    retry: BaseException | None = None
    acknowledged: BaseException | None = None
    for outcome in outcomes:
        if outcome.failed and verdict(outcome.error).ack:
            acknowledged = acknowledged or outcome.error
        elif outcome.failed:
            retry = retry or outcome.error
        _log_outcome(outcome, scope, duration)
    if retry is not None:  # the families that succeeded are unchanged on redelivery: no DDL for them
        raise retry
    if acknowledged is not None:
        return EventResult(verdict(acknowledged).status, ids["message_id"], reason_of(acknowledged), outcomes)
    status = "refreshed" if any(outcome.changed for outcome in outcomes) else "unchanged"
    return EventResult(status, ids["message_id"], None, outcomes)


def _consolidate(
    warehouse: Any, scheduled: ScheduledConsolidation, config: FunctionConfig, request: Any, scope: dict
) -> None:
    """Scheduled consolidation (UNIVIEW_CONSOLIDATE_*, `scheduled`) of every family of the event's dataset,
    before its refresh; a family that cannot be consolidated is logged and still refreshed."""
    from uniview.ops.consolidate import ConsolidationRequest, consolidate

    results = consolidate(
        warehouse,
        ConsolidationRequest(
            request.dataset,
            None,
            scheduled.idle_for,
            scheduled.max_versions,
            apply=True,
            options=config.options,
            target_dataset=request.target_dataset,
            control_dataset=scheduled.control_dataset,
            settle=scheduled.settle,
        ),
    )
    for result in results:
        family_scope = {**scope, "family": result.family}
        if result.error is not None:
            log_event(
                logger,
                logging.ERROR,
                f"cannot consolidate {request.dataset}.{result.family}: {result.error}",
                outcome="consolidation_failed",
                reason=reason_of(result.error),
                **family_scope,
            )
        elif result.applied or result.retired:
            folded = (
                f"folded {len(result.plan.versions)} versions ({result.moved_rows} rows) into "
                f"{result.plan.consolidated_table}"
                if result.plan
                else "folded nothing new"
            )
            log_event(
                logger,
                logging.INFO,
                f"consolidated {request.dataset}.{result.family}: {folded}; "
                f"{len(result.retired)} folded tables left the view",
                outcome="consolidated",
                **family_scope,
            )


def _current_table_fields(outcome: Any) -> dict[str, Any]:
    """What UNIVIEW_CURRENT=table did to the family's <table>_current (none when it is not a table)."""
    done = getattr(outcome, "current_table", None)
    if done is None:
        return {}
    return {
        "current_table_action": done.action,
        "current_table_changes_read": done.changes_read,
        "current_table_rows": done.rows,
    }


def _log_outcome(outcome: Any, scope: dict, duration_ms: int) -> None:
    family_scope = {**scope, "family": outcome.family}
    if outcome.failed:
        permanent = verdict(outcome.error).ack
        message = (
            f"cannot build the unified view of {scope['dataset']}.{outcome.family}, acknowledging: "
            if permanent
            else f"refresh of {scope['dataset']}.{outcome.family} failed, Pub/Sub will redeliver: "
        )
        log_event(
            logger,
            logging.ERROR if permanent else logging.WARNING,
            message + str(outcome.error),
            **family_scope,
            outcome=verdict(outcome.error).status,
            reason=type(outcome.error).__name__,
            versions=list(outcome.versions),
            version_count=len(outcome.versions),
            jobs=list(outcome.jobs),
            duration_ms=duration_ms,
        )
        return
    changed = [*outcome.replaced, *outcome.dropped]
    summary = f"{'refreshed' if outcome.changed else 'unchanged'} {scope['dataset']}.{outcome.family}"
    log_event(
        logger,
        logging.INFO,
        f"{summary}: {len(outcome.versions)} versions, {len(changed)} views changed",
        **family_scope,
        outcome="refreshed" if outcome.changed else "unchanged",
        versions=list(outcome.versions),
        version_count=len(outcome.versions),
        views_replaced=list(outcome.replaced),
        views_dropped=list(outcome.dropped),
        jobs=list(outcome.jobs),
        job_count=len(outcome.jobs),  # Terraform's jobs-per-event metric reads it (terraform/monitoring.tf)
        rounds=outcome.rounds,
        duration_ms=duration_ms,
        **_current_table_fields(outcome),
    )
    if outcome.note:
        log_event(logger, logging.WARNING, outcome.note, **family_scope, outcome="note")


def _config(ids: dict) -> FunctionConfig:
    try:
        return get_config()
    except UniviewError as error:
        log_event(
            logger,
            logging.CRITICAL,
            f"{error}; Pub/Sub will redeliver",
            outcome="retry",
            reason=type(error).__name__,
            **ids,
        )
        raise


def _expired(event_time: datetime | None, config: FunctionConfig, now: datetime | None) -> float | None:
    """The event's age in seconds when it is over the limit, else None (also when it has no time)."""
    if event_time is None:
        return None
    age = ((now or datetime.now(UTC)) - event_time).total_seconds()
    return age if age > config.max_event_age_seconds else None


def _ms(started: float) -> int:
    return round((time.monotonic() - started) * 1000)


_shared_warehouses: dict[str, Any] = {}
_shared_lock = threading.Lock()


@contextmanager
def warehouse_for(url: str) -> Iterator[Any]:
    """A warehouse for one event: BigQuery's is shared by the process (its client is thread-safe);
    a DuckDB file is opened for the event and closed after it, so other processes may open it."""
    from uniview.warehouse import WarehouseURL, open_warehouse

    if not WarehouseURL.parse(url, "UNIVIEW_WAREHOUSE").is_duckdb:
        with _shared_lock:
            if url not in _shared_warehouses:
                _shared_warehouses[url] = open_warehouse(url)
            warehouse = _shared_warehouses[url]
        yield warehouse
        return
    with open_warehouse(url) as warehouse:
        yield warehouse
