"""Answers read from a DuckLake catalog, remembered for the catalog's snapshot they were read at, for the local
BigQuery emulator's shim (bigquery_emulator_shim): a statement names a table several times, and the emulator reads
its listing and columns each time.  Pure Python, so the tests run it too.

DuckLake writes a new snapshot, with a larger id, for every transaction that changes its catalog: a table or view
created, altered or dropped, rows inserted or deleted (which change its record count), by any connection.  An answer
is kept only when the catalog's latest snapshot id is the same before and after it was read (no commit came between,
so it is the catalog's state at that snapshot), and it is given again only while the latest snapshot id is still that
one.  Reading the id is one small query, several times cheaper than the reads it stands for.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import TypeVar

Answer = TypeVar("Answer")


class SnapshotMemo:
    """Answers per catalog, valid at one snapshot of it: `snapshot(catalog)` reads the catalog's latest snapshot id
    (None for a catalog that is not DuckLake's, whose answers are read every time)."""

    def __init__(self, snapshot: Callable[[str], int | None]) -> None:
        self._snapshot = snapshot
        self._lock = threading.Lock()
        self._kept: dict[str, tuple[int, dict[Hashable, object]]] = {}

    def read(self, catalog: str, key: Hashable, compute: Callable[[], Answer]) -> Answer:
        """`compute()`'s answer about `catalog`, read again only when the catalog has a newer snapshot."""
        before = self._snapshot(catalog)
        if before is None:
            return compute()
        with self._lock:
            snapshot, answers = self._kept.get(catalog, (None, {}))
            if snapshot == before and key in answers:
                return answers[key]  # type: ignore[return-value]
        answer = compute()
        if self._snapshot(catalog) == before:
            self._keep(catalog, before, key, answer)
        return answer

    def _keep(self, catalog: str, snapshot: int, key: Hashable, answer: object) -> None:
        with self._lock:
            kept, answers = self._kept.get(catalog, (None, {}))
            if kept == snapshot:
                answers[key] = answer
            elif kept is None or kept < snapshot:  # the older snapshot's answers are gone with it
                self._kept[catalog] = (snapshot, {key: answer})
