"""Which BigQuery failures a retry may fix, and the bounded retry every BigQuery call goes through.

Retried with exponential backoff and jitter: 429, 5xx, 403 `rateLimitExceeded` (BigQuery allows
about five metadata updates per table per ten seconds), 409 conflicts, transport errors, and the
local emulator's 400 "Failed to commit" / "Conflict" answers to concurrent DDL.  When the deadline
passes the failure becomes TransientWarehouseError; anything else becomes WarehouseError at once,
carrying BigQuery's own message (NotFoundError for 404).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import TypeVar

from google.api_core import exceptions as api_exceptions
from google.api_core.retry import Retry

from uniview.core.errors import NotFoundError, TransientWarehouseError, WarehouseError

logger = logging.getLogger(__name__)

T = TypeVar("T")

#: Job error reasons BigQuery documents as "retry later".
RETRYABLE_REASONS = frozenset(
    {"rateLimitExceeded", "jobRateLimitExceeded", "backendError", "internalError", "quotaExceeded"}
)
#: What the local emulator answers when two DDL statements commit at the same time.
_EMULATOR_CONFLICT = re.compile(r"Failed to commit|\bConflict\b|write-write conflict", re.IGNORECASE)
_REQUEST_PREFIX = re.compile(r"^(?:GET|POST|PUT|PATCH|DELETE) \S+: ")
_TRANSIENT_TYPES = (
    api_exceptions.TooManyRequests,
    api_exceptions.ServerError,
    api_exceptions.Conflict,
)


def _reasons(error: api_exceptions.GoogleAPICallError) -> set[str]:
    return {str(item.get("reason", "")) for item in (error.errors or []) if isinstance(item, dict)}


def _transport_error_types() -> tuple[type[BaseException], ...]:
    import requests
    from google.auth import exceptions as auth_exceptions

    return (requests.exceptions.ConnectionError, requests.exceptions.Timeout, auth_exceptions.TransportError)


def is_transient(error: BaseException) -> bool:
    """True when retrying the same request later may succeed."""
    if isinstance(error, _TRANSIENT_TYPES):
        return True
    if isinstance(error, api_exceptions.GoogleAPICallError):
        if _reasons(error) & RETRYABLE_REASONS:
            return True
        if isinstance(error, api_exceptions.BadRequest):
            return bool(_EMULATOR_CONFLICT.search(error.message or ""))
        return False
    return isinstance(error, _transport_error_types())


def describe(error: BaseException) -> str:
    """BigQuery's message for `error`, with its reasons when it gives any."""
    if isinstance(error, api_exceptions.GoogleAPICallError):
        reasons = ", ".join(sorted(r for r in _reasons(error) if r))
        lines = (error.message or str(error)).strip().splitlines() or [""]
        message = _REQUEST_PREFIX.sub("", lines[0])
        return f"{error.code} {message}" + (f" ({reasons})" if reasons else "")
    return f"{type(error).__name__}: {error}"


def call_with_retry(
    what: str,
    call: Callable[[], T],
    deadline: float,
    initial: float = 0.5,
    predicate: Callable[[BaseException], bool] = is_transient,
) -> T:
    """Run `call`, retrying the failures `predicate` accepts (by default the transient ones) until
    `deadline` seconds have passed.

    `what` names the operation in errors and log lines ("apply views to cdc_unified").
    """

    def log_retry(error: BaseException) -> None:
        logger.warning("BigQuery: %s failed, retrying: %s", what, describe(error))

    retry = Retry(
        predicate=predicate,
        initial=initial,
        maximum=min(8.0, deadline),
        multiplier=2.0,
        timeout=deadline,
        on_error=log_retry,
    )
    try:
        return retry(call)()
    except api_exceptions.RetryError as error:
        cause = error.cause if error.cause is not None else error
        raise TransientWarehouseError(
            f"BigQuery: {what} still failing after {deadline:.0f}s of retries: {describe(cause)}"
        ) from None
    except api_exceptions.NotFound as error:
        raise NotFoundError(f"BigQuery: {what} failed: {describe(error)}") from None
    except api_exceptions.GoogleAPICallError as error:
        if is_transient(error):
            raise TransientWarehouseError(f"BigQuery: {what} failed: {describe(error)}") from None
        raise WarehouseError(f"BigQuery: {what} failed: {describe(error)}") from None
    except _transport_error_types() as error:
        raise TransientWarehouseError(f"BigQuery: {what} failed: {describe(error)}") from None
