"""The local BigQuery API emulator (local-bigquery, MIT), run on loopback from its own virtualenv.

It needs Python 3.13, so it lives in a separate virtualenv that scripts/setup-bigquery-emulator.sh
creates: $UNIVIEW_BQ_EMULATOR_VENV, else <checkout>/.venv-bqemu.  `find_emulator_venv()` is None
when it is not installed; callers then skip or call `install_emulator()`.  Point
google-cloud-bigquery (and uniview's BigQuery warehouse) at it with BIGQUERY_EMULATOR_HOST.

    python -m uniview.local.bigquery_emulator --port 9050    # serve until Ctrl-C or SIGTERM
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from uniview.core.errors import UniviewError
from uniview.local.processes import free_port, running_server

VENV_VARIABLE = "UNIVIEW_BQ_EMULATOR_VENV"
#: The number of threads the emulator's DuckDB runs each query on, when set (DuckDB's default otherwise: one per
#: core).  The tests set 1 (tests/conftest.py): their queries are small, and a second thread per query costs more
#: CPU than it saves on a machine whose cores every process of the run keeps busy.
THREADS_VARIABLE = "UNIVIEW_BQ_EMULATOR_THREADS"
DEFAULT_PROJECT = "test-project"
_CHECKOUT = Path(__file__).resolve().parents[2]
SETUP_SCRIPT = _CHECKOUT / "scripts" / "setup-bigquery-emulator.sh"


def emulator_venv_path() -> Path:
    """Where the emulator's virtualenv is (or would be installed)."""
    configured = os.environ.get(VENV_VARIABLE)
    return Path(configured) if configured else _CHECKOUT / ".venv-bqemu"


def find_emulator_venv() -> Path | None:
    """The emulator's virtualenv when it is installed (executable and DuckDB extensions), else None."""
    venv = emulator_venv_path()
    if (venv / "bin" / "local-bigquery").is_file() and (venv / "home").is_dir():
        return venv
    return None


def install_emulator() -> Path:
    """Run scripts/setup-bigquery-emulator.sh (idempotent) and return the virtualenv."""
    if not SETUP_SCRIPT.is_file():
        raise FileNotFoundError(f"{SETUP_SCRIPT} is missing: install the emulator from a uniview checkout")
    environment = {**os.environ, VENV_VARIABLE: str(emulator_venv_path())}
    result = subprocess.run(["bash", str(SETUP_SCRIPT)], env=environment, capture_output=True, text=True, check=False)
    venv = find_emulator_venv()
    if result.returncode != 0 or venv is None:
        raise UniviewError(f"installing the BigQuery emulator failed: {result.stderr.strip()[-2000:]}")
    return venv


#: Runs the emulator with its Storage Write API as strict and complete as BigQuery's (see the module).
SHIM = Path(__file__).with_name("bigquery_emulator_shim.py")


def emulator_command(venv: Path, port: int, grpc_port: int, project: str, data_dir: Path) -> list[str]:
    return [
        str(venv / "bin" / "python"),
        str(SHIM),
        "serve",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--grpc-port",
        str(grpc_port),
        "--project",
        project,
        "--data-dir",
        str(data_dir),
    ]


def wait_until_serving(host: str, project: str, timeout: float = 60.0) -> None:
    """Return once the emulator answers the datasets list of `project` with 200."""
    url = f"http://{host}/bigquery/v2/projects/{project}/datasets"
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        if time.monotonic() > deadline:
            raise UniviewError(f"the BigQuery emulator at {host} did not answer within {timeout:.0f}s")
        time.sleep(0.1)


@contextmanager
def bigquery_emulator(
    log_dir: Path,
    project: str = DEFAULT_PROJECT,
    port: int | None = None,
    data_dir: Path | None = None,
    grpc_port: int | None = None,
) -> Iterator[str]:
    """Run the emulator until the block ends; yields "127.0.0.1:PORT" for BIGQUERY_EMULATOR_HOST.

    Data lives in `data_dir` (default: a fresh directory under `log_dir`); the Storage Write API is
    served in plaintext on `grpc_port` (default: a free port).  FileNotFoundError when the emulator
    is not installed.
    """
    venv = find_emulator_venv()
    if venv is None:
        raise FileNotFoundError(
            f"the BigQuery emulator is not installed in {emulator_venv_path()}: run scripts/setup-bigquery-emulator.sh"
        )
    log_dir = Path(log_dir)
    log_dir.mkdir(parents=True, exist_ok=True)
    data_dir = Path(data_dir) if data_dir else Path(tempfile.mkdtemp(prefix="bigquery-emulator-", dir=log_dir))
    port = port or free_port()
    command = emulator_command(venv, port, grpc_port or free_port(), project, data_dir)
    environment = {"HOME": str(venv / "home")}
    with running_server(command, port, log_dir / "bigquery-emulator.log", timeout=60, env=environment):
        host = f"127.0.0.1:{port}"
        wait_until_serving(host, project)
        yield host


@contextmanager
def emulator_environment(log_dir: Path) -> Iterator[str]:
    """Run the emulator with BIGQUERY_EMULATOR_HOST pointing at it until the block ends, then restore it."""
    previous = os.environ.get("BIGQUERY_EMULATOR_HOST")
    with bigquery_emulator(log_dir) as host:
        os.environ["BIGQUERY_EMULATOR_HOST"] = host
        try:
            yield host
        finally:
            if previous is None:
                os.environ.pop("BIGQUERY_EMULATOR_HOST", None)
            else:
                os.environ["BIGQUERY_EMULATOR_HOST"] = previous


def main(argv: list[str] | None = None) -> None:
    """Serve the emulator in the foreground until interrupted."""
    parser = argparse.ArgumentParser(description="Run the local BigQuery API emulator.")
    parser.add_argument("--port", type=int, default=9050)
    parser.add_argument("--project", default=DEFAULT_PROJECT)
    parser.add_argument("--log-dir", type=Path, default=Path(".uniview-bigquery-emulator"))
    parser.add_argument("--install", action="store_true", help="install the emulator first if it is missing")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # `kill` stops the emulator too
    if args.install and find_emulator_venv() is None:
        install_emulator()
    with bigquery_emulator(args.log_dir, args.project, args.port) as host:
        sys.stdout.write(f"BigQuery emulator serving project {args.project!r}: export BIGQUERY_EMULATOR_HOST={host}\n")
        sys.stdout.flush()
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
