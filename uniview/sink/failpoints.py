"""Named points of the BigQuery landing where a test kills the sink as a dying machine would.

`UNIVIEW_SINK_KILL_AT=<point>` makes the process SIGKILL itself on reaching that point: no cleanup,
no exception handler, exactly `kill -9`.  The points, in order: before-stage, after-stage, after-type
(the lines are typed into their staging tables), after-part, before-ledger, after-ledger (then Spark
commits the batch to its checkpoint)."""

from __future__ import annotations

import os
import signal

VARIABLE = "UNIVIEW_SINK_KILL_AT"
POINTS = ("before-stage", "after-stage", "after-type", "after-part", "before-ledger", "after-ledger")


def reach(point: str) -> None:
    if os.environ.get(VARIABLE) == point:
        os.kill(os.getpid(), signal.SIGKILL)
