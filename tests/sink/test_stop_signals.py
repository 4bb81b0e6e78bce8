"""Ctrl-C and SIGTERM while a stream runs: recorded, not raised; a second one interrupts; handlers restored."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from uniview.sink.stop_signals import stop_requests


@pytest.mark.parametrize("number", [signal.SIGINT, signal.SIGTERM])
def test_the_first_signal_is_recorded_and_the_second_interrupts(number):
    before = {n: signal.getsignal(n) for n in (signal.SIGINT, signal.SIGTERM)}
    with stop_requests() as request:
        assert not request
        os.kill(os.getpid(), number)
        assert request and request.signal_name == signal.Signals(number).name
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), number)
    assert {n: signal.getsignal(n) for n in before} == before


def test_off_the_main_thread_no_handler_is_installed():
    seen = []

    def in_thread():
        with stop_requests() as request:
            seen.append((bool(request), signal.getsignal(signal.SIGTERM)))

    thread = threading.Thread(target=in_thread)
    thread.start()
    thread.join()
    assert seen == [(False, signal.getsignal(signal.SIGTERM))]
