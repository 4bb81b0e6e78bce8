"""A throw-away PostgreSQL server for change data capture (wal_level=logical), on loopback.

Uses the server binaries of the machine (initdb, pg_ctl: Debian's postgresql package, or
$UNIVIEW_PG_BIN).  PostgreSQL refuses to run as root, so as root the cluster belongs to, and runs as,
the `postgres` system user.  Authentication is `trust` on 127.0.0.1 only.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from uniview.core.errors import UniviewError
from uniview.local.processes import free_port

T = TypeVar("T")


@dataclass(frozen=True)
class PostgresServer:
    host: str
    port: int
    user: str = "postgres"

    def dsn(self, database: str = "postgres") -> str:
        return f"host={self.host} port={self.port} user={self.user} dbname={database}"


def find_bin_dir() -> Path | None:
    """Where initdb and pg_ctl are: $UNIVIEW_PG_BIN, PATH, or /usr/lib/postgresql/<newest>/bin."""
    configured = os.environ.get("UNIVIEW_PG_BIN")
    candidates = [configured] if configured else []
    if initdb := shutil.which("initdb"):
        candidates.append(str(Path(initdb).parent))
    candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(Path(p).parent.name), reverse=True)
    for candidate in candidates:
        if candidate and (Path(candidate) / "initdb").is_file() and (Path(candidate) / "pg_ctl").is_file():
            return Path(candidate)
    return None


def _as_server_user(command: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return command
    # root's sbin folders may be off PATH (a bare environment): look there too
    runuser = shutil.which("runuser") or next(
        (p for p in ("/usr/sbin/runuser", "/sbin/runuser") if os.path.isfile(p)), None
    )
    if runuser is None:
        raise UniviewError(
            "PostgreSQL refuses to run as root, and runuser (util-linux) is not installed to run it as postgres"
        )
    return [runuser, "-u", "postgres", "--", *command]


@contextmanager
def postgres_server(work_dir: Path) -> Iterator[PostgresServer]:
    """initdb a new cluster (its logs are copied to work_dir at the end), start it with logical decoding, stop it when the block ends."""
    bin_dir = find_bin_dir()
    if bin_dir is None:
        raise FileNotFoundError(
            "PostgreSQL's server (initdb, pg_ctl) is not installed: install it with `apt-get install postgresql` "
            "(Debian, Ubuntu), or set UNIVIEW_PG_BIN to the folder that holds initdb and pg_ctl"
        )
    # The server user must reach its data directory: a private temporary folder under /tmp, not work_dir,
    # which may sit below a folder only root can enter (pytest's tmp_path does).
    root = Path(tempfile.mkdtemp(prefix="uniview-postgres-"))
    if os.geteuid() == 0:
        shutil.chown(root, "postgres")
    data, port = root / "data", free_port()
    _run(
        _as_server_user(
            [
                str(bin_dir / "initdb"),
                "-D",
                str(data),
                "-U",
                "postgres",
                "-A",
                "trust",
                "--no-sync",
                "-E",
                "UTF8",
                "--locale=C",
            ]
        ),
        root / "initdb.log",
    )
    options = (
        f"-c port={port} -c listen_addresses=127.0.0.1 -c unix_socket_directories={root} "
        "-c wal_level=logical -c max_wal_senders=10 -c max_replication_slots=10 -c fsync=off "
        "-c synchronous_commit=off -c full_page_writes=off"
    )
    _run(
        _as_server_user(
            [
                str(bin_dir / "pg_ctl"),
                "-D",
                str(data),
                "-o",
                options,
                "-l",
                str(root / "server.log"),
                "-w",
                "-t",
                "60",
                "start",
            ]
        ),
        root / "pg_ctl.log",
    )
    try:
        yield PostgresServer("127.0.0.1", port)
    finally:
        subprocess.run(
            _as_server_user([str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"]),
            capture_output=True,
            check=False,
        )
        for log in root.glob("*.log"):
            shutil.copy(log, Path(work_dir) / f"postgres-{log.name}")
        shutil.rmtree(root, ignore_errors=True)


def _run(command: list[str], log_path: Path) -> None:
    with open(log_path, "ab") as log:
        result = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, check=False)
    if result.returncode != 0:
        tail = log_path.read_text(errors="replace")[-1500:]
        raise UniviewError(
            f"{Path(command[-1] if command[-1] != 'start' else command[0]).name} failed "
            f"(exit {result.returncode}): {tail}"
        )


def wait_until(predicate: Callable[[], T], timeout: float, what: str, interval: float = 0.2) -> T:
    """Poll `predicate()` until it returns a truthy value; UniviewError after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise UniviewError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(interval)
