"""Timed stages of the demo, shown as they run and summarised at the end."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from rich.console import Console


@dataclass
class StageClock:
    """Times named stages and announces each one on the console."""

    console: Console
    seconds: dict[str, float] = field(default_factory=dict)

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        self.console.rule(f"[bold]{name}")
        started = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[name] = time.perf_counter() - started

    @property
    def total(self) -> float:
        return sum(self.seconds.values())
