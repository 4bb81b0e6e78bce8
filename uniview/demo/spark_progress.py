"""Show Spark's task progress with rich while a job runs on a local SparkSession."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

if TYPE_CHECKING:
    from pyspark import StatusTracker
    from pyspark.sql import SparkSession


def _active_tasks(tracker: StatusTracker) -> tuple[int, int]:
    """(completed, total) tasks over the stages running now."""
    done = total = 0
    for stage_id in tracker.getActiveStageIds():
        info = tracker.getStageInfo(stage_id)
        if info is not None:
            done += info.numCompletedTasks
            total += info.numTasks
    return done, total


@contextmanager
def spark_progress(spark: SparkSession, console: Console, label: str) -> Iterator[None]:
    """A live bar of the active stages' tasks until the block ends."""
    tracker = spark.sparkContext.statusTracker()
    stop = threading.Event()
    columns = (
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=console, transient=True) as progress:
        task = progress.add_task(label, total=None)

        def poll() -> None:
            while not stop.wait(0.2):
                done, total = _active_tasks(tracker)
                progress.update(
                    task,
                    completed=done,
                    total=total or None,
                    description=f"{label} ({len(tracker.getActiveJobsIds())} Spark job(s) running)",
                )

        poller = threading.Thread(target=poll, daemon=True)
        poller.start()
        try:
            yield
        finally:
            stop.set()
            poller.join(timeout=2)
