"""The Cloud Function served locally by functions-framework on 127.0.0.1, as Cloud Run would.

`function_server(log_dir, env)` runs `functions-framework --source uniview/cloudfn/entry.py --target
handler --signature-type cloudevent` (the entry module of the installed package, a checkout's or a
wheel's) in its own process group with `env` (UNIVIEW_WAREHOUSE, ...) and yields its URL and the file
that collects its stdout (the structured logs).
A Pub/Sub emulator push subscription pointed at the URL delivers messages to it.
"""

from __future__ import annotations

import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from uniview.core.errors import UniviewError
from uniview.local.processes import free_port, running_server

FUNCTION_TARGET = "handler"
#: The function's entry module, found as a file (functions-framework loads a source file): uniview.local
#: does not import uniview.cloudfn, and importing it would configure this process's logging.
FUNCTION_ENTRY = Path(__file__).resolve().parents[1] / "cloudfn" / "entry.py"


@dataclass(frozen=True)
class LocalFunction:
    """A running local function: its base URL and the log file holding its stdout and stderr."""

    url: str
    log_path: Path


def find_function_source() -> Path:
    """The function's entry module, uniview/cloudfn/entry.py of the installed package."""
    if not FUNCTION_ENTRY.is_file():
        raise UniviewError(f"the function's entry module {FUNCTION_ENTRY} is missing from the uniview package")
    return FUNCTION_ENTRY


def function_command(source: Path, port: int) -> list[str]:
    return [
        sys.executable,
        "-m",
        "functions_framework",
        "--source",
        str(source),
        "--target",
        FUNCTION_TARGET,
        "--signature-type",
        "cloudevent",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
    ]


def wait_until_answering(url: str, timeout: float = 30.0) -> None:
    """Return once the server answers HTTP at all (a GET is not a CloudEvent: 4xx means it is up)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except urllib.error.HTTPError:
            return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            if time.monotonic() > deadline:
                raise UniviewError(f"the local function at {url} did not answer within {timeout:.0f}s") from None
            time.sleep(0.05)


@contextmanager
def function_server(
    log_dir: Path,
    env: Mapping[str, str],
    *,
    port: int | None = None,
    source: Path | None = None,
    log_name: str = "function.log",
) -> Iterator[LocalFunction]:
    """Serve the function until the block ends; `env` is added to this process's environment."""
    source = source or find_function_source()
    port = port or free_port()
    log_path = Path(log_dir) / log_name
    environment = {"PYTHONUNBUFFERED": "1", **env}
    with running_server(function_command(Path(source), port), port, log_path, env=environment):
        url = f"http://127.0.0.1:{port}/"
        wait_until_answering(url)
        yield LocalFunction(url, log_path)
