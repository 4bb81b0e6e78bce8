"""The real spark-bigquery-connector against the local BigQuery emulator.

The connector speaks gRPC over TLS only, and the emulator serves the Storage Write API in plaintext,
so a TLS front (ALPN h2, the certificate scripts/setup-bigquery-connector.sh made) relays the
connector's streams to the emulator's gRPC port; the driver JVM trusts that certificate.  Only the
endpoints differ from BigQuery: the connector, its write path and its options are Dataproc's.
"""

from __future__ import annotations

import asyncio
import os
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from uniview.local.processes import free_port

#: The connector Dataproc's 2.2 images (Spark 3.5) are documented with; scripts/setup-bigquery-connector.sh resolves it.
CONNECTOR_VERSION = "0.42.1"
_TRUSTSTORE_PASSWORD = "uniview-local"


@dataclass(frozen=True)
class ConnectorFiles:
    jar: Path
    cert: Path
    key: Path
    truststore: Path

    def spark_settings(self) -> dict[str, str]:
        """SparkSession settings that load the connector and trust the TLS front (set before the JVM starts)."""
        return {
            "spark.jars": str(self.jar),
            "spark.driver.extraJavaOptions": f"-Djavax.net.ssl.trustStore={self.truststore} "
            f"-Djavax.net.ssl.trustStorePassword={_TRUSTSTORE_PASSWORD}",
        }


def connector_folder() -> Path:
    cache = Path(os.environ.get("UNIVIEW_CACHE", Path.home() / ".cache" / "uniview"))
    return cache / "bigquery-connector" / CONNECTOR_VERSION


def find_connector() -> ConnectorFiles | None:
    """The connector jar and TLS files when scripts/setup-bigquery-connector.sh has run, else None."""
    folder = connector_folder()
    files = ConnectorFiles(
        folder / f"spark-3.5-bigquery-{CONNECTOR_VERSION}.jar",
        folder / "tls" / "cert.pem",
        folder / "tls" / "key.pem",
        folder / "tls" / "truststore.jks",
    )
    return files if all(path.is_file() for path in (files.jar, files.cert, files.key, files.truststore)) else None


def connector_options(project: str, http_host: str, grpc_host: str) -> dict[str, str]:
    """`--bigquery-option`s that point the connector at an emulator (any access token is accepted there)."""
    return {
        "parentProject": project,
        "bigQueryHttpEndpoint": f"http://{http_host}",
        "bigQueryStorageGrpcEndpoint": grpc_host,
        "gcpAccessToken": "local-emulator",
    }


@dataclass(frozen=True)
class ConnectorEmulator:
    """A running emulator as the connector reaches it: the REST host (BIGQUERY_EMULATOR_HOST), the
    `--bigquery-option`s, and the JVM options that trust its TLS front."""

    host: str
    options: dict[str, str]
    java_options: str


@contextmanager
def connector_emulator(log_dir: Path) -> Iterator[ConnectorEmulator]:
    """The local BigQuery emulator with its Storage Write port behind the TLS front, until the block ends.
    FileNotFoundError when the connector or the emulator is not installed."""
    from uniview.local.bigquery_emulator import DEFAULT_PROJECT, bigquery_emulator

    files = find_connector()
    if files is None:
        raise FileNotFoundError("the spark-bigquery-connector is not resolved: run scripts/setup-bigquery-connector.sh")
    grpc_port = free_port()
    with bigquery_emulator(log_dir, grpc_port=grpc_port) as host, tls_front(files, grpc_port) as grpc_host:
        yield ConnectorEmulator(
            host,
            connector_options(DEFAULT_PROJECT, host, grpc_host),
            files.spark_settings()["spark.driver.extraJavaOptions"],
        )


@contextmanager
def tls_front(files: ConnectorFiles, target_port: int) -> Iterator[str]:
    """Relay TLS connections (ALPN h2) on a free port to the plaintext gRPC port `target_port` until the
    block ends; yields "127.0.0.1:PORT"."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(str(files.cert), str(files.key))
    context.set_alpn_protocols(["h2"])
    port = free_port()
    loop = asyncio.new_event_loop()
    started = threading.Event()
    server_box: list[asyncio.AbstractServer] = []

    async def serve() -> None:
        server_box.append(
            await asyncio.start_server(
                lambda reader, writer: _relay(reader, writer, target_port), "127.0.0.1", port, ssl=context
            )
        )
        started.set()

    thread = threading.Thread(target=loop.run_forever, name="bigquery-tls-front", daemon=True)
    thread.start()
    asyncio.run_coroutine_threadsafe(serve(), loop).result(timeout=10)
    started.wait(10)
    try:
        yield f"127.0.0.1:{port}"
    finally:
        asyncio.run_coroutine_threadsafe(_shutdown(server_box[0]), loop).result(timeout=10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        loop.close()


async def _shutdown(server: asyncio.AbstractServer) -> None:
    """Stop accepting, then end the relays still open."""
    server.close()
    current = asyncio.current_task()
    relays = [task for task in asyncio.all_tasks() if task is not current]
    for task in relays:
        task.cancel()
    await asyncio.gather(*relays, return_exceptions=True)


async def _relay(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, target_port: int) -> None:
    upstream_reader, upstream_writer = await asyncio.open_connection("127.0.0.1", target_port)
    await asyncio.gather(_copy(reader, upstream_writer), _copy(upstream_reader, writer))


async def _copy(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, ssl.SSLError):
        pass
    finally:
        writer.close()
