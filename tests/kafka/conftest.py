"""A real Kafka broker (KRaft, one node, loopback) for the whole run, from scripts/setup-kafka-stack.sh's jars;
one Kafka Connect worker on it, to which each end-to-end module adds its Debezium connectors; one BigQuery
emulator, one MariaDB and one PostgreSQL server.  All live as long as the test process."""

from __future__ import annotations

import os
import shutil
from unittest import mock

import pytest

from uniview.core.errors import UniviewError


def _stack_or_skip():
    if not shutil.which("java") or not shutil.which("mvn"):
        pytest.skip("the Kafka stack needs java and mvn (Maven) to resolve its jars from Maven Central")
    from uniview.local.java_stack import stack_jars

    try:
        return stack_jars()
    except UniviewError as error:  # the registry cannot be reached: nothing to run the broker from
        pytest.skip(f"the Kafka stack could not be installed: {error}")


@pytest.fixture(scope="session")
def kafka_bootstrap(tmp_path_factory):
    """ "127.0.0.1:PORT" of a broker that lives for the whole test run and is stopped at the end."""
    _stack_or_skip()
    from uniview.local.kafka import kafka_broker

    with kafka_broker(tmp_path_factory.mktemp("kafka")) as bootstrap:
        yield bootstrap


@pytest.fixture
def producer(kafka_bootstrap):
    kafka = pytest.importorskip("kafka", reason="kafka-python is not installed")
    client = kafka.KafkaProducer(bootstrap_servers=kafka_bootstrap, acks="all", linger_ms=0)
    yield client
    client.close()


@pytest.fixture(scope="session")
def connector_emulator_env(tmp_path_factory):
    """The BigQuery emulator behind the connector's TLS front: (environment, --bigquery-option arguments, client)."""
    from uniview.local.bigquery_connector import connector_emulator, find_connector
    from uniview.local.bigquery_emulator import DEFAULT_PROJECT, find_emulator_venv
    from uniview.warehouse.bigquery import make_client

    if find_connector() is None or find_emulator_venv() is None:
        pytest.skip(
            "the connector or the BigQuery emulator is not installed: run scripts/setup-bigquery-connector.sh "
            "and scripts/setup-bigquery-emulator.sh"
        )
    with connector_emulator(tmp_path_factory.mktemp("bq")) as emulator:
        environment = {"BIGQUERY_EMULATOR_HOST": emulator.host, "JAVA_TOOL_OPTIONS": emulator.java_options}
        options = [item for key, value in emulator.options.items() for item in ("--bigquery-option", f"{key}={value}")]
        with mock.patch.dict(os.environ, {"BIGQUERY_EMULATOR_HOST": emulator.host}):
            client = make_client(DEFAULT_PROJECT)  # the client keeps the endpoint; the variable does not leak
        try:
            yield environment, options, client
        finally:
            client.close()


@pytest.fixture(scope="session")
def mariadb(tmp_path_factory):
    """A MariaDB server with a ROW, FULL-image binary log for the whole test process (scripts/setup-mariadb.sh)."""
    from uniview.local.mariadb import find_server, mariadb_server

    if find_server() is None:
        pytest.skip("MariaDB's server (mariadbd) is not installed: run scripts/setup-mariadb.sh")
    with mariadb_server(tmp_path_factory.mktemp("mariadb")) as server:
        yield server


@pytest.fixture(scope="session")
def kafka_connect(kafka_bootstrap, tmp_path_factory):
    """A Kafka Connect worker (standalone, Debezium's plugins on its class path) with no connector yet, for the
    whole test process: each end-to-end module adds its connectors through the REST API and removes them."""
    from cdc_e2e_support import ConnectWorker

    from uniview.local.kafka import debezium_connect

    folder = tmp_path_factory.mktemp("connect")
    with debezium_connect(folder, kafka_bootstrap, []) as url:
        yield ConnectWorker(url, folder / "connect.log", kafka_bootstrap)


@pytest.fixture(scope="session")
def postgres_server(tmp_path_factory):
    """A PostgreSQL server with logical decoding for the whole test process; each module creates its databases."""
    from uniview.local.postgres import find_bin_dir, postgres_server

    if find_bin_dir() is None or (shutil.which("runuser") is None and os.geteuid() == 0):
        pytest.skip("PostgreSQL server binaries (initdb, pg_ctl) are not installed")
    with postgres_server(tmp_path_factory.mktemp("pg")) as server:
        yield server
