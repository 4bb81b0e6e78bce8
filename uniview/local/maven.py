"""Resolve Maven artifacts with their runtime dependencies from Maven Central into a cache folder.

`resolve_jars(folder, artifacts)` writes a throw-away POM that depends on `artifacts` and has Maven copy
their runtime closure (`dependency:copy-dependencies`), then moves the jars into `folder` whole, with a
`.complete` marker.  Idempotent and safe to run twice at once: a complete folder is returned as it is,
and the jars are gathered next to `folder` and renamed into place in one step.  Maven keeps what it
downloads in its own local repository (~/.m2), so a second cache folder resolves without the network.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from uniview.core.errors import UniviewError

COMPLETE = ".complete"
#: What a machine needs to resolve the jars, and the Debian packages that bring it.
INSTALL_HINT = "apt-get install openjdk-17-jre-headless maven"


@dataclass(frozen=True)
class Artifact:
    """A Maven coordinate: `group:name:version`."""

    group: str
    name: str
    version: str

    def dependency_xml(self) -> str:
        return (
            f"<dependency><groupId>{self.group}</groupId><artifactId>{self.name}</artifactId>"
            f"<version>{self.version}</version></dependency>"
        )


def project_pom(name: str, artifacts: Sequence[Artifact]) -> str:
    """A POM with nothing but `artifacts` as dependencies."""
    dependencies = "\n".join(artifact.dependency_xml() for artifact in artifacts)
    return (
        '<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>\n'
        f"<groupId>uniview.local</groupId><artifactId>{name}</artifactId><version>1</version>\n"
        f"<dependencies>\n{dependencies}\n</dependencies></project>\n"
    )


def require_maven() -> str:
    """The path of `mvn`; UniviewError saying what to install when Maven or java is missing."""
    mvn = shutil.which("mvn")
    if mvn is None or shutil.which("java") is None:
        raise UniviewError(
            f"the local Kafka stack needs java and Maven (mvn) to fetch its jars from Maven Central: {INSTALL_HINT}"
        )
    return mvn


def resolve_jars(folder: Path, artifacts: Sequence[Artifact]) -> Path:
    """`folder` holding the jars of `artifacts` and their runtime dependencies; resolves them if it does not yet."""
    if (folder / COMPLETE).is_file():
        return folder
    mvn = require_maven()
    folder.parent.mkdir(parents=True, exist_ok=True)
    # on the cache's own file system, so the finished folder is renamed into place in one step
    work = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
    try:
        (work / "pom.xml").write_text(project_pom(folder.name, artifacts))
        _copy_dependencies(mvn, work, folder.name)
        (work / "jars" / COMPLETE).touch()
        try:
            (work / "jars").rename(folder)
        except OSError:
            if not (folder / COMPLETE).is_file():  # not another process that finished first
                raise UniviewError(f"could not place the {folder.name} jars in {folder}") from None
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return folder


def _copy_dependencies(mvn: str, work: Path, name: str) -> None:
    command = [
        mvn,
        "-q",
        "-B",
        "-f",
        str(work / "pom.xml"),
        "dependency:copy-dependencies",
        "-DincludeScope=runtime",
        f"-DoutputDirectory={work / 'jars'}",
    ]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        output = (result.stdout + result.stderr).strip()
        raise UniviewError(f"resolving the {name} jars from Maven Central failed:\n{output[-2000:]}")
