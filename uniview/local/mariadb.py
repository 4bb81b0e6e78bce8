"""A throw-away MariaDB server for change data capture (binary log in ROW format), on loopback.

Uses the server binaries of the machine (mariadbd, mariadb-install-db: Debian's mariadb-server, which
scripts/setup-mariadb.sh installs).  The server has its own data folder, socket and free port, writes its
binary log with `--binlog-format=ROW --binlog-row-image=FULL` (or the row image asked for), and is stopped
when the block ends, whatever happened inside it:

    with mariadb_server(work_dir) as server:
        server.execute("CREATE DATABASE shop1")                 # as root, over the socket
        mysql_connector("maria", server.host, server.port, server.connector_user, ...)

`connector_user` is a user with exactly the grants Debezium's MySQL connector needs (docs/sources.md), for
`%`, `localhost` and `127.0.0.1`; a fresh server's anonymous users are dropped (they shadow `user@%` for
logins from 127.0.0.1).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from uniview.core.errors import UniviewError
from uniview.local.processes import free_port, running_server

#: What Debezium's MySQL connector needs: read the tables (snapshot), lock them or flush (snapshot),
#: list the databases, read the binary log and its position (REPLICATION CLIENT is BINLOG MONITOR in MariaDB).
CONNECTOR_GRANTS = "SELECT, RELOAD, SHOW DATABASES, LOCK TABLES, REPLICATION SLAVE, REPLICATION CLIENT"
CONNECTOR_USER = "debezium"
CONNECTOR_PASSWORD = "debezium-password"
#: What brings the server binaries (scripts/setup-mariadb.sh runs it in a checkout).
MARIADB_INSTALL_HINT = "install it with `apt-get install mariadb-server` (Debian, Ubuntu)"


@dataclass(frozen=True)
class MariaDBServer:
    host: str
    port: int
    socket: Path
    connector_user: str = CONNECTOR_USER
    connector_password: str = CONNECTOR_PASSWORD

    def client(self, database: str | None = None) -> list[str]:
        """The `mariadb` command line as root over the socket, for `database`."""
        return [_binary("mariadb"), f"--socket={self.socket}", "-uroot", "--batch", *([database] if database else [])]

    def execute(self, *statements: str, database: str | None = None) -> str:
        """Run statements as root (one session); their output as `mariadb --batch` prints it."""
        result = subprocess.run(
            self.client(database), input=";\n".join(statements) + ";\n", capture_output=True, text=True, check=False
        )
        if result.returncode != 0:
            raise UniviewError(f"mariadb: {result.stderr.strip()[-1500:]}")
        return result.stdout


def _binary(name: str) -> str:
    found = shutil.which(name) or next(
        (p for p in (f"/usr/sbin/{name}", f"/usr/bin/{name}") if os.path.isfile(p)), None
    )
    if found is None:
        raise FileNotFoundError(f"MariaDB's {name} is not installed: {MARIADB_INSTALL_HINT}")
    return found


def find_server() -> str | None:
    """The path of mariadbd, or None when MariaDB's server is not installed."""
    try:
        _binary("mariadb-install-db")
        return _binary("mariadbd")
    except FileNotFoundError:
        return None


def server_options(root: Path, port: int, row_image: str = "FULL") -> list[str]:
    """mariadbd's options: its own folder, loopback only, a ROW binary log, small and fast (no durability)."""
    return [
        f"--datadir={root / 'data'}",
        f"--socket={root / 'sock'}",
        f"--pid-file={root / 'mariadbd.pid'}",
        f"--port={port}",
        "--bind-address=127.0.0.1",
        f"--log-bin={root / 'binlog'}",
        "--binlog-format=ROW",
        f"--binlog-row-image={row_image}",
        "--server-id=1",
        "--default-time-zone=+00:00",
        "--character-set-server=utf8mb4",
        "--collation-server=utf8mb4_general_ci",
        "--innodb-buffer-pool-size=32M",
        "--innodb-log-file-size=16M",
        "--innodb-flush-log-at-trx-commit=0",
        "--sync-binlog=0",
        "--performance-schema=OFF",
        "--max-allowed-packet=64M",
        *(["--user=root"] if os.geteuid() == 0 else []),
    ]


@contextmanager
def mariadb_server(work_dir: Path, *, row_image: str = "FULL", timeout: float = 60.0) -> Iterator[MariaDBServer]:
    """Initialise a new data folder, run mariadbd with a ROW binary log; its log is copied to work_dir at the end."""
    server_binary = find_server()
    if server_binary is None:
        raise FileNotFoundError(f"MariaDB's server (mariadbd) is not installed: {MARIADB_INSTALL_HINT}")
    # a short private path: a Unix socket's path must stay under ~100 bytes, and pytest's folders are long
    root = Path(tempfile.mkdtemp(prefix="uniview-mariadb-"))
    port = free_port()
    try:
        _install_db(root)
        with running_server(
            [server_binary, "--no-defaults", *server_options(root, port, row_image)],
            port,
            root / "server.log",
            timeout=timeout,
        ):
            server = MariaDBServer("127.0.0.1", port, root / "sock")
            _create_connector_user(server)
            yield server
    finally:
        work_dir = Path(work_dir)
        work_dir.mkdir(parents=True, exist_ok=True)
        if (root / "server.log").exists():
            shutil.copy(root / "server.log", work_dir / "mariadb-server.log")
        shutil.rmtree(root, ignore_errors=True)


def _install_db(root: Path) -> None:
    command: Sequence[str] = [
        _binary("mariadb-install-db"),
        "--no-defaults",
        f"--datadir={root / 'data'}",
        "--auth-root-authentication-method=normal",
        "--skip-test-db",
        *(["--user=root"] if os.geteuid() == 0 else []),
    ]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise UniviewError(f"mariadb-install-db failed (exit {result.returncode}): {result.stderr.strip()[-1500:]}")


def _create_connector_user(server: MariaDBServer) -> None:
    user, password = server.connector_user, server.connector_password
    statements = ["DELETE FROM mysql.global_priv WHERE User = ''", "FLUSH PRIVILEGES"]
    for host in ("%", "localhost", "127.0.0.1"):
        statements += [
            f"CREATE USER '{user}'@'{host}' IDENTIFIED BY '{password}'",
            f"GRANT {CONNECTOR_GRANTS} ON *.* TO '{user}'@'{host}'",
        ]
    server.execute(*statements)
