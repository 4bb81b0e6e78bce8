"""Ctrl-C (SIGINT) and SIGTERM: a stream stops between batches, a batch run is cancelled cleanly.

PySpark's own SIGINT handler cancels every Spark job through the py4j connection the main thread is
blocked on, which fails ("reentrant call") with a page of tracebacks and can cut a batch off half-way.
While the sink runs it installs these handlers instead.  They record the request; a stream's waiting
loop then stops the query after the batch in progress (Sink.run_stream), and a batch run's Spark jobs
are cancelled from another thread (`on_request`), so the run ends with one error (Interrupted).  A
second signal interrupts at once, as Ctrl-C does by default.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import FrameType

from uniview.core.errors import UniviewError

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
#: How often `on_request` runs again after a signal, until the block ends.
ON_REQUEST_SECONDS = 0.1


@dataclass
class StopRequest:
    """Whether a stop was asked for, and by which signal (e.g. "SIGTERM")."""

    signal_name: str | None = None

    def __bool__(self) -> bool:
        return self.signal_name is not None


class Interrupted(UniviewError):
    """A batch run cancelled by a signal before its batch landed; `exit_code` is 128 + the signal's number."""

    def __init__(self, signal_name: str) -> None:
        super().__init__(f"interrupted by {signal_name}: Spark's jobs were cancelled and the batch was not landed")
        self.exit_code = 128 + signal.Signals[signal_name].value


@contextmanager
def stop_requests(on_request: Callable[[], None] | None = None) -> Iterator[StopRequest]:
    """A request filled in by the first SIGINT or SIGTERM while the block runs.  `on_request` is then called
    on a thread of its own, and again every ON_REQUEST_SECONDS until the block ends (cancelling Spark's jobs
    once would miss a job submitted a moment later).  The previous handlers come back after the block.  Off
    the main thread (where Python cannot install handlers) the request stays empty."""
    request, ended = StopRequest(), threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield request
        return

    def repeat(on_request: Callable[[], None]) -> None:
        while not ended.is_set():
            try:
                on_request()
            except Exception:  # e.g. the Spark session stopped as the block ended: nothing left to cancel
                return
            ended.wait(ON_REQUEST_SECONDS)

    def request_stop(signum: int, frame: FrameType | None) -> None:
        if request:
            raise KeyboardInterrupt
        request.signal_name = signal.Signals(signum).name
        if on_request is not None:
            threading.Thread(target=repeat, args=(on_request,), name="uniview-stop", daemon=True).start()

    previous = {number: signal.signal(number, request_stop) for number in STOP_SIGNALS}
    try:
        yield request
    finally:
        ended.set()
        for number, handler in previous.items():
            signal.signal(number, handler)
