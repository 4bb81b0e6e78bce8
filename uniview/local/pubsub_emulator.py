"""Google's Pub/Sub emulator (the apt package google-cloud-cli-pubsub-emulator), run on loopback.

`find_emulator_jar()` is None when the emulator is not installed; callers then skip or fall back.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from uniview.local.processes import free_port, running_server

_JAR_GLOBS = (
    "/usr/lib/google-cloud-sdk/platform/pubsub-emulator/lib/cloud-pubsub-emulator-*-all.jar",
    "/usr/share/google-cloud-sdk/platform/pubsub-emulator/lib/cloud-pubsub-emulator-*-all.jar",
)


def find_emulator_jar() -> Path | None:
    """The emulator's jar: $UNIVIEW_PUBSUB_EMULATOR_JAR, the usual SDK paths, or dpkg's file list."""
    configured = os.environ.get("UNIVIEW_PUBSUB_EMULATOR_JAR")
    if configured:
        return Path(configured) if Path(configured).is_file() else None
    for pattern in _JAR_GLOBS:
        matches = sorted(glob.glob(pattern))
        if matches:
            return Path(matches[-1])
    return _jar_from_dpkg()


def _jar_from_dpkg() -> Path | None:
    if not shutil.which("dpkg"):
        return None
    listing = subprocess.run(
        ["dpkg", "-L", "google-cloud-cli-pubsub-emulator"], capture_output=True, text=True, check=False
    )
    jars = [line for line in listing.stdout.splitlines() if line.endswith("all.jar")]
    return Path(jars[0]) if jars else None


@contextmanager
def pubsub_emulator(log_dir: Path, port: int | None = None) -> Iterator[str]:
    """Run the emulator until the block ends; yields "127.0.0.1:PORT" for PUBSUB_EMULATOR_HOST."""
    jar = find_emulator_jar()
    if jar is None or not shutil.which("java"):
        raise FileNotFoundError("the Pub/Sub emulator (google-cloud-cli-pubsub-emulator) or java is not installed")
    port = port or free_port()
    command = ["java", "-jar", str(jar), "--host=127.0.0.1", f"--port={port}"]
    with running_server(command, port, Path(log_dir) / "pubsub-emulator.log", timeout=60):
        yield f"127.0.0.1:{port}"
