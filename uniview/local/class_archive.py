"""Where the class-data-sharing (AppCDS) archive of a local Spark driver is cached, and the JVM options that use it.

A JVM that starts with `-XX:SharedArchiveFile=<archive>` maps the classes the archive holds, already parsed and
verified, instead of reading them from Spark's jars: a local SparkSession's start costs about a third less CPU.
`scripts/setup-spark-archive.sh` builds the archive once (a short `uniview sink` run with
`-XX:ArchiveClassesAtExit`); it is valid only for the JDK and the Spark install it was built with, so its name
holds a digest of both, and a JVM given no archive, or one that does not fit, runs as it would without."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
from pathlib import Path

#: Unified-logging selectors silenced next to the archive: a JVM that cannot use it prints a warning otherwise.
_QUIET = "-Xlog:cds=off,cds+dynamic=off"


def cache_root() -> Path:
    """uniview's cache folder: $UNIVIEW_CACHE, else ~/.cache/uniview (as the scripts/setup-*.sh use)."""
    return Path(os.environ.get("UNIVIEW_CACHE") or Path.home() / ".cache" / "uniview")


def spark_home() -> Path | None:
    """The Spark install a local session runs: $SPARK_HOME, else the installed pyspark package's folder."""
    if os.environ.get("SPARK_HOME"):
        return Path(os.environ["SPARK_HOME"])
    spec = importlib.util.find_spec("pyspark")
    return Path(spec.origin).parent if spec and spec.origin else None


def java_home() -> Path | None:
    """The JDK Spark's launcher runs: $JAVA_HOME, else the one `java` on PATH belongs to."""
    if os.environ.get("JAVA_HOME"):
        return Path(os.environ["JAVA_HOME"])
    java = shutil.which("java")
    return Path(java).resolve().parent.parent if java else None


def _fingerprint(path: Path) -> str:
    stat = path.stat()
    return f"{path.resolve()}:{stat.st_size}:{stat.st_mtime_ns}"


def spark_archive_path() -> Path | None:
    """Where the archive of this JDK and this Spark install is (or would be) cached; None without Java or Spark."""
    spark, java = spark_home(), java_home()
    if spark is None or java is None or not (java / "lib" / "modules").is_file() or not (spark / "jars").is_dir():
        return None
    jars = sorted((spark / "jars").glob("*.jar"))
    identity = "\n".join(_fingerprint(path) for path in [java / "lib" / "modules", *jars])
    digest = hashlib.sha256(identity.encode()).hexdigest()[:16]
    return cache_root() / "jvm-archives" / f"spark-driver-{digest}.jsa"


def spark_archive_options() -> str:
    """The JVM options that use the cached archive, or "" when it has not been built for this JDK and Spark."""
    archive = spark_archive_path()
    if archive is None or not archive.is_file():
        return ""
    return f"-XX:SharedArchiveFile={archive} {_QUIET}"


def archive_dump_options(target: Path) -> str:
    """The JVM options that write the classes a JVM loaded to `target` when it exits."""
    return f"-XX:ArchiveClassesAtExit={target} {_QUIET}"
