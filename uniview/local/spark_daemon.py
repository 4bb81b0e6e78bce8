"""PySpark's worker daemon (`pyspark.daemon`) for a local session that `uniview sink` starts itself
(`spark.python.daemon.module`), with a zip archive's directory read again only when the archive changed.

Spark puts its own `pyspark.zip` and `py4j-*-src.zip` on its Python workers' path, and each task's worker calls
`importlib.invalidate_caches()`, which on Python 3.11 makes every zip importer read its archive's whole
directory again: about 50 ms of CPU per task for pyspark.zip's 793 files, most of a small task's time.  Here an
importer reads it again only when the archive's size or modification time changed, so an archive replaced
between tasks (a `--py-files` zip added again) is still read anew.

    python -m uniview.local.spark_daemon    # as Spark starts it: pyspark.daemon's manager
"""

from __future__ import annotations

import os
import zipimport
from typing import Any

_read_again = zipimport.zipimporter.invalidate_caches
_stamps: dict[str, tuple[int, int] | None] = {}


def _stamp(archive: str) -> tuple[int, int] | None:
    try:
        status = os.stat(archive)
    except OSError:
        return None
    return status.st_size, status.st_mtime_ns


def invalidate_caches(importer: Any) -> None:
    """zipimporter.invalidate_caches(), skipped while the archive is the one last read."""
    stamp = _stamp(importer.archive)
    if stamp is not None and _stamps.get(importer.archive) == stamp:
        return
    _read_again(importer)
    _stamps[importer.archive] = stamp


def install() -> None:
    """Make every zip importer of this process read its archive again only when it changed."""
    zipimport.zipimporter.invalidate_caches = invalidate_caches  # type: ignore[method-assign,assignment]


if __name__ == "__main__":
    import importlib

    install()
    from pyspark.daemon import manager

    importlib.invalidate_caches()  # once here, so that the workers forked from this process start with the stamps
    manager()
