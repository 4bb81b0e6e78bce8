"""Ctrl-C (SIGINT) and SIGTERM stop a running stream between batches.

PySpark's own SIGINT handler cancels every Spark job through the py4j connection the main thread is
blocked on while it waits for the stream, which fails ("reentrant call") and can cut a batch off
half-way.  While a stream runs, the sink installs these handlers instead: they only record the
request, and the sink's waiting loop stops the query after the batch in progress (Sink.run_stream).
A second signal interrupts at once, as Ctrl-C does by default.
"""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@dataclass
class StopRequest:
    """Whether a stop was asked for, and by which signal (e.g. "SIGTERM")."""

    signal_name: str | None = None

    def __bool__(self) -> bool:
        return self.signal_name is not None


@contextmanager
def stop_requests() -> Iterator[StopRequest]:
    """A request filled in by the first SIGINT or SIGTERM while the block runs; the previous handlers come
    back after it.  Off the main thread (where Python cannot install handlers) it stays empty."""
    request = StopRequest()
    if threading.current_thread() is not threading.main_thread():
        yield request
        return

    def request_stop(signum, frame):
        if request:
            raise KeyboardInterrupt
        request.signal_name = signal.Signals(signum).name

    previous = {number: signal.signal(number, request_stop) for number in STOP_SIGNALS}
    try:
        yield request
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
