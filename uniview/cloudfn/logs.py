"""Structured logs for Cloud Logging: one JSON object per line on stdout.

Cloud Logging reads `severity` and `message` from each line and keeps every other key as a
field of the entry's jsonPayload.  Fields are passed as `extra={"fields": {...}}`, or with
`log_event(logger, level, message, **fields)`.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from typing import IO, Any

FUNCTION_LOGGER = "uniview"
_MARKER = "_uniview_structured"


class StructuredFormatter(logging.Formatter):
    """Format a record as one JSON line: severity, message, time, logger, then its fields."""

    def format(self, record: logging.LogRecord) -> str:
        payload: dict[str, Any] = {
            "severity": record.levelname if record.levelname != "WARN" else "WARNING",
            "message": record.getMessage(),
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(),
            "logger": record.name,
        }
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            payload.update({key: value for key, value in fields.items() if key not in payload})
        if record.exc_info:
            payload["exception"] = self.formatException(record.exc_info)
        return json.dumps(payload, default=str, ensure_ascii=False)


def configure_logging(stream: IO[str] | None = None, level: int = logging.INFO) -> logging.Logger:
    """Send uniview's log records to `stream` (stdout) as JSON lines; idempotent."""
    logger = logging.getLogger(FUNCTION_LOGGER)
    if not any(getattr(handler, _MARKER, False) for handler in logger.handlers):
        handler = logging.StreamHandler(stream or sys.stdout)
        handler.setFormatter(StructuredFormatter())
        setattr(handler, _MARKER, True)
        logger.addHandler(handler)
    logger.setLevel(level)
    logger.propagate = False
    return logger


def log_event(logger: logging.Logger, level: int, message: str, **fields: Any) -> None:
    """Log `message` with `fields` as top-level keys of the JSON line (None values left out)."""
    logger.log(level, message, extra={"fields": {k: v for k, v in fields.items() if v is not None}})
